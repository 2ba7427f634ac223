//! Power and efficiency (peak mode): GPU power draw, tokens per joule and energy cost.

use infermeter_report::analysis::cost::{cost_per_hour_from_power, cost_per_million_tokens};
use infermeter_report::analysis::Metric;
use infermeter_report::{LoadMode, Stat};

use super::plot::{Plot, XAxis, YAxis};
use super::{display_points, metric_axis, plot, scenario_lines, source_line, Source};
use crate::state::ViewState;

/// True when any level of the report recorded GPU power.
pub fn has_power(source: &Source) -> bool {
    source
        .analysis
        .report()
        .series
        .iter()
        .flat_map(|s| &s.levels)
        .any(|l| l.power.is_some())
}

/// Mean GPU power per scenario.
pub fn draw(sources: &[Source], view: &ViewState) -> Plot {
    let metric = Metric::PowerW;
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    p.lines = scenario_lines(sources, LoadMode::Peak, metric, view.stat, 0);
    p
}

/// Output tokens per joule per scenario.
pub fn tokens_per_joule(sources: &[Source], view: &ViewState) -> Plot {
    let metric = Metric::TokensPerJoule;
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    p.lines = scenario_lines(sources, LoadMode::Peak, metric, view.stat, 0);
    p
}

/// Electricity cost per million output tokens at the reader's $/kWh.
pub fn cost(sources: &[Source], view: &ViewState) -> Plot {
    let axis = YAxis::new(
        format!("Energy cost at ${}/kWh", view.usd_per_kwh),
        "$ per 1M tokens",
    );
    let mut p = plot(XAxis::ConcurrentUsers, vec![axis], view);
    for source in sources {
        for scenario in &source.analysis.report().scenarios {
            let points: Vec<(f64, f64)> = levels(source, &scenario.id, view.stat)
                .into_iter()
                .filter_map(|row| {
                    let per_hour = cost_per_hour_from_power(row.watts, view.usd_per_kwh);
                    cost_per_million_tokens(per_hour, row.system_tok_s)
                        .map(|c| (f64::from(row.concurrency), c))
                })
                .collect();
            if !points.is_empty() {
                p.lines
                    .push(source_line(sources, source, &scenario.name, 0, points));
            }
        }
    }
    p
}

/// Power and throughput of one measured level.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerLevel {
    pub concurrency: u32,
    pub watts: f64,
    pub system_tok_s: f64,
}

impl PowerLevel {
    /// Electricity cost per hour at `usd_per_kwh`.
    pub fn cost_per_hour(&self, usd_per_kwh: f64) -> f64 {
        cost_per_hour_from_power(self.watts, usd_per_kwh)
    }
}

/// Levels of a scenario's peak series that recorded power.
pub fn levels(source: &Source, scenario_id: &str, stat: Stat) -> Vec<PowerLevel> {
    let watts = display_points(source, scenario_id, LoadMode::Peak, Metric::PowerW, stat);
    let tput = display_points(
        source,
        scenario_id,
        LoadMode::Peak,
        Metric::SystemOutputTokS,
        stat,
    );
    watts
        .into_iter()
        .filter_map(|(c, w)| {
            let system_tok_s = tput.iter().find(|p| p.0 == c)?.1;
            Some(PowerLevel {
                concurrency: c as u32,
                watts: w,
                system_tok_s,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn cost_follows_the_kwh_price() {
        let report = sample();
        assert!(
            with_sources(&report, |s| has_power(&s[0])),
            "the sample has power"
        );
        let cheap = with_sources(&report, |s| cost(s, &ViewState::default()));
        let dear_view = ViewState {
            usd_per_kwh: 0.20,
            ..ViewState::default()
        };
        let dear = with_sources(&report, |s| cost(s, &dear_view));
        assert!(!cheap.lines.is_empty());
        let (a, b) = (cheap.lines[0].points[0].1, dear.lines[0].points[0].1);
        assert!((b / a - 2.0).abs() < 1e-9, "{a} {b}");
        assert!(dear.y[0].name.contains("$0.2/kWh"), "{}", dear.y[0].name);
    }

    #[test]
    fn a_report_without_power_has_no_power_lines() {
        let mut report = sample();
        for s in &mut report.series {
            for l in &mut s.levels {
                l.power = None;
            }
        }
        assert!(!with_sources(&report, |s| has_power(&s[0])));
        let p = with_sources(&report, |s| draw(s, &ViewState::default()));
        assert!(p.is_empty());
    }
}
