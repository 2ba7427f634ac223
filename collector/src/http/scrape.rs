//! Server-side metrics from the engine's Prometheus `/metrics` endpoint, sampled around and during
//! each level.
//!
//! - [`parse`] reads the text exposition format into a [`Snapshot`] (name, labels, value per line).
//! - [`detect`] / [`Snapshot::dialect`] tell which engine wrote it (vLLM, SGLang, TGI, llama.cpp);
//!   each [`Dialect`] maps our figures to that engine's metric names, so engine differences live
//!   in one table rather than in `if` chains.
//! - [`summarize`] reduces a level: histogram means from the `_sum`/`_count` deltas between the
//!   snapshot taken before the level and the one taken after it (so requests finished before the
//!   level do not count), gauges as mean and max over the snapshots taken during the level.
//! - [`Scraper`] does the sampling in a background task, every [`DEFAULT_INTERVAL`], between
//!   [`Scraper::start`] and [`Scraper::stop`]. An absent or unrecognised endpoint is reported once
//!   and then left alone: server metrics are optional, the level's own measurements are not.

use std::collections::HashMap;
use std::time::Duration;

use infermeter_report::ServerMetrics;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Time between scrapes during a level.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);
/// One scrape that takes longer than this is skipped rather than delaying the next.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// The metric family an engine exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    Vllm,
    Sglang,
    Tgi,
    LlamaCpp,
}

/// Where a dialect keeps each figure. Several names: engines renamed metrics across versions
/// (vLLM's `gpu_cache_usage_perc` became `kv_cache_usage_perc`); the first one present wins.
struct Names {
    /// Metric-name prefix that identifies the engine.
    prefix: &'static str,
    running: &'static [&'static str],
    waiting: &'static [&'static str],
    /// KV-cache usage as a fraction 0..1.
    kv_usage: &'static [&'static str],
    queue_time: &'static [&'static str],
    prefill_time: &'static [&'static str],
    decode_time: &'static [&'static str],
}

const VLLM: Names = Names {
    prefix: "vllm:",
    running: &["vllm:num_requests_running"],
    waiting: &["vllm:num_requests_waiting"],
    kv_usage: &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    queue_time: &["vllm:request_queue_time_seconds"],
    prefill_time: &["vllm:request_prefill_time_seconds"],
    decode_time: &["vllm:request_decode_time_seconds"],
};

const SGLANG: Names = Names {
    prefix: "sglang:",
    running: &["sglang:num_running_reqs"],
    waiting: &["sglang:num_queue_reqs"],
    // Fraction of the KV token pool in use.
    kv_usage: &["sglang:token_usage"],
    queue_time: &[
        "sglang:queue_time_seconds",
        "sglang:request_queue_time_seconds",
    ],
    prefill_time: &[],
    decode_time: &[],
};

const TGI: Names = Names {
    prefix: "tgi_",
    running: &["tgi_batch_current_size"],
    waiting: &["tgi_queue_size"],
    kv_usage: &[],
    queue_time: &["tgi_request_queue_duration"],
    // TGI times prefill and decode per batch, not per request: no per-request figure to report.
    prefill_time: &[],
    decode_time: &[],
};

const LLAMACPP: Names = Names {
    prefix: "llamacpp:",
    running: &["llamacpp:requests_processing"],
    waiting: &["llamacpp:requests_deferred"],
    kv_usage: &["llamacpp:kv_cache_usage_ratio"],
    // llama.cpp exports no per-request histograms; its per-request timings come with each response.
    queue_time: &[],
    prefill_time: &[],
    decode_time: &[],
};

impl Dialect {
    /// Detection order: engines that embed another's metrics would otherwise be misread.
    pub const ALL: [Dialect; 4] = [
        Dialect::Vllm,
        Dialect::Sglang,
        Dialect::Tgi,
        Dialect::LlamaCpp,
    ];

    /// The label written to [`ServerMetrics::dialect`].
    pub fn label(self) -> &'static str {
        match self {
            Dialect::Vllm => "vllm",
            Dialect::Sglang => "sglang",
            Dialect::Tgi => "tgi",
            Dialect::LlamaCpp => "llamacpp",
        }
    }

    fn names(self) -> &'static Names {
        match self {
            Dialect::Vllm => &VLLM,
            Dialect::Sglang => &SGLANG,
            Dialect::Tgi => &TGI,
            Dialect::LlamaCpp => &LLAMACPP,
        }
    }
}

