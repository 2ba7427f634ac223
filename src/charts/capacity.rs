//! Capacity analysis per use case: speed (or ITL) on the left axis, TTFT (or end-to-end latency)
//! on the right, dashed threshold lines, and the table of measured levels against the limits.

use infermeter_report::analysis::capacity::{Bound, Capacity, Thresholds};
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::{capacity, Metric};
use infermeter_report::presets::{use_cases, ITL_BANDS, TTFT_BANDS};
use infermeter_report::{LoadMode, Stat};

use super::plot::{Plot, Threshold, XAxis};
use super::{display_points, metric_axis, plot, source_line, Source};
use crate::state::ViewState;

/// A workload checked against limits: a preset use case matched to one of the report's
/// scenarios, or one of the report's own scenarios with default limits.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityTarget {
    /// Use-case id (or the scenario id for a report's own scenario); URL and test-id key.
    pub id: String,
    pub name: String,
    pub description: String,
    /// What prompt caching would change; only for a report measured without it.
    pub caching_note: Option<String>,
    pub scenario_id: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Limits before the reader moves a slider.
    pub preset: Thresholds,
    /// True for a preset use case (listed in the use-case guidance table).
    pub is_use_case: bool,
}

/// Limits for a report's own scenario: ITL stays out of the sluggish band and TTFT out of the
/// frustrating one (the presets' experience bands).
pub fn default_scenario_thresholds() -> Thresholds {
    Thresholds {
        max_ttft_s: Some(TTFT_BANDS[TTFT_BANDS.len() - 1].lower),
        max_itl_s: Some(ITL_BANDS[ITL_BANDS.len() - 1].lower),
        ..Thresholds::default()
    }
}

/// Use cases whose scenario the report measured (by scenario id, or by input and output
/// tokens), then the report's other scenarios; only scenarios with a peak series.
pub fn targets(source: &Source) -> Vec<CapacityTarget> {
    let report = source.analysis.report();
    let measured = |id: &str| source.analysis.series(id, LoadMode::Peak).is_some();
    let cached = report.metadata.test.prompt_caching == Some(true);
    let mut out: Vec<CapacityTarget> = Vec::new();
    for uc in use_cases() {
        let scenario = report
            .scenarios
            .iter()
            .find(|s| s.id == uc.scenario_id)
            .or_else(|| {
                report.scenarios.iter().find(|s| {
                    s.input_tokens == uc.context_tokens && s.output_tokens == uc.output_tokens
                })
            })
            .filter(|s| measured(&s.id));
        if let Some(s) = scenario {
            out.push(CapacityTarget {
                id: uc.id.into(),
                name: uc.name.into(),
                description: uc.description.into(),
                caching_note: uc.caching_note.filter(|_| !cached).map(String::from),
                scenario_id: s.id.clone(),
                input_tokens: s.input_tokens,
                output_tokens: s.output_tokens,
                preset: uc.thresholds,
                is_use_case: true,
            });
        }
    }
    for s in &report.scenarios {
        let covered = out.iter().any(|t| t.scenario_id == s.id || t.id == s.id);
        if !covered && measured(&s.id) {
            out.push(CapacityTarget {
                id: s.id.clone(),
                name: s.name.clone(),
                description: s.description.clone(),
                caching_note: None,
                scenario_id: s.id.clone(),
                input_tokens: s.input_tokens,
                output_tokens: s.output_tokens,
                preset: default_scenario_thresholds(),
                is_use_case: false,
            });
        }
    }
    out
}

/// The metrics a target is judged on: left axis (decode speed, or ITL when only ITL is
/// limited) and right axis (end-to-end latency when limited, else TTFT).
pub fn axes_metrics(thresholds: &Thresholds) -> (Metric, Metric) {
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

/// Short label of a metric in legends and tables.
pub fn short_label(metric: Metric) -> &'static str {
    match metric {
        Metric::DecodeTokS => "Generation speed",
        Metric::Itl => "ITL",
        Metric::Ttft => "TTFT",
        Metric::E2e => "End-to-end latency",
        other => other.label(),
    }
}

/// The capacity chart of `target` (matched by id in every compared report).
pub fn chart(sources: &[Source], target: &CapacityTarget, view: &ViewState) -> Plot {
    let thresholds = view.thresholds(&target.id, target.preset);
    let (left, right) = axes_metrics(&thresholds);
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(left, view.stat), metric_axis(right, view.stat)],
        view,
    );
    for source in sources {
        let Some(t) = targets(source).into_iter().find(|t| t.id == target.id) else {
            continue;
        };
        for (axis, metric) in [(0, left), (1, right)] {
            let points = display_points(source, &t.scenario_id, LoadMode::Peak, metric, view.stat);
            if points.is_empty() {
                continue;
            }
            let shows = format!("{} ({} axis)", short_label(metric), ["left", "right"][axis]);
            p.lines
                .push(source_line(sources, source, &shows, axis, points));
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
                short_label(metric),
                format_number(value),
                metric.unit()
            ),
        });
    }
    p
}

