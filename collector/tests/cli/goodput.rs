//! Goodput against the simulator: a run keeps each measured request's figures (failed ones
//! with their status) and the SLO it was given; `summary` prints goodput; a search finds the
//! capacity an exhaustive sweep finds, in fewer levels.

use std::path::{Path, PathBuf};

use infermeter_report::analysis::goodput::{max_load_under, MaxLoad};
use infermeter_report::{load_report, LoadMode, Report, RequestColumns};
use infermeter_sim::SimConfig;

use crate::common::*;

fn read_report(path: &Path) -> Report {
    load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A burst of three where the simulator fails two requests (one refused, one cut mid-stream):
/// the level's columns hold all three, with their statuses, and the summary judges them.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_with_an_slo_keeps_every_request_and_summary_prints_goodput() {
    let sim = start_sim(SimConfig {
        faults: Some("schedule=ok,429,reset".into()),
        ..fast_sim_args()
    })
    .await;
    let dir = out_dir("goodput-columns");
    let suite = small_suite(
        &dir,
        "name = \"g\"\nwarmup = 0\n[[scenario]]\nid = \"short\"\nname = \"Short\"\n\
         input_tokens = 64\noutput_tokens = 16\n[burst]\nlevels = [3]\n",
    );
    let report_path = dir.join("report.json");
    let slo = ["--slo", "ttft=5s,tpot=50ms,stall=0,target=90%"];
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report_path,
        &[&["--quiet"][..], &slo[..]].concat(),
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    sim.shutdown().await;
    check_json_schema(&report_path);

    let report = read_report(&report_path);
    let recorded = report.metadata.test.slo.expect("the SLO is recorded");
    assert_eq!(
        (
            recorded.limits.max_ttft_s,
            recorded.limits.max_tpot_s,
            recorded.limits.max_stalls
        ),
        (Some(5.0), Some(0.05), Some(0))
    );
    assert_eq!(recorded.target, 0.9);
    let level = &report.series[0].levels[0];
    let columns = level.per_request.as_ref().expect("per-request columns");
    let mut statuses = columns.status.clone();
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [
            RequestColumns::OK,
            RequestColumns::INCOMPLETE,
            RequestColumns::ERRORED
        ]
    );
    let ok = columns
        .status
        .iter()
        .position(|s| *s == RequestColumns::OK)
        .unwrap();
    assert_eq!(columns.output_tokens[ok], 16);
    let ttft = level.metrics.ttft_s.unwrap();
    // The one success's TTFT, to the tick.
    assert!((f64::from(columns.ttft[ok]) * 1e-4 - ttft.mean).abs() <= 0.5e-4);
    assert!(columns.e2e[ok] >= columns.ttft[ok]);

    // The summary judges the level by the recorded SLO: one request of three met it.
    let out = infermeter(&["summary", report_path.to_str().unwrap()], &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.contains(
            "Goodput SLO                       TTFT ≤ 5 s, TPOT ≤ 50 ms, no stall; 90% of requests"
        ),
        "{printed}"
    );
    assert!(
        printed.contains("Short (burst) max load            < 3 queued requests  (the lowest level tested misses the target)"),
        "{printed}"
    );
    assert!(printed.contains("@3       33.3% of 3 met"), "{printed}");
    // The simulator streams evenly: no pause over 100 ms.
    assert!(printed.contains("  stalls 0 in 0 requests"), "{printed}");
    // Another SLO on the command line: no bound but completing, which one request did.
    let out = infermeter(
        &[
            "summary",
            report_path.to_str().unwrap(),
            "--slo",
            "target=30%",
        ],
        &[],
    )
    .await;
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.contains(
            "Short (burst) max load            ≥ 3 queued requests  (all tested levels pass)"
        ),
        "{printed}"
    );
}

/// A suite of one small scenario on a simulated GPU that computes about one token per
/// millisecond, whatever the batch: a request's ~48 tokens (prompt and reply) then take ~48 ms
/// per request in flight (Little's law), so under "E2E ≤ 270 ms for 90% of requests" the
/// capacity is 5 (about 245 ms; 6 takes about 295). End-to-end latency is the steady figure
/// here: time per token depends on which prefills a request's decode happened to share steps
/// with.
/// `more` is added at the end (a `[search]`).
fn compute_bound_suite(dir: &Path, peak_levels: &str, more: &str) -> PathBuf {
    small_suite(
        dir,
        &format!(
            "name = \"goodput\"\nwarmup = 1\n[[scenario]]\nid = \"chat\"\nname = \"Chat\"\n\
             input_tokens = 32\noutput_tokens = 16\n[peak]\nlevels = {peak_levels}\n\
             requests_per_slot = 2\nmin_seconds = 0\n{more}"
        ),
    )
}

const SLO: &str = "e2e=270ms,target=90%";

/// The highest passing level of a run's only series, and how many levels it measured.
fn capacity(report: &Report) -> (MaxLoad, usize) {
    let series = &report.series[0];
    assert_eq!(series.mode, LoadMode::Peak);
    let slo = report.metadata.test.slo.expect("the SLO is recorded");
    let max = max_load_under(series, &slo).expect("per-request columns");
    (max, series.levels.len())
}

