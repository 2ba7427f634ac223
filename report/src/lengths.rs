//! Drawing token lengths from a [`LengthDistribution`]: seeded and reproducible, and close to
//! the distribution asked even for a few hundred requests. `k` lengths are the distribution's
//! quantiles at the middles of `k` equal strata (stratified sampling: the `k` lengths follow
//! the distribution as closely as `k` whole numbers can), in an order shuffled by the seed, so
//! the first requests of a level are already a fair mix. The run's requests take them in turn.
//! Pure: the collector draws with it, and the report's warnings compare what a level measured
//! with [`LengthDistribution::moments`].

use serde::Serialize;

use crate::schema::{
    LengthDistribution, LengthPlan, Level, PromptSource, Report, RequestColumns, SampleOrder,
    TICK_S,
};
use crate::stats::percentile_sorted;

/// Strata of the fine grid [`LengthDistribution::moments`] averages over.
const MOMENT_STRATA: usize = 8192;

impl LengthDistribution {
    /// `k` lengths drawn from the distribution, in the seed's order; `None` for `dataset`,
    /// whose lengths the prompt file says.
    pub fn draw(&self, k: usize, seed: u64) -> Option<Vec<u32>> {
        let mut lengths: Vec<u32> = (0..k)
            .map(|i| self.length_at((i as f64 + 0.5) / k as f64))
            .collect::<Option<_>>()?;
        shuffle(&mut lengths, seed);
        Some(lengths)
    }

    /// The mean and standard deviation of the lengths the distribution draws (whole tokens,
    /// clipped), as asked; `None` for `dataset`.
    pub fn moments(&self) -> Option<(f64, f64)> {
        let values: Vec<f64> = (0..MOMENT_STRATA)
            .map(|i| {
                self.length_at((i as f64 + 0.5) / MOMENT_STRATA as f64)
                    .map(f64::from)
            })
            .collect::<Option<_>>()?;
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        Some((mean, var.sqrt()))
    }

    /// The length at quantile `u` (0 < u < 1): whole tokens, at least 1, within the bounds.
    fn length_at(&self, u: f64) -> Option<u32> {
        let (value, min, max) = match *self {
            LengthDistribution::Fixed { tokens } => return Some(tokens.max(1)),
            LengthDistribution::Uniform { min, max } => {
                let (lo, hi) = (min.min(max), min.max(max));
                let span = f64::from(hi - lo) + 1.0;
                let value = f64::from(lo) + (u * span).floor();
                (value, Some(lo), Some(hi))
            }
            LengthDistribution::Normal {
                mean,
                stddev,
                min,
                max,
            } => (mean + stddev * normal_quantile(u), min, max),
            LengthDistribution::Lognormal {
                mean,
                stddev,
                min,
                max,
            } => {
                let (mu, sigma) = lognormal_parameters(mean, stddev);
                ((mu + sigma * normal_quantile(u)).exp(), min, max)
            }
            LengthDistribution::Dataset => return None,
        };
        let lo = f64::from(min.unwrap_or(1).max(1));
        let hi = f64::from(max.unwrap_or(u32::MAX));
        let value = if value.is_finite() { value.round() } else { hi };
        Some(value.clamp(lo, hi.max(lo)) as u32)
    }

    /// What is wrong with the distribution's parameters, if anything.
    pub fn problem(&self) -> Option<String> {
        let bounds = |min: Option<u32>, max: Option<u32>| match (min, max) {
            (Some(lo), Some(hi)) if lo > hi => Some(format!("min {lo} is above max {hi}")),
            (_, Some(0)) => Some("max must be at least 1".into()),
            _ => None,
        };
        match *self {
            LengthDistribution::Fixed { tokens: 0 } => Some("tokens must be at least 1".into()),
            LengthDistribution::Uniform { min, max } if min == 0 || min > max => Some(format!(
                "uniform needs 1 <= min <= max (min {min}, max {max})"
            )),
            LengthDistribution::Normal {
                mean,
                stddev,
                min,
                max,
            }
            | LengthDistribution::Lognormal {
                mean,
                stddev,
                min,
                max,
            } => {
                if !(mean.is_finite() && mean >= 1.0 && stddev.is_finite() && stddev >= 0.0) {
                    Some(format!(
                        "needs a mean of at least 1 and a non-negative stddev (mean {mean}, stddev {stddev})"
                    ))
                } else {
                    bounds(min, max)
                }
            }
            _ => None,
        }
    }