/// Capacity of `target` in one report under the reader's limits and statistic.
pub fn verdict(source: &Source, target: &CapacityTarget, view: &ViewState) -> Option<Capacity> {
    let series = source
        .analysis
        .series(&target.scenario_id, LoadMode::Peak)?;
    Some(capacity(
        series,
        &view.thresholds(&target.id, target.preset),
        view.stat,
    ))
}

/// The capacity figure, e.g. "7 concurrent requests", "≈ 12 concurrent requests" between
/// measured levels, "1 request", or "Not recommended for this use case".
pub fn figure_text(capacity: &Capacity) -> String {
    capacity_words(capacity, " concurrent", " for this use case")
}

/// The figure on a use case's summary card: "7 requests", "≈ 12 requests", "Not recommended".
pub fn card_text(capacity: &Capacity) -> String {
    capacity_words(capacity, "", "")
}

fn capacity_words(capacity: &Capacity, kind: &str, use_case: &str) -> String {
    match capacity.estimate {
        None => format!("Not recommended{use_case}"),
        Some(e) => {
            let approx = if e.interpolated { "≈ " } else { "" };
            if e.concurrency == 1 {
                format!("{approx}1 request")
            } else {
                format!("{approx}{}{kind} requests", e.concurrency)
            }
        }
    }
}

/// One cell of the capacity table.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// e.g. "10 s (threshold exceeded)", "15 tok/s (below threshold)", "—".
    pub text: String,
    pub breached: bool,
}

/// The table under a capacity chart: one row per judged metric, one column per measured level.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityTable {
    pub levels: Vec<u32>,
    /// (metric label, cells by level).
    pub rows: Vec<(String, Vec<Cell>)>,
}

/// The measured levels of `capacity` with the values of the chart's two metrics.
pub fn table(
    source: &Source,
    target: &CapacityTarget,
    capacity: &Capacity,
    view: &ViewState,
) -> CapacityTable {
    let thresholds = view.thresholds(&target.id, target.preset);
    let (left, right) = axes_metrics(&thresholds);
    let levels: Vec<u32> = capacity.rows.iter().map(|r| r.concurrency).collect();
    let rows = [right, left]
        .into_iter()
        .map(|metric| {
            let points =
                source
                    .analysis
                    .points(&target.scenario_id, LoadMode::Peak, metric, view.stat);
            let cells = capacity
                .rows
                .iter()
                .map(|row| {
                    let breach = row.breaches.iter().find(|b| b.metric == metric);
                    let value = points.iter().find(|p| p.0 == row.concurrency).map(|p| p.1);
                    cell(metric, value, breach.map(|b| b.bound))
                })
                .collect();
            (short_label(metric).to_string(), cells)
        })
        .collect();
    CapacityTable { levels, rows }
}

fn cell(metric: Metric, value: Option<f64>, breached: Option<Bound>) -> Cell {
    let Some(v) = value else {
        return Cell {
            text: "—".into(),
            breached: breached.is_some(),
        };
    };
    let mut text = format!("{} {}", format_number(metric.to_display(v)), metric.unit());
    match breached {
        Some(Bound::AtMost) => text.push_str(" (threshold exceeded)"),
        Some(Bound::AtLeast) => text.push_str(" (below threshold)"),
        None => {}
    }
    Cell {
        text,
        breached: breached.is_some(),
    }
}

/// "TTFT threshold" column of the guidance table: "10 s", or "2 s e2e" for end-to-end limits.
pub fn latency_limit_text(t: &Thresholds) -> String {
    match (t.max_e2e_s, t.max_ttft_s) {
        (Some(e2e), _) => format!("{} s e2e", format_number(e2e)),
        (None, Some(ttft)) => format!("{} s", format_number(ttft)),
        (None, None) => "N/A".into(),
    }
}

/// "Speed threshold" column: "15 tok/s", "70 ms ITL" or "N/A".
pub fn speed_limit_text(t: &Thresholds) -> String {
    match (t.min_decode_tok_s, t.max_itl_s) {
        (Some(s), _) => format!("{} tok/s", format_number(s)),
        (None, Some(itl)) => format!("{} ms ITL", format_number(Metric::Itl.to_display(itl))),
        (None, None) => "N/A".into(),
    }
}

/// Statistic-aware caption, e.g. "Mean per-user generation speed and TTFT at 8K context.
/// Dashed lines indicate quality thresholds."
pub fn caption(target: &CapacityTarget, view: &ViewState) -> String {
    let (left, right) = axes_metrics(&view.thresholds(&target.id, target.preset));
    let stat = match view.stat {
        Stat::Mean => "Average".to_string(),
        other => other.label().to_uppercase(),
    };
    format!(
        "{stat} {} and {} at {} input + {} output tokens. Dashed lines indicate quality thresholds.",
        mid_sentence(short_label(left)),
        short_label(right),
        group_thousands(target.input_tokens),
        group_thousands(target.output_tokens)
    )
}

