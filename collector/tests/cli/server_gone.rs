//! #43 item 12: a server that goes away mid-run. The engine (the simulator in a process of its
//! own) is killed during a multi-level run: the collector stops at the level whose last requests
//! all failed to connect, names the endpoint and the level, keeps the finished levels and every
//! record, and exits non-zero, instead of running every remaining level as `ok 0/47` at
//! "system -0.0 tok/s".

use std::process::Stdio;
use std::time::Duration;

use infermeter_report::{load_report, ErrorKind, Outcome, RunStatus};
use tokio::time::Instant;

use crate::common::*;

/// Eight levels of a second or more each: the run is mid-way when the engine is killed.
const SUITE: &str = r#"
name = "gone"
warmup = 0
[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 128
output_tokens = 32
[peak]
levels = [1, 2, 3, 4, 5, 6, 7, 8]
requests_per_slot = 2
min_seconds = 1
"#;

/// A free loopback port (bound, then let go for the simulator to take).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `infermeter sim` on the fast test GPU at `port`, in a process of its own; ready when its
/// `/v1/models` answers.
async fn engine(port: u16) -> tokio::process::Child {
    let child = tokio::process::Command::new(BIN)
        .args(["sim", "--quiet", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--gpu", "test-fast", "--profiles"])
        .arg(fast_profiles())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the simulator starts");
    let url = format!("http://127.0.0.1:{port}/v1/models");
    let deadline = Instant::now() + Duration::from_secs(30);
    while reqwest::get(&url).await.is_err() {
        assert!(Instant::now() < deadline, "the simulator never answered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child
}

/// The number of levels the report at `path` holds, 0 while it is not there.
fn levels_written(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| load_report(&t).ok())
        .map_or(0, |r| r.series.iter().map(|s| s.levels.len()).sum())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_killed_mid_run_stops_the_run_with_the_endpoint_named() {
    let port = free_port();
    let mut sim = engine(port).await;
    let dir = out_dir("server-gone");
    let suite = small_suite(&dir, SUITE);
    let report = dir.join("report.json");
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let run = tokio::process::Command::new(BIN)
        .args(run_args(&base_url, suite.to_str().unwrap(), &report, &[]))
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Two levels written: the run is at its third of eight.
    let deadline = Instant::now() + Duration::from_secs(60);
    while levels_written(&report) < 2 {
        assert!(Instant::now() < deadline, "no two levels after 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sim.start_kill().unwrap();
    sim.wait().await.unwrap();
    let killed = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(10), run.wait_with_output())
        .await
        .expect("the run stops within 10 s of the engine's death")
        .unwrap();
    let printed = text(&out);
    assert!(!out.status.success(), "{printed}");
    assert!(killed.elapsed() < Duration::from_secs(10));
    assert!(
        printed.contains(&format!("failed to connect to http://127.0.0.1:{port}/v1")),
        "{printed}"
    );
    assert!(printed.contains("chat peak @"), "{printed}");
    assert!(!printed.contains("-0.0"), "{printed}");

    // The finished levels only, each with requests served; every record kept.
    let partial = load_report(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(
        matches!(&partial.status, RunStatus::Partial { reason } if reason.contains("--resume")),
        "{:?}",
        partial.status
    );
    let levels: Vec<_> = partial.series.iter().flat_map(|s| &s.levels).collect();
    assert!((2..8).contains(&levels.len()), "{} levels", levels.len());
    assert!(levels.iter().all(|l| l.requests.ok > 0), "{levels:#?}");
    assert!(
        partial.warnings.iter().any(|w| w.contains("is left out")),
        "{:?}",
        partial.warnings
    );
    let records = read_records(&report);
    assert_eq!(
        partial.records.as_ref().unwrap().count,
        records.len() as u64
    );
    let last = records.last().expect("records");
    assert!(
        matches!(
            &last.outcome,
            Outcome::Errored {
                kind: ErrorKind::Connect,
                ..
            }
        ),
        "{last:?}"
    );
    check_json_schema(&report);
}
