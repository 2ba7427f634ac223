//! The benchmark report: the JSON written by the collector and read by the viewer.
//!
//! Every type here is plain data. Derived figures (highlights, capacity, interpolation) are
//! computed by [`crate::analysis`], never stored twice. The JSON Schema in `data/schema/` is
//! generated from these types (`cargo run -p infermeter-report --example write_schema`).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stats::Distribution;

mod configuration;
mod fit;
mod prompts;
mod workload;

pub use configuration::*;
pub use fit::*;
pub use prompts::*;
pub use workload::*;

/// Version of the report format written by this build. Semver: a reader accepts any
/// minor version of its own major version and refuses a newer major version.
/// 1.1.0: `ClientHealth::event_clock`. 1.2.0 (all optional, so 1.0 and 1.1 reports stay valid):
/// `Level::per_request` (goodput under any SLO), `TestParameters::slo` and
/// `TestParameters::search` (#24); `Report::sharding` and `RequestRecord::shard` (#27);
/// `RequestRecord::retried`, `ClientHealth::retried` and `Measurement::connection_reuse` (#26);
/// sessions (`users` and `sessions` modes, `Scenario::session`, `Series::cache`,
/// `Level::sessions`), trace replay (`trace` mode), reasoning (`first_answer_s`,
/// `reasoning_tokens`), `Level::prompt_cache` and `Level::timeline` (#25).
/// 1.3.0 (all optional, so older reports stay valid): `ShardLevel::cache`, so that sharded users
/// and session-arrival levels keep their cache use (#32); `Metadata::provenance`, the figures of
/// a `Distribution` other than the mean and median, and `RequestColumns`' `max_gap`, `stalls`
/// and `jitter` may be absent, for reports imported from other tools' result files (#35);
/// `Report::fit`, the simulator fitted to the measured levels, with its coefficients, the levels
/// used and the held-out errors (#34); prompt files and length distributions (#36):
/// `Scenario::prompts`, `Scenario::lengths`, `RequestRecord::asked` and the per-request column
/// `RequestColumns::input_tokens`; `Metadata::configuration`, the parameters of a sweep's
/// configuration (#37).
/// 1.4.0 (optional, so older reports stay valid): `Measurement::prompt_tokens`, which tokenizer
/// counted the prompts' tokens and whether its counts are exact (#43).
pub const SCHEMA_VERSION: &str = "1.4.0";

/// One benchmark run: what was measured, on what, and every measured level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// Semver of the report format, e.g. "1.0.0".
    pub schema_version: String,
    pub metadata: Metadata,
    /// Complete, or partial when the run was interrupted (the measured levels are kept).
    #[serde(default)]
    pub status: RunStatus,
    /// How each metric was measured and pooled.
    #[serde(default)]
    pub measurement: Measurement,
    pub scenarios: Vec<Scenario>,
    pub series: Vec<Series>,
    /// Per-request records, kept in a separate JSONL file next to the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<RecordsLink>,
    /// Warnings raised while measuring (cache hits in a no-cache suite, output length mismatches, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Set when the load came from several client processes (`infermeter run --shard I/N`):
    /// in a shard's report, that shard; in the report `infermeter merge` made of them, every
    /// shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<Sharding>,
    /// The simulator fitted to this report's levels (`infermeter fit`, since 1.3.0): what the
    /// viewer's What-if section predicts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
}

/// What was benchmarked and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Metadata {
    /// Human title; the viewer falls back to "model on GPU".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// True for sample files that were not measured on real hardware (hand-made or simulated).
    #[serde(default)]
    pub synthetic: bool,
    /// Where the numbers come from when not a real engine, e.g. "infermeter simulator".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub model: ModelInfo,
    pub engine: EngineInfo,
    pub hardware: HardwareInfo,
    #[serde(default)]
    pub test: TestParameters,
    /// RFC 3339 start time of the run.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Version of the infermeter collector that wrote the file.
    pub collector_version: String,
    /// Free-form labels (`--label k=v`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The engine configuration measured, when a sweep ran it (`infermeter sweep`): its
    /// parameters' values (since 1.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<Configuration>,
    /// Set when the report was imported from another benchmark tool's result files
    /// (`infermeter import`, or such a file opened in the viewer): which tool measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// The benchmark tool whose result files an imported report was read from, and what those
