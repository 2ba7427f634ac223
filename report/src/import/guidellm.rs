//! guidellm's `benchmarks.json`: every benchmark of a run is a level (synchronous and
//! concurrent streams keep N requests in flight, throughput sends as many as it may at once,
//! constant and Poisson rates are open-loop arrivals; a sweep is several of these). Each metric
//! has mean, median, std_dev, min, max, count and p0.1…p99.9 over successful requests, and the
//! requests themselves (unless sampled) give per-request columns. Read for report format
//! `metadata.version` 2, written by guidellm 0.8; another version is refused.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::Obj;
use super::level::{columns, decode_speeds, most_in_flight, successful, tpots, Figures, Request};
use super::{absent, FormatError, Run, RunLevel};
use crate::schema::{
    Arrivals, Level, LevelMetrics, LoadMode, Measurement, RequestColumns, RequestCounts,
    TokenSource,
};
use crate::stats::Distribution;

/// The guidellm release and report format the reader was tested on.
pub const TESTED: &str = "guidellm 0.8.1 (report format 2)";

const TOOL: &str = "guidellm";

pub(crate) fn read(value: &Value) -> Result<Vec<Run>, FormatError> {
    let top = Obj::new(value, "").map_err(|m| FormatError::new(TOOL, m))?;
    let metadata = top
        .obj("metadata", "metadata")
        .map_err(|m| FormatError::new(TOOL, m))?;
    let version = metadata.opt_str("guidellm_version").map(str::to_string);
    let report_format = metadata
        .opt_num("version")
        .ok()
        .flatten()
        .map_or("absent".to_string(), |v| v.to_string());
    let format = format!(
        "guidellm {} benchmarks.json (report format {report_format})",
        version.as_deref().unwrap_or("of unknown version")
    );
    super::single(read_run(&top, &report_format, version), format)
}

fn read_run(top: &Obj<'_>, report_format: &str, version: Option<String>) -> Result<Run, String> {
    if report_format != "2" {
        return Err(format!(
            "report format {report_format} is not one this reader knows (format 2; tested on {TESTED}); update infermeter, or run the benchmark again with guidellm 0.8"
        ));
    }
    let backend = top
        .get("config")
        .and_then(|c| c.pointer("/spec/backend"))
        .map(|b| Obj::new(b, "config.spec.backend"))
        .transpose()?;
    let model = backend
        .and_then(|b| b.opt_str("model"))
        .ok_or("has no `config.spec.backend.model` (the model)")?
        .to_string();
    let benchmarks = top
        .opt_array("benchmarks")?
        .filter(|b| !b.is_empty())
        .ok_or("holds no benchmarks")?;
    let mut absent = BTreeMap::new();
    let all = Benchmarks::read(benchmarks, &mut absent)?;
    absent.insert(absent::POWER.into(), "guidellm records no GPU power".into());
    let api = backend
        .and_then(|b| b.opt_str("request_format"))
        .map(super::api_of);
    let profile = top
        .get("config")
        .and_then(|c| c.pointer("/spec/profile/kind"))
        .and_then(Value::as_str);
    let mut run = Run::of(TOOL, model, measurement(), absent);
    run.provenance.version = version;
    run.provenance.format = Some(format!("report format {report_format}"));
    run.provenance.command = Some(format!(
        "guidellm run --profile kind={} (arguments in the file's `config.spec`)",
        profile.unwrap_or("?")
    ));
    run.engine.api = api;
    run.engine.base_url = backend
        .and_then(|b| b.opt_str("target"))
        .map(str::to_string);
    all.fill(&mut run);
    Ok(run)
}

/// What a run's benchmarks add up to: their levels, the limits of those with the throughput
/// strategy, the request-weighted token counts and the span of their times.
#[derive(Default)]
struct Benchmarks {
    levels: Vec<RunLevel>,
    throughput: Vec<String>,
    input: f64,
    output: f64,
    weight: f64,
    started: Option<f64>,
    finished: Option<f64>,
}