    /// "uniform 100–900", "normal mean 512, stddev 128", "512", "as the dataset says".
    pub fn text(&self) -> String {
        let clip = |min: Option<u32>, max: Option<u32>| match (min, max) {
            (None, None) => String::new(),
            (lo, hi) => format!(
                " (clipped to {}–{})",
                lo.unwrap_or(1),
                hi.map_or("∞".to_string(), |h| h.to_string())
            ),
        };
        match *self {
            LengthDistribution::Fixed { tokens } => tokens.to_string(),
            LengthDistribution::Uniform { min, max } => format!("uniform {min}–{max}"),
            LengthDistribution::Normal {
                mean,
                stddev,
                min,
                max,
            } => format!("normal mean {mean}, stddev {stddev}{}", clip(min, max)),
            LengthDistribution::Lognormal {
                mean,
                stddev,
                min,
                max,
            } => format!("lognormal mean {mean}, stddev {stddev}{}", clip(min, max)),
            LengthDistribution::Dataset => "as the prompt file says".into(),
        }
    }
}

impl LengthPlan {
    /// "input uniform 32–256, output normal mean 24, stddev 6 (clipped to 4–∞), enforced".
    pub fn text(&self) -> String {
        format!(
            "input {}, output {}, {}",
            self.input.text(),
            self.output.text(),
            self.output_stop.label()
        )
    }
}

impl PromptSource {
    /// "ShareGPT sharegpt.json (sha256 dd6995c58c96), 16 of 40 prompts, shuffled (seed 7),
    /// filters input ≤ 400".
    pub fn text(&self) -> String {
        let mut text = format!(
            "{} {} (sha256 {}), {} of {} prompts",
            self.kind.label(),
            self.file,
            self.sha256.get(..12).unwrap_or(&self.sha256),
            self.used,
            self.available
        );
        if self.order == SampleOrder::Shuffle {
            text.push_str(&format!(", shuffled (seed {})", self.seed));
        }
        if self.replacement {
            text.push_str(", with replacement");
        }
        if !self.filters.is_empty() {
            text.push_str(&format!(", filters {}", self.filters.text()));
        }
        if self.filtered_out > 0 {
            text.push_str(&format!(" ({} set aside)", self.filtered_out));
        }
        text
    }
}

/// What lengths a level's requests had: their mean, spread and the 5th to 95th percentile, as
/// the measurements table and `infermeter summary` state them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub count: u64,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for one length.
    pub stddev: f64,
    pub p5: f64,
    pub p50: f64,
    pub p95: f64,
}

