//! How deep a burst queue may get before TTFT passes a threshold.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::capacity::{capacity, Thresholds};
use crate::schema::Series;
use crate::stats::Stat;

/// TTFT beyond which users perceive the system as slow (the reference reports' line).
pub const DEFAULT_TTFT_THRESHOLD_S: f64 = 3.0;

/// Largest queue depth whose TTFT stays within the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SafeDepth {
    pub depth: u32,
    /// True when between measured depths (read from the monotone curve).
    pub interpolated: bool,
}

/// Max safe queue depth of a burst series: capacity under a TTFT limit alone, interpolated
/// between measured depths. `None` when even the lowest depth exceeds the threshold.
pub fn max_safe_queue_depth(
    series: &Series,
    ttft_threshold_s: f64,
    stat: Stat,
) -> Option<SafeDepth> {
    let thresholds = Thresholds {
        max_ttft_s: Some(ttft_threshold_s),
        ..Thresholds::default()
    };
    capacity(series, &thresholds, stat)
        .estimate
        .map(|e| SafeDepth {
            depth: e.concurrency,
            interpolated: e.interpolated,
        })
}
