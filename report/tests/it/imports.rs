//! Other tools' result files (the committed fixtures of tests/imports, made by each tool against
//! the simulator) read by `import::read`: the format told from the content, what each file
//! holds and lacks, and every way a file is refused: cut short, of a version this reader does
//! not know, or missing what the format needs. Each refusal names the file, the format it was
//! taken for and what is wrong. (The figures against each tool's own summary: the collector's
//! import tests.)

use std::path::PathBuf;

use infermeter_report::import::{self, detect, Format, ImportError, Input};
use infermeter_report::{validate, LoadMode, Report};

fn fixture(path: &str) -> String {
    let path = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
        .join("../tests/imports")
        .join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(files: &[(&str, &str)]) -> Result<Vec<Report>, ImportError> {
    let inputs: Vec<Input<'_>> = files
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    import::read(&inputs)
}

fn one(files: &[(&str, &str)]) -> Report {
    let mut reports = read(files).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reports.len(), 1);
    let report = reports.remove(0);
    assert!(validate(&report).is_empty(), "{:?}", validate(&report));
    report
}

/// The refusal of `text` named `name`: its file, its format and message.
fn refused(name: &str, text: &str) -> ImportError {
    let err = read(&[(name, text)]).expect_err("refused");
    assert_eq!(err.file, name);
    err
}

const AIPERF: &str = "aiperf/c4/profile_export_aiperf.json";
const AIPERF_RECORDS: &str = "aiperf/c4/profile_export.jsonl";
const GUIDELLM: &str = "guidellm/benchmarks.json";
const STAGE: &str = "inference-perf/stage_1_lifecycle_metrics.json";

