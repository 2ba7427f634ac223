//! Figures by context length (peak mode): each concurrency's values across the scenarios'
//! input lengths, as the deep dive draws them, and what the reports read from them.

use schemars::JsonSchema;
use serde::Serialize;

use super::{located_points, Located, Range};
use crate::analysis::metric::Metric;
use crate::schema::{LoadMode, Report};
use crate::stats::Stat;

/// One concurrency's values by context length, ascending input tokens.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContextLine {
    pub concurrency: u32,
    pub points: Vec<Located>,
}

/// `metric` by context length, one line per peak concurrency, ascending both ways. Scenarios
/// sharing an input length keep the first listed. Only the concurrencies measured at the most
/// context lengths draw a line: a search's probes of one or two scenarios are points or stubs,
/// not lines by context, and would bury the sweep's lines (they stay in every other chart and
/// table).
pub fn by_context(report: &Report, metric: Metric, stat: Stat) -> Vec<ContextLine> {
    let mut lines: Vec<ContextLine> = Vec::new();
    for point in located_points(report, LoadMode::Peak, metric, stat) {
        let line = match lines
            .iter_mut()
            .position(|l| l.concurrency == point.concurrency)
        {
            Some(i) => &mut lines[i],
            None => {
                lines.push(ContextLine {
                    concurrency: point.concurrency,
                    points: Vec::new(),
                });
                lines.last_mut().expect("just pushed")
            }
        };
        if !line
            .points
            .iter()
            .any(|p| p.input_tokens == point.input_tokens)
        {
            line.points.push(point);
        }
    }
    let widest = lines.iter().map(|l| l.points.len()).max().unwrap_or(0);
    lines.retain(|l| l.points.len() == widest);
    crate::order::sort_by_key(&mut lines, |l| l.concurrency);
    for line in &mut lines {
        crate::order::sort_by_key(&mut line.points, |p| p.input_tokens);
    }
    lines
}

/// A single-user figure (peak mode, one request) at the shortest and at the longest context
/// measured: how the experience changes with context, as the reports' key findings give it
/// ("381 ms (1K context) → 109.9 s (256K context)").
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContextSpan {
    pub shortest: Located,
    /// The same as `shortest` when one context was measured.
    pub longest: Located,
}

/// System throughput along the highest concurrency's line, and where adding requests stops
/// paying: from which context up it gives no more than the lowest concurrency (reference 003).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContextThroughput {
    /// The lowest concurrency measured.
    pub lowest: u32,
    /// The top line's value at its shortest and at its longest context.
    pub shortest: Located,
    pub longest: Located,
    /// The shortest context of the longest run of contexts (up to the longest) where the top
    /// concurrency is no higher than the lowest one, with the lowest one's value there.
    pub no_gain_from: Option<(Located, f64)>,
}

/// The peak prefill speed of one concurrency and the context it peaks at.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PrefillPeak {
    pub concurrency: u32,
    pub at: Located,
}

/// The figures by context length of one report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContextFindings {
    pub single_user_ttft: Option<ContextSpan>,
    pub single_user_decode: Option<ContextSpan>,
    pub throughput: Option<ContextThroughput>,
    /// Scaling efficiency across concurrencies at the longest context any reached.
    pub scaling_at_longest: Option<Range>,
    /// Per concurrency, ascending.
    pub prefill_peaks: Vec<PrefillPeak>,
}

impl ContextFindings {
    pub(super) fn of(report: &Report, stat: Stat) -> ContextFindings {
        ContextFindings {
            single_user_ttft: single_user(report, Metric::Ttft, stat),
            single_user_decode: single_user(report, Metric::DecodeTokS, stat),
            throughput: throughput(&by_context(report, Metric::SystemOutputTokS, stat)),
            scaling_at_longest: at_longest(&by_context(report, Metric::ScalingEfficiency, stat)),
            prefill_peaks: by_context(report, Metric::PrefillTokS, stat)
                .into_iter()
                .filter_map(|line| {
                    Some(PrefillPeak {
                        concurrency: line.concurrency,
                        at: Range::of(line.points, Metric::PrefillTokS)?.high,
                    })
                })
                .collect(),
        }
    }
}

/// `metric` at one request over the scenarios by input length; `None` when no scenario
/// measured a single request.
fn single_user(report: &Report, metric: Metric, stat: Stat) -> Option<ContextSpan> {
    let mut points: Vec<Located> = located_points(report, LoadMode::Peak, metric, stat)
        .into_iter()
        .filter(|p| p.concurrency == 1)
        .collect();
    // Stable: of scenarios with the same input length, the first listed stands for it.
    crate::order::sort_by_key(&mut points, |p| p.input_tokens);
    Some(ContextSpan {
        shortest: points.first()?.clone(),
        longest: points.last()?.clone(),
    })
}

fn throughput(lines: &[ContextLine]) -> Option<ContextThroughput> {
    let (lowest, top) = (lines.first()?, lines.last()?);
    let (shortest, longest) = (top.points.first()?, top.points.last()?);
    if shortest.input_tokens == longest.input_tokens {
        return None;
    }
    let lowest_at = |tokens: u32| {
        let p = lowest.points.iter().find(|p| p.input_tokens == tokens)?;
        Some(p.value)
    };
    let no_gain_from = (lines.len() > 1)
        .then(|| {
            top.points
                .iter()
                .rev()
                .map_while(|p| {
                    let at_lowest = lowest_at(p.input_tokens)?;
                    (p.value <= at_lowest).then(|| (p.clone(), at_lowest))
                })
                .last()
        })
        .flatten();
    Some(ContextThroughput {
        lowest: lowest.concurrency,
        shortest: shortest.clone(),
        longest: longest.clone(),
        no_gain_from,
    })
}

