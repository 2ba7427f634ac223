//! Figures of agentic jobs (agents mode): per level, job completion times, calls per job, where
//! a job's time went (engine, tools and think, waiting for children), jobs per hour, the
//! prefix cache's hits by agent depth; and the capacity in concurrent jobs under an SLO on job
//! completion time and per-call TTFT. `infermeter summary` (and the viewer) word these; the
//! figures of each job come from its level's records at assembly (`aggregate::agents_level`).

use schemars::JsonSchema;
use serde::Serialize;

use super::format::{format_number, with_unit};
use crate::aggregate::Applied;
use crate::schema::{
    to_ticks, AgentSource, Level, Limits, LoadMode, Report, RequestColumns, SampleCall, Slo,
};
use crate::stats::Distribution;

/// What an agentic job must meet: its completion time and each of its calls' TTFT, by a share
/// of the jobs (and of the calls).
/// A job within 10 minutes, a call's first token within 2 s, 95% of the time: an agent's user
/// waits for the task, and for each step to show progress.
pub const DEFAULT_JOB_SLO: Slo = Slo {
    limits: Limits {
        max_ttft_s: Some(2.0),
        max_job_s: Some(600.0),
        ..Limits::NONE
    },
    target: 0.95,
};

/// The SLO agents levels are judged by: the job bound of `slo` (else 600 s), its TTFT bound
/// (else 2 s) and its target, where a request SLO is given; the default otherwise. A job
/// passes within its completion-time bound, a call within its TTFT bound; a level meets the SLO
/// when the target share of its jobs, and of its calls, pass.
pub fn job_slo(slo: Option<&Slo>) -> Slo {
    let default = DEFAULT_JOB_SLO;
    match slo {
        Some(s) => Slo {
            limits: Limits {
                max_ttft_s: s.limits.max_ttft_s.or(default.limits.max_ttft_s),
                max_job_s: s.limits.max_job_s.or(default.limits.max_job_s),
                ..Limits::default()
            },
            target: s.target,
        },
        None => default,
    }
}

