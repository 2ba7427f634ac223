//! `infermeter summary` prints the report page's findings: its JSON is the report crate's
//! `Findings` as they are, for every bundled report and test fixture and every statistic the
//! page offers, and its text states the same figures.

use std::path::PathBuf;

use infermeter_report::analysis::goodput::report_slo;
use infermeter_report::analysis::{findings, FindingsOptions};
use infermeter_report::{load_report, Report, Stat};

use crate::common::{infermeter, manifest_dir};

/// Every report the viewer is tested on: the bundled ones and the browser tests' fixtures.
fn reports() -> Vec<(PathBuf, Report)> {
    let root = manifest_dir().join("..");
    let mut found = Vec::new();
    for dir in ["data/reports", "tests/browser/fixtures"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let report = load_report(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
                found.push((path, report));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(found.len() >= 6, "only {} reports found", found.len());
    found
}

#[tokio::test]
async fn summary_json_is_the_findings_of_every_report_and_statistic() {
    for (path, report) in reports() {
        for stat in [Stat::Mean, Stat::P50, Stat::P90, Stat::P99] {
            let out = infermeter(
                &[
                    "summary",
                    path.to_str().unwrap(),
                    "--json",
                    "--stat",
                    stat.label(),
                ],
                &[],
            )
            .await;
            assert!(out.status.success(), "{path:?} {stat:?}: {out:?}");
            let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let options = FindingsOptions {
                stat,
                slo: Some(report_slo(&report)),
                ..FindingsOptions::default()
            };
            let expected = serde_json::to_value(findings(&report, &options)).unwrap();
            assert_eq!(printed, expected, "{path:?} at {stat:?}");
        }
    }
}

/// The text states each highlight card as the page does (label, value, where).
#[tokio::test]
async fn summary_text_states_the_cards() {
    let (path, report) = reports()
        .into_iter()
        .find(|(p, _)| p.ends_with("sample-synthetic.json"))
        .expect("the sample report");
    let out = infermeter(&["summary", path.to_str().unwrap(), "--stat", "p99"], &[]).await;
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let options = FindingsOptions {
        stat: Stat::P99,
        ..FindingsOptions::default()
    };
    let f = findings(&report, &options);
    // At p99 the sample's single-user levels (a few dozen requests) are only indicative.
    assert!(f.cards().iter().any(|c| c.indicative.is_some()));
    for card in f.cards() {
        let line = match card.indicative_note(Stat::P99) {
            Some(note) => format!("{}  ({}; {note})", card.value, card.context),
            None => format!("{}  ({})", card.value, card.context),
        };
        assert!(
            text.lines()
                .any(|l| l.starts_with(card.label) && l.ends_with(&line)),
            "no line for {} reading {line}:\n{text}",
            card.label
        );
    }
    // A label longer than its column is still set apart from its figure.
    assert!(
        text.lines()
            .any(|l| l.starts_with("Tool Calling Agentic (peak) max load ≈ 13 concurrent users")),
        "{text}"
    );
    let bad = infermeter(&["summary", path.to_str().unwrap(), "--stat", "p42"], &[]).await;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use one of mean, p50"));
}

/// A report measured with GPU power (the H100 report under data/reports) states its power
/// figures in the text too: seen missing on the first GPU run, where only `--json` had them.
#[tokio::test]
async fn summary_text_states_the_power_figures() {
    let (path, report) = reports()
        .into_iter()
        .find(|(p, _)| p.ends_with("h100-transformers-llama-3.1-8b-shape.json"))
        .expect("the report measured on an H100");
    let out = infermeter(&["summary", path.to_str().unwrap()], &[]).await;
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let options = FindingsOptions::default();
    let lines = findings(&report, &options)
        .power
        .key_lines(options.usd_per_kwh);
    assert_eq!(lines.len(), 3, "draw, efficiency and cost: {lines:?}");
    for (label, value) in lines {
        assert!(
            text.lines()
                .any(|l| l.starts_with(label) && l.ends_with(&value)),
            "no line for {label} reading {value}:\n{text}"
        );
    }
    assert!(
        text.contains(" W, $") && text.contains(" tok/J  ("),
        "{text}"
    );
}
