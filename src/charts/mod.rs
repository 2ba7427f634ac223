//! One pure function per chart: `fn(&[Source], &ViewState) -> Plot`, rendered to a
//! [`option::ChartOption`] of charming types (and CSV) by [`plot`]. No signals, no DOM: every
//! chart is tested natively. Each chart is named once, in [`registry`].

pub mod agents;
pub mod capacity;
pub mod choice;
pub mod deep_dive;
pub mod fastest;
pub mod goodput;
pub mod lengths;
pub mod option;
pub mod plot;
pub mod power;
pub mod registry;
pub mod scale_up;
pub mod throughput;
pub mod users;
pub mod what_if;

use std::borrow::Borrow;

use infermeter_report::analysis::{series_points, Analysis, Metric};
use infermeter_report::{LoadMode, Report, Series, Stat};

use crate::state::ViewState;
use plot::{Line, Plot, YAxis};

/// One loaded report and the label its series carry when several reports are overlaid.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Position among the reports shown together (0: the main one).
    pub index: usize,
    pub label: &'a str,
    pub analysis: Analysis<'a>,
}

/// Pairs reports with their labels (`labels` from the report crate's `report_labels`).
pub fn sources<'a, R: Borrow<Report>>(reports: &'a [R], labels: &'a [String]) -> Vec<Source<'a>> {
    reports
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(index, (report, label))| Source {
            index,
            label,
            analysis: Analysis::new(report.borrow()),
        })
        .collect()
}

/// Series name: the scenario's name, prefixed by the report label when comparing.
pub fn series_name(sources: &[Source], source: &Source, name: &str) -> String {
    labelled(source.label, name, sources.len() > 1)
}

/// `name` prefixed by a report's label when reports are compared: "2x H200 · Chatbot".
pub fn labelled(label: &str, name: &str, comparing: bool) -> String {
    if comparing {
        format!("{label} · {name}")
    } else {
        name.to_string()
    }
}

/// A plain line of `source` showing `shows` (a scenario…), named by [`series_name`].
pub fn source_line(
    sources: &[Source],
    source: &Source,
    shows: &str,
    axis: usize,
    points: Vec<(f64, f64)>,
) -> Line {
    Line::plain(series_name(sources, source, shows), axis, points).of_report(source.index, shows)
}

/// The y axis of `metric`, e.g. "Inter-token latency (ms)" with the selected statistic.
pub fn metric_axis(metric: Metric, stat: Stat) -> YAxis {
    let name = if metric.has_distribution() {
        format!("{}, {}", metric.label(), stat.label())
    } else {
        metric.label().to_string()
    };
    YAxis::new(name, metric.unit())
}

/// One line per scenario (per report) of `metric` under `mode`, in display units; scenarios
/// without a series or without the metric are left out.
pub fn scenario_lines(
    sources: &[Source],
    mode: LoadMode,
    metric: Metric,
    stat: Stat,
    axis: usize,
) -> Vec<Line> {
    sources
        .iter()
        .flat_map(|source| {
            source
                .analysis
                .report()
                .scenarios
                .iter()
                .filter_map(move |scenario| {
                    let points = display_points(source, &scenario.id, mode, metric, stat);
                    (!points.is_empty()).then(|| Line {
                        input_tokens: Some(scenario.input_tokens),
                        indicative: indicative_points(source, &scenario.id, mode, metric, stat),
                        ..source_line(sources, source, &scenario.name, axis, points)
                    })
                })
        })
        .collect()
}

/// `(concurrency, value in display units)` of one scenario.
pub fn display_points(
    source: &Source,
    scenario_id: &str,
    mode: LoadMode,
    metric: Metric,
    stat: Stat,
) -> Vec<(f64, f64)> {
    source
        .analysis
        .series(scenario_id, mode)
        .map(|s| series_display_points(s, metric, stat))
        .unwrap_or_default()
}