impl Benchmarks {
    /// Every benchmark as a level, noting in `absent` what their files lack.
    fn read(
        benchmarks: &[Value],
        absent: &mut BTreeMap<String, String>,
    ) -> Result<Benchmarks, String> {
        let mut all = Benchmarks::default();
        for (i, benchmark) in benchmarks.iter().enumerate() {
            let path = format!("benchmarks[{i}]");
            let at = |m: String| format!("{path}: {m}");
            let b = Obj::new(benchmark, "").map_err(at)?;
            let level = read_benchmark(&b, absent).map_err(at)?;
            all.add(&b, level);
        }
        Ok(all)
    }

    fn add(&mut self, b: &Obj<'_>, level: RunLevel) {
        let strategy = b.get("config").and_then(|c| c.pointer("/strategy/type_"));
        if strategy.and_then(Value::as_str) == Some("throughput") {
            self.throughput
                .push(format!("{} in flight at most", level.level.concurrency));
        }
        let requests = level.level.requests.ok as f64;
        if let Some(d) = &level.level.metrics.input_tokens {
            self.input += d.mean * requests;
        }
        if let Some(d) = &level.level.metrics.output_tokens {
            self.output += d.mean * requests;
        }
        self.weight += requests;
        let times = (b.opt_num("start_time"), b.opt_num("end_time"));
        if let (Ok(Some(start)), Ok(Some(end))) = times {
            self.started = Some(self.started.map_or(start, |s: f64| s.min(start)));
            self.finished = Some(self.finished.map_or(end, |f: f64| f.max(end)));
        }
        self.levels.push(level);
    }

    /// The run's strategy label, times, token counts and levels.
    fn fill(self, run: &mut Run) {
        if !self.throughput.is_empty() {
            let strategy = format!(
                "throughput (as many requests as it may: {})",
                self.throughput.join(", ")
            );
            run.labels.insert("guidellm strategy".into(), strategy);
        }
        if let Some(started) = self.started {
            run.started_at = unix_time(started);
        }
        run.finished_at = self.finished.map(unix_time);
        if self.weight > 0.0 {
            (run.input_tokens, run.output_tokens) =
                (self.input / self.weight, self.output / self.weight);
        }
        run.levels = self.levels;
    }
}

/// The load of a benchmark's strategy: its mode, arrivals, what orders the series (streams,
/// the most in flight, or the rate) and the rate of a rate level.
fn load_of(b: &Obj<'_>) -> Result<(LoadMode, Option<Arrivals>, f64, Option<f64>), String> {
    let strategy = b
        .get("config")
        .and_then(|c| c.get("strategy"))
        .ok_or("has no `config.strategy` (the load)")?;
    let strategy = Obj::new(strategy, "config.strategy")?;
    let kind = strategy.opt_str("type_").unwrap_or("?");
    let n = |key: &str| strategy.opt_num(key);
    Ok(match kind {
        "synchronous" => (LoadMode::Peak, None, 1.0, None),
        "concurrent" => (
            LoadMode::Peak,
            None,
            n("streams")?.ok_or("a concurrent strategy without `streams`")?,
            None,
        ),
        // As many requests as it may, at most `max_concurrency` in flight all along: a closed
        // loop at that concurrency (infermeter's peak), not one burst; the run's labels name
        // the strategy.
        "throughput" => (
            LoadMode::Peak,
            None,
            n("max_concurrency")?.ok_or("a throughput strategy without `max_concurrency`")?,
            None,
        ),
        "constant" | "poisson" | "async" => {
            let rate = n("rate")?.ok_or("a rate strategy without `rate`")?;
            let arrivals = match kind {
                "constant" => Some(Arrivals::Constant),
                "poisson" => Some(Arrivals::Poisson),
                _ => None,
            };
            (LoadMode::Rate, arrivals, rate, Some(rate))
        }
        other => return Err(format!("strategy \"{other}\" is not one this reader knows")),
    })
}

