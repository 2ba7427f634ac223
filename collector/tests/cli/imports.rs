//! Other tools' result files read as reports (`infermeter import`, and `summary`, `view` and
//! `export` on the same inputs): each tool run live against the simulator at two loads
//! (tests/imports/run-tools.sh), and the committed fixtures (tests/imports/), then every level's
//! TTFT, TPOT or ITL and E2E medians and p99, output throughput and request counts checked
//! against what the tool wrote in its own summary, read here by the tool's own key names.
//!
//! The tools come from `$INFERMETER_CACHE/peers` (scripts/setup.sh) and the tokenizer from
//! `INFERMETER_LLAMA_TOKENIZER` (engines/llama-cpp/setup.sh, as scripts/test.sh exports it).
//! Without them a live test says why and passes, except under `CI=true`.

use std::path::{Path, PathBuf};

use infermeter_report::{load_report, Distribution, LoadMode, Report};
use serde_json::Value;

use crate::common::*;

/// One level as the tool's own summary states it: seconds, tokens per second, requests.
#[derive(Debug)]
struct Stated {
    load: u32,
    ok: u64,
    failed: u64,
    ttft: (f64, f64),
    /// The tool's per-token figure: TPOT (vLLM, AIPerf's inter-token latency, inference-perf)
    /// or ITL (vLLM, guidellm, inference-perf), with which report distribution holds it.
    per_token: Vec<(&'static str, (f64, f64))>,
    e2e: (f64, f64),
    output_tok_s: f64,
}

fn repo() -> PathBuf {
    manifest_dir().join("..")
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer}"))
}

/// (p50, p99) of a tool's statistics object, in seconds.
fn pair(v: &Value, p50: &str, p99: &str, scale: f64) -> (f64, f64) {
    (num(v, p50) * scale, num(v, p99) * scale)
}

/// A vLLM `bench serve --save-result` file, by its own keys (milliseconds).
fn vllm_stated(path: &Path) -> Stated {
    let v = json(path);
    let ms = |m: &str| {
        pair(
            &v,
            &format!("/median_{m}_ms"),
            &format!("/p99_{m}_ms"),
            1e-3,
        )
    };
    Stated {
        load: num(&v, "/max_concurrency") as u32,
        ok: num(&v, "/completed") as u64,
        failed: num(&v, "/failed") as u64,
        ttft: ms("ttft"),
        per_token: vec![("tpot", ms("tpot")), ("itl", ms("itl"))],
        e2e: ms("e2el"),
        output_tok_s: num(&v, "/output_throughput"),
    }
}

/// An AIPerf `profile_export_aiperf.json` (milliseconds; its inter-token latency is per
/// request, infermeter's TPOT).
fn aiperf_stated(path: &Path) -> Stated {
    let v = json(path);
    let ms = |m: &str| pair(&v, &format!("/{m}/p50"), &format!("/{m}/p99"), 1e-3);
    let phase = v["input_config"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "profiling")
        .unwrap()
        .clone();
    Stated {
        load: num(&phase, "/concurrency") as u32,
        ok: num(&v, "/request_count/avg") as u64,
        failed: v
            .pointer("/error_request_count/avg")
            .and_then(Value::as_f64)
            .unwrap_or(0.0) as u64,
        ttft: ms("time_to_first_token"),
        per_token: vec![("tpot", ms("inter_token_latency"))],
        e2e: ms("request_latency"),
        output_tok_s: num(&v, "/output_token_throughput/avg"),
    }
}

/// Every benchmark of a guidellm `benchmarks.json` (milliseconds, latency in seconds).
fn guidellm_stated(path: &Path) -> Vec<Stated> {
    let v = json(path);
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let m = &b["metrics"];
            let stat = |name: &str, scale| {
                pair(
                    m,
                    &format!("/{name}/successful/median"),
                    &format!("/{name}/successful/percentiles/p99"),
                    scale,
                )
            };
            Stated {
                load: num(b, "/config/strategy/streams") as u32,
                ok: num(m, "/request_totals/successful") as u64,
                failed: (num(m, "/request_totals/errored") + num(m, "/request_totals/incomplete"))
                    as u64,
                ttft: stat("time_to_first_token_ms", 1e-3),
                per_token: vec![("itl", stat("inter_token_latency_ms", 1e-3))],
                e2e: stat("request_latency", 1.0),
                output_tok_s: num(m, "/output_tokens_per_second/total/mean"),
            }
        })
        .collect()
}

/// An inference-perf `stage_N_lifecycle_metrics.json` (seconds).
fn inference_perf_stated(path: &Path) -> Stated {
    let v = json(path);
    let lat = |m: &str| {
        pair(
            &v,
            &format!("/successes/latency/{m}/median"),
            &format!("/successes/latency/{m}/p99"),
            1.0,
        )
    };
    Stated {
        load: num(&v, "/load_summary/concurrency") as u32,
        ok: num(&v, "/successes/count") as u64,
        failed: num(&v, "/failures/count") as u64,
        ttft: lat("time_to_first_token"),
        per_token: vec![
            ("tpot", lat("time_per_output_token")),
            ("itl", lat("inter_token_latency")),
        ],
        e2e: lat("request_latency"),
        output_tok_s: num(&v, "/successes/throughput/output_tokens_per_sec"),
    }
}

