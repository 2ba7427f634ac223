//! Every figure the tool names, with its label, unit and direction: the metrics a chart or
//! threshold reads from a level, and the figures derived from levels elsewhere (an operating
//! point's per-GPU figures, a timeline slice's rates). The fit, the operating points, the
//! timelines and the viewer's limits hold their own small sets of these and take every word
//! from here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cost::level_tokens_per_joule;
use super::format::{format_number, with_unit};
use crate::schema::{FitMetric, Level};
use crate::stats::{Distribution, Stat};

// Also the figures derived from levels by an operating point or a timeline (after
// `TokensPerJoule`); the doc below is the summary schema's description, kept as it was.
/// A figure read from a [`Level`]. Stored values are seconds and tok/s; [`Metric::unit`] and
/// [`Metric::to_display`] give the unit a reader expects (ITL in ms, efficiency in %).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Ttft,
    Itl,
    InterChunk,
    Tpot,
    E2e,
    DecodeTokS,
    PrefillTokS,
    QueueWait,
    InputTokens,
    OutputTokens,
    SystemOutputTokS,
    /// Needs the series' single-user level: read it through [`super::Analysis::points`].
    ScalingEfficiency,
    PowerW,
    TokensPerJoule,
    // Figures derived elsewhere are never written as a `Metric` (an operating point's and a
    // timeline's are written by their own names), so serde skips them: the summary's schema
    // lists the level figures only.
    // Figures of an operating point (`configuration::Figure`): read them through it.
    /// Per-user output tokens per second after the first token.
    #[serde(skip)]
    Interactivity,
    #[serde(skip)]
    ThroughputPerGpu,
    /// Dollars per million output tokens, GPU rental only.
    #[serde(skip)]
    UsdPerMillion,
    /// Joules of GPU energy per output token.
    #[serde(skip)]
    JoulesPerToken,
    /// Output tokens per second per kilowatt of GPU power.
    #[serde(skip)]
    TokSPerKw,
    // Figures of a timeline slice (`timeline::TimelineMetric`): read them through it.
    /// Successful requests finished per second.
    #[serde(skip)]
    CompletedPerS,
    /// Output tokens arrived per second.
    #[serde(skip)]
    OutputTokS,
    /// Cached over prompt tokens, 0..1.
    #[serde(skip)]
    CacheHitRatio,
    /// Failed requests.
    #[serde(skip)]
    Errors,
}

impl Metric {
    /// The figures read from a level ([`Metric::value`]).
    pub const ALL: [Metric; 14] = [
        Metric::Ttft,
        Metric::Itl,
        Metric::InterChunk,
        Metric::Tpot,
        Metric::E2e,
        Metric::DecodeTokS,
        Metric::PrefillTokS,
        Metric::QueueWait,
        Metric::InputTokens,
        Metric::OutputTokens,
        Metric::SystemOutputTokS,
        Metric::ScalingEfficiency,
        Metric::PowerW,
        Metric::TokensPerJoule,
    ];

