//! The headline figures of a report: fastest user, biggest throughput, quickest first token,
//! safe queue depths, reliability.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::metric::Metric;
use super::queue::{max_safe_queue_depth, SafeDepth};
use crate::schema::{Level, LoadMode, Report, Series};
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
    /// Scenario id -> display name, for the summary keyed by name.
    pub scenario_names: BTreeMap<String, String>,
    pub requests_ok: u64,
    /// Requests of every outcome over all levels.
    pub requests_total: u64,
    /// `requests_ok / requests_total`; `None` when no request was sent.
    pub success_rate: Option<f64>,
}

/// Computes the highlights of `report`; safe queue depths use `ttft_threshold_s`.
pub fn highlights(report: &Report, ttft_threshold_s: f64) -> Highlights {
    let mut peak_decode: Option<Located> = None;
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
            let keep = |best: &mut Option<Located>, metric: Metric| {
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
    let max_system_tput = max_throughput_level(report).map(|(series, level)| Located {
        value: level.system_output_tok_s,
        scenario: series.scenario.clone(),
        mode: series.mode,
        concurrency: level.concurrency,
    });
    Highlights {
        peak_decode,
        max_system_tput,
        best_ttft,
        ttft_threshold_s,
        max_safe_queue_depth,
        scenario_names: report
            .scenarios
            .iter()
            .map(|s| (s.id.clone(), s.name.clone()))
            .collect(),
        requests_ok,
        requests_total,
        success_rate: (requests_total > 0).then(|| requests_ok as f64 / requests_total as f64),
    }
}

/// A single-user figure (peak mode, one request) at the shortest and at the longest context the
/// report measured: how the experience changes with context, as the reports' key findings
/// give it ("381 ms (1K context) → 109.9 s (256K context)").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextSpan {
    /// (input tokens, value) at the shortest context.
    pub shortest: (u32, f64),
    /// (input tokens, value) at the longest context; the same as `shortest` with one context.
    pub longest: (u32, f64),
}

/// `metric` (mean) at one request, over the scenarios by input length; `None` when no
/// scenario measured a single request.
pub fn single_user_across_context(report: &Report, metric: Metric) -> Option<ContextSpan> {
    let mut points: Vec<(u32, f64)> = report
        .scenarios
        .iter()
        .filter_map(|scenario| {
            let series = report
                .series
                .iter()
                .find(|s| s.scenario == scenario.id && s.mode == LoadMode::Peak)?;
            let level = series.levels.iter().find(|l| l.concurrency == 1)?;
            Some((scenario.input_tokens, metric.value(level, Stat::Mean)?))
        })
        .collect();
    // Stable: of scenarios with the same input length, the first listed stands for it.
    points.sort_by_key(|p| p.0);
    Some(ContextSpan {
        shortest: *points.first()?,
        longest: *points.last()?,
    })
}

/// The peak-mode level (exactly N requests in flight) with the highest system throughput, and
/// its series; on a tie the first listed keeps it. Burst runs are left out: their figures are
/// per queue depth, not per concurrent request.
pub fn peak_throughput_level(report: &Report) -> Option<(&Series, &Level)> {
    top_throughput_level(report, |mode| mode == LoadMode::Peak)
}

/// The level with the highest system throughput in any mode, and its series: the Max System
/// Throughput highlight. On a tie the first listed keeps it.
pub fn max_throughput_level(report: &Report) -> Option<(&Series, &Level)> {
    top_throughput_level(report, |_| true)
}

fn top_throughput_level(
    report: &Report,
    mode_counts: impl Fn(LoadMode) -> bool,
) -> Option<(&Series, &Level)> {
    let mut best: Option<(&Series, &Level)> = None;
    for series in report.series.iter().filter(|s| mode_counts(s.mode)) {
        for level in &series.levels {
            if best.is_none_or(|(_, b)| level.system_output_tok_s > b.system_output_tok_s) {
                best = Some((series, level));
            }
        }
    }
    best
}