/// files did not hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// The tool, e.g. "vLLM bench serve", "AIPerf", "guidellm", "inference-perf".
    pub tool: String,
    /// The tool's version as its files state it; absent when they do not (vLLM's and
    /// inference-perf's result files carry none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The version of the tool's file format, when the files state one (AIPerf's
    /// `schema_version`, guidellm's `metadata.version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The command line or arguments that produced the files, as far as they record them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The files read, by name, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// What the files lack and so what the report leaves empty, one sentence each, keyed by
    /// what is missing: `per_request` (goodput), `itl`, `power`, ...
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub absent: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelInfo {
    /// Model id as served, e.g. "Qwen/Qwen3-Coder-30B-A3B-Instruct".
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// e.g. "MoE" or "dense".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Total parameters in billions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_params_b: Option<f64>,
    /// Parameters active per token in billions (MoE), equal to total for dense models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_params_b: Option<f64>,
    /// Weight precision, e.g. "FP8", "NVFP4", "BF16".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineInfo {
    /// e.g. "vLLM", "SGLang", "llama.cpp", "infermeter-sim".
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Engine launch flags, as given by the user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// "chat" or "completions".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Endpoint measured, without credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HardwareInfo {
    /// e.g. "NVIDIA H100 PCIe".
    pub gpu_model: String,
    /// 0 when not known (a report imported from a tool that did not record it).
    pub gpu_count: u32,
    /// Total VRAM across GPUs, GB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vram_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Test conditions that change what the numbers mean.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestParameters {
    /// Suite name, e.g. "four-scenario".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_caching: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative_decoding: Option<bool>,
    /// e.g. "fp8", "auto".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_dtype: Option<String>,
    /// Free-text notes, e.g. optimisation status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The service-level objective the run was given (`--slo`): what `infermeter summary` and
    /// the viewer's goodput section judge requests by until the reader picks other bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// How a search-mode run (`--search`, a suite's `[search]`) chose its levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSettings>,
}

/// A service-level objective: bounds every request must meet at once (a request that failed
/// meets none), and the share of requests that must meet them. `None`: not checked. A value
/// exactly at a bound meets it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Slo {
    /// Time to first token, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ttft_s: Option<f64>,
    /// Time per output token after the first, seconds: `(e2e - ttft) / (output_tokens - 1)`, the
    /// inverse of the per-user decode speed. A request of one token has no such time and meets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tpot_s: Option<f64>,
    /// End-to-end latency, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_e2e_s: Option<f64>,
    /// Most stalls a request may have (pauses in its stream longer than the level's
    /// `per_request.stall_gap`); 0: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stalls: Option<u32>,
    /// Share of requests (0..1) that must meet every bound for a level to pass, e.g. 0.95.
    #[serde(default = "default_attainment_target")]
    pub target: f64,
}

/// The attainment target when none is given: 95% of requests.
pub const DEFAULT_ATTAINMENT_TARGET: f64 = 0.95;

fn default_attainment_target() -> f64 {
    DEFAULT_ATTAINMENT_TARGET
}

impl Default for Slo {
    fn default() -> Self {
        Slo {
            max_ttft_s: None,
            max_tpot_s: None,
            max_e2e_s: None,
            max_stalls: None,
            target: DEFAULT_ATTAINMENT_TARGET,
        }
    }
}

/// A search-mode run: levels probed by bracketing (doubling until the SLO breaks) and bisection,
/// instead of a fixed list. Every probed level is in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchSettings {
    /// The load mode searched.
    pub mode: LoadMode,
    /// Lowest and highest load probed: concurrency (peak, burst) or requests per second (rate).
    pub min: f64,
    pub max: f64,
    /// Bisection stops when the highest passing and lowest failing load are this close, as a
    /// fraction of the passing one (and at least one request in flight apart).
    pub resolution: f64,
}

/// Whether the run finished.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum RunStatus {
    #[default]
    Complete,
    /// Interrupted: `reason` says why. Levels before the last were measured in full; the level in
    /// progress is kept with the requests that completed (a warning names it).
    Partial { reason: String },
}

/// How numbers were obtained, so a reader can compare reports from different tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Measurement {
    /// Where output token counts come from.
    pub output_token_source: TokenSource,
    /// Which event starts the TTFT clock's end, e.g. "first event carrying content, reasoning or a tool-call delta".
    pub ttft_definition: String,
    /// Metric name -> how its percentiles are pooled, e.g. "itl" -> "all token gaps of all requests pooled".
    pub pooling: BTreeMap<String, String>,
    /// Fraction of a peak-mode level excluded at each end (ramp-up and drain), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<String>,
    /// How the client reused its connections: "pooled" (kept alive across requests, as most
    /// clients do) or "never" (a new connection per request, closed after its response). A
    /// string so later values load in older readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_reuse: Option<String>,
    /// What counted the prompts' tokens, so the input lengths the report states (absent before
    /// format 1.4.0 and in reports imported from other tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<PromptCounter>,
}

