//! What serving costs: from measured power and an electricity price, or from a GPU-hour price.

use super::scaling::tokens_per_hour;

/// The electricity price a report's energy costs are read at until the reader sets one, $/kWh
/// (the reference reports' $0.10/kWh).
pub const DEFAULT_USD_PER_KWH: f64 = 0.10;

/// Electricity cost per hour of drawing `watts` continuously at `usd_per_kwh`.
pub fn cost_per_hour_from_power(watts: f64, usd_per_kwh: f64) -> f64 {
    watts / 1000.0 * usd_per_kwh
}

/// Rental cost per hour of `gpus` GPUs at `usd_per_gpu_hour` each.
pub fn cost_per_hour_from_gpu_hours(usd_per_gpu_hour: f64, gpus: u32) -> f64 {
    usd_per_gpu_hour * f64::from(gpus)
}

/// Cost of one million output tokens at `cost_per_hour` while producing `tok_s`.
/// `None` when nothing is produced.
pub fn cost_per_million_tokens(cost_per_hour: f64, tok_s: f64) -> Option<f64> {
    let per_hour = tokens_per_hour(tok_s);
    (per_hour > 0.0 && per_hour.is_finite()).then(|| cost_per_hour / per_hour * 1e6)
}

/// Output tokens per joule: `tok_s` divided by watts (J/s). `None` without power.
pub fn tokens_per_joule(tok_s: f64, watts: f64) -> Option<f64> {
    (watts > 0.0 && watts.is_finite() && tok_s.is_finite()).then(|| tok_s / watts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_cost_matches_the_reference() {
        // "466W ... costing approximately $0.05/hour at $0.10/kWh".
        let per_hour = cost_per_hour_from_power(466.0, 0.10);
        assert!((per_hour - 0.0466).abs() < 1e-12);
    }

    #[test]
    fn per_million_tokens() {
        // $2.50/GPU-hour x 2 GPUs = $5/h; 1000 tok/s = 3.6M tok/h -> $1.3889 per million.
        let per_hour = cost_per_hour_from_gpu_hours(2.5, 2);
        assert_eq!(per_hour, 5.0);
        let per_million = cost_per_million_tokens(per_hour, 1000.0).unwrap();
        assert!((per_million - 5.0 / 3.6).abs() < 1e-12);
        assert_eq!(cost_per_million_tokens(per_hour, 0.0), None);
    }

    #[test]
    fn tokens_per_joule_is_throughput_over_power() {
        assert_eq!(tokens_per_joule(1000.0, 500.0), Some(2.0));
        assert_eq!(tokens_per_joule(1000.0, 0.0), None);
    }
}
