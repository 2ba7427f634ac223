//! `load_report` on real files: versions, syntax errors, shape errors and validation paths.

use infermeter_report::{load_report, LoadError, SCHEMA_VERSION};
use serde_json::{json, Value};

fn sample() -> Value {
    let path = super::data_dir().join("reports/sample-synthetic.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("sample is JSON")
}

fn load(value: &Value) -> Result<infermeter_report::Report, LoadError> {
    load_report(&serde_json::to_string_pretty(value).unwrap())
}

#[test]
fn a_newer_major_version_is_refused_with_advice() {
    let mut report = sample();
    report["schema_version"] = json!("2.0.0");
    // Even a body this reader cannot parse is reported as a version problem.
    report["series"] = json!("reshaped in 2.0");
    let err = load(&report).unwrap_err();
    assert_eq!(
        err,
        LoadError::NewerMajorVersion {
            found: "2.0.0".into(),
            supported: SCHEMA_VERSION.into()
        }
    );
    assert_eq!(
        err.to_string(),
        format!("report format 2.0.0 is newer than this reader supports ({SCHEMA_VERSION}); update infermeter to read it")
    );
}

#[test]
fn a_version_outside_this_major_is_refused_even_when_the_body_parses() {
    let mut report = sample();
    report["schema_version"] = json!("2.0.0");
    assert!(matches!(
        load(&report),
        Err(LoadError::NewerMajorVersion { .. })
    ));
    report["schema_version"] = json!("0.9.0");
    let err = load(&report).unwrap_err();
    assert!(
        matches!(&err, LoadError::NotAReport(m) if m.contains("predates")),
        "{err:?}"
    );
    report["schema_version"] = json!("1.0");
    assert_eq!(load(&report), Err(LoadError::BadVersion("1.0".into())));
}

#[test]
fn a_newer_minor_version_with_new_fields_loads() {
    let mut report = sample();
    report["schema_version"] = json!("1.7.2");
    report["metadata"]["added_in_1_7"] = json!({"anything": [1, 2]});
    report["series"][0]["levels"][0]["new_figure"] = json!(3.5);
    let loaded = load(&report).expect("same major loads");
    assert_eq!(loaded.schema_version, "1.7.2");
    assert_eq!(loaded.series.len(), 8);
}

#[test]
fn an_older_minor_without_later_optional_fields_loads() {
    let mut report = sample();
    report["schema_version"] = json!("1.0.0");
    let object = report.as_object_mut().unwrap();
    object.remove("status");
    object.remove("measurement");
    report["metadata"].as_object_mut().unwrap().remove("test");
    let loaded = load(&report).expect("optional fields default");
    assert_eq!(loaded.status, infermeter_report::RunStatus::Complete);
}

#[test]
fn client_event_clock_is_optional_and_round_trips() {
    let clock = |r: &infermeter_report::Report| {
        let client = r.series[0].levels[0].client.clone();
        client.expect("client self-check").event_clock
    };
    let mut report = sample();
    // A 1.0.0 client self-check has no event_clock.
    report["schema_version"] = json!("1.0.0");
    report["series"][0]["levels"][0]["client"] = json!({
        "scheduling_lag_p99_s": 0.001, "event_loop_delay_p99_s": 0.0005, "distorted": false
    });
    let mut loaded = load(&report).expect("a 1.0.0 client self-check loads");
    assert_eq!(clock(&loaded), None);
    // Absent stays absent when written back; present survives a round trip.
    let written = serde_json::to_value(&loaded).unwrap();
    assert_eq!(
        written["series"][0]["levels"][0]["client"].get("event_clock"),
        None
    );
    if let Some(client) = loaded.series[0].levels[0].client.as_mut() {
        client.event_clock = Some("kernel_receive".into());
    }
    let again = load(&serde_json::to_value(&loaded).unwrap()).expect("round trip");
    assert_eq!(clock(&again).as_deref(), Some("kernel_receive"));
}

/// Per-request columns (1.2.0) are optional, as in every report written before them; when
/// present, every column has an entry per request and each status is a known one.
#[test]
fn per_request_columns_are_optional_and_checked() {
    let mut report = sample();
    let first = &mut report["series"][0]["levels"][0];
    let requests = first["per_request"]["status"].as_array().unwrap().len();
    assert!(requests > 1);
    first.as_object_mut().unwrap().remove("per_request");
    report["schema_version"] = json!("1.1.0");
    let loaded = load(&report).expect("a level without columns loads");
    assert!(loaded.series[0].levels[0].per_request.is_none());
    assert!(loaded.series[0].levels[1].per_request.is_some());

    let columns = &mut report["series"][0]["levels"][1]["per_request"];
    let n = columns["status"].as_array().unwrap().len();
    columns["e2e"].as_array_mut().unwrap().pop();
    report["series"][0]["levels"][2]["per_request"]["status"][0] = json!(7);
    let LoadError::Invalid(problems) = load(&report).unwrap_err() else {
        panic!("expected validation problems");
    };
    let found: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.path.as_str(), p.message.as_str()))
        .collect();
    let mismatch = format!(
        "column e2e holds {} entries but status holds {n}: every column needs one entry per request",
        n - 1
    );
    assert_eq!(
        found,
        [
            ("series[0].levels[1].per_request", mismatch.as_str()),
            (
                "series[0].levels[2].per_request",
                "status[0] is 7; a status is 0 (ok), 1 (incomplete) or 2 (errored)"
            ),
        ]
    );
}

