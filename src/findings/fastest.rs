//! The fastest section (peak mode): per-user speed, ITL, scaling and TTFT. The decode,
//! ITL and TTFT sentences also word the deep dive's charts by context ([`Place::Context`]).

use infermeter_report::analysis::findings::Against;
use infermeter_report::analysis::format::format_number;
use infermeter_report::presets::{
    band_for_speed, band_for_ttft, EXCELLENT_DECODE_TOK_S, INSTANT_ITL_S,
};

use super::{
    best_worst, figure_at, graded, latency_range, scaling_spread, speed_range, Findings, Place,
};

/// The decode-speed range graded on How Fast Is This?
pub fn decode(f: &Findings, place: Place) -> Option<String> {
    let range = f.peak.decode.as_ref()?;
    let top_tier = if range.high.value >= EXCELLENT_DECODE_TOK_S {
        " Peak speed is excellent, matching top-tier single-user performance."
    } else {
        ""
    };
    Some(format!(
        "{} {}{top_tier}",
        speed_range(range, "Per-user decode speed", place),
        graded("How Fast Is This?", range, band_for_speed)
    ))
}

/// The ITL range and how it compares with the line of instant streaming.
pub fn itl(f: &Findings, place: Place) -> Option<String> {
    let range = f.peak.itl.as_ref()?;
    let line = range.metric.display_text(INSTANT_ITL_S);
    let verdict = match range.against(INSTANT_ITL_S) {
        Against::AllWithin => format!(
            "Every measured level stays under the {line} threshold where streaming feels instantaneous."
        ),
        Against::Crosses => format!(
            "Streaming feels instant at low load and crosses the {line} threshold as load grows."
        ),
        Against::AllAbove => {
            format!("Even the best case is above the {line} threshold of instant streaming.")
        }
    };
    Some(format!(
        "{} {verdict} For reference, top-tier H200 SXM setups achieve 4–8 ms at short contexts.",
        latency_range(range, "inter-token latency", place)
    ))
}

/// The TTFT range: best and worst with where, graded, with the industry references the reports
/// give.
pub fn ttft(f: &Findings, place: Place) -> Option<String> {
    let range = f.peak.ttft.as_ref()?;
    Some(format!(
        "{} {} Industry references: ~50 ms at 1K context, ~2 s at 32K, ~18 s at 128K on top hardware.",
        best_worst(range, "Best TTFT is", place),
        graded("How Responsive Is This?", range, band_for_ttft)
    ))
}

pub fn decode_by_scenario(f: &Findings) -> Option<String> {
    decode(f, Place::Scenario)
}

pub fn itl_by_scenario(f: &Findings) -> Option<String> {
    itl(f, Place::Scenario)
}

pub fn ttft_by_scenario(f: &Findings) -> Option<String> {
    ttft(f, Place::Scenario)
}

/// Scaling efficiency across scenarios at the highest concurrency.
pub fn scaling(f: &Findings) -> Option<String> {
    Some(scaling_spread(
        f.peak.scaling_at_top.as_ref()?,
        Place::Scenario,
    ))
}

/// The decode band's sentence (reference 002): "Peak per-user decode speed is 172.5 tok/s
/// (Chatbot, single user). At 32 concurrent, per-user speed ranges from 13.2 to 70.6 tok/s
/// across scenarios: the band shows how much each user's speed drops under load." Its first
/// figure is the Peak Decode Speed card's.
pub fn decode_band(f: &Findings) -> Option<String> {
    let peak = f.peak.decode.as_ref()?;
    let spread = f.peak.decode_at_top.as_ref()?;
    Some(format!(
        "Peak per-user decode speed is {}. At {}, per-user speed ranges from {} to {} across \
         scenarios: the band shows how much each user's speed drops under load.",
        figure_at(peak, &peak.high, Place::Scenario),
        spread.high.load_phrase(),
        format_number(spread.low.value),
        spread.high.value_text(spread.metric)
    ))
}