impl Default for Measurement {
    fn default() -> Self {
        let pooling = [
            ("ttft", "one sample per successful request"),
            ("e2e", "one sample per successful request"),
            (
                "tpot",
                "one sample per successful request: (e2e - ttft) / (output_tokens - 1)",
            ),
            (
                "decode_tok_s",
                "one sample per successful request: (output_tokens - 1) / (e2e - ttft)",
            ),
            (
                "prefill_tok_s",
                "one sample per successful request: input_tokens / ttft",
            ),
            (
                "queue_wait",
                "one sample per request with a server-reported queue time",
            ),
            ("itl", "every token gap of every successful request, pooled"),
            (
                "inter_chunk",
                "every gap between content-carrying stream events, pooled",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Measurement {
            output_token_source: TokenSource::Usage,
            ttft_definition: "from request start (scheduled start in rate mode) to the first stream event carrying content, reasoning or a tool-call delta".into(),
            pooling,
            steady_state: None,
            connection_reuse: None,
            prompt_tokens: None,
        }
    }
}

/// Where output token counts come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// `usage` in the final chunk.
    #[default]
    Usage,
    /// `usage` on every chunk (`continuous_usage_stats`).
    ContinuousUsage,
    /// Counted with the model's tokenizer on the client.
    Tokenizer,
    /// One token per content-carrying chunk (fallback when nothing else is available).
    Chunks,
}

/// A workload shape: input and output lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scenario {
    /// Stable id used by series, e.g. "chatbot".
    pub id: String,
    /// Display name, e.g. "Chatbot".
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// A multi-turn conversation (users and sessions modes): `input_tokens` is its first turn's
    /// context, `output_tokens` each turn's reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionShape>,
    /// A replayed trace (trace mode): `input_tokens` and `output_tokens` are its means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSource>,
    /// Where the prompts came from, when a file (since 1.3.0): ShareGPT, JSONL or text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(deserialize_with = "unread"))]
    pub prompts: Option<PromptSource>,
    /// How each request's lengths were drawn, when they vary (since 1.3.0): `input_tokens` and
    /// `output_tokens` are then the means of what the run asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(deserialize_with = "unread"))]
    pub lengths: Option<LengthPlan>,
}

/// Skips a field the viewer never reads (wasm32 only): the viewer shows a prompt file's and a
/// length plan's effects from the levels, and their parsers would weigh about 8 KB of its
/// download (gzip). `infermeter summary` and the collector read them in full.
#[cfg(target_arch = "wasm32")]
fn unread<'de, D: serde::Deserializer<'de>, T>(d: D) -> Result<Option<T>, D::Error> {
    serde::de::IgnoredAny::deserialize(d)?;
    Ok(None)
}

/// How load was applied.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LoadMode {
    /// Exactly N requests in flight: closed loop, a new one starts when one ends.
    Peak,
    /// N requests sent at once, then drained; requests queue in the engine.
    Burst,
    /// Open-loop arrivals at a fixed rate (constant or Poisson).
    Rate,
    /// N simultaneous users, each a closed loop of sessions: a turn, the reply, think time,
    /// the next turn. A level's `concurrency` is the number of users.
    Users,
    /// Open-loop session arrivals at a rate; each session's turns follow its replies with
    /// think time. `concurrency` is the most sessions active at once.
    Sessions,
    /// A recorded trace replayed open-loop at a speed; `concurrency` is the most requests in
    /// flight.
    Trace,
}

impl LoadMode {
    /// Every mode, in the order a scenario's levels are planned and listed.
    pub const ALL: [LoadMode; 6] = [
        LoadMode::Peak,
        LoadMode::Burst,
        LoadMode::Rate,
        LoadMode::Users,
        LoadMode::Sessions,
        LoadMode::Trace,
    ];

    /// Whether the mode is an open loop (rate, session arrivals, trace replay): its levels'
    /// `concurrency` is the most requests (or sessions) they saw in flight, and their records
    /// number them from 1 instead.
    pub fn is_open_loop(self) -> bool {
        matches!(self, LoadMode::Rate | LoadMode::Sessions | LoadMode::Trace)
    }

    /// The mode's name, as the report's JSON and the command line spell it.
    pub fn label(self) -> &'static str {
        match self {
            LoadMode::Peak => "peak",
            LoadMode::Burst => "burst",
            LoadMode::Rate => "rate",
            LoadMode::Users => "users",
            LoadMode::Sessions => "sessions",
            LoadMode::Trace => "trace",
        }
    }
}

/// Arrival process for rate mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    Constant,
    Poisson,
}

/// One scenario under one load mode, measured at several levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    /// Id of a [`Scenario`] in the same report.
    pub scenario: String,
    pub mode: LoadMode,
    /// Rate mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Levels in increasing order of load.
    pub levels: Vec<Level>,
    /// Session series: whether the engine's prefix cache could reuse earlier turns. A report
    /// may hold the same scenario and mode twice, once for each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
}

