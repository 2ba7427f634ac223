//! AIPerf's `profile_export_aiperf.json` (one run at one load; a sweep is several runs), with
//! its `profile_export.jsonl` records when given beside it. The summary holds avg, min, max,
//! std and p1…p99 of every metric; the records, each request's TTFT, latency, output length
//! and chunk gaps, make per-request columns (goodput). Read for `schema_version` 1.x, the
//! export format of AIPerf 0.13; another major version is refused.

use std::cell::Cell;
use std::collections::BTreeMap;

use serde_json::Value;

use super::json::{numbers, Obj};
use super::level::{columns, decode_speeds, most_in_flight, successful, tpots, Figures, Request};
use super::{absent, detect, Format, FormatError, ImportError, Input, Run, RunLevel};
use crate::schema::{
    Arrivals, ErrorKind, Level, LevelMetrics, LoadMode, Measurement, RequestColumns, RequestCounts,
    TokenSource,
};
use crate::stats::Distribution;

/// The AIPerf release and export schema the reader was tested on.
pub const TESTED: &str = "aiperf 0.13.0 (export schema 1.4)";

const TOOL: &str = "AIPerf";

/// Whether `value` is one line of `profile_export.jsonl`: a request's `metadata` and `metrics`.
pub(crate) fn is_record(value: &Value) -> bool {
    value
        .get("metadata")
        .is_some_and(|m| m.get("benchmark_phase").is_some())
        && (value.get("metrics").is_some() || value.get("error").is_some())
}

/// The records files among the inputs, each paired with the summary in its own folder (AIPerf
/// writes both into one artifact folder), never by position: `import A/ B/` where A has no
/// records must not give A B's. Files named without a folder (dropped on the page) pair only
/// when there is one summary among them.
pub(crate) struct Records<'a> {
    /// (summary position, records file name, its requests and their start/end, seconds).
    pairs: Vec<(usize, &'a str, Parsed)>,
    used: Vec<Cell<bool>>,
}

/// A records file's measured requests, and each one's start and end (seconds).
#[derive(Default)]
struct Parsed {
    requests: Vec<Request>,
    spans: Vec<(f64, f64)>,
}

impl<'a> Records<'a> {
    pub(crate) fn find(inputs: &[Input<'a>]) -> Result<Records<'a>, ImportError> {
        let mut summaries = Vec::new();
        let mut files = Vec::new();
        for (position, input) in inputs.iter().enumerate() {
            match detect(input.text) {
                Some(Format::AiperfSummary) => summaries.push((position, folder(input.name))),
                Some(Format::AiperfRecords) => files.push(*input),
                _ => {}
            }
        }
        let mut pairs = Vec::new();
        for input in &files {
            let parsed = parse_records(input.text).map_err(|message| ImportError {
                file: input.name.to_string(),
                format: Some(Format::AiperfRecords.label().into()),
                message,
            })?;
            // A records file with no summary to join stays unpaired: `unused` names it.
            let summary = summary_of(&summaries, folder(input.name)).unwrap_or(usize::MAX);
            pairs.push((summary, input.name, parsed));
        }
        let used = pairs.iter().map(|_| Cell::new(false)).collect();
        Ok(Records { pairs, used })
    }

    fn index(&self, summary: usize) -> Option<usize> {
        self.pairs.iter().position(|(s, _, _)| *s == summary)
    }

    /// The records paired with the summary at `summary`, for the summary's reader.
    fn for_summary(&self, summary: usize) -> Option<&Parsed> {
        let i = self.index(summary)?;
        self.used[i].set(true);
        Some(&self.pairs[i].2)
    }

    pub(crate) fn name_for(&self, summary: usize) -> Option<&'a str> {
        self.index(summary).map(|i| self.pairs[i].1)
    }

    /// A records file that no summary took.
    pub(crate) fn unused(&self) -> Option<&'a str> {
        self.pairs
            .iter()
            .zip(&self.used)
            .find(|(_, used)| !used.get())
            .map(|((_, name, _), _)| *name)
    }
}

/// The folder part of a file's name (`runs/c4` of `runs/c4/profile_export.jsonl`), if any.
fn folder(name: &str) -> Option<&str> {
    name.rsplit_once(['/', '\\']).map(|(folder, _)| folder)
}

