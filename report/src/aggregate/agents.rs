//! An agents level's figures from its records ([`agents_level`]): each job's wall time, where
//! it went on its root agent's lane (engine, tools and think, waiting for children), its
//! critical path, and over the jobs: completion times, calls per job, jobs per hour, and the
//! prefix cache's hits by agent depth. A call's span is its send to its last token (agents
//! records count latency from the send).

use std::collections::BTreeMap;

use super::Trial;
use crate::schema::{
    AgentCall, AgentsLevel, DepthCache, JobFigures, Outcome, RequestRecord, SampleCall, SampleJob,
};
use crate::stats::Distribution;

/// One call of a job: its place, when it was sent and when its reply ended (seconds after the
/// level's start), whether it succeeded, and its record (for the level's sample job).
#[derive(Debug, Clone, Copy)]
struct Span<'a> {
    call: AgentCall,
    sent: f64,
    end: f64,
    ok: bool,
    record: &'a RequestRecord,
}

impl Span<'_> {
    fn of(r: &RequestRecord, call: AgentCall) -> Span<'_> {
        Span {
            call,
            sent: r.sent_s,
            end: r.sent_s + r.e2e_s.unwrap_or(0.0),
            ok: r.outcome == Outcome::Ok,
            record: r,
        }
    }
}

