//! Agentic jobs arriving at a rate (`[agents] rates`) against the simulator: each arrival plays
//! a whole job on the schedule, the jobs overlap, and every per-level figure the report and
//! `infermeter summary` state (jobs in flight, jobs per hour, per user, the capacity in job
//! rate) is recomputed here from the raw records; sharded, the arrivals are dealt out and merge
//! back whole.

use std::collections::{BTreeMap, HashMap, HashSet};

use infermeter_report::{Arrivals, Level, LoadMode, Report, RequestRecord};
use serde_json::Value;

use crate::agents::{fixture, sim_64};
use crate::common::*;

/// The fixture's calls per job.
const CALLS: u32 = 10;

/// An `[agents]` section over the fixture at job `rates`, arriving evenly for 1.5 s.
fn section(rates: &str) -> String {
    format!(
        "name = \"agents\"\nwarmup = 0\n[agents]\nsource = {:?}\nrates = {rates}\narrivals = \"constant\"\nduration_s = 1.5\nspeed = 10.0\n",
        fixture()
    )
}

/// Each job's first send and last reply (seconds from the level's start), from its records.
fn job_spans(records: &[&RequestRecord]) -> BTreeMap<u64, (f64, f64)> {
    let mut spans: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for r in records {
        let end = r.sent_s + r.e2e_s.expect("every call completed");
        let span = (spans.entry(r.agent.unwrap().job)).or_insert((f64::INFINITY, 0.0));
        *span = (span.0.min(r.sent_s), span.1.max(end));
    }
    spans
}

/// The most jobs in flight at once: of the spans' starts, the most spans holding one.
fn most_in_flight(spans: &BTreeMap<u64, (f64, f64)>) -> u32 {
    (spans.values())
        .map(|&(t, _)| spans.values().filter(|(s, e)| *s <= t && t < *e).count() as u32)
        .max()
        .unwrap_or(0)
}

