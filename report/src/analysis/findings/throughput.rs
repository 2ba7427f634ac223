//! System throughput: the peak-mode top (with its tokens per hour, per-user speed and scaling
//! efficiency), the highest in any mode, its growth with concurrency, the single / mid / max
//! table and each scenario's top level.

use schemars::JsonSchema;
use serde::Serialize;

use super::{highest, located_points, Located};
use crate::analysis::metric::Metric;
use crate::analysis::scaling::tokens_per_hour;
use crate::analysis::{series_points, Analysis};
use crate::schema::{LoadMode, Report};
use crate::stats::Stat;

/// The peak-mode level (exactly N requests in flight) with the highest system throughput.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PeakThroughput {
    /// System output tok/s there.
    pub at: Located,
    pub tokens_per_hour: f64,
    /// Per-user decode speed at that level.
    pub per_user_tok_s: Option<f64>,
    /// Scaling efficiency at the highest concurrency of that scenario's series (a fraction).
    pub scaling: Option<Located>,
}

/// How many times system throughput grows from the lowest to the highest concurrency measured
/// ("2.7× from 1 to 5 concurrent requests"), in the series of the peak.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Growth {
    pub scenario: String,
    pub scenario_name: String,
    pub factor: f64,
    pub from: u32,
    pub to: u32,
}

/// Which row of the throughput table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    Lowest,
    Middle,
    Highest,
}

/// One row of the throughput table: the best of any scenario at one concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ThroughputRow {
    pub condition: Condition,
    pub concurrency: u32,
    pub system_tok_s: f64,
    pub per_user_tok_s: Option<f64>,
    pub tokens_per_hour: f64,
}

/// The throughput figures of one report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ThroughputFindings {
    pub peak: Option<PeakThroughput>,
    /// The highest in any mode, burst included (queued requests can push it above the peak
    /// mode's): the Max System Throughput card.
    pub max: Option<Located>,
    pub growth: Option<Growth>,
    /// The lowest, middle and highest peak concurrency measured (fewer rows with fewer levels).
    pub table: Vec<ThroughputRow>,
    /// Each scenario at the highest concurrency it measured, in report order (peak mode).
    pub by_scenario: Vec<ScenarioTop>,
}

/// One scenario's system throughput at the highest concurrency it measured: how throughput
/// falls with context, as reference 003's rows per context length show it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScenarioTop {
    pub at: Located,
    pub tokens_per_hour: f64,
}

impl ThroughputFindings {
    pub(super) fn of(report: &Report, stat: Stat) -> ThroughputFindings {
        let peak_points = located_points(report, LoadMode::Peak, Metric::SystemOutputTokS, stat);
        let top = highest(peak_points.iter().cloned());
        let max = highest(
            [LoadMode::Peak, LoadMode::Burst, LoadMode::Rate]
                .into_iter()
                .flat_map(|mode| with_rates(report, mode, stat)),
        );
        let by_scenario = report
            .scenarios
            .iter()
            .filter_map(|s| {
                let at = peak_points.iter().rfind(|p| p.scenario == s.id)?;
                Some(ScenarioTop {
                    at: at.clone(),
                    tokens_per_hour: tokens_per_hour(at.value),
                })
            })
            .collect();
        ThroughputFindings {
            peak: top.as_ref().map(|at| peak_throughput(report, at, stat)),
            growth: top.as_ref().and_then(|at| growth(report, at)),
            max,
            table: table(report, stat),
            by_scenario,
        }
    }
}

/// System throughput of every level under `mode`, rate-mode levels with their arrival rate.
fn with_rates(report: &Report, mode: LoadMode, stat: Stat) -> Vec<Located> {
    let analysis = Analysis::new(report);
    located_points(report, mode, Metric::SystemOutputTokS, stat)
        .into_iter()
        .map(|mut p| {
            p.request_rate = analysis.series(&p.scenario, mode).and_then(|s| {
                let level = s.levels.iter().find(|l| l.concurrency == p.concurrency)?;
                level.request_rate
            });
            p
        })
        .collect()
}

fn peak_throughput(report: &Report, at: &Located, stat: Stat) -> PeakThroughput {
    let series = Analysis::new(report).series(&at.scenario, LoadMode::Peak);
    let per_user = series
        .and_then(|s| s.levels.iter().find(|l| l.concurrency == at.concurrency))
        .and_then(|l| Metric::DecodeTokS.value(l, stat));
    let scaling = series
        .and_then(|s| {
            series_points(s, Metric::ScalingEfficiency, stat)
                .last()
                .copied()
        })
        .map(|(concurrency, efficiency)| Located {
            value: efficiency,
            concurrency,
            ..at.clone()
        });
    PeakThroughput {
        at: at.clone(),
        tokens_per_hour: tokens_per_hour(at.value),
        per_user_tok_s: per_user,
        scaling,
    }
}

