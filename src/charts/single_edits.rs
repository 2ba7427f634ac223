//! A report the loader accepts must render: a panic in the wasm leaves the reader a broken page.
//! The malformed corpus (`tests/malformed/`) covers files the loader must refuse; this covers
//! the rest by brute force: every single edit of a small valid report (each number zeroed,
//! negated, huge, fractional; each string emptied; each array emptied, shortened or given a
//! repeated element; each field removed or nulled) is either refused with an error or goes
//! through everything the report page computes from it, without a panic.

use std::panic::{catch_unwind, AssertUnwindSafe};

use infermeter_report::analysis::findings;
use infermeter_report::Stat;
use serde_json::Value;

use super::registry::{chart_list, plot_by_id, CHARTS};
use super::Source;
use crate::load::parse_report;
use crate::state::ViewState;
use crate::tables::{capacity, measurements};

const FIXTURE: &str = include_str!("../../tests/browser/fixtures/valid-small.json");

/// One change to one place in the document: (JSON pointer, what to do there).
enum Edit {
    Replace(Value),
    Remove,
    DropFirst,
    RepeatFirst,
}

fn edits_at(pointer: &str, node: &Value, out: &mut Vec<(String, Edit)>) {
    let mut add = |edit| out.push((pointer.to_string(), edit));
    match node {
        Value::Number(_) => {
            for v in [0.0, -1.0, 0.5, 1e300, 4_294_967_295.0] {
                add(Edit::Replace(serde_json::json!(v)));
            }
        }
        Value::String(_) => add(Edit::Replace(Value::String(String::new()))),
        Value::Array(items) if !items.is_empty() => {
            add(Edit::Replace(Value::Array(Vec::new())));
            add(Edit::DropFirst);
            add(Edit::RepeatFirst);
        }
        _ => {}
    }
    if !pointer.is_empty() {
        add(Edit::Replace(Value::Null));
        add(Edit::Remove);
    }
    let children: Vec<(String, &Value)> = match node {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => Vec::new(),
    };
    for (key, child) in children {
        edits_at(&format!("{pointer}/{key}"), child, out);
    }
}

fn apply(document: &Value, pointer: &str, edit: &Edit) -> Value {
    let mut copy = document.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("edits are below the root");
    let key = key.replace("~1", "/").replace("~0", "~");
    let target = copy
        .pointer_mut(pointer)
        .expect("the pointer came from this document");
    match edit {
        Edit::Replace(v) => *target = v.clone(),
        Edit::DropFirst => {
            target.as_array_mut().unwrap().remove(0);
        }
        Edit::RepeatFirst => {
            let items = target.as_array_mut().unwrap();
            items.push(items[0].clone());
        }
        Edit::Remove => match copy.pointer_mut(parent).unwrap() {
            Value::Object(map) => {
                map.remove(&key);
            }
            Value::Array(items) => {
                items.remove(key.parse::<usize>().unwrap());
            }
            _ => unreachable!("a parent holds children"),
        },
    }
    copy
}

/// What the report page derives from its sources, for one view.
fn render_everything(sources: &[Source], view: &ViewState) {
    let source = &sources[0];
    let report = source.analysis.report();
    let f = findings(report, &view.findings_options());
    let _ = (f.cards(), f.key_findings());
    let _ = serde_json::to_string(&f).unwrap();
    for finding in CHARTS.iter().filter_map(|c| c.finding) {
        let _ = finding(&f);
    }
    let _ = crate::findings::throughput::summary(&f);
    f.throughput
        .table
        .iter()
        .for_each(|r| drop(crate::findings::throughput::condition(r)));
    let table = measurements::measurements(source, view.stat);
    let _ = measurements::to_csv(&table, view.stat);
    table.rows.iter().for_each(|r| drop(r.cells()));
    for (id, _) in chart_list(sources) {
        let plot = plot_by_id(&id, sources, view).expect("every listed chart has a plot");
        let _ = serde_json::to_string(&plot.to_option()).unwrap();
        let _ = plot.to_csv();
    }
    for target in &f.use_cases {
        if let Some(verdict) = capacity::verdict(source, target, view) {
            let _ = crate::findings::capacity::figure_text(&verdict);
            let _ = verdict.verdict_sentence();
            let _ = capacity::table(source, target, &verdict, view);
        }
        let _ = crate::findings::capacity::caption(target, view);
    }
    let _ = crate::tables::cursor::cursor_rows(sources, view);
    let _ = crate::tables::users::users_table(source, view);
    let _ = infermeter_report::analysis::workloads::workloads_text(report);
    for level in infermeter_report::analysis::timeline::timeline_levels(report) {
        let timeline = infermeter_report::analysis::timeline::level_by_key(report, &level.key);
        let _ = timeline
            .map(|l| infermeter_report::analysis::timeline::timeline_sentence(l, view.stat));
    }
}

#[test]
fn every_single_edit_of_a_valid_report_is_refused_or_renders() {
    let document: Value = serde_json::from_str(FIXTURE).unwrap();
    let mut edits = Vec::new();
    edits_at("", &document, &mut edits);
    let views = [
        ViewState::default(),
        ViewState {
            stat: Stat::P99,
            at: Some(3),
            ..ViewState::default()
        },
    ];
    let (mut accepted, mut panics) = (0, Vec::new());
    for (pointer, edit) in &edits {
        let text = apply(&document, pointer, edit).to_string();
        let Ok(report) = parse_report("edited.json", &text) else {
            continue;
        };
        accepted += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            super::test_support::with_sources(&report, |sources| {
                views
                    .iter()
                    .for_each(|view| render_everything(sources, view))
            })
        }));
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panics.push(format!("{pointer} ({}): {message}", describe(edit)));
        }
    }
    // The edits must reach the renderer, or this test checks nothing.
    assert!(
        accepted > edits.len() / 10,
        "only {accepted} of {} edits were accepted",
        edits.len()
    );
    assert!(
        panics.is_empty(),
        "{} of {accepted} accepted edits panic:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

fn describe(edit: &Edit) -> String {
    match edit {
        Edit::Replace(v) => format!("set to {v}"),
        Edit::Remove => "removed".into(),
        Edit::DropFirst => "first element dropped".into(),
        Edit::RepeatFirst => "first element repeated".into(),
    }
}