impl Spread {
    /// The spread of `lengths`; `None` for none.
    pub fn of(lengths: impl IntoIterator<Item = u32>) -> Option<Spread> {
        let mut sorted: Vec<f64> = lengths.into_iter().map(f64::from).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_unstable_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let mean = sorted.iter().sum::<f64>() / n;
        let stddev = if sorted.len() > 1 {
            (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(Spread {
            count: sorted.len() as u64,
            mean,
            stddev,
            p5: percentile_sorted(&sorted, 5.0),
            p50: percentile_sorted(&sorted, 50.0),
            p95: percentile_sorted(&sorted, 95.0),
        })
    }

    /// "mean 512 (p5–p95 130–890)", rounded to whole tokens.
    pub fn text(&self) -> String {
        format!(
            "mean {:.0} (p5–p95 {:.0}–{:.0})",
            self.mean, self.p5, self.p95
        )
    }

    /// Whether these lengths miss a distribution of mean `mean` and standard deviation
    /// `stddev`: a mean more than 5% (and 3 standard errors) away, or, over 30 lengths and
    /// more, a spread more than 25% away. A level of a few requests cannot follow a wide
    /// distribution closely, and is allowed for.
    pub fn misses(&self, mean: f64, stddev: f64) -> bool {
        let n = self.count as f64;
        let mean_slack = (0.05 * mean).max(3.0 * stddev / n.sqrt()).max(1.0);
        let spread_off = self.count >= 30
            && (self.stddev - stddev).abs()
                > (0.25 * stddev)
                    .max(3.0 * stddev / (2.0 * n).sqrt())
                    .max(2.0);
        (self.mean - mean).abs() > mean_slack || spread_off
    }
}

/// The lengths a level's successful requests had, where its scenario asked lengths of their
/// own (a prompt file or drawn lengths): what the measurements table, `infermeter summary` and
/// the viewer's length charts read. From the level's per-request columns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LevelLengths {
    pub input: Spread,
    pub output: Spread,
}

impl LevelLengths {
    /// `None` for a level of fixed lengths (no input column) or without a successful request.
    pub fn of(level: &Level) -> Option<LevelLengths> {
        let requests = LevelLengths::requests(level);
        Some(LevelLengths {
            input: Spread::of(requests.iter().map(|r| r.input))?,
            output: Spread::of(requests.iter().map(|r| r.output))?,
        })
    }

    /// "input mean 144 (p5–p95 41–240), output mean 24 (p5–p95 16–33)".
    pub fn text(&self) -> String {
        format!("input {}, output {}", self.input.text(), self.output.text())
    }

    /// The level's successful requests, each with its lengths and latencies, in the order
    /// sent; none for a level of fixed lengths.
    pub fn requests(level: &Level) -> Vec<RequestLengths> {
        let Some(columns) = level.per_request.as_ref() else {
            return Vec::new();
        };
        if columns.input_tokens.len() != columns.len() {
            return Vec::new();
        }
        (0..columns.len())
            .filter(|&i| columns.status[i] == RequestColumns::OK)
            .map(|i| RequestLengths {
                input: columns.input_tokens[i],
                output: columns.output_tokens.get(i).copied().unwrap_or(0),
                // A hand-edited file's short column reads as 0, never a panic.
                ttft_s: f64::from(columns.ttft.get(i).copied().unwrap_or(0)) * TICK_S,
                e2e_s: f64::from(columns.e2e.get(i).copied().unwrap_or(0)) * TICK_S,
            })
            .collect()
    }

    /// Whether any level of `report` had varied lengths: the page then shows their charts.
    pub fn exist_in(report: &Report) -> bool {
        report
            .series
            .iter()
            .flat_map(|s| &s.levels)
            .any(|l| LevelLengths::of(l).is_some())
    }
}

/// One successful request of a level of varied lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestLengths {
    pub input: u32,
    pub output: u32,
    pub ttft_s: f64,
    pub e2e_s: f64,
}

/// A histogram of `lengths` in at most `bins` equal bins of whole tokens: each bin's middle and
/// how many lengths fell in it, empty bins included (their zero draws the shape).
pub fn histogram(lengths: &[u32], bins: usize) -> Vec<(f64, u32)> {
    let (Some(&lo), Some(&hi)) = (lengths.iter().min(), lengths.iter().max()) else {
        return Vec::new();
    };
    let span = u64::from(hi - lo) + 1;
    let width = span.div_ceil(bins.max(1) as u64).max(1);
    let mut counts = vec![0u32; span.div_ceil(width) as usize];
    for &v in lengths {
        counts[(u64::from(v - lo) / width) as usize] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, n)| (lo as f64 + (i as f64 + 0.5) * width as f64 - 0.5, n))
        .collect()
}