/// The tool's figures to the last digit it wrote (the JSON's full precision, so the
/// tolerance is float rounding of a unit change).
fn same(what: &str, got: f64, stated: f64) {
    assert!(
        (got - stated).abs() <= 1e-9 * stated.abs().max(1e-9),
        "{what}: imported {got}, the tool wrote {stated}"
    );
}

fn p50_p99(what: &str, d: Option<&Distribution>, stated: (f64, f64)) {
    let d = d.unwrap_or_else(|| panic!("{what}: not imported"));
    same(&format!("{what} p50"), d.p50, stated.0);
    same(
        &format!("{what} p99"),
        d.p99.expect("p99 imported"),
        stated.1,
    );
}

/// Checks every stated level against the report's peak-mode level of the same load.
fn check(report: &Report, stated: &[Stated]) {
    assert!(infermeter_report::validate(report).is_empty());
    let series = report
        .series
        .iter()
        .find(|s| s.mode == LoadMode::Peak)
        .expect("a peak series");
    assert_eq!(series.levels.len(), stated.len(), "one level per load");
    for s in stated {
        let level = series
            .levels
            .iter()
            .find(|l| l.concurrency == s.load)
            .unwrap_or_else(|| panic!("no level at concurrency {}", s.load));
        let at = |m: &str| format!("c={} {m}", s.load);
        assert_eq!(level.requests.ok, s.ok, "{}", at("ok"));
        assert_eq!(
            level.requests.errored + level.requests.incomplete,
            s.failed,
            "{}",
            at("failed")
        );
        p50_p99(&at("TTFT"), level.metrics.ttft_s.as_ref(), s.ttft);
        p50_p99(&at("E2E"), level.metrics.e2e_s.as_ref(), s.e2e);
        for (name, figures) in &s.per_token {
            let d = match *name {
                "tpot" => level.metrics.tpot_s.as_ref(),
                _ => level.metrics.itl_s.as_ref(),
            };
            p50_p99(&at(name), d, *figures);
        }
        same(
            &at("output tok/s"),
            level.system_output_tok_s,
            s.output_tok_s,
        );
    }
}

/// `infermeter import INPUTS… -o DIR/report.json`, read back.
async fn import(inputs: &[PathBuf], dir: &Path) -> Report {
    let out = dir.join("report.json");
    let mut args: Vec<String> = vec!["import".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), out.display().to_string(), "--force".into()]);
    let output = infermeter(&args, &[]).await;
    assert!(
        output.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    load_report(&std::fs::read_to_string(&out).unwrap()).expect("the imported report loads")
}

/// The tool's venv and the tokenizer, or why the live test cannot run.
fn live_inputs(tool: &str) -> Option<PathBuf> {
    let cache = std::env::var_os("INFERMETER_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/infermeter"));
    // The version pinned in the root Cargo.toml's [workspace.metadata.tools], as setup.sh
    // installs it.
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == tool)
        .map(|(_, v)| v.trim().trim_matches('"').to_string())
        .unwrap_or_else(|| panic!("{tool} is not pinned in Cargo.toml"));
    let venv = cache.join("peers").join(format!("{tool}-{version}"));
    let tokenizer = std::env::var_os("INFERMETER_LLAMA_TOKENIZER").map(PathBuf::from);
    let why = match (venv.is_dir(), &tokenizer) {
        (true, Some(_)) => return tokenizer,
        (false, _) => format!(
            "{tool} {version} is not installed in {}; run scripts/setup.sh",
            venv.display()
        ),
        (_, None) => "INFERMETER_LLAMA_TOKENIZER is not set; run engines/llama-cpp/setup.sh and export its TOKENIZER_DIR".into(),
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("the {tool} import test cannot run under CI=true: {why}");
    }
    eprintln!("SKIPPED {tool} import test: {why}");
    None
}

