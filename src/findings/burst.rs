//! The scale-up section (burst mode): TTFT, ITL and decode speed against queue depth.

use infermeter_report::analysis::findings::Against;
use infermeter_report::presets::SLUGGISH_ITL_S;

use super::{best_worst, latency_range, speed_range, Findings, Place};

pub fn ttft(f: &Findings) -> Option<String> {
    Some(format!(
        "{} TTFT increases with queue depth because new prefills queue behind active decode operations. This is what users experience under production burst load.",
        best_worst(f.burst.ttft.as_ref()?, "TTFT under queue saturation: best case", Place::Scenario)
    ))
}

/// The ITL range and how it compares with the line where streaming turns sluggish.
pub fn itl(f: &Findings) -> Option<String> {
    let range = f.burst.itl.as_ref()?;
    let line = range.metric.display_text(SLUGGISH_ITL_S);
    let verdict = match range.against(SLUGGISH_ITL_S) {
        Against::AllWithin => format!(
            "Every queue depth stays under the {line} line: streaming stays smooth even when requests pile up."
        ),
        Against::Crosses => {
            format!("The deeper queues cross the {line} line: streaming turns sluggish there.")
        }
        Against::AllAbove => format!(
            "Even the shallowest queue is above the {line} line: streaming is sluggish under any burst."
        ),
    };
    Some(format!(
        "{} {verdict}",
        latency_range(range, "inter-token latency", Place::Scenario)
    ))
}

pub fn decode(f: &Findings) -> Option<String> {
    Some(speed_range(
        f.burst.decode.as_ref()?,
        "Per-user decode speed",
        Place::Scenario,
    ))
}
