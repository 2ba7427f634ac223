//! Fixtures for the chart tests: the bundled synthetic sample report and helpers that read the
//! serialized ECharts option the way the browser would receive it.

use infermeter_report::{load_report, LoadMode, Report};
use serde_json::Value;

use super::plot::{Plot, THRESHOLD_SERIES};
use super::{sources, Source};
use infermeter_report::analysis::labels::report_labels;

/// The synthetic sample report shipped in `data/reports/`.
pub fn sample() -> Report {
    load_report(include_str!("../../data/reports/sample-synthetic.json"))
        .expect("the bundled sample report loads")
}

/// The browser tests' session report: a request sweep, chat sessions with the prefix cache
/// allowed and defeated, and a trace replay, measured by the collector on the simulator
/// (tests/browser/fixtures/make-sessions.sh).
pub fn sessions_sample() -> Report {
    load_report(include_str!("../../tests/browser/fixtures/sessions.json"))
        .expect("the session fixture loads")
}

/// A measured report with its fit (the bundled H100 transformers run): what the What-if
/// charts draw.
pub fn fitted_sample() -> Report {
    load_report(include_str!(
        "../../data/reports/h100-transformers-llama-3.1-8b-shape.json"
    ))
    .expect("the bundled H100 report loads")
}

/// The browser tests' report of varied request lengths: a text file cut to drawn lengths and
/// a ShareGPT file's prompts, measured by the collector on the simulator
/// (tests/browser/fixtures/make-lengths.sh).
pub fn lengths_sample() -> Report {
    load_report(include_str!("../../tests/browser/fixtures/lengths.json"))
        .expect("the lengths fixture loads")
}

/// The browser tests' agentic report: the collector's cc-traces fixture at 1, 4 and 8
/// concurrent jobs on the simulator (tests/browser/fixtures/make-agents.sh).
pub fn agents_sample() -> Report {
    load_report(include_str!("../../tests/browser/fixtures/agents.json"))
        .expect("the agents fixture loads")
}

/// Runs `f` with the sources of one report.
pub fn with_sources<T>(report: &Report, f: impl FnOnce(&[Source]) -> T) -> T {
    let reports = std::slice::from_ref(report);
    let labels = report_labels(reports);
    f(&sources(reports, &labels))
}

/// Runs `f` with the sources of several reports (compare mode).
pub fn with_all_sources<T>(reports: &[Report], f: impl FnOnce(&[Source]) -> T) -> T {
    let labels = report_labels(reports);
    f(&sources(reports, &labels))
}

/// The chart option as JSON.
pub fn chart_json(plot: &Plot) -> Value {
    serde_json::to_value(plot.to_option()).expect("a chart serializes")
}

/// Values of every dashed threshold line, in display units.
pub fn threshold_values(json: &Value) -> Vec<f64> {
    json["series"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["name"] == THRESHOLD_SERIES)
        .flat_map(|s| {
            s["markLine"]["data"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|d| d["yAxis"].as_f64())
        .collect()
}

/// Scenarios of `report` measured under `mode`.
fn scenarios_in(report: &Report, mode: LoadMode) -> usize {
    report
        .scenarios
        .iter()
        .filter(|s| {
            report
                .series
                .iter()
                .any(|x| x.scenario == s.id && x.mode == mode && !x.levels.is_empty())
        })
        .count()
}

pub fn peak_scenarios(report: &Report) -> usize {
    scenarios_in(report, LoadMode::Peak)
}

pub fn burst_scenarios(report: &Report) -> usize {
    scenarios_in(report, LoadMode::Burst)
}

/// Distinct peak concurrencies, ascending.
pub fn peak_levels(report: &Report) -> Vec<u32> {
    let mut levels: Vec<u32> = report
        .series
        .iter()
        .filter(|s| s.mode == LoadMode::Peak)
        .flat_map(|s| s.levels.iter().map(|l| l.concurrency))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// The first x axis of an option (a lone axis is written as an object).
pub fn x_axis(json: &Value) -> &Value {
    match &json["xAxis"] {
        Value::Array(axes) => &axes[0],
        one => one,
    }
}

/// How many times `needle` is written in the viewer's source files (`src/`, tests included).
/// Read at run time: a build cache shared by checkouts can hold this binary built in another.
pub fn times_in_source(needle: &str) -> usize {
    fn count(dir: &std::path::Path, needle: &str) -> usize {
        std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {dir:?}: {e}"))
            .map(|entry| entry.expect("a directory entry").path())
            .map(|path| {
                if path.is_dir() {
                    count(&path, needle)
                } else if path.extension().is_some_and(|e| e == "rs") {
                    std::fs::read_to_string(&path)
                        .unwrap()
                        .matches(needle)
                        .count()
                } else {
                    0
                }
            })
            .sum()
    }
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test");
    count(&std::path::Path::new(&manifest).join("src"), needle)
}

/// Asserts that `text` is written once, quoted, in the viewer's source (a CSS class of the same
/// name is another thing and does not count).
pub fn assert_written_once(text: &str) {
    let quoted = format!("\"{text}\"");
    let as_class = times_in_source(&format!("class={quoted}"));
    assert_eq!(
        times_in_source(&quoted) - as_class,
        1,
        "{quoted} is written more than once"
    );
}
