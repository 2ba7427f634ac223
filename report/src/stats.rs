//! Summary statistics of raw samples. The collector reduces samples here and nowhere else.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Summary of one metric's samples at one level. The collector writes every figure; a report
/// imported from another tool has the figures that tool wrote (since 1.3.0 all but the mean and
/// the median may be absent: vLLM's summary has no p90, AIPerf's no p99.9), and a figure it
/// lacks stays absent rather than being made up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Distribution {
    /// Number of samples; absent when the tool that measured them did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    pub mean: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Sample standard deviation (n - 1); 0 for a single sample. (An imported tool's own
    /// figure may be the population deviation: its report's methodology says so.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    pub p50: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999: Option<f64>,
}

/// A percentile needs at least this many samples beyond it to be more than indicative.
pub const SAMPLES_BEYOND_A_PERCENTILE: f64 = 10.0;

/// Which figure of a distribution to read; the viewer's percentile selector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    #[default]
    Mean,
    P50,
    P90,
    P95,
    P99,
    P999,
    Min,
    Max,
}

impl Stat {
    /// The selectable statistics, in display order.
    pub const ALL: [Stat; 8] = [
        Stat::Mean,
        Stat::P50,
        Stat::P90,
        Stat::P95,
        Stat::P99,
        Stat::P999,
        Stat::Min,
        Stat::Max,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P95 => "p95",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::Min => "min",
            Stat::Max => "max",
        }
    }

    /// The percentile this statistic is, 0..100; `None` for the mean, minimum and maximum.
    pub fn percentile(self) -> Option<f64> {
        match self {
            Stat::P50 => Some(50.0),
            Stat::P90 => Some(90.0),
            Stat::P95 => Some(95.0),
            Stat::P99 => Some(99.0),
            Stat::P999 => Some(99.9),
            Stat::Mean | Stat::Min | Stat::Max => None,
        }
    }

    /// Whether this statistic of `count` samples is only indicative: a percentile with fewer
    /// than [`SAMPLES_BEYOND_A_PERCENTILE`] samples beyond it (p99 of fewer than 1,000
    /// samples, p90 of fewer than 100) rests on a handful of requests and moves a lot from run
    /// to run. The mean, minimum and maximum are what they are.
    pub fn is_indicative(self, count: u64) -> bool {
        self.percentile().is_some_and(|p| {
            let beyond = count as f64 * (100.0 - p) / 100.0;
            // With a margin: 100 - 99.9 is not exactly 0.1, and p99.9 of 10,000 samples has 10
            // beyond it.
            beyond < SAMPLES_BEYOND_A_PERCENTILE - 1e-6
        })
    }

    /// Parses the label written by [`Stat::label`] (and "p999").
    pub fn parse(s: &str) -> Option<Stat> {
        Stat::ALL
            .into_iter()
            .find(|stat| stat.label() == s)
            .or((s == "p999").then_some(Stat::P999))
    }
}

