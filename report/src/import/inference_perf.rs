//! inference-perf's `stage_N_lifecycle_metrics.json`: one stage at one load (a concurrency, or
//! a request rate), its successes' latencies (mean, min, max, p0.1…p99.9, median) and
//! throughput, and its failures. A run's stages are several files; `summary_lifecycle_metrics`
//! pools every stage and is refused as a level. The files name no inference-perf version: they
//! are read by the keys inference-perf 0.7 writes, and refused when those are missing.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::Obj;
use super::level::Figures;
use super::{absent, FormatError, Run, RunLevel};
use crate::schema::{Level, LevelMetrics, LoadMode, Measurement, RequestCounts, TokenSource};
use crate::stats::Distribution;

/// The inference-perf release the reader was tested on.
pub const TESTED: &str = "inference-perf 0.7.0";

const TOOL: &str = "inference-perf";
const FORMAT: &str = "inference-perf lifecycle metrics report";

pub(crate) fn read(value: &Value) -> Result<Vec<Run>, FormatError> {
    super::single(read_run(value), FORMAT)
}

fn read_run(value: &Value) -> Result<Run, String> {
    let top = Obj::new(value, "")?;
    let load = top.obj("load_summary", "load_summary")?;
    let successes = top.obj("successes", "successes")?;
    let latency = successes
        .obj("latency", "successes.latency")
        .map_err(|m| format!("{m}: not a report this reader knows (tested on {TESTED})"))?;
    let duration = top.num("benchmark_time_seconds")?;
    let (mode, key, rate) = match (
        load.opt_num("concurrency")?,
        load.opt_num("requested_rate")?,
    ) {
        (Some(n), _) => (LoadMode::Peak, n, None),
        (None, Some(rate)) => (LoadMode::Rate, rate, Some(rate)),
        (None, None) => {
            return Err("is the summary of every stage pooled (summary_lifecycle_metrics.json), which has no one load; open the stage_N_lifecycle_metrics.json files instead".into())
        }
    };
    let ok = successes.num("count")?;
    let failed = top
        .opt_obj("failures", "failures")?
        .map(|f| f.num("count"))
        .transpose()?
        .unwrap_or(0.0);
    let metrics = LevelMetrics {
        ttft_s: distribution(&latency, "time_to_first_token", None)?,
        tpot_s: distribution(&latency, "time_per_output_token", None)?,
        itl_s: distribution(&latency, "inter_token_latency", None)?,
        e2e_s: distribution(&latency, "request_latency", Some(ok))?,
        input_tokens: distribution(&successes, "prompt_tokens", None)?,
        output_tokens: distribution(&successes, "output_len", None)?,
        ..LevelMetrics::default()
    };
    let throughput = successes.obj("throughput", "successes.throughput")?;
    let level = Level {
        concurrency: match mode {
            LoadMode::Peak => key.max(1.0) as u32,
            // The stage report has no request times: its order among the stages stands in.
            _ => 1,
        },
        request_rate: rate,
        duration_s: duration,
        requests: RequestCounts {
            ok: ok as u64,
            incomplete: 0,
            errored: failed as u64,
            error_kinds: BTreeMap::new(),
        },
        system_output_tok_s: throughput.num("output_tokens_per_sec")?,
        system_input_tok_s: throughput.opt_num("input_tokens_per_sec")?,
        requests_per_s: throughput.opt_num("requests_per_sec")?,
        ..super::level::empty()
    };
    let mean = |m: &Option<Distribution>| m.map_or(1.0, |d| d.mean);
    let (input_tokens, output_tokens) = (mean(&metrics.input_tokens), mean(&metrics.output_tokens));
    Ok(Run {
        input_tokens,
        output_tokens,
        levels: vec![RunLevel {
            mode,
            arrivals: None,
            load: key,
            level: Level { metrics, ..level },
        }],
        ..Run::of(
            TOOL,
            super::NOT_RECORDED.into(),
            measurement(),
            stage_absent(mode),
        )
    })
}

/// A distribution of `within`'s figures `name` (mean, median, min, max, p90…p99.9), with
/// `count` samples where known; `None` where the report has none.
fn distribution(
    within: &Obj<'_>,
    name: &str,
    count: Option<f64>,
) -> Result<Option<Distribution>, String> {
    let Some(figures) = within.opt_obj(name, name)? else {
        return Ok(None);
    };
    let names = [
        None,
        Some("mean"),
        Some("median"),
        Some("min"),
        Some("max"),
        None,
        Some("p90"),
        Some("p95"),
        Some("p99"),
        Some("p99.9"),
    ];
    let read = Figures::read(names, &|k| figures.opt_num(k))?;
    Ok(Figures {
        count: count.map(|c| c as u64),
        ..read
    }
    .distribution(None))
}

/// What a stage report lacks: per-request figures, power, server token counts and the model,
/// and at a rate the requests in flight.
fn stage_absent(mode: LoadMode) -> BTreeMap<String, String> {
    super::absent_notes(&[
        Some((absent::PER_REQUEST, "inference-perf's stage reports hold no per-request figures (its per-request report does not say which stage a request belongs to): no goodput")),
        Some((absent::POWER, "inference-perf's lifecycle reports hold no GPU power")),
        Some((absent::SERVER_TOKENS, "inference-perf counts output tokens with the client's tokenizer and keeps no server count (usage): its throughput and TPOT are in that tokenizer's tokens, which differ from the model's when the tokenizer is another")),
        Some((absent::MODEL, "inference-perf's stage reports do not name the model (its config.yaml does)")),
        (mode == LoadMode::Rate).then_some((
            absent::CONCURRENCY,
            "inference-perf's rate stages record no requests in flight: the stages are placed in order of their rates",
        )),
    ])
}

fn measurement() -> Measurement {
    const POOLING: [(&str, &str); 5] = [
        ("ttft", "inference-perf: one sample per successful streamed request, from its start to its first token"),
        ("tpot", "inference-perf: one sample per successful request, (last token − first token) / (output tokens − 1)"),
        ("itl", "inference-perf: every gap between successive tokens of every successful request, pooled"),
        ("e2e", "inference-perf's request_latency: one sample per successful request"),
        ("throughput", "inference-perf: output tokens of successful requests over the stage, first start to last end"),
    ];
    super::measurement(
        TokenSource::Tokenizer,
        "inference-perf: from the request's start to the first token",
        &POOLING,
    )
}
