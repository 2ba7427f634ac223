//! One measured level: its trials as the scheduler ran them, with what the side channels saw
//! meanwhile, reduced to the report's `Level` and the warnings it deserves.

use infermeter_report::aggregate::{self, Trial};
use infermeter_report::{
    CacheUse, ClientHealth, Level, Outcome, PowerStats, RequestRecord, Scenario, ServerMetrics,
    Timeline, TokenSource, TraceLevel,
};

use super::plan::PlannedLevel;
use crate::arrival::{ClockCounts, MIXED_CLOCKS};
use crate::scheduler::{LevelRun, Load};
use crate::trace::Trace;

/// Tokens a chat template may add to a session's first turn (system and user message, the
/// assistant's opening): ChatML adds 13, Llama-style templates about 15.
const SESSION_TEMPLATE_ALLOWANCE: f64 = 24.0;

/// What a level's requests were meant to be, for its warnings.
pub struct Expected<'a> {
    pub scenario: &'a Scenario,
    /// The suite's `prompt_caching` (single-request scenarios).
    pub prompt_caching: bool,
    /// A session level's cache use.
    pub cache: Option<CacheUse>,
    /// The trace a trace level replays: each line says its own lengths.
    pub trace: Option<&'a Trace>,
}

impl Expected<'_> {
    /// The input and output lengths asked of `r`; no input length for a conversation's later
    /// turn (it carries the answers as they came).
    fn lengths(&self, r: &RequestRecord) -> (Option<u32>, u32) {
        if let Some(line) = self.trace.and_then(|t| t.lines.get(r.index as usize)) {
            return (Some(line.input_tokens), line.output_tokens);
        }
        let input = match r.session {
            Some(s) if s.turn > 1 => None,
            _ => Some(self.scenario.input_tokens),
        };
        (input, self.scenario.output_tokens)
    }

    /// How far `r`'s input may be from the length asked: 2% and 2 tokens; a session's first
    /// turn counts its messages' text, so its chat template may add a few tokens per message.
    fn input_slack(&self, r: &RequestRecord, target: f64) -> f64 {
        let template = if r.session.is_some() && self.trace.is_none() {
            SESSION_TEMPLATE_ALLOWANCE
        } else {
            0.0
        };
        target * 0.02 + 2.0 + template
    }

    /// Whether cached prompt tokens are a surprise.
    fn cache_expected(&self) -> bool {
        match self.cache {
            Some(cache) => cache == CacheUse::Allowed,
            None => self.prompt_caching || self.trace.is_some(),
        }
    }
}

pub struct Measured {
    /// One per trial, in order; the last may have been cut short by a stop.
    pub runs: Vec<LevelRun>,
    /// The server's `/metrics` over the level, when it has them.
    pub server: Option<ServerMetrics>,
    pub power: Option<PowerStats>,
}

impl Measured {
    /// Whether a stop cut the level short.
    pub fn interrupted(&self) -> bool {
        self.runs.iter().any(|r| r.interrupted)
    }

    /// Where the output token counts came from, as the first trial that had a success says.
    pub fn token_source(&self) -> Option<TokenSource> {
        self.runs.iter().find_map(|r| r.token_source)
    }

    fn trials(&self) -> Vec<Trial<'_>> {
        self.runs
            .iter()
            .map(|r| Trial {
                records: &r.records,
                window: r.window,
            })
            .collect()
    }

    /// Which clock stamped the events, over every trial.
    fn clocks(&self) -> ClockCounts {
        self.runs
            .iter()
            .fold(ClockCounts::default(), |all, r| all.merge(r.clocks))
    }

    /// The level's figures: the records' statistics (pooled over trials), the server's own
    /// speeds where the engine reports them, power and the client's health. `previous` is the
    /// report concurrency of the series' last level.
    pub fn level(&self, planned: &PlannedLevel, previous: Option<u32>) -> Level {
        let trials = self.trials();
        let max_in_flight = self.runs.iter().map(|r| r.max_in_flight).max();
        let concurrency = planned.report_concurrency(max_in_flight.unwrap_or(1), previous);
        let mut level = aggregate::level(concurrency, planned.request_rate, &trials);
        level.server = match (self.server.clone(), aggregate::engine_speeds(&trials)) {
            (Some(scraped), Some(speeds)) => Some(ServerMetrics {
                engine_prefill_tok_s: speeds.engine_prefill_tok_s,
                engine_decode_tok_s: speeds.engine_decode_tok_s,
                ..scraped
            }),
            (scraped, speeds) => scraped.or(speeds),
        };
        level.power = self.power.clone();
        level.client = self.runs.last().map(|r| ClientHealth {
            // Over every trial, not just the last.
            event_clock: self.clocks().summary().map(str::to_string),
            ..r.client.clone()
        });
        match planned.load {
            Load::Sessions(s) => {
                if let Some(sessions) = &mut level.sessions {
                    sessions.session_rate = Some(s.rate);
                }
            }
            Load::Trace { speed } => level.trace = Some(TraceLevel { speed }),
            _ => {}
        }
        level
    }

    /// The level's timeline in slices of `slice_s` seconds.
    pub fn timeline(&self, slice_s: f64) -> Option<Timeline> {
        aggregate::timeline(&self.trials(), slice_s)
    }

    /// Warnings about what the level measured versus what was asked.
    pub fn warnings(&self, label: &str, expected: &Expected<'_>, level: &Level) -> Vec<String> {
        let ok: Vec<&RequestRecord> = self
            .runs
            .iter()
            .flat_map(|r| r.records.iter())
            .filter(|r| r.outcome == Outcome::Ok)
            .collect();
        let mut warnings = Vec::new();
        let cached = ok
            .iter()
            .filter(|r| r.cached_tokens.unwrap_or(0) > 0)
            .count();
        if cached > 0 && !expected.cache_expected() {
            let why = match expected.cache {
                Some(CacheUse::Defeated) => "with caching defeated",
                _ => "in a no-cache suite",
            };
            warnings.push(format!(
                "{label}: {cached} request(s) reported cached prompt tokens {why}; TTFT may be optimistic"
            ));
        }
        let wrong_output = ok
            .iter()
            .filter(|r| r.output_tokens.is_some_and(|n| n != expected.lengths(r).1))
            .count();
        if wrong_output > 0 {
            warnings.push(format!(
                "{label}: {wrong_output} request(s) produced a different number of output tokens than asked (the engine may ignore ignore_eos/min_tokens)"
            ));
        }
        let off_input = ok
            .iter()
            .filter(|r| match (r.input_tokens, expected.lengths(r).0) {
                (Some(n), Some(target)) => {
                    let target = f64::from(target);
                    (f64::from(n) - target).abs() > expected.input_slack(r, target)
                }
                _ => false,
            })
            .count();
        if off_input > 0 {
            warnings.push(format!(
                "{label}: {off_input} request(s) had an input length more than 2% away from the length asked; pass --tokenizer (the model's tokenizer.json) for exact prompts"
            ));
        }
        if level.client.as_ref().is_some_and(|c| c.distorted) {
            warnings.push(format!(
                "{label}: the client sent requests late (scheduling lag p99 above 5 ms); its figures may be distorted"
            ));
        }
        if level.requests.ok == 0 && level.requests.total() > 0 {
            warnings.push(format!("{label}: every request failed"));
        }
        let clocks = self.clocks();
        if clocks.summary() == Some(MIXED_CLOCKS) {
            warnings.push(format!(
                "{label}: {} of {} request(s) were timed when parsed, not by the kernel's receive timestamp",
                clocks.parse,
                clocks.parse + clocks.kernel_receive
            ));
        }
        warnings
    }
}