impl Distribution {
    /// Summarises samples; `None` when there are no finite samples. Non-finite values are dropped
    /// because one NaN would poison every figure.
    pub fn from_samples(samples: &[f64]) -> Option<Distribution> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        // Unstable: equal samples are the same bits, and the stable sort's code would weigh
        // tens of kilobytes in the viewer's wasm.
        sorted.sort_unstable_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Distribution {
            count: Some(n as u64),
            mean,
            min: Some(sorted[0]),
            max: Some(sorted[n - 1]),
            stddev: Some(stddev),
            p50: percentile_sorted(&sorted, 50.0),
            p90: Some(percentile_sorted(&sorted, 90.0)),
            p95: Some(percentile_sorted(&sorted, 95.0)),
            p99: Some(percentile_sorted(&sorted, 99.0)),
            p999: Some(percentile_sorted(&sorted, 99.9)),
        })
    }

    /// Reads one statistic; `None` when the distribution lacks it (an imported tool's summary
    /// without that percentile).
    pub fn get(&self, stat: Stat) -> Option<f64> {
        match stat {
            Stat::Mean => Some(self.mean),
            Stat::P50 => Some(self.p50),
            Stat::P90 => self.p90,
            Stat::P95 => self.p95,
            Stat::P99 => self.p99,
            Stat::P999 => self.p999,
            Stat::Min => self.min,
            Stat::Max => self.max,
        }
    }

    /// The figures present, in ascending order of rank (min, p50 … p99.9, max), for checks that
    /// they are ordered.
    pub fn ranked(&self) -> Vec<f64> {
        [
            self.min,
            Some(self.p50),
            self.p90,
            self.p95,
            self.p99,
            self.p999,
            self.max,
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// A distribution of one known value (hand-made samples and tests).
    pub fn constant(value: f64) -> Distribution {
        Distribution {
            count: Some(1),
            mean: value,
            min: Some(value),
            max: Some(value),
            stddev: Some(0.0),
            p50: value,
            p90: Some(value),
            p95: Some(value),
            p99: Some(value),
            p999: Some(value),
        }
    }
}

/// Percentile `p` (0..=100) of ascending `sorted` samples by linear interpolation between closest
/// ranks (the definition numpy, AIPerf and guidellm use by default), so our figures compare.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "percentile of no samples");
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// [`percentile_sorted`] of `samples` in any order, which it reorders: the closest ranks are
/// selected (linear time) rather than the whole sorted, for figures recomputed at every move of
/// a slider (goodput's saturation and jitter, judged again under each SLO).
pub fn percentile_unsorted(samples: &mut [f64], p: f64) -> f64 {
    assert!(!samples.is_empty(), "percentile of no samples");
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (samples.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    let (_, &mut low, above) = samples.select_nth_unstable_by(lo, f64::total_cmp);
    let high = if hi == lo {
        low
    } else {
        // The next rank up is the least of those above the selected one.
        above.iter().copied().min_by(f64::total_cmp).unwrap_or(low)
    };
    low + (high - low) * frac
}

// The result of `confidence_interval_95`, stored in reports (`TrialSummary`): it lives here so
// that the statistics do not depend on the schema (the schema imports them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfidenceInterval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// Mean and 95% confidence interval (Student t) of trial means. `None` for fewer than two values.
pub fn confidence_interval_95(values: &[f64]) -> Option<ConfidenceInterval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = student_t_975(n - 1) * (var / n as f64).sqrt();
    Some(ConfidenceInterval {
        mean,
        low: mean - half,
        high: mean + half,
    })
}

/// Two-sided 95% critical value of Student's t for `df` degrees of freedom.
fn student_t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    TABLE.get(df.saturating_sub(1)).copied().unwrap_or(1.960)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_hand_computed_values() {
        // 1..=10: rank for p90 = 0.9 * 9 = 8.1 -> 9 + 0.1 * (10 - 9) = 9.1
        let samples: Vec<f64> = (1..=10).map(f64::from).collect();
        let d = Distribution::from_samples(&samples).unwrap();
        assert_eq!(d.count, Some(10));
        assert_eq!(d.mean, 5.5);
        assert_eq!(d.p50, 5.5);
        assert!((d.p90.unwrap() - 9.1).abs() < 1e-12);
        assert!((d.p99.unwrap() - 9.91).abs() < 1e-12);
        assert!((d.p999.unwrap() - 9.991).abs() < 1e-12);
        assert!((d.stddev.unwrap() - 3.0276503540974917).abs() < 1e-12);
        assert_eq!((d.min, d.max), (Some(1.0), Some(10.0)));
    }

    #[test]
    fn unsorted_input_and_non_finite_values() {
        let d = Distribution::from_samples(&[3.0, f64::NAN, 1.0, 2.0, f64::INFINITY]).unwrap();
        assert_eq!(d.count, Some(3));
        assert_eq!(d.p50, 2.0);
        assert!(Distribution::from_samples(&[f64::NAN]).is_none());
        assert!(Distribution::from_samples(&[]).is_none());
    }

    #[test]
    fn single_sample_has_zero_stddev() {
        let d = Distribution::from_samples(&[0.25]).unwrap();
        assert_eq!(d, Distribution::constant(0.25));
    }

    /// p99 needs 1,000 samples, p90 100, p50 20; the mean never is indicative.
    #[test]
    fn percentiles_on_few_samples_are_indicative() {
        assert!(Stat::P99.is_indicative(999));
        assert!(!Stat::P99.is_indicative(1_000));
        assert!(Stat::P90.is_indicative(99));
        assert!(!Stat::P90.is_indicative(100));
        assert!(Stat::P50.is_indicative(19));
        assert!(!Stat::P50.is_indicative(20));
        assert!(Stat::P999.is_indicative(9_999));
        assert!(!Stat::P999.is_indicative(10_000));
        assert!(!Stat::Mean.is_indicative(1));
        assert!(!Stat::Max.is_indicative(1));
    }

    #[test]
    fn stat_labels_round_trip() {
        for stat in Stat::ALL {
            assert_eq!(Stat::parse(stat.label()), Some(stat));
        }
        assert_eq!(Stat::parse("p999"), Some(Stat::P999));
        assert_eq!(Stat::parse("p42"), None);
    }

    proptest::proptest! {
        #[test]
        fn percentiles_are_ordered_and_the_mean_within_range(
            samples in proptest::collection::vec(-1e9f64..1e9, 1..300)
        ) {
            let d = Distribution::from_samples(&samples).unwrap();
            let ordered = d.ranked();
            proptest::prop_assert_eq!(ordered.len(), 7);
            proptest::prop_assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "{d:?}");
            // Summing can round the mean a hair outside [min, max] when all samples are equal.
            let (min, max) = (d.min.unwrap(), d.max.unwrap());
            let slack = 1e-9 * max.abs().max(min.abs());
            proptest::prop_assert!(min - slack <= d.mean && d.mean <= max + slack, "{d:?}");
            proptest::prop_assert_eq!(d.count, Some(samples.len() as u64));
        }
    }

    proptest::proptest! {
        /// Selecting the closest ranks gives the very bits sorting does, duplicates included.
        #[test]
        fn selected_percentiles_are_the_sorted_ones(
            samples in proptest::collection::vec(-1e3f64..1e3, 1..200),
            repeats in 0usize..4,
            p in 0.0f64..=100.0,
        ) {
            let mut samples = samples;
            let first = samples[0];
            samples.extend(std::iter::repeat_n(first, repeats));
            let mut sorted = samples.clone();
            sorted.sort_by(f64::total_cmp);
            for p in [p, 0.0, 50.0, 90.0, 100.0] {
                let want = percentile_sorted(&sorted, p);
                let got = percentile_unsorted(&mut samples.clone(), p);
                proptest::prop_assert_eq!(got.to_bits(), want.to_bits(), "p{}", p);
            }
        }
    }

    #[test]
    fn confidence_interval_of_known_values() {
        // mean 2, sd 1, n 3: half width = 4.303 * 1 / sqrt(3) = 2.4843
        let ci = confidence_interval_95(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(ci.mean, 2.0);
        assert!((ci.high - 2.0 - 2.484339).abs() < 1e-5);
        assert!(confidence_interval_95(&[1.0]).is_none());
    }
}
