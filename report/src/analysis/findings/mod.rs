//! Every figure the report page, its finding sentences and `infermeter summary` state, computed
//! once per report and reader's choices ([`FindingsOptions`]): extremes with where they were
//! measured, spreads at the heaviest load, throughput, figures by context length, power, safe
//! queue depths and the use cases a report can be judged on. The viewer words and plots these;
//! `infermeter summary --json` prints this struct as it is, so the page and the terminal read
//! one value for each figure.
//!
//! A new figure is a field here, computed in one of the submodules, with a test; its words live
//! in the viewer's `findings` module (and in [`headline`] when the terminal prints it too).

pub mod context;
pub mod headline;
pub mod power;
pub mod throughput;

use schemars::JsonSchema;
use serde::Serialize;

use super::agents::{agents_findings, job_slo, AgentsFindings};
use super::cost::DEFAULT_USD_PER_KWH;
use super::format::context_phrase;
use super::goodput::{self, GoodputFindings};
use super::metric::Metric;
use super::queue::{max_safe_queue_depth, SafeDepth, DEFAULT_TTFT_THRESHOLD_S};
use super::sessions::SessionFindings;
use super::use_cases::{targets, CapacityTarget};
use super::{series_points, Analysis};
use crate::aggregate::Applied;
use crate::schema::{LoadMode, Report, Scenario, Slo};
use crate::stats::Stat;

pub use context::{ContextFindings, ContextSpan, ContextThroughput, PrefillPeak};
pub use power::{PowerFindings, PowerLevel};
pub use throughput::{
    Condition, Growth, PeakThroughput, ScenarioTop, ThroughputFindings, ThroughputRow,
};

/// What the reader chose that the figures depend on: the statistic of each distribution, the
/// TTFT limit of the safe queue depths, the electricity price and the SLO goodput is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct FindingsOptions {
    pub stat: Stat,
    /// Seconds.
    pub queue_ttft_s: f64,
    /// Dollars per kWh.
    pub usd_per_kwh: f64,
    /// Goodput under this SLO is among the findings; `None` leaves it out (the viewer computes
    /// it apart, so its sliders do not recompute the rest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
}

impl Default for FindingsOptions {
    fn default() -> Self {
        FindingsOptions {
            stat: Stat::Mean,
            queue_ttft_s: DEFAULT_TTFT_THRESHOLD_S,
            usd_per_kwh: DEFAULT_USD_PER_KWH,
            slo: None,
        }
    }
}

/// A figure (stored unit: seconds, tok/s, a fraction for efficiency) and the level it was
/// measured at.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Located {
    pub value: f64,
    /// Scenario id.
    pub scenario: String,
    pub scenario_name: String,
    pub input_tokens: u32,
    pub mode: LoadMode,
    /// Requests in flight (peak), sent at once (burst) or observed (rate).
    pub concurrency: u32,
    /// Target arrival rate of a rate-mode level, requests per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// How many samples the figure's distribution has (`None` for a figure that is not one):
    /// a percentile on few of them is only indicative ([`Located::indicative`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
}

impl Located {
    fn new(scenario: &Scenario, mode: LoadMode, concurrency: u32, value: f64) -> Located {
        Located {
            value,
            scenario: scenario.id.clone(),
            scenario_name: scenario.name.clone(),
            input_tokens: scenario.input_tokens,
            mode,
            concurrency,
            request_rate: None,
            samples: None,
        }
    }

    /// The sample count when `stat` of this figure is only indicative (a percentile with
    /// fewer than ten samples beyond it).
    pub fn indicative(&self, stat: Stat) -> Option<u64> {
        self.samples.filter(|&n| stat.is_indicative(n))
    }

    /// Where the level sits in its mode: "single user", "32 concurrent", "1 user" and "256 queue
    /// depth" (burst), "2 req/s" (rate), as [`LoadMode::describe`] words every level.
    pub fn load_phrase(&self) -> String {
        let applied = Applied {
            concurrency: self.concurrency,
            request_rate: self.request_rate,
            ..Applied::default()
        };
        self.mode.describe(&applied)
    }

    /// "1K context".
    pub fn context_phrase(&self) -> String {
        context_phrase(self.input_tokens)
    }

    /// The value in the metric's display unit, with the unit: "172.5 tok/s", "5.8 ms", "41%".
    pub fn value_text(&self, metric: Metric) -> String {
        metric.display_text(self.value)
    }
}

/// The lowest and the highest value of one metric over a set of levels (each scenario's under
/// one mode, or those measured at one load); on a tie the first in report order keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Range {
    pub metric: Metric,
    pub low: Located,
    pub high: Located,
}

/// Where a range sits against a limit below which a value is good (a latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    AllWithin,
    Crosses,
    AllAbove,
}