    /// Stable id for URLs and JSON, e.g. "decode_tok_s".
    pub fn key(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft",
            Metric::Itl => "itl",
            Metric::InterChunk => "inter_chunk",
            Metric::Tpot => "tpot",
            Metric::E2e => "e2e",
            Metric::DecodeTokS => "decode_tok_s",
            Metric::PrefillTokS => "prefill_tok_s",
            Metric::QueueWait => "queue_wait",
            Metric::InputTokens => "input_tokens",
            Metric::OutputTokens => "output_tokens",
            Metric::SystemOutputTokS => "system_output_tok_s",
            Metric::ScalingEfficiency => "scaling_efficiency",
            Metric::PowerW => "power_w",
            Metric::TokensPerJoule => "tokens_per_joule",
            Metric::Interactivity => "interactivity",
            Metric::ThroughputPerGpu => "throughput_per_gpu",
            Metric::UsdPerMillion => "usd_per_million",
            Metric::JoulesPerToken => "joules_per_token",
            Metric::TokSPerKw => "tok_s_per_kw",
            Metric::CompletedPerS => "completed_per_s",
            Metric::OutputTokS => "output_tok_s",
            Metric::CacheHitRatio => "cache_hit_ratio",
            Metric::Errors => "errors",
        }
    }

    /// Parses [`Metric::key`] of a level figure ([`Metric::ALL`]).
    pub fn parse(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Human name, e.g. "Inter-token latency".
    pub const fn label(self) -> &'static str {
        match self {
            Metric::Ttft => "Time to first token",
            Metric::Itl => "Inter-token latency",
            Metric::InterChunk => "Inter-chunk latency",
            Metric::Tpot => "Time per output token",
            Metric::E2e => "End-to-end latency",
            Metric::DecodeTokS => "Per-user decode speed",
            Metric::PrefillTokS => "Per-user prefill speed",
            Metric::QueueWait => "Queue wait",
            Metric::InputTokens => "Input tokens",
            Metric::OutputTokens => "Output tokens",
            Metric::SystemOutputTokS => "System throughput",
            Metric::ScalingEfficiency => "Scaling efficiency",
            Metric::PowerW => "GPU power",
            Metric::TokensPerJoule => "Tokens per joule",
            Metric::Interactivity => "Interactivity",
            Metric::ThroughputPerGpu => "Output throughput per GPU",
            Metric::UsdPerMillion => "Cost per million output tokens (GPU rental only)",
            Metric::JoulesPerToken => "Energy per output token (GPU power only)",
            Metric::TokSPerKw => "Output tokens/s per kW (GPU power only)",
            Metric::CompletedPerS => "Requests completed",
            Metric::OutputTokS => "Output throughput",
            Metric::CacheHitRatio => "Cache-hit ratio",
            Metric::Errors => "Errors",
        }
    }

    /// Short name, in chart legends, table headings and limits: "TTFT", "Generation speed",
    /// "End-to-end latency"; the full [`Metric::label`] where it is short already.
    pub const fn short_label(self) -> &'static str {
        match self {
            Metric::Ttft => "TTFT",
            Metric::Itl => "ITL",
            Metric::Tpot => "TPOT",
            Metric::E2e => "End-to-end latency",
            Metric::DecodeTokS => "Generation speed",
            other => other.label(),
        }
    }

    /// [`Metric::short_label`] as it reads inside a sentence: "generation speed"; acronyms
    /// ("TTFT", "ITL") stay as they are.
    pub fn in_sentence(self) -> String {
        mid_sentence(self.short_label())
    }

    /// How the fit's tables and the What-if cards name it: [`Metric::in_sentence`], but the
    /// per-user decode speed keeps "per-user" (beside the fit's system throughput).
    pub fn fit_label(self) -> String {
        match self {
            Metric::DecodeTokS => "per-user decode".into(),
            other => other.in_sentence(),
        }
    }

    /// Display unit (after [`Metric::to_display`]).
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Ttft | Metric::E2e | Metric::QueueWait => "s",
            Metric::Itl | Metric::InterChunk | Metric::Tpot => "ms",
            Metric::DecodeTokS
            | Metric::PrefillTokS
            | Metric::SystemOutputTokS
            | Metric::OutputTokS => "tok/s",
            Metric::InputTokens | Metric::OutputTokens => "tokens",
            Metric::ScalingEfficiency | Metric::CacheHitRatio => "%",
            Metric::PowerW => "W",
            Metric::TokensPerJoule => "tok/J",
            Metric::Interactivity => "tok/s per user",
            Metric::ThroughputPerGpu => "tok/s per GPU",
            Metric::UsdPerMillion => "$/M tokens",
            Metric::JoulesPerToken => "J/token",
            Metric::TokSPerKw => "tok/s per kW",
            Metric::CompletedPerS => "req/s",
            Metric::Errors => "",
        }
    }

    /// Unit of the stored value (before [`Metric::to_display`]): seconds for the per-token gaps,
    /// a bare ratio for the shares.
    pub fn stored_unit(self) -> &'static str {
        match self {
            Metric::Itl | Metric::InterChunk | Metric::Tpot => "s",
            Metric::ScalingEfficiency | Metric::CacheHitRatio => "",
            other => other.unit(),
        }
    }

    /// Factor from the stored value to the displayed one: per-token gaps are shown in ms
    /// because they are a few ms, efficiency in percent.
    pub fn display_factor(self) -> f64 {
        match self {
            Metric::Itl | Metric::InterChunk | Metric::Tpot => 1000.0,
            Metric::ScalingEfficiency | Metric::CacheHitRatio => 100.0,
            _ => 1.0,
        }
    }

    /// Converts a stored value to the display unit.
    pub fn to_display(self, value: f64) -> f64 {
        value * self.display_factor()
    }

    /// A stored value in the display unit, with the unit: "5.8 ms", "41%", "172.5 tok/s", and a
    /// cost as money: "$0.42".
    pub fn display_text(self, value: f64) -> String {
        match self {
            Metric::UsdPerMillion => format!("${}", format_number(self.to_display(value))),
            _ => with_unit(self.to_display(value), self.unit()),
        }
    }

    /// Converts a displayed value (e.g. a slider in ms) back to the stored unit.
    pub fn from_display(self, value: f64) -> f64 {
        value / self.display_factor()
    }

    /// True when larger values are better (speeds, throughputs, efficiency, the cache's hits);
    /// false for latencies, power, costs and errors.
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Metric::DecodeTokS
                | Metric::PrefillTokS
                | Metric::SystemOutputTokS
                | Metric::ScalingEfficiency
                | Metric::TokensPerJoule
                | Metric::Interactivity
                | Metric::ThroughputPerGpu
                | Metric::TokSPerKw
                | Metric::CompletedPerS
                | Metric::OutputTokS
                | Metric::CacheHitRatio
        )
    }

    /// True when `stat` selects between figures of a level; system-level metrics have one value
    /// per level.
    pub fn has_distribution(self) -> bool {
        matches!(
            self,
            Metric::Ttft
                | Metric::Itl
                | Metric::InterChunk
                | Metric::Tpot
                | Metric::E2e
                | Metric::DecodeTokS
                | Metric::PrefillTokS
                | Metric::QueueWait
                | Metric::InputTokens
                | Metric::OutputTokens
        )
    }

    /// How many samples the metric's distribution at `level` has; `None` for a figure that is
    /// not a distribution (system throughput, power) or was not measured. What says whether a
    /// percentile is only indicative ([`Stat::is_indicative`]).
    pub fn samples(self, level: &Level) -> Option<u64> {
        let m = &level.metrics;
        let distribution = match self {
            Metric::Ttft => &m.ttft_s,
            Metric::Itl => &m.itl_s,
            Metric::InterChunk => &m.inter_chunk_s,
            Metric::Tpot => &m.tpot_s,
            Metric::E2e => &m.e2e_s,
            Metric::DecodeTokS => &m.decode_tok_s,
            Metric::PrefillTokS => &m.prefill_tok_s,
            Metric::QueueWait => &m.queue_wait_s,
            Metric::InputTokens => &m.input_tokens,
            Metric::OutputTokens => &m.output_tokens,
            _ => return None,
        };
        distribution.as_ref().and_then(|d| d.count)
    }

    /// Whether `stat` of the metric at `level` is only indicative: a percentile resting on
    /// too few samples beyond it.
    pub fn is_indicative(self, level: &Level, stat: Stat) -> bool {
        self.samples(level).is_some_and(|n| stat.is_indicative(n))
    }

    /// The metric's value at `level` (stored unit), `None` when not measured. `stat` picks the
    /// figure of a distribution; power reads the mean (or the maximum for [`Stat::Max`]).
    /// [`Metric::ScalingEfficiency`] is always `None` here: it needs the series' single-user
    /// level, see [`super::Analysis::points`]; so are the figures outside [`Metric::ALL`], read
    /// through an operating point or a timeline.
    pub fn value(self, level: &Level, stat: Stat) -> Option<f64> {
        let m = &level.metrics;
        let dist = |d: &Option<Distribution>| d.as_ref().and_then(|d| d.get(stat));
        match self {
            Metric::Ttft => dist(&m.ttft_s),
            Metric::Itl => dist(&m.itl_s),
            Metric::InterChunk => dist(&m.inter_chunk_s),
            Metric::Tpot => dist(&m.tpot_s),
            Metric::E2e => dist(&m.e2e_s),
            Metric::DecodeTokS => dist(&m.decode_tok_s),
            Metric::PrefillTokS => dist(&m.prefill_tok_s),
            Metric::QueueWait => dist(&m.queue_wait_s),
            Metric::InputTokens => dist(&m.input_tokens),
            Metric::OutputTokens => dist(&m.output_tokens),
            Metric::SystemOutputTokS => Some(level.system_output_tok_s),
            Metric::PowerW => level.power.as_ref().map(|p| match stat {
                Stat::Max => p.max_w,
                _ => p.mean_w,
            }),
            Metric::TokensPerJoule => level_tokens_per_joule(level),
            _ => None,
        }
    }
}