/// `None` when the peak's series measured one level or no throughput at its first.
fn growth(report: &Report, at: &Located) -> Option<Growth> {
    let series = Analysis::new(report).series(&at.scenario, LoadMode::Peak)?;
    let (first, last) = (series.levels.first()?, series.levels.last()?);
    (first.concurrency != last.concurrency && first.system_output_tok_s > 0.0).then(|| Growth {
        scenario: at.scenario.clone(),
        scenario_name: at.scenario_name.clone(),
        factor: last.system_output_tok_s / first.system_output_tok_s,
        from: first.concurrency,
        to: last.concurrency,
    })
}

fn table(report: &Report, stat: Stat) -> Vec<ThroughputRow> {
    let system = located_points(report, LoadMode::Peak, Metric::SystemOutputTokS, stat);
    let decode = located_points(report, LoadMode::Peak, Metric::DecodeTokS, stat);
    let best_at = |points: &[Located], concurrency: u32| {
        highest(
            points
                .iter()
                .filter(|p| p.concurrency == concurrency)
                .cloned(),
        )
        .map(|p| p.value)
    };
    let levels = Analysis::new(report).levels(LoadMode::Peak);
    let (Some(&first), Some(&last)) = (levels.first(), levels.last()) else {
        return Vec::new();
    };
    let mid = levels[levels.len() / 2];
    let mut picks = vec![(first, Condition::Lowest)];
    if mid != first && mid != last {
        picks.push((mid, Condition::Middle));
    }
    if last != first {
        picks.push((last, Condition::Highest));
    }
    picks
        .into_iter()
        .filter_map(|(concurrency, condition)| {
            let system_tok_s = best_at(&system, concurrency)?;
            Some(ThroughputRow {
                condition,
                concurrency,
                system_tok_s,
                per_user_tok_s: best_at(&decode, concurrency),
                tokens_per_hour: tokens_per_hour(system_tok_s),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::chat_and_long as sample;

    #[test]
    fn the_peak_and_the_highest_in_any_mode() {
        let t = ThroughputFindings::of(&sample(), Stat::Mean);
        let peak = t.peak.unwrap();
        assert_eq!(
            (peak.at.scenario.as_str(), peak.at.concurrency),
            ("chat", 32)
        );
        assert!((peak.at.value - 32.0 * 70.6).abs() < 1e-9);
        assert!((peak.tokens_per_hour - peak.at.value * 3600.0).abs() < 1e-6);
        assert_eq!(peak.per_user_tok_s, Some(70.6));
        // 2,259.2 / (172.5 × 32) = 40.9%.
        let scaling = peak.scaling.unwrap();
        assert_eq!(scaling.concurrency, 32);
        assert!((scaling.value - 70.6 / 172.5).abs() < 1e-9);
        let max = t.max.unwrap();
        assert_eq!(
            (max.mode, max.concurrency, max.value),
            (LoadMode::Burst, 128, 128.0 * 38.0)
        );
    }

    /// Growth is read in the peak's series: chat, 2,259.2 / 172.5 = 13.1×.
    #[test]
    fn throughput_grows_over_the_best_peak_series() {
        let r = sample();
        let growth = ThroughputFindings::of(&r, Stat::Mean).growth.unwrap();
        assert_eq!(
            (growth.scenario.as_str(), growth.from, growth.to),
            ("chat", 1, 32)
        );
        assert!((growth.factor - 32.0 * 70.6 / 172.5).abs() < 1e-9);
        let mut one_level = r.clone();
        one_level.series[0].levels.truncate(1);
        // chat's peak series now tops at 172.5; long's (32 × 13.2 = 422.4) is the best.
        let t = ThroughputFindings::of(&one_level, Stat::Mean);
        assert_eq!(t.growth.unwrap().scenario, "long");
        one_level.series[2].levels.truncate(1);
        assert_eq!(ThroughputFindings::of(&one_level, Stat::Mean).growth, None);
    }

    #[test]
    fn table_rows_and_each_scenarios_top() {
        let mut r = sample();
        r.series[0]
            .levels
            .insert(1, crate::analysis::testing::level(8, 0.3, 140.0));
        let t = ThroughputFindings::of(&r, Stat::Mean);
        let rows: Vec<(Condition, u32, f64)> = t
            .table
            .iter()
            .map(|row| (row.condition, row.concurrency, row.system_tok_s))
            .collect();
        assert_eq!(
            rows,
            [
                (Condition::Lowest, 1, 172.5),
                (Condition::Middle, 8, 8.0 * 140.0),
                (Condition::Highest, 32, 32.0 * 70.6)
            ]
        );
        assert_eq!(t.table[0].per_user_tok_s, Some(172.5));
        let tops: Vec<(&str, u32)> = t
            .by_scenario
            .iter()
            .map(|p| (p.at.scenario.as_str(), p.at.concurrency))
            .collect();
        assert_eq!(tops, [("chat", 32), ("long", 32)]);
    }
}