/// The level's agents figures; `None` when no record names an agentic call.
pub fn agents_level(trials: &[Trial<'_>]) -> Option<AgentsLevel> {
    let mut spans: BTreeMap<(u32, u64), Vec<Span>> = BTreeMap::new();
    let mut depths: BTreeMap<u32, DepthCache> = BTreeMap::new();
    for r in trials.iter().flat_map(|t| t.records).filter(|r| !r.warmup) {
        let Some(call) = r.agent else { continue };
        spans
            .entry((r.trial, call.job))
            .or_default()
            .push(Span::of(r, call));
        if let (Outcome::Ok, Some(input), Some(cached)) =
            (&r.outcome, r.input_tokens, r.cached_tokens)
        {
            let d = depths.entry(call.depth).or_insert(DepthCache {
                depth: call.depth,
                calls: 0,
                prompt_tokens: 0,
                cached_tokens: 0,
            });
            d.calls += 1;
            d.prompt_tokens += u64::from(input);
            d.cached_tokens += u64::from(cached);
        }
    }
    if spans.is_empty() {
        return None;
    }
    let mut jobs: Vec<JobFigures> = (spans.iter())
        .map(|(&(trial, job), spans)| job_figures(trial, job, spans))
        .collect();
    jobs.sort_by(|a, b| {
        (a.trial, a.start_s, a.job)
            .partial_cmp(&(b.trial, b.start_s, b.job))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let done: Vec<&JobFigures> = jobs.iter().filter(|j| j.ok).collect();
    let hours: f64 = trials.iter().map(|t| t.window.duration_s()).sum::<f64>() / 3600.0;
    Some(AgentsLevel {
        completion_s: Distribution::from_samples(
            &done.iter().map(|j| j.wall_s).collect::<Vec<_>>(),
        ),
        calls_per_job: Distribution::from_samples(
            &jobs.iter().map(|j| f64::from(j.calls)).collect::<Vec<_>>(),
        ),
        jobs_per_hour: if hours > 0.0 {
            done.len() as f64 / hours
        } else {
            0.0
        },
        job_rate: None,
        cache_by_depth: depths.into_values().collect(),
        sample_job: median_job(&jobs)
            .and_then(|j| Some(sample_job(j, spans.get(&(j.trial, j.job))?))),
        jobs,
    })
}

/// The job of median wall time among those whose calls all succeeded (the lower of the two
/// middle ones), or among all when none did.
fn median_job(jobs: &[JobFigures]) -> Option<&JobFigures> {
    let mut pick: Vec<&JobFigures> = jobs.iter().filter(|j| j.ok).collect();
    if pick.is_empty() {
        pick = jobs.iter().collect();
    }
    pick.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
    pick.get(pick.len().checked_sub(1)? / 2).copied()
}

/// A job's calls with their times from its start, by agent then call.
fn sample_job(job: &JobFigures, spans: &[Span]) -> SampleJob {
    let mut calls: Vec<SampleCall> = (spans.iter())
        .map(|s| SampleCall {
            place: s.call,
            sent_s: s.sent - job.start_s,
            end_s: s.end - job.start_s,
            ttft_s: s.record.ttft_s,
            input_tokens: s.record.input_tokens,
            output_tokens: s.record.output_tokens,
            cached_tokens: s.record.cached_tokens,
            ok: s.ok,
        })
        .collect();
    calls.sort_by_key(|c| (c.place.agent, c.place.call));
    SampleJob {
        trial: job.trial,
        job: job.job,
        start_s: job.start_s,
        wall_s: job.wall_s,
        calls,
    }
}

/// One job's figures from its calls' spans.
fn job_figures(trial: u32, job: u64, spans: &[Span]) -> JobFigures {
    let agents = spans.iter().map(|s| s.call.agent).max().unwrap_or(0) as usize + 1;
    // Each agent's subtree: when its last reply (or its children's) came, and which call.
    let mut last: Vec<Option<Span>> = vec![None; agents];
    for s in spans {
        let a = s.call.agent as usize;
        if last[a].is_none_or(|l| s.end > l.end) {
            last[a] = Some(*s);
        }
    }
    // A child comes after its parent: fold the subtrees up from the last agent.
    for a in (1..agents).rev() {
        let parent = spans
            .iter()
            .find(|s| s.call.agent as usize == a)
            .and_then(|s| s.call.parent);
        if let (Some(p), Some(l)) = (parent, last[a]) {
            let p = p as usize;
            if last[p].is_none_or(|pl| l.end > pl.end) {
                last[p] = Some(l);
            }
        }
    }
    let mut root: Vec<&Span> = spans.iter().filter(|s| s.call.agent == 0).collect();
    root.sort_by_key(|s| s.call.call);
    let start = root.first().map_or_else(
        || spans.iter().map(|s| s.sent).fold(f64::INFINITY, f64::min),
        |s| s.sent,
    );
    let end = spans.iter().map(|s| s.end).fold(start, f64::max);
    let subtree_end = |a: u32| last[a as usize].map_or(0.0, |l| l.end);
    let (mut engine, mut children, mut tools) = (0.0, 0.0, 0.0);
    for (k, call) in root.iter().enumerate() {
        engine += call.end - call.sent;
        let Some(before) = k.checked_sub(1).map(|k| root[k]) else {
            continue;
        };
        let gap = (call.sent - before.end).max(0.0);
        let joined = (spans.iter())
            .filter(|s| s.call.parent == Some(0) && s.call.joined_by == Some(call.call.call))
            .map(|s| subtree_end(s.call.agent))
            .fold(before.end, f64::max);
        let waited = (joined - before.end).clamp(0.0, gap);
        children += waited;
        tools += gap - waited;
    }
    // After the root's last reply: the background children still running.
    children += end - root.last().map_or(start, |s| s.end);
    let path = critical_path(spans, &last);
    let depth = spans.iter().map(|s| s.call.depth).max().unwrap_or(0);
    JobFigures {
        trial,
        job,
        calls: spans.len() as u32,
        agents: agents as u32,
        max_depth: depth,
        ok: spans.iter().all(|s| s.ok),
        start_s: start,
        wall_s: end - start,
        engine_s: engine,
        children_s: children,
        tools_s: tools,
        critical_engine_s: path.iter().map(|s| s.end - s.sent).sum(),
        critical_path: path.iter().map(|s| (s.call.agent, s.call.call)).collect(),
    }
}

/// The chain of calls that set the job's end: from the call that replied last, back through
/// whatever each waited for that replied latest (its agent's previous call, the children it
/// joined, or the parent's call it was spawned after), first call first.
fn critical_path<'a>(spans: &[Span<'a>], last: &[Option<Span<'a>>]) -> Vec<Span<'a>> {
    let find = |agent: u32, call: u32| {
        spans
            .iter()
            .find(|s| s.call.agent == agent && s.call.call == call)
            .copied()
    };
    let mut path = Vec::new();
    let mut at = spans.iter().copied().max_by(|a, b| a.end.total_cmp(&b.end));
    while let Some(s) = at {
        path.push(s);
        let c = s.call;
        let previous = c.call.checked_sub(1).and_then(|i| find(c.agent, i));
        let spawn = match (c.call, c.parent, c.spawned_after) {
            (0, Some(p), Some(after)) => find(p, after),
            _ => None,
        };
        let joined = (spans.iter())
            .filter(|x| {
                x.call.parent == Some(c.agent)
                    && x.call.joined_by == Some(c.call)
                    && x.call.call == 0
            })
            .filter_map(|x| last[x.call.agent as usize]);
        at = previous
            .into_iter()
            .chain(spawn)
            .chain(joined)
            .filter(|x| x.end <= s.sent + 1e-9)
            .max_by(|a, b| a.end.total_cmp(&b.end));
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::Window;
    use crate::schema::LoadMode;

    /// A call of agent `agent` (child of `parent`), sent at `sent`, ending at `end`.
    fn call(
        agent: u32,
        parent: Option<u32>,
        n: u32,
        joins: (Option<u32>, Option<u32>),
        sent: f64,
        end: f64,
    ) -> RequestRecord {
        RequestRecord {
            sent_s: sent,
            e2e_s: Some(end - sent),
            input_tokens: Some(100),
            cached_tokens: Some(if agent == 0 { 0 } else { 64 }),
            agent: Some(AgentCall {
                job: 0,
                agent,
                parent,
                depth: u32::from(parent.is_some()),
                call: n,
                spawned_after: joins.0,
                joined_by: joins.1,
            }),
            ..RequestRecord::ok("agents", LoadMode::Agents, 0)
        }
    }

    /// The root's call 0 (0–1 s) spawns a child (1–2 s) that its call 1 (2.5–3 s) joins, and
    /// call 1 spawns a background child (3–4 s).
    #[test]
    fn a_jobs_wall_time_splits_on_the_root_lane_and_its_critical_path_runs_through_its_children() {
        let records = [
            call(0, None, 0, (None, None), 0.0, 1.0),
            call(1, Some(0), 0, (Some(0), Some(1)), 1.0, 2.0),
            call(0, None, 1, (None, None), 2.5, 3.0),
            call(2, Some(0), 0, (Some(1), None), 3.0, 4.0),
        ];
        let window = Window {
            start_s: 0.0,
            end_s: 3600.0,
        };
        let level = agents_level(&[Trial {
            records: &records,
            window,
        }])
        .unwrap();
        let [job] = &level.jobs[..] else { panic!() };
        assert_eq!(
            (job.wall_s, job.engine_s, job.children_s, job.tools_s),
            (4.0, 1.5, 2.0, 0.5)
        );
        assert_eq!(job.critical_path, [(0, 0), (1, 0), (0, 1), (2, 0)]);
        assert_eq!(job.critical_engine_s, 3.5);
        assert_eq!(
            (job.calls, job.agents, job.max_depth, job.ok),
            (4, 3, 1, true)
        );
        assert_eq!(level.jobs_per_hour, 1.0);
        let depths: Vec<(u32, u64, u64)> = (level.cache_by_depth.iter())
            .map(|d| (d.depth, d.prompt_tokens, d.cached_tokens))
            .collect();
        assert_eq!(depths, [(0, 200, 0), (1, 200, 128)]);
    }
}
