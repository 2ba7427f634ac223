//! Sanity checks beyond the JSON shape: references resolve, levels are ordered, distributions are
//! internally consistent. Each problem names where it is, so an error panel can point at it.

use std::collections::BTreeSet;
use std::fmt;

use crate::schema::{Level, Report, RequestColumns};
use crate::stats::Distribution;

/// From this magnitude a figure is absurd (a hand-edited file): the validator says so, and it is
/// written as a power of ten, not hundreds of digits, in displays (analysis/format.rs) and in the
/// validator's messages. Here, below the analysis that formats figures.
pub const ABSURD_MAGNITUDE: f64 = 1e15;

/// One inconsistency, with a JSON-path-like location such as `series[2].levels[0].metrics.ttft_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Returns every problem found; empty means the report is sound.
pub fn validate(report: &Report) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut push = |path: String, message: String| problems.push(Problem { path, message });

    check_metadata(report, &mut push);
    let ids = check_scenarios(report, &mut push);
    for si in 0..report.series.len() {
        check_series(report, si, &ids, &mut push);
    }
    problems
}

/// The model and hardware figures that must be sound numbers.
fn check_metadata(report: &Report, push: &mut impl FnMut(String, String)) {
    if report.metadata.model.id.trim().is_empty() {
        push(
            "metadata.model.id".into(),
            "is empty; name the model measured".into(),
        );
    }
    let model = &report.metadata.model;
    for (path, value) in [
        ("metadata.model.total_params_b", model.total_params_b),
        ("metadata.model.active_params_b", model.active_params_b),
        (
            "metadata.hardware.vram_gb",
            report.metadata.hardware.vram_gb,
        ),
    ] {
        check_figure(path.into(), value, push);
    }
}

/// Scenario ids once each and some output; returns the ids, which series refer to.
fn check_scenarios<'a>(
    report: &'a Report,
    push: &mut impl FnMut(String, String),
) -> BTreeSet<&'a str> {
    let mut ids = BTreeSet::new();
    for (i, s) in report.scenarios.iter().enumerate() {
        if !ids.insert(s.id.as_str()) {
            push(
                format!("scenarios[{i}].id"),
                format!("\"{}\" appears twice", s.id),
            );
        }
        if s.output_tokens == 0 {
            push(
                format!("scenarios[{i}].output_tokens"),
                "must be at least 1".into(),
            );
        }
    }
    ids
}

/// Series `si`: one per scenario, mode and cache use, of a defined scenario, its levels in
/// order of concurrency and each sound.
fn check_series(
    report: &Report,
    si: usize,
    ids: &BTreeSet<&str>,
    push: &mut impl FnMut(String, String),
) {
    let series = &report.series[si];
    let at = format!("series[{si}]");
    // The viewer reads one series per scenario, mode and cache use (as the collector
    // writes them): a second one would be silently ignored.
    if let Some(first) = report.series[..si].iter().position(|s| {
        s.scenario == series.scenario && s.mode == series.mode && s.cache == series.cache
    }) {
        push(
            at.clone(),
            format!(
                "repeats series[{first}]: same scenario, mode and cache use; merge their levels"
            ),
        );
    }
    if !ids.contains(series.scenario.as_str()) {
        push(
            format!("{at}.scenario"),
            format!(
                "refers to scenario \"{}\", which the report does not define",
                series.scenario
            ),
        );
    }
    let mut previous: Option<u32> = None;
    for (li, level) in series.levels.iter().enumerate() {
        let at = format!("{at}.levels[{li}]");
        if level.concurrency == 0 {
            push(format!("{at}.concurrency"), "must be at least 1".into());
        }
        if let Some(p) = previous {
            if level.concurrency <= p {
                push(
                    format!("{at}.concurrency"),
                    format!(
                        "{} does not increase on the previous level ({p})",
                        level.concurrency
                    ),
                );
            }
        }
        previous = Some(level.concurrency);
        check_level(&at, level, push);
    }
}

/// An optional figure that, when present, must be a finite number and not negative.
fn check_figure(path: String, value: Option<f64>, push: &mut impl FnMut(String, String)) {
    if let Some(value) = value {
        if !value.is_finite() || value < 0.0 {
            push(
                path,
                format!("{} is not a non-negative number", shown(value)),
            );
        }
    }
}

