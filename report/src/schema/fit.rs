//! The simulator fitted to a report (`infermeter fit`, since 1.3.0): the engine model's
//! deployment, its fitted coefficients, and per level and metric what was measured, what the
//! fit gives, and what it predicts with that level held out. Plain data: the fitting itself is
//! in the `infermeter-engine` crate, which the collector and the viewer share.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::LoadMode;

/// The engine model fitted to the report's measured levels: what the viewer's What-if section
/// predicts from, with the errors it states beside every prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fit {
    /// The simulator's deployment the model starts from (its profile tables' ids).
    pub deployment: FitDeployment,
    /// The fitted coefficients.
    pub coefficients: FitCoefficients,
    /// The same coefficients in the uncalibrated profile (spec sheets and defaults), for
    /// comparison.
    pub uncalibrated: FitCoefficients,
    /// Every level fitted, in report order.
    pub levels: Vec<FitLevel>,
    /// Per metric, the errors over the levels: fitted, held out, uncalibrated.
    pub errors: Vec<FitErrors>,
    /// Levels left out of the fit and why (modes the model does not replay, levels without
    /// figures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Which deployment of the simulator's tables the fit starts from, and the engine's limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FitDeployment {
    /// Model id in the simulator's tables, e.g. "llama-3.1-8b".
    pub model: String,
    /// GPU id in the simulator's tables, e.g. "h100-sxm" (or "cpu").
    pub gpu: String,
    pub gpus: u32,
    /// Most sequences the engine runs at once (llama.cpp's slots, vLLM's `--max-num-seqs`).
    pub max_num_seqs: u32,
    /// Most tokens in one engine step (vLLM's `--max-num-batched-tokens`, llama.cpp's batch).
    pub max_num_batched_tokens: u32,
}

/// The model's free coefficients, each an effective figure over all GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FitCoefficients {
    /// Memory bandwidth reached by weight reads, GB/s.
    pub mem_bw_gbs: f64,
    /// Bandwidth reached by attention's KV-cache reads, GB/s (the memory bandwidth in an engine
    /// whose attention reads the cache in place).
    pub kv_bw_gbs: f64,
    /// Matrix-multiply rate at the weights' precision, TFLOP/s.
    pub gemm_tflops: f64,
    /// Attention rate (FLOPs over the context), TFLOP/s.
    pub attn_tflops: f64,
    /// Fixed time of every engine step, ms.
    pub step_overhead_ms: f64,
    /// Time per sequence in a step, µs.
    pub seq_overhead_us: f64,
    /// Time from the request's arrival to its first scheduling (API server, tokenising), ms.
    pub frontend_latency_ms: f64,
    /// Time added to a step of two or more sequences, ms: the cost of batching itself (llama.cpp
    /// on a CPU steps one sequence in 5.5 ms, two in 10.2, four in 14.3). Since 1.7.0; a fit
    /// written before has none (0).
    #[serde(default)]
    pub batch_overhead_ms: f64,
}

/// One measured level and what the model gives for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FitLevel {
    /// Scenario id of the report.
    pub scenario: String,
    pub mode: LoadMode,
    /// Requests in flight (peak) or sent at once (burst); the highest seen in flight (rate).
    pub concurrency: u32,
    /// Arrival rate, requests per second (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// Mean input and output tokens the level's requests had.
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Requests in the level's measurement window.
    pub measured_requests: u32,
    /// Mean time to first token, seconds.
    pub ttft_s: FitPoint,
    /// Mean inter-token latency, seconds.
    pub itl_s: FitPoint,
    /// Mean per-user decode speed, tok/s.
    pub decode_tok_s: FitPoint,
    /// System output throughput, tok/s.
    pub system_output_tok_s: FitPoint,
}

/// One figure of a level: measured, and as the model gives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FitPoint {
    pub measured: f64,
    /// The model fitted to every level.
    pub fitted: f64,
    /// The model fitted to every other level (leave-one-level-out): a prediction.
    pub held_out: f64,
    /// The uncalibrated profile.
    pub uncalibrated: f64,
}

// Their words (label, unit, direction) are their `Metric`s', in `analysis::metric`.
/// The figures a fit is judged on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FitMetric {
    TtftS,
    ItlS,
    DecodeTokS,
    SystemOutputTokS,
}

impl FitMetric {
    pub const ALL: [FitMetric; 4] = [
        FitMetric::TtftS,
        FitMetric::ItlS,
        FitMetric::DecodeTokS,
        FitMetric::SystemOutputTokS,
    ];

    /// Short id for keys and test ids: "ttft", "itl", "decode", "throughput".
    pub fn key(self) -> &'static str {
        match self {
            FitMetric::TtftS => "ttft",
            FitMetric::ItlS => "itl",
            FitMetric::DecodeTokS => "decode",
            FitMetric::SystemOutputTokS => "throughput",
        }
    }

    /// This figure of a level.
    pub fn point(self, level: &FitLevel) -> &FitPoint {
        match self {
            FitMetric::TtftS => &level.ttft_s,
            FitMetric::ItlS => &level.itl_s,
            FitMetric::DecodeTokS => &level.decode_tok_s,
            FitMetric::SystemOutputTokS => &level.system_output_tok_s,
        }
    }
}

/// Relative errors of one metric over the fitted levels (0.1: 10%): the median and the worst
/// of their sizes, the worst with its sign (+: the model gives more than was measured).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FitErrors {
    pub metric: FitMetric,
    pub fitted: ErrorSummary,
    /// Leave-one-level-out: each level predicted by the model fitted to the others.
    pub held_out: ErrorSummary,
    pub uncalibrated: ErrorSummary,
}

/// The median size and the signed worst of a set of relative errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorSummary {
    pub median: f64,
    pub worst: f64,
}
