//! Multi-turn sessions, prefix caching and trace replay against the simulator, with its own
//! account of what it served (`/infermeter/requests`) as the ground truth.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use infermeter_report::analysis::{findings, FindingsOptions};
use infermeter_report::{
    load_report, CacheUse, Distribution, LoadMode, Report, RequestRecord, RunStatus,
};
use infermeter_sim::{RunningSim, SimConfig};

use crate::common::*;

/// The simulator's cached tokens per response id.
async fn served(base_url: &str) -> HashMap<String, u64> {
    served_by_id(base_url, "cached_tokens").await
}

fn read_report(path: &Path) -> Report {
    load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Each measured record's cached tokens are what the simulator says it served from its cache.
fn assert_cached_as_served(records: &[RequestRecord], served: &HashMap<String, u64>) {
    for r in records.iter().filter(|r| !r.warmup) {
        let id = r.response_id.as_deref().expect("every response has an id");
        assert_eq!(
            r.cached_tokens.map(u64::from),
            Some(served[id]),
            "{:?} {id}",
            r.session
        );
    }
}

/// The fast test deployment with its prefix cache on, streaming `reasoning_tokens` first.
async fn caching_sim(reasoning_tokens: u32) -> RunningSim {
    start_sim(SimConfig {
        prefix_cache: true,
        reasoning_tokens,
        ..fast_sim_args()
    })
    .await
}

/// Runs the suite `body` (quietly) on `sim` into a fresh directory `name`; the report's path.
async fn run_suite(sim: &RunningSim, name: &str, body: &str) -> PathBuf {
    let dir = out_dir(name);
    let suite = small_suite(&dir, body);
    let report_path = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report_path,
        &["--quiet"],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    report_path
}

/// Median TTFT of the turns after the first at `users` with `cache` use, from the records: a
/// median, as a stall of the machine (two cores shared with builds) moves a mean.
fn later_turn_ttft(records: &[RequestRecord], cache: CacheUse, users: u32) -> f64 {
    let ttfts: Vec<f64> = records
        .iter()
        .filter(|r| !r.warmup && r.cache == Some(cache) && r.concurrency == users)
        .filter(|r| r.session.is_some_and(|s| s.turn >= 2))
        .map(|r| r.ttft_s.unwrap())
        .collect();
    Distribution::from_samples(&ttfts).unwrap().p50
}

/// Acceptance 1: the chat-sessions suite (shared 1K system prompt, 200-token turns, 5 turns of
/// 256 out, exponential think time, 1 to 64 users, `--quick`) on the simulator with its prefix
/// cache, in scaled time. Every turn records the cached tokens the simulator served, and later
/// turns come sooner with caching allowed than defeated, both in one report.
#[tokio::test(flavor = "multi_thread")]
async fn timed_chat_sessions_record_the_simulators_cache_and_caching_lowers_later_turns() {
    let _timing = timing_sensitive().await;
    let sim = start_sim(SimConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        prefix_cache: true,
        time_scale: 0.25,
        ..SimConfig::default()
    })
    .await;
    let dir = out_dir("chat-sessions");
    let report_path = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        "chat-sessions",
        &report_path,
        &["--quiet", "--quick", "--timeline-slice", "2"],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let report = read_report(&report_path);
    assert_eq!(report.status, RunStatus::Complete);
    assert_only_lag_warnings(&report);
    let shape = report.scenarios[0].session.as_ref().unwrap();
    assert_eq!((shape.system_prompt_tokens, shape.turns), (1024, 5));
    let caches: Vec<Option<CacheUse>> = report.series.iter().map(|s| s.cache).collect();
    assert_eq!(caches, [Some(CacheUse::Allowed), Some(CacheUse::Defeated)]);
    for s in &report.series {
        let users: Vec<u32> = s.levels.iter().map(|l| l.concurrency).collect();
        assert_eq!(users, [1, 8, 64]);
        for l in &s.levels {
            let sessions = l.sessions.as_ref().unwrap();
            assert_eq!(sessions.completed, u64::from(l.concurrency));
            assert_eq!(sessions.turns.len(), 5);
            assert!(sessions
                .turns
                .iter()
                .all(|t| t.ok == u64::from(l.concurrency)));
            let timeline = l.timeline.as_ref().unwrap();
            assert_eq!(timeline.slice_s, 2.0);
            let completed: u64 = timeline.slices.iter().map(|s| s.completed).sum();
            assert_eq!(completed, l.requests.ok);
        }
    }

    let records = read_records(&report_path);
    let measured: Vec<&RequestRecord> = records.iter().filter(|r| !r.warmup).collect();
    assert_eq!(measured.len(), 2 * (1 + 8 + 64) * 5);
    assert_cached_as_served(&records, &served(&sim.base_url()).await);
    for r in &measured {
        let turn = r.session.unwrap().turn;
        let cached = r.cached_tokens.unwrap();
        match r.cache.unwrap() {
            // Turns after the first carry the previous turn whole: at least its first turn's
            // 1,237 prompt tokens (1,224 and the chat template) in whole 16-token blocks.
            CacheUse::Allowed if turn >= 2 => assert!(cached >= 1232, "{cached} at turn {turn}"),
            CacheUse::Allowed => {}
            CacheUse::Defeated => assert_eq!(cached, 0, "turn {turn}"),
        }
    }
    for users in [8, 64] {
        let (allowed, defeated) = (
            later_turn_ttft(&records, CacheUse::Allowed, users),
            later_turn_ttft(&records, CacheUse::Defeated, users),
        );
        eprintln!("{users} users, later turns' TTFT median: {allowed:.4} s caching allowed, {defeated:.4} s defeated");
        assert!(
            allowed < defeated,
            "{users} users: {allowed} allowed, {defeated} defeated"
        );
    }

    let f = findings(&report, &FindingsOptions::default());
    let s = &f.sessions.scenarios[0];
    assert!(s
        .caching_effect
        .iter()
        .any(|e| e.load == 64 && e.speedup > 1.0));
    let allowed = s.series(LoadMode::Users, Some(CacheUse::Allowed)).unwrap();
    assert!(allowed.levels[2].cache_hit_ratio.unwrap() > 0.5);
    check_json_schema(&report_path);
    let out = infermeter(&["summary", report_path.to_str().unwrap()], &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("Turn 5 TTFT at 64 users"), "{summary}");
    assert!(summary.contains("simultaneous users"), "{summary}");
    sim.shutdown().await;
}

