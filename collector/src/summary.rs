//! `infermeter summary` and `infermeter validate`: read a report and say what it holds.

use std::path::Path;

use infermeter_report::analysis::{findings, FindingsOptions};
use infermeter_report::{load_report, LoadError, Report, RunStatus};

use crate::cli::SummaryArgs;

/// Loads a report file with an error that names the file.
pub fn read_report(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    load_report(&text).map_err(|e| describe(path, &e))
}

fn describe(path: &Path, e: &LoadError) -> String {
    match e {
        LoadError::Invalid(problems) => {
            let mut s = format!("{} is inconsistent:", path.display());
            for p in problems {
                s.push_str(&format!("\n  - {p}"));
            }
            s
        }
        other => format!("{}: {other}", path.display()),
    }
}

/// The summary of a report: the findings the report page states (its highlight cards, key
/// findings and safe queue depths) as text, or every figure as JSON (`--json`: the report
/// crate's `Findings`, serialised as it is). Figures are written by the report crate's
/// formatter, so "6.18 s" on the page is "6.18 s" here.
pub fn summary(report: &Report, args: &SummaryArgs) -> String {
    let options = FindingsOptions {
        stat: args.stat,
        queue_ttft_s: args.ttft_threshold,
        usd_per_kwh: args.usd_per_kwh,
    };
    let f = findings(report, &options);
    if args.json {
        return serde_json::to_string_pretty(&f).expect("findings serialise");
    }
    let mut lines = vec![format!(
        "{} ({})",
        report.display_title(),
        report.metadata.engine.name
    )];
    if let RunStatus::Partial { reason } = &report.status {
        lines.push(format!("PARTIAL RUN: {reason}"));
    }
    lines.push(format!("{:<34}{}", "Statistic", args.stat.label()));
    let row = |label: &str, value: &str, context: &str| format!("{label:<34}{value}  ({context})");
    for card in f.cards() {
        lines.push(row(card.label, &card.value, &card.context));
    }
    for (label, text) in f.key_findings() {
        lines.push(format!("{label:<34}{text}"));
    }
    for depth in &f.burst.safe_depths {
        lines.push(row(
            "Max safe queue depth",
            &depth.value_text(),
            &depth.caption(options.queue_ttft_s),
        ));
    }
    // Session labels name use cases and can be long: always a space before the figure.
    for (label, text) in f.sessions.lines() {
        lines.push(format!("{label:<33} {text}"));
    }
    for w in &report.warnings {
        lines.push(format!("warning: {w}"));
    }
    lines.join("\n")
}