fn check_level(at: &str, level: &Level, push: &mut impl FnMut(String, String)) {
    let power = level.power.as_ref();
    for (name, value) in [
        ("duration_s", Some(level.duration_s)),
        ("system_output_tok_s", Some(level.system_output_tok_s)),
        ("power.mean_w", power.map(|p| p.mean_w)),
        ("power.max_w", power.map(|p| p.max_w)),
    ] {
        check_figure(format!("{at}.{name}"), value, push);
    }
    let m = &level.metrics;
    let named = [
        ("ttft_s", &m.ttft_s),
        ("itl_s", &m.itl_s),
        ("inter_chunk_s", &m.inter_chunk_s),
        ("tpot_s", &m.tpot_s),
        ("e2e_s", &m.e2e_s),
        ("decode_tok_s", &m.decode_tok_s),
        ("prefill_tok_s", &m.prefill_tok_s),
        ("queue_wait_s", &m.queue_wait_s),
        ("input_tokens", &m.input_tokens),
        ("output_tokens", &m.output_tokens),
    ];
    for (name, dist) in named {
        if let Some(d) = dist {
            if let Some(message) = distribution_problem(d) {
                push(format!("{at}.metrics.{name}"), message);
            }
        }
    }
    if let Some(columns) = &level.per_request {
        if let Some(message) = columns_problem(columns) {
            push(format!("{at}.per_request"), message);
        }
    }
}

/// Why a level's per-request columns cannot be read together, if they cannot: every column
/// holds one entry per request, and a status is one of the three.
fn columns_problem(columns: &RequestColumns) -> Option<String> {
    let lengths = columns.column_lengths();
    let requests = columns.len();
    // The stream-gap columns are all empty when the gaps were not recorded.
    let optional = ["max_gap", "stalls", "jitter"];
    let gapless = lengths
        .iter()
        .all(|(name, n)| !optional.contains(name) || *n == 0);
    if let Some((name, n)) = lengths
        .iter()
        .find(|(name, n)| *n != requests && !(gapless && optional.contains(name)))
    {
        return Some(format!(
            "column {name} holds {n} entries but status holds {requests}: every column needs one entry per request"
        ));
    }
    let known = [
        RequestColumns::OK,
        RequestColumns::INCOMPLETE,
        RequestColumns::ERRORED,
    ];
    columns
        .status
        .iter()
        .position(|s| !known.contains(s))
        .map(|i| {
            format!(
                "status[{i}] is {}; a status is 0 (ok), 1 (incomplete) or 2 (errored)",
                columns.status[i]
            )
        })
}

/// Why a distribution cannot be right, if it cannot. Only the figures present are checked (an
/// imported tool's summary may lack some).
pub fn distribution_problem(d: &Distribution) -> Option<String> {
    let ranked = d.ranked();
    let figures: Vec<f64> = ranked
        .iter()
        .copied()
        .chain([d.mean])
        .chain(d.stddev)
        .collect();
    if figures.iter().any(|v| !v.is_finite()) {
        return Some("has a value that is not a finite number".into());
    }
    if figures.iter().any(|v| *v < 0.0) {
        return Some("has a negative value".into());
    }
    if d.count == Some(0) {
        return Some("has figures but a sample count of 0".into());
    }
    // A small tolerance: figures rounded for display may tie.
    if ranked
        .windows(2)
        .any(|w| w[0] > w[1] * (1.0 + 1e-9) + 1e-12)
    {
        let shown_or_absent = |v: Option<f64>| v.map_or_else(|| "absent".to_string(), shown);
        return Some(format!(
            "percentiles are out of order (min {} p50 {} p90 {} p95 {} p99 {} p99.9 {} max {})",
            shown_or_absent(d.min),
            shown(d.p50),
            shown_or_absent(d.p90),
            shown_or_absent(d.p95),
            shown_or_absent(d.p99),
            shown_or_absent(d.p999),
            shown_or_absent(d.max)
        ));
    }
    if let (Some(min), Some(max)) = (d.min, d.max) {
        if d.mean < min * (1.0 - 1e-9) - 1e-12 || d.mean > max * (1.0 + 1e-9) + 1e-12 {
            return Some(format!(
                "mean {} lies outside min {} and max {}",
                shown(d.mean),
                shown(min),
                shown(max)
            ));
        }
    }
    None
}

/// A figure exactly as the file has it, but a hand-edited `1e300` as `1e300`, not 301 digits.
fn shown(value: f64) -> String {
    if value.abs() >= ABSURD_MAGNITUDE {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}