#[test]
fn truncated_json_reports_line_and_column() {
    let text = serde_json::to_string_pretty(&sample()).unwrap();
    let cut = &text[..text.len() / 2];
    let expected_line = cut.lines().count();
    match load_report(cut).unwrap_err() {
        LoadError::Syntax { line, column, .. } => {
            assert_eq!(line, expected_line);
            assert!(column > 0);
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    let message = load_report(cut).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!("not valid JSON at line {expected_line}, column")),
        "{message}"
    );
    assert_eq!(
        message.matches("line").count(),
        1,
        "says where once: {message}"
    );
}

#[test]
fn a_wrong_type_reports_where() {
    let text = serde_json::to_string_pretty(&sample()).unwrap().replacen(
        "\"concurrency\": 1,",
        "\"concurrency\": \"one\",",
        1,
    );
    let err = load_report(&text).unwrap_err();
    let LoadError::Shape { line, message, .. } = &err else {
        panic!("expected a shape error, got {err:?}");
    };
    let expected_line = text.lines().position(|l| l.contains("\"one\"")).unwrap() + 1;
    assert_eq!(*line, expected_line);
    assert!(message.contains("expected u32"), "{message}");
    assert!(
        !message.contains(" at line "),
        "the position is said once: {message}"
    );
}

#[test]
fn validation_problems_carry_paths() {
    let mut report = sample();
    report["series"][1]["levels"][2]["concurrency"] = json!(1);
    report["series"][3]["scenario"] = json!("missing");
    let ttft = &mut report["series"][0]["levels"][0]["metrics"]["ttft_s"];
    ttft["p90"] = json!(ttft["max"].as_f64().unwrap() * 2.0);
    let LoadError::Invalid(problems) = load(&report).unwrap_err() else {
        panic!("expected validation problems");
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "series[0].levels[0].metrics.ttft_s",
            "series[1].levels[2].concurrency",
            "series[3].scenario"
        ]
    );
    assert!(problems[2].message.contains("\"missing\""));
}

/// A hand-edited absurd figure is named as written in short, not as hundreds of digits that
/// would bury the rest of the message.
#[test]
fn absurd_figures_are_named_in_short() {
    let mut report = sample();
    let ttft = &mut report["series"][0]["levels"][0]["metrics"]["ttft_s"];
    ttft["p50"] = json!(1e300);
    report["metadata"]["model"]["active_params_b"] = json!(-2.5e20);
    let LoadError::Invalid(problems) = load(&report).unwrap_err() else {
        panic!("expected validation problems");
    };
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert!(
        messages[0].starts_with("-2.5e20 is not a non-negative number"),
        "{messages:?}"
    );
    assert!(messages[1].contains("p50 1e300 "), "{messages:?}");
    assert!(messages.iter().all(|m| m.len() < 200), "{messages:?}");
}

/// Figures no measurement can produce, and a second series the viewer would silently skip, are
/// refused with where they are.
#[test]
fn impossible_figures_and_repeated_series_are_refused() {
    let mut report = sample();
    report["metadata"]["model"]["active_params_b"] = json!(-3.0);
    let level = &mut report["series"][0]["levels"][1];
    level["power"] =
        json!({"mean_w": -1.0, "max_w": 700.0, "energy_j": 5.0, "source": "nvml", "samples": 3});
    let repeated = report["series"][0].clone();
    report["series"].as_array_mut().unwrap().push(repeated);
    let last = report["series"].as_array().unwrap().len() - 1;
    let LoadError::Invalid(problems) = load(&report).unwrap_err() else {
        panic!("expected validation problems");
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    let repeated_at = format!("series[{last}]");
    assert_eq!(
        paths,
        [
            "metadata.model.active_params_b",
            "series[0].levels[1].power.mean_w",
            repeated_at.as_str(),
            // The repeated copy carries the same bad figures.
            &format!("{repeated_at}.levels[1].power.mean_w"),
        ]
    );
    let repeat = &problems[2].message;
    assert!(repeat.starts_with("repeats series[0]"), "{repeat}");
    assert!(
        problems[0]
            .message
            .contains("-3 is not a non-negative number"),
        "{}",
        problems[0].message
    );
}

#[test]
fn files_that_are_not_reports() {
    assert!(matches!(
        load_report("{\"reports\": []}"),
        Err(LoadError::NotAReport(_))
    ));
    assert_eq!(
        load_report("{\"schema_version\": \"one\"}"),
        Err(LoadError::BadVersion("one".into()))
    );
    assert_eq!(
        load_report("{\"schema_version\": 1}"),
        Err(LoadError::BadVersion("1".into()))
    );
    for other_shape in ["[]", "\"1.0.0\""] {
        assert!(
            matches!(load_report(other_shape), Err(LoadError::NotAReport(_))),
            "{other_shape}"
        );
    }
    // Broken JSON is a syntax error with its place, whatever its shape.
    assert!(matches!(
        load_report("{\"schema_version\": \"1.0.0\",\n  \"metadata\": {"),
        Err(LoadError::Syntax { line: 2, .. })
    ));
    assert!(matches!(
        load_report("[1, 2"),
        Err(LoadError::Syntax { line: 1, .. })
    ));
}
