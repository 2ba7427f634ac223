//! Monotone cubic interpolation (Fritsch–Carlson) between measured load levels.
//!
//! Monotone because a chart or a capacity estimate must never invent a bump the data does not
//! have: between two measured points the curve stays within their values, and it is never
//! evaluated outside the measured range.

/// A value read from a curve, saying whether it was measured or interpolated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    /// True when `x` is exactly a measured point.
    pub measured: bool,
}

/// A piecewise cubic Hermite curve through measured points, monotone on every interval.
#[derive(Debug, Clone, PartialEq)]
pub struct MonotoneCurve {
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// Tangent at each point, limited so no interval overshoots.
    slopes: Vec<f64>,
}

impl MonotoneCurve {
    /// Builds the curve through `points`. Points with non-finite coordinates are dropped, the
    /// rest are sorted by x and a repeated x keeps its first y. `None` when no point is left.
    pub fn new(points: &[(f64, f64)]) -> Option<MonotoneCurve> {
        let mut sorted: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        crate::order::sort_by(&mut sorted, |a, b| a.0.total_cmp(&b.0));
        sorted.dedup_by(|later, earlier| later.0 == earlier.0);
        if sorted.is_empty() {
            return None;
        }
        let (xs, ys): (Vec<f64>, Vec<f64>) = sorted.into_iter().unzip();
        let slopes = fritsch_carlson_slopes(&xs, &ys);
        Some(MonotoneCurve { xs, ys, slopes })
    }

    /// The measured range `(first x, last x)`.
    pub fn domain(&self) -> (f64, f64) {
        (self.xs[0], self.xs[self.xs.len() - 1])
    }

    /// The measured points, ascending in x.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.xs.iter().copied().zip(self.ys.iter().copied())
    }

    /// Value at `x`; `None` outside the measured range (never extrapolates).
    pub fn at(&self, x: f64) -> Option<Estimate> {
        let (lo, hi) = self.domain();
        if !(lo..=hi).contains(&x) {
            return None;
        }
        // First index whose x is >= the query.
        let k = self.xs.partition_point(|&xi| xi < x);
        if self.xs[k] == x {
            return Some(Estimate {
                value: self.ys[k],
                measured: true,
            });
        }
        let (x0, x1) = (self.xs[k - 1], self.xs[k]);
        let (y0, y1) = (self.ys[k - 1], self.ys[k]);
        let h = x1 - x0;
        let t = (x - x0) / h;
        let (t2, t3) = (t * t, t * t * t);
        let value = (2.0 * t3 - 3.0 * t2 + 1.0) * y0
            + (t3 - 2.0 * t2 + t) * h * self.slopes[k - 1]
            + (-2.0 * t3 + 3.0 * t2) * y1
            + (t3 - t2) * h * self.slopes[k];
        // The construction stays within the neighbours; clamping only absorbs rounding.
        Some(Estimate {
            value: value.clamp(y0.min(y1), y0.max(y1)),
            measured: false,
        })
    }
}