/// One sample line: `name{labels} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// One scrape: every sample line, grouped by metric name (histograms keep their
/// `_sum`/`_count`/`_bucket` suffixes as separate names).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    metrics: HashMap<String, Vec<Sample>>,
}

impl Snapshot {
    /// All samples of one metric name (one per label set).
    pub fn samples(&self, name: &str) -> &[Sample] {
        self.metrics.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Sum over all label sets (engines, data-parallel ranks); `None` when absent.
    pub fn sum(&self, name: &str) -> Option<f64> {
        let samples = self.samples(name);
        (!samples.is_empty()).then(|| samples.iter().map(|s| s.value).sum())
    }

    /// Mean over all label sets, for fractions such as KV-cache usage.
    pub fn mean(&self, name: &str) -> Option<f64> {
        let samples = self.samples(name);
        self.sum(name).map(|total| total / samples.len() as f64)
    }

    /// The engine whose metrics these are, if any is recognised.
    pub fn dialect(&self) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| {
            let prefix = d.names().prefix;
            self.metrics.keys().any(|name| name.starts_with(prefix))
        })
    }
}

/// Which engine wrote this exposition text.
pub fn detect(text: &str) -> Option<Dialect> {
    parse(text).dialect()
}

/// Parses the Prometheus text exposition format. Comments, blank lines and malformed lines are
/// skipped: one odd line must not cost the whole scrape.
pub fn parse(text: &str) -> Snapshot {
    let mut snapshot = Snapshot::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, sample)) = parse_line(line) {
            snapshot
                .metrics
                .entry(name.to_string())
                .or_default()
                .push(sample);
        }
    }
    snapshot
}

/// `name{a="x",b="y"} value [timestamp]`
fn parse_line(line: &str) -> Option<(&str, Sample)> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if name.is_empty() {
        return None;
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(after_brace) = rest.strip_prefix('{') {
        let (parsed, remaining) = parse_labels(after_brace)?;
        labels = parsed;
        rest = remaining;
    }
    let value = parse_value(rest.split_whitespace().next()?)?;
    Some((name, Sample { labels, value }))
}

/// Parses `a="x",b="y"}` (the opening brace already consumed); returns the labels and the text
/// after the closing brace. Label values may hold escaped quotes, commas and braces.
fn parse_labels(mut s: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut labels = Vec::new();
    loop {
        s = s.trim_start_matches([',', ' ']);
        if let Some(rest) = s.strip_prefix('}') {
            return Some((labels, rest));
        }
        let eq = s.find('=')?;
        let key = s[..eq].trim().to_string();
        s = s[eq + 1..].trim_start().strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = s.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                (_, c) => value.push(c),
            }
        };
        labels.push((key, value));
        s = &s[end + 1..];
    }
}

fn parse_value(token: &str) -> Option<f64> {
    match token {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => token.parse().ok(),
    }
}

