//! `vllm bench serve --save-result` JSON: one run at one load (a sweep is several files). The
//! summary holds mean, median, standard deviation and the `--metric-percentiles` (99 by default)
//! of TTFT, TPOT, ITL and E2E in milliseconds; with `--save-detailed`, every request's TTFT,
//! token gaps, lengths and error are there too, and make per-request columns (goodput). The file
//! names no vLLM version: it is read by the keys vLLM 0.33 writes, and refused when those are
//! missing.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::{numbers, Obj};
use super::level::{columns, decode_speeds, successful, tpots, Figures, Request};
use super::{absent, FormatError, Run, RunLevel};
use crate::schema::{
    Arrivals, Level, LevelMetrics, LoadMode, Measurement, RequestColumns, RequestCounts,
    TokenSource,
};
use crate::stats::Distribution;

/// The vLLM release the reader was tested on.
pub const TESTED: &str = "vllm 0.33.0";

const TOOL: &str = "vLLM bench serve";
const FORMAT: &str = "vLLM bench serve result";

/// Keys every result of a benchmark has, since vLLM added failed requests and per-request
/// latencies to its results.
const REQUIRED: [&str; 6] = [
    "completed",
    "failed",
    "duration",
    "output_throughput",
    "request_throughput",
    "latencies",
];

pub(crate) fn read(value: &Value) -> Result<Vec<Run>, FormatError> {
    super::single(read_run(value), FORMAT)
}

fn read_run(value: &Value) -> Result<Run, String> {
    let top = Obj::new(value, "")?;
    if let Some(missing) = REQUIRED.iter().find(|k| !top.has(k)) {
        return Err(format!(
            "has no `{missing}`: not a result this reader knows (written by a vLLM older or newer than the one tested, {TESTED}); save it again with a recent `vllm bench serve --save-result`"
        ));
    }
    if !top.has("mean_ttft_ms") {
        return Err("has no TTFT figures: a pooling (embedding) benchmark, or one run without a tokenizer; only generation benchmarks are read".into());
    }
    let completed = top.num("completed")?;
    let failed = top.num("failed")?;
    let duration = top.num("duration")?;
    let requests = per_request(&top)?;
    let model = top
        .opt_str("model_id")
        .ok_or("has no `model_id`")?
        .to_string();
    let load = Load::of(&top)?;
    let metrics = level_metrics(&top, &requests, completed, failed)?;
    let total_input = top.opt_num("total_input_tokens")?;
    let total_output = top.opt_num("total_output_tokens")?;
    let per_request_mean = |total: Option<f64>| total.map_or(1.0, |t| t / completed.max(1.0));
    let level = Level {
        concurrency: load.concurrency(&requests, &top),
        request_rate: load.rate,
        duration_s: duration,
        requests: RequestCounts {
            ok: completed as u64,
            incomplete: 0,
            errored: failed as u64,
            error_kinds: BTreeMap::new(),
        },
        metrics,
        system_output_tok_s: top.num("output_throughput")?,
        system_input_tok_s: total_input.filter(|_| duration > 0.0).map(|t| t / duration),
        requests_per_s: Some(top.num("request_throughput")?),
        per_request: columns(&requests),
        ..super::level::empty()
    };
    let absent = super::absent_notes(&[
        requests.is_empty().then_some((
            absent::PER_REQUEST,
            "vLLM result saved without --save-detailed: no per-request TTFTs, so no goodput, decode speeds or token counts per request",
        )),
        Some((absent::POWER, "vLLM bench serve records no GPU power")),
    ]);
    let labels = super::text_map(
        &mut top
            .map()
            .iter()
            .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
    );
    let gpu = ["gpu", "hardware", "device"]
        .iter()
        .find_map(|k| labels.get(*k).cloned());
    let backend = top.opt_str("backend").or(top.opt_str("endpoint_type"));
    let mut run = Run::of(TOOL, model, measurement(), absent);
    run.provenance.command = Some(load.command(&top, &run.model));
    run.engine.api = backend.map(super::api_of);
    run.gpu = gpu;
    run.started_at = started_at(top.opt_str("date"));
    run.labels = labels;
    run.input_tokens = per_request_mean(total_input);
    run.output_tokens = per_request_mean(total_output);
    run.levels = vec![RunLevel {
        mode: load.mode,
        arrivals: load.arrivals,
        load: load.key,
        level,
    }];
    Ok(run)
}