/// Tangents per Fritsch & Carlson (1980): secant average, zero at local extrema, and scaled
/// into the α² + β² ≤ 9 circle so each interval is monotone.
fn fritsch_carlson_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len();
    if n < 2 {
        return vec![0.0; n];
    }
    let secants: Vec<f64> = (0..n - 1)
        .map(|k| (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k]))
        .collect();
    let mut m = vec![0.0; n];
    m[0] = secants[0];
    m[n - 1] = secants[n - 2];
    for k in 1..n - 1 {
        let (a, b) = (secants[k - 1], secants[k]);
        m[k] = if a * b > 0.0 { (a + b) / 2.0 } else { 0.0 };
    }
    for (k, &d) in secants.iter().enumerate() {
        if d == 0.0 {
            m[k] = 0.0;
            m[k + 1] = 0.0;
            continue;
        }
        let (alpha, beta) = (m[k] / d, m[k + 1] / d);
        let radius = alpha.hypot(beta);
        if radius > 3.0 {
            let tau = 3.0 / radius;
            m[k] = tau * alpha * d;
            m[k + 1] = tau * beta * d;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value(curve: &MonotoneCurve, x: f64) -> f64 {
        curve.at(x).expect("inside the domain").value
    }

    /// The point `fraction` of the way along the domain (clamped: `lo + (hi - lo)` may round
    /// past `hi`).
    fn along(curve: &MonotoneCurve, fraction: f64) -> f64 {
        let (lo, hi) = curve.domain();
        (lo + (hi - lo) * fraction).clamp(lo, hi)
    }

    #[test]
    fn hand_computed_hermite_values() {
        // Secants 1 and 3; tangents 1, 2, 3 (inside the monotonicity circle).
        // At x = 0.5: 0.125·1 + 0.5·1 − 0.125·2 = 0.375; at 1.5: 0.5 + 0.25 + 2 − 0.375 = 2.375.
        let curve = MonotoneCurve::new(&[(0.0, 0.0), (1.0, 1.0), (2.0, 4.0)]).unwrap();
        assert!((value(&curve, 0.5) - 0.375).abs() < 1e-12);
        assert!((value(&curve, 1.5) - 2.375).abs() < 1e-12);
    }

    #[test]
    fn measured_points_are_flagged_and_exact() {
        let curve = MonotoneCurve::new(&[(4.0, 6.0), (1.0, 2.7), (2.0, 3.9)]).unwrap();
        assert_eq!(curve.domain(), (1.0, 4.0));
        assert_eq!(
            curve.at(2.0),
            Some(Estimate {
                value: 3.9,
                measured: true
            })
        );
        assert!(!curve.at(3.0).unwrap().measured);
    }

    #[test]
    fn never_extrapolates() {
        let curve = MonotoneCurve::new(&[(1.0, 1.0), (8.0, 2.0)]).unwrap();
        assert_eq!(curve.at(0.99), None);
        assert_eq!(curve.at(8.01), None);
        assert_eq!(curve.at(f64::NAN), None);
    }

    #[test]
    fn local_extremum_and_flat_segments_do_not_overshoot() {
        let peak = MonotoneCurve::new(&[(0.0, 0.0), (1.0, 1.0), (2.0, 0.0)]).unwrap();
        assert!((0..=20).all(|i| value(&peak, f64::from(i) / 10.0) <= 1.0));
        let steps = MonotoneCurve::new(&[(0.0, 0.0), (1.0, 0.0), (2.0, 1.0), (3.0, 1.0)]).unwrap();
        assert_eq!(value(&steps, 0.5), 0.0);
        assert_eq!(value(&steps, 2.5), 1.0);
        // Zero tangents at both ends of the rise make it symmetric about its midpoint.
        assert!((value(&steps, 1.5) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_steep_step_is_limited_to_the_circle() {
        // Tangent averaging alone would overshoot 100 right after x = 2.
        let curve =
            MonotoneCurve::new(&[(0.0, 0.0), (1.0, 1.0), (2.0, 100.0), (3.0, 100.5)]).unwrap();
        for i in 100..=300 {
            let v = value(&curve, f64::from(i) / 100.0);
            assert!((1.0..=100.5).contains(&v), "{i}: {v}");
        }
    }

    #[test]
    fn single_point_and_degenerate_input() {
        let one = MonotoneCurve::new(&[(3.0, 7.0), (3.0, 9.0)]).unwrap();
        assert_eq!(one.domain(), (3.0, 3.0));
        assert_eq!(one.at(3.0).unwrap().value, 7.0);
        assert!(MonotoneCurve::new(&[]).is_none());
        assert!(MonotoneCurve::new(&[(f64::NAN, 1.0), (1.0, f64::INFINITY)]).is_none());
    }

    /// Strictly increasing xs from positive gaps, with arbitrary ys.
    fn points() -> impl Strategy<Value = Vec<(f64, f64)>> {
        prop::collection::vec((0.01f64..100.0, -1e4f64..1e4), 2..12).prop_map(|raw| {
            let mut x = 0.0;
            raw.into_iter()
                .map(|(gap, y)| {
                    x += gap;
                    (x, y)
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn stays_between_neighbours(points in points(), fraction in 0.0f64..=1.0) {
            let curve = MonotoneCurve::new(&points).unwrap();
            let x = along(&curve, fraction);
            let v = value(&curve, x);
            let k = points.partition_point(|p| p.0 < x).max(1);
            let (a, b) = (points[k - 1].1, points[k].1);
            prop_assert!(a.min(b) <= v && v <= a.max(b), "x {x} v {v} between {a} and {b}");
        }

        #[test]
        fn monotone_data_gives_monotone_output(mut points in points(), decreasing in any::<bool>()) {
            let mut ys: Vec<f64> = points.iter().map(|p| p.1).collect();
            ys.sort_by(f64::total_cmp);
            if decreasing {
                ys.reverse();
            }
            for (p, y) in points.iter_mut().zip(ys) {
                p.1 = y;
            }
            let curve = MonotoneCurve::new(&points).unwrap();
            let values: Vec<f64> = (0..=400).map(|i| value(&curve, along(&curve, f64::from(i) / 400.0))).collect();
            for w in values.windows(2) {
                if decreasing {
                    prop_assert!(w[1] <= w[0] + 1e-9 * w[0].abs().max(1.0), "{} then {}", w[0], w[1]);
                } else {
                    prop_assert!(w[1] >= w[0] - 1e-9 * w[0].abs().max(1.0), "{} then {}", w[0], w[1]);
                }
            }
        }
    }
}
