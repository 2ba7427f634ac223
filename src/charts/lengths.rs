//! Requests of varied lengths (a prompt file, drawn lengths): each request's latency against
//! its own length, and how the lengths spread. Read from the levels' per-request columns
//! (`infermeter_report::lengths`); a report of fixed lengths has none of these charts. They sit
//! in the Technical deep dive and draw the reports picked there (`deep_dive::shown`).

use infermeter_report::analysis::format::{format_grouped, format_number};
use infermeter_report::analysis::Metric;
use infermeter_report::lengths::{histogram, LevelLengths, RequestLengths};

use super::plot::{Line, LineKind, Plot, XAxis, YAxis};
use super::{deep_dive, plot, source_line, Source};
use crate::state::ViewState;

/// Bins of a length histogram.
const BINS: usize = 24;

/// One point per request of every level of varied lengths, `x` its length and `y` its latency
/// (seconds), one set of points per level; hovering a point names the request's lengths.
fn by_length(
    sources: &[Source],
    view: &ViewState,
    x: XAxis,
    y: YAxis,
    point: fn(&RequestLengths) -> (u32, f64),
) -> Plot {
    let mut p = plot(x, vec![y], view);
    for source in deep_dive::shown(sources, view) {
        let report = source.analysis.report();
        for series in &report.series {
            let name = source
                .analysis
                .scenario(&series.scenario)
                .map_or(series.scenario.as_str(), |s| s.name.as_str());
            for level in &series.levels {
                let mut requests = LevelLengths::requests(level);
                if requests.is_empty() {
                    continue;
                }
                infermeter_report::order::sort_by_key(&mut requests, |r| point(r).0);
                let shows = format!("{name}, {}", series.mode.describe_level(level));
                let points = requests
                    .iter()
                    .map(|r| (f64::from(point(r).0), point(r).1))
                    .collect();
                p.lines.push(Line {
                    kind: LineKind::Points,
                    notes: requests.iter().map(|r| note(r, point(r).1)).collect(),
                    ..source_line(sources, source, &shows, 0, points)
                });
            }
        }
    }
    p
}

/// "0.038 s: a request of 144 input and 25 output tokens".
fn note(r: &RequestLengths, seconds: f64) -> String {
    format!(
        "{} s: a request of {} input and {} output tokens",
        format_number(seconds),
        format_grouped(f64::from(r.input)),
        format_grouped(f64::from(r.output))
    )
}

/// Each request's time to first token against its input length: prefill grows with it.
pub fn ttft_by_input(sources: &[Source], view: &ViewState) -> Plot {
    let y = YAxis::new(Metric::Ttft.label(), Metric::Ttft.unit());
    by_length(sources, view, XAxis::RequestInput, y, |r| {
        (r.input, r.ttft_s)
    })
}

/// Each request's end-to-end latency against its output length: decoding grows with it.
pub fn e2e_by_output(sources: &[Source], view: &ViewState) -> Plot {
    let y = YAxis::new("End-to-end latency", "s");
    by_length(sources, view, XAxis::RequestOutput, y, |r| {
        (r.output, r.e2e_s)
    })
}

/// One side of a request's lengths, input or output.
type Side = fn(&RequestLengths) -> u32;

/// How many requests had each length, input and output, per scenario of varied lengths (its
/// levels' successful requests together).
pub fn histograms(sources: &[Source], view: &ViewState) -> Plot {
    let mut p = plot(XAxis::RequestTokens, vec![YAxis::new("Requests", "")], view);
    for source in deep_dive::shown(sources, view) {
        let report = source.analysis.report();
        for scenario in &report.scenarios {
            let requests: Vec<RequestLengths> = report
                .series
                .iter()
                .filter(|s| s.scenario == scenario.id)
                .flat_map(|s| &s.levels)
                .flat_map(LevelLengths::requests)
                .collect();
            let sides: [(&str, Side); 2] = [("input", |r| r.input), ("output", |r| r.output)];
            for (side, length) in sides {
                let lengths: Vec<u32> = requests.iter().map(length).collect();
                let bins = histogram(&lengths, BINS);
                if bins.is_empty() {
                    continue;
                }
                let points = bins.iter().map(|&(x, n)| (x, f64::from(n))).collect();
                let shows = format!("{}, {side}", scenario.name);
                p.lines
                    .push(source_line(sources, source, &shows, 0, points));
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::RequestColumns;

    fn varied() -> infermeter_report::Report {
        let mut report = sample();
        report.series[0].levels[0].per_request = Some(RequestColumns {
            status: vec![0, 0, 2, 0],
            ttft: vec![300, 100, 0, 200],
            e2e: vec![3000, 1000, 0, 2000],
            output_tokens: vec![30, 10, 0, 20],
            input_tokens: vec![300, 100, 50, 200],
            ..Default::default()
        });
        report
    }

    #[test]
    fn a_report_of_fixed_lengths_has_no_length_charts() {
        let report = sample();
        for chart in [ttft_by_input, e2e_by_output, histograms] {
            let p = with_sources(&report, |s| chart(s, &ViewState::default()));
            assert!(p.is_empty());
        }
    }

    #[test]
    fn each_request_is_a_point_that_names_its_lengths() {
        let report = varied();
        let p = with_sources(&report, |s| ttft_by_input(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 1);
        let line = &p.lines[0];
        assert_eq!(line.kind, LineKind::Points);
        // The failed request is left out; the others by input length.
        let points: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|&(x, y)| (x, (y * 1e4).round() / 1e4))
            .collect();
        assert_eq!(points, vec![(100.0, 0.01), (200.0, 0.02), (300.0, 0.03)]);
        let json = chart_json(&p);
        assert_eq!(x_axis(&json)["name"], "Input tokens of the request");
        let tooltip = json["tooltip"]["formatter"].as_str().unwrap();
        assert!(
            tooltip.contains("0.01 s: a request of 100 input and 10 output tokens"),
            "{tooltip}"
        );
        let e2e = with_sources(&report, |s| e2e_by_output(s, &ViewState::default()));
        assert_eq!(e2e.lines[0].points[0].0, 10.0);
        assert!((e2e.lines[0].points[0].1 - 0.1).abs() < 1e-12);
    }

    #[test]
    fn histograms_count_the_requests_of_each_length() {
        let report = varied();
        let p = with_sources(&report, |s| histograms(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 2);
        assert!(p.lines[0].name.ends_with(", input"), "{}", p.lines[0].name);
        let total: f64 = p.lines[1].points.iter().map(|p| p.1).sum();
        assert_eq!(total, 3.0);
    }
}