/// One measured load level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Level {
    /// Requests in flight (peak), queue depth (burst), or peak observed in flight (rate).
    pub concurrency: u32,
    /// Target arrival rate, requests per second (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// Measurement window, seconds.
    pub duration_s: f64,
    pub requests: RequestCounts,
    pub metrics: LevelMetrics,
    /// Output tokens per second summed over all requests in the window.
    pub system_output_tok_s: f64,
    /// Input tokens per second processed in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_input_tok_s: Option<f64>,
    /// Completed requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerMetrics>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientHealth>,
    /// Repeat trials of this level, when `--trials` > 1: the mean and a 95% confidence interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<TrialSummary>,
    /// Cached prompt tokens of the successful requests, when the engine reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    /// Users and sessions modes: sessions and the figures of each turn index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionLevel>,
    /// Trace mode: the replay's speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceLevel>,
    /// The level in fixed time slices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// The level's measured requests one by one (since 1.2.0): what goodput under any SLO is
    /// computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request: Option<RequestColumns>,
}

impl Level {
    /// A level of `concurrency` with its window, outcomes, distributions and throughput, and
    /// nothing else: the base that importers, tools and tests complete with struct update
    /// syntax, so a field added to levels is added here once.
    pub fn new(
        concurrency: u32,
        duration_s: f64,
        requests: RequestCounts,
        metrics: LevelMetrics,
        system_output_tok_s: f64,
    ) -> Level {
        Level {
            concurrency,
            request_rate: None,
            duration_s,
            requests,
            metrics,
            system_output_tok_s,
            system_input_tok_s: None,
            requests_per_s: None,
            power: None,
            server: None,
            client: None,
            trials: None,
            prompt_cache: None,
            sessions: None,
            trace: None,
            timeline: None,
            per_request: None,
        }
    }
}

/// Seconds per tick: the times of [`RequestColumns`] are whole tenths of a millisecond, finer
/// than the collector's timing error and short to write.
pub const TICK_S: f64 = 1e-4;

/// A stream pause longer than this is a stall, seconds: the default of
/// [`RequestColumns::stall_gap`].
pub const DEFAULT_STALL_GAP_S: f64 = 0.1;

/// The measured requests of a level, one entry per request and one array per figure (entry `i`
/// of every column is request `i`): the level's requests in its measurement window (warmups
/// and a peak level's ramp-up and drain left out), failed ones included, in the order they were
/// sent. Times are integers of [`TICK_S`] (0.1 ms: `52341` is 5.2341 s), so a request costs
/// about 31 bytes of JSON as the collector writes it, 8.5 gzipped (measured on the bundled
/// sample by `node tests/browser/bench-goodput.mjs`; README, "Headline figures").
///
/// Later versions add columns (a reader ignores those it does not know); each new column is
/// optional, so files without it stay valid. Every column holds one entry per request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestColumns {
    /// How each request ended: [`RequestColumns::OK`], [`RequestColumns::INCOMPLETE`] or
    /// [`RequestColumns::ERRORED`] (a failed request meets no SLO).
    pub status: Vec<u8>,
    /// Time to first token, ticks (0 for a request that received none). In rate mode from the
    /// scheduled start, as the level's distributions.
    pub ttft: Vec<u32>,
    /// End-to-end latency, ticks.
    pub e2e: Vec<u32>,
    /// Output tokens (0 when unknown).
    pub output_tokens: Vec<u32>,
    /// Longest pause between two content events of the stream, ticks (0 with fewer than two).
    /// This and the next two are empty when the stream's gaps were not recorded (since 1.3.0: a
    /// report imported from a tool that keeps no per-request gaps).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub max_gap: Vec<u32>,
    /// Pauses between content events longer than `stall_gap`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<u32>,
    /// The request's p99 pause over its median pause, in hundredths (100: an even stream; 0
    /// with fewer than two pauses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jitter: Vec<u32>,
    /// The pause beyond which a gap counts as a stall, ticks.
    pub stall_gap: u32,
    /// Input tokens (0 when unknown), since 1.3.0: only for levels whose requests were asked
    /// lengths of their own (a prompt file or drawn lengths); absent (empty) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_tokens: Vec<u32>,
}

impl RequestColumns {
    /// `status` of a request that completed with the full stream.
    pub const OK: u8 = 0;
    /// `status` of a request that streamed some output but did not finish.
    pub const INCOMPLETE: u8 = 1;
    /// `status` of a request that failed before or without output.
    pub const ERRORED: u8 = 2;

    /// Requests held.
    pub fn len(&self) -> usize {
        self.status.len()
    }

    pub fn is_empty(&self) -> bool {
        self.status.is_empty()
    }

    /// Whether the streams' gaps were recorded (`max_gap`, `stalls` and `jitter`).
    pub fn has_smoothness(&self) -> bool {
        !self.stalls.is_empty() || self.is_empty()
    }