/// How many times system throughput grows from the lowest to the highest concurrency measured
/// ("2.7× from 1 to 5 concurrent requests"), in the series of [`peak_throughput_level`].
#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    pub scenario: String,
    pub factor: f64,
    pub from: u32,
    pub to: u32,
}

/// `None` when that series measured one level or no throughput at its first.
pub fn throughput_growth(report: &Report) -> Option<Growth> {
    let (series, _) = peak_throughput_level(report)?;
    let (first, last) = (series.levels.first()?, series.levels.last()?);
    (first.concurrency != last.concurrency && first.system_output_tok_s > 0.0).then(|| Growth {
        scenario: series.scenario.clone(),
        factor: last.system_output_tok_s / first.system_output_tok_s,
        from: first.concurrency,
        to: last.concurrency,
    })
}

/// The scaling efficiency at the highest concurrency of the series of
/// [`peak_throughput_level`]: (scenario id, concurrency, efficiency as a fraction). The reports
/// quote it beside peak throughput ("scaling efficiency at 32 concurrent is 39%").
pub fn peak_series_scaling(report: &Report) -> Option<(&str, u32, f64)> {
    let (series, _) = peak_throughput_level(report)?;
    let &(concurrency, efficiency) =
        super::series_points(series, Metric::ScalingEfficiency, Stat::Mean).last()?;
    Some((series.scenario.as_str(), concurrency, efficiency))
}