/// One benchmark as a level, noting in `absent` what its file lacks.
fn read_benchmark(b: &Obj<'_>, absent: &mut BTreeMap<String, String>) -> Result<RunLevel, String> {
    let (mode, arrivals, key, rate) = load_of(b)?;
    let metrics = b.obj("metrics", "metrics")?;
    let totals = metrics.obj("request_totals", "metrics.request_totals")?;
    let count = |k: &str| totals.opt_num(k).map(|v| v.unwrap_or(0.0) as u64);
    let counts = RequestCounts {
        ok: count("successful")?,
        incomplete: count("incomplete")?,
        errored: count("errored")?,
        error_kinds: BTreeMap::new(),
    };
    let requests = requests(b, &counts, absent)?;
    let ok_samples = |f: fn(&Request) -> Option<f64>| successful(&requests, f);
    let stat = |name: &str,
                scale: f64,
                samples: Option<Vec<f64>>|
     -> Result<Option<Distribution>, String> {
        Ok(summary(&metrics, name, "successful")?
            .and_then(|f| f.scaled(scale).distribution(samples.as_deref())))
    };
    let tpots = tpots(&requests);
    let level_metrics = LevelMetrics {
        ttft_s: stat("time_to_first_token_ms", 1e-3, ok_samples(|r| r.ttft_s))?,
        itl_s: stat("inter_token_latency_ms", 1e-3, None)?,
        e2e_s: stat("request_latency", 1.0, ok_samples(|r| r.e2e_s))?,
        // guidellm's time per output token includes the TTFT (latency / tokens): not
        // infermeter's TPOT, which is computed from the requests when the file has them.
        tpot_s: tpots.and_then(|s| Distribution::from_samples(&s)),
        decode_tok_s: Distribution::from_samples(&decode_speeds(&requests)),
        input_tokens: stat("prompt_token_count", 1.0, None)?,
        output_tokens: stat("output_token_count", 1.0, None)?,
        ..LevelMetrics::default()
    };
    if level_metrics.ttft_s.is_none() {
        return Err(
            "has no TTFT (`metrics.time_to_first_token_ms`): a run without streaming".into(),
        );
    }
    let mean = |name: &str, part: &str| -> Result<Option<f64>, String> {
        Ok(summary(&metrics, name, part)?.and_then(|f| f.mean))
    };
    let spans = requests_spans(b);
    let level = Level {
        concurrency: match mode {
            LoadMode::Rate => most_in_flight(spans.into_iter()).unwrap_or(1),
            _ => key.max(1.0) as u32,
        },
        request_rate: rate,
        duration_s: b.opt_num("duration")?.unwrap_or(0.0),
        requests: counts,
        metrics: level_metrics,
        system_output_tok_s: mean("output_tokens_per_second", "total")?
            .ok_or("has no `metrics.output_tokens_per_second`")?,
        system_input_tok_s: mean("prompt_tokens_per_second", "total")?,
        requests_per_s: mean("requests_per_second", "successful")?,
        per_request: columns(&requests),
        ..super::level::empty()
    };
    Ok(RunLevel {
        mode,
        arrivals,
        load: key,
        level,
    })
}

/// A guidellm statistics summary (`metrics.<name>.<part>`) as figures, in its own unit.
fn summary(metrics: &Obj<'_>, name: &str, part: &str) -> Result<Option<Figures>, String> {
    let Some(metric) = metrics.get(name) else {
        return Ok(None);
    };
    let Some(stats) = metric.get(part).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let stats = Obj::new(stats, "")?;
    if stats.opt_num("count")? == Some(0.0) {
        return Ok(None);
    }
    let n = |k: &str| stats.opt_num(k);
    let p = |k: &str| -> Result<Option<f64>, String> {
        match stats.opt_obj("percentiles", "percentiles")? {
            Some(percentiles) => percentiles.opt_num(k),
            None => Ok(None),
        }
    };
    // Figures at the top of the summary by name; percentiles under `percentiles`.
    let names = [
        "count", "mean", "median", "min", "max", "std_dev", "p90", "p95", "p99", "p999",
    ];
    Figures::read(names.map(Some), &|k| {
        if k.starts_with('p') {
            p(k)
        } else {
            n(k)
        }
    })
    .map(Some)
}