    /// The columns by name with their lengths, for the validator (an optional column that is
    /// absent is not listed).
    pub fn column_lengths(&self) -> Vec<(&'static str, usize)> {
        let optional =
            (!self.input_tokens.is_empty()).then_some(("input_tokens", self.input_tokens.len()));
        let mut lengths = vec![
            ("status", self.status.len()),
            ("ttft", self.ttft.len()),
            ("e2e", self.e2e.len()),
            ("output_tokens", self.output_tokens.len()),
            ("max_gap", self.max_gap.len()),
            ("stalls", self.stalls.len()),
            ("jitter", self.jitter.len()),
        ];
        lengths.extend(optional);
        lengths
    }
}

/// Seconds as whole ticks ([`TICK_S`]), rounded; negative or non-finite as 0, and beyond
/// `u32` (119 hours) as its maximum.
pub fn to_ticks(seconds: f64) -> u32 {
    if seconds.is_finite() && seconds > 0.0 {
        (seconds / TICK_S).round().min(f64::from(u32::MAX)) as u32
    } else {
        0
    }
}

/// Request outcomes at a level. Errors never count as successes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestCounts {
    /// Completed with the full stream.
    pub ok: u64,
    /// Started streaming but did not finish (disconnect, stream closed early, timeout mid-stream).
    pub incomplete: u64,
    /// Failed before or without output (HTTP error, connect error, malformed stream, error event).
    pub errored: u64,
    /// How many failed requests (incomplete and errored) failed in each way.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_kinds: BTreeMap<ErrorKind, u64>,
}

impl RequestCounts {
    pub fn total(&self) -> u64 {
        self.ok + self.incomplete + self.errored
    }
}

/// Distributions of every per-request metric at a level. Times in seconds, speeds in tok/s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelMetrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<Distribution>,
    /// Per-token inter-token latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_s: Option<Distribution>,
    /// Gap between content-carrying stream events (differs from ITL when chunks hold several tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_chunk_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_s: Option<Distribution>,
    /// Per-user decode speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_tok_s: Option<Distribution>,
    /// Per-user prefill speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tok_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_wait_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<Distribution>,
    /// Time to the first answer token, after any reasoning (levels where reasoning streamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_s: Option<Distribution>,
    /// Reasoning tokens per request (levels where reasoning streamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<Distribution>,
}

/// GPU power during a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PowerStats {
    /// Mean total power of all GPUs, watts.
    pub mean_w: f64,
    pub max_w: f64,
    /// Energy over the window, joules.
    pub energy_j: f64,
    /// e.g. "nvml", "nvidia-smi", "dcgm-exporter".
    pub source: String,
    pub samples: u64,
}

/// Server-side figures scraped from `/metrics` (or engine timings) during a level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerMetrics {
    /// Mean request queue time from the engine's histogram, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time_mean_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_time_mean_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_time_mean_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<f64>,
    /// KV-cache usage, fraction 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_max: Option<f64>,
    /// Engine-reported per-request prefill speed (e.g. llama.cpp `timings`), tok/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_prefill_tok_s: Option<Distribution>,
    /// Engine-reported per-request decode speed, tok/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_decode_tok_s: Option<Distribution>,
    /// Which metric family was found: "vllm", "sglang", "tgi", "llamacpp".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Number of scrapes during the level.
    #[serde(default)]
    pub scrapes: u64,
}

/// The collector's own health during a level: if it lagged, its numbers may be distorted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientHealth {
    /// How late requests were sent versus their scheduled start, seconds (p99).
    pub scheduling_lag_p99_s: f64,
    /// Event-loop delay measured by a ticking probe, seconds (p99).
    pub event_loop_delay_p99_s: f64,
    /// True when the lag was large enough that the client may have distorted the level.
    pub distorted: bool,
    /// Which clock stamped the stream events of the level's requests: "kernel_receive" (the
    /// kernel's socket receive timestamp, immune to the client's parsing backlog), "parse" (when
    /// the client parsed the event) or "mixed". A string so later values load in older readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_clock: Option<String>,
    /// Requests sent a second time, on a new connection, because their first attempt failed on
    /// a reused connection before any response byte (see [`RequestRecord::retried`]). They are
    /// counted by their second attempt's outcome, never as failures of the first.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Mean and 95% confidence interval across repeat trials of a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialSummary {
    pub trials: u32,
    /// Metric name -> interval over trial means.
    pub intervals: BTreeMap<String, ConfidenceInterval>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfidenceInterval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// Where the per-request records are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordsLink {
    /// Path relative to the report file (or a URL).
    pub path: String,
    pub count: u64,
}

