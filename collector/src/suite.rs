//! Suites: which scenarios run under which load modes at which levels. Built-in suites take
//! their scenario shapes from `infermeter_report::presets`; custom suites come from TOML.
//! Sessions and traces: [`workloads`]; agentic jobs: [`agents`].

pub mod agents;
mod scenarios;
pub mod spec;
mod workloads;

use std::path::Path;

use infermeter_report::presets::{
    ScenarioPreset, CAPACITY_SCENARIOS, CONTEXT_SWEEP, FOUR_SCENARIOS,
};
use infermeter_report::{Arrivals, Scenario, Slo};
use serde::Deserialize;

use crate::prompts::jobs::JobSet;
use crate::prompts::source::{PromptFile, PromptSpec, SourceError};
use crate::prompts::trace::Trace;
use crate::suite::spec::{parse_slo, SearchSpec, SpecError};
use agents::AgentsSpec;
pub use scenarios::ScenarioPrompts;
use scenarios::ScenarioTable;
use std::sync::Arc;
pub use workloads::{SessionRatePlan, TraceSpec, UsersPlan};

/// A complete run plan.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub name: String,
    /// Whether prompts may share a prefix (false: every prompt starts unique, no cache can help).
    #[serde(default)]
    pub prompt_caching: bool,
    /// Sequential warmup requests per scenario, excluded from statistics.
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    /// `[[scenario]]` tables as read; [`Suite::parse`] makes them `scenarios`.
    #[serde(rename = "scenario", default)]
    scenario_tables: Vec<ScenarioTable>,
    /// Every scenario: the `[[scenario]]` tables, then the `[[session]]` ones and the trace's.
    #[serde(skip)]
    pub scenarios: Vec<Scenario>,
    /// Each scenario's prompt file, by scenario index (none: generated prompts).
    #[serde(skip)]
    pub sources: Vec<Option<ScenarioPrompts>>,
    /// `[[session]]` tables as read; [`Suite::load`] moves them into `scenarios`.
    #[serde(rename = "session", default)]
    session_tables: Vec<workloads::SessionTable>,
    #[serde(default)]
    pub peak: Option<PeakPlan>,
    #[serde(default)]
    pub burst: Option<BurstPlan>,
    #[serde(default)]
    pub rate: Option<RatePlan>,
    /// Session scenarios for N simultaneous users.
    #[serde(default)]
    pub users: Option<UsersPlan>,
    /// Session scenarios arriving at rates.
    #[serde(default, rename = "sessions")]
    pub session_rate: Option<SessionRatePlan>,
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// The `[trace]` as read from its file.
    #[serde(skip)]
    pub loaded_trace: Option<Trace>,
    /// Agentic jobs at numbers of concurrent jobs.
    #[serde(default)]
    pub agents: Option<AgentsSpec>,
    /// The `[agents]` jobs as read from their source.
    #[serde(skip)]
    pub loaded_jobs: Option<Arc<JobSet>>,
    /// Search mode: probe levels until the SLO breaks instead of running a fixed list.
    #[serde(default)]
    pub search: Option<SearchPlan>,
}

/// A suite's `[search]`: the SLO and where to search (each key optional; `--search` and
/// `--slo` override them).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchPlan {
    /// `peak` (concurrency) or `burst` (queue depth).
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    #[serde(default)]
    pub resolution: Option<f64>,
    /// The SLO, as `--slo` writes it: "ttft=5s,tpot=50ms".
    #[serde(default)]
    pub slo: Option<String>,
}

impl SearchPlan {
    /// The settings it gives, as `--search` would.
    pub fn spec(&self) -> Result<SearchSpec, SpecError> {
        let mut spec = match &self.mode {
            Some(mode) => SearchSpec::parse(&format!("mode={mode}"))?,
            None => SearchSpec::default(),
        };
        spec.min = self.min;
        spec.max = self.max;
        spec.resolution = self.resolution;
        Ok(spec)
    }

