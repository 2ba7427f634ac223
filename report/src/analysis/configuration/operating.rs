//! Operating points: what one measured level offers a deployment, per GPU. Interactivity (each
//! user's output tokens per second) against output throughput per GPU is the trade every
//! configuration makes; cost and energy follow from the throughput.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::analysis::cost::{
    cost_per_hour_from_gpu_hours, cost_per_million_tokens, level_tokens_per_joule,
};
use crate::analysis::interpolate::MonotoneCurve;
use crate::analysis::metric::Metric;
use crate::schema::{CacheUse, Level, LoadMode, Report};
use crate::stats::Stat;

/// One measured level as a deployment sees it. Figures per GPU divide by the report's GPU
/// count; power is the GPUs' only (no host, no cooling).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OperatingPoint {
    pub concurrency: u32,
    /// The load as the mode counts it ([`LoadMode::level_load`]).
    pub load: f64,
    /// Per-user output tokens per second after the first token, at the statistic
    /// ([`interactivity`]: a percentile reads the slow tail).
    pub interactivity: Option<f64>,
    pub throughput_per_gpu: f64,
    /// End-to-end latency and TTFT at the statistic, seconds.
    pub e2e_s: Option<f64>,
    pub ttft_s: Option<f64>,
    /// Mean measured draw per GPU, W; `None` where power was not measured.
    pub power_per_gpu_w: Option<f64>,
    /// Dollars per million output tokens at the GPU-hour price (GPU rental only).
    pub usd_per_million: Option<f64>,
    /// Joules of measured GPU energy per output token, both over the span power was sampled.
    pub joules_per_token: Option<f64>,
    /// Output tokens per second per kilowatt of measured GPU power.
    pub tok_s_per_kw: Option<f64>,
}

impl OperatingPoint {
    /// `level` of a series measured under `mode` on `gpus` GPUs rented at `usd_per_gpu_hour`.
    pub fn of(
        level: &Level,
        mode: LoadMode,
        gpus: u32,
        stat: Stat,
        usd_per_gpu_hour: Option<f64>,
    ) -> OperatingPoint {
        let gpus_f = f64::from(gpus.max(1));
        let tok_s = level.system_output_tok_s;
        let watts = level.power.as_ref().map(|p| p.mean_w);
        // Energy and tokens over one window ([`level_tokens_per_joule`]).
        let per_joule = level_tokens_per_joule(level);
        OperatingPoint {
            concurrency: level.concurrency,
            load: mode.level_load(level),
            interactivity: interactivity(level, stat),
            throughput_per_gpu: tok_s / gpus_f,
            e2e_s: Metric::E2e.value(level, stat),
            ttft_s: Metric::Ttft.value(level, stat),
            power_per_gpu_w: watts.map(|w| w / gpus_f),
            usd_per_million: usd_per_gpu_hour.and_then(|price| {
                cost_per_million_tokens(cost_per_hour_from_gpu_hours(price, gpus), tok_s)
            }),
            joules_per_token: per_joule.map(|t| 1.0 / t),
            tok_s_per_kw: per_joule.map(|t| t * 1000.0),
        }
    }
}

/// A level's per-user speed (interactivity) at `stat`, tok/s per user, defined here once. The
/// mean is the mean over requests of each one's output tokens after the first over its time
/// after the first token (the level's `decode_tok_s` mean). A percentile reads the slow tail:
/// 1 / the time per output token at that percentile, so p99 is the speed all but the slowest 1%
/// of requests get; the median is 1 / the median TPOT, the minimum 1 / the longest TPOT and the
/// maximum 1 / the shortest.
pub fn interactivity(level: &Level, stat: Stat) -> Option<f64> {
    let tpot_at = |s: Stat| {
        Metric::Tpot
            .value(level, s)
            .filter(|t| *t > 0.0)
            .map(|t| 1.0 / t)
    };
    match stat {
        Stat::Mean => Metric::DecodeTokS.value(level, Stat::Mean),
        Stat::Min => tpot_at(Stat::Max),
        Stat::Max => tpot_at(Stat::Min),
        percentile => tpot_at(percentile),
    }
}

// Its words (label, unit, direction) are its `Metric`'s.
/// A figure of an operating point: a Pareto chart's axis, a ranking's column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Interactivity,
    ThroughputPerGpu,
    UsdPerMillion,
    JoulesPerToken,
    TokSPerKw,
    E2e,
    Ttft,
}

