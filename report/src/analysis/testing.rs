//! Hand-made levels for unit tests.

use crate::schema::{
    Level, LevelMetrics, LoadMode, Measurement, Metadata, Report, RequestCounts, RunStatus,
    Scenario, Series,
};
use crate::stats::Distribution;

/// A level with constant TTFT, decode speed (ITL = 1 / speed), E2E for 256 output tokens and
/// system throughput = concurrency × speed.
pub(crate) fn level(concurrency: u32, ttft_s: f64, decode_tok_s: f64) -> Level {
    let c = Distribution::constant;
    Level::new(
        concurrency,
        60.0,
        RequestCounts {
            ok: u64::from(concurrency),
            ..RequestCounts::default()
        },
        LevelMetrics {
            ttft_s: Some(c(ttft_s)),
            itl_s: Some(c(1.0 / decode_tok_s)),
            e2e_s: Some(c(ttft_s + 255.0 / decode_tok_s)),
            decode_tok_s: Some(c(decode_tok_s)),
            tpot_s: Some(c(1.0 / decode_tok_s)),
            output_tokens: Some(c(256.0)),
            ..LevelMetrics::default()
        },
        f64::from(concurrency) * decode_tok_s,
    )
}

/// A series of `(concurrency, ttft_s, decode_tok_s)` levels.
pub(crate) fn series(scenario: &str, mode: LoadMode, levels: &[(u32, f64, f64)]) -> Series {
    Series {
        scenario: scenario.into(),
        mode,
        arrivals: None,
        levels: levels.iter().map(|&(n, t, d)| level(n, t, d)).collect(),
        cache: None,
    }
}

/// A report of `series` whose scenarios are `ids` (named "Scenario <id>", 1024 in, 256 out).
pub(crate) fn report(ids: &[&str], series: Vec<Series>) -> Report {
    Report {
        schema_version: crate::SCHEMA_VERSION.into(),
        metadata: Metadata::default(),
        status: RunStatus::Complete,
        measurement: Measurement::default(),
        scenarios: ids
            .iter()
            .map(|id| Scenario {
                id: id.to_string(),
                name: format!("Scenario {id}"),
                description: String::new(),
                input_tokens: 1024,
                output_tokens: 256,
                session: None,
                trace: None,
                prompts: None,
                lengths: None,
                agents: None,
            })
            .collect(),
        series,
        records: None,
        warnings: Vec::new(),
        sharding: None,
        fit: None,
    }
}

/// Two scenarios, "chat" and "long" (both 1024 in until a test says otherwise), tied at 172.5
/// tok/s alone; chat also has a burst series reaching 128 × 38 tok/s.
pub(crate) fn chat_and_long() -> Report {
    report(
        &["chat", "long"],
        vec![
            series("chat", LoadMode::Peak, &[(1, 0.19, 172.5), (32, 0.6, 70.6)]),
            series(
                "chat",
                LoadMode::Burst,
                &[(1, 0.2, 170.0), (64, 2.0, 40.0), (128, 4.0, 38.0)],
            ),
            series("long", LoadMode::Peak, &[(1, 1.9, 172.5), (32, 6.2, 13.2)]),
        ],
    )
}
