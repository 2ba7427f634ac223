//! Agentic jobs (`[agents]`) against the simulator, checked on the simulator's own account of
//! what it served (`/infermeter/requests`: each request's arrival, completion and cached
//! tokens): the fork and join order, and the prefix cache's hits at the trace's 64-token blocks.
//! The trace's tree and blocks are read here from the file, apart from the collector's reader.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use infermeter_report::{LoadMode, RequestRecord};
use infermeter_sim::{RunningSim, SimConfig};
use serde_json::Value;

use crate::common::*;

/// The repository's small cc-traces trace: a pair of joined subagents (one holding a nested
/// one), one launched asynchronously mid-job, one left in the background at the end.
pub(crate) fn fixture() -> PathBuf {
    manifest_dir().join("tests/fixtures/cc-traces/subagents.json")
}

/// One agent of the trace as the test reads it: its parent, the parent's call it is spawned
/// after and the one that joins it, and each call's prompt length and blocks.
#[derive(Debug, Default)]
struct TestAgent {
    parent: Option<usize>,
    spawned_after: Option<usize>,
    joined_by: Option<usize>,
    calls: Vec<(u64, Vec<u64>)>,
}

/// The trace's agents in order of appearance (a parent before its children).
fn agents_of(trace: &Value) -> Vec<TestAgent> {
    fn walk(requests: &Value, me: usize, agents: &mut Vec<TestAgent>) {
        let mut waiting = Vec::new();
        for r in requests.as_array().unwrap() {
            if r["type"] == "subagent" {
                let child = agents.len();
                agents.push(TestAgent {
                    parent: Some(me),
                    spawned_after: agents[me].calls.len().checked_sub(1),
                    ..TestAgent::default()
                });
                walk(&r["requests"], child, agents);
                if r["status"] != "async_launched" {
                    waiting.push(child);
                }
            } else {
                let call = agents[me].calls.len();
                for c in waiting.drain(..) {
                    agents[c].joined_by = Some(call);
                }
                let blocks = r["hash_ids"].as_array().unwrap();
                let blocks = blocks.iter().map(|b| b.as_u64().unwrap()).collect();
                agents[me].calls.push((r["in"].as_u64().unwrap(), blocks));
            }
        }
    }
    let mut agents = vec![TestAgent::default()];
    walk(&trace["requests"], 0, &mut agents);
    agents
}

/// The fast test deployment with its prefix cache on in blocks of 64 tokens, cc-traces'.
pub(crate) async fn sim_64() -> (RunningSim, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles.toml");
    let fast = std::fs::read_to_string(fast_profiles()).unwrap();
    std::fs::write(
        &profiles,
        format!("{fast}\n[defaults]\nkv_block_size = 64\n"),
    )
    .unwrap();
    let sim = start_sim(SimConfig {
        prefix_cache: true,
        profiles: Some(profiles),
        ..fast_sim_args()
    })
    .await;
    (sim, dir)
}

/// What the simulator logged of one request: arrival, completion (seconds on its clock),
/// prompt and cached tokens.
#[derive(Debug, Clone, Copy)]
struct Served {
    received: f64,
    completed: f64,
    prompt: u64,
    cached: u64,
}

async fn served_log(base_url: &str) -> HashMap<String, Served> {
    let root = base_url.trim_end_matches("/v1");
    let log = get_json(&format!("{root}/infermeter/requests")).await;
    (log["requests"].as_array().unwrap().iter())
        .map(|r| {
            let served = Served {
                received: r["received_s"].as_f64().unwrap(),
                completed: r["completed_s"].as_f64().expect("every request completed"),
                prompt: r["prompt_tokens"].as_u64().unwrap(),
                cached: r["cached_tokens"].as_u64().unwrap(),
            };
            (r["id"].as_str().unwrap().to_string(), served)
        })
        .collect()
}

/// Runs `[agents]` over the fixture at `levels` concurrent jobs on `sim`; the records.
async fn run_agents(sim: &RunningSim, name: &str, levels: &str, jobs: u32) -> Vec<RequestRecord> {
    let dir = out_dir(name);
    let suite = small_suite(
        &dir,
        &format!(
            "name = \"agents\"\nwarmup = 0\n[agents]\nsource = {:?}\nlevels = {levels}\njobs = {jobs}\nspeed = 10.0\n",
            fixture()
        ),
    );
    let report = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report,
        &["--quiet"],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    check_json_schema(&report);
    read_records(&report)
}