// The fit's figures are the schema's (their serialized names are the report's); their words
// are here, where the schema does not depend.
impl FitMetric {
    /// The figure it is: its label, unit and direction.
    pub fn metric(self) -> Metric {
        match self {
            FitMetric::TtftS => Metric::Ttft,
            FitMetric::ItlS => Metric::Itl,
            FitMetric::DecodeTokS => Metric::DecodeTokS,
            FitMetric::SystemOutputTokS => Metric::SystemOutputTokS,
        }
    }

    /// How tables name it ([`Metric::fit_label`]).
    pub fn label(self) -> String {
        self.metric().fit_label()
    }
}

/// A label as it reads inside a sentence: "Generation speed" -> "generation speed"; acronyms
/// ("ITL", "TTFT") stay as they are.
pub fn mid_sentence(label: &str) -> String {
    let first_word = label.split([' ', '-']).next().unwrap_or_default();
    if first_word.chars().all(|c| c.is_ascii_uppercase()) {
        return label.to_string();
    }
    let mut chars = label.chars();
    chars
        .next()
        // ASCII labels: `to_lowercase` would link Unicode case tables into the viewer.
        .map_or_else(String::new, |c| {
            c.to_ascii_lowercase().to_string() + chars.as_str()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_inside_a_sentence_keep_their_acronyms() {
        assert_eq!(Metric::Itl.in_sentence(), "ITL");
        assert_eq!(Metric::Ttft.in_sentence(), "TTFT");
        assert_eq!(Metric::DecodeTokS.in_sentence(), "generation speed");
        assert_eq!(Metric::E2e.in_sentence(), "end-to-end latency");
        assert_eq!(
            mid_sentence("Per-user decode speed"),
            "per-user decode speed"
        );
    }
    use crate::analysis::testing::level;
    use crate::schema::PowerStats;

    #[test]
    fn reads_values_from_a_level() {
        let mut l = level(4, 0.25, 100.0);
        assert_eq!(Metric::Ttft.value(&l, Stat::P99), Some(0.25));
        assert_eq!(Metric::Itl.value(&l, Stat::Mean), Some(0.01));
        assert_eq!(Metric::SystemOutputTokS.value(&l, Stat::P50), Some(400.0));
        assert_eq!(Metric::QueueWait.value(&l, Stat::Mean), None);
        assert_eq!(Metric::PowerW.value(&l, Stat::Mean), None);
        assert_eq!(Metric::ScalingEfficiency.value(&l, Stat::Mean), None);
        l.power = Some(PowerStats {
            mean_w: 500.0,
            max_w: 610.0,
            // 4 requests of 256 tokens for 1,280 J.
            energy_j: 1280.0,
            source: "nvml".into(),
            samples: 600,
        });
        assert_eq!(Metric::PowerW.value(&l, Stat::Mean), Some(500.0));
        assert_eq!(Metric::PowerW.value(&l, Stat::Max), Some(610.0));
        assert_eq!(Metric::TokensPerJoule.value(&l, Stat::Mean), Some(0.8));
    }

    #[test]
    fn sample_counts_say_when_a_percentile_is_indicative() {
        let mut l = level(4, 0.25, 100.0);
        l.metrics.ttft_s = Some(Distribution {
            count: Some(500),
            ..Distribution::constant(0.25)
        });
        assert_eq!(Metric::Ttft.samples(&l), Some(500));
        assert!(Metric::Ttft.is_indicative(&l, Stat::P99));
        assert!(!Metric::Ttft.is_indicative(&l, Stat::P90));
        assert_eq!(Metric::SystemOutputTokS.samples(&l), None);
        assert!(!Metric::SystemOutputTokS.is_indicative(&l, Stat::P99));
    }

    #[test]
    fn display_units() {
        assert_eq!(Metric::Itl.to_display(0.0058), 5.8);
        assert_eq!(Metric::Itl.unit(), "ms");
        assert_eq!(Metric::Ttft.to_display(0.189), 0.189);
        assert_eq!(Metric::ScalingEfficiency.to_display(0.41), 41.0);
        assert_eq!(Metric::Tpot.from_display(20.0), 0.02);
        assert_eq!(Metric::Itl.display_text(0.0058), "5.8 ms");
        assert_eq!(Metric::ScalingEfficiency.display_text(0.409), "40.9%");
        assert!(Metric::DecodeTokS.higher_is_better());
        assert!(!Metric::E2e.higher_is_better());
    }

    #[test]
    fn keys_round_trip_and_match_serde() {
        for metric in Metric::ALL {
            assert_eq!(Metric::parse(metric.key()), Some(metric));
            assert_eq!(
                serde_json::to_value(metric).unwrap(),
                serde_json::Value::String(metric.key().into())
            );
        }
        assert_eq!(Metric::parse("speed"), None);
    }
}
