//! `[agents]`: agentic jobs (trees of agents whose calls fork into subagents and join) played at
//! numbers of concurrent jobs. [`AgentsSpec::read_jobs`] is the one place a suite's agentic
//! source becomes a [`JobSet`]: each reader or generator is one arm of it (cc-traces and
//! Bailian traces from `source`, or jobs generated from `[agents.generate]`).

use std::path::{Path, PathBuf};

use infermeter_report::{AgentSource, Arrivals, Scenario};
use serde::Deserialize;

use super::{Suite, SuiteError};
use crate::prompts::agent_gen::{self, AgentSpec};
use crate::prompts::bailian::read_bailian;
use crate::prompts::cc_traces::{self, Timing};
use crate::prompts::jobs::JobSet;

/// Jobs generated when `[agents]` gives no `jobs`.
const DEFAULT_GENERATED_JOBS: u32 = 16;

/// `[agents]` as a suite writes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsSpec {
    /// Where the jobs come from: a trace file or a folder of them, relative to the suite file;
    /// none: they are generated (`[agents.generate]`).
    #[serde(default)]
    pub source: Option<PathBuf>,
    /// The source's format: "cc-traces" (Weka / SemiAnalysis, the default with a `source`),
    /// "bailian" (Alibaba Bailian-style JSONL) or "generated" (the default without one).
    #[serde(default)]
    pub format: Option<String>,
    /// The generator's knobs (`format = "generated"`); defaults where absent.
    #[serde(default)]
    pub generate: Option<AgentSpec>,
    /// The generator's seed (the same seed, knobs and `jobs` give the same jobs) and the job
    /// arrivals' (a rate level's is this plus its place in the series, from 0).
    #[serde(default)]
    pub seed: u64,
    /// Concurrent jobs, one level each: a job holds its slot until its whole tree is done.
    #[serde(default)]
    pub levels: Vec<u32>,
    /// New jobs per second, one level each (a series of its own, the `job_rate` mode): each
    /// job runs its whole tree, jobs overlap freely. At least one of `levels` and `rates`.
    #[serde(default)]
    pub rates: Vec<f64>,
    /// How the rates' jobs arrive: "poisson" (the default, seeded by `seed`) or "constant".
    #[serde(default = "crate::suite::default_arrivals")]
    pub arrivals: Arrivals,
    /// How long each rate is offered, seconds (its jobs then run to their end).
    #[serde(default = "default_duration_s")]
    pub duration_s: f64,
    /// Jobs each level plays, dealt out to its slots in turn; default: every job of the set
    /// once, and at least one per slot (the set repeats, each play with prompts of its own).
    /// Generated jobs: how many are generated (default 16).
    #[serde(default)]
    pub jobs: Option<u32>,
    /// What a call waits before it is sent, after what it waits for: the gap the trace
    /// recorded ("trace"), its think time ("think") or nothing ("none").
    #[serde(default)]
    pub timing: AgentTiming,
    /// Waits are divided by this (2: twice as fast as recorded).
    #[serde(default = "unit")]
    pub speed: f64,
    /// The longest wait, seconds (a trace's coffee breaks); none: as recorded.
    #[serde(default)]
    pub max_wait_s: Option<f64>,
}

/// What a call waits before it is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentTiming {
    #[default]
    Trace,
    Think,
    None,
}

impl AgentTiming {
    pub fn label(self) -> &'static str {
        match self {
            AgentTiming::Trace => "trace",
            AgentTiming::Think => "think",
            AgentTiming::None => "none",
        }
    }
}

fn unit() -> f64 {
    1.0
}

/// Seconds each job rate is offered when `[agents]` does not say.
fn default_duration_s() -> f64 {
    60.0
}