/// The log-space parameters (mu, sigma) of a lognormal with this mean and standard deviation.
fn lognormal_parameters(mean: f64, stddev: f64) -> (f64, f64) {
    let sigma2 = (1.0 + (stddev / mean).powi(2)).ln();
    (mean.ln() - sigma2 / 2.0, sigma2.sqrt())
}

/// The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Fisher–Yates with SplitMix64: the order must not change with a dependency's version.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    for i in (1..items.len()).rev() {
        let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// The next value of a SplitMix64 sequence at `state`.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_and_stddev(values: &[u32]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = values
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        (mean, var.sqrt())
    }

    /// Acceptance (#36): over 2,000 drawn lengths, mean and standard deviation within 3% of
    /// the values asked, for every distribution and several seeds.
    #[test]
    fn two_thousand_draws_have_the_asked_mean_and_stddev() {
        let uniform = LengthDistribution::Uniform { min: 100, max: 900 };
        // Uniform over 100..=900: mean 500, stddev sqrt((801² - 1) / 12).
        let uniform_sd = ((801.0f64 * 801.0 - 1.0) / 12.0).sqrt();
        let asked = [
            (uniform, 500.0, uniform_sd),
            (
                LengthDistribution::Normal {
                    mean: 512.0,
                    stddev: 128.0,
                    min: None,
                    max: None,
                },
                512.0,
                128.0,
            ),
            (
                LengthDistribution::Lognormal {
                    mean: 300.0,
                    stddev: 200.0,
                    min: None,
                    max: None,
                },
                300.0,
                200.0,
            ),
            (LengthDistribution::Fixed { tokens: 256 }, 256.0, 0.0),
        ];
        for (distribution, mean, stddev) in asked {
            for seed in [0, 1, 42, 9_999] {
                let drawn = distribution.draw(2000, seed).unwrap();
                assert_eq!(drawn.len(), 2000);
                let (m, s) = mean_and_stddev(&drawn);
                assert!(
                    (m - mean).abs() <= 0.03 * mean,
                    "{distribution:?}: mean {m}"
                );
                assert!(
                    (s - stddev).abs() <= 0.03 * stddev.max(1.0),
                    "{distribution:?}: stddev {s}"
                );
                // The moments the report compares with agree too.
                let (am, asd) = distribution.moments().unwrap();
                assert!((am - mean).abs() <= 0.01 * mean, "{distribution:?}: {am}");
                assert!((asd - stddev).abs() <= 0.01 * stddev.max(1.0) + 0.5);
            }
        }
        assert!(LengthDistribution::Dataset.draw(10, 0).is_none());
    }

    #[test]
    fn draws_are_seeded_clipped_and_whole() {
        let normal = LengthDistribution::Normal {
            mean: 100.0,
            stddev: 80.0,
            min: Some(20),
            max: Some(150),
        };
        let a = normal.draw(500, 7).unwrap();
        assert_eq!(a, normal.draw(500, 7).unwrap());
        assert_ne!(a, normal.draw(500, 8).unwrap());
        assert!(a.iter().all(|&v| (20..=150).contains(&v)));
        assert!(a.contains(&20) && a.contains(&150));
        // Shuffled: the first hundred are a mix, not the shortest.
        let first: Vec<u32> = a[..100].to_vec();
        assert!(first.iter().any(|&v| v > 120) && first.iter().any(|&v| v < 60));
        // Clipping moves the moments the report compares with.
        let (mean, _) = normal.moments().unwrap();
        assert!(mean < 100.0, "{mean}");
        let narrow = LengthDistribution::Normal {
            mean: 3.0,
            stddev: 10.0,
            min: None,
            max: None,
        };
        assert!(narrow.draw(100, 1).unwrap().iter().all(|&v| v >= 1));
    }

    #[test]
    fn spreads_and_misses() {
        let s = Spread::of([10, 20, 30, 40, 50]).unwrap();
        assert_eq!((s.count, s.mean, s.p50), (5, 30.0, 30.0));
        assert_eq!(s.text(), "mean 30 (p5–p95 12–48)");
        assert!(Spread::of([]).is_none());
        let uniform = LengthDistribution::Uniform { min: 100, max: 900 };
        let (mean, sd) = uniform.moments().unwrap();
        let drawn = Spread::of(uniform.draw(200, 3).unwrap()).unwrap();
        assert!(!drawn.misses(mean, sd), "{drawn:?}");
        // Outputs that stopped at a fifth of the length asked miss it.
        let short = Spread::of(uniform.draw(200, 3).unwrap().iter().map(|v| v / 5)).unwrap();
        assert!(short.misses(mean, sd));
        // Four requests of a wide distribution do not make a miss by themselves.
        let few = Spread::of([150, 400, 850, 300]).unwrap();
        assert!(!few.misses(mean, sd), "{few:?}");
    }

    #[test]
    fn a_level_of_varied_lengths_states_them() {
        let mut level: Level = serde_json::from_str(
            r#"{"concurrency": 1, "duration_s": 1, "requests": {"ok": 3, "errored": 1, "incomplete": 0},
                "metrics": {}, "system_output_tok_s": 1}"#,
        )
        .unwrap();
        assert!(LevelLengths::of(&level).is_none());
        let columns = RequestColumns {
            status: vec![0, 0, 2, 0],
            ttft: vec![100, 300, 0, 200],
            e2e: vec![1000, 3000, 0, 2000],
            output_tokens: vec![10, 20, 0, 30],
            input_tokens: vec![100, 300, 5, 200],
            ..RequestColumns::default()
        };
        level.per_request = Some(RequestColumns {
            input_tokens: Vec::new(),
            ..columns.clone()
        });
        assert!(LevelLengths::of(&level).is_none(), "fixed lengths");
        level.per_request = Some(columns);
        let lengths = LevelLengths::of(&level).unwrap();
        assert_eq!((lengths.input.count, lengths.input.mean), (3, 200.0));
        assert_eq!(lengths.output.mean, 20.0);
        assert!(lengths
            .text()
            .starts_with("input mean 200 (p5–p95 110–290), output mean 20"));
        let requests = LevelLengths::requests(&level);
        assert_eq!(requests.len(), 3);
        assert_eq!((requests[2].input, requests[2].output), (200, 30));
        assert!(
            (requests[2].ttft_s - 0.02).abs() < 1e-12 && (requests[2].e2e_s - 0.2).abs() < 1e-12
        );
    }

    #[test]
    fn histograms_count_every_length_once() {
        assert!(histogram(&[], 10).is_empty());
        let h = histogram(&[10, 11, 12, 19, 30], 3);
        // 21 lengths from 10 to 30 in bins of 7: 10–16, 17–23, 24–30.
        assert_eq!(h, vec![(13.0, 3), (20.0, 1), (27.0, 1)]);
        let one = histogram(&[5, 5], 20);
        assert_eq!(one, vec![(5.0, 2)]);
        let many: Vec<u32> = (0..2000).collect();
        let h = histogram(&many, 24);
        assert!(h.len() <= 24);
        assert_eq!(h.iter().map(|b| b.1).sum::<u32>(), 2000);
    }

    #[test]
    fn bad_parameters_are_named() {
        let bad = [
            LengthDistribution::Fixed { tokens: 0 },
            LengthDistribution::Uniform { min: 9, max: 3 },
            LengthDistribution::Normal {
                mean: f64::NAN,
                stddev: 1.0,
                min: None,
                max: None,
            },
            LengthDistribution::Lognormal {
                mean: 10.0,
                stddev: 1.0,
                min: Some(50),
                max: Some(20),
            },
        ];
        for d in bad {
            assert!(d.problem().is_some(), "{d:?}");
        }
        assert!(LengthDistribution::Uniform { min: 1, max: 1 }
            .problem()
            .is_none());
        assert_eq!(
            LengthDistribution::Uniform { min: 100, max: 900 }.text(),
            "uniform 100–900"
        );
    }
}
