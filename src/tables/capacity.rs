//! The table under a capacity chart: the measured levels of the use case's scenario with the
//! values of the chart's two metrics, breaches marked.

use infermeter_report::analysis::capacity::{capacity, Bound, Capacity};
use infermeter_report::analysis::findings::headline::indicative_note;
use infermeter_report::analysis::goodput::max_load_under;
use infermeter_report::analysis::use_cases::CapacityTarget;
use infermeter_report::analysis::{series_points, Metric};
use infermeter_report::{LoadMode, Slo, DEFAULT_ATTAINMENT_TARGET};

use crate::charts::capacity::axes_metrics;
use crate::charts::Source;
use crate::state::ViewState;

/// Capacity of `target` in one report under the reader's limits and statistic, on the series
/// it is judged on (peak, or users for a session scenario).
pub fn verdict(source: &Source, target: &CapacityTarget, view: &ViewState) -> Option<Capacity> {
    let series = target.series(source.analysis.report())?;
    Some(capacity(
        series,
        &view.thresholds(&target.id, target.preset),
        view.stat,
    ))
}

/// The use case's capacity on the attainment basis, worded: the highest load at which 95% of
/// requests stay within the reader's limits, each request judged by them (the statistic basis
/// above stays the default, as the reference reports use it). `None` for a report without
/// per-request figures.
pub fn attainment_verdict(
    source: &Source,
    target: &CapacityTarget,
    view: &ViewState,
) -> Option<String> {
    let series = source
        .analysis
        .series(&target.scenario_id, LoadMode::Peak)?;
    let limits = view.thresholds(&target.id, target.preset);
    let slo = Slo {
        limits: limits.per_request(),
        target: DEFAULT_ATTAINMENT_TARGET,
    };
    let max = max_load_under(series, &slo)?;
    Some(max.attainment_sentence(LoadMode::Peak, slo.target))
}

/// One cell of the capacity table.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// e.g. "10 s (threshold exceeded)", "15 tok/s (below threshold)", "—".
    pub text: String,
    pub breached: bool,
    /// "indicative: p99 of 36 samples" when the figure is a percentile on too few samples.
    pub indicative: Option<String>,
}

/// The table under a capacity chart: one row per judged metric, one column per measured level.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityTable {
    /// Column headings: "@ 1 request", "@ 16 users".
    pub headings: Vec<String>,
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
    let series = target.series(source.analysis.report());
    let rows = [right, left]
        .into_iter()
        .map(|metric| {
            let points = series
                .map(|s| series_points(s, metric, view.stat))
                .unwrap_or_default();
            let cells = capacity
                .rows
                .iter()
                .map(|row| {
                    let breach = row.breaches.iter().find(|b| b.metric == metric);
                    let value = points.iter().find(|p| p.0 == row.concurrency).map(|p| p.1);
                    let samples = series
                        .and_then(|s| s.levels.iter().find(|l| l.concurrency == row.concurrency))
                        .and_then(|l| metric.samples(l))
                        .filter(|&n| view.stat.is_indicative(n));
                    Cell {
                        indicative: samples.map(|n| indicative_note(view.stat, n)),
                        ..cell(metric, value, breach.map(|b| b.bound))
                    }
                })
                .collect();
            (metric.short_label().to_string(), cells)
        })
        .collect();
    let noun = capacity.unit.noun();
    let headings = levels
        .iter()
        .map(|&n| format!("@ {n} {noun}{}", if n == 1 { "" } else { "s" }))
        .collect();
    CapacityTable {
        headings,
        levels,
        rows,
    }
}

fn cell(metric: Metric, value: Option<f64>, breached: Option<Bound>) -> Cell {
    let Some(v) = value else {
        return Cell {
            text: "—".into(),
            breached: breached.is_some(),
            indicative: None,
        };
    };
    let mut text = metric.display_text(v);
    match breached {
        Some(Bound::AtMost) => text.push_str(" (threshold exceeded)"),
        Some(Bound::AtLeast) => text.push_str(" (below threshold)"),
        None => {}
    }
    Cell {
        text,
        breached: breached.is_some(),
        indicative: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use crate::findings::capacity::{card_text, figure_text};
    use infermeter_report::analysis::capacity::LimitKind;
    use infermeter_report::analysis::use_cases::targets;

    #[test]
    fn table_marks_breaches_and_capacity_reads_like_the_reports() {
        let report = sample();
        with_sources(&report, |s| {
            for target in targets(&report) {
                let strict = {
                    let mut v = ViewState::default();
                    v.set_threshold(&target.id, target.preset, LimitKind::Ttft, 1e-6);
                    v.set_threshold(&target.id, target.preset, LimitKind::E2e, 1e-6);
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
                // Judged request by request, no request meets such limits either.
                let by_requests = attainment_verdict(&s[0], &target, &strict).unwrap();
                assert!(
                    by_requests.starts_with("Fewer than 95% of requests"),
                    "{by_requests}"
                );
            }
        });
    }

    /// Beside the statistic basis, the attainment basis: the sample's chatbot meets the
    /// default limits with every request at every level; a report without per-request
    /// figures has no such line.
    #[test]
    fn the_attainment_basis_reads_each_request() {
        let mut report = sample();
        let chatbot = targets(&report)
            .into_iter()
            .find(|t| t.scenario_id == "chatbot")
            .unwrap();
        let text = with_sources(&report, |s| {
            attainment_verdict(&s[0], &chatbot, &ViewState::default())
        });
        assert_eq!(
            text.as_deref(),
            Some("95% of requests stay within the thresholds at every tested level, up to 32 concurrent users.")
        );
        for level in report.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
            level.per_request = None;
        }
        let none = with_sources(&report, |s| {
            attainment_verdict(&s[0], &chatbot, &ViewState::default())
        });
        assert_eq!(none, None);
    }
}
