//! The Pareto chart of "Which configuration?": every compared report's operating points of one
//! scenario, interactivity across and the chosen figure up (throughput per GPU, cost, energy),
//! one curve per report with each point labelled by its load, the frontier drawn over them
//! (wide and half-transparent, so the points under it stay visible and hoverable) and the
//! points off it faded. Its second view puts end-to-end latency across. Every figure comes
//! from the report crate's `configuration` module, as the section's table and `infermeter
//! summary` read it.

use infermeter_report::analysis::configuration::frontier::scenarios;
use infermeter_report::analysis::configuration::{
    compared_mode, report_prices, series_points, Figure, OperatingPoint, ScenarioFrontier,
    SeriesPoints,
};
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;
use infermeter_report::Report;

use super::plot::{Line, Plot, XAxis, YAxis};
use super::{labelled, plot, Source};
use crate::state::{ChoiceView, ViewState};

/// The name of the frontier's line (and legend entry).
pub const FRONTIER_LINE: &str = "Pareto frontier";

/// Every compared series under the view: the reports' mode, the statistic, the prices.
pub fn compared_series(sources: &[Source], view: &ViewState) -> Vec<SeriesPoints> {
    let reports: Vec<&Report> = sources.iter().map(|s| s.analysis.report()).collect();
    let prices = report_prices(&reports, &view.choice.prices);
    series_points(&reports, compared_mode(&reports), view.stat, &prices)
}

/// The scenario shown: the reader's when the reports have it, else the first compared.
pub fn shown_scenario(series: &[SeriesPoints], choice: &ChoiceView) -> Option<String> {
    let all = scenarios(series);
    choice
        .scenario
        .as_ref()
        .filter(|id| all.iter().any(|(s, _)| s == *id))
        .cloned()
        .or_else(|| all.first().map(|(id, _)| id.clone()))
}

/// The Pareto chart.
pub fn frontier(sources: &[Source], view: &ViewState) -> Plot {
    let choice = &view.choice;
    let x_axis = match choice.x {
        Figure::E2e => XAxis::E2eLatency,
        _ => XAxis::Interactivity,
    };
    let mut p = plot(
        x_axis,
        vec![YAxis::new(choice.y.label(), choice.y.unit())],
        view,
    );
    p.item_tooltip = true;
    if choice.x == Figure::Interactivity {
        p.marker_x = Some((
            choice.interactivity,
            format!(
                "target {}",
                Figure::Interactivity.text(choice.interactivity)
            ),
        ));
    }
    let series = compared_series(sources, view);
    let Some(scenario) = shown_scenario(&series, choice) else {
        return p;
    };
    let front = ScenarioFrontier::of(&series, &scenario, choice.x, choice.y);
    let comparing = sources.len() > 1;
    for (index, s) in series.iter().enumerate() {
        let Some(source) = sources.get(s.report).filter(|_| s.scenario == scenario) else {
            continue;
        };
        let xy = s.xy(choice.x, choice.y);
        let name = labelled(source.label, &s.name(), comparing);
        let points = xy.iter().map(|&(_, x, y)| (x, y)).collect();
        p.lines.push(Line {
            point_labels: xy
                .iter()
                .map(|&(i, ..)| format_number(s.points[i].load))
                .collect(),
            faded: xy.iter().map(|&(i, ..)| !front.is_on(index, i)).collect(),
            details: xy
                .iter()
                .map(|&(i, ..)| point_details(s, &s.points[i], front.is_on(index, i)))
                .collect(),
            // A colour per report: the chart shows one scenario.
            ..Line::plain(name, 0, points).of_report(source.index, source.label)
        });
    }
    if !front.frontier.is_empty() {
        // Each frontier point's report and load are in the tooltip of the point under it.
        p.lines.push(Line {
            overlay: true,
            ..Line::plain(
                FRONTIER_LINE,
                0,
                front.frontier.iter().map(|f| (f.x, f.y)).collect(),
            )
        });
    }
    p
}

/// What the tooltip says of one point: its load and every figure, and whether a point of
/// another configuration or load beats it on both axes.
fn point_details(s: &SeriesPoints, p: &OperatingPoint, on_frontier: bool) -> Vec<String> {
    let mut lines = vec![format!("{} {}", format_number(p.load), s.mode.unit(p.load))];
    for (name, figure) in [
        ("Interactivity", Figure::Interactivity),
        ("Throughput", Figure::ThroughputPerGpu),
        ("Cost", Figure::UsdPerMillion),
        ("Energy", Figure::JoulesPerToken),
        ("Per kW", Figure::TokSPerKw),
        ("E2E", Figure::E2e),
        (Metric::Ttft.short_label(), Figure::Ttft),
    ] {
        let text = match (figure.value(p), figure) {
            (Some(v), Figure::UsdPerMillion) => format!("{} per M output tokens", figure.text(v)),
            (Some(v), _) => figure.text(v),
            (None, Figure::UsdPerMillion) => "no price set".into(),
            (None, Figure::JoulesPerToken | Figure::TokSPerKw) => continue,
            (None, _) => "not measured".into(),
        };
        lines.push(format!("{name}: {text}"));
    }
    lines.push(
        if on_frontier {
            "On the Pareto frontier"
        } else {
            "Off the frontier: another point is better on both axes"
        }
        .into(),
    );
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::{chart_json, sample, with_all_sources};

    /// The sample on an H100 and a copy on an "H200" twice as fast: the H200's points hold
    /// the frontier, the H100's are faded, and every point says its load.
    #[test]
    fn one_curve_per_report_under_the_frontier() {
        let a = sample();
        let mut b = sample();
        b.metadata.hardware.gpu_model = "NVIDIA H200".into();
        for s in &mut b.series {
            for l in &mut s.levels {
                l.system_output_tok_s *= 2.0;
            }
        }
        let p = with_all_sources(&[a, b], |s| frontier(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 3, "two reports and the frontier");
        let (h100, h200, front) = (&p.lines[0], &p.lines[1], &p.lines[2]);
        assert!(h100.name.ends_with("· Chatbot"), "{}", h100.name);
        assert_eq!(front.name, FRONTIER_LINE);
        assert!(h100.faded.iter().all(|f| *f));
        assert!(h200.faded.iter().all(|f| !*f));
        assert_eq!(front.points.len(), h200.points.len());
        assert_eq!(h100.point_labels[0], "1");
        assert!(h200.details[0]
            .iter()
            .any(|l| l == "On the Pareto frontier"));
        assert!(
            h200.details[0][0].ends_with("concurrent user"),
            "{:?}",
            h200.details[0]
        );
        let json = chart_json(&p);
        assert_eq!(json["tooltip"]["trigger"], "item");
        assert!(json["tooltip"]["formatter"]
            .as_str()
            .unwrap()
            .starts_with("infermeter:point:"));
        // The target interactivity is a vertical line.
        let target = json["series"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(target["markLine"]["data"][0]["xAxis"], 20.0);
    }

    #[test]
    fn the_second_view_and_another_scenario() {
        let mut view = ViewState::default();
        view.choice.x = Figure::E2e;
        view.choice.scenario = Some("rag_qa".into());
        let p = with_all_sources(&[sample()], |s| frontier(s, &view));
        assert_eq!(p.x, XAxis::E2eLatency);
        assert!(p.marker_x.is_none());
        assert_eq!(p.lines[0].name, "RAG / QA");
        view.choice.scenario = Some("nope".into());
        let first = with_all_sources(&[sample()], |s| frontier(s, &view));
        assert_eq!(first.lines[0].name, "Chatbot");
    }
}
