//! "Which configuration?": the reader's decision across compared reports. Each measured level
//! is an operating point ([`operating`]): per-user speed (interactivity) against throughput
//! per GPU, with cost from a GPU-hour price and energy where power was measured. The Pareto
//! [`frontier`] of a scenario says which report and load no other beats on both; the
//! [`ranking`] says which serves N users under the goodput SLO for the least money, and on
//! what basis. The viewer's section and `infermeter summary` both read
//! [`ConfigurationFindings`].

pub mod frontier;
pub mod operating;
pub mod ranking;

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cost::{gpu_kind, PriceAssumption};
use super::format::format_number;
use super::goodput::slo_text;
use crate::schema::{LoadMode, Report, Slo};
use crate::stats::Stat;

pub use frontier::{pareto_front, PointRef, ScenarioFrontier};
pub use operating::{compared_mode, has_trade_off, interactivity, series_points, AtTarget, Figure};
pub use operating::{OperatingPoint, SeriesPoints};
pub use ranking::{
    AtSlo, Basis, Ranked, RankingInputs, Replicas, ScenarioRanking, Standing, APART, COLUMNS,
};

/// Users to serve until the reader says how many.
pub const DEFAULT_USERS: u32 = 100;
/// The interactivity a reader starts from, tok/s per user: the default SLO's 50 ms per token.
pub const DEFAULT_INTERACTIVITY: f64 = 20.0;

/// What the reader chose that the decision depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigurationOptions {
    pub stat: Stat,
    /// The goodput SLO every compared report is judged by.
    pub slo: Slo,
    /// Dollars per GPU-hour by GPU kind ([`gpu_kind`]), replacing the defaults.
    pub prices: BTreeMap<String, f64>,
    pub users: u32,
    /// Target interactivity, tok/s per user.
    pub interactivity: f64,
    /// Measured levels only: each limit is the highest measured level meeting the SLO, never
    /// read between two levels, so no figure of the ranking is approximate.
    #[serde(default)]
    pub measured_only: bool,
}

impl ConfigurationOptions {
    /// The defaults under `slo`.
    pub fn new(slo: Slo) -> ConfigurationOptions {
        ConfigurationOptions {
            stat: Stat::Mean,
            slo,
            prices: BTreeMap::new(),
            users: DEFAULT_USERS,
            interactivity: DEFAULT_INTERACTIVITY,
            measured_only: false,
        }
    }
}

/// The GPUs compared and what each kind is costed at, once per kind in report order.
pub fn price_assumptions(reports: &[&Report], set: &BTreeMap<String, f64>) -> Vec<PriceAssumption> {
    let mut seen = BTreeSet::new();
    reports
        .iter()
        .map(|r| gpu_kind(&r.metadata.hardware.gpu_model))
        .filter(|kind| seen.insert(kind.clone()))
        .map(|kind| PriceAssumption::of(&kind, set))
        .collect()
}

/// Each report's dollars per GPU-hour, by its GPU kind.
pub fn report_prices(reports: &[&Report], set: &BTreeMap<String, f64>) -> Vec<Option<f64>> {
    reports
        .iter()
        .map(|r| {
            PriceAssumption::of(&gpu_kind(&r.metadata.hardware.gpu_model), set).usd_per_gpu_hour
        })
        .collect()
}

/// Every figure of the decision: the prices assumed, each series' operating points, each
/// scenario's frontier (throughput per GPU against interactivity) and ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigurationFindings {
    pub options: ConfigurationOptions,
    /// Each compared report's short label ([`super::labels::report_labels`]).
    pub labels: Vec<String>,
    pub prices: Vec<PriceAssumption>,
    /// The mode compared ([`compared_mode`]).
    pub mode: LoadMode,
    pub series: Vec<SeriesPoints>,
    pub frontiers: Vec<ScenarioFrontier>,
    pub rankings: Vec<ScenarioRanking>,
    /// Why there is no trade-off to show: no report measured two levels of a series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}

impl ConfigurationFindings {
    /// What the decision assumes: "judged by TTFT ≤ 5 s, TPOT ≤ 50 ms; 95% of requests, for 100
    /// users, at a target of 20 tok/s per user (peak levels, mean)".
    pub fn conditions_text(&self) -> String {
        let o = &self.options;
        format!(
            "judged by {}, for {} users, at a target of {} ({} levels{}, {})",
            slo_text(&o.slo),
            o.users,
            Figure::Interactivity.text(o.interactivity),
            self.mode.label(),
            if o.measured_only { " only" } else { "" },
            o.stat.label()
        )
    }