/// The position of the summary a records file in `folder` goes with: the one summary in the
/// same folder; without folders, the only summary there is.
fn summary_of(summaries: &[(usize, Option<&str>)], folder: Option<&str>) -> Option<usize> {
    let mut same = summaries
        .iter()
        .filter(|(_, f)| folder.is_some() && *f == folder);
    match (same.next(), same.next()) {
        (Some((position, _)), None) => Some(*position),
        (Some(_), Some(_)) => None,
        (None, _) => match summaries {
            [(position, None)] if folder.is_none() => Some(*position),
            _ => None,
        },
    }
}

/// The measured (profiling-phase) requests of a records file.
fn parse_records(text: &str) -> Result<Parsed, String> {
    let mut requests = Vec::new();
    let mut spans = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| {
            format!(
                "line {} is not valid JSON ({}); the file may be cut short",
                n + 1,
                crate::load::without_position(&e)
            )
        })?;
        let at = |message: String| format!("line {}: {message}", n + 1);
        let record = Obj::new(&value, "").map_err(at)?;
        let metadata = record.obj("metadata", "metadata").map_err(at)?;
        if metadata.opt_str("benchmark_phase") != Some("profiling")
            || metadata.get("was_cancelled").and_then(Value::as_bool) == Some(true)
        {
            continue;
        }
        let metric = |name: &str| -> Result<Option<&Value>, String> {
            let Some(metrics) = record.opt_obj("metrics", "metrics")? else {
                return Ok(None);
            };
            Ok(metrics.get(name).and_then(|m| m.get("value")))
        };
        let ms = |name: &str| -> Result<Option<f64>, String> {
            Ok(metric(name)?.and_then(Value::as_f64).map(|v| v * 1e-3))
        };
        let ok = record.get("error").is_none();
        let gaps = match metric("inter_chunk_latency").map_err(at)? {
            Some(Value::Array(items)) => numbers(items, "inter_chunk_latency")
                .map_err(at)?
                .into_iter()
                .flatten()
                .map(|v| v * 1e-3)
                .collect(),
            // A single-chunk answer, or a failed request: no gaps.
            _ => Vec::new(),
        };
        let request = Request {
            status: if ok {
                RequestColumns::OK
            } else {
                RequestColumns::ERRORED
            },
            ttft_s: ms("time_to_first_token").map_err(at)?,
            e2e_s: ms("request_latency").map_err(at)?,
            // The server's own count (`usage`) where AIPerf kept it, else its tokenizer's.
            output_tokens: match metric("usage_completion_tokens").map_err(at)? {
                Some(usage) => Some(usage),
                None => metric("output_sequence_length").map_err(at)?,
            }
            .and_then(Value::as_f64)
            .map(|v| v as u32),
            gaps_s: Some(gaps),
        };
        let ns = |key: &str| metadata.opt_num(key).ok().flatten().map(|v| v * 1e-9);
        if let (Some(start), Some(end)) = (ns("request_start_ns"), ns("request_end_ns")) {
            spans.push((start, end));
        }
        requests.push(request);
    }
    if requests.is_empty() {
        return Err("holds no measured (profiling) requests".into());
    }
    Ok(Parsed { requests, spans })
}

/// The summary's figures of one metric (`time_to_first_token`), scaled to the report's unit.
fn figures(top: &Obj<'_>, name: &str, scale: f64) -> Result<Option<Figures>, String> {
    let Some(metric) = top.opt_obj(name, name)? else {
        return Ok(None);
    };
    // AIPerf writes no p99.9.
    let names = [
        Some("count"),
        Some("avg"),
        Some("p50"),
        Some("min"),
        Some("max"),
        Some("std"),
        Some("p90"),
        Some("p95"),
        Some("p99"),
        None,
    ];
    let figures = Figures::read(names, &|k| metric.opt_num(k))?;
    Ok(Some(figures.scaled(scale)))
}

/// A scalar of the summary (`{"unit": …, "avg": x}`).
fn scalar(top: &Obj<'_>, name: &str) -> Result<Option<f64>, String> {
    match top.opt_obj(name, name)? {
        Some(metric) => metric.opt_num("avg"),
        None => Ok(None),
    }
}