/// How a job SLO reads: "jobs within 600 s and calls' first token within 2 s, for 95% of
/// them".
pub fn job_slo_text(slo: &Slo) -> String {
    let bounds: Vec<String> = [
        (slo.limits.max_job_s).map(|s| format!("jobs within {}", with_unit(s, "s"))),
        (slo.limits.max_ttft_s).map(|s| format!("calls' first token within {}", with_unit(s, "s"))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let bounds = match bounds.is_empty() {
        true => "every job completed".to_string(),
        false => bounds.join(" and "),
    };
    format!(
        "{bounds}, for {}% of them",
        format_number(slo.target * 100.0)
    )
}

impl AgentsFindings {
    /// The summary's lines: a label and its text, one per level and one for the capacity.
    pub fn lines(&self) -> Vec<(String, String)> {
        let s = &self.source;
        let mut lines = vec![(
            format!("Agents: {}", self.scenario),
            format!(
                "{} job{} from {} ({}), {} calls, subagents {} deep, waits: {}",
                s.jobs,
                if s.jobs == 1 { "" } else { "s" },
                s.source,
                s.format,
                s.calls,
                s.max_depth,
                s.timing
            ),
        )];
        let slo = job_slo_text(&self.slo);
        for l in &self.levels {
            let n = l.jobs_at_once;
            let jobs = if n == 1 { "job" } else { "jobs" };
            lines.push((format!("Agents @{n} {jobs}"), l.text()));
        }
        if !self.levels.is_empty() {
            let capacity = match self.capacity_jobs {
                Some(n) => format!("{n} concurrent jobs (the most tested meeting {slo})"),
                None => format!("none of the levels tested meets {slo}"),
            };
            lines.push(("Agents capacity".into(), capacity));
        }
        for l in &self.rate_levels {
            lines.push((format!("Agents @{}", l.load()), l.text()));
        }
        if !self.rate_levels.is_empty() {
            let capacity = match self.capacity_rate {
                Some(r) => format!(
                    "{} new jobs/s (the highest job rate tested meeting {slo})",
                    format_number(r)
                ),
                None => format!("none of the job rates tested meets {slo}"),
            };
            lines.push(("Agents capacity at a job rate".into(), capacity));
        }
        lines
    }
}

impl AgentsLevelFigures {
    /// The level's load as its mode words it: "4 jobs" (concurrent jobs), "0.5 jobs/s" (job
    /// arrivals).
    pub fn load(&self) -> String {
        let applied = Applied {
            concurrency: self.jobs_at_once,
            job_rate: self.job_rate,
            ..Applied::default()
        };
        let mode = match self.job_rate {
            Some(_) => LoadMode::JobRate,
            None => LoadMode::Agents,
        };
        mode.describe(&applied)
    }

    /// "16/16 jobs done, p50 12.3 s, p95 20.1 s, 9 calls/job, 410 jobs/h (26/user); time: engine 40%,
    /// tools 35%, children 25%; cache hit by depth: 0 80%, 1 60%".
    pub fn text(&self) -> String {
        let pct = |x: f64| format!("{}%", format_number(x * 100.0));
        let seconds = |d: Option<&Distribution>, p: fn(&Distribution) -> Option<f64>| {
            d.and_then(p)
                .map_or("–".into(), |v| format!("{} s", format_number(v)))
        };
        let completion = self.completion_s.as_ref();
        let per: Vec<String> = [
            (self.jobs_per_user_hour).map(|u| format!("{}/user", format_number(u))),
            (self.jobs_per_gpu_hour).map(|g| format!("{}/GPU", format_number(g))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let per = match per.is_empty() {
            true => String::new(),
            false => format!(" ({})", per.join(", ")),
        };
        let cache: Vec<String> = (self.cache_by_depth.iter())
            .map(|(d, r)| format!("{d} {}", pct(*r)))
            .collect();
        format!(
            "{}/{} jobs done, p50 {}, p95 {}, {} calls/job, {} jobs/h{per}; time: engine {}, tools {}, children {}; cache hit by depth: {}",
            self.completed,
            self.jobs,
            seconds(completion, |d| Some(d.p50)),
            seconds(completion, |d| d.p95),
            self.calls_per_job.map_or("–".into(), |d| format_number(d.mean)),
            format_number(self.jobs_per_hour),
            pct(self.engine_share),
            pct(self.tools_share),
            pct(self.children_share),
            if cache.is_empty() { "–".into() } else { cache.join(", ") },
        )
    }
}

/// An agents scenario's series: its levels' figures and its capacity.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AgentsFindings {
    pub scenario: String,
    pub source: AgentSource,
    pub slo: Slo,
    /// One per level of concurrent jobs, by concurrent jobs.
    pub levels: Vec<AgentsLevelFigures>,
    /// The most concurrent jobs tested whose level, and every level below it, met the SLO;
    /// none when the first did not. A tested level, not interpolated.
    pub capacity_jobs: Option<u32>,
    /// One per level of job arrivals, by job rate (summary 1.3.0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_levels: Vec<AgentsLevelFigures>,
    /// The highest job rate tested (new jobs per second) whose level, and every level below
    /// it, met the SLO; none when the first did not or none was tested. Capacity in concurrent
    /// jobs is `capacity_jobs`'s, from the levels of concurrent jobs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_rate: Option<f64>,
}

/// One level's figures over its jobs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AgentsLevelFigures {
    /// Concurrent jobs; a job-rate level's: the most jobs it had in flight at once.
    pub jobs_at_once: u32,
    /// Job-rate levels: the new jobs offered per second (summary 1.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_rate: Option<f64>,
    pub jobs: u64,
    /// Jobs whose calls all succeeded.
    pub completed: u64,
    pub completion_s: Option<Distribution>,
    pub calls_per_job: Option<Distribution>,
    pub jobs_per_hour: f64,
    /// Jobs per hour per GPU, where the report knows its GPUs.
    pub jobs_per_gpu_hour: Option<f64>,
    /// Jobs per hour per user, a user being one job in flight at a time (one developer running
    /// one agent): [`jobs_per_user_hour`] (summary 1.3.0).
    pub jobs_per_user_hour: Option<f64>,
    /// Shares of the completed jobs' wall time (summed over them) on the root agent's lane:
    /// engine, tools and think, waiting for children. They sum to 1.
    pub engine_share: f64,
    pub tools_share: f64,
    pub children_share: f64,
    /// Share of the critical path's time spent in calls, over the completed jobs.
    pub critical_engine_share: f64,
    /// Cached over prompt tokens by depth: `(depth, ratio)`.
    pub cache_by_depth: Vec<(u32, f64)>,
    /// Shares meeting the SLO's bounds, and whether both reach its target.
    pub jobs_meeting: f64,
    pub calls_meeting: f64,
    pub meets: bool,
}

/// Every agents scenario of `report` with its figures under `slo`.
pub fn agents_findings(report: &Report, slo: &Slo) -> Vec<AgentsFindings> {
    let gpus = Some(report.metadata.hardware.gpu_count).filter(|&n| n > 0);
    (report.scenarios.iter())
        .filter_map(|s| {
            let source = s.agents.clone()?;
            let figures = |mode: LoadMode| -> Vec<AgentsLevelFigures> {
                (report.series.iter())
                    .filter(|x| x.scenario == s.id && x.mode == mode)
                    .flat_map(|x| &x.levels)
                    .filter_map(|l| level_figures(l, slo, gpus))
                    .collect()
            };
            let (levels, rate_levels) = (figures(LoadMode::Agents), figures(LoadMode::JobRate));
            if levels.is_empty() && rate_levels.is_empty() {
                return None;
            }
            let passing = |levels: &[AgentsLevelFigures]| {
                levels.iter().take_while(|l| l.meets).last().cloned()
            };
            Some(AgentsFindings {
                scenario: s.id.clone(),
                source,
                slo: *slo,
                capacity_jobs: passing(&levels).map(|l| l.jobs_at_once),
                capacity_rate: passing(&rate_levels).and_then(|l| l.job_rate),
                levels,
                rate_levels,
            })
        })
        .collect()
}

/// A level's figures; `None` for a level without agents figures.
pub fn level_figures(level: &Level, slo: &Slo, gpus: Option<u32>) -> Option<AgentsLevelFigures> {
    let a = level.agents.as_ref()?;
    let done: Vec<_> = a.jobs.iter().filter(|j| j.ok).collect();
    let total = |f: fn(&crate::schema::JobFigures) -> f64| done.iter().map(|j| f(j)).sum::<f64>();
    let wall = total(|j| j.wall_s);
    let share = |x: f64| if wall > 0.0 { x / wall } else { 0.0 };
    let jobs_meeting = match (slo.limits.max_job_s, a.jobs.len()) {
        (_, 0) => 0.0,
        (None, n) => done.len() as f64 / n as f64,
        (Some(max), n) => done.iter().filter(|j| j.wall_s <= max).count() as f64 / n as f64,
    };
    let calls_meeting = level
        .per_request
        .as_ref()
        .map_or(1.0, |c| ttft_share(c, slo.limits.max_ttft_s));
    Some(AgentsLevelFigures {
        jobs_at_once: level.concurrency,
        job_rate: a.job_rate,
        jobs_per_user_hour: jobs_per_user_hour(level),
        jobs: a.jobs.len() as u64,
        completed: done.len() as u64,
        completion_s: a.completion_s,
        calls_per_job: a.calls_per_job,
        jobs_per_hour: a.jobs_per_hour,
        jobs_per_gpu_hour: gpus.map(|n| a.jobs_per_hour / f64::from(n)),
        engine_share: share(total(|j| j.engine_s)),
        tools_share: share(total(|j| j.tools_s)),
        children_share: share(total(|j| j.children_s)),
        critical_engine_share: share(total(|j| j.critical_engine_s)),
        cache_by_depth: (a.cache_by_depth.iter())
            .filter(|d| d.prompt_tokens > 0)
            .map(|d| (d.depth, d.cached_tokens as f64 / d.prompt_tokens as f64))
            .collect(),
        jobs_meeting,
        calls_meeting,
        meets: jobs_meeting >= slo.target && calls_meeting >= slo.target,
    })
}

/// A level's jobs per hour per user, a user being one job in flight at a time (one developer
/// running one agent). At a number of concurrent jobs, a user is a job slot: the level's jobs per
/// hour over its jobs at once. At a job rate, the users are the jobs in flight on average over
/// the level's time (by Little's law, rate × mean wall time), measured as the jobs' summed wall
/// time (failed jobs' too) over the level's time: so a user's jobs per hour are the completed
/// jobs per hour of time a job was in flight. `None` without a level's time or jobs' time.
pub fn jobs_per_user_hour(level: &Level) -> Option<f64> {
    let a = level.agents.as_ref()?;
    let users = match a.job_rate {
        None => f64::from(level.concurrency),
        Some(_) => a.jobs.iter().map(|j| j.wall_s).sum::<f64>() / level.duration_s,
    };
    (users > 0.0 && users.is_finite()).then(|| a.jobs_per_hour / users)
}

/// Share of a level's calls that completed with their first token within `max_ttft_s`.
fn ttft_share(columns: &RequestColumns, max_ttft_s: Option<f64>) -> f64 {
    if columns.is_empty() {
        return 0.0;
    }
    let bound = max_ttft_s.map_or(u32::MAX, to_ticks);
    let met = (columns.status.iter().zip(&columns.ttft))
        .filter(|(s, t)| **s == RequestColumns::OK && **t <= bound)
        .count();
    met as f64 / columns.len() as f64
}

/// A job drawn as swim lanes: one lane per agent (its number, the root's 0), each call a bar
/// from its send to its last token, and the arrows of spawns and joins between lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct JobLanes {
    pub agents: u32,
    pub calls: Vec<SampleCall>,
    /// From the parent's call the child started after (its reply's end; the parent's first send
    /// when it started with its parent) to the child's first send.
    pub spawns: Vec<Link>,
    /// From a joined child's last reply to the parent's call that waited for it (its send).
    pub joins: Vec<Link>,
}

/// An arrow between two lanes: `(seconds after the job's start, agent)` at each end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub from: (f64, u32),
    pub to: (f64, u32),
}