impl AgentsSpec {
    /// The jobs the source describes, each checked, before anything is sent: the seam where
    /// each agentic source (a trace format, the generator) plugs in.
    pub fn read_jobs(&self) -> Result<JobSet, String> {
        let timing = match self.timing {
            AgentTiming::Think => Timing::ThinkOnly,
            AgentTiming::Trace | AgentTiming::None => Timing::Trace,
        };
        let set = match (self.format(), &self.source) {
            ("cc-traces", Some(path)) => cc_traces::read(path, timing).map_err(|e| e.to_string())?,
            ("bailian", Some(path)) => read_bailian(path).map_err(|e| e.to_string())?,
            ("generated", None) => {
                let spec = self.generate.clone().unwrap_or_default();
                let jobs = self.jobs.unwrap_or(DEFAULT_GENERATED_JOBS) as usize;
                agent_gen::generate(&spec, self.seed, jobs)?
            }
            ("generated", Some(path)) => {
                return Err(format!(
                    "[agents] generates its jobs but also names source = \"{}\": drop source, or give its format (\"cc-traces\" or \"bailian\")",
                    path.display()
                ))
            }
            ("cc-traces" | "bailian", None) => {
                return Err(format!(
                    "[agents] format \"{}\" reads a trace: give source = \"<file or folder>\"",
                    self.format()
                ))
            }
            (other, _) => {
                return Err(format!(
                    "[agents] format \"{other}\" is not one infermeter reads: \"cc-traces\", \"bailian\" or \"generated\""
                ))
            }
        };
        if self.generate.is_some() && self.source.is_some() {
            return Err("[agents.generate] is for generated jobs: drop it, or drop source".into());
        }
        for job in &set.jobs {
            job.check().map_err(|e| e.to_string())?;
        }
        Ok(set)
    }

    /// The format of the source: as given, else cc-traces for a `source`, generated without.
    pub fn format(&self) -> &str {
        match (&self.format, &self.source) {
            (Some(f), _) => f,
            (None, Some(_)) => "cc-traces",
            (None, None) => "generated",
        }
    }

    /// The wait before a call that the source says waits `wait_ms`, as this spec plays it.
    pub fn wait_s(&self, wait_ms: f64) -> f64 {
        let s = match self.timing {
            AgentTiming::None => 0.0,
            _ => wait_ms / 1e3 / self.speed,
        };
        self.max_wait_s.map_or(s, |cap| s.min(cap))
    }

    /// Why the section cannot run, if it cannot.
    pub(super) fn check(&self) -> Result<(), String> {
        let speed_ok = self.speed.is_finite() && self.speed > 0.0;
        let cap_ok = self.max_wait_s.is_none_or(|c| c.is_finite() && c >= 0.0);
        let levels_ok = self.levels.is_empty() || super::workloads::increasing(&self.levels);
        if !levels_ok || self.jobs == Some(0) {
            return Err(
                "[agents] levels must be increasing and at least 1, jobs at least 1".into(),
            );
        }
        let rates_ok = self.rates.is_empty() || super::workloads::increasing_rates(&self.rates);
        let duration_ok = self.duration_s.is_finite() && self.duration_s > 0.0;
        if !(rates_ok && duration_ok) {
            return Err(
                "[agents] rates must be increasing positive numbers (new jobs per second) and duration_s positive".into(),
            );
        }
        if self.levels.is_empty() && self.rates.is_empty() {
            return Err("[agents] needs levels (concurrent jobs, e.g. levels = [1, 4]) or rates (new jobs per second, e.g. rates = [0.5, 1.0]), or both".into());
        }
        if !speed_ok || !cap_ok {
            return Err("[agents] speed must be a positive number, max_wait_s non-negative".into());
        }
        Ok(())
    }