    /// The SLO it gives, if any.
    pub fn slo(&self) -> Result<Option<Slo>, SpecError> {
        self.slo.as_deref().map(parse_slo).transpose()
    }
}

/// Closed loop: exactly N in flight.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeakPlan {
    /// Concurrencies, one level each (a search chooses its own).
    #[serde(default)]
    pub levels: Vec<u32>,
    /// A level runs until this many requests per slot finished inside the steady-state window...
    #[serde(default = "default_requests_per_slot")]
    pub requests_per_slot: u32,
    /// ...and at least this long.
    #[serde(default = "default_min_seconds")]
    pub min_seconds: f64,
}

impl Default for PeakPlan {
    /// No levels, and the defaults of each level's length.
    fn default() -> Self {
        PeakPlan {
            levels: Vec::new(),
            requests_per_slot: default_requests_per_slot(),
            min_seconds: default_min_seconds(),
        }
    }
}

/// N sent at once, drained.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstPlan {
    pub levels: Vec<u32>,
}

/// Open-loop arrivals at fixed rates.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatePlan {
    /// Requests per second, one level each.
    pub rates: Vec<f64>,
    #[serde(default = "default_arrivals")]
    pub arrivals: Arrivals,
    /// How long each rate is offered, seconds.
    pub duration_s: f64,
    #[serde(default)]
    pub seed: u64,
}

pub(crate) fn default_warmup() -> u32 {
    2
}
fn default_requests_per_slot() -> u32 {
    3
}
fn default_min_seconds() -> f64 {
    30.0
}
pub(crate) fn default_arrivals() -> Arrivals {
    Arrivals::Poisson
}

/// Why a suite cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("suite \"{0}\" is neither a built-in suite (four-scenario, capacity, context-sweep, llama-cpu, chat-sessions) nor a readable file: {1}")]
    Unreadable(String, std::io::Error),
    #[error("suite file {0} is not valid: {1}")]
    Parse(String, toml::de::Error),
    #[error("suite \"{0}\": {1}")]
    Invalid(String, String),
    #[error(transparent)]
    Prompts(#[from] SourceError),
}

pub const PEAK_LEVELS: [u32; 7] = [1, 2, 4, 8, 16, 24, 32];
pub const BURST_LEVELS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

impl Suite {
    /// A built-in suite by name, or a TOML file.
    pub fn load(name_or_path: &str) -> Result<Suite, SuiteError> {
        let presets: Option<&[ScenarioPreset]> = match name_or_path {
            "four-scenario" => Some(&FOUR_SCENARIOS),
            "capacity" => Some(&CAPACITY_SCENARIOS),
            "context-sweep" => Some(&CONTEXT_SWEEP),
            _ => None,
        };
        let suite = match presets {
            Some(presets) => Suite::builtin(name_or_path, presets),
            None if name_or_path == "llama-cpu" => Suite::llama_cpu(),
            None if name_or_path == "chat-sessions" => Suite::chat_sessions(),
            None => {
                let path = Path::new(name_or_path);
                let text = std::fs::read_to_string(path)
                    .map_err(|e| SuiteError::Unreadable(name_or_path.into(), e))?;
                let dir = path.parent().unwrap_or(Path::new("."));
                Suite::parse(&text, name_or_path, dir)?
            }
        };
        suite.check()?;
        Ok(suite)
    }

    /// A suite from TOML `text` (`name`: where it came from, for errors), its prompt files,
    /// sessions and trace read from `dir`; not yet checked ([`Suite::load`] checks).
    pub fn parse(text: &str, name: &str, dir: &Path) -> Result<Suite, SuiteError> {
        let mut suite: Suite =
            toml::from_str(text).map_err(|e| SuiteError::Parse(name.into(), e))?;
        suite.read_workloads(dir)?;
        Ok(suite)
    }

    /// The prompt file of scenario `scenario`, if it has one.
    pub fn source(&self, scenario: usize) -> Option<&ScenarioPrompts> {
        self.sources.get(scenario)?.as_ref()
    }