impl Range {
    fn of(points: impl IntoIterator<Item = Located>, metric: Metric) -> Option<Range> {
        let points: Vec<Located> = points.into_iter().collect();
        Some(Range {
            metric,
            low: lowest(points.iter().cloned())?,
            high: highest(points.into_iter())?,
        })
    }

    /// The better end: the highest speed, the lowest latency.
    pub fn best(&self) -> &Located {
        if self.metric.higher_is_better() {
            &self.high
        } else {
            &self.low
        }
    }

    /// The worse end.
    pub fn worst(&self) -> &Located {
        if self.metric.higher_is_better() {
            &self.low
        } else {
            &self.high
        }
    }

    /// Where the range sits against `limit` (stored unit), for a metric where lower is better.
    pub fn against(&self, limit: f64) -> Against {
        if self.high.value <= limit {
            Against::AllWithin
        } else if self.low.value <= limit {
            Against::Crosses
        } else {
            Against::AllAbove
        }
    }

    /// True when the worst end is of a longer context than the best and far below it (under
    /// three quarters): what a scaling spread across scenarios points to, memory bandwidth
    /// (reference 001). Never for a spread across loads of one context.
    pub fn drops_at_longer_context(&self) -> bool {
        let (best, worst) = (self.best(), self.worst());
        worst.input_tokens > best.input_tokens && worst.value < 0.75 * best.value
    }
}

/// The point with the highest value; on a tie the first keeps it.
pub(crate) fn highest(points: impl Iterator<Item = Located>) -> Option<Located> {
    points.reduce(|best, p| if p.value > best.value { p } else { best })
}

/// The point with the lowest value; on a tie the first keeps it.
pub(crate) fn lowest(points: impl Iterator<Item = Located>) -> Option<Located> {
    points.reduce(|best, p| if p.value < best.value { p } else { best })
}

/// Every measured `(scenario, level)` value of `metric` under `mode`, scenarios in report order.
pub(crate) fn located_points(
    report: &Report,
    mode: LoadMode,
    metric: Metric,
    stat: Stat,
) -> Vec<Located> {
    let analysis = Analysis::new(report);
    report
        .scenarios
        .iter()
        .flat_map(|scenario| {
            let series = analysis.series(&scenario.id, mode);
            series
                .map(|s| series_points(s, metric, stat))
                .unwrap_or_default()
                .into_iter()
                .map(move |(concurrency, value)| Located {
                    samples: series
                        .and_then(|s| s.levels.iter().find(|l| l.concurrency == concurrency))
                        .and_then(|l| metric.samples(l)),
                    ..Located::new(scenario, mode, concurrency, value)
                })
        })
        .collect()
}

/// The range of `metric` over every scenario's levels under `mode`.
pub fn range(report: &Report, mode: LoadMode, metric: Metric, stat: Stat) -> Option<Range> {
    Range::of(located_points(report, mode, metric, stat), metric)
}

/// The range of `metric` across scenarios at the highest load any scenario reached under
/// `mode`: how far apart the scenarios end up under the heaviest load.
pub fn range_at_top_load(
    report: &Report,
    mode: LoadMode,
    metric: Metric,
    stat: Stat,
) -> Option<Range> {
    let points = located_points(report, mode, metric, stat);
    let top = points.iter().map(|p| p.concurrency).max()?;
    Range::of(points.into_iter().filter(|p| p.concurrency == top), metric)
}

/// The burst-mode figures of "When to Scale Up".
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BurstFindings {
    pub ttft: Option<Range>,
    pub itl: Option<Range>,
    pub decode: Option<Range>,
    /// Every scenario with a burst series, in report order.
    pub safe_depths: Vec<ScenarioDepth>,
}

/// The deepest queue of one scenario's burst series whose TTFT stays within the limit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScenarioDepth {
    pub scenario: String,
    pub scenario_name: String,
    /// `None` when even the shallowest queue breaks the limit.
    pub depth: Option<SafeDepth>,
}

impl BurstFindings {
    fn of(report: &Report, options: &FindingsOptions) -> BurstFindings {
        let stat = options.stat;
        let analysis = Analysis::new(report);
        BurstFindings {
            ttft: range(report, LoadMode::Burst, Metric::Ttft, stat),
            itl: range(report, LoadMode::Burst, Metric::Itl, stat),
            decode: range(report, LoadMode::Burst, Metric::DecodeTokS, stat),
            safe_depths: report
                .scenarios
                .iter()
                .filter_map(|scenario| {
                    let series = analysis.series(&scenario.id, LoadMode::Burst)?;
                    Some(ScenarioDepth {
                        scenario: scenario.id.clone(),
                        scenario_name: scenario.name.clone(),
                        depth: max_safe_queue_depth(series, options.queue_ttft_s, stat),
                    })
                })
                .collect(),
        }
    }