/// The level's distributions: each figure vLLM summarised, with its samples where the result
/// kept every request (`--save-detailed`).
fn level_metrics(
    top: &Obj<'_>,
    requests: &[Request],
    completed: f64,
    failed: f64,
) -> Result<LevelMetrics, String> {
    // Every successful request has a TTFT and an E2E: their sample count is `completed`.
    let metric = |name: &str, samples: Option<Vec<f64>>| {
        summary(top, name).map(|f| {
            f.map(|f| Figures {
                count: matches!(name, "ttft" | "e2el").then_some(completed as u64),
                ..f.scaled(1e-3)
            })
            .and_then(|f| f.distribution(samples.as_deref()))
        })
    };
    let ok = |f: fn(&Request) -> Option<f64>| successful(requests, f);
    let gaps = (!requests.is_empty()).then(|| {
        requests
            .iter()
            .filter(|r| r.is_ok())
            .flat_map(|r| r.gaps_s.iter().flatten().copied())
            .collect::<Vec<f64>>()
    });
    let tpots = tpots(requests);
    let tokens = |f: fn(&Request) -> Option<f64>| {
        ok(f).and_then(|samples| Distribution::from_samples(&samples))
    };
    let input_lens = top
        .opt_array("input_lens")?
        .map(|items| numbers(items, "input_lens"))
        .transpose()?;
    let input_samples: Option<Vec<f64>> = input_lens.map(|lens| {
        lens.iter()
            .zip(requests)
            .filter(|(_, r)| r.is_ok())
            .filter_map(|(l, _)| *l)
            .collect()
    });
    Ok(LevelMetrics {
        ttft_s: metric("ttft", ok(|r| r.ttft_s))?,
        tpot_s: metric("tpot", tpots)?,
        itl_s: metric("itl", gaps)?,
        e2e_s: match metric("e2el", ok(|r| r.e2e_s))? {
            Some(d) => Some(d),
            // vLLM summarises E2E only when asked (`--percentile-metrics …,e2el`), but keeps
            // every request's latency: with no failure among them, they are the successes'.
            None => match ok(|r| r.e2e_s) {
                Some(samples) => Distribution::from_samples(&samples),
                None => e2e_without_summary(top, failed)?,
            },
        },
        decode_tok_s: Distribution::from_samples(&decode_speeds(requests)),
        input_tokens: input_samples.and_then(|s| Distribution::from_samples(&s)),
        output_tokens: tokens(|r| r.output_tokens.map(f64::from)),
        ..LevelMetrics::default()
    })
}

/// Keys vLLM writes itself; other top-level text is the user's `--metadata KEY=VALUE`, kept
/// as labels.
const KNOWN: [&str; 8] = [
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "request_rate",
    "ramp_up_strategy",
];

/// The figures of one metric (`ttft`, `tpot`, `itl`, `e2el`): mean, median, standard deviation
/// and each `p<N>_<metric>_ms` the run asked for; `None` when the run reported none of it.
fn summary(top: &Obj<'_>, name: &str) -> Result<Option<Figures>, String> {
    let figure = |stat: &str| top.opt_num(&format!("{stat}_{name}_ms"));
    let (mean, median) = (figure("mean")?, figure("median")?);
    if mean.is_none() && median.is_none() {
        return Ok(None);
    }
    // `--metric-percentiles 0,…,100` name the minimum and maximum `p0` and `p100`.
    let names = [
        None,
        Some("mean"),
        Some("median"),
        Some("p0"),
        Some("p100"),
        Some("std"),
        Some("p90"),
        Some("p95"),
        Some("p99"),
        Some("p99.9"),
    ];
    Figures::read(names, &figure).map(Some)
}