    /// The points of `frontier` in order, each with the report and load it comes from: "H100
    /// at 32 (1200 tok/s per GPU at 25 tok/s per user), …".
    pub fn frontier_text(&self, frontier: &ScenarioFrontier) -> String {
        frontier
            .frontier
            .iter()
            .map(|p| {
                format!(
                    "{} at {} ({} at {})",
                    self.labels.get(p.report).map_or("?", String::as_str),
                    format_number(p.load),
                    frontier.y.text(p.y),
                    frontier.x.text(p.x)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Why a comparison has nothing to decide between.
pub const NO_TRADE_OFF: &str = "Choosing a configuration needs a series measured at two loads or more: with one level there is no trade-off between speed per user and throughput. Measure more levels (a suite's [peak] levels) to see it.";

/// The decision across `reports` (labelled `labels`) under `options`.
pub fn findings(
    reports: &[Report],
    labels: &[String],
    options: &ConfigurationOptions,
) -> ConfigurationFindings {
    let reports: Vec<&Report> = reports.iter().collect();
    let mode = compared_mode(&reports);
    let prices = report_prices(&reports, &options.prices);
    let series = series_points(&reports, mode, options.stat, &prices);
    let inputs = RankingInputs {
        reports: &reports,
        labels,
        series: &series,
        prices: &prices,
        slo: &options.slo,
        users: options.users,
        interactivity: options.interactivity,
        measured_only: options.measured_only,
    };
    let scenarios = frontier::scenarios(&series);
    let rankings = scenarios.iter().map(|(id, _)| inputs.rank(id)).collect();
    let frontiers = scenarios
        .iter()
        .map(|(id, _)| {
            ScenarioFrontier::of(&series, id, Figure::Interactivity, Figure::ThroughputPerGpu)
        })
        .collect();
    ConfigurationFindings {
        options: options.clone(),
        labels: labels.to_vec(),
        prices: price_assumptions(&reports, &options.prices),
        mode,
        series,
        frontiers,
        rankings,
        absent: (!has_trade_off(&reports)).then(|| NO_TRADE_OFF.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cost::PriceBasis;
    use crate::analysis::testing::{report, series};

    #[test]
    fn findings_cover_every_scenario_and_say_when_there_is_no_trade_off() {
        let mut h100 = report(
            &["chat", "long"],
            vec![
                series("chat", LoadMode::Peak, &[(1, 0.1, 100.0), (8, 0.3, 60.0)]),
                series("long", LoadMode::Peak, &[(1, 1.0, 90.0), (8, 2.0, 40.0)]),
            ],
        );
        h100.metadata.hardware.gpu_model = "NVIDIA H100".into();
        h100.metadata.hardware.gpu_count = 1;
        let mut other = h100.clone();
        other.metadata.hardware.gpu_model = "Accelerator X".into();
        let reports = [h100, other];
        let labels = crate::analysis::labels::report_labels(&reports);
        let options = ConfigurationOptions::new(Slo::default());
        let f = findings(&reports, &labels, &options);
        assert_eq!(f.mode, LoadMode::Peak);
        assert_eq!(f.series.len(), 4);
        assert_eq!(f.rankings.len(), 2);
        assert_eq!(f.frontiers[1].scenario, "long");
        assert_eq!(f.absent, None);
        // The H100 has a default price; the unknown accelerator has none until it is set.
        assert_eq!(f.prices.len(), 2);
        assert_eq!(f.prices[0].basis, PriceBasis::Default);
        assert_eq!(f.prices[1].usd_per_gpu_hour, None);
        assert!(f.series[0].points[0].usd_per_million.is_some());
        assert!(f.series[2].points[0].usd_per_million.is_none());
        let mut set = BTreeMap::new();
        set.insert("Accelerator X".to_string(), 1.0);
        assert_eq!(
            report_prices(&[&reports[0], &reports[1]], &set)[1],
            Some(1.0)
        );

        let single = report(
            &["chat"],
            vec![series("chat", LoadMode::Peak, &[(1, 0.1, 100.0)])],
        );
        let none = findings(&[single], &["x".into()], &options);
        assert_eq!(none.absent.as_deref(), Some(NO_TRADE_OFF));
    }
}
