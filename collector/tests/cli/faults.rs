//! Acceptance 3: every simulator fault kind is classified, with no hang and no crash.

use std::time::Duration;

use infermeter_report::{ErrorKind, Outcome};

use crate::common::*;

const SUITE: &str = r#"
name = "faults"
warmup = 0
[[scenario]]
id = "short"
name = "Short"
input_tokens = 64
output_tokens = 16
[burst]
levels = [3]
"#;

/// Runs a 3-request burst against a simulator with `faults` on every request and returns each
/// record's (status, kind).
async fn outcomes(faults: &str, extra: &[&str]) -> Vec<(String, String)> {
    let sim = start_sim(infermeter_sim::SimConfig {
        faults: Some(faults.into()),
        ..fast_sim_args()
    })
    .await;
    let dir = out_dir(&format!("fault-{}", faults.replace([':', '=', ','], "_")));
    let suite = small_suite(&dir, SUITE);
    let report = dir.join("report.json");
    let mut args = run_args(&sim.base_url(), suite.to_str().unwrap(), &report, extra);
    args.extend(["--quiet", "--model", "Qwen/Qwen3-Coder-30B-A3B-Instruct"].map(String::from));
    let out = tokio::time::timeout(Duration::from_secs(60), infermeter(&args, &[]))
        .await
        .unwrap_or_else(|_| panic!("fault {faults}: the run hung"));
    assert!(out.status.success(), "fault {faults}: {}", text(&out));
    sim.shutdown().await;
    // Every kind is one the schemas name.
    check_json_schema(&report);
    let records = read_records(&report);
    assert_eq!(records.len(), 3, "fault {faults}");
    records
        .into_iter()
        .map(|r| match r.outcome {
            Outcome::Ok => ("ok".to_string(), String::new()),
            Outcome::Incomplete { kind, .. } => ("incomplete".to_string(), kind.to_string()),
            Outcome::Errored { kind, .. } => ("errored".to_string(), kind.to_string()),
        })
        .collect()
}

async fn expect(faults: &str, extra: &[&str], status: &str, kind: &str) {
    let got = outcomes(faults, extra).await;
    for (s, k) in &got {
        assert_eq!(
            (s.as_str(), k.as_str()),
            (status, kind),
            "fault {faults}: {got:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn http_statuses_are_errors() {
    expect("status429=1", &[], "errored", "http_429").await;
    expect("status500=1", &[], "errored", "http_500").await;
    expect("status503=1", &[], "errored", "http_503").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_streams_are_incomplete() {
    expect("reset=1", &[], "incomplete", "disconnect").await;
    expect("malformed=1", &[], "incomplete", "malformed_sse").await;
    expect("error=1", &[], "incomplete", "error_event").await;
    expect("nodone=1", &[], "incomplete", "closed_without_done").await;
    expect(
        "stall:3=1",
        &["--total-timeout", "1"],
        "incomplete",
        "timeout_total",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn odd_but_valid_streams_succeed() {
    for fault in [
        "keepalive=1",
        "crlf=1",
        "utf8split=1",
        "stall:0.5=1",
        "multi:4=1",
    ] {
        expect(fault, &[], "ok", "").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_token_chunks_are_counted_per_token() {
    let sim = start_sim(infermeter_sim::SimConfig {
        faults: Some("multi:4=1".into()),
        ..fast_sim_args()
    })
    .await;
    let dir = out_dir("fault-multi-detail");
    let suite = small_suite(&dir, SUITE);
    let report = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report,
        &["--quiet"],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    sim.shutdown().await;
    for r in read_records(&report) {
        assert_eq!(r.output_tokens, Some(16));
        assert_eq!(
            r.chunks.iter().map(|c| c.tokens).sum::<u32>(),
            16,
            "{:?}",
            r.chunks
        );
        assert!(
            r.chunks.len() < 16,
            "chunks carry several tokens: {:?}",
            r.chunks
        );
    }
    let report =
        infermeter_report::load_report(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let m = &report.series[0].levels[0].metrics;
    // Per-token ITL has one sample per token after the first chunk; inter-chunk one per gap.
    assert!(m.itl_s.unwrap().count > m.inter_chunk_s.unwrap().count);
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_connections_are_connect_errors() {
    let dir = out_dir("fault-connect");
    let suite = small_suite(&dir, SUITE);
    let report = dir.join("report.json");
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let args = run_args(
        &base,
        suite.to_str().unwrap(),
        &report,
        &["--quiet", "--model", "m"],
    );
    let out = infermeter(&args, &[]).await;
    // Nothing answers: the run stops at its first level (#43 item 12) and says which endpoint
    // and level, instead of running every level against nothing.
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{base}/chat/completions")) && stderr.contains("burst @3"),
        "{stderr}"
    );
    let records = read_records(&report);
    // The burst of three is attempted and recorded, not skipped.
    assert_eq!(records.len(), 3, "{records:?}");
    for r in records {
        assert!(
            matches!(
                &r.outcome,
                Outcome::Errored {
                    kind: ErrorKind::Connect,
                    ..
                }
            ),
            "{:?}",
            r.outcome
        );
    }
}