/// E2E from the per-request `latencies` when every request succeeded (they then are the
/// successful ones), with the sample count.
fn e2e_without_summary(top: &Obj<'_>, failed: f64) -> Result<Option<Distribution>, String> {
    if failed > 0.0 {
        return Ok(None);
    }
    let Some(items) = top.opt_array("latencies")? else {
        return Ok(None);
    };
    let latencies: Vec<f64> = numbers(items, "latencies")?.into_iter().flatten().collect();
    Ok(Distribution::from_samples(&latencies))
}

/// Each request of a `--save-detailed` result; empty without one.
fn per_request(top: &Obj<'_>) -> Result<Vec<Request>, String> {
    let (Some(ttfts), Some(errors)) = (top.opt_array("ttfts")?, top.opt_array("errors")?) else {
        return Ok(Vec::new());
    };
    let ttfts = numbers(ttfts, "ttfts")?;
    let latencies = match top.opt_array("latencies")? {
        Some(items) => numbers(items, "latencies")?,
        None => vec![None; ttfts.len()],
    };
    let output_lens = match top.opt_array("output_lens")? {
        Some(items) => numbers(items, "output_lens")?,
        None => vec![None; ttfts.len()],
    };
    let itls = top.opt_array("itls")?.unwrap_or_default();
    let lengths = [errors.len(), latencies.len(), output_lens.len()];
    if let Some(n) = lengths.iter().find(|&&n| n != ttfts.len()) {
        return Err(format!(
            "its per-request lists differ in length ({} TTFTs, {n} in another list); the file may be cut short or edited",
            ttfts.len()
        ));
    }
    (0..ttfts.len())
        .map(|i| {
            let ok = errors[i].as_str().is_some_and(str::is_empty);
            let gaps = match itls.get(i) {
                Some(Value::Array(gaps)) => Some(
                    numbers(gaps, &format!("itls[{i}]"))?
                        .into_iter()
                        .flatten()
                        .collect(),
                ),
                _ => None,
            };
            Ok(Request {
                status: if ok {
                    RequestColumns::OK
                } else {
                    RequestColumns::ERRORED
                },
                ttft_s: ttfts[i].filter(|_| ok),
                e2e_s: latencies[i].filter(|_| ok),
                output_tokens: output_lens[i].map(|n| n as u32),
                gaps_s: gaps,
            })
        })
        .collect()
}

/// How vLLM applied the load: `--max-concurrency` alone keeps that many requests in flight
/// (peak); no limit and an infinite rate sends every prompt at once (burst); a finite
/// `--request-rate` is open-loop arrivals (rate).
struct Load {
    mode: LoadMode,
    arrivals: Option<Arrivals>,
    rate: Option<f64>,
    max_concurrency: Option<f64>,
    key: f64,
}

impl Load {
    fn of(top: &Obj<'_>) -> Result<Load, String> {
        let rate = match top.get("request_rate") {
            Some(Value::String(s)) if s == "inf" => None,
            _ => top.opt_num("request_rate")?,
        };
        let max_concurrency = top.opt_num("max_concurrency")?;
        let prompts = top.opt_num("num_prompts")?;
        Ok(match (rate, max_concurrency) {
            (Some(rate), _) => Load {
                mode: LoadMode::Rate,
                // Burstiness 1 is a Poisson process; any other is gamma-distributed gaps.
                arrivals: (top.opt_num("burstiness")? == Some(1.0)).then_some(Arrivals::Poisson),
                rate: Some(rate),
                max_concurrency,
                key: rate,
            },
            (None, Some(n)) => Load {
                mode: LoadMode::Peak,
                arrivals: None,
                rate: None,
                max_concurrency,
                key: n,
            },
            (None, None) => Load {
                mode: LoadMode::Burst,
                arrivals: None,
                rate: None,
                max_concurrency,
                key: prompts.or(top.opt_num("completed")?).unwrap_or(1.0),
            },
        })
    }

