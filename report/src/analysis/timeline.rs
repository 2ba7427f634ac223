//! A level over time: the series a timeline chart draws, one point per slice of
//! [`crate::schema::Timeline`], so warm-up, drift and a filling cache show.

use serde::Serialize;

use super::format::with_unit;
use crate::schema::{Level, TimelineSlice};
use crate::stats::Stat;

/// A figure read from each slice of a level's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineMetric {
    /// Successful requests finished per second.
    CompletedPerS,
    /// Output tokens arrived per second.
    OutputTokS,
    /// TTFT of the requests started in the slice (at the chosen statistic).
    Ttft,
    /// Cached over prompt tokens of the requests started in the slice, 0..1.
    CacheHitRatio,
    /// Failed requests finished in the slice.
    Errors,
}

impl TimelineMetric {
    pub const ALL: [TimelineMetric; 5] = [
        TimelineMetric::CompletedPerS,
        TimelineMetric::OutputTokS,
        TimelineMetric::Ttft,
        TimelineMetric::CacheHitRatio,
        TimelineMetric::Errors,
    ];

    /// Stable id for URLs and test ids.
    pub fn key(self) -> &'static str {
        match self {
            TimelineMetric::CompletedPerS => "completed_per_s",
            TimelineMetric::OutputTokS => "output_tok_s",
            TimelineMetric::Ttft => "ttft",
            TimelineMetric::CacheHitRatio => "cache_hit_ratio",
            TimelineMetric::Errors => "errors",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TimelineMetric::CompletedPerS => "Requests completed",
            TimelineMetric::OutputTokS => "Output throughput",
            TimelineMetric::Ttft => "Time to first token",
            TimelineMetric::CacheHitRatio => "Cache-hit ratio",
            TimelineMetric::Errors => "Errors",
        }
    }

    /// Display unit (after [`TimelineMetric::to_display`]).
    pub fn unit(self) -> &'static str {
        match self {
            TimelineMetric::CompletedPerS => "req/s",
            TimelineMetric::OutputTokS => "tok/s",
            TimelineMetric::Ttft => "s",
            TimelineMetric::CacheHitRatio => "%",
            TimelineMetric::Errors => "",
        }
    }

    /// Stored value to displayed (the ratio in percent).
    pub fn to_display(self, value: f64) -> f64 {
        match self {
            TimelineMetric::CacheHitRatio => value * 100.0,
            _ => value,
        }
    }

    /// "62.5%", "1,200 tok/s".
    pub fn display_text(self, value: f64) -> String {
        with_unit(self.to_display(value), self.unit())
    }

    /// The slice's value (stored unit), `None` where the slice has nothing to say (no request
    /// started in it, or none reported cached tokens).
    pub fn value(self, slice: &TimelineSlice, slice_s: f64, stat: Stat) -> Option<f64> {
        match self {
            TimelineMetric::CompletedPerS => Some(slice.completed as f64 / slice_s),
            TimelineMetric::OutputTokS => Some(slice.output_tokens as f64 / slice_s),
            TimelineMetric::Ttft => slice.ttft_s.map(|d| d.get(stat)),
            TimelineMetric::CacheHitRatio => slice.prompt_cache.and_then(|c| c.hit_ratio()),
            TimelineMetric::Errors => Some(slice.errors as f64),
        }
    }
}

/// `(slice start s, value)` of `metric` over `level`'s timeline; empty without one.
pub fn timeline_points(level: &Level, metric: TimelineMetric, stat: Stat) -> Vec<(f64, f64)> {
    let Some(timeline) = &level.timeline else {
        return Vec::new();
    };
    timeline
        .slices
        .iter()
        .filter_map(|s| {
            metric
                .value(s, timeline.slice_s, stat)
                .map(|v| (s.start_s, v))
        })
        .collect()
}

/// Every metric of `level`'s timeline that has points: what a timeline chart of it plots.
pub fn level_timeline(level: &Level, stat: Stat) -> Vec<(TimelineMetric, Vec<(f64, f64)>)> {
    TimelineMetric::ALL
        .into_iter()
        .map(|m| (m, timeline_points(level, m, stat)))
        .filter(|(_, points)| !points.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::level;
    use crate::schema::{PromptCache, Timeline};
    use crate::Distribution;

    #[test]
    fn points_per_slice_in_stored_units() {
        let mut l = level(4, 0.2, 100.0);
        assert!(timeline_points(&l, TimelineMetric::OutputTokS, Stat::Mean).is_empty());
        let slice =
            |start_s, completed, tokens, ttft: Option<f64>, cached: Option<u64>| TimelineSlice {
                start_s,
                completed,
                errors: 1,
                output_tokens: tokens,
                ttft_s: ttft.map(Distribution::constant),
                prompt_cache: cached.map(|cached_tokens| PromptCache {
                    requests: 2,
                    prompt_tokens: 1000,
                    cached_tokens,
                }),
            };
        l.timeline = Some(Timeline {
            slice_s: 10.0,
            slices: vec![
                slice(0.0, 5, 2000, Some(0.3), Some(0)),
                slice(10.0, 20, 5000, None, Some(800)),
            ],
        });
        let points = |m| timeline_points(&l, m, Stat::P90);
        assert_eq!(
            points(TimelineMetric::CompletedPerS),
            [(0.0, 0.5), (10.0, 2.0)]
        );
        assert_eq!(
            points(TimelineMetric::OutputTokS),
            [(0.0, 200.0), (10.0, 500.0)]
        );
        assert_eq!(points(TimelineMetric::Ttft), [(0.0, 0.3)]);
        assert_eq!(
            points(TimelineMetric::CacheHitRatio),
            [(0.0, 0.0), (10.0, 0.8)]
        );
        assert_eq!(points(TimelineMetric::Errors), [(0.0, 1.0), (10.0, 1.0)]);
        assert_eq!(TimelineMetric::CacheHitRatio.display_text(0.8), "80%");
    }
}
