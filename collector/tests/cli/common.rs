//! Shared helpers: a simulator on a free port, the built binary, output files.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use infermeter_report::{Report, RequestRecord};
use infermeter_sim::{RunningSim, SimConfig};

pub const BIN: &str = env!("CARGO_BIN_EXE_infermeter");
/// The developers' binary: the self-benchmarks and calibration.
pub const DEV_BIN: &str = env!("CARGO_BIN_EXE_infermeter-dev");

/// The collector crate's folder, read at run time: a build cache shared by checkouts can hold
/// this binary built in another one, and cargo does not rebuild it for a path change alone.
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
}

/// The fast test GPU: real token lengths, little simulated time.
pub fn fast_profiles() -> PathBuf {
    manifest_dir().join("tests/data/fast-sim.toml")
}

pub fn fast_sim_args() -> SimConfig {
    SimConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        gpu: "test-fast".into(),
        profiles: Some(fast_profiles()),
        ..SimConfig::default()
    }
}

/// The simulator's default deployment (an H100), on a free port: real simulated time.
pub fn h100_sim_args() -> SimConfig {
    SimConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..SimConfig::default()
    }
}

pub async fn start_sim(args: SimConfig) -> RunningSim {
    infermeter_sim::start(args).await.expect("simulator starts")
}

/// Held by the tests whose assertions compare timings (latencies, scheduling lag, engine against
/// client speeds) and by those that load the machine most: on two cores, one running beside
/// another moves its figures by more than the margins they assert.
static TIMING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What the name of every test that calls [`timing_sensitive`] starts with. The mutex keeps two
/// such tests apart, not one from the rest of the suite, so `scripts/test.sh` runs the rest with
/// `--skip timed_` and then these alone: on CI's two cores a suite of every mode running beside
/// the fitted simulator's check moved its TTFT by 9% against a 5% margin.
const TIMED_PREFIX: &str = "timed_";

/// Waits until no other timing-sensitive test runs; the guard lets the next one go.
pub async fn timing_sensitive() -> tokio::sync::MutexGuard<'static, ()> {
    // libtest names each test's thread after the test (`module::name`); a single-threaded run
    // may use the main thread, which says nothing.
    if let Some(test) = std::thread::current().name().filter(|name| *name != "main") {
        let name = test.rsplit("::").next().unwrap_or(test);
        assert!(
            name.starts_with(TIMED_PREFIX),
            "{test} is timing-sensitive: name it {TIMED_PREFIX}... so that scripts/test.sh runs it alone"
        );
    }
    TIMING.lock().await
}

/// A fresh directory for one test's outputs.
pub fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a small one-scenario suite.
pub fn small_suite(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("suite.toml");
    std::fs::write(&path, body).unwrap();
    path
}

/// `run --base-url BASE_URL --suite SUITE --out REPORT`, then `extra` (`--quiet` among them where
/// the test does not read the logs): the run most tests make. `SUITE` is a built-in suite's name
/// or a file.
pub fn run_args(base_url: &str, suite: &str, report: &Path, extra: &[&str]) -> Vec<String> {
    let report = report.to_str().unwrap();
    let run = [
        "run",
        "--base-url",
        base_url,
        "--suite",
        suite,
        "--out",
        report,
    ];
    run.iter().chain(extra).map(|a| a.to_string()).collect()
}

/// `sweep --quiet --suite SUITE --out-dir DIR`, then `extra` (the server or base URL, the
/// parameters, and after `--` the run options): the sweep the sweep tests make.
pub fn sweep_args(suite: &Path, out_dir: &Path, extra: &[&str]) -> Vec<String> {
    let (suite, out_dir) = (suite.to_str().unwrap(), out_dir.to_str().unwrap());
    let sweep = ["sweep", "--quiet", "--suite", suite, "--out-dir", out_dir];
    sweep.iter().chain(extra).map(|a| a.to_string()).collect()
}

pub async fn infermeter(args: &[impl AsRef<OsStr>], envs: &[(&str, &str)]) -> Output {
    run_binary(BIN, args, envs).await
}

pub async fn infermeter_dev(args: &[impl AsRef<OsStr>]) -> Output {
    run_binary(DEV_BIN, args, &[]).await
}

async fn run_binary(bin: &str, args: &[impl AsRef<OsStr>], envs: &[(&str, &str)]) -> Output {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args)
        .env_remove("OPENAI_API_KEY")
        .kill_on_drop(true);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output()
        .await
        .unwrap_or_else(|e| panic!("{bin} runs: {e}"))
}

/// `<report>.records.jsonl`.
pub fn records_file(report: &Path) -> PathBuf {
    let mut name = report.file_name().unwrap().to_os_string();
    name.push(".records.jsonl");
    report.with_file_name(name)
}

pub fn read_records(report: &Path) -> Vec<RequestRecord> {
    read_jsonl(&records_file(report))
}

/// The records in a JSONL file, one per line.
pub fn read_jsonl(path: &Path) -> Vec<RequestRecord> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("records file {}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("every line is a record"))
        .collect()
}

/// Checks the report, and each line of its records file, against the JSON Schemas the
/// repository ships (data/schema, kept current by the report crate's tests).
pub fn check_json_schema(report: &Path) {
    let validator = |file: &str| {
        let path = manifest_dir().join("../data/schema").join(file);
        let schema =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
        jsonschema::validator_for(&schema).expect("schema compiles")
    };
    let violations = |validator: &jsonschema::Validator, instance: &serde_json::Value| {
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "schema violations: {errors:#?}");
    };
    let instance = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    violations(&validator("report.schema.json"), &instance);
    let records = validator("record.schema.json");
    for line in std::fs::read_to_string(records_file(report))
        .unwrap()
        .lines()
    {
        violations(&records, &serde_json::from_str(line).unwrap());
    }
}

/// Lengths and cache as asked: the report's only warnings, if any, are a busy machine's
/// client lag.
pub fn assert_only_lag_warnings(report: &Report) {
    assert!(
        report
            .warnings
            .iter()
            .all(|w| w.contains("sent requests late")),
        "{:?}",
        report.warnings
    );
}

pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A test whose tool is missing (`why`) skips under a bare `cargo test`, and fails under
/// `CI=true`, where scripts/test.sh has installed every tool and a skip would hide a failure.
pub fn skip_unless_ci(what: &str, why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("the {what} test cannot run under CI=true: {why}");
    }
    eprintln!("SKIPPED {what} test: {why}");
}

/// The JSON a GET of `url` answers.
pub async fn get_json(url: &str) -> serde_json::Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// The simulator's own account of the requests it served (`/infermeter/requests`): `field`
/// (`prompt_tokens`, `cached_tokens`, `completion_tokens`) by response id.
pub async fn served_by_id(base_url: &str, field: &str) -> HashMap<String, u64> {
    let root = base_url.trim_end_matches("/v1");
    let log = get_json(&format!("{root}/infermeter/requests")).await;
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e[field].as_u64().unwrap(),
            )
        })
        .collect()
}
