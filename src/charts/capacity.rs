//! Capacity charts per use case: speed (or ITL) on the left axis, TTFT (or end-to-end latency)
//! on the right, dashed threshold lines. Which use cases a report is judged on comes from
//! `report::analysis::use_cases`.

use infermeter_report::analysis::capacity::Bound;
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::use_cases::{targets, CapacityTarget};
use infermeter_report::analysis::Metric;
use infermeter_report::Limits;
use infermeter_report::LoadMode;

use super::plot::{Line, Plot, Threshold, XAxis};
use super::{indicative_points, metric_axis, plot, series_display_points, source_line, Source};
use crate::state::ViewState;

/// The metrics a target is judged on: left axis (decode speed, or ITL when only ITL is
/// limited) and right axis (end-to-end latency when limited, else TTFT).
pub fn axes_metrics(thresholds: &Limits) -> (Metric, Metric) {
    let left = if thresholds.max_itl_s.is_some() && thresholds.min_decode_tok_s.is_none() {
        Metric::Itl
    } else {
        Metric::DecodeTokS
    };
    let right = if thresholds.max_e2e_s.is_some() {
        Metric::E2e
    } else {
        Metric::Ttft
    };
    (left, right)
}

/// The capacity chart of `target` (matched by id in every compared report).
pub fn chart(sources: &[Source], target: &CapacityTarget, view: &ViewState) -> Plot {
    let thresholds = view.thresholds(&target.id, target.preset);
    let (left, right) = axes_metrics(&thresholds);
    let x = match target.mode {
        LoadMode::Users => XAxis::Users,
        _ => XAxis::ConcurrentUsers,
    };
    let mut p = plot(
        x,
        vec![metric_axis(left, view.stat), metric_axis(right, view.stat)],
        view,
    );
    for source in sources {
        let Some(t) = targets(source.analysis.report())
            .into_iter()
            .find(|t| t.id == target.id)
        else {
            continue;
        };
        let Some(series) = t.series(source.analysis.report()) else {
            continue;
        };
        for (axis, metric) in [(0, left), (1, right)] {
            let points = series_display_points(series, metric, view.stat);
            if points.is_empty() {
                continue;
            }
            let shows = format!(
                "{} ({} axis)",
                metric.short_label(),
                ["left", "right"][axis]
            );
            p.lines.push(Line {
                indicative: indicative_points(
                    source,
                    &t.scenario_id,
                    LoadMode::Peak,
                    metric,
                    view.stat,
                ),
                ..source_line(sources, source, &shows, axis, points)
            });
        }
    }
    for (metric, bound, limit) in thresholds.limits() {
        let axis = if metric == left {
            0
        } else if metric == right {
            1
        } else {
            continue;
        };
        let value = metric.to_display(limit);
        let sign = match bound {
            Bound::AtMost => "≤",
            Bound::AtLeast => "≥",
        };
        p.thresholds.push(Threshold {
            axis,
            value,
            label: format!(
                "{} {sign} {} {}",
                metric.short_label(),
                format_number(value),
                metric.unit()
            ),
        });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::analysis::capacity::LimitKind;
    use infermeter_report::analysis::use_cases::default_scenario_thresholds;

    #[test]
    fn chart_draws_both_axes_and_moves_the_line_with_the_slider() {
        let report = sample();
        let target = targets(&report)
            .into_iter()
            .find(|t| t.preset.max_ttft_s.is_some())
            .expect("a target limited by TTFT");
        let p = with_sources(&report, |s| chart(s, &target, &ViewState::default()));
        assert_eq!(p.y.len(), 2);
        assert_eq!(p.lines.len(), 2);
        assert_eq!(p.lines[1].axis, 1);
        let json = chart_json(&p);
        let preset_ttft = target.preset.max_ttft_s.unwrap();
        assert!(threshold_values(&json).contains(&preset_ttft));
        let mut view = ViewState::default();
        view.set_threshold(&target.id, target.preset, LimitKind::Ttft, 42.0);
        let moved = with_sources(&report, |s| chart(s, &target, &view));
        let values = threshold_values(&chart_json(&moved));
        assert!(
            values.contains(&42.0) && !values.contains(&preset_ttft),
            "{values:?}"
        );
    }

    #[test]
    fn the_judged_metrics_follow_the_limits() {
        let e2e = Limits {
            max_e2e_s: Some(2.0),
            ..Limits::default()
        };
        assert_eq!(axes_metrics(&e2e), (Metric::DecodeTokS, Metric::E2e));
        assert_eq!(
            axes_metrics(&default_scenario_thresholds()),
            (Metric::Itl, Metric::Ttft)
        );
    }
}
