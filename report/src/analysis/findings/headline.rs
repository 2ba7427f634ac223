//! The headline figures in words: the highlight cards and the key findings, as the report page
//! shows them and `infermeter summary` prints them. Both read [`Findings`], so a card and the
//! sentence under a chart that state the same figure read the same value.

use super::{Findings, Located, ScenarioDepth};
use crate::analysis::format::{format_number, samples_text, with_unit};
use crate::analysis::metric::Metric;
use crate::schema::LoadMode;
use crate::stats::Stat;

/// One highlight card.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    /// Stable key, e.g. "peak-decode" (the page's `highlight-peak-decode`).
    pub id: &'static str,
    pub label: &'static str,
    pub value: String,
    pub context: String,
    /// The sample count when the figure is a percentile resting on too few samples beyond it:
    /// only indicative, which the page and the summary mark.
    pub indicative: Option<u64>,
}

impl Located {
    /// A card's context: "Chatbot at single user"; a level of another mode than peak says which
    /// ("Chatbot at 256 queue depth (burst)").
    pub(super) fn card_context(&self) -> String {
        let mode = match self.mode {
            LoadMode::Peak => String::new(),
            other => format!(" ({})", other.label()),
        };
        format!("{} at {}{mode}", self.scenario_name, self.load_phrase())
    }
}

impl ScenarioDepth {
    /// "64 reqs", "≈ 19 reqs" (interpolated), "≥ 8 reqs" (the limit not reached at the deepest
    /// tested) or "none".
    pub fn value_text(&self) -> String {
        self.depth.map_or("none".into(), |d| d.text())
    }

    /// "Chatbot — TTFT ≤ 3 s".
    pub fn caption(&self, ttft_limit_s: f64) -> String {
        depth_caption(&self.scenario_name, ttft_limit_s)
    }
}

/// "Chatbot — TTFT ≤ 3 s": what a safe queue depth was read under.
pub fn depth_caption(name: &str, ttft_limit_s: f64) -> String {
    format!("{name} — TTFT ≤ {} s", format_number(ttft_limit_s))
}

const NOT_MEASURED: &str = "not measured";

impl Card {
    /// "indicative: p99 of 36 samples" when the figure is only indicative.
    pub fn indicative_note(&self, stat: Stat) -> Option<String> {
        self.indicative.map(|n| indicative_note(stat, n))
    }
}

/// "indicative: p99 of 36 samples": how a figure resting on too few samples is marked, on the
/// page and in the summary.
pub fn indicative_note(stat: Stat, samples: u64) -> String {
    format!("indicative: {} of {}", stat.label(), samples_text(samples))
}

fn card(id: &'static str, label: &'static str, figure: Option<(String, String)>) -> Card {
    let (value, context) = figure.unwrap_or_else(|| ("n/a".into(), NOT_MEASURED.into()));
    Card {
        id,
        label,
        value,
        context,
        indicative: None,
    }
}

fn located_card(
    id: &'static str,
    label: &'static str,
    metric: Metric,
    at: Option<&Located>,
    stat: Stat,
) -> Card {
    Card {
        indicative: at.and_then(|l| l.indicative(stat)),
        ..card(
            id,
            label,
            at.map(|l| (l.value_text(metric), l.card_context())),
        )
    }
}

impl Findings {
    /// The five highlight cards of the reports' header block.
    pub fn cards(&self) -> Vec<Card> {
        let fourth = if self.burst.safe_depths.is_empty() {
            // Without burst runs there is no queue depth to report (not a failed one): the
            // reports show the scaling efficiency of the peak-throughput scenario instead.
            self.scaling_card()
        } else {
            self.safe_queue_card()
        };
        let success = self.requests.success_rate.map(|rate| {
            (
                with_unit(rate * 100.0, "%"),
                format!("across {} requests", self.requests.total),
            )
        });
        vec![
            located_card(
                "peak-decode",
                "Peak Decode Speed",
                Metric::DecodeTokS,
                self.peak.decode.as_ref().map(|r| &r.high),
                self.options.stat,
            ),
            located_card(
                "max-throughput",
                "Max System Throughput",
                Metric::SystemOutputTokS,
                self.throughput.max.as_ref(),
                self.options.stat,
            ),
            located_card(
                "best-ttft",
                "Best TTFT",
                Metric::Ttft,
                self.peak.ttft.as_ref().map(|r| &r.low),
                self.options.stat,
            ),
            fourth,
            card("success-rate", "Success Rate", success),
        ]
    }

    fn safe_queue_card(&self) -> Card {
        let limit = self.options.queue_ttft_s;
        let figure = match self.burst.deepest() {
            Some((scenario, _)) => (scenario.value_text(), scenario.caption(limit)),
            None => (
                "none".into(),
                format!("TTFT above {} s at every queue depth", format_number(limit)),
            ),
        };
        card("safe-queue", "Max Safe Queue", Some(figure))
    }

    fn scaling_card(&self) -> Card {
        let scaling = self
            .throughput
            .peak
            .as_ref()
            .and_then(|p| p.scaling.as_ref());
        card(
            "scaling",
            "Scaling Efficiency",
            scaling.map(|s| {
                (
                    s.value_text(Metric::ScalingEfficiency),
                    format!("{}, vs ideal linear scaling", s.card_context()),
                )
            }),
        )
    }

