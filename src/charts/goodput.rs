//! Goodput under the reader's SLO, from each level's per-request columns: the share of requests
//! meeting it (with the target line) and the requests per second that met it, each with its
//! Wilson 95% band, one line per scenario and report. Peak series where the main report has
//! them (x: concurrent users), else burst series (x: queue depth).

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::goodput::{self, report_slo, Attainment, SeriesGoodput};
use infermeter_report::{LoadMode, Slo};

use super::plot::{Line, LineKind, Plot, Threshold, XAxis, YAxis};
use super::{plot, source_line, Source};
use crate::state::ViewState;

/// The SLO the charts judge by: the main report's with the reader's changes.
pub fn slo(sources: &[Source], view: &ViewState) -> Option<Slo> {
    let main = sources.first()?.analysis.report();
    Some(view.slo(report_slo(main)))
}

/// The goodput of every source under `slo`.
pub fn per_source(sources: &[Source], slo: &Slo) -> Vec<goodput::GoodputFindings> {
    sources
        .iter()
        .map(|s| goodput::findings(s.analysis.report(), slo))
        .collect()
}

/// The mode the section shows: peak where the main report has goodput for it, else burst.
pub fn shown_mode(all: &[goodput::GoodputFindings]) -> LoadMode {
    let main = all.first().map(|g| g.series.as_slice()).unwrap_or_default();
    if main.iter().any(|s| s.mode == LoadMode::Peak) || main.is_empty() {
        LoadMode::Peak
    } else {
        LoadMode::Burst
    }
}

/// One figure of a level, with its 95% band, in display units.
type Figure = fn(&Attainment) -> Option<(f64, f64, f64)>;

/// Share of requests meeting the SLO, percent.
fn share(a: &Attainment) -> Option<(f64, f64, f64)> {
    Some((
        a.fraction * 100.0,
        a.interval.low * 100.0,
        a.interval.high * 100.0,
    ))
}

/// Requests per second meeting the SLO.
fn rate(a: &Attainment) -> Option<(f64, f64, f64)> {
    let band = a.goodput_req_s_interval?;
    Some((a.goodput_req_s?, band.low, band.high))
}

/// A line per scenario and report of `figure`, each with its band.
fn chart(sources: &[Source], view: &ViewState, y: YAxis, figure: Figure) -> (Plot, Option<Slo>) {
    let Some(slo) = slo(sources, view) else {
        return (plot(XAxis::ConcurrentUsers, vec![y], view), None);
    };
    let all = per_source(sources, &slo);
    let mode = shown_mode(&all);
    let x = match mode {
        LoadMode::Burst => XAxis::QueueDepth,
        _ => XAxis::ConcurrentUsers,
    };
    let mut p = plot(x, vec![y], view);
    for (source, findings) in sources.iter().zip(&all) {
        for series in findings.series.iter().filter(|s| s.mode == mode) {
            p.lines.extend(lines(sources, source, series, figure));
        }
    }
    (p, Some(slo))
}

/// The scenario's line and the two edges of its band.
fn lines(sources: &[Source], source: &Source, series: &SeriesGoodput, figure: Figure) -> Vec<Line> {
    let mut mid = Vec::new();
    let mut low = Vec::new();
    let mut high = Vec::new();
    for level in &series.levels {
        let Some((value, lo, hi)) = figure(&level.attainment) else {
            continue;
        };
        let x = f64::from(level.concurrency);
        mid.push((x, value));
        low.push((x, lo));
        high.push((x, hi));
    }
    // The edges share the line's name: its legend entry shows and hides them, and its
    // tooltip states the interval (charts::plot).
    let name = &series.scenario_name;
    let band = Some(format!("{} {}", source.label, series.scenario));
    let edge = |points, kind| Line {
        kind,
        band: band.clone(),
        ..source_line(sources, source, name, 0, points)
    };
    vec![
        source_line(sources, source, name, 0, mid),
        edge(low, LineKind::BandLower),
        edge(high, LineKind::BandUpper),
    ]
}

