//! "When am I the fastest?": peak mode (exactly N requests in flight), one line per scenario.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;
use infermeter_report::presets::INSTANT_ITL_S;
use infermeter_report::LoadMode;

use super::plot::{Line, LineKind, Plot, Threshold, XAxis};
use super::{metric_axis, plot, scenario_lines, source_line, Source};
use crate::state::ViewState;

/// A dashed ITL limit, labelled in ms.
pub fn itl_threshold(itl_s: f64, meaning: &str) -> Threshold {
    let ms = Metric::Itl.to_display(itl_s);
    Threshold {
        axis: 0,
        value: ms,
        label: format!("{} ms: {meaning}", format_number(ms)),
    }
}

fn per_scenario(sources: &[Source], view: &ViewState, metric: Metric) -> Plot {
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    p.lines = scenario_lines(sources, LoadMode::Peak, metric, view.stat, 0);
    p
}

/// Per-user decode speed per scenario.
pub fn decode(sources: &[Source], view: &ViewState) -> Plot {
    per_scenario(sources, view, Metric::DecodeTokS)
}

/// Inter-token latency per scenario with the 20 ms "instant" line.
pub fn itl(sources: &[Source], view: &ViewState) -> Plot {
    let mut p = per_scenario(sources, view, Metric::Itl);
    p.thresholds.push(itl_threshold(INSTANT_ITL_S, "instant"));
    p
}

/// Scaling efficiency per scenario (%).
pub fn scaling(sources: &[Source], view: &ViewState) -> Plot {
    per_scenario(sources, view, Metric::ScalingEfficiency)
}

/// Band between the lowest and highest per-user decode speed across scenarios.
pub fn decode_range(sources: &[Source], view: &ViewState) -> Plot {
    range(sources, view, Metric::DecodeTokS)
}

/// Band between the best and worst TTFT across scenarios.
pub fn ttft_range(sources: &[Source], view: &ViewState) -> Plot {
    range(sources, view, Metric::Ttft)
}

fn range(sources: &[Source], view: &ViewState, metric: Metric) -> Plot {
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    for source in sources {
        let lines = scenario_lines(
            std::slice::from_ref(source),
            LoadMode::Peak,
            metric,
            view.stat,
            0,
        );
        let (low, high) = envelope(&lines);
        if low.is_empty() {
            continue;
        }
        let band = Some(source.label.to_string());
        for (shows, points, kind) in [
            ("Lowest across scenarios", low, LineKind::BandLower),
            ("Highest across scenarios", high, LineKind::BandUpper),
        ] {
            p.lines.push(Line {
                kind,
                band: band.clone(),
                ..source_line(sources, source, shows, 0, points)
            });
        }
    }
    p
}

/// `(x, y)` points of one line.
pub type Points = Vec<(f64, f64)>;

/// Lowest and highest value across `lines` at every x any of them measured, ascending x.
pub fn envelope(lines: &[Line]) -> (Points, Points) {
    let mut xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .collect();
    xs.sort_unstable_by(f64::total_cmp);
    xs.dedup();
    xs.into_iter()
        .map(|x| {
            let values = lines
                .iter()
                .filter_map(|l| l.points.iter().find(|p| p.0 == x).map(|p| p.1));
            let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            ((x, lo), (x, hi))
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn one_decode_line_per_scenario_in_tok_s() {
        let report = sample();
        let p = with_sources(&report, |s| decode(s, &ViewState::default()));
        assert_eq!(p.lines.len(), peak_scenarios(&report));
        assert!(p.thresholds.is_empty());
        assert_eq!(p.y[0].unit, "tok/s");
        let json = chart_json(&p);
        assert_eq!(x_axis(&json)["type"], "log");
        assert_eq!(x_axis(&json)["logBase"], 2.0);
    }

    #[test]
    fn itl_is_in_ms_with_the_20ms_line() {
        let report = sample();
        let p = with_sources(&report, |s| itl(s, &ViewState::default()));
        assert_eq!(p.y[0].unit, "ms");
        assert_eq!(threshold_values(&chart_json(&p)), vec![20.0]);
        let first = &p.lines[0].points[0].1;
        assert!(*first > 0.5 && *first < 500.0, "ITL {first} ms");
    }

    #[test]
    fn ranges_are_bands_between_lowest_and_highest() {
        let report = sample();
        let p = with_sources(&report, |s| decode_range(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 2);
        let (low, high) = (&p.lines[0].points, &p.lines[1].points);
        assert_eq!(low.len(), high.len());
        assert!(low.iter().zip(high).all(|(l, h)| l.0 == h.0 && l.1 <= h.1));
        let json = chart_json(&p);
        let upper = &json["series"][1];
        assert_eq!(upper["stack"], json["series"][0]["stack"]);
        assert!(upper["areaStyle"].is_object());
        // The stacked span first (ECharts stacks the first dimension), the real value third.
        let point = &upper["data"][0];
        let span = point[0].as_f64().unwrap();
        let real = point[2].as_f64().unwrap();
        assert!((low[0].1 + span - real).abs() < 1e-9);
    }

    #[test]
    fn envelope_takes_min_and_max_at_each_level() {
        let lines = vec![
            Line::plain("a", 0, vec![(1.0, 10.0), (2.0, 8.0)]),
            Line::plain("b", 0, vec![(1.0, 4.0), (4.0, 1.0)]),
        ];
        let (low, high) = envelope(&lines);
        assert_eq!(low, vec![(1.0, 4.0), (2.0, 8.0), (4.0, 1.0)]);
        assert_eq!(high, vec![(1.0, 10.0), (2.0, 8.0), (4.0, 1.0)]);
    }
}