/// Each call's entry in the simulator's log, by (job, agent, call).
fn by_call(
    records: &[RequestRecord],
    log: &HashMap<String, Served>,
) -> HashMap<(u64, u32, u32), Served> {
    records
        .iter()
        .map(|r| {
            let a = r.agent.expect("every agents record names its call");
            let id = r.response_id.as_deref().expect("every response has an id");
            ((a.job, a.agent, a.call), log[id])
        })
        .collect()
}

/// When the agent and all of its children, recursively, had their last reply.
fn finished(
    agents: &[TestAgent],
    calls: &HashMap<(u64, u32, u32), Served>,
    job: u64,
    a: usize,
) -> f64 {
    let own = (0..agents[a].calls.len())
        .map(|i| calls[&(job, a as u32, i as u32)].completed)
        .fold(0.0, f64::max);
    (0..agents.len())
        .filter(|&c| agents[c].parent == Some(a))
        .map(|c| finished(agents, calls, job, c))
        .fold(own, f64::max)
}

/// Acceptance: a trace with subagents (a nested one, one launched mid-job, one in the
/// background) replayed on the simulator. On the simulator's log: every child's first call
/// arrived after the parent's call it is spawned after completed; every joined call after all
/// its children (and theirs) completed; the root's call after the asynchronous child did not
/// wait for it. And each call's cached tokens are what a 64-token-block prefix cache holding
/// every completed call's whole blocks would hit, computed from the trace's `hash_ids`.
#[tokio::test(flavor = "multi_thread")]
async fn subagents_fork_after_their_parent_and_joins_wait_for_them_on_the_servers_clock() {
    let (sim, _profiles) = sim_64().await;
    let records = run_agents(&sim, "agents-fork-join", "[1]", 2).await;
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let agents = agents_of(&trace);
    let per_job: usize = agents.iter().map(|a| a.calls.len()).sum();
    assert_eq!(records.len(), 2 * per_job, "every call of both plays, once");
    assert!(records
        .iter()
        .all(|r| r.mode == LoadMode::Agents && r.concurrency == 1));
    let log = served_log(&sim.base_url()).await;
    let calls = by_call(&records, &log);
    for job in 0..2u64 {
        for (a, agent) in agents.iter().enumerate().skip(1) {
            let parent = agent.parent.unwrap();
            let first = calls[&(job, a as u32, 0)].received;
            if let Some(s) = agent.spawned_after {
                let spawn = calls[&(job, parent as u32, s as u32)].completed;
                assert!(
                    first >= spawn,
                    "job {job} agent {a} arrived at {first} before its spawn completed at {spawn}"
                );
            }
            if let Some(j) = agent.joined_by {
                let joined = calls[&(job, parent as u32, j as u32)].received;
                let done = finished(&agents, &calls, job, a);
                assert!(joined >= done, "job {job}: the parent's call {j} arrived at {joined} before agent {a} finished at {done}");
            }
        }
        // The asynchronous child (agent 4, two calls) was still running when the root's last
        // call arrived: nothing waited for it.
        let root_last = calls[&(job, 0, 2)].received;
        assert!(agents[4].joined_by.is_none());
        assert!(
            root_last < calls[&(job, 4, 1)].received,
            "job {job}: the root waited for its background child"
        );
        // The next play starts once the whole tree, background included, is done.
        if job == 1 {
            let previous = (0..agents.len())
                .map(|a| finished(&agents, &calls, 0, a))
                .fold(0.0, f64::max);
            assert!(
                calls[&(1, 0, 0)].received >= previous,
                "a job's slot freed before its tree finished"
            );
        }
    }
    assert_cached_as_a_64_block_cache(&agents, &calls);
}

/// Each call's cached tokens as the simulator served them equal 64 × the leading blocks of its
/// `hash_ids` that a call of its play completed before it arrived held whole (the fixture's
/// prompts are 40 tokens past a block boundary, so a call holds its first ⌊in / 64⌋ blocks
/// whole: the template's few tokens come off the last block), at most ⌊(prompt − 1) / 64⌋
/// blocks (a cache leaves a token to compute). Plays share nothing: each play's blocks are its
/// own.
fn assert_cached_as_a_64_block_cache(
    agents: &[TestAgent],
    calls: &HashMap<(u64, u32, u32), Served>,
) {
    let mut hits = 0;
    for (&(job, a, i), served) in calls {
        let (_, blocks) = &agents[a as usize].calls[i as usize];
        let whole: HashSet<u64> = (calls.iter())
            .filter(|((j, ..), other)| *j == job && other.completed <= served.received)
            .flat_map(|((_, oa, oi), _)| {
                let (input, blocks) = &agents[*oa as usize].calls[*oi as usize];
                blocks.iter().take((input / 64) as usize).copied()
            })
            .collect();
        let shared = blocks.iter().take_while(|b| whole.contains(b)).count() as u64;
        let expected = 64 * shared.min((served.prompt - 1) / 64);
        assert_eq!(served.cached, expected, "job {job} agent {a} call {i}");
        hits += expected;
    }
    assert!(hits > 0, "the trace's shared blocks hit the cache");
}

