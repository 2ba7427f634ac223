//! Technical deep dive: infrastructure metrics against context length (x = input tokens), one
//! line per concurrency level, so a peak before the longest context shows as a bend.

use infermeter_report::analysis::Metric;
use infermeter_report::{LoadMode, Stat};

use super::fastest::{instant_itl_s, itl_threshold};
use super::plot::{Plot, XAxis};
use super::{metric_axis, plot, source_line, Source};
use crate::state::ViewState;

/// `metric` by context length, one line per concurrency level of each report (peak mode).
pub fn by_context(sources: &[Source], view: &ViewState, metric: Metric) -> Plot {
    let mut p = plot(
        XAxis::ContextTokens,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    for source in sources {
        for (concurrency, points) in context_points(source, metric, view.stat) {
            let points = points
                .into_iter()
                .map(|(tokens, v)| (f64::from(tokens), metric.to_display(v)))
                .collect();
            let shows = format!("{concurrency} concurrent");
            p.lines
                .push(source_line(sources, source, &shows, 0, points));
        }
    }
    p
}

/// Concurrency -> `(input tokens, value in stored units)` over the report's scenarios,
/// ascending both ways. Scenarios sharing an input length keep the first one measured.
pub fn context_points(source: &Source, metric: Metric, stat: Stat) -> Vec<(u32, Vec<(u32, f64)>)> {
    let report = source.analysis.report();
    let mut by_level: Vec<(u32, Vec<(u32, f64)>)> = Vec::new();
    for scenario in &report.scenarios {
        for (concurrency, value) in
            source
                .analysis
                .points(&scenario.id, LoadMode::Peak, metric, stat)
        {
            let slot = match by_level.iter_mut().find(|(c, _)| *c == concurrency) {
                Some((_, points)) => points,
                None => {
                    by_level.push((concurrency, Vec::new()));
                    &mut by_level.last_mut().expect("just pushed").1
                }
            };
            if !slot.iter().any(|(t, _)| *t == scenario.input_tokens) {
                slot.push((scenario.input_tokens, value));
            }
        }
    }
    by_level.sort_by_key(|(c, _)| *c);
    for (_, points) in &mut by_level {
        points.sort_by_key(|(t, _)| *t);
    }
    by_level
}

/// System throughput (reference 003's "System Throughput" chart).
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
    p.thresholds.push(itl_threshold(instant_itl_s(), "instant"));
    p
}

/// Scaling efficiency.
pub fn scaling(sources: &[Source], view: &ViewState) -> Plot {
    by_context(sources, view, Metric::ScalingEfficiency)
}

/// Where per-user prefill speed peaks at one concurrency.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefillPeak {
    pub concurrency: u32,
    pub input_tokens: u32,
    pub tok_s: f64,
}

/// The peak prefill speed and its context length at each concurrency (the reference table).
pub fn prefill_peaks(source: &Source, stat: Stat) -> Vec<PrefillPeak> {
    context_points(source, Metric::PrefillTokS, stat)
        .into_iter()
        .filter_map(|(concurrency, points)| {
            points
                .into_iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(input_tokens, tok_s)| PrefillPeak {
                    concurrency,
                    input_tokens,
                    tok_s,
                })
        })
        .collect()
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

    #[test]
    fn prefill_peaks_pick_the_fastest_context() {
        let report = sample();
        let peaks = with_sources(&report, |s| prefill_peaks(&s[0], Stat::Mean));
        // From the file itself: at each peak-mode concurrency, the scenario whose mean prefill
        // speed is highest, with its input length.
        let levels = peak_levels(&report);
        assert_eq!(peaks.len(), levels.len());
        for (peak, &c) in peaks.iter().zip(&levels) {
            let (input_tokens, tok_s) = report
                .series
                .iter()
                .filter(|s| s.mode == infermeter_report::LoadMode::Peak)
                .filter_map(|s| {
                    let level = s.levels.iter().find(|l| l.concurrency == c)?;
                    let scenario = report.scenarios.iter().find(|x| x.id == s.scenario)?;
                    Some((
                        scenario.input_tokens,
                        level.metrics.prefill_tok_s.as_ref()?.mean,
                    ))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert_eq!(
                (peak.concurrency, peak.input_tokens, peak.tok_s),
                (c, input_tokens, tok_s)
            );
        }
    }
}