/// A label as it reads inside a sentence: "Generation speed" -> "generation speed"; acronyms
/// ("ITL", "TTFT") stay as they are.
fn mid_sentence(label: &str) -> String {
    let first_word = label.split([' ', '-']).next().unwrap_or_default();
    if first_word.chars().all(|c| c.is_ascii_uppercase()) {
        return label.to_string();
    }
    let mut chars = label.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
}

/// 32768 -> "32,768".
pub fn group_thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use crate::state::ThresholdKind;

    #[test]
    fn labels_inside_a_sentence_keep_their_acronyms() {
        assert_eq!(mid_sentence("ITL"), "ITL");
        assert_eq!(mid_sentence("TTFT"), "TTFT");
        assert_eq!(mid_sentence("Generation speed"), "generation speed");
        assert_eq!(mid_sentence("End-to-end latency"), "end-to-end latency");
    }

    #[test]
    fn targets_cover_every_peak_scenario_once() {
        let report = sample();
        let targets = with_sources(&report, |s| targets(&s[0]));
        assert!(!targets.is_empty());
        let mut scenarios: Vec<&str> = targets.iter().map(|t| t.scenario_id.as_str()).collect();
        scenarios.sort_unstable();
        let before = scenarios.len();
        scenarios.dedup();
        assert_eq!(before, scenarios.len(), "a scenario judged twice");
        assert_eq!(scenarios.len(), peak_scenarios(&report));
    }

    /// Reference 003's caching notes, for the use cases that build context turn by turn, and
    /// only when the report prefilled every context in full.
    #[test]
    fn caching_notes_only_without_prompt_caching() {
        let mut report: infermeter_report::Report = serde_json::from_str(include_str!(
            "../../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
        ))
        .unwrap();
        let noted = |report: &infermeter_report::Report| -> Vec<String> {
            with_sources(report, |s| targets(&s[0]))
                .into_iter()
                .filter(|t| t.caching_note.is_some())
                .map(|t| t.id)
                .collect()
        };
        assert_eq!(
            noted(&report),
            ["general_chatbot", "automated_coding_assistant"]
        );
        report.metadata.test.prompt_caching = Some(true);
        assert!(noted(&report).is_empty());
    }

    #[test]
    fn chart_draws_both_axes_and_moves_the_line_with_the_slider() {
        let report = sample();
        let target = with_sources(&report, |s| targets(&s[0]))
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
        view.set_threshold(&target.id, target.preset, ThresholdKind::Ttft, 42.0);
        let moved = with_sources(&report, |s| chart(s, &target, &view));
        let values = threshold_values(&chart_json(&moved));
        assert!(
            values.contains(&42.0) && !values.contains(&preset_ttft),
            "{values:?}"
        );
    }

    #[test]
    fn table_marks_breaches_and_capacity_reads_like_the_reports() {
        let report = sample();
        with_sources(&report, |s| {
            for target in targets(&s[0]) {
                let strict = {
                    let mut v = ViewState::default();
                    v.set_threshold(&target.id, target.preset, ThresholdKind::Ttft, 1e-6);
                    v.set_threshold(&target.id, target.preset, ThresholdKind::E2e, 1e-6);
                    v
                };
                let cap = verdict(&s[0], &target, &strict).unwrap();
                assert_eq!(figure_text(&cap), "Not recommended for this use case");
                assert_eq!(card_text(&cap), "Not recommended");
                assert!(cap.verdict_sentence().starts_with("Not viable"));
                let table = table(&s[0], &target, &cap, &strict);
                assert_eq!(table.levels.len(), cap.rows.len());
                assert!(table.rows[0]
                    .1
                    .iter()
                    .all(|c| c.breached && c.text.ends_with("(threshold exceeded)")));
            }
        });
    }

    #[test]
    fn guidance_texts() {
        let e2e = Thresholds {
            max_e2e_s: Some(2.0),
            ..Thresholds::default()
        };
        assert_eq!(latency_limit_text(&e2e), "2 s e2e");
        assert_eq!(speed_limit_text(&e2e), "N/A");
        let chat = Thresholds {
            max_ttft_s: Some(10.0),
            min_decode_tok_s: Some(10.0),
            ..Thresholds::default()
        };
        assert_eq!(latency_limit_text(&chat), "10 s");
        assert_eq!(speed_limit_text(&chat), "10 tok/s");
        assert_eq!(axes_metrics(&e2e), (Metric::DecodeTokS, Metric::E2e));
        assert_eq!(
            axes_metrics(&default_scenario_thresholds()),
            (Metric::Itl, Metric::Ttft)
        );
        assert_eq!(group_thousands(32768), "32,768");
        assert_eq!(group_thousands(128), "128");
    }
}
