//! The collector measures as it did when this test was written (issue #32 moved it into layers):
//! a small suite of every load mode, run on the simulator with fixed seeds, gives the report
//! recorded in `tests/data/unchanged/fingerprint.json` (written by the collector before the
//! move). Timestamps and the figures a clock makes are set aside: what is compared exactly is
//! everything a run decides (series, levels, loads, request counts and outcomes, token lengths,
//! sessions and turns, per-request columns' statuses and lengths, metadata, warnings); latencies
//! and speeds are compared by their medians, within a margin for a busy machine.
//!
//! `INFERMETER_WRITE_FINGERPRINT=1 cargo test -p infermeter --test cli unchanged` writes the
//! fingerprint anew (only where a change of behaviour is meant).

use std::path::{Path, PathBuf};

use infermeter_sim::SimConfig;
use serde_json::{json, Map, Value};

use crate::common::*;

/// Every mode: peak, burst and rate of a single-request scenario, users (both cache uses) and
/// session arrivals of a conversation, and the bundled sessions trace at 10× speed.
fn suite(trace: &Path) -> String {
    format!(
        r#"
name = "unchanged"
warmup = 1
prompt_caching = false

[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 300
output_tokens = 24

[peak]
levels = [1, 3]
requests_per_slot = 2
min_seconds = 0.0

[burst]
levels = [4]

[rate]
rates = [8.0]
duration_s = 1.0
arrivals = "poisson"
seed = 7

[[session]]
id = "conv"
name = "Conversation"
system_prompt_tokens = 128
first_turn_tokens = 64
turn_tokens = 32
turns = 3
output_tokens = 16
think_time = {{ distribution = "exponential", mean_s = 0.05 }}

[users]
levels = [1, 3]
sessions_per_user = 2
seed = 11

[sessions]
rates = [4.0]
duration_s = 1.0
arrivals = "constant"
cache = ["allowed"]
seed = 5

[trace]
file = {trace:?}
speeds = [10.0]
"#
    )
}

fn fingerprint_path() -> PathBuf {
    manifest_dir().join("tests/data/unchanged/fingerprint.json")
}

/// Keeps the keys of `value` (an object) that `keep` names.
fn only(value: &Value, keep: &[&str]) -> Value {
    let Some(object) = value.as_object() else {
        return value.clone();
    };
    let kept: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| keep.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(kept)
}

/// A distribution's count and the figures of a quantity every request asks exactly (tokens).
fn lengths(d: &Value) -> Value {
    only(d, &["count", "min", "max", "mean"])
}

/// What a run decides about a level, without what the clock decides.
fn level_fingerprint(mode: &str, level: &Value) -> Value {
    let closed = matches!(mode, "peak" | "burst" | "users");
    let metrics = &level["metrics"];
    let mut out = json!({
        "request_rate": level["request_rate"],
        "session_rate": level["sessions"]["session_rate"],
        "trace": level["trace"],
        "input_tokens": lengths(&metrics["input_tokens"]),
        "output_tokens": lengths(&metrics["output_tokens"]),
        "has_timeline": level["timeline"].is_object(),
        "has_client": level["client"].is_object(),
        "has_per_request": level["per_request"].is_object(),
        "trials": level["trials"],
    });
    // A peak level runs until enough requests finished: how many more is the clock's.
    if mode != "peak" {
        out["requests"] = level["requests"].clone();
        let columns = &level["per_request"];
        out["per_request_status"] = columns["status"].clone();
        out["per_request_output_tokens"] = columns["output_tokens"].clone();
        if let Some(sessions) = level["sessions"].as_object() {
            let turns: Vec<Value> = sessions["turns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    json!({
                        "turn": t["turn"], "ok": t["ok"], "failed": t["failed"],
                        "input_tokens": lengths(&t["input_tokens"]),
                    })
                })
                .collect();
            out["sessions"] = json!({
                "started": sessions["started"],
                "completed": sessions["completed"],
                "turns": turns,
            });
        }
    } else {
        out["failed"] = json!(
            level["requests"]["errored"].as_u64().unwrap()
                + level["requests"]["incomplete"].as_u64().unwrap()
        );
    }
    // Open-loop levels are keyed by the most requests seen in flight: the clock's too.
    if closed {
        out["concurrency"] = level["concurrency"].clone();
    }
    out
}

/// The report without timestamps and clock-made figures (see the module doc).
fn fingerprint(report: &Value) -> Value {
    let mut metadata = report["metadata"].clone();
    let meta = metadata.as_object_mut().unwrap();
    for key in ["started_at", "finished_at", "collector_version"] {
        meta.remove(key);
    }
    let series: Vec<Value> = report["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mode = s["mode"].as_str().unwrap();
            let levels: Vec<Value> = s["levels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| level_fingerprint(mode, l))
                .collect();
            json!({
                "scenario": s["scenario"], "mode": s["mode"], "cache": s["cache"],
                "arrivals": s["arrivals"], "levels": levels,
            })
        })
        .collect();
    // A busy machine's client lag is the clock's, as are its cache's race of concurrent users.
    let warnings: Vec<&Value> = (report["warnings"].as_array().into_iter().flatten())
        .filter(|w| !w.as_str().unwrap().contains("sent requests late"))
        .collect();
    json!({
        // The format's version is a declared change (#32 adds an optional field: 1.3.0); the
        // fields are compared.
        "status": report["status"],
        "metadata": metadata,
        "measurement": report["measurement"],
        "scenarios": report["scenarios"],
        "series": series,
        "warnings": warnings,
        "sharding": report["sharding"],
        "records_file": report["records"]["path"],
    })
}