/// The cc-traces reader refuses a broken trace before anything is sent: the run fails naming
/// the file and the entry, and the simulator served nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_broken_trace_is_refused_before_anything_is_sent() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("agents-broken");
    let trace = dir.join("broken.json");
    let good = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(&trace, good.replacen("\"in\": 168", "\"in\": \"many\"", 1)).unwrap();
    let suite = small_suite(
        &dir,
        &format!("name = \"agents\"\n[agents]\nsource = {trace:?}\nlevels = [1]\n"),
    );
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &dir.join("r.json"),
        &["--quiet"],
    );
    let out = infermeter(&args, &[]).await;
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("broken.json") && said.contains("requests[1].requests[1].requests[0]"),
        "{said}"
    );
    let root = sim.base_url().trim_end_matches("/v1").to_string();
    let log = get_json(&format!("{root}/infermeter/requests")).await;
    assert_eq!(
        log["requests"].as_array().unwrap().len(),
        0,
        "nothing was sent"
    );
}

/// Acceptance: the fixture's jobs at 1, 4 and 16 at once. Each job's wall time splits into
/// engine, tools and think, and waiting for children, summing to it within 1%; and the
/// report's per-job figures (wall time, engine time on the root lane, calls) and each level's
/// completed jobs are what the raw records say, recomputed here from their send and end times.
#[tokio::test(flavor = "multi_thread")]
async fn timed_a_jobs_time_splits_into_engine_tools_and_children_at_every_level() {
    let section = format!("source = {:?}\nspeed = 10.0\n", fixture());
    splits_at_1_4_16("agents-levels", &section).await;
}

/// The same of 16 generated jobs (each call spawning two subagents, joined), seeded.
#[tokio::test(flavor = "multi_thread")]
async fn timed_generated_jobs_split_their_time_at_every_level() {
    let section = "seed = 3\n[agents.generate]\nturns = 3\nspawn_chance = 1.0\nsubagents = 2\n\
        max_depth = 1\nmax_agents = 5\nsystem_prompt_tokens = 256\ntask_tokens = 64\n\
        tool_output_tokens = 64\noutput_tokens = 16\n\
        tool_wait = { distribution = 'fixed', seconds = 0.02 }\n";
    splits_at_1_4_16("agents-generated", section).await;
}

