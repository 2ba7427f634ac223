//! `infermeter summary` and `infermeter validate`: read a report and say what it holds.

use std::path::Path;

use infermeter_report::analysis::highlights::{highlights, Located};
use infermeter_report::{load_report, LoadError, Report, RunStatus};

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

/// The summary text (or JSON) for a report.
pub fn summary(report: &Report, json: bool, ttft_threshold_s: f64) -> String {
    let h = highlights(report, ttft_threshold_s);
    if json {
        return serde_json::to_string_pretty(&h.summary_json()).expect("JSON values serialise");
    }
    let name = |id: &str| {
        report
            .scenarios
            .iter()
            .find(|s| s.id == id)
            .map_or(id.to_string(), |s| s.name.clone())
    };
    let at = |l: &Located| {
        format!(
            "{} {} @ {}",
            name(&l.scenario),
            l.mode.label(),
            l.concurrency
        )
    };
    let mut lines = vec![format!(
        "{} ({})",
        report.display_title(),
        report.metadata.engine.name
    )];
    if let RunStatus::Partial { reason } = &report.status {
        lines.push(format!("PARTIAL RUN: {reason}"));
    }
    let figure = |label: &str, l: &Option<Located>, fmt: &dyn Fn(f64) -> String| match l {
        Some(l) => format!("{label:<24}{}  ({})", fmt(l.value), at(l)),
        None => format!("{label:<24}n/a"),
    };
    lines.push(figure("Peak decode speed", &h.peak_decode, &|v| {
        format!("{v:.1} tok/s")
    }));
    lines.push(figure("Max system throughput", &h.max_system_tput, &|v| {
        format!("{v:.0} tok/s")
    }));
    lines.push(figure("Best TTFT", &h.best_ttft, &|v| format!("{v:.3} s")));
    lines.push(format!(
        "{:<24}{}  ({} of {} requests)",
        "Success rate",
        h.success_rate
            .map_or("n/a".into(), |r| format!("{:.1}%", r * 100.0)),
        h.requests_ok,
        h.requests_total
    ));
    for (id, depth) in &h.max_safe_queue_depth {
        let value = depth.map_or("n/a".into(), |d| d.text());
        lines.push(format!(
            "{:<24}{value}  ({}, TTFT <= {}s)",
            "Max safe queue depth",
            name(id),
            h.ttft_threshold_s
        ));
    }
    for w in &report.warnings {
        lines.push(format!("warning: {w}"));
    }
    lines.join("\n")
}
