//! Every JSON file under `data/` loads and validates; the sample matches the reference report.

use std::path::{Path, PathBuf};

use infermeter_report::analysis::goodput::{self, report_slo};
use infermeter_report::analysis::{findings, Analysis, FindingsOptions, Metric};
use infermeter_report::index::ReportIndex;
use infermeter_report::{load_report, LoadMode, Stat};

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {dir:?}: {e}")) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            found.extend(json_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
    found.sort();
    found
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
}

#[test]
fn every_data_file_loads_and_unmeasured_reports_say_synthetic() {
    let data = super::data_dir();
    let mut reports = 0;
    for path in json_files(&data) {
        let text = read(&path);
        let relative = path.strip_prefix(&data).expect("under data/");
        // The bundled traces (data/traces/, cc-traces' agentic jobs among them) are the
        // collector's to read; here they are JSON.
        if relative.starts_with("schema") || relative.starts_with("traces") {
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{relative:?} is not JSON: {e}"));
        } else if relative == Path::new("index.json") {
            let index = ReportIndex::parse(&text)
                .and_then(|i| i.check_paths().map(|()| i))
                .unwrap_or_else(|e| panic!("{relative:?}: {e}"));
            for entry in &index.reports {
                assert!(
                    data.join(&entry.path).is_file(),
                    "index.json lists {}, which does not exist",
                    entry.path
                );
            }
        } else {
            let report = load_report(&text).unwrap_or_else(|e| panic!("{relative:?}: {e}"));
            let real_engine = !report.metadata.synthetic
                && report.metadata.source.is_none()
                && report.metadata.engine.name != "infermeter-sim";
            assert!(
                real_engine || report.metadata.synthetic,
                "{relative:?} was not produced by a real engine but does not say synthetic: true"
            );
            reports += 1;
        }
    }
    assert!(reports > 0, "no reports found under {data:?}");
}

#[test]
fn index_lists_every_report_with_its_synthetic_flag() {
    let data = super::data_dir();
    let index = ReportIndex::parse(&read(&data.join("index.json"))).expect("index parses");
    let listed: Vec<PathBuf> = index.reports.iter().map(|e| data.join(&e.path)).collect();
    for path in json_files(&data.join("reports")) {
        assert!(
            listed.contains(&path),
            "{path:?} is missing from index.json"
        );
    }
    for entry in &index.reports {
        let report = load_report(&read(&data.join(&entry.path))).expect("listed report loads");
        assert_eq!(entry.synthetic, report.metadata.synthetic, "{}", entry.path);
    }
}

/// A bundled report is written in the current report format, or its index entry says which
/// format it is in and why it is not measured again; a note naming a format names the report's.
#[test]
fn bundled_reports_are_current_or_say_why_not() {
    let data = super::data_dir();
    let index = ReportIndex::parse(&read(&data.join("index.json"))).expect("index parses");
    for entry in &index.reports {
        let report = load_report(&read(&data.join(&entry.path))).expect("listed report loads");
        let note = entry.note.as_deref().unwrap_or("");
        let version = &report.schema_version;
        if version == infermeter_report::SCHEMA_VERSION {
            assert!(!note.contains("Report format"), "{}: {note}", entry.path);
        } else {
            assert!(
                note.contains(&format!("Report format {version}")),
                "{} is in format {version}, not {}, and its index entry does not say why",
                entry.path,
                infermeter_report::SCHEMA_VERSION
            );
        }
    }
}

/// Every report measured on the simulator keeps each request's figures, so its Goodput section
/// and the configuration ranking can judge it by any SLO; a report measured on a GPU without
/// them says in the index why it is not measured again (there is no GPU here). Comparisons
/// name reports the index lists, each with per-request figures.
#[test]
fn simulated_reports_carry_per_request_columns() {
    let data = super::data_dir();
    let index = ReportIndex::parse(&read(&data.join("index.json"))).expect("index parses");
    for entry in &index.reports {
        let report = load_report(&read(&data.join(&entry.path))).expect("listed report loads");
        let levels: Vec<_> = report.series.iter().flat_map(|s| &s.levels).collect();
        let without = levels.iter().filter(|l| l.per_request.is_none()).count();
        if report.metadata.engine.name == "infermeter-sim" {
            assert_eq!(
                without,
                0,
                "{}: {without} of {} levels without per-request figures",
                entry.path,
                levels.len()
            );
            let g = goodput::findings(&report, &report_slo(&report));
            assert!(
                g.absent.is_none() && !g.series.is_empty(),
                "{}: {:?}",
                entry.path,
                g.absent
            );
        } else if without > 0 && !report.metadata.hardware.gpu_model.starts_with("CPU") {
            assert!(
                entry.note.as_deref().is_some_and(|n| n.contains("GPU")),
                "{} has no per-request figures and its index entry does not say why",
                entry.path
            );
        }
    }
    assert!(
        !index.comparisons.is_empty(),
        "the bundled comparison is listed"
    );
}

#[test]
fn sample_reproduces_the_reference_headline_figures() {
    let text = read(&super::data_dir().join("reports/sample-synthetic.json"));
    let report = load_report(&text).expect("sample loads");
    let f = findings(&report, &FindingsOptions::default());

    let peak = f.peak.decode.expect("peak decode").high;
    assert!((peak.value - 172.5).abs() < 1e-9, "{}", peak.value);
    assert_eq!(peak.scenario, "chatbot");
    assert_eq!((peak.mode, peak.concurrency), (LoadMode::Peak, 1));
    let tput = f.throughput.max.expect("max throughput");
    assert!((tput.value - 9774.0).abs() < 1e-9, "{}", tput.value);
    assert_eq!((tput.mode, tput.concurrency), (LoadMode::Burst, 256));
    let ttft = f.peak.ttft.expect("best ttft").low;
    assert!((ttft.value - 0.189).abs() < 1e-9, "{}", ttft.value);
    assert_eq!((ttft.scenario.as_str(), ttft.concurrency), ("chatbot", 1));
    let depths: Vec<(String, Option<u32>)> = f
        .burst
        .safe_depths
        .iter()
        .map(|d| (d.scenario.clone(), d.depth.map(|d| d.depth)))
        .collect();
    assert_eq!(
        depths,
        [
            ("chatbot".to_string(), Some(131)),
            ("rag_qa".to_string(), Some(84)),
            ("agentic".to_string(), Some(19)),
            ("tool_calling_agentic".to_string(), Some(8)),
        ]
    );
    assert_eq!(f.requests.success_rate, Some(1.0));

    // ITL 5.8 ms single-user chatbot; scaling efficiency 41% (chatbot) and 8% (tool calling) at 32.
    let analysis = Analysis::new(&report);
    let itl = analysis.points("chatbot", LoadMode::Peak, Metric::Itl, Stat::Mean)[0].1;
    assert!((Metric::Itl.to_display(itl) - 5.8).abs() < 0.05, "{itl}");
    let efficiency_at_32 = |id: &str| {
        let points = analysis.points(id, LoadMode::Peak, Metric::ScalingEfficiency, Stat::Mean);
        (points.last().expect("levels").1 * 100.0).round()
    };
    assert_eq!(efficiency_at_32("chatbot"), 41.0);
    assert_eq!(efficiency_at_32("tool_calling_agentic"), 8.0);
}