/// `(load, value in display units)` of one series.
pub fn series_display_points(series: &Series, metric: Metric, stat: Stat) -> Vec<(f64, f64)> {
    series_points(series, metric, stat)
        .into_iter()
        .map(|(c, v)| (f64::from(c), metric.to_display(v)))
        .collect()
}

/// For each point [`display_points`] gives (by index), its sample count when `stat` of it is
/// only indicative.
pub fn indicative_points(
    source: &Source,
    scenario_id: &str,
    mode: LoadMode,
    metric: Metric,
    stat: Stat,
) -> Vec<Option<u64>> {
    let Some(series) = source.analysis.series(scenario_id, mode) else {
        return Vec::new();
    };
    series
        .levels
        .iter()
        .filter(|l| metric.value(l, stat).is_some())
        .map(|l| metric.samples(l).filter(|&n| stat.is_indicative(n)))
        .collect()
}

/// A plot with the view's theme and cursor; the chart modules fill lines and thresholds.
pub fn plot(x: plot::XAxis, y: Vec<YAxis>, view: &ViewState) -> Plot {
    Plot {
        x,
        y,
        lines: Vec::new(),
        thresholds: Vec::new(),
        cursor: view.at,
        theme: view.theme,
        item_tooltip: false,
        marker_x: None,
    }
}

#[cfg(test)]
mod single_edits;
#[cfg(test)]
pub(crate) mod test_support;

#[cfg(test)]
mod tests {
    use super::registry::{chart_by_id, chart_csv, chart_list, plot_by_id, CHARTS, FASTEST_DECODE};
    use super::test_support::*;
    use super::*;
    use infermeter_report::analysis::labels::report_labels;

    const HOSTILE: &str = "<img src=x onerror=alert(1)>";

    fn hostile_sample() -> Report {
        let mut report = sample();
        report.scenarios[0].name = HOSTILE.into();
        report.metadata.hardware.gpu_model = format!("{HOSTILE} GPU");
        report
    }

    /// Every chart draws from the synthetic sample or, for the Users section's, from the
    /// session fixture (a sweep, sessions and a trace measured on the simulator), or, for the
    /// What-if section's, from a report with a fit, or, for the length charts, from the fixture
    /// of varied request lengths.
    #[test]
    fn every_fixed_chart_renders_from_the_samples() {
        let (report, sessions) = (sample(), sessions_sample());
        let (fitted, lengths, agents) = (fitted_sample(), lengths_sample(), agents_sample());
        for chart in CHARTS {
            let id = chart.id;
            let drawn = [&report, &sessions, &fitted, &lengths, &agents].map(|r| {
                with_sources(r, |s| {
                    let plot = plot_by_id(id, s, &ViewState::default()).unwrap();
                    let csv = chart_csv(id, s, &ViewState::default()).unwrap();
                    let rows = plot.lines.iter().map(|l| l.points.len()).sum::<usize>();
                    assert_eq!(csv.lines().count(), rows + 1, "{id}");
                    !plot.is_empty()
                })
            });
            // The sample has no sessions: the Users charts show nothing there. Only the lengths
            // fixture's requests had lengths of their own, only the agents fixture ran jobs.
            if id.starts_with("users.") {
                assert_eq!(drawn[..2], [false, true], "{id}");
            } else if id.starts_with("what_if.") {
                assert_eq!(drawn[..4], [false, false, true, false], "{id}");
            } else if id.starts_with("lengths.") {
                assert_eq!(drawn[..4], [false, false, false, true], "{id}");
            } else if id.starts_with("agents.") {
                assert_eq!(drawn, [false, false, false, false, true], "{id}");
            } else {
                assert!(drawn[0], "{id} has no data");
            }
        }
        with_sources(&report, |s| {
            for (id, _) in chart_list(s) {
                assert!(chart_by_id(&id, s, &ViewState::default()).is_some(), "{id}");
            }
            assert!(chart_by_id("nope", s, &ViewState::default()).is_none());
            assert!(chart_by_id("capacity.nope", s, &ViewState::default()).is_none());
        });
    }