/// The benchmark's requests, when the file holds every one of them (guidellm may keep only a
/// sample, which would misstate goodput): empty otherwise, with the reason in `absent`.
fn requests(
    b: &Obj<'_>,
    counts: &RequestCounts,
    absent: &mut BTreeMap<String, String>,
) -> Result<Vec<Request>, String> {
    let Some(lists) = b.opt_obj("requests", "requests")? else {
        absent.insert(
            absent::PER_REQUEST.into(),
            "guidellm file without its requests: no goodput".into(),
        );
        return Ok(Vec::new());
    };
    let mut requests = Vec::new();
    for (part, status) in [
        ("successful", RequestColumns::OK),
        ("incomplete", RequestColumns::INCOMPLETE),
        ("errored", RequestColumns::ERRORED),
    ] {
        for r in lists.opt_array(part)?.unwrap_or_default() {
            let r = Obj::new(r, "")?;
            let ok = status == RequestColumns::OK;
            requests.push(Request {
                status,
                ttft_s: r
                    .opt_num("time_to_first_token_ms")?
                    .map(|v| v * 1e-3)
                    .filter(|_| ok),
                e2e_s: r.opt_num("request_latency")?.filter(|_| ok),
                output_tokens: r.opt_num("output_tokens")?.map(|v| v as u32),
                gaps_s: None,
            });
        }
    }
    if requests.len() as u64 != counts.total() {
        absent.insert(
            absent::PER_REQUEST.into(),
            format!(
                "guidellm kept a sample of {} of {} requests: no goodput, which needs every request",
                requests.len(),
                counts.total()
            ),
        );
        return Ok(Vec::new());
    }
    absent.insert(
        absent::STALLS.into(),
        "guidellm keeps no token gaps per request: stalls and jitter are not known, and an SLO's stall bound is not applied".into(),
    );
    Ok(requests)
}

/// Each recorded request's start and end, seconds (for the most in flight at a rate).
fn requests_spans(b: &Obj<'_>) -> Vec<(f64, f64)> {
    let Some(lists) = b.get("requests") else {
        return Vec::new();
    };
    ["successful", "incomplete", "errored"]
        .iter()
        .filter_map(|part| lists.get(part).and_then(Value::as_array))
        .flatten()
        .filter_map(|r| {
            Some((
                r.get("request_start_time")?.as_f64()?,
                r.get("request_end_time")?.as_f64()?,
            ))
        })
        .collect()
}

/// Seconds since 1970 as an RFC 3339 UTC time.
fn unix_time(seconds: f64) -> String {
    let secs = seconds.floor() as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

fn measurement() -> Measurement {
    const POOLING: [(&str, &str); 5] = [
        ("ttft", "guidellm: one sample per successful request, from the request's start to its first token"),
        ("itl", "guidellm's inter_token_latency: each successful request's (last token − first token) / (output tokens − 1), weighted by its tokens (infermeter pools every token gap instead)"),
        ("tpot", "infermeter's definition, (E2E − TTFT) / (output tokens − 1) per successful request, computed from guidellm's requests (guidellm's own time per output token includes the TTFT)"),
        ("e2e", "guidellm's request_latency: one sample per successful request"),
        ("throughput", "guidellm: output tokens per second of all requests over the benchmark, its mean"),
    ];
    super::measurement(
        TokenSource::Usage,
        "guidellm: from the request's start to the first token received",
        &POOLING,
    )
}

#[cfg(test)]
mod tests {
    use super::unix_time;

    #[test]
    fn unix_times_read_as_utc() {
        assert_eq!(unix_time(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(unix_time(1_795_762_898.22), "2026-11-27T07:01:38Z");
    }
}
