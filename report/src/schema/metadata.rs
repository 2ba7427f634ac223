//! What was benchmarked, on what, and how: the report's metadata and the run's parameters.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::configuration::Configuration;
use super::prompts::PromptCounter;
use super::series::LoadMode;

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

/// Limits a request or a level must meet: the bounds of an SLO (judged on each request,
/// [`Limits::per_request`]) and a use case's thresholds (judged on a level's statistic).
/// `None`: not checked. Times in seconds, speed in tok/s. A value exactly at a limit meets it.
// One type for both, in a field order that keeps the keys of a stored SLO (ttft, tpot, e2e,
// stalls) and of the summary's thresholds (ttft, decode, itl, e2e) in the order they were
// written in before the two were one type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    /// Time to first token, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ttft_s: Option<f64>,
    /// Minimum per-user decode speed, tok/s. Judged on each request as a time per output token
    /// (`1 / speed`, folded into `max_tpot_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_decode_tok_s: Option<f64>,
    /// Time per output token after the first, seconds: `(e2e - ttft) / (output_tokens - 1)`, the
    /// inverse of the per-user decode speed. A request of one token has no such time and meets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tpot_s: Option<f64>,
    /// Inter-token latency, seconds. Judged on each request as its mean gap, its time per
    /// output token (folded into `max_tpot_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_itl_s: Option<f64>,
    /// End-to-end latency, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_e2e_s: Option<f64>,
    /// Most stalls a request may have (pauses in its stream longer than the level's
    /// `per_request.stall_gap`); 0: none. Judged on each request only (a level has no stall
    /// statistic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stalls: Option<u32>,
    /// An agentic job's completion time, seconds: from its start until its whole tree of agents
    /// is done. Judged on each job only (agents levels); a request has no such time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_job_s: Option<f64>,
}

impl Limits {
    /// No limit set (`Default`, usable in constants: `Limits { max_ttft_s: …, ..Limits::NONE }`).
    pub const NONE: Limits = Limits {
        max_ttft_s: None,
        min_decode_tok_s: None,
        max_tpot_s: None,
        max_itl_s: None,
        max_e2e_s: None,
        max_stalls: None,
        max_job_s: None,
    };

    /// True when no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }

    /// The limits as each request is judged by them: TTFT, end-to-end latency and stalls as
    /// they are; a minimum decode speed, or a maximum inter-token latency (a request's mean gap
    /// is its time per output token), as a maximum time per output token, the strictest of the
    /// three. A use case's thresholds judged this way are the capacity analysis' attainment
    /// basis ("95% of requests within thresholds").
    pub fn per_request(&self) -> Limits {
        let from_speed = self.min_decode_tok_s.filter(|s| *s > 0.0).map(|s| 1.0 / s);
        let max_tpot_s = [self.max_tpot_s, from_speed, self.max_itl_s]
            .into_iter()
            .flatten()
            .reduce(f64::min);
        Limits {
            max_tpot_s,
            min_decode_tok_s: None,
            max_itl_s: None,
            ..*self
        }
    }
}

/// A service-level objective: limits every request must meet at once (a request that failed
/// meets none, a minimum decode speed or a maximum ITL is judged as a time per output token),
/// and the share of requests that must meet them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
// The wasm reads it without serde's buffer (schema/from_value.rs).
#[cfg_attr(target_arch = "wasm32", serde(try_from = "serde_json::Value"))]
pub struct Slo {
    /// Flattened, so a stored SLO reads `{"max_ttft_s": 2.0, …, "target": 0.95}`.
    #[serde(flatten)]
    pub limits: Limits,
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
            limits: Limits::default(),
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
// The wasm reads it without serde's buffer (schema/from_value.rs).
#[cfg_attr(target_arch = "wasm32", serde(try_from = "serde_json::Value"))]
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
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let pooling = crate::order::btree_map(pooling);
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

impl HardwareInfo {
    /// "1x NVIDIA H100 PCIe"; the model alone when the count is not known (0).
    pub fn gpu_label(&self) -> String {
        if self.gpu_count == 0 {
            return self.gpu_model.clone();
        }
        format!("{}x {}", self.gpu_count, self.gpu_model)
    }
}