/// First name of `names` present in `snapshot`.
fn first_present<'a>(snapshot: &Snapshot, names: &'a [&'a str]) -> Option<&'a str> {
    names
        .iter()
        .copied()
        .find(|name| !snapshot.samples(name).is_empty())
}

/// Mean of a histogram (or summary) over the observations made between two snapshots.
/// `None` when nothing was observed or a counter went backwards (engine restarted).
fn histogram_mean(before: &Snapshot, after: &Snapshot, names: &[&str]) -> Option<f64> {
    let (sum_name, count_name) = names
        .iter()
        .map(|name| (format!("{name}_sum"), format!("{name}_count")))
        .find(|(_, count)| !after.samples(count).is_empty())?;
    let delta = |metric: &str| Some(after.sum(metric)? - before.sum(metric).unwrap_or(0.0));
    let count = delta(&count_name)?;
    let sum = delta(&sum_name)?;
    (count > 0.0 && sum >= 0.0).then(|| sum / count)
}

/// Mean and max of a gauge over the snapshots that carry it.
fn gauge_mean_max(
    samples: &[Snapshot],
    names: &[&str],
    per_snapshot: fn(&Snapshot, &str) -> Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let values: Vec<f64> = samples
        .iter()
        .filter_map(|s| per_snapshot(s, first_present(s, names)?))
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() {
        return (None, None);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (Some(mean), Some(max))
}

/// Reduces one level's scrapes to the report's server figures. `before` and `after` bracket the
/// level (histogram deltas); `samples` were taken during it (gauges). With no samples the
/// gauges are left out rather than guessed from the idle server before or after.
pub fn summarize(before: &Snapshot, samples: &[Snapshot], after: &Snapshot) -> ServerMetrics {
    let dialect = after
        .dialect()
        .or_else(|| samples.iter().find_map(Snapshot::dialect))
        .or_else(|| before.dialect());
    let Some(dialect) = dialect else {
        return ServerMetrics {
            scrapes: samples.len() as u64,
            ..ServerMetrics::default()
        };
    };
    let names = dialect.names();
    let (running_mean, running_max) = gauge_mean_max(samples, names.running, Snapshot::sum);
    let (waiting_mean, waiting_max) = gauge_mean_max(samples, names.waiting, Snapshot::sum);
    let (kv_cache_usage_mean, kv_cache_usage_max) =
        gauge_mean_max(samples, names.kv_usage, Snapshot::mean);
    ServerMetrics {
        queue_time_mean_s: histogram_mean(before, after, names.queue_time),
        prefill_time_mean_s: histogram_mean(before, after, names.prefill_time),
        decode_time_mean_s: histogram_mean(before, after, names.decode_time),
        running_mean,
        running_max,
        waiting_mean,
        waiting_max,
        kv_cache_usage_mean,
        kv_cache_usage_max,
        engine_prefill_tok_s: None,
        engine_decode_tok_s: None,
        dialect: Some(dialect.label().to_string()),
        scrapes: samples.len() as u64,
    }
}

/// The server root of an OpenAI base URL: `http://h:8000/v1/` -> `http://h:8000`. Engines serve
/// `/metrics` and `/tokenize` at the root, not under `/v1`.
pub fn server_root(base_url: &str) -> &str {
    let trimmed = base_url.trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed)
}

/// `/metrics` URL of an OpenAI base URL.
pub fn metrics_url(base_url: &str) -> String {
    format!("{}/metrics", server_root(base_url))
}

/// Why a scrape gave nothing.
#[derive(Debug, thiserror::Error)]
enum ScrapeError {
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    #[error("it answered HTTP {0}")]
    Status(reqwest::StatusCode),
    #[error("it serves no metrics of a known engine (vLLM, SGLang, TGI, llama.cpp)")]
    Unrecognised,
}

async fn fetch(client: &reqwest::Client, url: &str) -> Result<Snapshot, ScrapeError> {
    let response = client.get(url).timeout(SCRAPE_TIMEOUT).send().await?;
    if !response.status().is_success() {
        return Err(ScrapeError::Status(response.status()));
    }
    Ok(parse(&response.text().await?))
}

/// Samples `/metrics` in the background during each level: [`Scraper::start`] right before
/// the level, [`Scraper::stop`] after it (`None` when the endpoint is absent).
pub struct Scraper {
    client: reqwest::Client,
    url: String,
    interval: Duration,
    /// Set once the endpoint proved absent or foreign; later levels do not try again.
    disabled: bool,
    level: Option<RunningLevel>,
}

struct RunningLevel {
    before: Snapshot,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Vec<Snapshot>>,
}

impl Scraper {
    /// `url` is the full metrics URL, see [`metrics_url`].
    pub fn new(client: reqwest::Client, url: impl Into<String>) -> Scraper {
        Scraper {
            client,
            url: url.into(),
            interval: DEFAULT_INTERVAL,
            disabled: false,
            level: None,
        }
    }

    /// A shorter sampling interval, so tests see several samples in a short level.
    #[cfg(test)]
    fn with_interval(mut self, interval: Duration) -> Scraper {
        self.interval = interval;
        self
    }

    /// Takes the "before" snapshot and starts sampling. Call right before a level starts.
    pub async fn start(&mut self) {
        self.abort_level();
        if self.disabled {
            return;
        }
        let before = match fetch(&self.client, &self.url).await {
            Ok(s) if s.dialect().is_some() => s,
            Ok(_) => return self.disable(ScrapeError::Unrecognised),
            Err(e) => return self.disable(e),
        };
        let (stop, mut stopped) = oneshot::channel();
        let (client, url, interval) = (self.client.clone(), self.url.clone(), self.interval);
        let task = tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await; // the first tick is immediate and `before` was just taken
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = ticks.tick() => {
                        // A failed scrape mid-level is skipped: the gauges are a sample anyway.
                        if let Ok(s) = fetch(&client, &url).await {
                            samples.push(s);
                        }
                    }
                }
            }
            samples
        });
        self.level = Some(RunningLevel { before, stop, task });
    }

    /// Stops sampling, takes the "after" snapshot and summarises the level. `None` when the
    /// endpoint is absent (warned once, at the first level) or the final scrape failed.
    pub async fn stop(&mut self) -> Option<ServerMetrics> {
        let level = self.level.take()?;
        let _ = level.stop.send(());
        let samples = level.task.await.unwrap_or_default();
        match fetch(&self.client, &self.url).await {
            Ok(after) => Some(summarize(&level.before, &samples, &after)),
            Err(e) => {
                tracing::warn!(url = %self.url, "final metrics scrape of the level failed ({e}); server metrics omitted for this level");
                None
            }
        }
    }

    fn disable(&mut self, why: ScrapeError) {
        tracing::warn!(url = %self.url, "server metrics unavailable: {why}; continuing without them (queue time, batch size and KV-cache usage will be omitted)");
        self.disabled = true;
    }

    fn abort_level(&mut self) {
        if let Some(level) = self.level.take() {
            level.task.abort();
        }
    }
}

