//! The headline figures of a report: fastest user, biggest throughput, quickest first token,
//! safe queue depths, reliability.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::metric::Metric;
use super::queue::{max_safe_queue_depth, SafeDepth};
use crate::schema::{LoadMode, Report};
use crate::stats::Stat;

/// A figure and the level it was measured at.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub value: f64,
    pub scenario: String,
    pub mode: LoadMode,
    pub concurrency: u32,
}

/// Headline figures; means of the distributions, over every series of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Highlights {
    /// Highest mean per-user decode speed.
    pub peak_decode: Option<Located>,
    /// Highest system output throughput.
    pub max_system_tput: Option<Located>,
    /// Lowest mean TTFT.
    pub best_ttft: Option<Located>,
    /// The TTFT threshold the safe depths are computed for.
    pub ttft_threshold_s: f64,
    /// Scenario id -> max safe queue depth from its burst series (`None` without a burst
    /// series or when even depth 1 exceeds the threshold).
    pub max_safe_queue_depth: BTreeMap<String, Option<SafeDepth>>,
    pub requests_ok: u64,
    /// Requests of every outcome over all levels.
    pub requests_total: u64,
    /// `requests_ok / requests_total`; `None` when no request was sent.
    pub success_rate: Option<f64>,
}

/// Computes the highlights of `report`; safe queue depths use `ttft_threshold_s`.
pub fn highlights(report: &Report, ttft_threshold_s: f64) -> Highlights {
    let mut peak_decode: Option<Located> = None;
    let mut max_system_tput: Option<Located> = None;
    let mut best_ttft: Option<Located> = None;
    let (mut requests_ok, mut requests_total) = (0, 0);
    for series in &report.series {
        for level in &series.levels {
            requests_ok += level.requests.ok;
            requests_total += level.requests.total();
            let at = |value: f64| Located {
                value,
                scenario: series.scenario.clone(),
                mode: series.mode,
                concurrency: level.concurrency,
            };
            let mut keep = |best: &mut Option<Located>, metric: Metric| {
                let Some(v) = metric.value(level, Stat::Mean) else {
                    return;
                };
                // Strict comparison: on ties the first (lowest) level keeps the title.
                let better = best.as_ref().is_none_or(|b| {
                    if metric.higher_is_better() {
                        v > b.value
                    } else {
                        v < b.value
                    }
                });
                if better {
                    *best = Some(at(v));
                }
            };
            keep(&mut peak_decode, Metric::DecodeTokS);
            keep(&mut max_system_tput, Metric::SystemOutputTokS);
            keep(&mut best_ttft, Metric::Ttft);
        }
    }
    let max_safe_queue_depth = report
        .scenarios
        .iter()
        .map(|scenario| {
            let depth = report
                .series
                .iter()
                .find(|s| s.scenario == scenario.id && s.mode == LoadMode::Burst)
                .and_then(|s| max_safe_queue_depth(s, ttft_threshold_s, Stat::Mean));
            (scenario.id.clone(), depth)
        })
        .collect();
    Highlights {
        peak_decode,
        max_system_tput,
        best_ttft,
        ttft_threshold_s,
        max_safe_queue_depth,
        requests_ok,
        requests_total,
        success_rate: (requests_total > 0).then(|| requests_ok as f64 / requests_total as f64),
    }
}

impl Highlights {
    /// The machine-readable summary: exactly the keys `peak_decode_tok_s`,
    /// `max_system_tput_tok_s`, `max_system_tput_concurrency`, `best_ttft_s`, `success_rate`,
    /// `requests_total`, `max_safe_queue_depth` (object keyed by scenario id); numbers or null.
    pub fn summary_json(&self) -> Value {
        let value = |l: &Option<Located>| l.as_ref().map(|l| l.value);
        let depths: serde_json::Map<String, Value> = self
            .max_safe_queue_depth
            .iter()
            .map(|(id, d)| (id.clone(), json!(d.map(|d| d.depth))))
            .collect();
        json!({
            "peak_decode_tok_s": value(&self.peak_decode),
            "max_system_tput_tok_s": value(&self.max_system_tput),
            "max_system_tput_concurrency": self.max_system_tput.as_ref().map(|l| l.concurrency),
            "best_ttft_s": value(&self.best_ttft),
            "success_rate": self.success_rate,
            "requests_total": self.requests_total,
            "max_safe_queue_depth": depths,
        })
    }
}