    /// The scenario that keeps the deepest queue within the limit (the first of equals).
    pub fn deepest(&self) -> Option<(&ScenarioDepth, SafeDepth)> {
        self.safe_depths
            .iter()
            .filter_map(|s| s.depth.map(|d| (s, d)))
            .fold(None, |best, (s, d)| match best {
                Some((_, b)) if b.depth >= d.depth => best,
                _ => Some((s, d)),
            })
    }
}

/// The peak-mode figures of "When Am I the Fastest?" and of the deep dive's charts by context.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PeakFindings {
    /// Per-user decode speed: its top is the Peak Decode Speed card.
    pub decode: Option<Range>,
    /// Per-user decode speed across scenarios at the highest concurrency.
    pub decode_at_top: Option<Range>,
    pub itl: Option<Range>,
    /// Its bottom is the Best TTFT card.
    pub ttft: Option<Range>,
    /// Scaling efficiency across scenarios at the highest concurrency.
    pub scaling_at_top: Option<Range>,
    pub queue_wait: Option<Range>,
    pub prefill: Option<Range>,
}

impl PeakFindings {
    fn of(report: &Report, stat: Stat) -> PeakFindings {
        let range = |metric| range(report, LoadMode::Peak, metric, stat);
        PeakFindings {
            decode: range(Metric::DecodeTokS),
            decode_at_top: range_at_top_load(report, LoadMode::Peak, Metric::DecodeTokS, stat),
            itl: range(Metric::Itl),
            ttft: range(Metric::Ttft),
            scaling_at_top: range_at_top_load(
                report,
                LoadMode::Peak,
                Metric::ScalingEfficiency,
                stat,
            ),
            queue_wait: range(Metric::QueueWait),
            prefill: range(Metric::PrefillTokS),
        }
    }
}

/// Requests of every outcome over all levels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct RequestTotals {
    pub ok: u64,
    pub total: u64,
    /// `ok / total`; `None` when no request was sent.
    pub success_rate: Option<f64>,
}

impl RequestTotals {
    fn of(report: &Report) -> RequestTotals {
        let levels = report.series.iter().flat_map(|s| &s.levels);
        let (ok, total) = levels.fold((0, 0), |(ok, total), l| {
            (ok + l.requests.ok, total + l.requests.total())
        });
        RequestTotals {
            ok,
            total,
            success_rate: (total > 0).then(|| ok as f64 / total as f64),
        }
    }
}

/// Every figure of one report under the reader's choices.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Findings {
    pub options: FindingsOptions,
    pub requests: RequestTotals,
    pub peak: PeakFindings,
    pub burst: BurstFindings,
    pub throughput: ThroughputFindings,
    pub context: ContextFindings,
    pub power: PowerFindings,
    /// The use cases (and the report's own scenarios) the capacity analysis judges, each
    /// matched to the scenario it is judged on.
    pub use_cases: Vec<CapacityTarget>,
    /// Goodput under `options.slo`, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput: Option<GoodputFindings>,
    /// Multi-turn sessions and trace replays: users served, TTFT by turn, caching's effect.
    pub sessions: SessionFindings,
    /// Agentic jobs (agents mode), under the default job SLO with `options.slo`'s TTFT bound
    /// where it has one (since summary format 1.2.0; absent for reports without).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentsFindings>,
}