/// Acceptance 3: the bundled Mooncake trace, replayed at 4× on the simulator: every request
/// leaves within a millisecond of its schedule (p99), is billed within 2% of its line's input
/// length, and hits the cache for exactly the blocks its `hash_ids` share with earlier lines.
#[tokio::test(flavor = "multi_thread")]
async fn timed_bundled_trace_replays_on_schedule_with_its_lengths_and_shared_blocks() {
    let _timing = timing_sensitive().await;
    let sim = caching_sim(0).await;
    let dir = out_dir("trace-replay");
    let report_path = dir.join("report.json");
    let trace = manifest_dir().join("../data/traces/sample-mooncake.jsonl");
    let args: Vec<String> = [
        "run",
        "--base-url",
        &sim.base_url(),
        "--trace",
        trace.to_str().unwrap(),
        "--trace-speed",
        "4",
        "--out",
        report_path.to_str().unwrap(),
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let report = read_report(&report_path);
    let scenario = &report.scenarios[0];
    let source = scenario.trace.as_ref().unwrap();
    assert_eq!((source.format.as_str(), source.requests), ("mooncake", 240));
    let level = &report.series[0].levels[0];
    assert_eq!(report.series[0].mode, LoadMode::Trace);
    assert_eq!(level.trace.unwrap().speed, 4.0);
    assert_eq!(level.requests.ok, 240);

    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let records: Vec<RequestRecord> = read_records(&report_path)
        .into_iter()
        .filter(|r| !r.warmup)
        .collect();
    assert_eq!(records.len(), lines.len());
    // The level's own figure, from the records: sent minus scheduled.
    let lag_p99 = level.client.as_ref().unwrap().scheduling_lag_p99_s;
    let lags: Vec<f64> = records.iter().map(|r| r.sent_s - r.scheduled_s).collect();
    assert_eq!(
        Some(lag_p99),
        Distribution::from_samples(&lags).and_then(|d| d.p99)
    );
    assert!(lag_p99 <= 0.001, "scheduled vs sent p99 {lag_p99} s");
    let ids = |l: &serde_json::Value| -> Vec<u64> {
        l["hash_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    for r in &records {
        let i = r.index as usize;
        let line = &lines[i];
        let asked = line["input_length"].as_f64().unwrap();
        let billed = f64::from(r.input_tokens.unwrap());
        assert!(
            (billed - asked).abs() <= asked * 0.02,
            "line {i}: {billed} for {asked}"
        );
        // The longest run of leading blocks any earlier line had too.
        let mine = ids(line);
        let shared = lines[..i]
            .iter()
            .map(|earlier| {
                mine.iter()
                    .zip(ids(earlier))
                    .take_while(|(a, b)| **a == *b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        assert_eq!(r.cached_tokens, Some(512 * shared as u32), "line {i}");
    }
    assert_cached_as_served(&records, &served(&sim.base_url()).await);
    let measured = level.prompt_cache.unwrap().hit_ratio().unwrap();
    assert!(
        (measured - source.shared_block_ratio).abs() < 0.02,
        "{measured} vs {}",
        source.shared_block_ratio
    );
    check_json_schema(&report_path);

    // The generic format: sessions' later turns reuse their earlier context.
    let sessions = manifest_dir().join("../data/traces/sample-sessions.jsonl");
    let report_path = dir.join("sessions.json");
    let mut args = args;
    args[4] = sessions.to_str().unwrap().into();
    args[6] = "8".into();
    args[8] = report_path.to_str().unwrap().into();
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let records: Vec<RequestRecord> = read_records(&report_path)
        .into_iter()
        .filter(|r| !r.warmup)
        .collect();
    assert_eq!(records.len(), 48);
    for r in &records {
        let turn = r.session.unwrap().turn;
        let cached = r.cached_tokens.unwrap();
        assert_eq!(turn == 1, cached == 0, "turn {turn} cached {cached}");
    }
    sim.shutdown().await;
}

/// Sessions arriving open-loop on a reasoning model: each turn's first answer token comes
/// after its reasoning, the reasoning tokens are counted apart, and the level says how many
/// sessions were active at once and at what rate they arrived.
#[tokio::test(flavor = "multi_thread")]
async fn timed_session_arrivals_on_a_reasoning_model() {
    // Its open-loop sends share the two cores with a trace replay's dispatcher otherwise.
    let _timing = timing_sensitive().await;
    let sim = caching_sim(12).await;
    let report_path = run_suite(
        &sim,
        "session-arrivals",
        "name = 'arrivals'\nwarmup = 0\n\
         [[session]]\nid = 'agent'\nname = 'Agent'\nfirst_turn_tokens = 300\nturn_tokens = 60\n\
         turns = 3\noutput_tokens = 40\nthink_time = { distribution = 'fixed', seconds = 0.05 }\n\
         [sessions]\nrates = [4.0, 8.0]\nduration_s = 1.5\narrivals = 'constant'\ncache = ['allowed']\n",
    )
    .await;
    let report = read_report(&report_path);
    let series = &report.series[0];
    assert_eq!(
        (series.mode, series.cache),
        (LoadMode::Sessions, Some(CacheUse::Allowed))
    );
    let rates: Vec<Option<f64>> = series
        .levels
        .iter()
        .map(|l| l.sessions.as_ref().unwrap().session_rate)
        .collect();
    assert_eq!(rates, [Some(4.0), Some(8.0)]);
    assert!(series.levels[1].concurrency > series.levels[0].concurrency);
    for l in &series.levels {
        let sessions = l.sessions.as_ref().unwrap();
        // 1.5 s of constant arrivals at 4/s and 8/s.
        assert_eq!(
            sessions.started,
            (1.5 * l.sessions.as_ref().unwrap().session_rate.unwrap()) as u64
        );
        assert_eq!(sessions.completed, sessions.started);
        let first_answer = l.metrics.first_answer_s.unwrap();
        assert!(first_answer.mean > l.metrics.ttft_s.unwrap().mean);
        assert_eq!(l.metrics.reasoning_tokens.unwrap().mean, 12.0);
    }
    for r in read_records(&report_path) {
        assert_eq!(r.reasoning_tokens, Some(12));
        // One read can carry the last reasoning event and the first answer event together.
        assert!(r.first_answer_s.unwrap() >= r.ttft_s.unwrap());
        assert_eq!(r.output_tokens, Some(40));
    }
    sim.shutdown().await;
}

/// Single-request scenarios stay uncached on an engine with a prefix cache (vLLM's default):
/// no request shares a prefix with another, in its level or any earlier one.
#[tokio::test(flavor = "multi_thread")]
async fn single_prompts_never_meet_a_prefix_cache() {
    let sim = caching_sim(0).await;
    let report_path = run_suite(
        &sim,
        "single-prompts-uncached",
        "name = 'uncached'\nwarmup = 1\n\
         [[scenario]]\nid = 'a'\nname = 'A'\ninput_tokens = 600\noutput_tokens = 8\n\
         [peak]\nlevels = [1, 2]\nrequests_per_slot = 2\nmin_seconds = 0\n[burst]\nlevels = [1, 2]\n",
    )
    .await;
    let records = read_records(&report_path);
    assert!(records.len() > 10);
    assert!(
        records.iter().all(|r| r.cached_tokens == Some(0)),
        "{:?}",
        records.iter().map(|r| r.cached_tokens).collect::<Vec<_>>()
    );
    assert_only_lag_warnings(&read_report(&report_path));
    sim.shutdown().await;
}

/// A suite that runs a request sweep beside a trace replay asks each of its levels its own
/// lengths: the sweep's requests were once judged by the trace's lines and warned about.
#[tokio::test(flavor = "multi_thread")]
async fn a_sweep_beside_a_trace_is_judged_by_its_own_lengths() {
    let sim = caching_sim(0).await;
    let trace = manifest_dir().join("../data/traces/sample-mooncake.jsonl");
    let report_path = run_suite(
        &sim,
        "sweep-beside-trace",
        &format!(
            "name = 'mixed'\nwarmup = 1\n\
             [[scenario]]\nid = 'a'\nname = 'A'\ninput_tokens = 600\noutput_tokens = 8\n\
             [peak]\nlevels = [1, 2]\nrequests_per_slot = 2\nmin_seconds = 0\n\
             [trace]\nfile = {:?}\nspeeds = [8.0]\n",
            trace.to_str().unwrap()
        ),
    )
    .await;
    let report = read_report(&report_path);
    assert!(
        report.series.iter().any(|s| s.mode == LoadMode::Trace),
        "the trace was replayed"
    );
    assert_only_lag_warnings(&report);
    sim.shutdown().await;
}

/// CSV arrival traces (#46): a BurstGPT file, told by its header whatever its name, replays its
/// rows at their times (over the speed) with their lengths, its failed row (0 response tokens)
/// left out; its rows name no blocks, so the simulator caches nothing. A malformed one is
/// refused, naming its line, before the simulator serves anything.
#[tokio::test(flavor = "multi_thread")]
async fn timed_csv_arrival_traces_replay_their_rows_and_malformed_ones_send_nothing() {
    let _timing = timing_sensitive().await;
    let sim = caching_sim(0).await;
    let dir = out_dir("csv-trace");
    // (seconds, request tokens, response tokens)
    let rows = [
        (0.0, 600, 20),
        (0.25, 900, 0),
        (0.5, 300, 16),
        (0.5, 1300, 24),
        (1.2, 64, 8),
    ];
    let mut csv =
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n".to_string();
    for (t, i, o) in rows {
        csv += &format!("{t},ChatGPT,{i},{o},{},Conversation log\n", i + o);
    }
    let trace = dir.join("burst.log");
    std::fs::write(&trace, &csv).unwrap();
    let report_path = dir.join("report.json");
    let args = |trace: &Path, out: &Path| -> Vec<String> {
        [
            "run",
            "--base-url",
            &sim.base_url(),
            "--trace",
            trace.to_str().unwrap(),
            "--trace-speed",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let out = infermeter(&args(&trace, &report_path), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let report = read_report(&report_path);
    let scenario = &report.scenarios[0];
    let source = scenario.trace.as_ref().unwrap();
    assert_eq!((source.format.as_str(), source.requests), ("burstgpt", 4));
    assert!(
        scenario
            .description
            .contains("1 row of no input or no output tokens"),
        "{}",
        scenario.description
    );
    let kept: Vec<(f64, u32, u32)> = rows.into_iter().filter(|r| r.2 > 0).collect();
    let mut records: Vec<RequestRecord> = read_records(&report_path)
        .into_iter()
        .filter(|r| !r.warmup)
        .collect();
    records.sort_by_key(|r| r.index);
    assert_eq!(records.len(), kept.len());
    let start = records[0].scheduled_s;
    for (r, (t, input, output)) in records.iter().zip(&kept) {
        let billed = f64::from(r.input_tokens.unwrap());
        let asked = f64::from(*input);
        assert!(
            (billed - asked).abs() <= asked * 0.02,
            "{billed} for {asked}"
        );
        assert_eq!(r.output_tokens, Some(*output));
        assert!(((r.scheduled_s - start) - t / 2.0).abs() < 1e-3, "{r:?}");
        assert_eq!(r.cached_tokens, Some(0), "rows share nothing");
    }
    assert_cached_as_served(&records, &served(&sim.base_url()).await);

    let before = served(&sim.base_url()).await.len();
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "Timestamp,Request tokens,Response tokens\n1,10,3\n2,-4,3\n",
    )
    .unwrap();
    let out = infermeter(&args(&bad, &dir.join("bad.json")), &[]).await;
    let said = text(&out);
    assert!(!out.status.success());
    assert!(
        said.contains("bad.csv") && said.contains("line 3") && said.contains("negative"),
        "{said}"
    );
    assert_eq!(served(&sim.base_url()).await.len(), before, "nothing sent");
}
