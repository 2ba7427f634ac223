//! What serving costs: from measured power and an electricity price, or from a GPU-hour price;
//! and the GPU-hour prices a reader starts from, per GPU kind.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::format::format_number;
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

/// Output joules per token: watts (J/s) over `tok_s`. `None` without power or throughput.
pub fn joules_per_token(watts: f64, tok_s: f64) -> Option<f64> {
    (watts > 0.0 && watts.is_finite() && tok_s > 0.0 && tok_s.is_finite()).then(|| watts / tok_s)
}

/// A level's output tokens per joule of measured GPU energy, both over one window: the span
/// its power was sampled over (the whole level after its warmup, longer than the steady window
/// its throughput is measured in), and the output tokens of every request the level sent in it
/// (its completed requests at their measured mean length). `None` without power or tokens.
pub fn level_tokens_per_joule(level: &crate::schema::Level) -> Option<f64> {
    let energy_j = level.power.as_ref()?.energy_j;
    let mean_tokens = level.metrics.output_tokens.as_ref()?.mean;
    let tokens = level.requests.ok as f64 * mean_tokens;
    (energy_j > 0.0 && energy_j.is_finite() && tokens > 0.0).then(|| tokens / energy_j)
}

/// Output tokens per second per kilowatt of `watts`. `None` without power.
pub fn tok_s_per_kw(tok_s: f64, watts: f64) -> Option<f64> {
    tokens_per_joule(tok_s, watts).map(|per_joule| per_joule * 1000.0)
}

/// The on-demand rental price of one GPU of a kind, dollars per hour: the default a reader's
/// own price replaces. GPU rental only: no host, storage, network or staff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuPrice {
    pub kind: &'static str,
    pub usd_per_gpu_hour: f64,
}

/// Where [`DEFAULT_GPU_PRICES`] come from, and when they were read: prices move monthly, so
/// the page and `infermeter summary` state them as an assumption, never as a fact.
pub const GPU_PRICES_SOURCE: &str =
    "RunPod on-demand list prices as quoted by deploybase.ai, \"B200 vs H200 vs H100\"";
pub const GPU_PRICES_AS_OF: &str = "2026-11-27";

/// One provider's prices, so the kinds compare on one footing. A kind not listed has no
/// default: its costs wait for the reader's price.
pub const DEFAULT_GPU_PRICES: [GpuPrice; 3] = [
    GpuPrice {
        kind: "H100",
        usd_per_gpu_hour: 2.69,
    },
    GpuPrice {
        kind: "H200",
        usd_per_gpu_hour: 3.59,
    },
    GpuPrice {
        kind: "B200",
        usd_per_gpu_hour: 5.98,
    },
];

/// GPU kinds recognised in a report's GPU model, most specific first ("GH200" is no H200, and
/// an "H100 NVL" is an H100): what prices and short labels are keyed by.
const KNOWN_KINDS: [(&str, &str); 8] = [
    ("GH200", "GH200"),
    ("GB200", "GB200"),
    ("B200", "B200"),
    ("H200", "H200"),
    ("H100", "H100"),
    ("A100", "A100"),
    ("L40S", "L40S"),
    ("RTX PRO 6000", "RTX Pro 6000"),
];

/// The kind of GPU `gpu_model` names, e.g. "NVIDIA H100 SXM5 80GB" -> "H100"; an unknown
/// model is its own kind, less a leading "NVIDIA ".
pub fn gpu_kind(gpu_model: &str) -> String {
    // ASCII: the kinds are ASCII, and `to_uppercase` would link Unicode case tables into the
    // viewer (~3 KB gzip with the other case conversions).
    let upper = gpu_model.to_ascii_uppercase();
    KNOWN_KINDS
        .iter()
        .find(|(needle, _)| upper.contains(needle))
        .map(|(_, kind)| (*kind).to_string())
        .unwrap_or_else(|| {
            let trimmed = gpu_model.trim();
            trimmed
                .strip_prefix("NVIDIA ")
                .unwrap_or(trimmed)
                .to_string()
        })
}

/// Where a GPU-hour price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriceBasis {
    /// The reader set it (`--usd-per-gpu-hour`, the page's price field).
    Reader,
    /// [`DEFAULT_GPU_PRICES`].
    Default,
    /// No default for the kind and none set: its costs are not stated.
    Unset,
}

/// The price a kind is costed at, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PriceAssumption {
    pub kind: String,
    pub usd_per_gpu_hour: Option<f64>,
    pub basis: PriceBasis,
}