    /// The key findings the cards do not state, as reference 003 lists them: single-user TTFT
    /// and generation speed from the shortest to the longest context, and how much system
    /// throughput grows with concurrency. (label, text) rows; those the report lacks are left
    /// out.
    pub fn key_findings(&self) -> Vec<(&'static str, String)> {
        let span = |span: Option<&super::ContextSpan>, metric: Metric| {
            let s = span?;
            let at = |l: &Located| format!("{} ({})", l.value_text(metric), l.context_phrase());
            Some(if s.shortest.input_tokens == s.longest.input_tokens {
                at(&s.shortest)
            } else {
                format!("{} → {}", at(&s.shortest), at(&s.longest))
            })
        };
        let growth = self.throughput.growth.as_ref().map(|g| {
            format!(
                "{}× from {} to {} concurrent requests ({})",
                format_number(g.factor),
                g.from,
                g.to,
                g.scenario_name
            )
        });
        let context = &self.context;
        [
            (
                "TTFT, single request",
                span(context.single_user_ttft.as_ref(), Metric::Ttft),
            ),
            (
                "Generation speed, single request",
                span(context.single_user_decode.as_ref(), Metric::DecodeTokS),
            ),
            ("Throughput scaling", growth),
        ]
        .into_iter()
        .filter_map(|(label, text)| Some((label, text?)))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::findings::{findings, FindingsOptions};
    use crate::analysis::testing::chat_and_long as sample;

    #[test]
    fn cards_word_the_findings() {
        let f = findings(&sample(), &FindingsOptions::default());
        let cards: Vec<(&str, String, String)> = f
            .cards()
            .into_iter()
            .map(|c| (c.label, c.value, c.context))
            .collect();
        let depth = f.burst.deepest().unwrap().1.text();
        assert_eq!(
            cards,
            [
                (
                    "Peak Decode Speed",
                    "172.5 tok/s".to_string(),
                    "Scenario chat at single user".to_string()
                ),
                (
                    "Max System Throughput",
                    "4864 tok/s".to_string(),
                    "Scenario chat at 128 queue depth (burst)".to_string()
                ),
                (
                    "Best TTFT",
                    "0.19 s".to_string(),
                    "Scenario chat at single user".to_string()
                ),
                (
                    "Max Safe Queue",
                    depth,
                    "Scenario chat — TTFT ≤ 3 s".to_string()
                ),
                (
                    "Success Rate",
                    "100%".to_string(),
                    "across 259 requests".to_string()
                ),
            ]
        );
    }

    /// At p99 the sample's single-user levels (36 requests) are only indicative; at the mean
    /// nothing is.
    #[test]
    fn cards_say_when_a_percentile_rests_on_few_samples() {
        let mut r = sample();
        for level in r.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
            level.metrics.ttft_s = crate::Distribution::from_samples(&vec![0.3; 36]);
        }
        let at = |stat| {
            let options = FindingsOptions {
                stat,
                ..FindingsOptions::default()
            };
            let cards = findings(&r, &options).cards();
            let best_ttft = cards.iter().find(|c| c.id == "best-ttft").unwrap();
            (best_ttft.indicative, cards[1].indicative)
        };
        assert_eq!(at(Stat::P99), (Some(36), None));
        assert_eq!(
            indicative_note(Stat::P99, 36),
            "indicative: p99 of 36 samples"
        );
        assert_eq!(at(Stat::Mean), (None, None));
    }

    /// A report without burst runs has no queue depth, which is not a failed one: the card
    /// gives the peak-throughput scenario's scaling efficiency at its top level instead.
    #[test]
    fn without_burst_runs_the_fourth_card_is_scaling_efficiency() {
        let mut r = sample();
        r.series.retain(|s| s.mode != LoadMode::Burst);
        let card = &findings(&r, &FindingsOptions::default()).cards()[3];
        assert_eq!(
            (card.label, card.value.as_str(), card.context.as_str()),
            (
                "Scaling Efficiency",
                "40.9%",
                "Scenario chat at 32 concurrent, vs ideal linear scaling"
            )
        );
        // A limit no burst depth meets.
        let strict = FindingsOptions {
            queue_ttft_s: 0.1,
            ..FindingsOptions::default()
        };
        let card = &findings(&sample(), &strict).cards()[3];
        assert_eq!(
            (card.value.as_str(), card.context.as_str()),
            ("none", "TTFT above 0.1 s at every queue depth")
        );
    }

    #[test]
    fn key_findings_span_contexts_and_concurrency() {
        let mut r = sample();
        r.scenarios[1].input_tokens = 32768;
        let rows = findings(&r, &FindingsOptions::default()).key_findings();
        assert_eq!(
            rows,
            [
                (
                    "TTFT, single request",
                    "0.19 s (1K context) → 1.9 s (32K context)".to_string()
                ),
                (
                    "Generation speed, single request",
                    "172.5 tok/s (1K context) → 172.5 tok/s (32K context)".to_string()
                ),
                (
                    "Throughput scaling",
                    "13.1× from 1 to 32 concurrent requests (Scenario chat)".to_string()
                ),
            ]
        );
        // One context: no arrow; one level: no growth.
        r.scenarios.truncate(1);
        r.series.retain(|s| s.scenario == "chat");
        for s in &mut r.series {
            s.levels.truncate(1);
        }
        let rows = findings(&r, &FindingsOptions::default()).key_findings();
        assert_eq!(rows.len(), 2);
        assert!(!rows[0].1.contains('→'), "{rows:?}");
    }
}