/// One request, as written to the JSONL records file (one object per line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestRecord {
    pub scenario: String,
    pub mode: LoadMode,
    pub concurrency: u32,
    /// Trial index (0 unless repeat trials were asked for).
    #[serde(default)]
    pub trial: u32,
    /// Sequence number within the level.
    pub index: u64,
    /// Warmup requests are recorded but excluded from statistics.
    #[serde(default)]
    pub warmup: bool,
    /// False when outside the steady-state window of a peak level.
    #[serde(default = "yes")]
    pub in_window: bool,
    pub outcome: Outcome,
    /// Seconds from the level start to the scheduled start of the request.
    pub scheduled_s: f64,
    /// Seconds from the level start to when the request was actually sent.
    pub sent_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Arrival time of each content-carrying event, seconds after sending, with its token count.
    /// With running counts, tokens that decode to no text count on the next content event, or
    /// on the final event that reported them when none follows: the counts add up to
    /// `output_tokens`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<ChunkArrival>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_wait_s: Option<f64>,
    /// Engine-reported timings (e.g. llama.cpp), passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_timings: Option<EngineTimings>,
    /// Set when the request was sent twice: its first attempt failed on a reused connection
    /// before any response byte, so it never reached the engine, and the second went on a new
    /// connection. `sent_s` and the latencies are the second attempt's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<Retried>,
    /// The request's session and turn (users and sessions modes, traces with sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionTurn>,
    /// Whether the request's series let the prefix cache help (session series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// Seconds from the start (as `ttft_s`) to the first answer token, after the reasoning;
    /// only for requests that streamed reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_s: Option<f64>,
    /// Reasoning tokens (`completion_tokens_details.reasoning_tokens`, else one per reasoning
    /// event); only for requests that streamed reasoning. Included in `output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// The response's `id` as the server named it, to find the request in the server's logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The shard that sent it, in a sharded run (see [`Sharding`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
    /// What it was asked, where its scenario has a prompt file or drawn lengths (since 1.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<AskedLengths>,
}

/// A run whose load came from several client processes, each sending its share of every level
/// on one schedule, so that all enter and leave each level together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sharding {
    /// Shards in the run.
    pub count: u32,
    /// RFC 3339 time at which every shard began its schedule (`--start-at`).
    pub start_at: String,
    /// Seconds a peak level keeps its requests in flight (`--level-seconds`).
    pub level_seconds: f64,
    /// Seconds given to each level's requests to finish after its load, and to each scenario's
    /// warmup (`--drain-seconds`).
    pub drain_seconds: f64,
    /// In a shard's report, that shard; in a merged report, every shard in index order.
    pub shards: Vec<ShardPart>,
}

/// One shard of a sharded run: where it ran, its clock, and its part of every level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardPart {
    /// From 0 (Kubernetes' `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// Host name of the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The report file it was merged from (merged reports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub clock: ShardClock,
    /// Every level of the schedule in order, with this shard's share (zero included).
    pub levels: Vec<ShardLevel>,
}

/// What a shard knows of its clock. Shards align on their own wall clocks (CLOCK_REALTIME, kept
/// in step by NTP or the like); each compares its clock with the server's `Date` headers, so a
/// merge can tell when two shards' clocks disagree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardClock {
    /// The server's clock minus this host's, seconds: the middle of the interval the `Date`
    /// headers of `samples` responses allow. None when the server sent no `Date`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_offset_s: Option<f64>,
    /// Half the width of that interval: the offset is within ± this. `Date` has one-second
    /// resolution; samples sent at spread phases of the second narrow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_offset_bound_s: Option<f64>,
    #[serde(default)]
    pub samples: u32,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, seconds, when the shard mapped `start_at` onto its
    /// monotonic clock (every level start is placed through this mapping).
    pub realtime_minus_monotonic_s: f64,
    /// The same when the shard finished: a difference says the wall clock was stepped or
    /// slewed during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realtime_minus_monotonic_end_s: Option<f64>,
}

/// A shard's part of one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardLevel {
    pub scenario: String,
    pub mode: LoadMode,
    /// The level as its records name it (`RequestRecord::concurrency`): the whole run's
    /// concurrency in peak and burst mode, its users in users mode, the level's number in the
    /// open-loop modes (rate, sessions, trace).
    pub level: u32,
    /// Session levels: the series' cache use (a run measures a users level once per cache
    /// use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// The whole run's target arrival rate (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// Requests this shard kept in flight (peak), sent at once (burst), or its users (users).
    /// None in the open-loop modes, whose arrivals, sessions or trace lines are dealt out in
    /// turn (see `trials[].max_in_flight`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<u32>,
    /// One per trial.
    pub trials: Vec<ShardTrial>,
}

/// When a shard ran one trial of a level, and its measurement window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardTrial {
    /// Seconds after its scheduled start that the trial began: 0 on time, more when the
    /// shard's previous step ran over its time. Records and window count from the actual start.
    pub late_s: f64,
    /// Measurement window, seconds after the trial's start.
    pub window_start_s: f64,
    pub window_end_s: f64,
    /// Most requests this shard had in flight.
    pub max_in_flight: u32,
}