#[test]
fn formats_are_told_by_content() {
    assert_eq!(detect(&fixture(AIPERF)), Some(Format::AiperfSummary));
    assert_eq!(
        detect(&fixture(AIPERF_RECORDS)),
        Some(Format::AiperfRecords)
    );
    assert_eq!(detect(&fixture(GUIDELLM)), Some(Format::Guidellm));
    assert_eq!(detect(&fixture(STAGE)), Some(Format::InferencePerf));
    assert_eq!(
        detect(r#"{"completed": 3, "duration": 1.0, "backend": "openai"}"#),
        Some(Format::Vllm)
    );
    let own = std::fs::read_to_string(
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
            .join("../data/reports/sample-synthetic.json"),
    )
    .unwrap();
    assert_eq!(detect(&own), Some(Format::Infermeter));
    // Cut short, a file is still known by the keys only its tool writes.
    let guidellm = fixture(GUIDELLM);
    assert_eq!(
        detect(&guidellm[..guidellm.len() / 3]),
        Some(Format::Guidellm)
    );
    assert_eq!(detect("{\"name\": 1}"), None);
}

#[test]
fn aiperf_summary_with_records_has_goodput_and_without_says_why() {
    let summary = fixture(AIPERF);
    let records = fixture(AIPERF_RECORDS);
    let with = one(&[("s.json", &summary), ("r.jsonl", &records)]);
    let level = &with.series[0].levels[0];
    assert_eq!(with.series[0].mode, LoadMode::Peak);
    assert_eq!(level.concurrency, 4);
    let columns = level.per_request.as_ref().expect("per-request columns");
    assert_eq!(columns.len() as u64, level.requests.total());
    assert!(columns.has_smoothness(), "AIPerf records keep chunk gaps");
    let p = with.metadata.provenance.as_ref().unwrap();
    assert_eq!(p.tool, "AIPerf");
    assert_eq!(p.version.as_deref(), Some("0.13.0"));
    assert_eq!(p.files, ["s.json", "r.jsonl"]);
    assert!(p.command.as_deref().unwrap().starts_with("aiperf profile"));
    // AIPerf has no pooled ITL: its per-request figure is TPOT. It writes no p99.9: the
    // records give it (the same requests), a summary alone leaves it absent.
    assert!(level.metrics.itl_s.is_none());
    let ttft = level.metrics.ttft_s.unwrap();
    assert!(ttft.p999.unwrap() >= ttft.p99.unwrap());
    let without = one(&[("s.json", &summary)]);
    assert!(without.series[0].levels[0].per_request.is_none());
    let ttft = without.series[0].levels[0].metrics.ttft_s.unwrap();
    assert!(ttft.p999.is_none() && ttft.p99.is_some());
    let why = &without.metadata.provenance.as_ref().unwrap().absent["per_request"];
    assert_eq!(
        why,
        "AIPerf summary without records (profile_export.jsonl): no goodput"
    );
}

#[test]
fn guidellm_benchmarks_are_levels_with_requests_but_no_gaps() {
    let report = one(&[("benchmarks.json", &fixture(GUIDELLM))]);
    let loads: Vec<u32> = report.series[0]
        .levels
        .iter()
        .map(|l| l.concurrency)
        .collect();
    assert_eq!(loads, [1, 4]);
    let columns = report.series[0].levels[1].per_request.as_ref().unwrap();
    assert!(!columns.has_smoothness(), "guidellm keeps no token gaps");
    let p = report.metadata.provenance.as_ref().unwrap();
    assert_eq!(p.version.as_deref(), Some("0.8.1"));
    assert!(p.absent.contains_key("stalls"));
}

#[test]
fn inference_perf_stages_join_into_one_report() {
    let report = one(&[
        (
            "stage_0.json",
            &fixture("inference-perf/stage_0_lifecycle_metrics.json"),
        ),
        ("stage_1.json", &fixture(STAGE)),
    ]);
    let loads: Vec<u32> = report.series[0]
        .levels
        .iter()
        .map(|l| l.concurrency)
        .collect();
    assert_eq!(loads, [1, 4]);
    assert!(report
        .metadata
        .provenance
        .as_ref()
        .unwrap()
        .absent
        .contains_key("per_request"));
    // The same stage twice is two runs of one load: two reports, to compare.
    let stage = fixture(STAGE);
    assert_eq!(
        read(&[("a.json", &stage), ("b.json", &stage)])
            .unwrap()
            .len(),
        2
    );
}

/// Every format cut short: refused with the file's name, the format and "cut short".
#[test]
fn truncated_files_are_refused_naming_file_and_format() {
    for (path, format) in [
        (AIPERF, "AIPerf summary"),
        (GUIDELLM, "guidellm benchmarks.json"),
        (STAGE, "inference-perf lifecycle metrics report"),
    ] {
        let text = fixture(path);
        let err = refused("cut.json", &text[..text.len() / 2]);
        let format_named = err.format.as_deref().unwrap_or_default();
        assert!(format_named.starts_with(format), "{path}: {err}");
        assert!(err.message.contains("cut short"), "{path}: {err}");
    }
    let records = fixture(AIPERF_RECORDS);
    let summary = fixture(AIPERF);
    let cut = &records[..records.len() / 2];
    let err = read(&[("s.json", &summary), ("r.jsonl", cut)]).unwrap_err();
    assert_eq!(err.file, "r.jsonl");
    assert!(err.message.contains("cut short"), "{err}");
}

/// A file of a version the reader does not know is refused by name and version.
#[test]
fn unknown_versions_are_refused_by_name_and_version() {
    let aiperf = fixture(AIPERF).replacen(
        "\"schema_version\": \"1.4\"",
        "\"schema_version\": \"2.0\"",
        1,
    );
    let aiperf = aiperf.replacen(
        "\"schema_version\":\"1.4\"",
        "\"schema_version\":\"2.0\"",
        1,
    );
    let err = refused("profile_export_aiperf.json", &aiperf);
    assert!(err.to_string().contains("export schema 2.0"), "{err}");
    assert!(err.to_string().contains("AIPerf 0.13.0"), "{err}");
    let guidellm = fixture(GUIDELLM);
    let guidellm = guidellm
        .replacen("\"version\": 2,", "\"version\": 3,", 1)
        .replacen("\"version\":2,", "\"version\":3,", 1);
    let err = refused("benchmarks.json", &guidellm);
    assert!(err.to_string().contains("report format 3"), "{err}");
    assert!(err.to_string().contains("guidellm 0.8.1"), "{err}");
    // vLLM and inference-perf files carry no version: one without the keys the tested release
    // writes is refused as of an unknown release.
    let old_vllm = r#"{"date": "20240101-000000", "backend": "vllm", "model_id": "m",
        "completed": 3, "duration": 1.0, "request_throughput": 3.0, "output_throughput": 9.0,
        "mean_ttft_ms": 1.0, "median_ttft_ms": 1.0, "p99_ttft_ms": 2.0}"#;
    let err = refused("old.json", old_vllm);
    assert!(err.to_string().contains("has no `failed`"), "{err}");
    assert!(err.to_string().contains("vllm 0.33.0"), "{err}");
}

