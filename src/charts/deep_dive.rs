//! Technical deep dive: infrastructure metrics against context length (x = input tokens), one
//! line per concurrency level, so a peak before the longest context shows as a bend. In a
//! comparison each chart draws the reports the reader picked ([`shown`]): by default the main
//! one, since every report's levels together make a tangle of lines.

use infermeter_report::analysis::findings::context;
use infermeter_report::analysis::Metric;
use infermeter_report::presets::INSTANT_ITL_S;

use super::fastest::itl_threshold;
use super::plot::{Line, Plot, XAxis};
use super::{metric_axis, plot, source_line, Source};
use crate::state::ViewState;

/// The reports the deep dive's charts draw: those `view.deep_dive` picks.
pub fn shown<'a, 's>(
    sources: &'a [Source<'s>],
    view: &ViewState,
) -> impl Iterator<Item = &'a Source<'s>> {
    let pick = view.deep_dive;
    sources
        .iter()
        .filter(move |s| pick.shows(s.index, sources.len()))
}

/// `metric` by context length, one line per concurrency level of each report shown (peak mode).
pub fn by_context(sources: &[Source], view: &ViewState, metric: Metric) -> Plot {
    let mut p = plot(
        XAxis::ContextTokens,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    for source in shown(sources, view) {
        for line in context::by_context(source.analysis.report(), metric, view.stat) {
            let points = line
                .points
                .iter()
                .map(|at| (f64::from(at.input_tokens), metric.to_display(at.value)))
                .collect();
            let shows = format!("{} concurrent", line.concurrency);
            p.lines.push(Line {
                indicative: line
                    .points
                    .iter()
                    .map(|at| at.indicative(view.stat))
                    .collect(),
                ..source_line(sources, source, &shows, 0, points)
            });
        }
    }
    p
}

/// System throughput (reference 003's chart of it by context).
pub fn throughput(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::SystemOutputTokS)
}

/// Per-user generation speed.
pub fn decode(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::DecodeTokS)
}

/// Time to first token.
pub fn ttft(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::Ttft)
}

/// Server-reported queue wait.
pub fn queue_wait(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::QueueWait)
}

/// Per-user prefill speed.
pub fn prefill(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::PrefillTokS)
}

/// Inter-token latency, with the 20 ms line of instant streaming (reference 002).
pub fn itl(sources: &[Source], view: &ViewState) -> Plot {
    let mut p = by_context(sources, view, Metric::Itl);
    p.thresholds.push(itl_threshold(INSTANT_ITL_S, "instant"));
    p
}

/// Scaling efficiency.
pub fn scaling(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::ScalingEfficiency)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn one_line_per_concurrency_against_context_length() {
        let report = sample();
        let p = with_sources(&report, |s| itl(s, &ViewState::default()));
        let levels = peak_levels(&report);
        assert_eq!(p.lines.len(), levels.len());
        assert_eq!(p.lines[0].name, format!("{} concurrent", levels[0]));
        assert!(p.lines[0].points.windows(2).all(|w| w[0].0 < w[1].0));
        let json = chart_json(&p);
        assert_eq!(x_axis(&json)["name"], "Context length (input tokens)");
        // Reference 002's 20 ms line of instant streaming.
        assert_eq!(threshold_values(&json), vec![20.0]);
    }

    /// In a comparison each report's levels are lines of their own: the main report's alone by
    /// default, another report's when picked, every report's when all are.
    #[test]
    fn a_comparison_draws_the_picked_report() {
        let (a, b) = (sample(), sample());
        let levels = peak_levels(&a).len();
        let reports = [a, b];
        let lines = |deep: &str| {
            let view = ViewState::from_query(deep);
            with_all_sources(&reports, |s| {
                let p = throughput(s, &view);
                p.lines.iter().map(|l| l.name.clone()).collect::<Vec<_>>()
            })
        };
        let (main, second, all) = (lines(""), lines("deep=1"), lines("deep=all"));
        assert_eq!(
            (main.len(), second.len(), all.len()),
            (levels, levels, 2 * levels)
        );
        assert_ne!(main, second, "the report's label names its lines");
        assert_eq!([main, second].concat(), all);
        assert_eq!(lines("deep=9"), lines(""));
    }
}
