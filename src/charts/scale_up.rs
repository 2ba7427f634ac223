//! "When to scale up": burst mode (N requests sent at once), x is the queue depth on a log axis.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::{max_safe_queue_depth, Metric, SafeDepth};
use infermeter_report::LoadMode;

use super::fastest::{itl_threshold, sluggish_itl_s};
use super::plot::{Plot, Threshold, XAxis};
use super::{metric_axis, plot, scenario_lines, series_name, Source};
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
        .push(itl_threshold(sluggish_itl_s(), "sluggish above"));
    p
}

/// Per-user decode speed vs queue depth.
pub fn decode(sources: &[Source], view: &ViewState) -> Plot {
    per_scenario(sources, view, Metric::DecodeTokS)
}

/// Max safe queue depth of one scenario's burst series.
#[derive(Debug, Clone, PartialEq)]
pub struct DepthCard {
    /// Series name (scenario, prefixed by the report label when comparing).
    pub name: String,
    /// `None` when even the lowest depth breaks the limit.
    pub depth: Option<SafeDepth>,
    pub ttft_limit_s: f64,
}

impl DepthCard {
    /// Card value, e.g. "64 reqs", "≈ 19 reqs" (interpolated), "≥ 8 reqs" (limit not reached
    /// at the deepest tested) or "none".
    pub fn value_text(&self) -> String {
        self.depth.map_or("none".into(), |d| d.text())
    }

    /// Card caption, e.g. "Chatbot — TTFT ≤ 3 s".
    pub fn caption(&self) -> String {
        format!(
            "{} — TTFT ≤ {} s",
            self.name,
            format_number(self.ttft_limit_s)
        )
    }
}

/// One card per scenario with a burst series, at the reader's TTFT limit and statistic.
pub fn depth_cards(sources: &[Source], view: &ViewState) -> Vec<DepthCard> {
    sources
        .iter()
        .flat_map(|source| {
            source
                .analysis
                .report()
                .scenarios
                .iter()
                .filter_map(move |scenario| {
                    let series = source.analysis.series(&scenario.id, LoadMode::Burst)?;
                    Some(DepthCard {
                        name: series_name(sources, source, &scenario.name),
                        depth: max_safe_queue_depth(series, view.queue_ttft_s, view.stat),
                        ttft_limit_s: view.queue_ttft_s,
                    })
                })
        })
        .collect()
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

    #[test]
    fn depth_cards_match_the_highlights_at_the_default_limit() {
        let report = sample();
        let cards = with_sources(&report, |s| depth_cards(s, &ViewState::default()));
        assert_eq!(cards.len(), burst_scenarios(&report));
        let h = infermeter_report::analysis::highlights(&report, 3.0);
        for (scenario, card) in report
            .scenarios
            .iter()
            .filter(|s| {
                report
                    .series
                    .iter()
                    .any(|x| x.scenario == s.id && x.mode == LoadMode::Burst)
            })
            .zip(&cards)
        {
            assert_eq!(card.depth, h.max_safe_queue_depth[&scenario.id]);
            assert!(card.caption().ends_with("TTFT ≤ 3 s"), "{}", card.caption());
        }
    }
}