/// Parsable files that miss what their format needs: named, with the field.
#[test]
fn malformed_files_say_which_field() {
    let stage = fixture(STAGE).replacen("\"benchmark_time_seconds\"", "\"benchmark_seconds\"", 1);
    let err = refused("stage.json", &stage);
    assert!(err.to_string().contains("benchmark_time_seconds"), "{err}");
    let summary = serde_json::from_str::<serde_json::Value>(&fixture(
        "inference-perf/summary_lifecycle_metrics.json",
    ));
    if let Ok(summary) = summary {
        let err = refused("summary.json", &summary.to_string());
        assert!(err.message.contains("stage_N_lifecycle_metrics"), "{err}");
    }
    let err = refused("x.json", "[1, 2]");
    assert!(err.format.is_none());
    let err = refused("records.jsonl", &fixture(AIPERF_RECORDS));
    assert!(err.message.contains("without their summary"), "{err}");
}

/// A vLLM run at a request rate (burstiness 1: Poisson arrivals) is a rate level, its
/// concurrency the most requests in flight from the requests' start times; without
/// `--save-detailed` it keeps its summary and leaves the per-request columns out, saying why.
#[test]
fn vllm_rate_runs_and_summary_only_files() {
    let mut c4: serde_json::Value = serde_json::from_str(&fixture("vllm/c4.json")).unwrap();
    c4["request_rate"] = serde_json::json!(8.0);
    c4["max_concurrency"] = serde_json::Value::Null;
    let report = one(&[("rate.json", &c4.to_string())]);
    let series = &report.series[0];
    assert_eq!(series.mode, LoadMode::Rate);
    assert_eq!(series.arrivals, Some(infermeter_report::Arrivals::Poisson));
    let level = &series.levels[0];
    assert_eq!(level.request_rate, Some(8.0));
    assert!(
        (1..=16).contains(&level.concurrency),
        "{}",
        level.concurrency
    );
    let mut summary_only: serde_json::Value =
        serde_json::from_str(&fixture("vllm/c1.json")).unwrap();
    for key in [
        "input_lens",
        "output_lens",
        "start_times",
        "ttfts",
        "itls",
        "generated_texts",
        "errors",
    ] {
        summary_only.as_object_mut().unwrap().remove(key);
    }
    let report = one(&[("c1.json", &summary_only.to_string())]);
    let level = &report.series[0].levels[0];
    assert!(level.per_request.is_none());
    let why = &report.metadata.provenance.as_ref().unwrap().absent["per_request"];
    assert!(why.contains("--save-detailed"), "{why}");
    // The tool's own p99 stays; the p90 it was asked for too; E2E from its summary.
    let ttft = level.metrics.ttft_s.unwrap();
    assert!(ttft.p99.is_some() && ttft.p90.is_some() && ttft.p999.is_none());
    assert_eq!(ttft.count, Some(8));
    assert!(level.metrics.e2e_s.is_some());
}