fn yes() -> bool {
    true
}

/// Why and at what cost a request was sent a second time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Retried {
    pub reason: RetryReason,
    /// The first attempt's failure, as the connection reported it.
    pub detail: String,
    /// Seconds from the first attempt's send to its failure: the client's cost, not the
    /// server's, and outside the recorded latencies.
    pub lost_s: f64,
}

/// Why a request was retried. Only a failure that proves the request never reached the
/// engine is retried: a failure after any response byte, or on a new connection, never is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetryReason {
    /// `stale_connection`: a kept-alive connection the server had closed (without
    /// `Connection: close`, or as its idle timeout ran out) failed the request before any
    /// response byte. The client's connection handling, not the server's failure.
    StaleConnection,
    /// A reason this build does not know (a newer collector's), so its records still load.
    /// Never written.
    #[serde(other)]
    #[schemars(skip)]
    Unknown,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Outcome {
    Ok,
    /// Streamed some output but did not finish.
    Incomplete {
        kind: ErrorKind,
        detail: String,
    },
    /// Failed before any output, or finished without any.
    Errored {
        kind: ErrorKind,
        detail: String,
    },
}

/// Why a request failed, written as a short name (`"disconnect"`, `"http_429"`). A kind says
/// what went wrong, not always whose fault it was: a request that never reached the server, or
/// that the client's own connection handling lost, is not a failure of the server.
#[derive(Clone)]
pub enum ErrorKind {
    /// `connect`: no connection could be opened (refused, unreachable, TLS handshake failed,
    /// `--connect-timeout` passed). The request never reached the server: the endpoint is down
    /// or unreachable from the client, not a request the server failed.
    Connect,
    /// `disconnect`: the connection closed or broke before the stream ended: the server or
    /// something between (a proxy) dropped it. (Before any response byte on a reused keep-alive
    /// connection, the client's pool had sent on a connection the server had just closed: the
    /// client's connection handling. Such a request goes again on a new connection, recorded in
    /// `RequestRecord::retried`, and counts by that attempt's outcome: never as a disconnect.)
    Disconnect,
    /// `http_<code>`, e.g. `http_429`: the server answered with this non-success status (the
    /// detail holds the start of its body). 429 and 5xx are the server refusing or failing
    /// under load; 400, 401, 404 are usually the client's settings (request fields, API key,
    /// model name).
    Http(u16),
    /// `timeout_first_token`: no token arrived before `--first-token-timeout`. The server was
    /// slower (queueing, prefill) than the limit the client set.
    TimeoutFirstToken,
    /// `timeout_total`: the whole request took longer than `--total-timeout`, the client's
    /// limit.
    TimeoutTotal,
    /// `malformed_sse`: an event's data was not the JSON chunk the API defines: the server's
    /// (or a proxy's) fault.
    MalformedSse,
    /// `error_event`: the server reported an error inside the stream (an `error` event, or a
    /// chunk with an `error` field): the server's failure.
    ErrorEvent,
    /// `closed_without_done`: the stream ended cleanly but without the final `[DONE]` event:
    /// the server's fault.
    ClosedWithoutDone,
    /// `no_output`: the stream finished (`[DONE]`) without any content: the server produced
    /// nothing.
    NoOutput,
    /// A kind this build does not know, kept as written: a newer collector's (a reader accepts
    /// every minor version of its major version). Never written by this build.
    Other(String),
}

impl ErrorKind {
    /// Every kind with a fixed name: all but `Http` and `Other`.
    const NAMED: [ErrorKind; 8] = [
        ErrorKind::Connect,
        ErrorKind::Disconnect,
        ErrorKind::TimeoutFirstToken,
        ErrorKind::TimeoutTotal,
        ErrorKind::MalformedSse,
        ErrorKind::ErrorEvent,
        ErrorKind::ClosedWithoutDone,
        ErrorKind::NoOutput,
    ];

    /// The name written to reports and records.
    pub fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Disconnect => "disconnect",
            ErrorKind::TimeoutFirstToken => "timeout_first_token",
            ErrorKind::TimeoutTotal => "timeout_total",
            ErrorKind::MalformedSse => "malformed_sse",
            ErrorKind::ErrorEvent => "error_event",
            ErrorKind::ClosedWithoutDone => "closed_without_done",
            ErrorKind::NoOutput => "no_output",
            ErrorKind::Http(status) => return Cow::Owned(format!("http_{status}")),
            ErrorKind::Other(name) => return Cow::Owned(name.clone()),
        })
    }

    /// The kind of a written name; every name reads back to itself (`http_` takes a
    /// three-digit status, as HTTP has).
    pub fn from_name(name: &str) -> ErrorKind {
        if let Some(named) = ErrorKind::NAMED.iter().find(|k| k.name() == name) {
            return named.clone();
        }
        let status = name
            .strip_prefix("http_")
            .filter(|digits| digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok());
        match status {
            Some(status) => ErrorKind::Http(status),
            None => ErrorKind::Other(name.to_string()),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The name, quoted: an outcome in a log reads as it does in the records.
impl fmt::Debug for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.name(), f)
    }
}