/// Median TTFT and per-user decode speed of every level, in series order.
fn medians(report: &Value) -> Vec<(String, f64, f64)> {
    let mut out = Vec::new();
    for s in report["series"].as_array().unwrap() {
        // Open-loop levels are keyed by what they saw in flight: named by their place.
        for (i, l) in s["levels"].as_array().unwrap().iter().enumerate() {
            let name = format!("{} {} {} #{}", s["scenario"], s["mode"], s["cache"], i + 1);
            let p50 = |m: &str| l["metrics"][m]["p50"].as_f64().unwrap_or(0.0);
            out.push((name, p50("ttft_s"), p50("decode_tok_s")));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn timed_a_small_suite_of_every_mode_measures_as_before_the_move() {
    let _timing = timing_sensitive().await;
    // The simulator's H100 in half time: its engine steps, not the client, make the timings.
    let sim = start_sim(SimConfig {
        prefix_cache: true,
        seed: 3,
        time_scale: 0.5,
        ..h100_sim_args()
    })
    .await;
    let dir = out_dir("unchanged");
    let trace = manifest_dir().join("../data/traces/sample-sessions.jsonl");
    let suite = small_suite(&dir, &suite(&trace.canonicalize().unwrap()));
    let report_path = dir.join("report.json");
    let extra = ["--quiet", "--title", "unchanged", "--timeline-slice", "0.5"];
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report_path,
        &extra,
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let server = sim.base_url().trim_end_matches("/v1").to_string();
    sim.shutdown().await;
    check_json_schema(&report_path);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap())
        .expect("the report is JSON");
    let mut now = fingerprint(&report);
    // The suite file's folder and the simulator's port differ from run to run.
    let trace_file = trace.canonicalize().unwrap().display().to_string();
    let text = serde_json::to_string_pretty(&now)
        .unwrap()
        .replace(&trace_file, "TRACE")
        .replace(&server, "SIMULATOR");
    now = serde_json::from_str(&text).unwrap();
    let timing: Vec<Value> = medians(&report)
        .into_iter()
        .map(|(name, ttft, decode)| json!({ "level": name, "ttft_p50_s": ttft, "decode_p50_tok_s": decode }))
        .collect();
    if std::env::var_os("INFERMETER_WRITE_FINGERPRINT").is_some() {
        let written = json!({ "fingerprint": now, "timing": timing });
        std::fs::create_dir_all(fingerprint_path().parent().unwrap()).unwrap();
        std::fs::write(
            fingerprint_path(),
            serde_json::to_string_pretty(&written).unwrap() + "\n",
        )
        .unwrap();
        eprintln!("wrote {}", fingerprint_path().display());
        return;
    }
    let mut before: Value =
        serde_json::from_str(&std::fs::read_to_string(fingerprint_path()).unwrap()).unwrap();
    let recorded = before["fingerprint"].as_object_mut().unwrap();
    recorded.remove("schema_version");
    let expected = serde_json::to_string_pretty(&before["fingerprint"]).unwrap();
    let got = serde_json::to_string_pretty(&now).unwrap();
    if expected != got {
        let first_difference = expected
            .lines()
            .zip(got.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map_or(0, |(i, _)| i);
        let context = |t: &str| {
            let lines: Vec<&str> = t.lines().collect();
            let from = first_difference.saturating_sub(8);
            lines[from..(first_difference + 8).min(lines.len())].join("\n")
        };
        panic!(
            "the report differs from the one recorded before the move, from line {}:\n--- before\n{}\n--- now\n{}",
            first_difference + 1,
            context(&expected),
            context(&got)
        );
    }
    // Latencies and speeds: each level's medians within half their recorded value and a few
    // milliseconds (a shared core moves them by a step or two).
    let before_timing = before["timing"].as_array().unwrap();
    assert_eq!(before_timing.len(), timing.len());
    for (b, n) in before_timing.iter().zip(&timing) {
        assert_eq!(b["level"], n["level"]);
        let level = &n["level"];
        let close = |key: &str, slack: f64| {
            let (b, n) = (b[key].as_f64().unwrap(), n[key].as_f64().unwrap());
            assert!(
                (b - n).abs() <= b.abs() * 0.5 + slack,
                "{level}: {key} was {b}, now {n}"
            );
        };
        close("ttft_p50_s", 0.01);
        close("decode_p50_tok_s", 50.0);
    }
}
