//! Every derived figure: interpolation, scaling, capacity, queue depth, cost, goodput under a
//! service-level objective, the [`findings`] the page and `infermeter summary` state, and the
//! [`configuration`] decision across compared reports (with their short [`labels`]). The
//! collector and the viewer both read reports through these functions.

pub mod agents;
pub mod capacity;
pub mod configuration;
pub mod cost;
pub mod coverage;
pub mod findings;
pub mod format;
pub mod goodput;
pub mod interpolate;
pub mod labels;
// Each load mode's words: an `impl LoadMode`, nothing to import.
mod load_mode;
pub mod metric;
pub mod queue;
pub mod scaling;
pub mod sessions;
#[cfg(test)]
pub(crate) mod testing;
pub mod timeline;
pub mod use_cases;
pub mod workloads;

use crate::schema::{Limits, LoadMode, Report, Scenario, Series};
use crate::stats::Stat;

pub use capacity::{capacity, Capacity};
pub use findings::{findings, Findings, FindingsOptions};
pub use interpolate::{Estimate, MonotoneCurve};
pub use metric::Metric;
pub use queue::{max_safe_queue_depth, SafeDepth, DEFAULT_TTFT_THRESHOLD_S};

/// `(concurrency, value)` of `metric` at every level of `series` that has it, ascending.
/// Scaling efficiency is relative to the series' single-user level (concurrency 1), so it is
/// empty when the series did not measure one.
pub fn series_points(series: &Series, metric: Metric, stat: Stat) -> Vec<(u32, f64)> {
    if metric == Metric::ScalingEfficiency {
        let Some(single) = series.levels.iter().find(|l| l.concurrency == 1) else {
            return Vec::new();
        };
        return series
            .levels
            .iter()
            .filter_map(|l| {
                scaling::scaling_efficiency(
                    l.system_output_tok_s,
                    single.system_output_tok_s,
                    l.concurrency,
                )
                .map(|e| (l.concurrency, e))
            })
            .collect();
    }
    series
        .levels
        .iter()
        .filter_map(|l| metric.value(l, stat).map(|v| (l.concurrency, v)))
        .collect()
}

/// Read access to one report by scenario and load mode.
#[derive(Debug, Clone, Copy)]
pub struct Analysis<'a> {
    report: &'a Report,
}

impl<'a> Analysis<'a> {
    pub fn new(report: &'a Report) -> Self {
        Analysis { report }
    }

    pub fn report(&self) -> &'a Report {
        self.report
    }

    pub fn scenario(&self, id: &str) -> Option<&'a Scenario> {
        self.report.scenarios.iter().find(|s| s.id == id)
    }

    /// The first series of `scenario_id` under `mode`.
    pub fn series(&self, scenario_id: &str, mode: LoadMode) -> Option<&'a Series> {
        self.report
            .series
            .iter()
            .find(|s| s.scenario == scenario_id && s.mode == mode)
    }

    /// The distinct concurrencies measured under `mode`, ascending.
    pub fn levels(&self, mode: LoadMode) -> Vec<u32> {
        let mut levels: Vec<u32> = self
            .report
            .series
            .iter()
            .filter(|s| s.mode == mode)
            .flat_map(|s| s.levels.iter().map(|l| l.concurrency))
            .collect();
        crate::order::sort(&mut levels);
        levels.dedup();
        levels
    }

    /// Measured `(concurrency, value)` points; see [`series_points`]. Empty without a series.
    pub fn points(
        &self,
        scenario_id: &str,
        mode: LoadMode,
        metric: Metric,
        stat: Stat,
    ) -> Vec<(u32, f64)> {
        self.series(scenario_id, mode)
            .map(|s| series_points(s, metric, stat))
            .unwrap_or_default()
    }

    /// Capacity of a scenario's series under `thresholds` (a use case's or a user's own);
    /// `None` without that series.
    pub fn capacity(
        &self,
        scenario_id: &str,
        mode: LoadMode,
        thresholds: &Limits,
        stat: Stat,
    ) -> Option<Capacity> {
        self.series(scenario_id, mode)
            .map(|s| capacity(s, thresholds, stat))
    }

    /// The monotone curve through [`Analysis::points`]; `None` without points.
    pub fn curve(
        &self,
        scenario_id: &str,
        mode: LoadMode,
        metric: Metric,
        stat: Stat,
    ) -> Option<MonotoneCurve> {
        let xy: Vec<(f64, f64)> = self
            .points(scenario_id, mode, metric, stat)
            .into_iter()
            .map(|(c, v)| (f64::from(c), v))
            .collect();
        MonotoneCurve::new(&xy)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{self, series};
    use super::*;

    #[test]
    fn scaling_efficiency_points_are_relative_to_the_single_user_level() {
        let s = series(
            "chat",
            LoadMode::Peak,
            &[(1, 0.2, 172.5), (2, 0.2, 160.0), (32, 0.6, 70.6)],
        );
        let points = series_points(&s, Metric::ScalingEfficiency, Stat::Mean);
        let expected = [(1, 1.0), (2, 160.0 / 172.5), (32, 70.6 / 172.5)];
        assert_eq!(points.len(), 3);
        for ((c, v), (ec, ev)) in points.into_iter().zip(expected) {
            assert_eq!(c, ec);
            assert!((v - ev).abs() < 1e-12, "{c}: {v} vs {ev}");
        }
        let without_single = series("chat", LoadMode::Peak, &[(2, 0.2, 160.0)]);
        assert!(series_points(&without_single, Metric::ScalingEfficiency, Stat::Mean).is_empty());
    }

    #[test]
    fn analysis_finds_series_by_scenario_and_mode() {
        let report = testing::report(
            &["chat"],
            vec![
                series("chat", LoadMode::Peak, &[(1, 0.2, 100.0), (4, 0.3, 80.0)]),
                series("chat", LoadMode::Burst, &[(1, 0.2, 99.0)]),
            ],
        );
        let a = Analysis::new(&report);
        assert_eq!(a.scenario("chat").unwrap().name, "Scenario chat");
        assert!(a.scenario("nope").is_none());
        assert_eq!(a.series("chat", LoadMode::Burst).unwrap().levels.len(), 1);
        assert_eq!(a.levels(LoadMode::Peak), [1, 4]);
        assert!(a.series("chat", LoadMode::Rate).is_none());
        assert_eq!(
            a.points("chat", LoadMode::Peak, Metric::DecodeTokS, Stat::Mean),
            [(1, 100.0), (4, 80.0)]
        );
        assert!(a
            .points("chat", LoadMode::Rate, Metric::Ttft, Stat::Mean)
            .is_empty());
        let curve = a
            .curve("chat", LoadMode::Peak, Metric::DecodeTokS, Stat::Mean)
            .unwrap();
        assert_eq!(curve.domain(), (1.0, 4.0));
        let mid = curve.at(2.0).unwrap();
        assert!(!mid.measured && (80.0..=100.0).contains(&mid.value));
        let limits = Limits {
            min_decode_tok_s: Some(90.0),
            ..Limits::default()
        };
        let cap = a
            .capacity("chat", LoadMode::Peak, &limits, Stat::Mean)
            .unwrap();
        assert_eq!(cap.max_concurrency, Some(1));
        assert!(a
            .capacity("chat", LoadMode::Rate, &limits, Stat::Mean)
            .is_none());
    }
}
