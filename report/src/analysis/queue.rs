//! How deep a burst queue may get before TTFT passes a threshold.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::capacity::capacity;
use crate::schema::Limits;
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
    /// True when every measured depth met the threshold: `depth` is the deepest tested, and
    /// the queue may go deeper by an amount the run did not measure.
    pub at_least: bool,
}

impl SafeDepth {
    /// "≈ 131 reqs" between measured depths, "≥ 8 reqs" when even the deepest tested met the
    /// threshold, "64 reqs" at a measured depth.
    pub fn text(&self) -> String {
        let sign = match (self.at_least, self.interpolated) {
            (true, _) => "≥ ",
            (false, true) => "≈ ",
            (false, false) => "",
        };
        format!("{sign}{} reqs", self.depth)
    }
}

/// Max safe queue depth of a burst series: capacity under a TTFT limit alone, interpolated
/// between measured depths. `None` when even the lowest depth exceeds the threshold.
pub fn max_safe_queue_depth(
    series: &Series,
    ttft_threshold_s: f64,
    stat: Stat,
) -> Option<SafeDepth> {
    let thresholds = Limits {
        max_ttft_s: Some(ttft_threshold_s),
        ..Limits::default()
    };
    let capacity = capacity(series, &thresholds, stat);
    let at_least = capacity.first_breach.is_none();
    capacity.estimate.map(|e| SafeDepth {
        depth: e.concurrency,
        interpolated: e.interpolated,
        at_least,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::series;
    use crate::schema::LoadMode;

    fn burst(ttfts: &[f64]) -> Series {
        let depths = [1, 2, 4, 8, 16, 32, 64, 128, 256];
        let levels: Vec<(u32, f64, f64)> = depths
            .iter()
            .zip(ttfts)
            .map(|(&d, &t)| (d, t, 50.0))
            .collect();
        series("chatbot", LoadMode::Burst, &levels)
    }

    #[test]
    fn interpolates_between_measured_depths() {
        // Tangent at 128: mean of secants 1.05/64 and 5.35/128 = 0.029102; TTFT(131) ≈ 2.989,
        // TTFT(132) ≈ 3.020, so 131 like the reference's "131 reqs" between 128 and 256.
        let s = burst(&[0.19, 0.21, 0.26, 0.36, 0.58, 1.02, 1.85, 2.9, 8.25]);
        assert_eq!(
            max_safe_queue_depth(&s, DEFAULT_TTFT_THRESHOLD_S, Stat::Mean),
            Some(SafeDepth {
                depth: 131,
                interpolated: true,
                at_least: false
            })
        );
        assert_eq!(
            max_safe_queue_depth(&s, DEFAULT_TTFT_THRESHOLD_S, Stat::Mean)
                .unwrap()
                .text(),
            "≈ 131 reqs"
        );
    }

    #[test]
    fn measured_depth_when_the_next_is_already_too_slow() {
        let s = burst(&[1.86, 2.1, 2.45, 2.95, 5.1, 10.4]);
        assert_eq!(
            max_safe_queue_depth(&s, 3.0, Stat::Mean),
            Some(SafeDepth {
                depth: 8,
                interpolated: false,
                at_least: false
            })
        );
    }

    /// Every tested depth met the threshold: the deepest is a lower bound, said as such.
    #[test]
    fn never_beyond_the_measured_range() {
        let s = burst(&[0.2, 0.3, 0.4]);
        let depth = max_safe_queue_depth(&s, 3.0, Stat::Mean);
        assert_eq!(
            depth,
            Some(SafeDepth {
                depth: 4,
                interpolated: false,
                at_least: true
            })
        );
        assert_eq!(depth.unwrap().text(), "≥ 4 reqs");
        assert_eq!(
            max_safe_queue_depth(&burst(&[3.5, 4.0]), 3.0, Stat::Mean),
            None
        );
    }
}