/// Runs `[agents]` (`levels = [1, 4, 16]`, 16 jobs, then `section`) and checks each job's split
/// and the summary's per-level figures against the raw records.
async fn splits_at_1_4_16(name: &str, section: &str) {
    let _timing = timing_sensitive().await;
    let (sim, _profiles) = sim_64().await;
    let dir = out_dir(name);
    let suite = small_suite(
        &dir,
        &format!(
            "name = \"agents\"\nwarmup = 0\n[agents]\nlevels = [1, 4, 16]\njobs = 16\n{section}"
        ),
    );
    let report_path = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report_path,
        &["--quiet"],
    );
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let report: infermeter_report::Report =
        infermeter_report::load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let records = read_records(&report_path);
    let series = (report.series.iter())
        .find(|s| s.mode == LoadMode::Agents)
        .unwrap();
    let levels: Vec<u32> = series.levels.iter().map(|l| l.concurrency).collect();
    assert_eq!(levels, [1, 4, 16]);
    let summary = infermeter(&["summary", report_path.to_str().unwrap(), "--json"], &[]).await;
    assert!(summary.status.success(), "{}", text(&summary));
    let printed: Value = serde_json::from_slice(&summary.stdout).unwrap();
    let printed = &printed["reports"][0]["findings"]["agents"][0];
    let said = infermeter(&["summary", report_path.to_str().unwrap()], &[]).await;
    let said = text(&said);
    assert!(
        said.contains("Agents @16 jobs") && said.contains("Agents capacity"),
        "{said}"
    );
    // Each call's lengths and cache hits are as asked (a busy machine's timing warnings aside).
    let checks = ["length", "cached"];
    let wrong: Vec<&String> = (report.warnings.iter())
        .filter(|w| checks.iter().any(|c| w.contains(c)))
        .collect();
    assert!(wrong.is_empty(), "{wrong:?}");
    for (n, level) in series.levels.iter().enumerate() {
        let agents = level
            .agents
            .as_ref()
            .expect("an agents level has job figures");
        assert_eq!(agents.jobs.len(), 16, "@{}", level.concurrency);
        let mine: Vec<&RequestRecord> = (records.iter())
            .filter(|r| r.concurrency == level.concurrency && !r.warmup)
            .collect();
        for job in &agents.jobs {
            let sum = job.engine_s + job.tools_s + job.children_s;
            assert!((sum - job.wall_s).abs() <= 0.01 * job.wall_s, "{job:?}");
            let calls: Vec<&&RequestRecord> = (mine.iter())
                .filter(|r| r.agent.is_some_and(|a| a.job == job.job))
                .collect();
            let end = |r: &RequestRecord| r.sent_s + r.e2e_s.unwrap();
            let root: Vec<&&&RequestRecord> = calls
                .iter()
                .filter(|r| r.agent.unwrap().agent == 0)
                .collect();
            let first = root
                .iter()
                .find(|r| r.agent.unwrap().call == 0)
                .unwrap()
                .sent_s;
            let last = calls.iter().map(|r| end(r)).fold(0.0, f64::max);
            let engine: f64 = root.iter().map(|r| end(r) - r.sent_s).sum();
            assert_eq!(job.calls as usize, calls.len());
            assert!((job.wall_s - (last - first)).abs() < 1e-9, "{job:?}");
            assert!((job.engine_s - engine).abs() < 1e-9, "{job:?}");
            assert!(
                job.children_s > 0.0,
                "every job waits for its subagents: {job:?}"
            );
        }
        let completed = agents.jobs.iter().filter(|j| j.ok).count();
        assert_eq!(completed, 16, "@{}", level.concurrency);
        assert_sample_job_is_the_median_as_recorded(level, &mine);
        let per_hour = 16.0 / (level.duration_s / 3600.0);
        // The summary's median job completion time, from the records' send and end times.
        let mut walls: Vec<f64> = (0..16u64)
            .map(|job| {
                let calls: Vec<&&RequestRecord> = (mine.iter())
                    .filter(|r| r.agent.is_some_and(|a| a.job == job))
                    .collect();
                let first = (calls.iter())
                    .find(|r| r.agent.is_some_and(|a| a.agent == 0 && a.call == 0))
                    .unwrap()
                    .sent_s;
                calls
                    .iter()
                    .map(|r| r.sent_s + r.e2e_s.unwrap())
                    .fold(0.0, f64::max)
                    - first
            })
            .collect();
        walls.sort_by(f64::total_cmp);
        let median = (walls[7] + walls[8]) / 2.0;
        let printed_p50 = printed["levels"][n]["completion_s"]["p50"]
            .as_f64()
            .unwrap();
        assert!(
            (printed_p50 - median).abs() < 1e-9,
            "{printed_p50} {median}"
        );
        assert_eq!(printed["levels"][n]["completed"], 16);
        assert!((agents.jobs_per_hour - per_hour).abs() < 1e-6 * per_hour);
        // Per user, a user being a job slot: the level's jobs per hour over its jobs at once.
        let per_user = per_hour / f64::from(level.concurrency);
        let printed_per_user = printed["levels"][n]["jobs_per_user_hour"].as_f64().unwrap();
        assert!((printed_per_user - per_user).abs() < 1e-6 * per_user);
    }
    // More jobs at once finish the same work sooner.
    let span = |l: &infermeter_report::Level| {
        let jobs = &l.agents.as_ref().unwrap().jobs;
        let start = jobs.iter().map(|j| j.start_s).fold(f64::INFINITY, f64::min);
        jobs.iter()
            .map(|j| j.start_s + j.wall_s)
            .fold(0.0, f64::max)
            - start
    };
    assert!(span(&series.levels[2]) < span(&series.levels[0]));
}

