//! The capacity analysis in words: the capacity figure, the limits, the chart's caption and the
//! use case's heading and token profile. (The verdict sentence is the report crate's
//! `Capacity::verdict_sentence`.)

use infermeter_report::analysis::capacity::{Capacity, LoadUnit};
use infermeter_report::analysis::format::{
    context_label, context_words, format_grouped, format_number,
};
use infermeter_report::analysis::use_cases::CapacityTarget;
use infermeter_report::analysis::Metric;
use infermeter_report::Limits;
use infermeter_report::Stat;

use crate::charts::capacity::axes_metrics;
use crate::state::ViewState;

/// The capacity figure, e.g. "7 concurrent requests", "≈ 12 concurrent requests" between
/// measured levels, "1 request", "24 users" for a users series, or "Not recommended for this
/// use case".
pub fn figure_text(capacity: &Capacity) -> String {
    capacity_words(capacity, " concurrent", " for this use case")
}

/// The figure on a use case's summary card: "7 requests", "≈ 12 requests", "24 users", "Not
/// recommended".
pub fn card_text(capacity: &Capacity) -> String {
    capacity_words(capacity, "", "")
}

/// `kind` qualifies requests only: users are simply users.
fn capacity_words(capacity: &Capacity, kind: &str, use_case: &str) -> String {
    let noun = capacity.unit.noun();
    match capacity.estimate {
        None => format!("Not recommended{use_case}"),
        Some(e) => {
            let approx = if e.interpolated { "≈ " } else { "" };
            let kind = match capacity.unit {
                LoadUnit::Requests => kind,
                LoadUnit::Users | LoadUnit::Jobs => "",
            };
            if e.concurrency == 1 {
                format!("{approx}1 {noun}")
            } else {
                format!("{approx}{}{kind} {noun}s", e.concurrency)
            }
        }
    }
}

/// "TTFT threshold" column of the guidance table: "10 s", or "2 s e2e" for end-to-end limits.
pub fn latency_limit_text(t: &Limits) -> String {
    match (t.max_e2e_s, t.max_ttft_s) {
        (Some(e2e), _) => format!("{} s e2e", format_number(e2e)),
        (None, Some(ttft)) => format!("{} s", format_number(ttft)),
        (None, None) => "N/A".into(),
    }
}

/// "Speed threshold" column: "15 tok/s", "70 ms ITL" or "N/A".
pub fn speed_limit_text(t: &Limits) -> String {
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
        other => other.label().to_ascii_uppercase(),
    };
    format!(
        "{stat} {} and {} at {} input + {} output tokens. Dashed lines indicate quality thresholds.",
        left.in_sentence(),
        right.short_label(),
        format_grouped(f64::from(target.input_tokens)),
        format_grouped(f64::from(target.output_tokens))
    )
}

/// "Thresholds: TTFT < 10 s, generation speed > 10 tok/s".
pub fn thresholds_text(t: &Limits) -> String {
    let mut parts = Vec::new();
    if let Some(v) = t.max_e2e_s {
        parts.push(format!(
            "end-to-end latency < {} ms",
            format_number(v * 1000.0)
        ));
    }
    if let Some(v) = t.max_ttft_s {
        parts.push(format!("TTFT < {} s", format_number(v)));
    }
    if let Some(v) = t.min_decode_tok_s {
        parts.push(format!("generation speed > {} tok/s", format_number(v)));
    }
    if let Some(v) = t.max_itl_s {
        parts.push(format!(
            "ITL < {} ms",
            format_number(Metric::Itl.to_display(v))
        ));
    }
    let word = if parts.len() == 1 {
        "Threshold"
    } else {
        "Thresholds"
    };
    format!("{word}: {}", parts.join(", "))
}

/// "Chatbot (1K Context)" as in the reports; "Short prompt (64-Token Context)" below 1K.
pub fn use_case_heading(name: &str, input_tokens: u32) -> String {
    let context = context_words(input_tokens, ["Token", "Context"]);
    format!("{name} ({context})")
}

/// "1K in / 128 out": a use case's token profile on its summary card.
pub fn token_profile(input_tokens: u32, output_tokens: u32) -> String {
    format!(
        "{} in / {} out",
        context_label(input_tokens),
        context_label(output_tokens)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guidance_texts() {
        let e2e = Limits {
            max_e2e_s: Some(2.0),
            ..Limits::default()
        };
        assert_eq!(latency_limit_text(&e2e), "2 s e2e");
        assert_eq!(speed_limit_text(&e2e), "N/A");
        assert_eq!(
            thresholds_text(&e2e),
            "Threshold: end-to-end latency < 2000 ms"
        );
        let chat = Limits {
            max_ttft_s: Some(10.0),
            min_decode_tok_s: Some(10.0),
            ..Limits::default()
        };
        assert_eq!(latency_limit_text(&chat), "10 s");
        assert_eq!(speed_limit_text(&chat), "10 tok/s");
        assert_eq!(
            thresholds_text(&chat),
            "Thresholds: TTFT < 10 s, generation speed > 10 tok/s"
        );
    }

    #[test]
    fn token_profiles_and_headings_read_like_the_reports() {
        assert_eq!(token_profile(1024, 128), "1K in / 128 out");
        assert_eq!(token_profile(16384, 2048), "16K in / 2K out");
        assert_eq!(token_profile(1500, 64), "1,500 in / 64 out");
        assert_eq!(use_case_heading("Chatbot", 1024), "Chatbot (1K Context)");
        assert_eq!(
            use_case_heading("Short prompt", 64),
            "Short prompt (64-Token Context)"
        );
    }

    /// A users series' capacity is in users, on the card and in the figure.
    #[test]
    fn capacity_of_a_users_series_speaks_of_users() {
        use infermeter_report::analysis::capacity::CapacityEstimate;
        let mut cap = Capacity {
            max_concurrency: Some(16),
            tested_max: 64,
            first_breach: None,
            rows: Vec::new(),
            estimate: Some(CapacityEstimate {
                concurrency: 24,
                interpolated: true,
            }),
            unit: LoadUnit::Users,
        };
        assert_eq!(figure_text(&cap), "≈ 24 users");
        assert_eq!(card_text(&cap), "≈ 24 users");
        cap.unit = LoadUnit::Requests;
        assert_eq!(figure_text(&cap), "≈ 24 concurrent requests");
        assert_eq!(card_text(&cap), "≈ 24 requests");
        cap.estimate = Some(CapacityEstimate {
            concurrency: 1,
            interpolated: false,
        });
        cap.unit = LoadUnit::Users;
        assert_eq!(figure_text(&cap), "1 user");
    }
}
