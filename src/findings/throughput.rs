//! System throughput: the chart's peak, the table's conditions and the sentence under it.

use infermeter_report::analysis::findings::{Condition, ThroughputRow};
use infermeter_report::analysis::format::{format_grouped, format_number};
use infermeter_report::analysis::Metric;
use infermeter_report::LoadMode;

use super::{Findings, Place};

/// "Peak system throughput is 2961 tok/s (Chatbot, 24 concurrent), equivalent to ~10,659,600
/// tokens/hour."
pub fn system(f: &Findings) -> Option<String> {
    let peak = f.throughput.peak.as_ref()?;
    Some(format!(
        "Peak system throughput is {} ({}), equivalent to ~{} tokens/hour.",
        peak.at.value_text(Metric::SystemOutputTokS),
        Place::Scenario.of(&peak.at),
        format_grouped(peak.tokens_per_hour)
    ))
}

/// "Single user", "Mid concurrency (8 reqs)", "Max concurrency (32 reqs)".
pub fn condition(row: &ThroughputRow) -> String {
    if row.concurrency == 1 {
        return "Single user".into();
    }
    let what = match row.condition {
        Condition::Lowest => "Lowest concurrency",
        Condition::Middle => "Mid concurrency",
        Condition::Highest => "Max concurrency",
    };
    format!("{what} ({} reqs)", row.concurrency)
}

/// The reports' sentence under the table: "At peak throughput (24 concurrent, Chatbot), this
/// configuration produces approximately 10.7 million tokens per hour with a per-user decode
/// speed of 38.8 tok/s. Single-user performance reaches 152.9 tok/s, and scaling efficiency at
/// 32 concurrent is 39%." When a burst run went higher, says so and in which mode: that figure
/// is the Max System Throughput card's.
pub fn summary(f: &Findings) -> Option<String> {
    let t = &f.throughput;
    let peak = t.peak.as_ref()?;
    let per_user = peak.per_user_tok_s.map_or(String::new(), |d| {
        format!(
            " with a per-user decode speed of {}",
            Metric::DecodeTokS.display_text(d)
        )
    });
    let first = t
        .table
        .first()
        .and_then(|r| Some((r.concurrency, r.per_user_tok_s?)));
    let lowest = match (first, &peak.scaling) {
        (Some((lowest, speed)), Some(scaling)) => format!(
            " {} performance reaches {}, and scaling efficiency at {} concurrent is {}.",
            if lowest == 1 {
                "Single-user"
            } else {
                "Lowest-concurrency"
            },
            Metric::DecodeTokS.display_text(speed),
            scaling.concurrency,
            scaling.value_text(Metric::ScalingEfficiency)
        ),
        _ => String::new(),
    };
    let burst = match &t.max {
        Some(max) if max.mode != LoadMode::Peak => format!(
            " Under {} load, with requests queued in the engine, throughput reaches {} ({} at {}).",
            max.mode.label(),
            max.value_text(Metric::SystemOutputTokS),
            max.scenario_name,
            max.load_phrase()
        ),
        _ => String::new(),
    };
    Some(format!(
        "At peak throughput ({} concurrent, {}), this configuration produces approximately {} \
         million tokens per hour{per_user}.{lowest}{burst}",
        peak.at.concurrency,
        peak.at.scenario_name,
        format_number(peak.tokens_per_hour / 1e6),
    ))
}
