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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_matches_the_reference_definition() {
        // Reference chatbot: 32 users at 70.6 tok/s each vs 172.5 tok/s alone -> 40.9%.
        let e = scaling_efficiency(32.0 * 70.6, 172.5, 32).unwrap();
        assert!((e - 0.409275).abs() < 1e-6, "{e}");
        assert_eq!(scaling_efficiency(300.0, 150.0, 2), Some(1.0));
        assert_eq!(scaling_efficiency(100.0, 0.0, 4), None);
        assert_eq!(scaling_efficiency(100.0, 50.0, 0), None);
    }

    #[test]
    fn tokens_per_hour_matches_the_reference() {
        // "2961.0 tok/s ... equivalent to ~10,659,600 tokens/hour".
        assert_eq!(tokens_per_hour(2961.0), 10_659_600.0);
    }
}