impl Figure {
    /// What a Pareto chart can plot upwards, against interactivity or latency.
    pub const Y: [Figure; 4] = [
        Figure::ThroughputPerGpu,
        Figure::UsdPerMillion,
        Figure::JoulesPerToken,
        Figure::TokSPerKw,
    ];
    /// What it can plot across: interactivity, or the second view's end-to-end latency.
    pub const X: [Figure; 2] = [Figure::Interactivity, Figure::E2e];

    /// Stable id for addresses and JSON.
    pub fn key(self) -> &'static str {
        match self {
            Figure::Interactivity => "interactivity",
            Figure::ThroughputPerGpu => "throughput",
            Figure::UsdPerMillion => "cost",
            Figure::JoulesPerToken => "energy",
            Figure::TokSPerKw => "per_kw",
            Figure::E2e => "e2e",
            Figure::Ttft => "ttft",
        }
    }

    pub fn parse(key: &str) -> Option<Figure> {
        [Figure::Ttft]
            .into_iter()
            .chain(Figure::X)
            .chain(Figure::Y)
            .find(|f| f.key() == key)
    }

    /// The figure it is: its label, unit and direction.
    pub fn metric(self) -> Metric {
        match self {
            Figure::Interactivity => Metric::Interactivity,
            Figure::ThroughputPerGpu => Metric::ThroughputPerGpu,
            Figure::UsdPerMillion => Metric::UsdPerMillion,
            Figure::JoulesPerToken => Metric::JoulesPerToken,
            Figure::TokSPerKw => Metric::TokSPerKw,
            Figure::E2e => Metric::E2e,
            Figure::Ttft => Metric::Ttft,
        }
    }

    pub fn label(self) -> &'static str {
        self.metric().label()
    }

    pub fn unit(self) -> &'static str {
        self.metric().unit()
    }

    pub fn higher_is_better(self) -> bool {
        self.metric().higher_is_better()
    }

    pub fn value(self, p: &OperatingPoint) -> Option<f64> {
        match self {
            Figure::Interactivity => p.interactivity,
            Figure::ThroughputPerGpu => Some(p.throughput_per_gpu),
            Figure::UsdPerMillion => p.usd_per_million,
            Figure::JoulesPerToken => p.joules_per_token,
            Figure::TokSPerKw => p.tok_s_per_kw,
            Figure::E2e => p.e2e_s,
            Figure::Ttft => p.ttft_s,
        }
    }

    /// A value with its unit, as the page and the terminal write it: "$0.42", "1,234 tok/s".
    pub fn text(self, value: f64) -> String {
        self.metric().display_text(value)
    }
}

/// One series (a report's scenario under one mode) as operating points, ascending in load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeriesPoints {
    /// Position of the report among those compared.
    pub report: usize,
    pub scenario: String,
    pub scenario_name: String,
    pub mode: LoadMode,
    /// Session series: whether the prefix cache could reuse earlier turns (a report may hold a
    /// scenario's series once for each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// GPUs serving one replica.
    pub gpus: u32,
    pub points: Vec<OperatingPoint>,
}

impl SeriesPoints {
    /// The scenario's name, with the cache use of a session series: "Chat (caching defeated)".
    pub fn name(&self) -> String {
        match self.cache {
            Some(cache) => format!("{} ({})", self.scenario_name, cache.label()),
            None => self.scenario_name.clone(),
        }
    }

    /// `(x, y)` of the points that have both figures, with each point's index.
    pub fn xy(&self, x: Figure, y: Figure) -> Vec<(usize, f64, f64)> {
        self.points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, x.value(p)?, y.value(p)?)))
            .collect()
    }
}

/// The mode a comparison reads: the first of peak, users, rate and burst that some report
/// measured at two levels or more (peak when none did).
pub fn compared_mode(reports: &[&Report]) -> LoadMode {
    [
        LoadMode::Peak,
        LoadMode::Users,
        LoadMode::Rate,
        LoadMode::Burst,
    ]
    .into_iter()
    .find(|&mode| {
        reports
            .iter()
            .flat_map(|r| &r.series)
            .any(|s| s.mode == mode && s.levels.len() >= 2)
    })
    .unwrap_or(LoadMode::Peak)
}

/// Whether any report has a series of two levels or more: a trade-off to show.
pub fn has_trade_off(reports: &[&Report]) -> bool {
    reports
        .iter()
        .flat_map(|r| &r.series)
        .any(|s| s.levels.len() >= 2)
}