/// Kinds compare by name: `Other("disconnect")` is `Disconnect`, and `error_kinds` lists kinds
/// in the order of their names, as it did when they were strings.
impl PartialEq for ErrorKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ErrorKind {}

impl Ord for ErrorKind {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name().cmp(&other.name())
    }
}

impl PartialOrd for ErrorKind {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = ErrorKind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an error kind such as \"disconnect\" or \"http_429\"")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ErrorKind, E> {
                Ok(ErrorKind::from_name(name))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// The names this build writes: the fixed ones, and `http_` with a status. (See the type for
/// what each means; `Other` is for reading only.)
impl JsonSchema for ErrorKind {
    fn schema_name() -> Cow<'static, str> {
        "ErrorKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let named: Vec<Cow<'static, str>> = ErrorKind::NAMED.iter().map(ErrorKind::name).collect();
        schemars::json_schema!({
            "description": "Why a request failed: a fixed name, or http_<status> for a non-success HTTP status.",
            "anyOf": [
                { "type": "string", "enum": named },
                { "type": "string", "pattern": "^http_[0-9]{3}$" }
            ]
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChunkArrival {
    /// Seconds after the request was sent.
    pub t: f64,
    /// Tokens carried by the event.
    pub tokens: u32,
}

/// Server-side per-request timings some engines report (llama.cpp's `timings`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineTimings {
    pub prompt_n: Option<u64>,
    pub prompt_ms: Option<f64>,
    pub predicted_n: Option<u64>,
    pub predicted_ms: Option<f64>,
    /// Prompt tokens reused from the engine's cache (llama.cpp `cache_n`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_n: Option<u64>,
}

impl RequestRecord {
    /// A successful measured request of `scenario` in `mode` (level 1, trial 0) with nothing
    /// timed or counted yet: the base that tests and tools fill in with struct update syntax,
    /// `RequestRecord { ttft_s: Some(0.1), ..RequestRecord::ok("chatbot", LoadMode::Peak, 0) }`,
    /// so a field added to records is added here once.
    pub fn ok(scenario: &str, mode: LoadMode, index: u64) -> RequestRecord {
        RequestRecord {
            scenario: scenario.into(),
            mode,
            concurrency: 1,
            trial: 0,
            index,
            warmup: false,
            in_window: true,
            outcome: Outcome::Ok,
            scheduled_s: 0.0,
            sent_s: 0.0,
            ttft_s: None,
            e2e_s: None,
            input_tokens: None,
            output_tokens: None,
            cached_tokens: None,
            chunks: Vec::new(),
            queue_wait_s: None,
            engine_timings: None,
            session: None,
            cache: None,
            first_answer_s: None,
            reasoning_tokens: None,
            response_id: None,
            retried: None,
            shard: None,
            asked: None,
        }
    }
}

impl Report {
    /// The series of `scenario` in `mode` with `cache` use (session series; None for others),
    /// added (empty, with `arrivals`) when the report has none yet: a run and a merge add
    /// levels to their report through this.
    pub fn series_mut(
        &mut self,
        scenario: &str,
        mode: LoadMode,
        cache: Option<CacheUse>,
        arrivals: impl FnOnce() -> Option<Arrivals>,
    ) -> &mut Series {
        let at = match self
            .series
            .iter()
            .position(|s| s.scenario == scenario && s.mode == mode && s.cache == cache)
        {
            Some(at) => at,
            None => {
                self.series.push(Series {
                    scenario: scenario.into(),
                    mode,
                    arrivals: arrivals(),
                    levels: Vec::new(),
                    cache,
                });
                self.series.len() - 1
            }
        };
        &mut self.series[at]
    }

    /// The run's title: `metadata.title`, else "MODEL on Nx GPU". One definition for the
    /// collector's `view` index and the viewer's header.
    pub fn display_title(&self) -> String {
        self.metadata.title.clone().unwrap_or_else(|| {
            format!(
                "{} on {}",
                self.metadata.model.id,
                self.metadata.hardware.gpu_label()
            )
        })
    }
}

impl HardwareInfo {
    /// "1x NVIDIA H100 PCIe"; the model alone when the count is not known (0).
    pub fn gpu_label(&self) -> String {
        if self.gpu_count == 0 {
            return self.gpu_model.clone();
        }
        format!("{}x {}", self.gpu_count, self.gpu_model)
    }
}
