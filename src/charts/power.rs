//! Power and efficiency (peak mode): GPU power draw, tokens per joule and energy cost.

use infermeter_report::analysis::findings::power;
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;
use infermeter_report::LoadMode;

use super::plot::{Plot, XAxis, YAxis};
use super::{metric_axis, plot, scenario_lines, source_line, Source};
use crate::state::ViewState;

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
        format!("Energy cost at ${}/kWh", format_number(view.usd_per_kwh)),
        "$ per 1M tokens",
    );
    let mut p = plot(XAxis::ConcurrentUsers, vec![axis], view);
    for source in sources {
        let levels = power::levels(source.analysis.report(), view.stat, view.usd_per_kwh);
        for scenario in &source.analysis.report().scenarios {
            let points: Vec<(f64, f64)> = levels
                .iter()
                .filter(|l| l.draw.scenario == scenario.id)
                .filter_map(|l| Some((f64::from(l.draw.concurrency), l.cost_per_million_tokens?)))
                .collect();
            if !points.is_empty() {
                p.lines
                    .push(source_line(sources, source, &scenario.name, 0, points));
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn cost_follows_the_kwh_price() {
        let report = sample();
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
        let p = with_sources(&report, |s| draw(s, &ViewState::default()));
        assert!(p.is_empty());
    }
}