impl PriceAssumption {
    /// `kind` at the reader's price when `set` has one, else the default.
    pub fn of(kind: &str, set: &BTreeMap<String, f64>) -> PriceAssumption {
        let (usd_per_gpu_hour, basis) = match set.get(kind) {
            Some(&price) => (Some(price), PriceBasis::Reader),
            None => match DEFAULT_GPU_PRICES.iter().find(|p| p.kind == kind) {
                Some(p) => (Some(p.usd_per_gpu_hour), PriceBasis::Default),
                None => (None, PriceBasis::Unset),
            },
        };
        PriceAssumption {
            kind: kind.to_string(),
            usd_per_gpu_hour,
            basis,
        }
    }

    /// "H100: $2.69 per GPU-hour (default: RunPod …, read 2026-11-27; GPU rental only)",
    /// "H100: $2.5 per GPU-hour (yours; GPU rental only)", "RTX Pro 6000: no price set".
    pub fn text(&self) -> String {
        let Some(price) = self.usd_per_gpu_hour else {
            return format!("{}: no price set, so no cost is stated", self.kind);
        };
        let whence = match self.basis {
            PriceBasis::Reader => "yours".to_string(),
            _ => format!("default: {GPU_PRICES_SOURCE}, read {GPU_PRICES_AS_OF}"),
        };
        format!(
            "{}: ${} per GPU-hour ({whence}; GPU rental only)",
            self.kind,
            format_number(price)
        )
    }
}

/// Reads `H100=2.5,H200=3.4` (kind=dollars per GPU-hour, kinds as [`gpu_kind`] names them).
pub fn parse_gpu_prices(spec: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut prices = BTreeMap::new();
    for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (kind, price) = item
            .rsplit_once('=')
            .ok_or_else(|| format!("\"{item}\" is not KIND=DOLLARS, e.g. H100=2.5"))?;
        let price: f64 = price
            .trim()
            .trim_start_matches('$')
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite() && *p >= 0.0)
            .ok_or_else(|| {
                format!(
                    "\"{item}\": the price must be a number of dollars per GPU-hour, at least 0"
                )
            })?;
        let kind = kind.trim();
        if kind.is_empty() {
            return Err(format!("\"{item}\" names no GPU kind, e.g. H100=2.5"));
        }
        prices.insert(kind.to_string(), price);
    }
    Ok(prices)
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

    #[test]
    fn energy_per_token_and_per_kilowatt() {
        // 700 W for 1,400 tok/s: 0.5 J per token, 2,000 tok/s per kW.
        assert_eq!(joules_per_token(700.0, 1400.0), Some(0.5));
        assert_eq!(tok_s_per_kw(1400.0, 700.0), Some(2000.0));
        assert_eq!(joules_per_token(700.0, 0.0), None);
        assert_eq!(tok_s_per_kw(1400.0, 0.0), None);
    }

    #[test]
    fn gpu_kinds_from_model_names() {
        for (model, kind) in [
            ("NVIDIA H100 SXM5 80GB", "H100"),
            ("NVIDIA H100 80GB HBM3", "H100"),
            ("nvidia h200", "H200"),
            ("NVIDIA GH200 480GB", "GH200"),
            ("NVIDIA B200", "B200"),
            ("NVIDIA RTX PRO 6000 Blackwell 96GB", "RTX Pro 6000"),
            ("NVIDIA Quadro X", "Quadro X"),
            ("CPU (no GPU)", "CPU (no GPU)"),
        ] {
            assert_eq!(gpu_kind(model), kind, "{model}");
        }
    }

    #[test]
    fn prices_are_the_readers_else_the_default_else_unset() {
        let set = parse_gpu_prices("H100=2.5, H200=$3.4").unwrap();
        let h100 = PriceAssumption::of("H100", &set);
        assert_eq!(
            (h100.usd_per_gpu_hour, h100.basis),
            (Some(2.5), PriceBasis::Reader)
        );
        assert_eq!(
            h100.text(),
            "H100: $2.5 per GPU-hour (yours; GPU rental only)"
        );
        let b200 = PriceAssumption::of("B200", &set);
        assert_eq!(
            (b200.usd_per_gpu_hour, b200.basis),
            (Some(5.98), PriceBasis::Default)
        );
        assert!(b200.text().contains("read 2026-11-27"), "{}", b200.text());
        let rtx = PriceAssumption::of("RTX Pro 6000", &set);
        assert_eq!((rtx.usd_per_gpu_hour, rtx.basis), (None, PriceBasis::Unset));
        for bad in ["H100", "H100=cheap", "H100=-1", "=2"] {
            assert!(parse_gpu_prices(bad).is_err(), "{bad}");
        }
        assert!(parse_gpu_prices("").unwrap().is_empty());
    }
}
