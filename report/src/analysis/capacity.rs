//! How many concurrent requests a series sustains under user-experience thresholds.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::format::format_number;
use super::interpolate::MonotoneCurve;
pub use super::load_mode::LoadUnit;
use super::metric::Metric;
use super::series_points;
use crate::schema::{Limits, Series};
use crate::stats::Stat;

/// Whether a limit is an upper or a lower bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    AtMost,
    AtLeast,
}

/// One limit of [`Limits`] on a figure: what a check reads and a slider sets. (`max_stalls`
/// is not among them: stalls are counted per request, and a level has no statistic of them.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LimitKind {
    Ttft,
    Decode,
    Tpot,
    Itl,
    E2e,
    /// An agentic job's completion time (`Limits::max_job_s`): a bound on jobs, not on a
    /// level's statistic, so not in [`LimitKind::ALL`]; the Agents section's slider sets it.
    Job,
}

impl LimitKind {
    /// In the order breaches are reported in.
    pub const ALL: [LimitKind; 5] = [
        LimitKind::Ttft,
        LimitKind::Decode,
        LimitKind::Tpot,
        LimitKind::Itl,
        LimitKind::E2e,
    ];

    /// Its name in the viewer's URL (`uc.chat.decode=12`, `slo.tpot=0.05`).
    pub fn key(self) -> &'static str {
        match self {
            LimitKind::Ttft => "ttft",
            LimitKind::Decode => "decode",
            LimitKind::Tpot => "tpot",
            LimitKind::Itl => "itl",
            LimitKind::E2e => "e2e",
            LimitKind::Job => "job",
        }
    }

    /// The figure it limits: its label, unit and direction (a job's completion time reads as
    /// an end-to-end latency does, in seconds).
    pub fn metric(self) -> Metric {
        match self {
            LimitKind::Ttft => Metric::Ttft,
            LimitKind::Decode => Metric::DecodeTokS,
            LimitKind::Tpot => Metric::Tpot,
            LimitKind::Itl => Metric::Itl,
            LimitKind::E2e | LimitKind::Job => Metric::E2e,
        }
    }

    /// A minimum speed, a maximum for the rest.
    pub fn bound(self) -> Bound {
        match self {
            LimitKind::Decode => Bound::AtLeast,
            _ => Bound::AtMost,
        }
    }

    /// Its value in `limits` (`None`: not checked).
    pub fn get(self, limits: &Limits) -> Option<f64> {
        let mut limits = *limits;
        *self.slot(&mut limits)
    }

    /// Its field in `limits`.
    pub fn slot(self, limits: &mut Limits) -> &mut Option<f64> {
        match self {
            LimitKind::Ttft => &mut limits.max_ttft_s,
            LimitKind::Decode => &mut limits.min_decode_tok_s,
            LimitKind::Tpot => &mut limits.max_tpot_s,
            LimitKind::Itl => &mut limits.max_itl_s,
            LimitKind::E2e => &mut limits.max_e2e_s,
            LimitKind::Job => &mut limits.max_job_s,
        }
    }
}

impl Limits {
    /// The limits a level's statistic is checked against, in [`LimitKind::ALL`]'s order.
    pub fn limits(&self) -> Vec<(Metric, Bound, f64)> {
        LimitKind::ALL
            .into_iter()
            .filter_map(|kind| Some((kind.metric(), kind.bound(), kind.get(self)?)))
            .collect()
    }
}

/// One limit checked at one level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    pub concurrency: u32,
    pub metric: Metric,
    pub bound: Bound,
    /// Measured value (stored unit); `None` when the level has no value for the metric (for
    /// instance every request failed).
    pub value: Option<f64>,
    pub limit: f64,
}

impl Check {
    /// True when the level has a value and it is within the limit.
    pub fn met(&self) -> bool {
        self.value.is_some_and(|v| meets(v, self.bound, self.limit))
    }

    /// e.g. "TTFT 11.2 s exceeds 8 s", "generation speed 9.1 tok/s is below 10 tok/s", and for a
    /// met limit "generation speed 36 tok/s is above the 10 tok/s minimum", "TTFT 1.72 s is within
    /// the 2 s limit".
    pub fn describe(&self) -> String {
        let name = self.metric.in_sentence();
        let unit = self.metric.unit();
        let limit = format_number(self.metric.to_display(self.limit));
        let Some(v) = self.value else {
            return format!("{name} was not measured");
        };
        let v = format_number(self.metric.to_display(v));
        match (self.met(), self.bound) {
            (false, Bound::AtMost) => format!("{name} {v} {unit} exceeds {limit} {unit}"),
            (false, Bound::AtLeast) => format!("{name} {v} {unit} is below {limit} {unit}"),
            (true, Bound::AtMost) => {
                format!("{name} {v} {unit} is within the {limit} {unit} limit")
            }
            (true, Bound::AtLeast) => {
                format!("{name} {v} {unit} is above the {limit} {unit} minimum")
            }
        }
    }
}