pub(crate) fn read(
    value: &Value,
    records: &Records<'_>,
    position: usize,
) -> Result<Vec<Run>, FormatError> {
    let top = Obj::new(value, "").map_err(|m| FormatError::new(TOOL, m))?;
    let schema = top.opt_str("schema_version").unwrap_or("absent");
    let version = top.opt_str("aiperf_version").map(str::to_string);
    let format = format!(
        "AIPerf {} summary (export schema {schema})",
        version.as_deref().unwrap_or("of unknown version")
    );
    super::single(
        read_run(&top, schema, version, records.for_summary(position)),
        format,
    )
}

fn read_run(
    top: &Obj<'_>,
    schema: &str,
    version: Option<String>,
    parsed: Option<&Parsed>,
) -> Result<Run, String> {
    if !schema.starts_with("1.") {
        return Err(format!(
            "export schema {schema} is not one this reader knows (schema 1.x; tested on {TESTED}); update infermeter, or export the run again with AIPerf 0.13"
        ));
    }
    let config = top.obj("input_config", "input_config")?;
    let model = config
        .get("models")
        .and_then(|m| m.pointer("/items/0/name"))
        .and_then(Value::as_str)
        .ok_or("has no `input_config.models.items[0].name` (the model)")?
        .to_string();
    let endpoint = config.opt_obj("endpoint", "input_config.endpoint")?;
    let (mode, arrivals, key, rate) = profiling_load(&config)?;
    let ok_count = scalar(top, "request_count")?.ok_or("has no `request_count`")?;
    let errored = scalar(top, "error_request_count")?.unwrap_or(0.0);
    let duration = scalar(top, "benchmark_duration")?.ok_or("has no `benchmark_duration`")?;
    let none = Parsed::default();
    let parsed = parsed.unwrap_or(&none);
    let (requests, spans) = (parsed.requests.as_slice(), parsed.spans.as_slice());
    let counts = TokenCounts::read(top)?;
    let metrics = level_metrics(top, requests, &counts)?;
    if metrics.ttft_s.is_none() {
        return Err(
            "has no `time_to_first_token`: a run without --streaming, which has no TTFT to chart"
                .into(),
        );
    }
    let level = Level {
        concurrency: match mode {
            LoadMode::Rate => most_in_flight(spans.iter().copied()).unwrap_or(1),
            _ => key.max(1.0) as u32,
        },
        request_rate: rate,
        duration_s: duration,
        requests: RequestCounts {
            ok: ok_count as u64,
            incomplete: 0,
            errored: errored as u64,
            error_kinds: error_kinds(top)?,
        },
        metrics,
        system_output_tok_s: counts.served(
            scalar(top, "output_token_throughput")?.ok_or("has no `output_token_throughput`")?,
        ),
        system_input_tok_s: scalar(top, "input_token_throughput")?,
        requests_per_s: scalar(top, "request_throughput")?,
        per_request: columns(requests),
        ..super::level::empty()
    };
    let absent = super::absent_notes(&[
        requests.is_empty().then_some((
            absent::PER_REQUEST,
            "AIPerf summary without records (profile_export.jsonl): no goodput",
        )),
        Some((absent::ITL, "AIPerf measures inter-token latency per request ((latency − TTFT) / (output − 1)), shown as TPOT; it has no pooled per-token ITL")),
        Some((absent::POWER, "GPU power is in AIPerf's separate telemetry export, not read here")),
    ]);
    let note = counts.note(top, &level)?;
    let mut run = Run::of(TOOL, model, measurement(counts.source(), note), absent);
    stamp(&mut run, top, endpoint, version, schema)?;
    run.input_tokens = mean_of(top, "input_sequence_length");
    run.output_tokens = mean_of(top, "output_sequence_length");
    run.levels = vec![RunLevel {
        mode,
        arrivals,
        load: key,
        level,
    }];
    Ok(run)
}