/// Acceptance: jobs at 2 and 4 per second, arriving evenly for 1.5 s. Each arrival `i` is job
/// `i`, its first call scheduled at `i / rate` and sent then; the level's load is the most jobs
/// the records show in flight at once; its jobs per hour, per user (the jobs' summed wall time
/// over the level's time being its users, Little's law) and the capacity in job rate are what
/// the records say, in the report, the summary's JSON and its text.
#[tokio::test(flavor = "multi_thread")]
async fn timed_jobs_arriving_at_a_rate_overlap_and_are_reported_per_rate() {
    let _timing = timing_sensitive().await;
    let (sim, _profiles) = sim_64().await;
    let dir = out_dir("agents-job-rate");
    let suite = small_suite(&dir, &section("[2.0, 4.0]"));
    let path = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &path,
        &["--quiet"],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    check_json_schema(&path);
    let report: Report =
        infermeter_report::load_report(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let records = read_records(&path);
    let [series] = &report.series[..] else {
        panic!("one series: {:?}", report.series.len())
    };
    assert_eq!(
        (series.mode, series.arrivals),
        (LoadMode::JobRate, Some(Arrivals::Constant))
    );
    let summary = infermeter(&["summary", path.to_str().unwrap(), "--json"], &[]).await;
    let printed: Value = serde_json::from_slice(&summary.stdout).unwrap();
    let printed = &printed["reports"][0]["findings"]["agents"][0];
    let mut previous: Option<u32> = None;
    for (n, (level, rate)) in series.levels.iter().zip([2.0, 4.0]).enumerate() {
        let agents = level.agents.as_ref().unwrap();
        assert_eq!(agents.job_rate, Some(rate));
        let mine: Vec<&RequestRecord> = (records.iter())
            .filter(|r| r.mode == LoadMode::JobRate && r.concurrency == n as u32 + 1)
            .collect();
        // Arrival i (of every 1/rate s in 1.5 s) plays job i, its first call on the schedule.
        let arrivals = (1.5 * rate) as u64;
        let spans = job_spans(&mine);
        assert_eq!(
            spans.keys().copied().collect::<Vec<_>>(),
            (0..arrivals).collect::<Vec<_>>()
        );
        assert_eq!(mine.len() as u64, arrivals * u64::from(CALLS));
        for r in mine
            .iter()
            .filter(|r| r.agent.is_some_and(|a| a.agent == 0 && a.call == 0))
        {
            let due = r.agent.unwrap().job as f64 / rate;
            assert!((r.scheduled_s - due).abs() < 1e-6, "{r:?}");
            assert!(r.sent_s >= due - 1e-6, "{r:?}");
        }
        let most = most_in_flight(&spans);
        assert!(most >= 2 || n == 0, "jobs overlap at {rate}/s: {spans:?}");
        let expected = most.max(previous.map_or(1, |p| p + 1));
        assert_eq!(level.concurrency, expected, "{spans:?}");
        previous = Some(level.concurrency);
        assert_per_job_figures(level, &spans, &printed["rate_levels"][n]);
    }
    assert_eq!(printed["capacity_rate"], 4.0, "{printed}");
    let said = text(&infermeter(&["summary", path.to_str().unwrap()], &[]).await);
    assert!(
        said.contains("Agents @2 jobs/s") && said.contains("Agents @4 jobs/s"),
        "{said}"
    );
    assert!(
        said.contains("4 new jobs/s (the highest job rate tested"),
        "{said}"
    );
    // Under a job bound no job meets, no rate does.
    let strict = [
        "summary",
        path.to_str().unwrap(),
        "--slo",
        "job=1ms",
        "--json",
    ];
    let printed: Value = serde_json::from_slice(&infermeter(&strict, &[]).await.stdout).unwrap();
    let printed = &printed["reports"][0]["findings"]["agents"][0];
    assert!(printed.get("capacity_rate").is_none(), "{printed}");
    assert_eq!(printed["rate_levels"][0]["meets"], false);
}

/// A level's jobs per hour and per user, as the records say: its time runs from its start to
/// its last reply (at least the 1.5 s jobs arrive for); its users are the jobs' summed wall
/// time over it.
fn assert_per_job_figures(level: &Level, spans: &BTreeMap<u64, (f64, f64)>, printed: &Value) {
    let agents = level.agents.as_ref().unwrap();
    let seconds = spans.values().map(|s| s.1).fold(1.5, f64::max);
    assert!((level.duration_s - seconds).abs() < 1e-9);
    let done = spans.len() as f64;
    let per_hour = done / (seconds / 3600.0);
    assert!((agents.jobs_per_hour - per_hour).abs() < 1e-6 * per_hour);
    let busy: f64 = spans.values().map(|(s, e)| e - s).sum();
    let per_user = 3600.0 * done / busy;
    let said = printed["jobs_per_user_hour"].as_f64().unwrap();
    assert!(
        (said - per_user).abs() < 1e-6 * per_user,
        "{said} {per_user}"
    );
    assert_eq!(printed["job_rate"], agents.job_rate.unwrap());
    assert_eq!(printed["completed"], spans.len());
    assert_eq!(printed["meets"], true);
}

/// Sharded, a job-rate level deals its arrivals out: two shards of 4 jobs per second for 1.5 s
/// merge into the single run's six jobs, each job's calls all on one shard (arrival `i` on
/// shard `i` mod 2), the merged level keeping its rate.
#[tokio::test(flavor = "multi_thread")]
async fn timed_two_shards_deal_out_the_arrivals_and_merge_into_every_job() {
    let _timing = timing_sensitive().await;
    let (sim, _profiles) = sim_64().await;
    let dir = out_dir("agents-job-rate-shards");
    let suite = small_suite(&dir, &section("[4.0]"));
    let steps = ["--level-seconds", "4", "--drain-seconds", "2"];
    let shards =
        crate::shards::run_shards(&sim.base_url(), suite.to_str().unwrap(), &dir, 2, &steps).await;
    let merged = dir.join("merged.json");
    let mut args = vec!["merge".to_string()];
    args.extend(shards.iter().map(|f| f.to_str().unwrap().to_string()));
    args.extend(["-o".into(), merged.to_str().unwrap().into()]);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    check_json_schema(&merged);
    let report: Report =
        infermeter_report::load_report(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let level = &report.series[0].levels[0];
    assert_eq!(report.series[0].mode, LoadMode::JobRate);
    let agents = level.agents.as_ref().unwrap();
    assert_eq!(agents.job_rate, Some(4.0));
    let numbers: HashSet<u64> = agents.jobs.iter().map(|j| j.job).collect();
    assert_eq!(numbers, (0..6).collect());
    assert!(agents.jobs.iter().all(|j| j.ok && j.calls == CALLS));
    let mut shard_of = HashMap::new();
    for r in &read_records(&merged) {
        let job = r.agent.unwrap().job;
        let shard = *shard_of.entry(job).or_insert(r.shard);
        assert_eq!(shard, r.shard, "job {job} on two shards");
        assert_eq!(shard, Some((job % 2) as u32), "job {job}");
    }
}