/// #43 item 8: AIPerf at 4 req/s with a tokenizer other than the model's (tests/imports/aiperf/
/// r4-tokenizer): its tokenizer counted 97.6 tokens per request where the server served 80. The
/// figures use the server's counts and the report states AIPerf's beside them.
#[test]
fn aiperf_figures_use_the_servers_token_counts() {
    let summary = fixture("aiperf/r4-tokenizer/profile_export_aiperf.json");
    let records = fixture("aiperf/r4-tokenizer/profile_export.jsonl");
    let report = one(&[("r4/s.json", &summary), ("r4/r.jsonl", &records)]);
    let level = &report.series[0].levels[0];
    assert_eq!(report.series[0].mode, LoadMode::Rate);
    assert_eq!(level.metrics.output_tokens.unwrap().mean, 80.0);
    // AIPerf's 257.6 tok/s by its tokenizer's 97.5625 tokens a request, in the server's 80.
    assert!((level.system_output_tok_s - 257.5527 * 80.0 / 97.5625).abs() < 0.01);
    // Each request's (latency − TTFT) / (80 − 1): 6.53 ms, where AIPerf's 97.6 tokens give 5.35.
    let tpot = level.metrics.tpot_s.unwrap().mean;
    assert!((tpot * 1e3 - 6.535).abs() < 0.001, "{tpot}");
    let m = &report.measurement;
    assert_eq!(m.output_token_source, infermeter_report::TokenSource::Usage);
    let note = &m.pooling["output_tokens"];
    assert!(
        note.contains("80.0 output tokens per request, 211 tok/s, TPOT 6.5 ms"),
        "{note}"
    );
    assert!(
        note.contains("AIPerf's tokenizer counted 97.6 per request, 258 tok/s, TPOT 5.4 ms"),
        "{note}"
    );
    // Without the records, the throughput is the server's still.
    let alone = one(&[("r4/s.json", &summary)]);
    let level = &alone.series[0].levels[0];
    assert!((level.system_output_tok_s - 257.5527 * 80.0 / 97.5625).abs() < 0.01);
}

/// #43 item 8: AIPerf records go with the summary in their own folder, never by position:
/// `import A/ B/` where A has no records must not give A B's records.
#[test]
fn aiperf_records_pair_with_the_summary_of_their_folder() {
    let (c1, c4) = (
        fixture("aiperf/c1/profile_export_aiperf.json"),
        fixture(AIPERF),
    );
    let records = fixture(AIPERF_RECORDS);
    let report = one(&[
        ("A/profile_export_aiperf.json", &c1),
        ("B/profile_export_aiperf.json", &c4),
        ("B/profile_export.jsonl", &records),
    ]);
    let levels = &report.series[0].levels;
    let at = |c: u32| levels.iter().find(|l| l.concurrency == c).unwrap();
    assert!(at(1).per_request.is_none(), "A has no records");
    assert_eq!(at(4).per_request.as_ref().unwrap().len(), 16);
    // Two summaries and records named without folders: which summary they belong to is not
    // known, and they are refused by name rather than given to the first.
    let err = read(&[("a.json", &c1), ("b.json", &c4), ("r.jsonl", &records)]).unwrap_err();
    assert_eq!(err.file, "r.jsonl");
}

/// #43 item 8: guidellm's throughput strategy (as many requests as it may, at most
/// `max_concurrency` in flight) is a closed loop at that concurrency, named as the throughput
/// strategy, not a burst. (The fixture's second benchmark, its strategy written as guidellm
/// writes a throughput one.)
#[test]
fn guidellm_throughput_is_named_as_such_not_a_burst() {
    let text = fixture(GUIDELLM).replacen(
        r#""type_": "concurrent", "worker_count": 4, "max_concurrency": 4, "streams": 4"#,
        r#""type_": "throughput", "worker_count": 4, "max_concurrency": 4"#,
        1,
    );
    let report = one(&[("benchmarks.json", &text)]);
    assert!(report.series.iter().all(|s| s.mode == LoadMode::Peak));
    let concurrencies: Vec<u32> = report.series[0]
        .levels
        .iter()
        .map(|l| l.concurrency)
        .collect();
    assert_eq!(concurrencies, [1, 4]);
    assert_eq!(
        report.metadata.labels["guidellm strategy"],
        "throughput (as many requests as it may: 4 in flight at most)"
    );
}

/// #43 item 8: inference-perf keeps only its client tokenizer's counts, and the report says so.
#[test]
fn inference_perf_says_its_counts_are_the_client_tokenizers() {
    let report = one(&[(STAGE, &fixture(STAGE))]);
    let why = &report.metadata.provenance.as_ref().unwrap().absent["server_tokens"];
    assert!(why.contains("client's tokenizer"), "{why}");
    assert_eq!(
        report.measurement.output_token_source,
        infermeter_report::TokenSource::Tokenizer
    );
}