/// The mode a scenario is compared in: `mode` where some report measured the scenario so,
/// else the first of peak, users, rate and burst that some report measured it at two levels
/// (a scenario of sessions only is compared by its users levels).
fn scenario_mode(reports: &[&Report], scenario: &str, mode: LoadMode) -> Option<LoadMode> {
    let measured = |m: LoadMode, levels: usize| {
        reports
            .iter()
            .flat_map(|r| &r.series)
            .any(|s| s.scenario == scenario && s.mode == m && s.levels.len() >= levels)
    };
    if measured(mode, 1) {
        return Some(mode);
    }
    [
        LoadMode::Peak,
        LoadMode::Users,
        LoadMode::Rate,
        LoadMode::Burst,
    ]
    .into_iter()
    .find(|&m| measured(m, 2))
}

/// Every series compared, report by report, scenarios in each report's order: each scenario in
/// its mode ([`scenario_mode`], `mode` where it was measured so), every series of it (a session
/// scenario's with the prefix cache allowed and defeated both), each report's points costed at
/// its price (`prices[report]`, dollars per GPU-hour).
pub fn series_points(
    reports: &[&Report],
    mode: LoadMode,
    stat: Stat,
    prices: &[Option<f64>],
) -> Vec<SeriesPoints> {
    let mut all = Vec::new();
    for (index, report) in reports.iter().enumerate() {
        let gpus = report.metadata.hardware.gpu_count.max(1);
        let price = prices.get(index).copied().flatten();
        for scenario in &report.scenarios {
            let Some(mode) = scenario_mode(reports, &scenario.id, mode) else {
                continue;
            };
            for series in report
                .series
                .iter()
                .filter(|s| s.scenario == scenario.id && s.mode == mode)
            {
                all.push(SeriesPoints {
                    report: index,
                    scenario: scenario.id.clone(),
                    scenario_name: scenario.name.clone(),
                    mode,
                    cache: series.cache,
                    gpus,
                    points: series
                        .levels
                        .iter()
                        .map(|l| OperatingPoint::of(l, mode, gpus, stat, price))
                        .collect(),
                });
            }
        }
    }
    all
}

/// A figure read at a target interactivity on a series' monotone curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum AtTarget {
    /// Within the measured range: a measured level's value, or read between two.
    Read { value: f64, measured: bool },
    /// The target is faster than the fastest level measured (the lightest load): not reached.
    AboveFastest { fastest: f64 },
    /// Even the heaviest load measured is faster than the target: the figure there is a bound
    /// (more load would fit), `value` at `slowest` interactivity.
    BelowSlowest { slowest: f64, value: f64 },
}

