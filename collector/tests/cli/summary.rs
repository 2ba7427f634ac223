//! `infermeter summary` prints the report page's findings: its JSON holds the report crate's
//! `Findings` as they are, for every bundled report and test fixture and every statistic the
//! page offers, in a versioned shape that validates against data/schema/summary.schema.json;
//! its text states the same figures, and ranks compared reports by what serving the users
//! under the SLO costs.

use std::path::PathBuf;

use infermeter_report::analysis::goodput::report_slo;
use infermeter_report::analysis::{findings, FindingsOptions};
use infermeter_report::summary::SUMMARY_FORMAT;
use infermeter_report::{load_report, Report, Stat};

use crate::common::{infermeter, manifest_dir, out_dir};

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
            assert_eq!(printed["format"], SUMMARY_FORMAT);
            assert_eq!(printed["reports"][0]["file"], path.to_str().unwrap());
            let printed = &printed["reports"][0]["findings"];
            let options = FindingsOptions {
                stat,
                slo: Some(report_slo(&report)),
                ..FindingsOptions::default()
            };
            let expected = serde_json::to_value(findings(&report, &options)).unwrap();
            assert_eq!(*printed, expected, "{path:?} at {stat:?}");
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

/// `summary --json` of one report, and of several compared with every option set, validates
/// against the JSON Schema the repository publishes.
#[tokio::test]
async fn summary_json_validates_against_its_published_schema() {
    let schema_path = manifest_dir().join("../data/schema/summary.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let all: Vec<String> = reports()
        .into_iter()
        .map(|(p, _)| p.to_str().unwrap().to_string())
        .collect();
    let mut several = all.clone();
    several.extend(
        [
            "--json",
            "--usd-per-gpu-hour",
            "H100=2.5,RTX Pro 6000=1.8",
            "--users",
            "300",
            "--interactivity",
            "35",
        ]
        .map(String::from),
    );
    for args in [vec![all[0].clone(), "--json".into()], several] {
        let mut full = vec!["summary".to_string()];
        full.extend(args);
        let out = infermeter(&full, &[]).await;
        assert!(out.status.success(), "{out:?}");
        let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&printed)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "schema violations: {errors:#?}");
        assert_eq!(printed["format"], SUMMARY_FORMAT);
    }
}

/// The sample on an H100 and a copy on an H200 whose requests all start in a third of the
/// time: without a TTFT bound both hold every tested level, so neither has a limit and nothing
/// is ranked; with a tight bound the H100 reaches its limit and is ranked alone, while the
/// H200's bound already costs less, until its GPU-hour is dear.
#[tokio::test]
async fn only_limits_rank_and_bounds_say_what_they_decide() {
    let dir = out_dir("summary-ranking-flips");
    let (_, sample) = reports()
        .into_iter()
        .find(|(p, _)| p.ends_with("sample-synthetic.json"))
        .expect("the sample report");
    let mut faster = sample.clone();
    faster.metadata.hardware.gpu_model = "NVIDIA H200".into();
    for level in faster.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
        let columns = level
            .per_request
            .as_mut()
            .expect("the sample has per-request figures");
        for (e2e, ttft) in columns.e2e.iter_mut().zip(columns.ttft.iter_mut()) {
            *e2e -= *ttft * 2 / 3;
            *ttft /= 3;
        }
    }
    let (h100, h200) = (dir.join("h100.json"), dir.join("h200.json"));
    for (path, report) in [(&h100, &sample), (&h200, &faster)] {
        std::fs::write(path, serde_json::to_string(report).unwrap()).unwrap();
    }
    // The Chatbot rows, each as (rank, configuration), and the lines stated under them.
    let chatbot = |extra: &'static [&'static str]| {
        let (h100, h200) = (h100.clone(), h200.clone());
        async move {
            let mut args = vec![
                "summary".to_string(),
                h100.display().to_string(),
                h200.display().to_string(),
            ];
            args.extend(extra.iter().map(|a| a.to_string()));
            let out = infermeter(&args, &[]).await;
            assert!(out.status.success(), "{out:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            let block: Vec<String> = text
                .lines()
                .skip_while(|l| *l != "Chatbot (peak): cheapest meeting the SLO")
                .skip(1)
                .take_while(|l| l.starts_with("  "))
                .map(String::from)
                .collect();
            let rows: Vec<(String, String)> = block
                .iter()
                .map(|l| {
                    l.trim()
                        .split("  ")
                        .filter(|c| !c.is_empty())
                        .map(str::trim)
                        .collect::<Vec<_>>()
                })
                .filter(|cells| cells.len() == 12 && cells[0] != "Rank")
                .map(|cells| (cells[0].to_string(), cells[1].to_string()))
                .collect();
            (rows, block.join("\n"))
        }
    };
    let row = |rank: &str, label: &str| (rank.to_string(), label.to_string());
    // Without a TTFT bound both hold every tested level: bounds, so nothing is ranked.
    let (loose, said) = chatbot(&["--slo", "tpot=50ms"]).await;
    assert_eq!(loose, [row("—", "H100"), row("—", "H200")]);
    assert!(said.contains("No ranking is possible yet"), "{said}");
    // With a tight bound the H100 reaches its limit at 4 users and is ranked; the H200 still
    // holds every level, and its bound already costs less.
    let (tight, said) = chatbot(&["--slo", "ttft=0.3s,tpot=50ms"]).await;
    assert_eq!(tight, [row("1", "H100"), row("—", "H200")]);
    assert!(
        said.contains("H200 serves at least 32 concurrent users per replica, at most $14.4 an hour for 100 users: already no more than H100's measured $67.2"),
        "{said}"
    );
    // A dear H200 GPU-hour: its bound no longer decides.
    let (_, said) = chatbot(&[
        "--slo",
        "ttft=0.3s,tpot=50ms",
        "--usd-per-gpu-hour",
        "H200=30",
    ])
    .await;
    assert!(
        said.contains("its limit decides which is cheaper"),
        "{said}"
    );
    let bad = infermeter(
        &[
            "summary",
            h100.to_str().unwrap(),
            "--usd-per-gpu-hour",
            "H100",
        ],
        &[],
    )
    .await;
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("is not KIND=DOLLARS"),
        "{bad:?}"
    );
}