/// Sharded, an agents level deals its slots out: two shards of 2 jobs at once, 4 plays, merge
/// into the single run's jobs, each job's calls all on one shard.
#[tokio::test(flavor = "multi_thread")]
async fn timed_two_shards_deal_out_the_jobs_and_merge_into_every_job() {
    let _timing = timing_sensitive().await;
    let (sim, _profiles) = sim_64().await;
    let dir = out_dir("agents-shards");
    let suite = small_suite(
        &dir,
        &format!(
            "name = \"agents\"\nwarmup = 0\n[agents]\nsource = {:?}\nlevels = [2]\njobs = 4\nspeed = 10.0\n",
            fixture()
        ),
    );
    let steps = ["--level-seconds", "4", "--drain-seconds", "2"];
    let shards =
        crate::shards::run_shards(&sim.base_url(), suite.to_str().unwrap(), &dir, 2, &steps).await;
    let merged = dir.join("merged.json");
    let mut args = vec!["merge".to_string()];
    args.extend(shards.iter().map(|f| f.to_str().unwrap().to_string()));
    args.extend(["-o".into(), merged.to_str().unwrap().into()]);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let report: infermeter_report::Report =
        infermeter_report::load_report(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let level = &report
        .series
        .iter()
        .find(|s| s.mode == LoadMode::Agents)
        .unwrap()
        .levels[0];
    assert_eq!(level.concurrency, 2);
    let jobs = &level.agents.as_ref().unwrap().jobs;
    let numbers: Vec<u64> = jobs
        .iter()
        .map(|j| j.job)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(numbers, [0, 1, 2, 3]);
    assert!(jobs.iter().all(|j| j.ok && j.calls == 10));
    let records = read_records(&merged);
    let mut shard_of = HashMap::new();
    for r in &records {
        let job = r.agent.unwrap().job;
        assert_eq!(
            *shard_of.entry(job).or_insert(r.shard),
            r.shard,
            "job {job} on two shards"
        );
    }
    assert_eq!(
        shard_of.values().collect::<HashSet<_>>().len(),
        2,
        "both shards played jobs"
    );
}

/// The level's sample job (the viewer's swim lanes) is its job of median wall time, the lower
/// middle one, recomputed from the records' send and end times; its calls are that job's
/// records, timed from its first send; and the lanes' spawns and joins link each child to its
/// parent's calls as the records place them, a child's first send after its spawn and the
/// joining call's send after the child's last reply.
fn assert_sample_job_is_the_median_as_recorded(
    level: &infermeter_report::Level,
    mine: &[&RequestRecord],
) {
    let end = |r: &RequestRecord| r.sent_s + r.e2e_s.unwrap();
    let mut walls: Vec<(f64, u64)> = Vec::new();
    let mut jobs: Vec<u64> = mine.iter().filter_map(|r| r.agent.map(|a| a.job)).collect();
    jobs.sort_unstable();
    jobs.dedup();
    for job in jobs {
        let calls: Vec<&&RequestRecord> = (mine.iter())
            .filter(|r| r.agent.is_some_and(|a| a.job == job))
            .collect();
        let first = calls.iter().map(|r| r.sent_s).fold(f64::INFINITY, f64::min);
        let last = calls.iter().map(|r| end(r)).fold(0.0, f64::max);
        walls.push((last - first, job));
    }
    walls.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (wall, median) = walls[(walls.len() - 1) / 2];
    let sample = level
        .agents
        .as_ref()
        .unwrap()
        .sample_job
        .as_ref()
        .expect("a sample job");
    assert_eq!(sample.job, median, "@{}", level.concurrency);
    assert!((sample.wall_s - wall).abs() < 1e-9);
    let calls: Vec<&&RequestRecord> = (mine.iter())
        .filter(|r| r.agent.is_some_and(|a| a.job == median))
        .collect();
    assert_eq!(sample.calls.len(), calls.len());
    let first = calls.iter().map(|r| r.sent_s).fold(f64::INFINITY, f64::min);
    for c in &sample.calls {
        let r = calls
            .iter()
            .find(|r| r.agent == Some(c.place))
            .expect("a recorded call");
        assert!((c.sent_s - (r.sent_s - first)).abs() < 1e-9, "{c:?}");
        assert!((c.end_s - (end(r) - first)).abs() < 1e-9, "{c:?}");
        assert_eq!(
            (c.input_tokens, c.output_tokens),
            (r.input_tokens, r.output_tokens)
        );
    }
    let lanes = infermeter_report::analysis::agents::job_lanes(level).unwrap();
    let children = calls
        .iter()
        .filter(|r| r.agent.unwrap().call == 0 && r.agent.unwrap().parent.is_some())
        .count();
    assert_eq!(lanes.spawns.len(), children, "every child is spawned");
    let joined = calls
        .iter()
        .filter(|r| {
            let a = r.agent.unwrap();
            a.call == 0 && a.joined_by.is_some()
        })
        .count();
    assert_eq!(lanes.joins.len(), joined, "every joined child is joined");
    for link in lanes.spawns.iter().chain(&lanes.joins) {
        assert!(link.from.0 <= link.to.0 + 1e-9, "{link:?}");
    }
    for link in &lanes.joins {
        let child_last = (calls.iter())
            .filter(|r| r.agent.unwrap().agent == link.from.1)
            .map(|r| end(r) - first)
            .fold(0.0, f64::max);
        assert!((link.from.0 - child_last).abs() < 1e-9, "{link:?}");
    }
}
