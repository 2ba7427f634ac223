//! System throughput: output tokens per second summed over all concurrent requests (peak mode).

use infermeter_report::analysis::Metric;
use infermeter_report::LoadMode;

use super::plot::{Plot, XAxis};
use super::{metric_axis, plot, scenario_lines, Source};
use crate::state::ViewState;

/// System throughput per scenario.
pub fn system(sources: &[Source], view: &ViewState) -> Plot {
    let metric = Metric::SystemOutputTokS;
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    p.lines = scenario_lines(sources, LoadMode::Peak, metric, view.stat, 0);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn one_line_per_peak_scenario() {
        let report = sample();
        let p = with_sources(&report, |s| system(s, &ViewState::default()));
        assert_eq!(p.lines.len(), peak_scenarios(&report));
        assert_eq!(p.y[0].name, "System throughput");
    }
}
