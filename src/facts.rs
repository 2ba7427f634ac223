//! The header's facts about a report, in words: the model's architecture, the test parameters
//! and the ranges tested, and when the run started.

use infermeter_report::analysis::coverage::coverage;
use infermeter_report::analysis::format::{context_label, format_grouped, format_number};
use infermeter_report::Report;

/// "35B MoE, 3B active params, FP8" from whatever the report states.
pub fn architecture(report: &Report) -> Option<String> {
    let m = &report.metadata.model;
    let mut parts = Vec::new();
    match (m.total_params_b, &m.architecture) {
        (Some(p), Some(a)) => parts.push(format!("{}B {a}", format_number(p))),
        (Some(p), None) => parts.push(format!("{}B params", format_number(p))),
        (None, Some(a)) => parts.push(a.clone()),
        (None, None) => {}
    }
    if let (Some(active), Some(total)) = (m.active_params_b, m.total_params_b) {
        if active < total {
            parts.push(format!("{}B active params", format_number(active)));
        }
    }
    parts.extend(m.precision.clone());
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "Yes".into(),
        Some(false) => "No".into(),
        None => "Not stated".into(),
    }
}

/// Whether prompt caching was on; when off, what that means for TTFT, as the reports note it.
fn caching(on: Option<bool>) -> String {
    match on {
        Some(false) => "No: every request's whole context was prefilled, so TTFT figures are worst cases (with caching, chats and agents that grow their context turn by turn prefill only the new tokens)".into(),
        other => yes_no(other),
    }
}

/// (label, value) rows of the header's facts after the model, GPU and scenarios: the model's
/// organization, the GPUs' memory, then the test parameters.
pub fn test_parameters(report: &Report) -> Vec<(&'static str, String)> {
    let md = &report.metadata;
    let t = &md.test;
    let engine = match &md.engine.version {
        Some(v) => format!("{} {v}", md.engine.name),
        None => md.engine.name.clone(),
    };
    let mut rows = provenance_rows(report);
    // Who made the model and how much GPU memory it ran in, as the reports' headers state them.
    if let Some(org) = &md.model.organization {
        rows.push(("Organization", org.clone()));
    }
    if let Some(gb) = md.hardware.vram_gb {
        rows.push(("VRAM", format!("{} GB", format_number(gb))));
    }
    rows.extend([
        ("Engine", engine),
        ("Prompt caching", caching(t.prompt_caching)),
        ("Speculative decoding", yes_no(t.speculative_decoding)),
    ]);
    if let Some(kv) = &t.kv_cache_dtype {
        rows.push(("KV cache", kv.clone()));
    }
    if let Some(suite) = &t.suite {
        rows.push(("Suite", suite.clone()));
    }
    rows.extend(tested_ranges(report));
    rows.push(("Started", readable_time(&md.started_at)));
    rows
}

