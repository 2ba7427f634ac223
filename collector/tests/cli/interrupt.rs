//! Acceptance 4: SIGINT mid-run keeps every completed request and writes a partial report.

use std::time::Duration;

use infermeter_report::{load_report, RunStatus};

use crate::common::*;

const SUITE: &str = r#"
name = "long"
warmup = 1
[[scenario]]
id = "chatbot"
name = "Chatbot"
input_tokens = 1024
output_tokens = 64
[peak]
levels = [1, 2]
requests_per_slot = 1000
min_seconds = 600
"#;

#[tokio::test(flavor = "multi_thread")]
async fn sigint_keeps_records_and_writes_a_partial_report() {
    // The default (H100) profile: slow enough that the run is mid-level when interrupted.
    let sim = start_sim(h100_sim_args()).await;
    let dir = out_dir("interrupt");
    let suite = small_suite(&dir, SUITE);
    let report = dir.join("report.json");
    let mut child = tokio::process::Command::new(BIN)
        .args(run_args(
            &sim.base_url(),
            suite.to_str().unwrap(),
            &report,
            &["--quiet", "--grace", "1"],
        ))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let records_path = dir.join("report.json.records.jsonl");
    // Wait until a few measured requests are on disk.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let measured = std::fs::read_to_string(&records_path)
            .map(|t| t.lines().filter(|l| l.contains("\"warmup\":false")).count())
            .unwrap_or(0);
        if measured >= 3 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no records after 60 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = child.id().unwrap() as libc::pid_t;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the run stops within the grace period")
        .unwrap();
    assert_eq!(status.code(), Some(130));

    let partial = load_report(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(matches!(&partial.status, RunStatus::Partial { reason } if reason.contains("SIGINT")));
    let records = read_records(&report);
    assert_eq!(
        partial.records.as_ref().unwrap().count,
        records.len() as u64
    );
    let measured: Vec<_> = records.iter().filter(|r| !r.warmup).collect();
    assert!(measured.len() >= 3);
    // Every completed request of the interrupted level is counted in the partial report.
    let level = &partial.series[0].levels[0];
    assert_eq!(level.requests.total(), measured.len() as u64);

    // --resume picks the partial run up; a second SIGINT ends it again, records are kept.
    let before = records.len();
    let mut child = tokio::process::Command::new(BIN)
        .args(run_args(
            &sim.base_url(),
            suite.to_str().unwrap(),
            &report,
            &["--quiet", "--grace", "1", "--resume"],
        ))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    // SAFETY: as above.
    unsafe { libc::kill(child.id().unwrap() as libc::pid_t, libc::SIGINT) };
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(130));
    // The first attempt's measured requests moved aside, whole; its warmups stay first.
    let resumed = read_records(&report);
    let first_warmups: Vec<_> = records.iter().filter(|r| r.warmup).cloned().collect();
    assert_eq!(resumed[..first_warmups.len()], first_warmups[..]);
    assert!(
        resumed.iter().all(|r| !measured.contains(&r)),
        "a first-attempt record is still counted"
    );
    assert!(
        resumed.len() > first_warmups.len() + 1,
        "the resumed run warmed up and measured: {} records, {before} before",
        resumed.len()
    );
    let aside = read_jsonl(&dir.join("report.json.records.interrupted.jsonl"));
    assert_eq!(aside.iter().collect::<Vec<_>>(), measured);
    let partial = load_report(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(
        partial
            .warnings
            .iter()
            .any(|w| w.contains("chatbot peak @1: measured again")
                && w.contains(&format!("the {} requests", measured.len()))
                && w.contains("report.json.records.interrupted.jsonl")),
        "{:?}",
        partial.warnings
    );
    sim.shutdown().await;
}

/// `bench-soak` in small: SIGKILL mid-level leaves every record whole and the partial report
/// of the levels before it loadable. (Its memory figures are the full benchmark's business.)
#[tokio::test(flavor = "multi_thread")]
async fn sigkill_mid_level_leaves_whole_records_and_a_loadable_report() {
    let dir = out_dir("soak-kill");
    let dir_arg = dir.to_str().unwrap();
    let args = [
        "bench-soak",
        "--streams",
        "20",
        "--minutes",
        "0.2",
        "--level-seconds",
        "2",
        "--sample-seconds",
        "3",
        "--baseline-seconds",
        "1000",
        "--output-tokens",
        "8",
        "--step-ms",
        "20",
        "--out-dir",
        dir_arg,
    ];
    let out = tokio::time::timeout(Duration::from_secs(120), infermeter_dev(&args))
        .await
        .expect("the soak ends");
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("SIGKILL at "), "{stdout}");
    assert!(stdout.contains("partial report loads"), "{stdout}");
    // Read back here too: every line a record, and the report's levels behind them.
    let report_path = dir.join("soak.json");
    let records = read_records(&report_path);
    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert!(matches!(report.status, RunStatus::Partial { .. }));
    let levels: Vec<_> = report.series.iter().flat_map(|s| &s.levels).collect();
    assert!(!levels.is_empty(), "{stdout}");
    // The records the report counted at its last write, and those of the level cut short.
    let counted = report.records.unwrap().count as usize;
    assert!(records.len() >= counted, "{} < {counted}", records.len());
    assert!(stdout.contains(&format!("{} lines, {} parse", records.len(), records.len())));
}
