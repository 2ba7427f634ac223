//! The suite's multi-turn and replayed workloads: `[[session]]` scenarios with the `[users]`
//! and `[sessions]` load modes, and a `[trace]` to replay. Their scenarios join the suite's
//! own once the file is read.

use std::path::{Path, PathBuf};

use infermeter_report::{Arrivals, CacheUse, Scenario, SessionShape, ThinkTime};
use serde::Deserialize;

use super::scenarios::TableError;
use super::{default_arrivals, Suite, SuiteError};
use crate::prompts::think::think_time_ok;
use crate::prompts::trace::Trace;

/// A `[[session]]` table: a conversation's shape.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionTable {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub system_prompt_tokens: u32,
    pub first_turn_tokens: u32,
    pub turn_tokens: u32,
    pub turns: u32,
    pub output_tokens: u32,
    pub think_time: ThinkTime,
}

impl SessionTable {
    pub fn to_scenario(&self) -> Scenario {
        Scenario {
            id: self.id.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            input_tokens: self.system_prompt_tokens + self.first_turn_tokens,
            output_tokens: self.output_tokens,
            session: Some(SessionShape {
                system_prompt_tokens: self.system_prompt_tokens,
                first_turn_tokens: self.first_turn_tokens,
                turn_tokens: self.turn_tokens,
                turns: self.turns,
                think_time: self.think_time,
            }),
            trace: None,
            prompts: None,
            lengths: None,
            agents: None,
        }
    }
}

/// `[users]`: N simultaneous users, each a closed loop of sessions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsersPlan {
    /// Simultaneous users, one level each, increasing.
    pub levels: Vec<u32>,
    /// Sessions each user runs, one after another.
    #[serde(default = "one")]
    pub sessions_per_user: u32,
    /// Which cache uses to measure, each a series of its own.
    #[serde(default = "both")]
    pub cache: Vec<CacheUse>,
    #[serde(default)]
    pub seed: u64,
}

/// `[sessions]`: new sessions arriving open-loop at rates.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRatePlan {
    /// New sessions per second, one level each, increasing.
    pub rates: Vec<f64>,
    #[serde(default = "default_arrivals")]
    pub arrivals: Arrivals,
    /// How long each rate is offered, seconds (sessions then finish their turns).
    pub duration_s: f64,
    #[serde(default = "both")]
    pub cache: Vec<CacheUse>,
    #[serde(default)]
    pub seed: u64,
}

/// `[trace]`: a JSONL trace to replay (relative to the suite file), at each speed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub file: PathBuf,
    /// Time compression per level: 2 replays twice as fast.
    #[serde(default = "unit_speed")]
    pub speeds: Vec<f64>,
}

fn one() -> u32 {
    1
}
fn both() -> Vec<CacheUse> {
    vec![CacheUse::Allowed, CacheUse::Defeated]
}
fn unit_speed() -> Vec<f64> {
    vec![1.0]
}

/// Most turns a session can have: a conversation's request ids number its turns with two
/// digits (prompts/conversation.rs).
pub const MAX_TURNS: u32 = 99;

/// Think times of a smoke run: at most this mean, seconds.
const QUICK_THINK_S: f64 = 0.5;

impl Suite {
    /// `chat-sessions`: the chat conversation of `presets::chat_session` for 1 to 64 users,
    /// with the prefix cache allowed and defeated.
    pub(super) fn chat_sessions() -> Suite {
        Suite {
            name: "chat-sessions".into(),
            prompt_caching: true,
            warmup: super::default_warmup(),
            scenario_tables: Vec::new(),
            scenarios: vec![infermeter_report::presets::chat_session()],
            sources: Vec::new(),
            session_tables: Vec::new(),
            peak: None,
            burst: None,
            rate: None,
            users: Some(UsersPlan {
                levels: vec![1, 2, 4, 8, 16, 32, 64],
                sessions_per_user: 1,
                cache: both(),
                seed: 0,
            }),
            session_rate: None,
            trace: None,
            loaded_trace: None,
            agents: None,
            loaded_jobs: None,
            search: None,
        }
    }