/// One measured level against the thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelVerdict {
    pub concurrency: u32,
    /// Limits not met at this level; empty means within thresholds.
    pub breaches: Vec<Check>,
    /// Limits met at this level, in the same order.
    pub met: Vec<Check>,
    /// True when this level and every lower level meet the thresholds.
    pub counts: bool,
}

/// Capacity estimate between measured levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CapacityEstimate {
    pub concurrency: u32,
    /// False when it is a measured level.
    pub interpolated: bool,
}

/// Capacity of one series under one set of thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Capacity {
    /// Largest measured level such that it and every lower level meet all thresholds.
    pub max_concurrency: Option<u32>,
    /// Highest level measured (0 for a series without levels).
    pub tested_max: u32,
    /// The first limit not met at the first level that breaches.
    pub first_breach: Option<Check>,
    /// Every level, ascending.
    pub rows: Vec<LevelVerdict>,
    /// Largest whole concurrency meeting the thresholds on the monotone curves between
    /// `max_concurrency` and the next measured level; never beyond the measured range.
    pub estimate: Option<CapacityEstimate>,
    /// What the concurrencies count (users for a users-mode series).
    #[serde(default)]
    pub unit: LoadUnit,
}

/// Checks every level of `series` against `thresholds`, reading `stat` of each distribution.
pub fn capacity(series: &Series, thresholds: &Limits, stat: Stat) -> Capacity {
    let limits = thresholds.limits();
    let points: Vec<Vec<(u32, f64)>> = limits
        .iter()
        .map(|&(metric, _, _)| series_points(series, metric, stat))
        .collect();
    let mut rows = Vec::with_capacity(series.levels.len());
    let mut all_within = true;
    for level in &series.levels {
        let (met, breaches): (Vec<Check>, Vec<Check>) = limits
            .iter()
            .zip(&points)
            .map(|(&(metric, bound, limit), pts)| Check {
                concurrency: level.concurrency,
                metric,
                bound,
                value: pts
                    .iter()
                    .find(|(c, _)| *c == level.concurrency)
                    .map(|&(_, v)| v),
                limit,
            })
            .partition(Check::met);
        all_within &= breaches.is_empty();
        rows.push(LevelVerdict {
            concurrency: level.concurrency,
            breaches,
            met,
            counts: all_within,
        });
    }
    let max_concurrency = rows
        .iter()
        .take_while(|r| r.counts)
        .last()
        .map(|r| r.concurrency);
    let breaching = rows.iter().find(|r| !r.counts);
    let first_breach = breaching.and_then(|r| r.breaches.first().copied());
    let estimate = max_concurrency.map(|measured| {
        let interpolated = breaching
            .filter(|r| r.breaches.iter().all(|b| b.value.is_some()))
            .and_then(|r| {
                interpolate_limit(measured, r.concurrency, &limits, &points)
                    .filter(|&n| n > measured)
            });
        match interpolated {
            Some(concurrency) => CapacityEstimate {
                concurrency,
                interpolated: true,
            },
            None => CapacityEstimate {
                concurrency: measured,
                interpolated: false,
            },
        }
    });
    Capacity {
        max_concurrency,
        tested_max: series.levels.last().map_or(0, |l| l.concurrency),
        first_breach,
        rows,
        estimate,
        unit: series.mode.capacity_unit(),
    }
}

/// Whether `value` is within `limit` (a value exactly at it is).
pub fn meets(value: f64, bound: Bound, limit: f64) -> bool {
    match bound {
        Bound::AtMost => value <= limit,
        Bound::AtLeast => value >= limit,
    }
}

/// Largest whole `n` in `(within, breaching)` whose interpolated values meet every limit.
fn interpolate_limit(
    within: u32,
    breaching: u32,
    limits: &[(Metric, Bound, f64)],
    points: &[Vec<(u32, f64)>],
) -> Option<u32> {
    let curves: Vec<MonotoneCurve> = points
        .iter()
        .map(|pts| {
            let xy: Vec<(f64, f64)> = pts.iter().map(|&(c, v)| (f64::from(c), v)).collect();
            MonotoneCurve::new(&xy)
        })
        .collect::<Option<_>>()?;
    (within + 1..breaching)
        .take_while(|&n| {
            limits
                .iter()
                .zip(&curves)
                .all(|(&(_, bound, limit), curve)| {
                    curve
                        .at(f64::from(n))
                        .is_some_and(|e| meets(e.value, bound, limit))
                })
        })
        .last()
}