    /// The level's concurrency: the limit in peak mode, the prompts sent at once in burst mode,
    /// and at a rate the most requests in flight (from the requests' start times when the file
    /// has them, else vLLM's `max_concurrent_requests`, the most active within one second).
    fn concurrency(&self, requests: &[Request], top: &Obj<'_>) -> u32 {
        match self.mode {
            LoadMode::Rate => {
                let starts = top.opt_array("start_times").ok().flatten();
                let spans = starts.map(|starts| {
                    starts
                        .iter()
                        .zip(requests)
                        .filter_map(|(s, r)| Some((s.as_f64()?, s.as_f64()? + r.e2e_s?)))
                        .collect::<Vec<_>>()
                });
                spans
                    .and_then(|s| super::level::most_in_flight(s.into_iter()))
                    .or_else(|| {
                        top.opt_num("max_concurrent_requests")
                            .ok()
                            .flatten()
                            .map(|n| n as u32)
                    })
                    .unwrap_or(1)
            }
            _ => self.key.max(1.0) as u32,
        }
    }

    /// The arguments the file records, as a command line.
    fn command(&self, top: &Obj<'_>, model: &str) -> String {
        let mut args = vec!["vllm bench serve".to_string()];
        if let Some(backend) = top.opt_str("backend") {
            args.push(format!("--backend {backend}"));
        }
        args.push(format!("--model {model}"));
        if let Ok(Some(n)) = top.opt_num("num_prompts") {
            args.push(format!("--num-prompts {n}"));
        }
        if let Some(rate) = self.rate {
            args.push(format!("--request-rate {rate}"));
            if let Ok(Some(b)) = top.opt_num("burstiness") {
                args.push(format!("--burstiness {b}"));
            }
        }
        if let Some(n) = self.max_concurrency {
            args.push(format!("--max-concurrency {n}"));
        }
        args.push("(as recorded in the result file)".into());
        args.join(" ")
    }
}

/// `date` as vLLM writes it (`20251127-065500`, the client's local time, no zone) in RFC 3339
/// shape without a zone; as written when it is not that.
fn started_at(date: Option<&str>) -> String {
    let Some(date) = date else {
        return "not recorded".into();
    };
    let digits: Vec<&str> = date.split('-').collect();
    match digits.as_slice() {
        [d, t] if d.len() == 8 && t.len() == 6 => format!(
            "{}-{}-{}T{}:{}:{} (local time)",
            &d[..4],
            &d[4..6],
            &d[6..],
            &t[..2],
            &t[2..4],
            &t[4..]
        ),
        _ => date.to_string(),
    }
}

fn measurement() -> Measurement {
    const POOLING: [(&str, &str); 6] = [
        ("ttft", "vLLM: one sample per successful request, from the request's send to the first chunk with content"),
        ("tpot", "vLLM: one sample per successful request of more than one token: (E2E − TTFT) / (output tokens − 1), as infermeter"),
        ("itl", "vLLM: every gap between successive content chunks of every successful request, pooled (a chunk of several tokens is one gap; infermeter spreads such a gap over its tokens)"),
        ("e2e", "vLLM: one sample per successful request, from its send to its last chunk"),
        ("stddev", "vLLM's standard deviations are of the population (numpy's default), infermeter's of the sample"),
        ("throughput", "vLLM: output tokens of successful requests over the whole run, first send to last response"),
    ];
    super::measurement(
        TokenSource::Usage,
        "vLLM bench serve: from sending the request to the first chunk carrying text",
        &POOLING,
    )
}