/// The swim lanes of a level's sample job; `None` for a level without one.
pub fn job_lanes(level: &Level) -> Option<JobLanes> {
    let job = level.agents.as_ref()?.sample_job.as_ref()?;
    let calls = &job.calls;
    let find = |agent: u32, call: u32| {
        (calls.iter()).find(|c| c.place.agent == agent && c.place.call == call)
    };
    let (mut spawns, mut joins) = (Vec::new(), Vec::new());
    for first in calls.iter().filter(|c| c.place.call == 0) {
        let (child, Some(parent)) = (first.place.agent, first.place.parent) else {
            continue;
        };
        let from = match first.place.spawned_after {
            Some(after) => find(parent, after).map(|c| c.end_s),
            None => find(parent, 0).map(|c| c.sent_s),
        };
        if let Some(from) = from {
            spawns.push(Link {
                from: (from, parent),
                to: (first.sent_s, child),
            });
        }
        let last = (calls.iter())
            .filter(|c| c.place.agent == child)
            .map(|c| c.end_s)
            .fold(f64::NEG_INFINITY, f64::max);
        if let Some(by) = first.place.joined_by.and_then(|k| find(parent, k)) {
            joins.push(Link {
                from: (last, child),
                to: (by.sent_s, parent),
            });
        }
    }
    Some(JobLanes {
        agents: calls.iter().map(|c| c.place.agent + 1).max().unwrap_or(0),
        calls: calls.clone(),
        spawns,
        joins,
    })
}

