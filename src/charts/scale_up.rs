//! "When to scale up": burst mode (N requests sent at once), x is the queue depth on a log axis.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;
use infermeter_report::presets::SLUGGISH_ITL_S;
use infermeter_report::LoadMode;

use super::fastest::itl_threshold;
use super::plot::{Plot, Threshold, XAxis};
use super::{metric_axis, plot, scenario_lines, Source};
use crate::state::ViewState;

fn per_scenario(sources: &[Source], view: &ViewState, metric: Metric) -> Plot {
    let mut p = plot(
        XAxis::QueueDepth,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    p.lines = scenario_lines(sources, LoadMode::Burst, metric, view.stat, 0);
    p
}

/// TTFT vs queue depth with the reader's TTFT limit (default 3 s).
pub fn ttft(sources: &[Source], view: &ViewState) -> Plot {
    let mut p = per_scenario(sources, view, Metric::Ttft);
    p.thresholds.push(Threshold {
        axis: 0,
        value: view.queue_ttft_s,
        label: format!("TTFT ≤ {} s", format_number(view.queue_ttft_s)),
    });
    p
}

/// ITL vs queue depth with the 70 ms "sluggish" line.
pub fn itl(sources: &[Source], view: &ViewState) -> Plot {
    let mut p = per_scenario(sources, view, Metric::Itl);
    p.thresholds
        .push(itl_threshold(SLUGGISH_ITL_S, "sluggish above"));
    p
}

/// Per-user decode speed vs queue depth.
pub fn decode(sources: &[Source], view: &ViewState) -> Plot {
    per_scenario(sources, view, Metric::DecodeTokS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn ttft_line_follows_the_readers_limit() {
        let report = sample();
        let view = ViewState {
            queue_ttft_s: 5.0,
            ..ViewState::default()
        };
        let p = with_sources(&report, |s| ttft(s, &view));
        assert_eq!(p.lines.len(), burst_scenarios(&report));
        let json = chart_json(&p);
        assert_eq!(threshold_values(&json), vec![5.0]);
        assert_eq!(x_axis(&json)["type"], "log");
        assert_eq!(x_axis(&json)["name"], "Queue depth (requests)");
        let default = with_sources(&report, |s| ttft(s, &ViewState::default()));
        assert_eq!(threshold_values(&chart_json(&default)), vec![3.0]);
    }

    #[test]
    fn itl_has_the_70ms_line() {
        let report = sample();
        let p = with_sources(&report, |s| itl(s, &ViewState::default()));
        assert_eq!(threshold_values(&chart_json(&p)), vec![70.0]);
    }
}