impl Highlights {
    /// The machine-readable summary: exactly the keys `peak_decode_tok_s`,
    /// `max_system_tput_tok_s`, `max_system_tput_concurrency`, `best_ttft_s`, `success_rate`,
    /// `requests_total`, `max_safe_queue_depth` (object keyed by scenario name); numbers or null.
    pub fn summary_json(&self) -> Value {
        let value = |l: &Option<Located>| l.as_ref().map(|l| l.value);
        let depths: serde_json::Map<String, Value> = self
            .max_safe_queue_depth
            .iter()
            .map(|(id, d)| {
                let name = self.scenario_names.get(id).unwrap_or(id);
                (name.clone(), json!(d.map(|d| d.depth)))
            })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::series;
    use crate::schema::{Measurement, Metadata, RunStatus, Scenario};

    fn scenario(id: &str) -> Scenario {
        Scenario {
            id: id.into(),
            name: format!("Scenario {id}"),
            description: String::new(),
            input_tokens: 1024,
            output_tokens: 256,
        }
    }

    fn report() -> Report {
        let mut burst = series(
            "chat",
            LoadMode::Burst,
            &[(1, 0.2, 170.0), (64, 2.0, 40.0), (128, 4.0, 38.0)],
        );
        burst.levels[2].requests.errored = 2;
        burst.levels[2].requests.incomplete = 1;
        Report {
            schema_version: crate::SCHEMA_VERSION.into(),
            metadata: Metadata::default(),
            status: RunStatus::Complete,
            measurement: Measurement::default(),
            scenarios: vec![scenario("chat"), scenario("long")],
            series: vec![
                series("chat", LoadMode::Peak, &[(1, 0.19, 172.5), (32, 0.6, 70.6)]),
                burst,
                series("long", LoadMode::Peak, &[(1, 1.9, 172.5), (32, 6.2, 13.2)]),
            ],
            records: None,
            warnings: Vec::new(),
            sharding: None,
        }
    }

    #[test]
    fn finds_each_headline_and_where() {
        let h = highlights(&report(), 3.0);
        // Tie at 172.5 (chat and long): the first measured keeps it.
        let peak = h.peak_decode.clone().unwrap();
        assert_eq!((peak.value, peak.scenario.as_str()), (172.5, "chat"));
        let tput = h.max_system_tput.clone().unwrap();
        assert_eq!(
            (tput.value, tput.mode, tput.concurrency),
            (128.0 * 38.0, LoadMode::Burst, 128)
        );
        let ttft = h.best_ttft.clone().unwrap();
        assert_eq!((ttft.value, ttft.mode), (0.19, LoadMode::Peak));
        // 1 + 32 + 1 + 64 + 128 + 1 + 32 ok, plus 3 failed.
        assert_eq!((h.requests_ok, h.requests_total), (259, 262));
        assert_eq!(h.success_rate, Some(259.0 / 262.0));
        assert!(h.max_safe_queue_depth["chat"].unwrap().interpolated);
        assert_eq!(h.max_safe_queue_depth["long"], None);
    }

    #[test]
    fn summary_has_exactly_the_agreed_keys() {
        let h = highlights(&report(), 3.0);
        let summary = h.summary_json();
        let keys: Vec<&str> = summary
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "best_ttft_s",
                "max_safe_queue_depth",
                "max_system_tput_concurrency",
                "max_system_tput_tok_s",
                "peak_decode_tok_s",
                "requests_total",
                "success_rate"
            ]
        );
        let depth = h.max_safe_queue_depth["chat"].unwrap().depth;
        assert_eq!(
            summary["max_safe_queue_depth"],
            json!({"Scenario chat": depth, "Scenario long": null})
        );
        assert_eq!(summary["max_system_tput_concurrency"], json!(128));
        assert_eq!(summary["requests_total"], json!(262));
    }

    /// TTFT grows from the shortest context (chat, 1K) to the longest (long, 32K) at one request;
    /// the scenario without a single-user level does not count.
    #[test]
    fn single_user_figures_span_the_contexts() {
        let mut r = report();
        r.scenarios[1].input_tokens = 32768;
        r.scenarios.push(scenario("short"));
        r.scenarios[2].input_tokens = 128;
        r.series
            .push(series("short", LoadMode::Peak, &[(4, 0.1, 90.0)]));
        let span = single_user_across_context(&r, Metric::Ttft).unwrap();
        assert_eq!((span.shortest, span.longest), ((1024, 0.19), (32768, 1.9)));
        r.series.retain(|s| s.scenario == "short");
        assert_eq!(single_user_across_context(&r, Metric::Ttft), None);
    }

    /// Peak mode only: chat's burst series reaches 128 × 38 tok/s, but the growth is read in
    /// peak mode, where chat (32 × 70.6) beats long (32 × 13.2): 2,259.2 / 172.5 = 13.1×.
    #[test]
    fn throughput_grows_over_the_best_peak_series() {
        let r = report();
        let growth = throughput_growth(&r).unwrap();
        assert_eq!(
            (growth.scenario.as_str(), growth.from, growth.to),
            ("chat", 1, 32)
        );
        assert!((growth.factor - 32.0 * 70.6 / 172.5).abs() < 1e-9);
        let mut one_level = r.clone();
        one_level.series[0].levels.truncate(1);
        // chat's peak series now tops at 172.5; long's (32 × 13.2 = 422.4) is the best.
        assert_eq!(throughput_growth(&one_level).unwrap().scenario, "long");
        one_level.series[2].levels.truncate(1);
        assert_eq!(throughput_growth(&one_level), None);
    }

    /// chat's peak series tops out at 32: 2,259.2 / (172.5 × 32) = 40.9%.
    #[test]
    fn peak_series_scaling_reads_its_top_level() {
        let r = report();
        let (scenario, concurrency, efficiency) = peak_series_scaling(&r).unwrap();
        assert_eq!((scenario, concurrency), ("chat", 32));
        assert!((efficiency - 32.0 * 70.6 / (172.5 * 32.0)).abs() < 1e-9);
        let (series, level) = peak_throughput_level(&r).unwrap();
        assert_eq!((series.scenario.as_str(), level.concurrency), ("chat", 32));
    }

    #[test]
    fn an_empty_report_has_nulls() {
        let mut empty = report();
        empty.series.clear();
        let summary = highlights(&empty, 3.0).summary_json();
        assert_eq!(summary["peak_decode_tok_s"], Value::Null);
        assert_eq!(summary["success_rate"], Value::Null);
        assert_eq!(summary["requests_total"], json!(0));
    }
}
