//! What a level's requests were asked to be, and the warnings a level deserves when what it
//! measured differs. The collector's run and `infermeter merge` both word them here, so a
//! merged report warns as one run would.

use std::collections::BTreeSet;

use crate::lengths::Spread;
use crate::schema::{
    CacheUse, LengthDistribution, Level, Outcome, OutputStop, RequestRecord, Scenario,
};

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
        // A request asked lengths of its own: its input exactly, its output unless the model
        // was left to stop.
        if let Some(asked) = r.asked {
            let output = (!asked.natural).then_some(asked.output_tokens);
            return (Some(asked.input_tokens), output);
        }
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
    warnings.extend(drawn_lengths(label, expected.scenario, &ok));
    warnings.extend(reused_prompts(label, expected.scenario, records));
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

/// A request's length asked and the length it got, on one side (input or output).
type AskedAndGot = fn(&RequestRecord) -> Option<(u32, u32)>;

/// Warnings where a level's lengths miss the distributions its scenario asked (`ok`: its
/// successful requests): too few requests to follow a wide distribution, a server that cut
/// prompts or answers, or answers the model ended before the lengths asked (natural stop).
fn drawn_lengths(label: &str, scenario: &Scenario, ok: &[&RequestRecord]) -> Vec<String> {
    let Some(plan) = &scenario.lengths else {
        return Vec::new();
    };
    // A conversation's later turns carry the answers as they came: only single requests.
    let asked: Vec<&RequestRecord> = ok
        .iter()
        .copied()
        .filter(|r| r.asked.is_some() && r.session.is_none())
        .collect();
    let sides: [(&str, &LengthDistribution, AskedAndGot); 2] = [
        ("input", &plan.input, |r| {
            Some((r.asked?.input_tokens, r.input_tokens?))
        }),
        ("output", &plan.output, |r| {
            Some((r.asked?.output_tokens, r.output_tokens?))
        }),
    ];
    let mut warnings = Vec::new();
    for (side, distribution, pair) in sides {
        let pairs: Vec<(u32, u32)> = asked.iter().filter_map(|r| pair(r)).collect();
        let (Some(realised), Some(drawn)) = (
            Spread::of(pairs.iter().map(|p| p.1)),
            Spread::of(pairs.iter().map(|p| p.0)),
        ) else {
            continue;
        };
        // A dataset's lengths are the ones its requests were asked.
        let (mean, stddev) = distribution.moments().unwrap_or((drawn.mean, drawn.stddev));
        if !realised.misses(mean, stddev) {
            continue;
        }
        let natural = side == "output" && plan.output_stop == OutputStop::Natural;
        let why = if natural {
            "; the model stopped its answers where it chose (natural stop)"
        } else {
            ""
        };
        warnings.push(format!(
            "{label}: {side} lengths were {} over {} request(s), against {} asked (mean {mean:.0}){why}",
            realised.text(),
            realised.count,
            distribution.text(),
        ));
    }
    warnings
}

/// A warning where a level (without replacement) sent one of its file's prompts more than once:
/// it sent more requests than the run drew prompts.
fn reused_prompts(label: &str, scenario: &Scenario, records: &[&RequestRecord]) -> Option<String> {
    let source = scenario.prompts.as_ref().filter(|p| !p.replacement)?;
    let mut seen = BTreeSet::new();
    let again = records
        .iter()
        .filter(|r| r.session.is_none())
        .filter_map(|r| Some((r.trial, r.asked?.prompt?)))
        .filter(|key| !seen.insert(*key))
        .count();
    (again > 0).then(|| {
        format!(
            "{label}: {again} request(s) sent a prompt of {} that an earlier request of the level had sent: the level sent more requests than the {} prompts drawn (each carried an id of its own, so no prefix cache served it); raise count or widen the filters",
            source.file, source.used
        )
    })
}
