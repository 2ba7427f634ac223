//! The deep dive's charts by context length (peak mode), one line per concurrency.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;

use super::{fastest, figure_at, scaling_spread, Findings, Place};

/// "At 5 concurrent, system throughput goes from 194.4 tok/s at 1K context to 16.2 tok/s at 96K
/// context.", then where adding requests stops raising throughput, as reference 003 reads its
/// chart.
pub fn throughput(f: &Findings) -> Option<String> {
    let t = f.context.throughput.as_ref()?;
    let (top, lowest) = (t.longest.concurrency, t.lowest);
    let metric = Metric::SystemOutputTokS;
    let mut text = format!(
        "At {top} concurrent, system throughput goes from {} at {} to {} at {}.",
        t.shortest.value_text(metric),
        t.shortest.context_phrase(),
        t.longest.value_text(metric),
        t.longest.context_phrase()
    );
    if let Some((from, at_lowest)) = &t.no_gain_from {
        let versus = format!(
            "total throughput at {top} concurrent is no higher than at {lowest} concurrent"
        );
        text.push(' ');
        text.push_str(&if from.input_tokens == t.shortest.input_tokens {
            format!("At every context length, {versus}: batching does not pay off here.")
        } else {
            format!(
                "From {} up, {versus} ({} vs {} at {}): batching stops paying off there.",
                from.context_phrase(),
                format_number(from.value),
                metric.display_text(*at_lowest),
                from.context_phrase()
            )
        });
    }
    Some(text)
}

pub fn decode(f: &Findings) -> Option<String> {
    fastest::decode(f, Place::Context)
}

pub fn ttft(f: &Findings) -> Option<String> {
    fastest::ttft(f, Place::Context)
}

pub fn itl(f: &Findings) -> Option<String> {
    fastest::itl(f, Place::Context)
}

pub fn queue_wait(f: &Findings) -> Option<String> {
    let range = f.peak.queue_wait.as_ref()?;
    Some(format!(
        "The longest queue wait observed was {}. Rising queue times signal GPU saturation: requests wait for resources rather than being processed immediately.",
        figure_at(range, &range.high, Place::Context)
    ))
}

pub fn prefill(f: &Findings) -> Option<String> {
    let range = f.peak.prefill.as_ref()?;
    Some(format!(
        "The fastest per-user prefill observed was {}.",
        figure_at(range, &range.high, Place::Context)
    ))
}

/// Scaling efficiency across concurrencies at the longest context.
pub fn scaling(f: &Findings) -> Option<String> {
    Some(scaling_spread(
        f.context.scaling_at_longest.as_ref()?,
        Place::Context,
    ))
}