    /// The scenario the jobs run as: their calls' mean lengths and where they came from.
    pub fn scenario(&self, set: &JobSet) -> Scenario {
        let calls: Vec<_> = set
            .jobs
            .iter()
            .flat_map(|j| j.agents.iter().flat_map(|a| &a.calls))
            .collect();
        let n = calls.len().max(1) as f64;
        let mean = |f: fn(&crate::prompts::jobs::Call) -> u32| {
            (calls.iter().map(|c| f64::from(f(c))).sum::<f64>() / n).round() as u32
        };
        let name = self
            .source
            .as_deref()
            .map_or_else(|| "the generator".to_string(), file_name);
        let agents: usize = set.jobs.iter().map(|j| j.agents.len()).sum();
        let max_depth = (set.jobs.iter().flat_map(|j| &j.agents))
            .map(|a| a.depth)
            .max()
            .unwrap_or(0);
        Scenario {
            id: "agents".into(),
            name: format!("Agents {name}"),
            description: format!(
                "{} agentic jobs ({} calls, subagents {max_depth} deep) from {name} ({} format); lengths are the calls' means.",
                set.jobs.len(),
                calls.len(),
                self.format()
            ),
            input_tokens: mean(|c| c.input_tokens).max(1),
            output_tokens: mean(|c| c.output_tokens).max(1),
            session: None,
            trace: None,
            prompts: None,
            lengths: None,
            agents: Some(AgentSource {
                source: name,
                format: self.format().to_string(),
                jobs: set.jobs.len() as u64,
                agents: agents as u64,
                calls: calls.len() as u64,
                max_depth,
                block_tokens: set.block_tokens,
                timing: self.timing.label().into(),
            }),
        }
    }
}

/// A path's last part, as the report names a source.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

impl Suite {
    /// Reads the `[agents]` source (relative to `dir`) and adds its scenario.
    pub(super) fn read_agents(&mut self, dir: &Path) -> Result<(), SuiteError> {
        let Some(spec) = &mut self.agents else {
            return Ok(());
        };
        if let Some(source) = spec.source.as_mut().filter(|s| s.is_relative()) {
            *source = dir.join(&*source);
        }
        let set = spec
            .read_jobs()
            .map_err(|e| SuiteError::Invalid(self.name.clone(), e))?;
        self.scenarios.push(spec.scenario(&set));
        self.loaded_jobs = Some(std::sync::Arc::new(set));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::load::plan;
    use crate::suite::Suite;
    use infermeter_report::LoadMode;
    use std::path::Path;

    /// An `[agents]` section over the repository's cc-traces fixture.
    fn suite(section: &str) -> Result<Suite, String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc-traces");
        let text = format!("name = \"a\"\n[agents]\nsource = \"subagents.json\"\n{section}");
        let suite = Suite::parse(&text, "a.toml", &dir).map_err(|e| e.to_string())?;
        suite.check().map_err(|e| e.to_string())?;
        Ok(suite)
    }

    #[test]
    fn an_agents_section_plans_a_level_per_number_of_jobs_on_its_own_scenario() {
        let s = suite("levels = [1, 4, 16]\nspeed = 2.0\nmax_wait_s = 0.1\n").unwrap();
        let [scenario] = &s.scenarios[..] else {
            panic!()
        };
        let source = scenario.agents.as_ref().unwrap();
        assert_eq!(
            (source.jobs, source.agents, source.calls, source.max_depth),
            (1, 6, 10, 2)
        );
        assert!(!scenario.is_single());
        let levels = plan(&s, &[]);
        let labels: Vec<(LoadMode, u32)> = levels
            .iter()
            .map(|l| (l.mode(), l.record_label()))
            .collect();
        assert_eq!(
            labels,
            [
                (LoadMode::Agents, 1),
                (LoadMode::Agents, 4),
                (LoadMode::Agents, 16)
            ]
        );
        assert_eq!(levels[2].load.expected_requests(), Some(16 * 10));
        let spec = s.agents.as_ref().unwrap();
        assert_eq!(spec.wait_s(150.0), 0.075);
        assert_eq!(spec.wait_s(5000.0), 0.1);
        let quick = s.quick();
        assert_eq!(quick.agents.unwrap().levels, [1, 16]);
    }

