//! A level over time: the series a timeline chart draws, one point per slice of
//! [`crate::schema::Timeline`], so warm-up, drift and a filling cache show.

use schemars::JsonSchema;
use serde::Serialize;

use super::format::with_unit;
use super::metric::Metric;
use crate::schema::{Level, LoadMode, Report, Series, TimelineSlice};
use crate::stats::Stat;

// Its words (label, unit, direction) are its `Metric`'s.
/// A figure read from each slice of a level's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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

    /// The figure it is: its label, unit and direction.
    pub fn metric(self) -> Metric {
        match self {
            TimelineMetric::CompletedPerS => Metric::CompletedPerS,
            TimelineMetric::OutputTokS => Metric::OutputTokS,
            TimelineMetric::Ttft => Metric::Ttft,
            TimelineMetric::CacheHitRatio => Metric::CacheHitRatio,
            TimelineMetric::Errors => Metric::Errors,
        }
    }

    pub fn label(self) -> &'static str {
        self.metric().label()
    }

    /// Display unit (after [`TimelineMetric::to_display`]).
    pub fn unit(self) -> &'static str {
        self.metric().unit()
    }

    /// Stored value to displayed (the ratio in percent).
    pub fn to_display(self, value: f64) -> f64 {
        self.metric().to_display(value)
    }

    /// "62.5%", "1,200 tok/s".
    pub fn display_text(self, value: f64) -> String {
        self.metric().display_text(value)
    }

    /// The slice's value (stored unit), `None` where the slice has nothing to say (no request
    /// started in it, or none reported cached tokens).
    pub fn value(self, slice: &TimelineSlice, slice_s: f64, stat: Stat) -> Option<f64> {
        match self {
            TimelineMetric::CompletedPerS => Some(slice.completed as f64 / slice_s),
            TimelineMetric::OutputTokS => Some(slice.output_tokens as f64 / slice_s),
            TimelineMetric::Ttft => slice.ttft_s.and_then(|d| d.get(stat)),
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

/// A level that has a timeline, as the level picker lists it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TimelineLevel {
    /// Stable within a report and across reports of one suite: `<scenario>.<mode>[.<cache>].<n>`,
    /// `n` the level's load (peak, burst, users) or its position in its series (1-based).
    pub key: String,
    /// "Chat · 16 users · caching allowed", "Trace sample-mooncake · 4× speed".
    pub label: String,
    /// A session or trace level (listed first).
    pub is_session: bool,
}

/// Every level of `report` with a timeline: session and trace levels first, then the others,
/// each group in report order.
pub fn timeline_levels(report: &Report) -> Vec<TimelineLevel> {
    let mut levels: Vec<TimelineLevel> = report
        .series
        .iter()
        .flat_map(|series| {
            let name = report
                .scenarios
                .iter()
                .find(|s| s.id == series.scenario)
                .map_or(series.scenario.as_str(), |s| s.name.as_str());
            series
                .levels
                .iter()
                .enumerate()
                .filter(|(_, l)| l.timeline.is_some())
                .map(move |(i, level)| TimelineLevel {
                    key: level_key(series, i),
                    label: level_label(name, series, level),
                    is_session: matches!(
                        series.mode,
                        LoadMode::Users | LoadMode::Sessions | LoadMode::Trace
                    ),
                })
        })
        .collect();
    crate::order::sort_by_key(&mut levels, |l| !l.is_session);
    levels
}

/// The level the timeline shows before the reader picks one: the heaviest of the first session
/// or trace series (where warm-up and cache fill show most), else the first level listed.
pub fn default_timeline_level(report: &Report) -> Option<String> {
    let session = report.series.iter().find(|s| {
        matches!(
            s.mode,
            LoadMode::Users | LoadMode::Sessions | LoadMode::Trace
        ) && s.levels.iter().any(|l| l.timeline.is_some())
    });
    if let Some(series) = session {
        let (i, _) = series
            .levels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.timeline.is_some())
            .max_by_key(|(_, l)| l.concurrency)?;
        return Some(level_key(series, i));
    }
    timeline_levels(report).into_iter().next().map(|l| l.key)
}

/// The level of `report` that `key` ([`TimelineLevel::key`]) names.
pub fn level_by_key<'a>(report: &'a Report, key: &str) -> Option<&'a Level> {
    report.series.iter().find_map(|series| {
        (0..series.levels.len())
            .find(|&i| level_key(series, i) == key)
            .map(|i| &series.levels[i])
    })
}

fn level_key(series: &Series, index: usize) -> String {
    let n = if series.mode.is_open_loop() {
        index as u32 + 1
    } else {
        series.levels[index].concurrency
    };
    let cache = series
        .cache
        .map_or(String::new(), |c| format!(".{}", c.id()));
    format!("{}.{}{cache}.{n}", series.scenario, series.mode.label())
}

