//! Sharded runs (issue #27): three shard processes against one simulator on a shared start
//! time, merged into one report that matches a single process at the same total load; and
//! `merge` refusing shards that are not one run's.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use infermeter_report::{load_report, Level, LoadMode, Report, RunStatus};

use crate::common::*;

/// Peak 2 (shares 1/1/0: a shard with nothing to send) and 7 (3/2/2), burst 8 (3/3/2), a
/// constant-rate level dealt out in turn.
const SUITE: &str = r#"
name = "shards"
warmup = 1
[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 256
output_tokens = 32
[peak]
levels = [2, 7]
requests_per_slot = 3
min_seconds = 3.0
[burst]
levels = [8]
[rate]
rates = [12.0]
duration_s = 2.0
arrivals = "constant"
"#;

const SHARDS: u32 = 3;

fn read(path: &Path) -> Report {
    load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn levels(report: &Report, mode: LoadMode) -> Vec<&Level> {
    report
        .series
        .iter()
        .filter(|s| s.mode == mode)
        .flat_map(|s| &s.levels)
        .collect()
}

/// `merge FILES -o OUT`, its output.
async fn merge(files: &[PathBuf], out: &Path) -> std::process::Output {
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().map(|f| f.to_str().unwrap().to_string()));
    args.extend(["-o".into(), out.to_str().unwrap().into()]);
    infermeter(&args, &[]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn three_shards_merge_into_the_single_run() {
    let _timing = timing_sensitive().await;
    // The default H100 profile: simulated time, not the client, makes the figures.
    let sim = start_sim(h100_sim_args()).await;
    let dir = out_dir("shards");
    let suite = small_suite(&dir, SUITE);
    let suite = suite.to_str().unwrap();
    // Late enough for three debug builds to start and prepare on a busy two-core machine.
    let start = SystemTime::now() + Duration::from_secs(6);
    let start = chrono::DateTime::<chrono::Utc>::from(start).to_rfc3339();
    let shard_files: Vec<PathBuf> = (0..SHARDS)
        .map(|i| dir.join(format!("shard-{i}.json")))
        .collect();
    let runs = shard_files.iter().enumerate().map(|(i, out)| {
        let shard = format!("{i}/{SHARDS}");
        let extra = [
            "--quiet",
            "--shard",
            &shard,
            "--start-at",
            &start,
            "--level-seconds",
            "3",
            "--drain-seconds",
            "2",
        ];
        let args = run_args(&sim.base_url(), suite, out, &extra);
        async move { infermeter(&args, &[]).await }
    });
    for out in futures::future::join_all(runs).await {
        assert!(out.status.success(), "{}", text(&out));
    }
    let merged_path = dir.join("merged.json");
    let out = merge(&shard_files, &merged_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let merged = read(&merged_path);
    check_json_schema(&merged_path);
    assert_eq!(merged.status, RunStatus::Complete);
    // The shards entered and left each level together, on clocks that agree. (A busy machine
    // may add warnings of its own, such as a client sending late.)
    let misaligned = ["windows differ", "clocks differ", "steady state together"];
    for w in &merged.warnings {
        eprintln!("merge warning: {w}");
        assert!(!misaligned.iter().any(|m| w.contains(m)), "{w}");
    }
    let sharding = merged.sharding.as_ref().unwrap();
    let indices: Vec<u32> = sharding.shards.iter().map(|s| s.index).collect();
    assert_eq!(indices, [0, 1, 2]);
    assert!(sharding
        .shards
        .iter()
        .all(|s| s.clock.server_offset_s.is_some()));
    // The shares: peak 7 is 3 + 2 + 2, and the merged level is the total.
    let peak7 = sharding.shards.iter().map(|s| s.levels[1].share.unwrap());
    assert_eq!(peak7.collect::<Vec<_>>(), [3, 2, 2]);
    let concurrency =
        |r: &Report, mode| -> Vec<u32> { levels(r, mode).iter().map(|l| l.concurrency).collect() };
    assert_eq!(concurrency(&merged, LoadMode::Peak), [2, 7]);
    assert_eq!(concurrency(&merged, LoadMode::Burst), [8]);
    assert_eq!(levels(&merged, LoadMode::Burst)[0].requests.ok, 8);
    // Nothing measured is lost: every shard's records, each saying its shard.
    let records = read_records(&merged_path);
    let shard_records: usize = shard_files.iter().map(|f| read_records(f).len()).sum();
    assert_eq!(records.len(), shard_records);
    for i in 0..SHARDS {
        assert!(records.iter().any(|r| r.shard == Some(i)), "shard {i}");
    }

    let single_path = dir.join("single.json");
    let args = run_args(&sim.base_url(), suite, &single_path, &["--quiet"]);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let single = read(&single_path);
    // The rate level's arrivals, dealt out in turn: together the shards sent the single run's
    // schedule, each a third of it.
    let rate_sent = |records: &[infermeter_report::RequestRecord], shard: Option<u32>| {
        let rate = records.iter().filter(|r| r.mode == LoadMode::Rate);
        rate.filter(|r| shard.is_none() || r.shard == shard).count()
    };
    let single_rate = rate_sent(&read_records(&single_path), None);
    assert_eq!(rate_sent(&records, None), single_rate);
    for i in 0..SHARDS {
        let sent = rate_sent(&records, Some(i));
        assert!(
            sent.abs_diff(single_rate / 3) <= 1,
            "shard {i}: {sent} of {single_rate}"
        );
    }
    for mode in [LoadMode::Peak, LoadMode::Burst, LoadMode::Rate] {
        for (m, s) in levels(&merged, mode).iter().zip(levels(&single, mode)) {
            let (a, b) = (&m.metrics, &s.metrics);
            let figures = [
                ("ttft", a.ttft_s, b.ttft_s),
                ("itl", a.itl_s, b.itl_s),
                ("e2e", a.e2e_s, b.e2e_s),
                ("decode", a.decode_tok_s, b.decode_tok_s),
            ];
            for (name, merged_figure, single_figure) in figures {
                // A burst's TTFT hangs on which engine step each of the simultaneous arrivals
                // lands in, a matter of microseconds: two single runs differ by 25% and more
                // (0.039 s and 0.051 s here). Its E2E, which holds the TTFT, is compared.
                if mode == LoadMode::Burst && name == "ttft" {
                    continue;
                }
                let (x, y) = (merged_figure.unwrap().p50, single_figure.unwrap().p50);
                eprintln!(
                    "{mode:?} @{}: {name} median {x:.5} merged, {y:.5} single",
                    s.concurrency
                );
                // A TTFT of a few engine steps moves by a whole step with the arrival's place
                // in the step (0.036 s and 0.041 s at peak 7, one 6.5 ms step apart, on a
                // loaded machine): within 10% or one step, the single run's median ITL.
                let step = if name == "ttft" {
                    b.itl_s.unwrap().p50
                } else {
                    0.0
                };
                assert!(
                    (x - y).abs() <= (0.10 * y).max(step),
                    "{mode:?} @{}: {name} median {x} merged vs {y} single",
                    s.concurrency
                );
            }
        }
    }
    sim.shutdown().await;
    refusals(&dir, &shard_files, &single_path).await;
    disagreements(&dir, &shard_files).await;
}

/// Shard 2 again, its clock 5 s ahead of the others' and its peak @7 begun 2 s late: the merge
/// goes through and warns of both.
async fn disagreements(dir: &Path, shards: &[PathBuf]) {
    let skewed = dir.join("skewed");
    std::fs::create_dir_all(&skewed).unwrap();
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&shards[2]).unwrap()).unwrap();
    let part = &mut report["sharding"]["shards"][0];
    part["clock"]["server_offset_s"] = 5.0.into();
    part["levels"][1]["trials"][0]["late_s"] = 2.0.into();
    let file = skewed.join("shard-2.json");
    std::fs::write(&file, report.to_string()).unwrap();
    std::fs::copy(records_file(&shards[2]), records_file(&file)).unwrap();
    let out_path = skewed.join("merged.json");
    let out = merge(&[shards[0].clone(), shards[1].clone(), file], &out_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let warnings = read(&out_path).warnings;
    let has = |needle: &str| warnings.iter().any(|w| w.contains(needle));
    assert!(
        has("shards 0 and 2: their clocks differ by at least"),
        "{warnings:?}"
    );
    assert!(
        has("chat peak @7 (trial 0): the shards' windows differ by 2."),
        "{warnings:?}"
    );
}

/// `merge` refuses what is not one run's shards, naming the mismatch, and writes nothing.
async fn refusals(dir: &Path, shards: &[PathBuf], single: &Path) {
    let out_path = dir.join("refused.json");
    // Shard 1 of another run: copied (with its records) into `folder`, one value changed.
    let altered = |folder: &str, from: &str, to: &str| {
        let folder = dir.join(folder);
        std::fs::create_dir_all(&folder).unwrap();
        let shard1 = std::fs::read_to_string(&shards[1]).unwrap();
        assert!(shard1.contains(from), "{from} not in shard 1");
        std::fs::write(folder.join("shard-1.json"), shard1.replace(from, to)).unwrap();
        std::fs::copy(
            records_file(&shards[1]),
            folder.join("shard-1.json.records.jsonl"),
        )
        .unwrap();
        vec![
            shards[0].clone(),
            folder.join("shard-1.json"),
            shards[2].clone(),
        ]
    };
    let model = read(&shards[1]).metadata.model.id;
    let other_model = altered("other", &format!("\"{model}\""), "\"other/model\"");
    let never = altered(
        "never",
        "\"connection_reuse\": \"pooled\"",
        "\"connection_reuse\": \"never\"",
    );
    let cases: [(Vec<PathBuf>, &[&str]); 5] = [
        (
            other_model,
            &[
                "model",
                "metadata.model.id",
                "other/model",
                &model,
                "shard-0.json",
                "other/shard-1.json",
            ],
        ),
        (
            never,
            &[
                "connection reuse (measurement.connection_reuse)",
                "\"pooled\"",
                "never/shard-1.json has \"never\"",
            ],
        ),
        (
            shards[..2].to_vec(),
            &["shard(s) 2 of 3 missing", "given: 0, 1"],
        ),
        (
            vec![
                shards[0].clone(),
                shards[1].clone(),
                shards[1].clone(),
                shards[2].clone(),
            ],
            &["shard 1/3 appears twice"],
        ),
        (
            vec![shards[0].clone(), single.to_path_buf()],
            &["single.json is not a shard's report", "--shard"],
        ),
    ];
    for (files, expected) in cases {
        let out = merge(&files, &out_path).await;
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        for e in expected {
            assert!(text(&out).contains(e), "{e:?} not in {}", text(&out));
        }
        assert!(!out_path.exists());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn shard_options_are_checked_before_measuring() {
    let dir = out_dir("shard-options");
    let report = dir.join("report.json");
    let cases: [(&str, &[&str], i32, &str); 4] = [
        (
            "four-scenario",
            &["--shard", "3/3", "--start-at", "2030-01-01T00:00:00Z"],
            2,
            "numbered from 0 to 2",
        ),
        ("four-scenario", &["--shard", "0/3"], 2, "--start-at"),
        (
            "four-scenario",
            &["--shard", "0/3", "--start-at", "2020-01-01T00:00:00Z"],
            1,
            "that time passed",
        ),
        // A session's turns must stay on one shard: not yet dealt out, so refused.
        (
            "chat-sessions",
            &["--shard", "0/3", "--start-at", "2030-01-01T00:00:00Z"],
            1,
            "--shard cannot run users levels",
        ),
    ];
    for (suite, extra, code, expected) in cases {
        let args = run_args("http://127.0.0.1:9/v1", suite, &report, extra);
        let out = infermeter(&args, &[]).await;
        assert_eq!(out.status.code(), Some(code), "{}", text(&out));
        assert!(text(&out).contains(expected), "{}", text(&out));
        assert!(!report.exists());
    }
}