impl Drop for Scraper {
    fn drop(&mut self) {
        self.abort_level();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    macro_rules! fixture {
        ($dialect:literal, $phase:literal) => {
            include_str!(concat!(
                "../../tests/fixtures/metrics/",
                $dialect,
                "/",
                $phase,
                ".txt"
            ))
        };
    }

    /// before, two samples during the level, after.
    fn level(texts: [&str; 4]) -> ServerMetrics {
        let [before, d1, d2, after] = texts.map(parse);
        summarize(&before, &[d1, d2], &after)
    }

    fn close(actual: Option<f64>, expected: f64) {
        let actual = actual.expect("figure present");
        assert!(
            (actual - expected).abs() < 1e-9,
            "{actual} != {expected} (expected)"
        );
    }

    #[test]
    fn parses_labels_with_escapes_and_special_values() {
        let s = parse(
            "# HELP x y\n\
             m{a=\"q\\\"uote, {brace}\",le=\"+Inf\"} 3 1700000000\n\
             m{a=\"b\"} +Inf\n\
             n NaN\n\
             bare 1.5e+06\n\
             broken{a=\"x\" 1\n\
             \n",
        );
        let m = s.samples("m");
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].labels[0], ("a".into(), "q\"uote, {brace}".into()));
        assert_eq!(m[0].labels[1], ("le".into(), "+Inf".into()));
        assert_eq!(m[0].value, 3.0);
        assert!(m[1].value.is_infinite());
        assert!(s.samples("n")[0].value.is_nan());
        assert_eq!(s.sum("bare"), Some(1.5e6));
        assert!(s.samples("broken").is_empty());
    }

    #[test]
    fn detects_each_dialect_and_nothing_else() {
        assert_eq!(detect(fixture!("vllm", "before")), Some(Dialect::Vllm));
        assert_eq!(detect(fixture!("sglang", "before")), Some(Dialect::Sglang));
        assert_eq!(detect(fixture!("tgi", "before")), Some(Dialect::Tgi));
        assert_eq!(
            detect(fixture!("llamacpp", "before")),
            Some(Dialect::LlamaCpp)
        );
        assert_eq!(detect("process_cpu_seconds_total 1.2\n"), None);
        assert_eq!(detect(""), None);
    }

    #[test]
    fn vllm_level() {
        let m = level([
            fixture!("vllm", "before"),
            fixture!("vllm", "during1"),
            fixture!("vllm", "during2"),
            fixture!("vllm", "after"),
        ]);
        assert_eq!(m.dialect.as_deref(), Some("vllm"));
        // queue: (15.5 - 12.5) / (110 - 100); prefill: (42 - 40) / 10; decode: (350 - 300) / 10
        close(m.queue_time_mean_s, 0.3);
        close(m.prefill_time_mean_s, 0.2);
        close(m.decode_time_mean_s, 5.0);
        // running 8 then 6; waiting 2 then 0; KV usage 0.25 then 0.35
        close(m.running_mean, 7.0);
        close(m.running_max, 8.0);
        close(m.waiting_mean, 1.0);
        close(m.waiting_max, 2.0);
        close(m.kv_cache_usage_mean, 0.30);
        close(m.kv_cache_usage_max, 0.35);
        assert_eq!(m.scrapes, 2);
    }

    #[test]
    fn old_vllm_cache_gauge_name_is_read() {
        let during = parse(
            "vllm:num_requests_running{model_name=\"m\"} 3.0\n\
             vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n",
        );
        let m = summarize(&Snapshot::default(), &[during], &Snapshot::default());
        close(m.kv_cache_usage_mean, 0.5);
        close(m.running_max, 3.0);
    }

    #[test]
    fn sglang_level_sums_data_parallel_ranks() {
        let m = level([
            fixture!("sglang", "before"),
            fixture!("sglang", "during1"),
            fixture!("sglang", "during2"),
            fixture!("sglang", "after"),
        ]);
        assert_eq!(m.dialect.as_deref(), Some("sglang"));
        // queue: (4.0 + 3.0 - 2.0 - 1.0) / (25 + 25 - 20 - 20) = 4 / 10
        close(m.queue_time_mean_s, 0.4);
        assert_eq!(m.prefill_time_mean_s, None);
        // running per rank (5+7, 4+4) -> 12, 8; queue (1+3, 0+0) -> 4, 0
        close(m.running_mean, 10.0);
        close(m.running_max, 12.0);
        close(m.waiting_mean, 2.0);
        close(m.waiting_max, 4.0);
        // token usage mean over ranks: (0.4+0.6)/2 = 0.5, (0.2+0.4)/2 = 0.3
        close(m.kv_cache_usage_mean, 0.4);
        close(m.kv_cache_usage_max, 0.5);
    }

    #[test]
    fn tgi_level() {
        let m = level([
            fixture!("tgi", "before"),
            fixture!("tgi", "during1"),
            fixture!("tgi", "during2"),
            fixture!("tgi", "after"),
        ]);
        assert_eq!(m.dialect.as_deref(), Some("tgi"));
        // queue: (9.0 - 1.5) / (65 - 50) = 0.5
        close(m.queue_time_mean_s, 0.5);
        // batch 16 then 12; queue 5 then 3
        close(m.running_mean, 14.0);
        close(m.running_max, 16.0);
        close(m.waiting_mean, 4.0);
        close(m.waiting_max, 5.0);
        assert_eq!(m.kv_cache_usage_mean, None);
    }

    #[test]
    fn llamacpp_level() {
        let m = level([
            fixture!("llamacpp", "before"),
            fixture!("llamacpp", "during1"),
            fixture!("llamacpp", "during2"),
            fixture!("llamacpp", "after"),
        ]);
        assert_eq!(m.dialect.as_deref(), Some("llamacpp"));
        assert_eq!(m.queue_time_mean_s, None);
        // processing 4 then 3; deferred 1 then 0; KV usage 0.5 then 0.75
        close(m.running_mean, 3.5);
        close(m.running_max, 4.0);
        close(m.waiting_mean, 0.5);
        close(m.waiting_max, 1.0);
        close(m.kv_cache_usage_mean, 0.625);
        close(m.kv_cache_usage_max, 0.75);
    }

    #[test]
    fn restarted_engine_gives_no_histogram_mean() {
        // counters went backwards between before and after
        let m = summarize(
            &parse(fixture!("vllm", "after")),
            &[],
            &parse(fixture!("vllm", "before")),
        );
        assert_eq!(m.queue_time_mean_s, None);
        assert_eq!(m.running_mean, None);
        assert_eq!(m.scrapes, 0);
    }

    #[test]
    fn server_root_strips_v1() {
        assert_eq!(server_root("http://h:8000/v1/"), "http://h:8000");
        assert_eq!(server_root("http://h:8000/v1"), "http://h:8000");
        assert_eq!(server_root("http://h:8000"), "http://h:8000");
        assert_eq!(metrics_url("http://h/v1"), "http://h/metrics");
    }

    /// Serves `texts` at /metrics: the first request gets `before`, later ones `during` until the
    /// test moves `phase` to 2, then `after`. Counts requests.
    async fn metrics_server(
        texts: [&'static str; 3],
        serve_metrics: bool,
    ) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        use axum::routing::get;
        let phase = Arc::new(AtomicUsize::new(0));
        let hits = Arc::new(AtomicUsize::new(0));
        let (p, h) = (phase.clone(), hits.clone());
        let mut app = axum::Router::new();
        if serve_metrics {
            app = app.route(
                "/metrics",
                get(move || {
                    let (p, h) = (p.clone(), h.clone());
                    async move {
                        h.fetch_add(1, Ordering::SeqCst);
                        let now = p.load(Ordering::SeqCst).min(2);
                        if now == 0 {
                            p.store(1, Ordering::SeqCst);
                        }
                        texts[now]
                    }
                }),
            );
        } else {
            let h = hits.clone();
            app = app.fallback(move || {
                h.fetch_add(1, Ordering::SeqCst);
                async { (axum::http::StatusCode::NOT_FOUND, "not found") }
            });
        }
        let url = format!("{}/metrics", crate::http::test_server::serve(app).await);
        (url, phase, hits)
    }

    #[tokio::test]
    async fn scraper_samples_a_level_over_loopback() {
        // `after` carries the same gauges as `during`, so a sample taken at any moment agrees.
        let (url, phase, hits) = metrics_server(
            [
                fixture!("vllm", "before"),
                fixture!("vllm", "during1"),
                fixture!("vllm", "after_same_gauges"),
            ],
            true,
        )
        .await;
        let mut scraper =
            Scraper::new(reqwest::Client::new(), url).with_interval(Duration::from_millis(20));
        scraper.start().await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        phase.store(2, Ordering::SeqCst);
        let m = scraper.stop().await.expect("metrics");
        close(m.queue_time_mean_s, 0.3);
        close(m.running_mean, 8.0);
        close(m.kv_cache_usage_max, 0.25);
        assert!(m.scrapes >= 3, "only {} scrapes in 150 ms", m.scrapes);
        assert_eq!(hits.load(Ordering::SeqCst) as u64, m.scrapes + 2);
    }

    /// Against the real simulator, which speaks vLLM's metric names.
    #[tokio::test]
    async fn scraper_reads_the_simulator() {
        let sim = infermeter_sim::start(infermeter_sim::SimConfig::loopback())
            .await
            .unwrap();
        let (base, model) = (sim.base_url(), sim.model_name().to_string());
        let client = reqwest::Client::new();
        let mut scraper = Scraper::new(client.clone(), metrics_url(&base))
            .with_interval(Duration::from_millis(20));
        scraper.start().await;
        let requests = (0..4).map(|i| {
            let body = serde_json::json!({
                "model": model, "prompt": format!("request {i} about the weather"), "max_tokens": 8
            });
            client
                .post(format!("{base}/completions"))
                .json(&body)
                .send()
        });
        for response in futures::future::join_all(requests).await {
            assert!(response.unwrap().status().is_success());
        }
        let m = scraper.stop().await.expect("metrics");
        assert_eq!(m.dialect.as_deref(), Some("vllm"));
        assert!(m.queue_time_mean_s.is_some_and(|q| q >= 0.0), "{m:?}");
        assert!(m.decode_time_mean_s.is_some_and(|d| d > 0.0), "{m:?}");
        assert!(m.scrapes >= 1, "{m:?}");
    }

    #[tokio::test]
    async fn absent_endpoint_is_tried_once_and_gives_none() {
        let (url, _, hits) = metrics_server(["", "", ""], false).await;
        let mut scraper =
            Scraper::new(reqwest::Client::new(), url).with_interval(Duration::from_millis(10));
        for _ in 0..2 {
            scraper.start().await;
            tokio::time::sleep(Duration::from_millis(30)).await;
            assert_eq!(scraper.stop().await, None);
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}