    #[test]
    fn report_text_reaches_html_only_through_the_escaping_tooltip() {
        let report = hostile_sample();
        let json = with_sources(&report, |s| {
            chart_json(&fastest::decode(s, &ViewState::default()))
        });
        // Series names are canvas text (legend): raw, so they read exactly as written.
        assert_eq!(json["series"][0]["name"], HOSTILE);
        // The tooltip is HTML: its formatter is our escaping function (public/infermeter-echarts.js,
        // tested in plot.rs) and its arguments hold no report text.
        let formatter = json["tooltip"]["formatter"].as_str().unwrap();
        assert!(formatter.starts_with("infermeter:tooltip:"), "{formatter}");
        assert!(!formatter.contains("<img"), "{formatter}");
        // Nothing else in the option carries the name.
        let text = json.to_string();
        assert_eq!(text.matches("onerror").count(), 1, "{text}");
    }

    #[test]
    fn compared_reports_prefix_series_with_their_label() {
        let a = sample();
        let mut b = sample();
        b.metadata.hardware.gpu_model = "NVIDIA H200".into();
        b.metadata.hardware.gpu_count = 2;
        let reports = [a.clone(), b];
        let labels = report_labels(&reports);
        assert_eq!(labels[1], "2x H200");
        let p = with_all_sources(&reports, |s| fastest::decode(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 2 * peak_scenarios(&a));
        assert!(p.lines[0].name.starts_with(&format!("{} · ", labels[0])));
        assert!(p.lines.last().unwrap().name.starts_with("2x H200 · "));
        let same = report_labels(&[a.clone(), a.clone()]);
        assert_ne!(same[0], same[1]);
    }

    /// A sweep's configurations on one GPU: the legend names the setting, not the GPU.
    #[test]
    fn a_sweeps_configurations_are_labelled_by_their_parameters() {
        let configured = |mns: &str| {
            let mut r = sample();
            r.metadata.configuration = Some(infermeter_report::Configuration {
                sweep: Some("mns".into()),
                parameters: [("mns", mns), ("tp", "1")].into_iter().collect(),
            });
            r
        };
        let reports = [configured("64"), configured("128")];
        assert_eq!(report_labels(&reports), ["mns=64", "mns=128"]);
        let p = with_all_sources(&reports, |s| fastest::decode(s, &ViewState::default()));
        assert!(p.lines.last().unwrap().name.starts_with("mns=128 · "));
    }

    /// H100 vs H200: a scenario keeps its colour across reports; the second report's lines are
    /// dashed with their own symbol, in the chart and in its legend.
    #[test]
    fn compared_reports_share_scenario_colours_and_differ_by_dash_and_symbol() {
        let a = sample();
        let mut b = sample();
        b.metadata.hardware.gpu_model = "NVIDIA H200".into();
        let p = with_all_sources(&[a.clone(), b], |s| {
            fastest::decode(s, &ViewState::default())
        });
        let n = peak_scenarios(&a);
        let option = p.to_option();
        let json = chart_json(&p);
        let series = json["series"].as_array().unwrap();
        for i in 0..n {
            let (first, second) = (&series[i], &series[n + i]);
            assert_eq!(p.lines[i].shows, p.lines[n + i].shows);
            assert_eq!(first["itemStyle"]["color"], second["itemStyle"]["color"]);
            assert!(first["lineStyle"]["type"].is_null(), "solid");
            assert_eq!(second["lineStyle"]["type"], "dashed");
            assert_ne!(first["symbol"], second["symbol"]);
            assert_eq!(option.legend[i].dash, option::Dash::Solid);
            assert_eq!(option.legend[n + i].dash, option::Dash::Dashed);
        }
        let colors: std::collections::HashSet<_> = series[..n]
            .iter()
            .map(|s| &s["itemStyle"]["color"])
            .collect();
        assert_eq!(colors.len(), n, "one colour per scenario");
    }

    #[test]
    fn cursor_marks_interpolated_points_inside_the_measured_range_only() {
        let report = sample();
        let levels = peak_levels(&report);
        let between = (levels[2]..levels[3]).nth(1).expect("a gap between levels");
        let view = ViewState {
            at: Some(between),
            ..ViewState::default()
        };
        let p = with_sources(&report, |s| fastest::decode(s, &view));
        let estimates = p.cursor_estimates();
        assert_eq!(estimates.len(), p.lines.len());
        assert!(estimates
            .iter()
            .all(|(_, e)| e.is_some_and(|e| !e.measured)));
        let json = chart_json(&p);
        assert_eq!(
            json["series"][0]["markPoint"]["data"][0]["name"],
            "interpolated"
        );
        assert_eq!(
            json["series"][0]["markPoint"]["data"][0]["xAxis"],
            f64::from(between)
        );
        let cursor = json["series"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(cursor["name"], "Cursor");
        assert!(cursor["markLine"]["data"][0]["label"]["formatter"]
            .as_str()
            .unwrap()
            .contains("interpolated"));

        let beyond = ViewState {
            at: Some(levels.last().unwrap() + 1),
            ..ViewState::default()
        };
        let p = with_sources(&report, |s| fastest::decode(s, &beyond));
        assert!(p.cursor_estimates().iter().all(|(_, e)| e.is_none()));
        let json = chart_json(&p);
        assert!(json["series"][0]["markPoint"].is_null());
        assert!(json["series"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["name"] != "Cursor"));
    }

    #[test]
    fn percentile_selector_changes_the_values() {
        let report = sample();
        let mean = with_sources(&report, |s| fastest::itl(s, &ViewState::default()));
        let p99 = with_sources(&report, |s| {
            fastest::itl(
                s,
                &ViewState {
                    stat: Stat::P99,
                    ..ViewState::default()
                },
            )
        });
        assert!(p99.lines[0].points[0].1 > mean.lines[0].points[0].1);
        assert!(p99.y[0].name.ends_with("p99"));
    }

    /// At p99 a burst level of fewer than 1,000 requests has too few samples beyond it: its
    /// point is drawn hollow and its tooltip says how many samples it rests on; at the mean no
    /// point is marked.
    #[test]
    fn percentiles_on_few_samples_are_drawn_hollow_and_say_so() {
        let report = sample();
        let p99 = ViewState {
            stat: Stat::P99,
            ..ViewState::default()
        };
        let p = with_sources(&report, |s| scale_up::ttft(s, &p99));
        assert_eq!(p.lines[0].indicative_at(0), Some(1));
        let json = chart_json(&p);
        let first = &json["series"][0]["data"][0];
        assert!(first["itemStyle"]["borderWidth"].is_number(), "{first}");
        let formatter = json["tooltip"]["formatter"].as_str().unwrap();
        assert!(formatter.contains("(indicative: 1 sample)"), "{formatter}");
        let mean = with_sources(&report, |s| scale_up::ttft(s, &ViewState::default()));
        assert!(mean
            .lines
            .iter()
            .all(|l| l.indicative.iter().all(Option::is_none)));
        assert!(chart_json(&mean)["series"][0]["data"][0].is_array());
    }

    #[test]
    fn csv_quotes_names_with_commas() {
        let mut report = sample();
        report.scenarios[0].name = "RAG, \"QA\"".into();
        let csv = with_sources(&report, |s| {
            chart_csv(FASTEST_DECODE.id, s, &ViewState::default())
        })
        .unwrap();
        assert!(csv.starts_with("series,x_axis,x,value,unit\n"));
        assert!(
            csv.contains("\"RAG, \"\"QA\"\"\",Concurrent users,1,"),
            "{csv}"
        );
    }
}
