//! What a level's requests were asked to be, and the warnings a level deserves when what it
//! measured differs. The collector's run and `infermeter merge` both word them here, so a
//! merged report warns as one run would.

use crate::schema::{CacheUse, Level, Outcome, RequestRecord, Scenario};

/// Tokens a chat template may add to a session's first turn (system and user message, the
/// assistant's opening): ChatML adds 13, Llama-style templates about 15.
const SESSION_TEMPLATE_ALLOWANCE: f64 = 24.0;

/// What a level's requests were meant to be, for its warnings.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub scenario: &'a Scenario,
    /// The suite's `prompt_caching` (single-request scenarios).
    pub prompt_caching: bool,
    /// A session level's cache use.
    pub cache: Option<CacheUse>,
    /// A replayed trace's (input, output) tokens per line, by request index: each line says
    /// its own lengths (a line not listed is not checked: `Some(&[])` where the trace's lines
    /// are not at hand, as in a merge, whose shards checked them). None for a level that
    /// replays no trace.
    pub trace_lengths: Option<&'a [(u32, u32)]>,
}

impl Expected<'_> {
    /// The input and output lengths asked of `r`, where known; no input length for a
    /// conversation's later turn (it carries the answers as they came).
    fn lengths(&self, r: &RequestRecord) -> (Option<u32>, Option<u32>) {
        if let Some(lines) = self.trace_lengths {
            return match lines.get(r.index as usize) {
                Some(&(input, output)) => (Some(input), Some(output)),
                None => (None, None),
            };
        }
        let input = match r.session {
            Some(s) if s.turn > 1 => None,
            _ => Some(self.scenario.input_tokens),
        };
        (input, Some(self.scenario.output_tokens))
    }

    /// How far `r`'s input may be from the length asked: 2% and 2 tokens; a session's first
    /// turn counts its messages' text, so its chat template may add a few tokens per message.
    fn input_slack(&self, r: &RequestRecord, target: f64) -> f64 {
        let template = if r.session.is_some() && self.trace_lengths.is_none() {
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
            None => self.prompt_caching || self.trace_lengths.is_some(),
        }
    }
}

/// Warnings about what a level's requests (`records`, warmups excluded by the caller) measured
/// versus what was `expected`, and about the level's figures; `label` names the level.
pub fn warnings(
    label: &str,
    expected: &Expected<'_>,
    records: &[&RequestRecord],
    level: &Level,
) -> Vec<String> {
    let ok: Vec<&RequestRecord> = records
        .iter()
        .copied()
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
        .filter(|r| match (r.output_tokens, expected.lengths(r).1) {
            (Some(n), Some(asked)) => n != asked,
            _ => false,
        })
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
    warnings
}