fn passing(max: MaxLoad) -> f64 {
    match max {
        MaxLoad::Between { passing, .. } => passing,
        other => panic!("the capacity is inside the range probed: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn search_finds_the_capacity_of_an_exhaustive_sweep_in_fewer_levels() {
    let sim = start_sim(SimConfig {
        gpu: "test-compute-bound".into(),
        profiles: Some(manifest_dir().join("tests/data/compute-bound-sim.toml")),
        ..fast_sim_args()
    })
    .await;
    let dir = out_dir("goodput-search");
    let sweep_dir = dir.join("sweep");
    std::fs::create_dir_all(&sweep_dir).unwrap();
    let sweep_suite =
        compute_bound_suite(&sweep_dir, "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]", "");
    let sweep_path = sweep_dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        sweep_suite.to_str().unwrap(),
        &sweep_path,
        &["--quiet", "--slo", SLO],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));

    let search_path = dir.join("search.json");
    // A search suite needs no levels; its [search] gives the highest, the command line the rest.
    let search_suite = compute_bound_suite(&dir, "[]", "[search]\nmax = 12\n");
    let args = run_args(
        &sim.base_url(),
        search_suite.to_str().unwrap(),
        &search_path,
        &[
            "--quiet",
            "--slo",
            SLO,
            "--search",
            "mode=peak,resolution=0",
        ],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    sim.shutdown().await;
    check_json_schema(&search_path);

    let (swept, swept_levels) = capacity(&read_report(&sweep_path));
    let search = read_report(&search_path);
    let (searched, searched_levels) = capacity(&search);
    let settings = search
        .metadata
        .test
        .search
        .clone()
        .expect("search settings");
    assert_eq!((settings.min, settings.max), (1.0, 12.0));
    // Every probed level is kept, in order of load.
    let loads: Vec<u32> = search.series[0]
        .levels
        .iter()
        .map(|l| l.concurrency)
        .collect();
    assert!(loads.windows(2).all(|w| w[0] < w[1]), "{loads:?}");
    assert!(
        (3.0..=9.0).contains(&passing(swept)),
        "the simulated capacity moved: {swept:?}"
    );
    assert!(
        (passing(searched) - passing(swept)).abs() <= 1.0,
        "search {searched:?} (levels {loads:?}) vs sweep {swept:?}"
    );
    assert!(
        searched_levels < swept_levels,
        "{searched_levels} levels searched, {swept_levels} swept"
    );
}

/// A fixed sweep whose every level meets the SLO has no limit; `--resume --search` on its
/// complete report judges the levels it holds, measures only the loads it lacks, and finds the
/// limit: the earlier levels stay as they were measured.
#[tokio::test(flavor = "multi_thread")]
async fn a_complete_sweep_is_searched_further_from_the_levels_it_holds() {
    let sim = start_sim(SimConfig {
        gpu: "test-compute-bound".into(),
        profiles: Some(manifest_dir().join("tests/data/compute-bound-sim.toml")),
        ..fast_sim_args()
    })
    .await;
    let dir = out_dir("goodput-search-further");
    let suite = compute_bound_suite(&dir, "[1, 2, 3]", "");
    let path = dir.join("report.json");
    let run = |more: &[&str]| {
        let base = ["--quiet", "--slo", SLO];
        run_args(
            &sim.base_url(),
            suite.to_str().unwrap(),
            &path,
            &[&base[..], more].concat(),
        )
    };
    let out = infermeter(&run(&[]), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let swept = read_report(&path);
    assert!(
        matches!(capacity(&swept).0, MaxLoad::AllPass { .. }),
        "every level passes"
    );
    std::fs::remove_file(records_file(&path)).unwrap();

    let search = ["--resume", "--search", "mode=peak,max=12,resolution=0"];
    let out = infermeter(&run(&search), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    sim.shutdown().await;
    check_json_schema(&path);
    let searched = read_report(&path);
    assert_eq!(searched.schema_version, infermeter_report::SCHEMA_VERSION);
    let levels = &searched.series[0].levels;
    for old in &swept.series[0].levels {
        let kept = levels.iter().find(|l| l.concurrency == old.concurrency);
        assert_eq!(
            serde_json::to_value(kept.expect("an earlier level is kept")).unwrap(),
            serde_json::to_value(old).unwrap(),
            "level {} was measured again",
            old.concurrency
        );
    }
    // Only the loads the search needed beyond 1-3 were measured (the records hold them alone).
    let new_loads: std::collections::BTreeSet<u32> = read_records(&path)
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| r.concurrency)
        .collect();
    assert!(
        !new_loads.is_empty() && new_loads.iter().all(|&l| l > 3),
        "{new_loads:?}"
    );
    assert_eq!(levels.len(), 3 + new_loads.len());
    assert!(
        (3.0..=9.0).contains(&passing(capacity(&searched).0)),
        "the limit is found: {:?}",
        capacity(&searched).0
    );
    assert!(
        searched
            .warnings
            .iter()
            .any(|w| w.starts_with("searched further on")),
        "{:?}",
        searched.warnings
    );
}

/// What a search run refused with `more` arguments says on stderr. Refused before any request:
/// the address is never dialled, and no report is written.
async fn refused_search(name: &str, more: &[&str]) -> String {
    let dir = out_dir(name);
    let suite = compute_bound_suite(&dir, "[1]", "");
    let report = dir.join("report.json");
    let args = run_args(
        "http://127.0.0.1:9/v1",
        suite.to_str().unwrap(),
        &report,
        &[&["--quiet", "--search"][..], more].concat(),
    );
    let out = infermeter(&args, &[]).await;
    assert!(!out.status.success());
    assert!(!report.exists());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn search_without_an_slo_says_how_to_give_one() {
    let err = refused_search("goodput-search-no-slo", &[]).await;
    assert!(
        err.contains("search mode needs an SLO to aim at: pass --slo"),
        "{err}"
    );
}

#[tokio::test]
async fn a_sharded_search_is_refused() {
    let shard = ["--shard", "0/2", "--start-at", "2026-01-01T00:00:00Z"];
    let err = refused_search(
        "goodput-search-sharded",
        &[&["--slo", SLO][..], &shard].concat(),
    )
    .await;
    assert!(err.contains("search mode cannot be sharded"), "{err}");
}