    /// A suite that only replays the trace at `file` at each of `speeds`.
    pub fn for_trace(file: &Path, speeds: Vec<f64>) -> Result<Suite, SuiteError> {
        let mut suite = Suite {
            name: format!("trace {}", file.display()),
            prompt_caching: true,
            warmup: super::default_warmup(),
            scenario_tables: Vec::new(),
            scenarios: Vec::new(),
            sources: Vec::new(),
            session_tables: Vec::new(),
            peak: None,
            burst: None,
            rate: None,
            users: None,
            session_rate: None,
            trace: Some(TraceSpec {
                file: file.to_path_buf(),
                speeds,
            }),
            loaded_trace: None,
            agents: None,
            loaded_jobs: None,
            search: None,
        };
        suite.read_workloads(Path::new("."))?;
        suite.check()?;
        Ok(suite)
    }

    /// Adds the `[[session]]` tables and the `[trace]` (read from its file, relative to
    /// `dir`) to the scenarios.
    pub(super) fn read_workloads(&mut self, dir: &Path) -> Result<(), SuiteError> {
        for table in std::mem::take(&mut self.scenario_tables) {
            let (scenario, prompts) = table.read(dir).map_err(|e| match e {
                TableError::Source(e) => SuiteError::Prompts(e),
                invalid => SuiteError::Invalid(self.name.clone(), invalid.to_string()),
            })?;
            self.scenarios.push(scenario);
            self.sources.push(prompts);
        }
        let tables = std::mem::take(&mut self.session_tables);
        self.scenarios
            .extend(tables.iter().map(SessionTable::to_scenario));
        if let Some(spec) = &mut self.trace {
            if spec.file.is_relative() {
                spec.file = dir.join(&spec.file);
            }
            let trace = Trace::read(&spec.file)
                .map_err(|e| SuiteError::Invalid(self.name.clone(), e.to_string()))?;
            self.scenarios.push(trace.scenario());
            self.loaded_trace = Some(trace);
        }
        self.read_agents(dir)
    }

    /// Why the session and trace parts cannot run, if they cannot.
    pub(super) fn check_workloads(&self) -> Result<(), String> {
        for s in &self.scenarios {
            let Some(shape) = &s.session else { continue };
            let think_ok = think_time_ok(&shape.think_time);
            if shape.turns == 0 || shape.turns > MAX_TURNS {
                return Err(format!(
                    "session \"{}\" needs turns between 1 and {MAX_TURNS}",
                    s.id
                ));
            }
            if shape.first_turn_tokens == 0 || shape.turn_tokens == 0 {
                return Err(format!(
                    "session \"{}\" needs first_turn_tokens and turn_tokens of at least 1",
                    s.id
                ));
            }
            if !think_ok {
                return Err(format!("session \"{}\": think_time needs a finite, non-negative mean (and sigma for lognormal)", s.id));
            }
        }
        let has_sessions = self.scenarios.iter().any(|s| s.session.is_some());
        let session_modes = self.users.is_some() || self.session_rate.is_some();
        if has_sessions && !session_modes {
            return Err("defines [[session]] but no [users] or [sessions] to run it".into());
        }
        if session_modes && !has_sessions {
            return Err("defines [users] or [sessions] but no [[session]] to run".into());
        }
        if let Some(u) = &self.users {
            if !increasing(&u.levels) || u.sessions_per_user == 0 || u.cache.is_empty() {
                return Err("[users] levels must be increasing and at least 1, sessions_per_user at least 1, cache not empty".into());
            }
        }
        if let Some(r) = &self.session_rate {
            let ok = increasing_rates(&r.rates) && r.duration_s > 0.0 && !r.cache.is_empty();
            if !ok {
                return Err("[sessions] rates must be increasing positive numbers, duration_s positive, cache not empty".into());
            }
        }
        if let Some(t) = &self.trace {
            let ok = !t.speeds.is_empty()
                && t.speeds.iter().all(|x| x.is_finite() && *x > 0.0)
                && t.speeds.windows(2).all(|w| w[0] < w[1]);
            if !ok {
                return Err("[trace] speeds must be increasing positive numbers".into());
            }
        }
        Ok(())
    }