impl AtTarget {
    /// `figure` at `target` interactivity over `points`; `None` when no point has both.
    pub fn read(points: &[OperatingPoint], target: f64, figure: Figure) -> Option<AtTarget> {
        let xy: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| Some((p.interactivity?, figure.value(p)?)))
            .collect();
        let curve = MonotoneCurve::new(&xy)?;
        let (slowest, fastest) = curve.domain();
        if target > fastest {
            return Some(AtTarget::AboveFastest { fastest });
        }
        if target < slowest {
            let value = curve.at(slowest)?.value;
            return Some(AtTarget::BelowSlowest { slowest, value });
        }
        let e = curve.at(target)?;
        Some(AtTarget::Read {
            value: e.value,
            measured: e.measured,
        })
    }

    /// "1,234 tok/s per GPU", "≈ $0.41", "≥ 2,000 tok/s per GPU", "not reached".
    pub fn text(&self, figure: Figure) -> String {
        match *self {
            AtTarget::Read {
                value,
                measured: true,
            } => figure.text(value),
            AtTarget::Read { value, .. } => format!("≈ {}", figure.text(value)),
            AtTarget::AboveFastest { .. } => "not reached".into(),
            AtTarget::BelowSlowest { value, .. } => {
                let bound = if figure.higher_is_better() {
                    "≥"
                } else {
                    "≤"
                };
                format!("{bound} {}", figure.text(value))
            }
        }
    }

    /// Why it reads so: "measured", "between measured levels", "above the fastest measured
    /// (95 tok/s per user)", "the heaviest load measured still gives 31 tok/s per user".
    pub fn note(&self) -> String {
        match *self {
            AtTarget::Read { measured: true, .. } => "measured".into(),
            AtTarget::Read { .. } => "between measured levels".into(),
            AtTarget::AboveFastest { fastest } => format!(
                "above the fastest measured ({})",
                Figure::Interactivity.text(fastest)
            ),
            AtTarget::BelowSlowest { slowest, .. } => format!(
                "the heaviest load measured still gives {}",
                Figure::Interactivity.text(slowest)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{level, report, series};
    use crate::schema::PowerStats;

    #[test]
    fn a_level_per_gpu_with_cost_and_energy() {
        // 2 GPUs, 16 users at 50 tok/s: 800 tok/s, 400 per GPU; 1,400 W in all.
        let mut l = level(16, 0.5, 50.0);
        l.power = Some(PowerStats {
            mean_w: 1400.0,
            max_w: 1500.0,
            // 16 requests of 256 tokens for 7,168 J: 1.75 J per token.
            energy_j: 7168.0,
            source: "nvml".into(),
            samples: 10,
        });
        let p = OperatingPoint::of(&l, LoadMode::Peak, 2, Stat::Mean, Some(3.6));
        assert_eq!(p.load, 16.0);
        assert_eq!(p.interactivity, Some(50.0));
        assert_eq!(p.throughput_per_gpu, 400.0);
        assert_eq!(p.power_per_gpu_w, Some(700.0));
        // $7.20 an hour for 2.88M tokens an hour: $2.50 per million.
        assert!((p.usd_per_million.unwrap() - 2.5).abs() < 1e-12);
        assert_eq!(p.joules_per_token, Some(1.75));
        assert!((p.tok_s_per_kw.unwrap() - 800.0 / 1.4).abs() < 1e-9);
        let unpriced = OperatingPoint::of(&l, LoadMode::Peak, 2, Stat::Mean, None);
        assert_eq!(unpriced.usd_per_million, None);
        assert_eq!(Figure::UsdPerMillion.text(2.5), "$2.5");
        assert_eq!(Figure::ThroughputPerGpu.text(400.0), "400 tok/s per GPU");
    }

    /// Interactivity falls from 100 (1 user) to 50 (4) to 25 (16) tok/s per user while
    /// throughput per GPU rises 100, 200, 400.
    fn curve_points() -> Vec<OperatingPoint> {
        let s = series(
            "chat",
            LoadMode::Peak,
            &[(1, 0.1, 100.0), (4, 0.2, 50.0), (16, 0.4, 25.0)],
        );
        s.levels
            .iter()
            .map(|l| OperatingPoint::of(l, LoadMode::Peak, 1, Stat::Mean, Some(3.6)))
            .collect()
    }

    #[test]
    fn values_at_a_target_interactivity_stay_in_the_measured_range() {
        let points = curve_points();
        let at = |t| AtTarget::read(&points, t, Figure::ThroughputPerGpu).unwrap();
        assert_eq!(
            at(50.0),
            AtTarget::Read {
                value: 200.0,
                measured: true
            }
        );
        let AtTarget::Read { value, measured } = at(40.0) else {
            panic!("between")
        };
        assert!(!measured && (200.0..=400.0).contains(&value), "{value}");
        assert_eq!(at(120.0), AtTarget::AboveFastest { fastest: 100.0 });
        assert_eq!(at(120.0).text(Figure::ThroughputPerGpu), "not reached");
        assert_eq!(
            at(120.0).note(),
            "above the fastest measured (100 tok/s per user)"
        );
        let below = at(10.0);
        assert_eq!(
            below,
            AtTarget::BelowSlowest {
                slowest: 25.0,
                value: 400.0
            }
        );
        assert_eq!(below.text(Figure::ThroughputPerGpu), "≥ 400 tok/s per GPU");
        // A cost there is at most the heaviest load's: $3.60 an hour for 1.44M tokens.
        let cost = AtTarget::read(&points, 10.0, Figure::UsdPerMillion).unwrap();
        assert_eq!(cost.text(Figure::UsdPerMillion), "≤ $2.5");
        assert_eq!(AtTarget::read(&points, 10.0, Figure::JoulesPerToken), None);
    }

    #[test]
    fn the_compared_mode_prefers_peak_with_two_levels() {
        let burst_only = report(
            &["chat"],
            vec![
                series("chat", LoadMode::Peak, &[(1, 0.1, 100.0)]),
                series("chat", LoadMode::Burst, &[(1, 0.1, 100.0), (8, 0.5, 60.0)]),
            ],
        );
        assert_eq!(compared_mode(&[&burst_only]), LoadMode::Burst);
        assert!(has_trade_off(&[&burst_only]));
        let single = report(
            &["chat"],
            vec![series("chat", LoadMode::Peak, &[(1, 0.1, 100.0)])],
        );
        assert_eq!(compared_mode(&[&single]), LoadMode::Peak);
        assert!(!has_trade_off(&[&single]));
        let points = series_points(&[&single, &burst_only], LoadMode::Burst, Stat::Mean, &[]);
        assert_eq!(points.len(), 1);
        assert_eq!((points[0].report, points[0].points.len()), (1, 2));
    }
}