/// Runs `tool` against a fresh simulator at two loads; its output folder.
async fn run_tool(tool: &str, tokenizer: &Path) -> PathBuf {
    let sim = start_sim(fast_sim_args()).await;
    let base_url = format!("http://{}", sim.addr);
    let models: Value = reqwest::get(format!("{base_url}/v1/models"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let model = models["data"][0]["id"].as_str().unwrap().to_string();
    let out = out_dir(&format!("import-{tool}"));
    let status = tokio::process::Command::new("bash")
        .arg(repo().join("tests/imports/run-tools.sh"))
        .args([tool, &base_url, &model])
        .arg(tokenizer)
        .arg(&out)
        .status()
        .await
        .unwrap();
    assert!(
        status.success(),
        "{tool} failed; its log is in {}",
        out.display()
    );
    out
}

#[tokio::test]
async fn timed_aiperf_live_run_imports_as_its_summary_states() {
    let Some(tokenizer) = live_inputs("aiperf") else {
        return;
    };
    let _timing = timing_sensitive().await;
    let out = run_tool("aiperf", &tokenizer).await;
    let dirs = [out.join("c1"), out.join("c4")];
    let report = import(&dirs, &out).await;
    let stated: Vec<Stated> = dirs
        .iter()
        .map(|d| aiperf_stated(&d.join("profile_export_aiperf.json")))
        .collect();
    check(&report, &stated);
    // With the records beside each summary, every request is in the per-request columns.
    for level in &report.series[0].levels {
        let columns = level.per_request.as_ref().expect("records read");
        assert_eq!(columns.len() as u64, level.requests.total());
    }
}

#[tokio::test]
async fn timed_guidellm_live_run_imports_as_its_summary_states() {
    let Some(tokenizer) = live_inputs("guidellm") else {
        return;
    };
    let _timing = timing_sensitive().await;
    let out = run_tool("guidellm", &tokenizer).await;
    let file = out.join("benchmarks.json");
    let report = import(std::slice::from_ref(&file), &out).await;
    check(&report, &guidellm_stated(&file));
}

#[tokio::test]
async fn timed_inference_perf_live_run_imports_as_its_summary_states() {
    let Some(tokenizer) = live_inputs("inference-perf") else {
        return;
    };
    let _timing = timing_sensitive().await;
    let out = run_tool("inference-perf", &tokenizer).await;
    let reports = out.join("reports");
    let report = import(std::slice::from_ref(&reports), &out).await;
    let stated: Vec<Stated> = ["stage_0", "stage_1"]
        .iter()
        .map(|s| inference_perf_stated(&reports.join(format!("{s}_lifecycle_metrics.json"))))
        .collect();
    check(&report, &stated);
}

/// The committed fixtures (tests/imports/README.md says how each was made), through the same
/// checks, and `summary` reading the same inputs.
#[tokio::test]
async fn committed_fixtures_import_as_their_tools_state() {
    let fixtures = repo().join("tests/imports");
    let out = out_dir("import-fixtures");
    let aiperf = [fixtures.join("aiperf/c1"), fixtures.join("aiperf/c4")];
    let report = import(&aiperf, &out).await;
    check(
        &report,
        &aiperf
            .iter()
            .map(|d| aiperf_stated(&d.join("profile_export_aiperf.json")))
            .collect::<Vec<_>>(),
    );
    let guidellm = fixtures.join("guidellm/benchmarks.json");
    check(
        &import(std::slice::from_ref(&guidellm), &out).await,
        &guidellm_stated(&guidellm),
    );
    let stages = fixtures.join("inference-perf");
    let stated: Vec<Stated> = ["stage_0", "stage_1"]
        .iter()
        .map(|s| inference_perf_stated(&stages.join(format!("{s}_lifecycle_metrics.json"))))
        .collect();
    check(&import(std::slice::from_ref(&stages), &out).await, &stated);
    let vllm: Vec<PathBuf> = ["c1.json", "c4.json"]
        .iter()
        .map(|f| fixtures.join("vllm").join(f))
        .collect();
    if vllm.iter().all(|f| f.is_file()) {
        let stated: Vec<Stated> = vllm.iter().map(|f| vllm_stated(f)).collect();
        check(&import(&vllm, &out).await, &stated);
    }
    // `summary` takes the tool's files as they are, and names the tool.
    let output = infermeter(&["summary".into(), guidellm.display().to_string()], &[]).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("measured by guidellm"), "{text}");
}

/// A cut-short file is refused with its name, the format it was taken for and what is wrong;
/// a second import over the same output needs --force.
#[tokio::test]
async fn a_truncated_result_file_is_refused_with_its_name_and_format() {
    let out = out_dir("import-truncated");
    let whole =
        std::fs::read_to_string(repo().join("tests/imports/guidellm/benchmarks.json")).unwrap();
    let cut = out.join("benchmarks.json");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let output = infermeter(
        &[
            "import",
            cut.to_str().unwrap(),
            "-o",
            out.join("r.json").to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("benchmarks.json"), "{stderr}");
    assert!(stderr.contains("guidellm benchmarks.json"), "{stderr}");
    assert!(stderr.contains("cut short"), "{stderr}");
}

/// `export` takes the tools' files and folders as `import` does, beside an infermeter report:
/// the page it writes holds both, the imported one under its tool's name.
#[tokio::test]
async fn export_takes_the_tools_files_beside_an_infermeter_report() {
    if !crate::viewer::embedded() {
        return;
    }
    let fixtures = repo().join("tests/imports");
    let out = out_dir("import-export");
    let html = out.join("compare.html");
    let args = [
        "export".to_string(),
        fixtures.join("aiperf/c4").display().to_string(),
        fixtures.join("infermeter-sim.json").display().to_string(),
        "-o".into(),
        html.display().to_string(),
    ];
    let output = infermeter(&args, &[]).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("id=\"infermeter-report-2\""),
        "both reports inlined"
    );
    assert!(
        page.contains("measured by AIPerf"),
        "the imported report is inlined"
    );
}