/// The level of an agents series whose sample job the page draws: the most concurrent jobs
/// (where contention shows), else the most jobs in flight at a job rate.
pub fn lanes_level(report: &Report) -> Option<&Level> {
    let of = |mode: LoadMode| {
        (report.series.iter())
            .filter(move |s| s.mode == mode)
            .flat_map(|s| s.levels.iter())
            .filter(|l| l.agents.as_ref().is_some_and(|a| a.sample_job.is_some()))
            .max_by_key(|l| l.concurrency)
    };
    of(LoadMode::Agents).or_else(|| of(LoadMode::JobRate))
}

/// Whether `report` played agentic jobs (a series of an agents mode with a level): the viewer's
/// Agents section shows only then.
pub fn has_agents(report: &Report) -> bool {
    (report.series.iter()).any(|s| s.mode.plays_jobs() && !s.levels.is_empty())
}

impl AgentsFindings {
    /// What the scenario named `name` serves under its SLO, in concurrent jobs.
    /// A sentence for each kind of level it measured (concurrent jobs, then job rates).
    pub fn capacity_sentence(&self, name: &str) -> String {
        let slo = job_slo_text(&self.slo);
        let all_pass = |levels: &[AgentsLevelFigures]| match levels.last().is_some_and(|l| l.meets)
        {
            true => ", every level tested passes",
            false => "",
        };
        let jobs = match self.capacity_jobs {
            _ if self.levels.is_empty() => None,
            Some(n) => Some(format!(
                "{name} serves {n} concurrent job{} within the SLO ({slo}): the most tested that meets it{}.",
                if n == 1 { "" } else { "s" },
                all_pass(&self.levels)
            )),
            None => Some(format!("{name}: no level tested meets the SLO ({slo}), not even the first.")),
        };
        let rate = match self.capacity_rate {
            _ if self.rate_levels.is_empty() => None,
            Some(r) => Some(format!(
                "{name} takes {} new jobs/s within the SLO ({slo}): the highest job rate tested that meets it{}.",
                format_number(r),
                all_pass(&self.rate_levels)
            )),
            None => Some(format!("{name}: no job rate tested meets the SLO ({slo}), not even the lowest.")),
        };
        jobs.into_iter().chain(rate).collect::<Vec<_>>().join(" ")
    }
}