impl Capacity {
    /// The verdict in the reference reports' words, e.g. "Supports 7 concurrent requests
    /// within accepted thresholds. At 8 concurrent requests, TTFT 11.2 s exceeds 10 s.", "Not
    /// viable even at a single request: TTFT 11.2 s exceeds 8 s.", "Supports all 32 tested
    /// concurrent requests." A users-mode series speaks of users ("Supports 24 simultaneous
    /// users ...").
    pub fn verdict_sentence(&self) -> String {
        let (single, plural, noun) = (self.unit.single(), self.unit.plural(), self.unit.noun());
        let Some(first) = self.rows.first() else {
            return "No levels were measured.".into();
        };
        let Some(estimate) = self.estimate else {
            let at = if first.concurrency == 1 {
                single.to_string()
            } else {
                format!("{} {plural}, the lowest tested", first.concurrency)
            };
            let reasons: Vec<String> = first.breaches.iter().map(Check::describe).collect();
            let mut sentence = format!("Not viable even at {at}: {}.", reasons.join("; "));
            // What still holds there, so a reader sees which limit to work on (reference 003:
            // "speed stays strong (92 tok/s), but TTFT (11.2s) exceeds…").
            if let Some(good) = met_phrase(&first.met) {
                let limitation = match first.breaches.as_slice() {
                    [only] if only.value.is_some() => {
                        format!(", so {} is the limitation", only.metric.in_sentence())
                    }
                    _ => String::new(),
                };
                let _ = write!(sentence, " {}{limitation}.", capitalised(&good));
            }
            return sentence;
        };
        if self.first_breach.is_none() {
            return if self.tested_max == 1 {
                format!("Supports the single tested {noun}.")
            } else {
                format!("Supports all {} tested {plural}.", self.tested_max)
            };
        }
        let mut sentence = if estimate.concurrency == 1 {
            format!("Supports {single} within accepted thresholds")
        } else {
            format!(
                "Supports {} {plural} within accepted thresholds",
                estimate.concurrency
            )
        };
        if let (true, Some(measured), Some(breach)) = (
            estimate.interpolated,
            self.max_concurrency,
            self.first_breach,
        ) {
            let _ = write!(
                sentence,
                " (estimated between measured {measured} and {})",
                breach.concurrency
            );
        }
        sentence.push('.');
        // What sets the limit, as the reports name it: the first threshold the next level misses.
        if let Some(breach) = self.first_breach {
            let _ = write!(
                sentence,
                " At {} {plural}, {}",
                breach.concurrency,
                breach.describe()
            );
            let met = self
                .rows
                .iter()
                .find(|r| r.concurrency == breach.concurrency)
                .and_then(|r| met_phrase(&r.met));
            if let Some(good) = met {
                let _ = write!(sentence, ", while {good}");
            }
            sentence.push('.');
        }
        sentence
    }
}