fn at_longest(lines: &[ContextLine]) -> Option<Range> {
    let longest = lines
        .iter()
        .filter_map(|l| l.points.last().map(|p| p.input_tokens))
        .max()?;
    let there = lines
        .iter()
        .filter_map(|l| l.points.iter().find(|p| p.input_tokens == longest).cloned());
    Range::of(there, Metric::ScalingEfficiency)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{report, series};

    /// Three contexts, 1 and 4 concurrent: 4 gives more at 1K, no more from 8K up.
    fn contexts() -> Report {
        let mut r = report(
            &["ctx_1k", "ctx_8k", "ctx_32k", "also_1k"],
            vec![
                series("ctx_1k", LoadMode::Peak, &[(1, 0.3, 95.0), (4, 0.5, 50.0)]),
                series("ctx_8k", LoadMode::Peak, &[(1, 2.7, 94.0), (4, 6.0, 20.0)]),
                series(
                    "ctx_32k",
                    LoadMode::Peak,
                    &[(1, 11.2, 92.0), (4, 31.6, 23.0)],
                ),
                series(
                    "also_1k",
                    LoadMode::Peak,
                    &[(1, 0.1, 500.0), (4, 0.1, 500.0)],
                ),
            ],
        );
        for (s, tokens) in r.scenarios.iter_mut().zip([1024, 8192, 32768, 1024]) {
            s.input_tokens = tokens;
        }
        r
    }

    #[test]
    fn lines_by_context_keep_the_first_scenario_of_an_input_length() {
        let lines = by_context(&contexts(), Metric::DecodeTokS, Stat::Mean);
        assert_eq!(lines.len(), 2);
        let one: Vec<(u32, f64)> = lines[0]
            .points
            .iter()
            .map(|p| (p.input_tokens, p.value))
            .collect();
        assert_eq!(one, [(1024, 95.0), (8192, 94.0), (32768, 92.0)]);
    }

    /// A search probed 6 in the 1K scenario alone: a point, not a line by context, left out
    /// while 1 and 4 span the contexts; a report of one context keeps its points.
    #[test]
    fn a_concurrency_measured_at_one_context_draws_no_line() {
        let mut r = contexts();
        let mut probe = r.series[0].levels[1].clone();
        probe.concurrency = 6;
        r.series[0].levels.push(probe);
        let lines = by_context(&r, Metric::DecodeTokS, Stat::Mean);
        let levels: Vec<u32> = lines.iter().map(|l| l.concurrency).collect();
        assert_eq!(levels, [1, 4]);
        r.series.truncate(1);
        let single = by_context(&r, Metric::DecodeTokS, Stat::Mean);
        let levels: Vec<u32> = single.iter().map(|l| l.concurrency).collect();
        assert_eq!(levels, [1, 4, 6]);
    }

    #[test]
    fn single_user_figures_span_the_contexts() {
        let f = ContextFindings::of(&contexts(), Stat::Mean);
        let ttft = f.single_user_ttft.unwrap();
        assert_eq!(
            (ttft.shortest.scenario.as_str(), ttft.longest.value),
            ("ctx_1k", 11.2)
        );
        let mut none = contexts();
        for s in &mut none.series {
            s.levels.remove(0);
        }
        assert_eq!(
            ContextFindings::of(&none, Stat::Mean).single_user_ttft,
            None
        );
    }

    /// System throughput at 4 (4 × speed): 200, 80, 92 tok/s against 95, 94, 92 at 1.
    #[test]
    fn throughput_along_the_top_line_and_where_batching_stops_paying() {
        let t = ContextFindings::of(&contexts(), Stat::Mean)
            .throughput
            .unwrap();
        assert_eq!(t.lowest, 1);
        assert_eq!((t.shortest.value, t.longest.value), (200.0, 92.0));
        let (from, lowest) = t.no_gain_from.unwrap();
        assert_eq!((from.input_tokens, from.value, lowest), (8192, 80.0, 94.0));
        // Batching paying off everywhere: no such context.
        let mut paying = contexts();
        paying
            .series
            .retain(|s| s.scenario == "ctx_1k" || s.scenario == "ctx_8k");
        paying.series[1].levels[1] = crate::analysis::testing::level(4, 6.0, 90.0);
        let t = ContextFindings::of(&paying, Stat::Mean).throughput.unwrap();
        assert_eq!(t.no_gain_from, None);
    }

    #[test]
    fn scaling_at_the_longest_context_and_prefill_peaks() {
        let mut r = contexts();
        for (s, prefill) in r.series.iter_mut().zip([3000.0, 3012.0, 2481.0, 9000.0]) {
            for l in &mut s.levels {
                l.metrics.prefill_tok_s = Some(crate::Distribution::constant(prefill));
            }
        }
        let f = ContextFindings::of(&r, Stat::Mean);
        // At 32K: 100% alone, 4 × 23 / (4 × 92) = 25% at 4.
        let spread = f.scaling_at_longest.unwrap();
        assert_eq!(spread.high.input_tokens, 32768);
        assert_eq!((spread.high.concurrency, spread.low.concurrency), (1, 4));
        assert!((spread.low.value - 0.25).abs() < 1e-9);
        assert!(!spread.drops_at_longer_context());
        let peaks: Vec<(u32, u32, f64)> = f
            .prefill_peaks
            .iter()
            .map(|p| (p.concurrency, p.at.input_tokens, p.at.value))
            .collect();
        // also_1k shares 1K with ctx_1k, which stands for it.
        assert_eq!(peaks, [(1, 8192, 3012.0), (4, 8192, 3012.0)]);
    }
}