fn level_label(scenario_name: &str, series: &Series, level: &Level) -> String {
    let load = series.mode.describe_level(level);
    let mut label = format!("{scenario_name} · {load}");
    if let Some(cache) = series.cache {
        label.push_str(" · ");
        label.push_str(cache.label());
    }
    label
}

/// "Over 16 s in 2 s slices: output throughput 800–1,900 tok/s, TTFT 0.05–0.4 s, cache-hit
/// ratio 0–88%." The range of each metric across the level's slices; `None` without a timeline.
pub fn timeline_sentence(level: &Level, stat: Stat) -> Option<String> {
    let timeline = level.timeline.as_ref()?;
    let end = timeline.slices.last()?.start_s + timeline.slice_s;
    let ranges: Vec<String> = [
        TimelineMetric::OutputTokS,
        TimelineMetric::Ttft,
        TimelineMetric::CacheHitRatio,
    ]
    .into_iter()
    .filter_map(|m| {
        let points = timeline_points(level, m, stat);
        let (lo, hi) = points.iter().fold(None, |acc: Option<(f64, f64)>, p| {
            Some(acc.map_or((p.1, p.1), |(lo, hi)| (lo.min(p.1), hi.max(p.1))))
        })?;
        let (lo_text, hi_text) = (m.display_text(lo), m.display_text(hi));
        let span = if lo_text == hi_text {
            lo_text
        } else {
            format!("{}–{hi_text}", with_unit(m.to_display(lo), ""))
        };
        Some(format!("{} {span}", m.label().to_ascii_lowercase()))
    })
    .collect();
    (!ranges.is_empty()).then(|| {
        format!(
            "Over {} in {} slices: {}.",
            with_unit(end, "s"),
            with_unit(timeline.slice_s, "s"),
            ranges.join(", ")
        )
    })
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

    /// Levels with a timeline: session and trace levels first, keys that find them again,
    /// the heaviest users level by default, and the sentence of the slices' ranges.
    #[test]
    fn levels_with_a_timeline_are_listed_keyed_and_summed_up() {
        use crate::analysis::testing::{report, series};
        use crate::schema::CacheUse;
        let with_timeline = |mut s: crate::schema::Series| {
            for l in &mut s.levels {
                l.timeline = Some(Timeline {
                    slice_s: 2.0,
                    slices: vec![
                        TimelineSlice {
                            start_s: 0.0,
                            completed: 2,
                            errors: 0,
                            output_tokens: 200,
                            ttft_s: Some(Distribution::constant(0.5)),
                            prompt_cache: Some(PromptCache {
                                requests: 2,
                                prompt_tokens: 100,
                                cached_tokens: 0,
                            }),
                        },
                        TimelineSlice {
                            start_s: 2.0,
                            completed: 4,
                            errors: 0,
                            output_tokens: 1000,
                            ttft_s: Some(Distribution::constant(0.5)),
                            prompt_cache: Some(PromptCache {
                                requests: 4,
                                prompt_tokens: 100,
                                cached_tokens: 88,
                            }),
                        },
                    ],
                });
            }
            s
        };
        let mut users = with_timeline(series(
            "chat",
            LoadMode::Users,
            &[(1, 0.1, 100.0), (16, 0.2, 90.0)],
        ));
        users.cache = Some(CacheUse::Allowed);
        let mut r = report(
            &["plain", "chat"],
            vec![
                with_timeline(series("plain", LoadMode::Peak, &[(4, 0.1, 100.0)])),
                users,
            ],
        );
        r.scenarios[1].name = "Chat".into();
        let levels = timeline_levels(&r);
        let listed: Vec<(&str, &str)> = levels
            .iter()
            .map(|l| (l.key.as_str(), l.label.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("chat.users.allowed.1", "Chat · 1 user · caching allowed"),
                ("chat.users.allowed.16", "Chat · 16 users · caching allowed"),
                ("plain.peak.4", "Scenario plain · 4 concurrent"),
            ]
        );
        assert_eq!(
            default_timeline_level(&r).as_deref(),
            Some("chat.users.allowed.16")
        );
        let level = level_by_key(&r, "chat.users.allowed.16").unwrap();
        assert_eq!(level.concurrency, 16);
        assert!(level_by_key(&r, "chat.users.defeated.16").is_none());
        assert_eq!(
            timeline_sentence(level, Stat::Mean).unwrap(),
            "Over 4 s in 2 s slices: output throughput 100–500 tok/s, time to first token 0.5 s, \
             cache-hit ratio 0–88%."
        );
        // Only a peak level: it is the default.
        r.series.remove(1);
        assert_eq!(default_timeline_level(&r).as_deref(), Some("plain.peak.4"));
        assert!(timeline_sentence(&level_for_none(), Stat::Mean).is_none());
    }

    fn level_for_none() -> Level {
        level(1, 0.1, 100.0)
    }
}
