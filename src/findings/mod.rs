//! The finding sentences under the charts, in the published reports' words. Each reads one
//! report's [`Findings`] (computed in `report::analysis::findings`) and words it: nothing here
//! finds an extreme or computes a figure, so a sentence and a highlight card that state the same
//! figure read one value.

pub mod burst;
pub mod capacity;
pub mod context;
pub mod fastest;
pub mod goodput;
pub mod power;
pub mod throughput;
pub mod users;

use infermeter_report::analysis::findings::{Located, Range};
use infermeter_report::presets::Band;

pub use infermeter_report::analysis::Findings;

/// A finding of one report: its sentence(s), `None` when the report lacks the figure.
pub type Finding = fn(&Findings) -> Option<String>;

/// How a sentence says where a figure was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// By scenario and load: "Chatbot, single user", "Chatbot, 256 queue depth".
    Scenario,
    /// By load and context, as the deep dive's lines by context length: "5 concurrent, 96K
    /// context".
    Context,
}

impl Place {
    pub fn of(self, at: &Located) -> String {
        match self {
            Place::Scenario => format!("{}, {}", at.scenario_name, at.load_phrase()),
            Place::Context => format!("{}, {}", concurrent(at), at.context_phrase()),
        }
    }

    /// What the lines of a spread at one load (or context) are: the scenario, or the load.
    fn line(self, at: &Located) -> String {
        match self {
            Place::Scenario => at.scenario_name.clone(),
            Place::Context => concurrent(at),
        }
    }

    /// Where a spread was read: "32 concurrent", "32K context".
    fn spread_at(self, at: &Located) -> String {
        match self {
            Place::Scenario => at.load_phrase(),
            Place::Context => at.context_phrase(),
        }
    }
}

/// "5 concurrent", also for one request: a line of the charts by context.
fn concurrent(at: &Located) -> String {
    format!("{} concurrent", at.concurrency)
}

/// "172.5 tok/s (Chatbot, single user)".
fn figure_at(range: &Range, at: &Located, place: Place) -> String {
    format!("{} ({})", at.value_text(range.metric), place.of(at))
}

/// "Per-user decode speed ranges from 172.5 tok/s (Chatbot, single user) down to 13.2 tok/s
/// (Tool Calling Agentic, 32 concurrent)." (higher is better).
pub fn speed_range(range: &Range, what: &str, place: Place) -> String {
    format!(
        "{what} ranges from {} down to {}.",
        figure_at(range, &range.high, place),
        figure_at(range, &range.low, place)
    )
}

/// "Best inter-token latency is 5.8 ms (Chatbot, single user), rising to 75.8 ms under maximum
/// load (Tool Calling Agentic, 32 concurrent)." (lower is better).
pub fn latency_range(range: &Range, what: &str, place: Place) -> String {
    format!(
        "Best {what} is {}, rising to {} under maximum load ({}).",
        figure_at(range, &range.low, place),
        range.high.value_text(range.metric),
        place.of(&range.high)
    )
}

/// "Best TTFT is 0.211 s (Chatbot, single user), worst case 6.18 s (Tool Calling Agentic, 32
/// concurrent)." for `best_is` "Best TTFT is" (lower is better).
pub fn best_worst(range: &Range, best_is: &str, place: Place) -> String {
    format!(
        "{best_is} {}, worst case {}.",
        figure_at(range, &range.low, place),
        figure_at(range, &range.high, place)
    )
}

/// "At 32 concurrent, scaling efficiency ranges from 41% (Chatbot) to 8% (Tool Calling
/// Agentic)." for a spread at one load (or context), with the reports' scale; says what a drop
/// at longer contexts points to, as reference 001 does.
pub fn scaling_spread(spread: &Range, place: Place) -> String {
    let (best, worst) = (spread.best(), spread.worst());
    format!(
        "At {}, scaling efficiency ranges from {} ({}) to {} ({}).{} Above 90% is excellent; \
         below 50% means the requests contend heavily for the GPU.",
        place.spread_at(best),
        best.value_text(spread.metric),
        place.line(best),
        worst.value_text(spread.metric),
        place.line(worst),
        if spread.drops_at_longer_context() {
            " Scaling drops at longer contexts: GPU memory bandwidth is the likely bottleneck."
        } else {
            ""
        }
    )
}

/// A range graded on one of the experience scales of the last section (`band` finds a value's
/// band), as the reports grade their figures: "By the How Fast Is This? scale, that is very fast
/// at best and slow at worst."
pub fn graded(scale: &str, range: &Range, band: fn(f64) -> &'static Band) -> String {
    // ASCII names: `to_lowercase` would link Unicode case tables (~3 KB gzip).
    let (best, worst) = (
        band(range.best().value).name.to_ascii_lowercase(),
        band(range.worst().value).name.to_ascii_lowercase(),
    );
    if best == worst {
        format!("By the {scale} scale, that is {best} throughout.")
    } else {
        format!("By the {scale} scale, that is {best} at best and {worst} at worst.")
    }
}

/// The sentence of `finding` for each report shown (those whose position `shown` accepts: a
/// chart may draw some of them): the main report's alone, or each prefixed by its label when
/// reports are compared.
pub fn for_each_report(
    all: &[Findings],
    labels: &[String],
    finding: Finding,
    shown: impl Fn(usize) -> bool,
) -> Vec<(Option<String>, String)> {
    let comparing = all.len() > 1;
    all.iter()
        .zip(labels)
        .enumerate()
        .filter(|(i, _)| shown(*i))
        .filter_map(|(_, (f, label))| Some((comparing.then(|| label.clone()), finding(f)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::sample;
    use infermeter_report::analysis::{findings, FindingsOptions};
    use infermeter_report::presets::band_for_itl;

    #[test]
    fn a_range_within_one_band_is_graded_once() {
        let f = findings(&sample(), &FindingsOptions::default());
        let mut r = f.peak.itl.unwrap();
        (r.low.value, r.high.value) = (0.011, 0.015);
        assert_eq!(
            graded("How Smooth Is This?", &r, band_for_itl),
            "By the How Smooth Is This? scale, that is good throughout."
        );
    }
}

#[cfg(test)]
mod sentences;
