//! How throughput scales with load.

/// Seconds per hour, for per-hour figures.
pub const SECONDS_PER_HOUR: f64 = 3600.0;

/// Fraction of ideal linear scaling at `n` concurrent requests:
/// `system_tok_s / (single_user_tok_s × n)`; 1.0 means no per-user loss.
/// `None` when the single-user figure or `n` is zero (nothing to scale from).
pub fn scaling_efficiency(system_tok_s: f64, single_user_tok_s: f64, n: u32) -> Option<f64> {
    let ideal = single_user_tok_s * f64::from(n);
    (ideal > 0.0 && ideal.is_finite() && system_tok_s.is_finite()).then(|| system_tok_s / ideal)
}

/// Tokens produced in an hour at a sustained `tok_s`.
pub fn tokens_per_hour(tok_s: f64) -> f64 {
    tok_s * SECONDS_PER_HOUR
}