/// "generation speed 36 tok/s is above the 10 tok/s minimum" (joined with "and" when several).
fn met_phrase(met: &[Check]) -> Option<String> {
    let parts: Vec<String> = met.iter().map(Check::describe).collect();
    (!parts.is_empty()).then(|| parts.join(" and "))
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        // ASCII text: `to_uppercase` would link Unicode case tables into the viewer.
        .map_or_else(String::new, |c| {
            c.to_ascii_uppercase().to_string() + chars.as_str()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::series;
    use crate::schema::LoadMode;

    fn chat(ttft: f64, speed: f64) -> Limits {
        Limits {
            max_ttft_s: Some(ttft),
            min_decode_tok_s: Some(speed),
            ..Limits::default()
        }
    }

    #[test]
    fn interpolates_between_the_last_good_and_first_bad_level() {
        // Secants 1.2, 1.05, 1.25 -> tangents at 4 and 8: 1.15, 1.25. TTFT at 7:
        // 0.15625·6 + 0.046875·4·1.15 + 0.84375·11 − 0.140625·4·1.25 = 9.73125 ≤ 10; 8 is 11.
        let s = series(
            "ctx_8k",
            LoadMode::Peak,
            &[
                (1, 2.7, 94.0),
                (2, 3.9, 70.0),
                (4, 6.0, 50.0),
                (8, 11.0, 36.0),
            ],
        );
        let cap = capacity(&s, &chat(10.0, 10.0), Stat::Mean);
        assert_eq!(cap.max_concurrency, Some(4));
        assert_eq!(cap.tested_max, 8);
        assert_eq!(
            cap.estimate,
            Some(CapacityEstimate {
                concurrency: 7,
                interpolated: true
            })
        );
        let breach = cap.first_breach.unwrap();
        assert_eq!((breach.concurrency, breach.metric), (8, Metric::Ttft));
        assert_eq!(breach.describe(), "TTFT 11 s exceeds 10 s");
        assert_eq!(
            cap.verdict_sentence(),
            "Supports 7 concurrent requests within accepted thresholds (estimated between measured \
             4 and 8). At 8 concurrent requests, TTFT 11 s exceeds 10 s, while generation speed 36 \
             tok/s is above the 10 tok/s minimum."
        );
    }

    #[test]
    fn not_viable_at_a_single_request() {
        let s = series(
            "ctx_32k",
            LoadMode::Peak,
            &[(1, 11.2, 92.0), (3, 21.5, 37.0), (5, 31.6, 23.0)],
        );
        let cap = capacity(&s, &chat(8.0, 15.0), Stat::Mean);
        assert_eq!((cap.max_concurrency, cap.estimate), (None, None));
        assert_eq!(
            cap.verdict_sentence(),
            "Not viable even at a single request: TTFT 11.2 s exceeds 8 s. Generation speed 92 tok/s \
             is above the 15 tok/s minimum, so TTFT is the limitation."
        );
        // Every breach of the lowest level is named.
        let cap = capacity(&s, &chat(8.0, 100.0), Stat::Mean);
        assert_eq!(
            cap.verdict_sentence(),
            "Not viable even at a single request: TTFT 11.2 s exceeds 8 s; generation speed 92 tok/s is below 100 tok/s."
        );
    }

    #[test]
    fn supports_every_tested_level() {
        let s = series(
            "chatbot",
            LoadMode::Peak,
            &[(1, 0.1, 150.0), (8, 0.2, 140.0), (32, 0.9, 80.0)],
        );
        let cap = capacity(&s, &chat(2.0, 30.0), Stat::Mean);
        assert_eq!(cap.max_concurrency, Some(32));
        assert_eq!(
            cap.estimate,
            Some(CapacityEstimate {
                concurrency: 32,
                interpolated: false
            })
        );
        assert_eq!(
            cap.verdict_sentence(),
            "Supports all 32 tested concurrent requests."
        );
    }

    #[test]
    fn users_series_speak_of_users() {
        let s = series(
            "chat_sessions",
            LoadMode::Users,
            &[(1, 0.1, 150.0), (8, 0.2, 140.0), (32, 3.0, 80.0)],
        );
        let cap = capacity(&s, &chat(2.0, 30.0), Stat::Mean);
        assert_eq!(cap.unit, LoadUnit::Users);
        let verdict = cap.verdict_sentence();
        assert!(
            verdict.starts_with("Supports ")
                && verdict.contains(" simultaneous users within accepted thresholds (estimated between measured 8 and 32).")
                && verdict.contains("At 32 simultaneous users, TTFT 3 s exceeds 2 s"),
            "{verdict}"
        );
        let alone = capacity(&s, &chat(0.05, 30.0), Stat::Mean);
        assert!(alone
            .verdict_sentence()
            .starts_with("Not viable even at a single user: TTFT"));
        let all = capacity(&s, &chat(5.0, 30.0), Stat::Mean);
        assert_eq!(
            all.verdict_sentence(),
            "Supports all 32 tested simultaneous users."
        );
    }

    #[test]
    fn a_level_after_a_breach_does_not_count() {
        let s = series(
            "chatbot",
            LoadMode::Peak,
            &[(1, 0.5, 100.0), (2, 5.0, 90.0), (4, 0.5, 80.0)],
        );
        let cap = capacity(&s, &chat(1.0, 10.0), Stat::Mean);
        assert_eq!(cap.max_concurrency, Some(1));
        let counted: Vec<bool> = cap.rows.iter().map(|r| r.counts).collect();
        assert_eq!(counted, [true, false, false]);
        assert!(cap.rows[2].breaches.is_empty());
    }

    #[test]
    fn end_to_end_limit_for_code_completion() {
        // Reference: E2E 1720 ms at 1, 2929 ms at 3 -> capacity 1. With decode d,
        // e2e = ttft + 255 / d; pick ttft so e2e lands on the reference values.
        let s = series(
            "code_completion",
            LoadMode::Peak,
            &[(1, 1.72 - 255.0 / 96.0 + 1.0, 96.0)],
        );
        let e2e = s.levels[0].metrics.e2e_s.unwrap().mean;
        let limit = Limits {
            max_e2e_s: Some(2.0),
            ..Limits::default()
        };
        let cap = capacity(&s, &limit, Stat::Mean);
        assert!((e2e - 2.72).abs() < 1e-9);
        assert_eq!(
            cap.verdict_sentence(),
            "Not viable even at a single request: end-to-end latency 2.72 s exceeds 2 s."
        );
        let within = Limits {
            max_e2e_s: Some(3.0),
            ..Limits::default()
        };
        assert_eq!(
            capacity(&s, &within, Stat::Mean).verdict_sentence(),
            "Supports the single tested request."
        );
    }

    #[test]
    fn interpolation_that_finds_nothing_keeps_the_measured_level() {
        // E2E 1.72 at 1 and 2.929 at 3: the curve at 2 is 2.34 > 2, so capacity is 1, measured.
        let mut s = series(
            "code_completion",
            LoadMode::Peak,
            &[(1, 0.1, 100.0), (3, 0.1, 100.0), (5, 0.1, 100.0)],
        );
        for (level, e2e) in s.levels.iter_mut().zip([1.72, 2.929, 3.879]) {
            level.metrics.e2e_s = Some(crate::Distribution::constant(e2e));
        }
        let limit = Limits {
            max_e2e_s: Some(2.0),
            ..Limits::default()
        };
        let cap = capacity(&s, &limit, Stat::Mean);
        assert_eq!(
            cap.estimate,
            Some(CapacityEstimate {
                concurrency: 1,
                interpolated: false
            })
        );
        assert_eq!(
            cap.verdict_sentence(),
            "Supports a single request within accepted thresholds. At 3 concurrent requests, \
             end-to-end latency 2.93 s exceeds 2 s."
        );
    }

    #[test]
    fn itl_limits_are_described_in_milliseconds() {
        let s = series("agentic", LoadMode::Peak, &[(1, 0.5, 1.0 / 0.0758)]);
        let limit = Limits {
            max_itl_s: Some(0.070),
            ..Limits::default()
        };
        assert_eq!(
            capacity(&s, &limit, Stat::Mean).verdict_sentence(),
            "Not viable even at a single request: ITL 75.8 ms exceeds 70 ms."
        );
        let with_ttft = Limits {
            max_ttft_s: Some(1.0),
            ..limit
        };
        assert_eq!(
            capacity(&s, &with_ttft, Stat::Mean).verdict_sentence(),
            "Not viable even at a single request: ITL 75.8 ms exceeds 70 ms. TTFT 0.5 s is within \
             the 1 s limit, so ITL is the limitation."
        );
    }

    #[test]
    fn a_missing_metric_is_a_breach() {
        let mut s = series("chatbot", LoadMode::Peak, &[(2, 0.5, 50.0)]);
        s.levels[0].metrics.ttft_s = None;
        let cap = capacity(&s, &chat(1.0, 10.0), Stat::Mean);
        assert_eq!(
            cap.verdict_sentence(),
            "Not viable even at 2 concurrent requests, the lowest tested: TTFT was not measured. \
             Generation speed 50 tok/s is above the 10 tok/s minimum."
        );
    }

    #[test]
    fn no_thresholds_and_no_levels() {
        let s = series("chatbot", LoadMode::Peak, &[(1, 9.0, 1.0), (2, 99.0, 0.5)]);
        let cap = capacity(&s, &Limits::default(), Stat::Mean);
        assert_eq!(cap.max_concurrency, Some(2));
        let empty = series("chatbot", LoadMode::Peak, &[]);
        let cap = capacity(&empty, &chat(1.0, 1.0), Stat::Mean);
        assert_eq!((cap.tested_max, cap.estimate), (0, None));
        assert_eq!(cap.verdict_sentence(), "No levels were measured.");
    }

    #[test]
    fn the_statistic_chooses_the_figure() {
        let mut s = series("chatbot", LoadMode::Peak, &[(1, 1.0, 50.0)]);
        s.levels[0].metrics.ttft_s = crate::Distribution::from_samples(&[0.5, 1.0, 4.0]);
        let limit = chat(3.0, 10.0);
        assert_eq!(capacity(&s, &limit, Stat::P50).max_concurrency, Some(1));
        assert_eq!(capacity(&s, &limit, Stat::P99).max_concurrency, None);
    }
}