/// Where the run came from: AIPerf's version and export schema, its command, the endpoint and
/// the run's start and end.
fn stamp(
    run: &mut Run,
    top: &Obj<'_>,
    endpoint: Option<Obj<'_>>,
    version: Option<String>,
    schema: &str,
) -> Result<(), String> {
    let run_info = top.opt_obj("run_info", "run_info")?;
    run.provenance.version = version;
    run.provenance.format = Some(format!("export schema {schema}"));
    run.provenance.command = run_info
        .and_then(|r| r.opt_str("cli_command"))
        .map(str::to_string);
    run.engine.api = endpoint.and_then(|e| e.opt_str("type")).map(super::api_of);
    run.engine.base_url = endpoint
        .and_then(|e| e.get("urls"))
        .and_then(|u| u.get(0))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(start) = top.opt_str("start_time") {
        run.started_at = start.to_string();
    }
    run.finished_at = top.opt_str("end_time").map(str::to_string);
    Ok(())
}

/// The profiling phase's load: (mode, arrivals of a rate, the series key, the rate).
fn profiling_load(
    config: &Obj<'_>,
) -> Result<(LoadMode, Option<Arrivals>, f64, Option<f64>), String> {
    let phase = config
        .opt_array("phases")?
        .and_then(|phases| {
            phases
                .iter()
                .find(|p| p.get("kind").and_then(Value::as_str) == Some("profiling"))
        })
        .ok_or("has no profiling phase in `input_config.phases` (the load)")?;
    let phase = Obj::new(phase, "input_config.phases[profiling]")?;
    let rate = phase.opt_num("rate")?;
    let concurrency = phase.opt_num("concurrency")?;
    let (mode, arrivals, key) = match (rate, concurrency) {
        (Some(rate), _) => (
            LoadMode::Rate,
            match phase.opt_str("type") {
                Some("poisson") => Some(Arrivals::Poisson),
                Some("constant") => Some(Arrivals::Constant),
                _ => None,
            },
            rate,
        ),
        (None, Some(n)) => (LoadMode::Peak, None, n),
        (None, None) => {
            return Err("its profiling phase has neither a concurrency nor a request rate; only those loads are read".into())
        }
    };
    Ok((mode, arrivals, key, rate))
}

/// The level's distributions from the summary's figures, with the records' samples where given.
/// Where the server's token counts differ from AIPerf's, the figures per token come from the
/// records (counted by the server) or, without them, stay AIPerf's (the note says so).
fn level_metrics(
    top: &Obj<'_>,
    requests: &[Request],
    counts: &TokenCounts,
) -> Result<LevelMetrics, String> {
    let ok_samples = |f: fn(&Request) -> Option<f64>| successful(requests, f);
    let dist = |name: &str, scale: f64, samples: Option<Vec<f64>>| {
        figures(top, name, scale).map(|f| f.and_then(|f| f.distribution(samples.as_deref())))
    };
    let decode = (!requests.is_empty()).then(|| decode_speeds(requests));
    let (tpot_s, decode_tok_s) = match (counts.differ(), requests.is_empty()) {
        (Some(_), false) => (
            tpots(requests).and_then(|s| Distribution::from_samples(&s)),
            decode.and_then(|s| Distribution::from_samples(&s)),
        ),
        // AIPerf's inter-token latency is per request, (latency − TTFT) / (output − 1):
        // infermeter's TPOT.
        _ => (
            dist("inter_token_latency", 1e-3, None)?,
            dist("output_token_throughput_per_user", 1.0, decode)?,
        ),
    };
    let output = match counts.served {
        Some(_) => "usage_completion_tokens",
        None => "output_sequence_length",
    };
    Ok(LevelMetrics {
        ttft_s: dist("time_to_first_token", 1e-3, ok_samples(|r| r.ttft_s))?,
        e2e_s: dist("request_latency", 1e-3, ok_samples(|r| r.e2e_s))?,
        tpot_s,
        // Its chunk gaps, pooled, are infermeter's inter-chunk latency.
        inter_chunk_s: dist("inter_chunk_latency", 1e-3, None)?,
        decode_tok_s,
        input_tokens: dist("input_sequence_length", 1.0, None)?,
        output_tokens: dist(output, 1.0, None)?,
        ..LevelMetrics::default()
    })
}