    /// Gives every `[[scenario]]` without a prompt file of its own the prompts of `spec`
    /// (`--prompts`, relative to the working directory): a text file is cut to each scenario's
    /// lengths; a ShareGPT or JSONL file's prompts keep their own lengths, and the outputs are
    /// the scenario's.
    pub fn use_prompts(&mut self, spec: &PromptSpec) -> Result<(), SuiteError> {
        let file = std::sync::Arc::new(PromptFile::read(spec, Path::new("."))?);
        let prompts = ScenarioPrompts {
            spec: spec.clone(),
            file,
        };
        self.sources.resize(self.scenarios.len(), None);
        let mut used = 0;
        for (i, scenario) in self.scenarios.iter_mut().enumerate() {
            if !scenario.is_single() || self.sources[i].is_some() {
                continue;
            }
            let table = ScenarioTable::of(scenario, &prompts);
            *scenario = table.scenario(Some(&prompts)).map_err(|m| {
                SuiteError::Invalid(
                    self.name.clone(),
                    format!("scenario \"{}\": {m}", scenario.id),
                )
            })?;
            self.sources[i] = Some(prompts.clone());
            used += 1;
        }
        if used == 0 {
            return Err(SuiteError::Invalid(
                self.name.clone(),
                "--prompts applies to [[scenario]] tables without prompts of their own, and this suite has none".into(),
            ));
        }
        Ok(())
    }

    fn builtin(name: &str, presets: &[ScenarioPreset]) -> Suite {
        Suite {
            name: name.into(),
            prompt_caching: false,
            warmup: default_warmup(),
            scenario_tables: Vec::new(),
            scenarios: presets.iter().map(ScenarioPreset::to_scenario).collect(),
            sources: Vec::new(),
            session_tables: Vec::new(),
            peak: Some(PeakPlan {
                levels: PEAK_LEVELS.to_vec(),
                requests_per_slot: default_requests_per_slot(),
                min_seconds: default_min_seconds(),
            }),
            burst: Some(BurstPlan {
                levels: BURST_LEVELS.to_vec(),
            }),
            rate: None,
            search: None,
            users: None,
            session_rate: None,
            trace: None,
            loaded_trace: None,
            agents: None,
            loaded_jobs: None,
        }
    }

    /// A small engine on a CPU (llama.cpp's tiny-llama in `engines/llama-cpp`, 4 slots of 4,096
    /// tokens): inputs that prefill in well under a second to a few seconds, a short fixed
    /// reply, and levels up to twice the slots so the burst series shows queueing.
    fn llama_cpu() -> Suite {
        let scenario = |input_tokens: u32, name: &str| {
            Scenario::single(
                format!("cpu-{input_tokens}"),
                name,
                format!(
                    "{input_tokens} input tokens, 32 output tokens: sized for a small model on a CPU."
                ),
                input_tokens,
                32,
            )
        };
        Suite {
            name: "llama-cpu".into(),
            prompt_caching: false,
            warmup: default_warmup(),
            scenario_tables: Vec::new(),
            scenarios: vec![
                scenario(64, "Short prompt 64"),
                scenario(256, "Medium prompt 256"),
                scenario(1024, "Long prompt 1K"),
            ],
            sources: Vec::new(),
            session_tables: Vec::new(),
            peak: Some(PeakPlan {
                levels: vec![1, 2, 4],
                requests_per_slot: default_requests_per_slot(),
                min_seconds: 5.0,
            }),
            burst: Some(BurstPlan {
                levels: vec![1, 4, 8],
            }),
            rate: None,
            search: None,
            users: None,
            session_rate: None,
            trace: None,
            loaded_trace: None,
            agents: None,
            loaded_jobs: None,
        }
    }