/// Computes every figure of `report` under `options`.
pub fn findings(report: &Report, options: &FindingsOptions) -> Findings {
    let stat = options.stat;
    Findings {
        options: *options,
        requests: RequestTotals::of(report),
        peak: PeakFindings::of(report, stat),
        burst: BurstFindings::of(report, options),
        throughput: ThroughputFindings::of(report, stat),
        context: ContextFindings::of(report, stat),
        power: PowerFindings::of(report, stat, options.usd_per_kwh),
        use_cases: targets(report),
        goodput: options.slo.map(|slo| goodput::findings(report, &slo)),
        sessions: SessionFindings::of(report, stat),
        agents: agents_findings(report, &job_slo(options.slo.as_ref())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{chat_and_long, report, series};

    /// Ties keep the first in report order; low and high, best and worst by direction.
    #[test]
    fn ranges_find_both_ends_and_where() {
        let r = chat_and_long();
        let decode = range(&r, LoadMode::Peak, Metric::DecodeTokS, Stat::Mean).unwrap();
        assert_eq!(
            (decode.high.scenario.as_str(), decode.high.concurrency),
            ("chat", 1)
        );
        assert_eq!(
            (decode.low.value, decode.low.scenario.as_str()),
            (13.2, "long")
        );
        assert_eq!(decode.best(), &decode.high);
        let ttft = range(&r, LoadMode::Peak, Metric::Ttft, Stat::Mean).unwrap();
        assert_eq!((ttft.best().value, ttft.worst().value), (0.19, 6.2));
        assert_eq!(ttft.against(0.1), Against::AllAbove);
        assert_eq!(ttft.against(1.0), Against::Crosses);
        assert_eq!(ttft.against(6.2), Against::AllWithin);
        assert_eq!(range(&r, LoadMode::Rate, Metric::Ttft, Stat::Mean), None);
        // At 32 concurrent: 70.6 (chat) and 13.2 (long).
        let top = range_at_top_load(&r, LoadMode::Peak, Metric::DecodeTokS, Stat::Mean).unwrap();
        assert_eq!((top.low.value, top.high.value), (13.2, 70.6));
        assert!(top.high.concurrency == 32 && top.low.concurrency == 32);
    }

    /// The long context scales far worse: what the reports read as memory bandwidth.
    #[test]
    fn scaling_spreads_say_when_longer_contexts_drop() {
        let mut r = report(
            &["chat", "long"],
            vec![
                series("chat", LoadMode::Peak, &[(1, 0.2, 172.5), (32, 0.6, 70.6)]),
                series("long", LoadMode::Peak, &[(1, 2.0, 160.0), (32, 6.2, 13.2)]),
            ],
        );
        r.scenarios[1].input_tokens = 32768;
        let spread =
            range_at_top_load(&r, LoadMode::Peak, Metric::ScalingEfficiency, Stat::Mean).unwrap();
        assert_eq!(spread.best().scenario, "chat");
        assert!(spread.drops_at_longer_context());
        r.scenarios[1].input_tokens = 1024;
        let spread =
            range_at_top_load(&r, LoadMode::Peak, Metric::ScalingEfficiency, Stat::Mean).unwrap();
        assert!(!spread.drops_at_longer_context());
    }

    #[test]
    fn safe_depths_per_burst_scenario_and_the_deepest() {
        let r = report(
            &["chat", "long", "peak_only"],
            vec![
                series(
                    "chat",
                    LoadMode::Burst,
                    &[(1, 0.2, 170.0), (64, 2.0, 40.0), (128, 4.0, 38.0)],
                ),
                series("long", LoadMode::Burst, &[(1, 3.5, 100.0)]),
                series("peak_only", LoadMode::Peak, &[(1, 0.2, 100.0)]),
            ],
        );
        let f = findings(&r, &FindingsOptions::default());
        let depths: Vec<(&str, Option<u32>)> = f
            .burst
            .safe_depths
            .iter()
            .map(|d| (d.scenario.as_str(), d.depth.map(|d| d.depth)))
            .collect();
        let chat = depths[0].1.unwrap();
        assert!(chat > 64 && chat < 128, "{chat}");
        assert_eq!(depths[1..], [("long", None)]);
        assert_eq!(f.burst.deepest().unwrap().0.scenario, "chat");
        // A looser limit: every tested depth holds, a lower bound.
        let loose = findings(
            &r,
            &FindingsOptions {
                queue_ttft_s: 10.0,
                ..FindingsOptions::default()
            },
        );
        assert!(loose.burst.deepest().unwrap().1.at_least);
    }

    #[test]
    fn request_totals_count_every_outcome() {
        let mut r = report(
            &["chat"],
            vec![series(
                "chat",
                LoadMode::Peak,
                &[(1, 0.2, 100.0), (4, 0.3, 80.0)],
            )],
        );
        r.series[0].levels[1].requests.errored = 1;
        let totals = findings(&r, &FindingsOptions::default()).requests;
        assert_eq!((totals.ok, totals.total), (5, 6));
        assert_eq!(totals.success_rate, Some(5.0 / 6.0));
        r.series.clear();
        let none = findings(&r, &FindingsOptions::default());
        assert_eq!(none.requests.success_rate, None);
        assert_eq!(none.peak.decode, None);
    }

    /// The statistic picks the figure: p99 TTFT is above the mean.
    #[test]
    fn figures_follow_the_statistic() {
        let mut r = report(
            &["chat"],
            vec![series("chat", LoadMode::Peak, &[(1, 1.0, 50.0)])],
        );
        r.series[0].levels[0].metrics.ttft_s = crate::Distribution::from_samples(&[0.5, 1.0, 4.0]);
        let at = |stat| {
            let options = FindingsOptions {
                stat,
                ..FindingsOptions::default()
            };
            findings(&r, &options).peak.ttft.unwrap().low.value
        };
        assert!(at(Stat::P99) > at(Stat::Mean));
        assert_eq!(at(Stat::P50), 1.0);
    }
}