/// The tool an imported report was measured with, its files and command line.
fn provenance_rows(report: &Report) -> Vec<(&'static str, String)> {
    let Some(p) = &report.metadata.provenance else {
        return Vec::new();
    };
    let tool = [Some(p.tool.clone()), p.version.clone(), p.format.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let mut rows = vec![("Measured by", tool)];
    if !p.files.is_empty() {
        rows.push(("Imported from", p.files.join(", ")));
    }
    if let Some(command) = &p.command {
        rows.push(("Command", command.clone()));
    }
    rows
}

/// The load levels and token lengths tested, as the reports' test parameters state them:
/// "1–32 concurrent requests (peak); queue depth 1–256 (burst)", "1K–32K input tokens, 128–1,024
/// output tokens per request".
fn tested_ranges(report: &Report) -> Vec<(&'static str, String)> {
    let c = coverage(report);
    let load: Vec<String> = c
        .loads
        .iter()
        .filter_map(|&(mode, range)| mode.tested_range_text(range))
        .collect();
    let mut rows = Vec::new();
    if !load.is_empty() {
        rows.push(("Load tested", load.join("; ")));
    }
    if let (Some(input), Some(output)) = (c.input_tokens, c.output_tokens) {
        rows.push((
            "Context lengths",
            format!(
                "{} input tokens, {} output tokens per request",
                input.text(context_label),
                output.text(|n| format_grouped(f64::from(n)))
            ),
        ));
    }
    rows
}

/// "2026-11-23T07:25:51.519956458+00:00" as "2026-11-23 07:25:51 UTC": to the second, with a
/// non-UTC offset kept as written. Text of another shape is shown as it is.
pub fn readable_time(rfc3339: &str) -> String {
    let shape_ok = |date: &str, time: &str| {
        date.len() == 10
            && time.len() == 8
            && date.chars().all(|c| c.is_ascii_digit() || c == '-')
            && time.chars().all(|c| c.is_ascii_digit() || c == ':')
    };
    let Some((date, rest)) = rfc3339.split_once(['T', 't', ' ']) else {
        return rfc3339.to_string();
    };
    let Some((time, tail)) = rest.split_at_checked(8) else {
        return rfc3339.to_string();
    };
    if !shape_ok(date, time) {
        return rfc3339.to_string();
    }
    let zone = tail.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    match zone {
        "Z" | "z" | "+00:00" | "-00:00" => format!("{date} {time} UTC"),
        "" => format!("{date} {time}"),
        offset => format!("{date} {time} {offset}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::sample;
    use infermeter_report::LoadMode;

    #[test]
    fn start_times_read_to_the_second_with_their_zone() {
        assert_eq!(
            readable_time("2026-11-23T07:25:51.519956458+00:00"),
            "2026-11-23 07:25:51 UTC"
        );
        assert_eq!(
            readable_time("2026-11-23T07:25:51Z"),
            "2026-11-23 07:25:51 UTC"
        );
        assert_eq!(
            readable_time("2026-11-23T09:25:51.5+02:00"),
            "2026-11-23 09:25:51 +02:00"
        );
        assert_eq!(readable_time("2026-11-23T07:25:51"), "2026-11-23 07:25:51");
        for odd in [
            "yesterday",
            "",
            "2026-11-23",
            "2026-11-23T7:25",
            "ünïcode-é-Tß",
        ] {
            assert_eq!(readable_time(odd), odd);
        }
    }

    #[test]
    fn header_facts() {
        let report = sample();
        assert_eq!(
            architecture(&report).unwrap(),
            "35B MoE, 3B active params, FP8"
        );
        let params = test_parameters(&report);
        let caching = params.iter().find(|p| p.0 == "Prompt caching").unwrap();
        assert!(
            caching.1.starts_with("No: ") && caching.1.contains("worst cases"),
            "{caching:?}"
        );
        let mut stated = report.clone();
        stated.metadata.model.organization = Some("stepfun-ai".into());
        stated.metadata.hardware.vram_gb = Some(191.25);
        let params = test_parameters(&stated);
        assert_eq!(
            params[..2],
            [
                ("Organization", "stepfun-ai".to_string()),
                ("VRAM", "191.2 GB".to_string())
            ]
        );
        assert!(params.contains(&("Speculative decoding", "No".to_string())));
        // What was tested, as the reports' test parameters state it.
        assert!(params.contains(&(
            "Load tested",
            "1–32 concurrent requests (peak); queue depth 1–256 (burst)".to_string()
        )));
        assert!(params.contains(&(
            "Context lengths",
            "1K–32K input tokens, 256 output tokens per request".to_string()
        )));
        let step: Report = serde_json::from_str(include_str!(
            "../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
        ))
        .unwrap();
        assert!(test_parameters(&step).contains(&(
            "Context lengths",
            "1K–96K input tokens, 128–1,024 output tokens per request".to_string()
        )));
        let mut peak_only = report.clone();
        peak_only.series.retain(|s| s.mode == LoadMode::Peak);
        for s in &mut peak_only.series {
            s.levels.truncate(1);
        }
        let params = test_parameters(&peak_only);
        assert!(params.contains(&("Load tested", "1 concurrent request (peak)".to_string())));
        let mut untitled = report.clone();
        untitled.metadata.title = None;
        assert_eq!(
            untitled.display_title(),
            "Qwen/Qwen3.5-35B-A3B-FP8 on 1x NVIDIA H100 80GB HBM3"
        );
    }
}