/// Output tokens per request as the server counted them (`usage_completion_tokens`: AIPerf
/// keeps the server's `usage` when it sends one) and as AIPerf's tokenizer did
/// (`output_sequence_length`). The figures use the server's: a client tokenizer other than the
/// model's counts other tokens.
struct TokenCounts {
    served: Option<f64>,
    tool: Option<f64>,
}

impl TokenCounts {
    fn read(top: &Obj<'_>) -> Result<TokenCounts, String> {
        Ok(TokenCounts {
            served: scalar(top, "usage_completion_tokens")?,
            tool: scalar(top, "output_sequence_length")?,
        })
    }

    /// (server's, AIPerf's) mean per request where they differ.
    fn differ(&self) -> Option<(f64, f64)> {
        match (self.served, self.tool) {
            (Some(s), Some(t)) if s > 0.0 && t > 0.0 && (s - t).abs() > 1e-9 => Some((s, t)),
            _ => None,
        }
    }

    /// A throughput AIPerf computed from its tokenizer's counts, in the server's tokens (the
    /// same requests over the same time: the ratio of the means).
    fn served(&self, by_tool: f64) -> f64 {
        self.differ().map_or(by_tool, |(s, t)| by_tool * s / t)
    }

    fn source(&self) -> TokenSource {
        match self.served {
            Some(_) => TokenSource::Usage,
            None => TokenSource::Tokenizer,
        }
    }

    /// The report's word on the counts: AIPerf's own beside the server's where they differ.
    fn note(&self, top: &Obj<'_>, level: &Level) -> Result<Option<String>, String> {
        let Some((served, tool)) = self.differ() else {
            return Ok(None);
        };
        let throughput = scalar(top, "output_token_throughput")?.unwrap_or(f64::NAN);
        let tpot_ms = |d: Option<Distribution>| {
            d.map_or("n/a".to_string(), |d| format!("{:.1} ms", d.mean * 1e3))
        };
        let tool_tpot =
            figures(top, "inter_token_latency", 1e-3)?.and_then(|f| f.distribution(None));
        Ok(Some(format!(
            "the server's counts (usage): {served:.1} output tokens per request, {:.0} tok/s, TPOT {}; AIPerf's tokenizer counted {tool:.1} per request, {throughput:.0} tok/s, TPOT {}",
            level.system_output_tok_s,
            tpot_ms(level.metrics.tpot_s),
            tpot_ms(tool_tpot),
        )))
    }
}

/// Failed requests by HTTP status, from `error_summary`.
fn error_kinds(top: &Obj<'_>) -> Result<BTreeMap<ErrorKind, u64>, String> {
    let mut kinds = BTreeMap::new();
    for e in top.opt_array("error_summary")?.unwrap_or_default() {
        let code = e.pointer("/error_details/code").and_then(Value::as_u64);
        let count = e.get("count").and_then(Value::as_u64);
        if let (Some(code @ 100..=999), Some(count)) = (code, count) {
            *kinds.entry(ErrorKind::Http(code as u16)).or_insert(0) += count;
        }
    }
    Ok(kinds)
}

fn mean_of(top: &Obj<'_>, name: &str) -> f64 {
    top.get(name)
        .and_then(|m| m.get("avg"))
        .and_then(Value::as_f64)
        .unwrap_or(1.0)
}

fn measurement(source: TokenSource, tokens: Option<String>) -> Measurement {
    const POOLING: [(&str, &str); 6] = [
        ("ttft", "AIPerf: one sample per successful request, from the request's start to its first response with content"),
        ("tpot", "AIPerf's inter_token_latency: one sample per successful request, (latency − TTFT) / (output tokens − 1), as infermeter's TPOT"),
        ("inter_chunk", "AIPerf: every gap between successive response chunks of every successful request, pooled"),
        ("e2e", "AIPerf's request_latency: one sample per successful request"),
        ("decode_tok_s", "AIPerf's output_token_throughput_per_user: one sample per successful request, the inverse of its inter-token latency"),
        ("throughput", "AIPerf: output tokens over the benchmark duration, first request to last response"),
    ];
    let mut measurement = super::measurement(
        source,
        "AIPerf: from the request's start to the first response carrying content",
        &POOLING,
    );
    if let Some(tokens) = tokens {
        measurement.pooling.insert("output_tokens".into(), tokens);
    }
    measurement
}