    fn check(&self) -> Result<(), SuiteError> {
        let bad = |msg: String| Err(SuiteError::Invalid(self.name.clone(), msg));
        if self.scenarios.is_empty() {
            return bad("defines no [[scenario]], [[session]], [trace] or [agents]".into());
        }
        if let Err(message) = self.check_scenarios() {
            return bad(message);
        }
        let increasing = workloads::increasing;
        if let Some(search) = &self.search {
            search
                .spec()
                .and_then(|spec| spec.settle(&SearchSpec::default()))
                .map_err(|e| SuiteError::Invalid(self.name.clone(), format!("[search] {e}")))?;
            search.slo().map_err(|e| {
                SuiteError::Invalid(self.name.clone(), format!("[search] slo: {e}"))
            })?;
        }
        // A search sets its own levels: a [peak] then only gives each level's length.
        let peak_levels_needed = self.search.is_none();
        if let Some(p) = &self.peak {
            let levels_ok = increasing(&p.levels) || (p.levels.is_empty() && !peak_levels_needed);
            if !levels_ok || p.requests_per_slot == 0 {
                return bad(
                    "[peak] levels must be increasing and at least 1, requests_per_slot at least 1"
                        .into(),
                );
            }
        }
        if let Some(b) = &self.burst {
            if !increasing(&b.levels) {
                return bad("[burst] levels must be increasing and at least 1".into());
            }
        }
        if let Some(r) = &self.rate {
            let ok = workloads::increasing_rates(&r.rates) && r.duration_s > 0.0;
            if !ok {
                return bad(
                    "[rate] rates must be increasing positive numbers and duration_s positive"
                        .into(),
                );
            }
        }
        let single = self.peak.is_some()
            || self.burst.is_some()
            || self.rate.is_some()
            || self.search.is_some();
        let plain = self.scenarios.iter().any(Scenario::is_single);
        if plain && !single {
            return bad(
                "defines no load mode for its [[scenario]]: add [peak], [burst], [rate] or [search]"
                    .into(),
            );
        }
        if single && !plain {
            return bad(
                "defines [peak], [burst], [rate] or [search] but no [[scenario]] for them".into(),
            );
        }
        if let Some(Err(message)) = self.agents.as_ref().map(AgentsSpec::check) {
            return bad(message);
        }
        if let Err(message) = self.check_workloads() {
            return bad(message);
        }
        Ok(())
    }

    /// Unique scenario ids, and lengths of at least one token (a dataset's are known once its
    /// prompts are counted).
    fn check_scenarios(&self) -> Result<(), String> {
        let mut ids = std::collections::BTreeSet::new();
        for s in &self.scenarios {
            if !ids.insert(&s.id) {
                return Err(format!("scenario id \"{}\" appears twice", s.id));
            }
            let dataset = s.lengths.as_ref().is_some_and(|l| {
                [l.input, l.output].contains(&infermeter_report::LengthDistribution::Dataset)
            });
            if !dataset && (s.input_tokens == 0 || s.output_tokens == 0) {
                return Err(format!(
                    "scenario \"{}\" needs input_tokens and output_tokens of at least 1",
                    s.id
                ));
            }
        }
        Ok(())
    }

    /// Whether scenario `scenario` sends single requests (the peak, burst and rate modes'),
    /// rather than conversations or a trace's lines.
    pub fn is_single(&self, scenario: usize) -> bool {
        self.scenarios[scenario].is_single()
    }