    /// The smoke run's sessions: the first, middle and last user counts, one session each,
    /// two session rates for at most 3 s, think times of at most a half-second mean.
    pub(super) fn quick_workloads(&mut self) {
        if let Some(a) = &mut self.agents {
            let mut kept: Vec<u32> = [a.levels.first(), a.levels.last()]
                .into_iter()
                .flatten()
                .copied()
                .collect();
            kept.dedup();
            a.levels = kept;
            a.rates.truncate(2);
            a.duration_s = a.duration_s.min(3.0);
            a.max_wait_s = Some(a.max_wait_s.map_or(QUICK_THINK_S, |c| c.min(QUICK_THINK_S)));
        }
        if let Some(u) = &mut self.users {
            let levels = &u.levels;
            let mut kept = vec![
                levels[0],
                levels[levels.len() / 2],
                levels[levels.len() - 1],
            ];
            kept.dedup();
            u.levels = kept;
            u.sessions_per_user = 1;
        }
        if let Some(r) = &mut self.session_rate {
            r.rates.truncate(2);
            r.duration_s = r.duration_s.min(3.0);
        }
        for s in &mut self.scenarios {
            if let Some(shape) = &mut s.session {
                shape.think_time = shape.think_time.capped(QUICK_THINK_S);
            }
        }
    }
}

/// Non-empty, increasing, from at least 1.
pub(super) fn increasing(levels: &[u32]) -> bool {
    !levels.is_empty() && levels[0] > 0 && levels.windows(2).all(|w| w[0] < w[1])
}

/// Whether `rates` are some increasing positive (finite) numbers.
pub(super) fn increasing_rates(rates: &[f64]) -> bool {
    !rates.is_empty()
        && rates.iter().all(|x| x.is_finite() && *x > 0.0)
        && rates.windows(2).all(|w| w[0] < w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_sessions_is_the_acceptance_conversation() {
        let suite = Suite::load("chat-sessions").unwrap();
        let [s] = &suite.scenarios[..] else { panic!() };
        let shape = s.session.as_ref().unwrap();
        assert_eq!(
            (
                shape.system_prompt_tokens,
                shape.turn_tokens,
                shape.turns,
                s.output_tokens
            ),
            (1024, 200, 5, 256)
        );
        assert_eq!(shape.think_time, ThinkTime::Exponential { mean_s: 5.0 });
        let users = suite.users.as_ref().unwrap();
        assert_eq!(users.levels, [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(users.cache, both());
        let quick = suite.quick();
        assert_eq!(quick.users.as_ref().unwrap().levels, [1, 8, 64]);
        let think = quick.scenarios[0].session.as_ref().unwrap().think_time;
        assert_eq!(think, ThinkTime::Exponential { mean_s: 0.5 });
    }

    #[test]
    fn session_tables_become_scenarios_and_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        let suite = |body: &str| {
            std::fs::write(&path, format!("name = 's'\n{body}")).unwrap();
            Suite::load(path.to_str().unwrap())
        };
        let table = "[[session]]\nid = 'c'\nname = 'C'\nfirst_turn_tokens = 50\nturn_tokens = 20\n\
                     turns = 3\noutput_tokens = 8\nthink_time = { distribution = 'lognormal', mean_s = 1.0, sigma = 0.5 }\n";
        let ok = suite(&format!(
            "{table}[users]\nlevels = [1, 2]\ncache = ['allowed']\n"
        ))
        .unwrap();
        assert_eq!(ok.scenarios[0].input_tokens, 50);
        assert_eq!(ok.users.unwrap().cache, [CacheUse::Allowed]);
        let err = suite(table).unwrap_err().to_string();
        assert!(err.contains("no [users] or [sessions]"), "{err}");
        let err = suite(&format!(
            "{}[users]\nlevels = [1]\n",
            table.replace("turns = 3", "turns = 0")
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("turns between 1 and 99"), "{err}");
        let err = suite(&format!(
            "{}[users]\nlevels = [1]\n",
            table.replace("'lognormal'", "'gamma'")
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("not valid"), "{err}");
    }
}
