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
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
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