    /// A smoke-run version: same token lengths, fewer levels, fewer and shorter requests.
    pub fn quick(mut self) -> Suite {
        let thin = |levels: &[u32]| -> Vec<u32> {
            let mut kept: Vec<u32> = levels.iter().copied().step_by(2).take(3).collect();
            kept.dedup();
            kept
        };
        self.warmup = self.warmup.min(1);
        if let Some(p) = &mut self.peak {
            p.levels = thin(&p.levels);
            p.requests_per_slot = 1;
            p.min_seconds = 0.0;
        }
        if let Some(b) = &mut self.burst {
            b.levels = thin(&b.levels);
        }
        if let Some(r) = &mut self.rate {
            r.rates.truncate(2);
            r.duration_s = r.duration_s.min(3.0);
        }
        self.quick_workloads();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_suites_match_the_reference_shapes() {
        let four = Suite::load("four-scenario").unwrap();
        let inputs: Vec<u32> = four.scenarios.iter().map(|s| s.input_tokens).collect();
        assert_eq!(inputs, [1024, 4096, 16384, 32768]);
        assert!(four.scenarios.iter().all(|s| s.output_tokens == 256));
        assert_eq!(four.peak.as_ref().unwrap().levels, PEAK_LEVELS);
        let sweep = Suite::load("context-sweep").unwrap();
        assert_eq!(sweep.scenarios.len(), 8);
    }

    #[test]
    fn llama_cpu_fits_four_slots_of_4k() {
        let cpu = Suite::load("llama-cpu").unwrap();
        let inputs: Vec<u32> = cpu.scenarios.iter().map(|s| s.input_tokens).collect();
        assert_eq!(inputs, [64, 256, 1024]);
        assert!(cpu.scenarios.iter().all(|s| s.output_tokens == 32));
        assert_eq!(cpu.peak.as_ref().unwrap().levels, [1, 2, 4]);
        assert_eq!(cpu.burst.as_ref().unwrap().levels, [1, 4, 8]);
        let quick = cpu.quick();
        assert_eq!(quick.peak.as_ref().unwrap().levels, [1, 4]);
        assert_eq!(quick.burst.as_ref().unwrap().levels, [1, 8]);
    }

    #[test]
    fn quick_keeps_token_lengths() {
        let full = Suite::load("capacity").unwrap();
        let quick = full.clone().quick();
        assert_eq!(quick.scenarios, full.scenarios);
        assert_eq!(quick.peak.as_ref().unwrap().levels, [1, 4, 16]);
        assert_eq!(quick.burst.as_ref().unwrap().levels, [1, 4, 16]);
    }

    #[test]
    fn example_file_parses() {
        // Read at run time: a build cache shared by checkouts can hold this binary built in
        // another one, and cargo does not rebuild it for a path change alone.
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
        let suite = Suite::load(&format!("{dir}/suites/example.toml")).unwrap();
        assert_eq!(suite.name, "example");
        assert!(suite.rate.is_some());
        let sessions = Suite::load(&format!("{dir}/suites/sessions.toml")).unwrap();
        let ids: Vec<&str> = sessions.scenarios.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["chat", "agent"]);
        assert!(sessions.scenarios.iter().all(|s| s.session.is_some()));
        assert_eq!(sessions.session_rate.unwrap().rates, [0.5, 1.0]);
    }

    #[test]
    fn a_search_suite_needs_no_levels() {
        let suite: Suite = Suite::parse(
            "name='s'\n[[scenario]]\nid='a'\nname='A'\ninput_tokens=8\noutput_tokens=8\n\
             [peak]\nrequests_per_slot=2\nmin_seconds=0\n\
             [search]\nmode='peak'\nmax=64\nslo='ttft=2s,target=90%'\n",
            "test",
            std::path::Path::new("."),
        )
        .unwrap();
        suite.check().unwrap();
        let search = suite.search.as_ref().unwrap();
        assert_eq!(search.spec().unwrap().max, Some(64.0));
        assert_eq!(search.slo().unwrap().unwrap().target, 0.9);
        let bad: Suite = Suite::parse(
            "name='s'\n[[scenario]]\nid='a'\nname='A'\ninput_tokens=8\noutput_tokens=8\n\
             [search]\nslo='ttft=soon'\n",
            "test",
            std::path::Path::new("."),
        )
        .unwrap();
        let err = bad.check().unwrap_err().to_string();
        assert!(err.contains("[search] slo: ttft=soon"), "{err}");
    }

    #[test]
    fn bad_suites_are_explained() {
        let err = Suite::load("no-such-suite").unwrap_err().to_string();
        assert!(err.contains("built-in"), "{err}");
        let err = Suite::parse(
            "name='x'\n[[scenario]]\nid='a'\nname='A'\ninput_tokens=1\noutput_tokens=0\n[burst]\nlevels=[1]",
            "test",
            std::path::Path::new("."),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("scenario \"a\": output_tokens"), "{err}");
    }
}