    /// `rates` plan a series of job arrivals of their own, numbered from 1, beside (or without)
    /// the levels of concurrent jobs; a rate level's arrivals are seeded from `seed`.
    #[test]
    fn rates_plan_job_arrival_levels_of_their_own() {
        let s = suite("levels = [2]\nrates = [0.5, 2.0]\nduration_s = 4.0\nseed = 7\n").unwrap();
        let levels = plan(&s, &[]);
        let labels: Vec<(LoadMode, u32)> = levels
            .iter()
            .map(|l| (l.mode(), l.record_label()))
            .collect();
        assert_eq!(
            labels,
            [
                (LoadMode::Agents, 2),
                (LoadMode::JobRate, 1),
                (LoadMode::JobRate, 2)
            ]
        );
        // 0.5 jobs/s for 4 s, Poisson: a seeded count of jobs, each of the fixture's 10 calls.
        let rate = &levels[1].load;
        assert_eq!(rate.arrivals(), Some(infermeter_report::Arrivals::Poisson));
        let calls = rate.expected_requests().unwrap();
        assert!(calls > 0 && calls.is_multiple_of(10), "{calls}");
        assert_eq!(plan(&s, &[]).len(), 3);
        let applied = levels[2].load.applied(3, Some(4));
        assert_eq!((applied.concurrency, applied.job_rate), (5, Some(2.0)));
        let only = suite("rates = [1.0]\n").unwrap();
        assert_eq!(plan(&only, &[]).len(), 1);
        assert_eq!(only.quick().agents.unwrap().duration_s, 3.0);
        let err = suite("jobs = 2\n").unwrap_err();
        assert!(
            err.contains("needs levels") && err.contains("or rates"),
            "{err}"
        );
        let err = suite("rates = [2.0, 1.0]\n").unwrap_err();
        assert!(err.contains("rates must be increasing positive"), "{err}");
    }

    #[test]
    fn a_broken_section_is_refused_naming_what_to_fix() {
        let err = suite("levels = [4, 1]\n").unwrap_err();
        assert!(err.contains("[agents] levels must be increasing"), "{err}");
        let err = suite("levels = [1]\nspeed = 0.0\n").unwrap_err();
        assert!(err.contains("speed must be a positive number"), "{err}");
        let err = suite("levels = [1]\nformat = \"mooncake\"\n").unwrap_err();
        assert!(
            err.contains("format \"mooncake\" is not one infermeter reads"),
            "{err}"
        );
        let err = suite("levels = [1]\nformat = \"generated\"\n").unwrap_err();
        assert!(err.contains("drop source"), "{err}");
        // A cc-traces file read as Bailian JSONL: refused, naming the file.
        let err = suite("levels = [1]\nformat = \"bailian\"\n").unwrap_err();
        assert!(err.contains("subagents.json"), "{err}");
    }

    #[test]
    fn without_a_source_the_jobs_are_generated_from_the_seed() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = "name = \"g\"\n[agents]\nlevels = [2]\njobs = 5\nseed = 9\n\
            [agents.generate]\nturns = 2\nspawn_chance = 1.0\nsubagents = 1\nmax_depth = 1\n";
        let parse = || Suite::parse(text, "g.toml", dir).unwrap();
        let s = parse();
        s.check().unwrap();
        let source = s.scenarios[0].agents.as_ref().unwrap();
        assert_eq!((source.format.as_str(), source.jobs), ("generated", 5));
        // Root: 2 calls, the first spawning one subagent of 2 calls.
        assert_eq!((source.agents, source.calls, source.max_depth), (10, 20, 1));
        assert_eq!(s.loaded_jobs, parse().loaded_jobs);
        let err = Suite::parse(
            &text.replace("[agents]\n", "[agents]\nformat = \"cc-traces\"\n"),
            "g.toml",
            dir,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("give source"), "{err}");
    }
}