/// Share of requests meeting the SLO per scenario, with the target as a dashed line.
pub fn attainment(sources: &[Source], view: &ViewState) -> Plot {
    let y = YAxis::new("Requests meeting the SLO", "%");
    let (mut p, slo) = chart(sources, view, y, share);
    if let Some(slo) = slo {
        let target = slo.target * 100.0;
        p.thresholds.push(Threshold {
            axis: 0,
            value: target,
            label: format!("Target {}%", format_number(target)),
        });
    }
    p
}

/// Requests per second meeting the SLO per scenario.
pub fn rate_per_s(sources: &[Source], view: &ViewState) -> Plot {
    chart(sources, view, YAxis::new("Goodput", "req/s"), rate).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::analysis::capacity::LimitKind;

    #[test]
    fn attainment_per_scenario_with_band_and_target() {
        let report = sample();
        let p = with_sources(&report, |s| attainment(s, &ViewState::default()));
        // Line, low and high edge per peak scenario.
        assert_eq!(p.lines.len(), 3 * peak_scenarios(&report));
        assert_eq!(p.x, XAxis::ConcurrentUsers);
        let (line, low, high) = (&p.lines[0], &p.lines[1], &p.lines[2]);
        assert_eq!(
            (line.name.as_str(), high.name.as_str()),
            ("Chatbot", "Chatbot")
        );
        assert!(line
            .points
            .iter()
            .zip(&low.points)
            .zip(&high.points)
            .all(|((m, l), h)| l.1 <= m.1 && m.1 <= h.1));
        // The default SLO: 95%.
        assert_eq!(threshold_values(&chart_json(&p)), vec![95.0]);
        // A band shares its line's colour and legend entry; the line's tooltip states it, the
        // CSV names its edges.
        let json = chart_json(&p);
        assert_eq!(
            json["series"][0]["itemStyle"]["color"],
            json["series"][2]["itemStyle"]["color"]
        );
        let option = p.to_option();
        assert_eq!(option.legend.len(), peak_scenarios(&report) + 1);
        let formatter = json["tooltip"]["formatter"].as_str().unwrap();
        assert!(formatter.contains("(95% interval "), "{formatter}");
        let csv = p.to_csv();
        assert!(
            csv.contains("\n\"Chatbot (95% interval, low)\",Concurrent users,1,"),
            "{csv}"
        );
    }

    /// A stricter TTFT bound lowers the share at the heaviest burst of the sample.
    #[test]
    fn the_slider_bound_moves_the_lines() {
        let report = sample();
        let mut report_burst_only = report.clone();
        report_burst_only
            .series
            .retain(|s| s.mode == LoadMode::Burst);
        let before = with_sources(&report_burst_only, |s| attainment(s, &ViewState::default()));
        assert_eq!(before.x, XAxis::QueueDepth);
        let mut view = ViewState::default();
        let base = report_slo(&report);
        view.slo.set_bound(&base, LimitKind::Ttft, Some(1.0));
        view.slo.set_target(&base, 0.9);
        let after = with_sources(&report_burst_only, |s| attainment(s, &view));
        let last = |p: &Plot| p.lines[0].points.last().unwrap().1;
        assert!(
            last(&after) < last(&before),
            "{} {}",
            last(&after),
            last(&before)
        );
        assert_eq!(threshold_values(&chart_json(&after)), vec![90.0]);
        let rate = with_sources(&report_burst_only, |s| rate_per_s(s, &view));
        assert_eq!(rate.y[0].unit, "req/s");
        assert!(rate.thresholds.is_empty());
    }

    #[test]
    fn a_report_without_columns_plots_nothing() {
        let mut report = sample();
        for level in report.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
            level.per_request = None;
        }
        let p = with_sources(&report, |s| attainment(s, &ViewState::default()));
        assert!(p.is_empty());
    }
}
