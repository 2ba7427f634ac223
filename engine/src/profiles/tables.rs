// The tables' types, as `profiles.toml` writes them. Only types: the build script includes this
// file too (`include!`), to read the TOML into them and write the built-in tables as Rust, so
// the crate builds them without parsing anything at run time.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub gpu_memory_utilization: f64,
    pub kv_block_size: u32,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    pub name: String,
    /// Other names the hardware goes by in reports (what `nvidia-smi` calls it), so a measured
    /// report finds its entry.
    #[serde(default)]
    pub aliases: Vec<String>,
    pub vram_gib: f64,
    pub mem_bw_gbs: f64,
    pub tflops_bf16: f64,
    pub tflops_fp8: f64,
    pub tflops_fp4: f64,
    pub interconnect_gbs: f64,
    pub allreduce_latency_us: f64,
    pub mem_efficiency: f64,
    pub flop_efficiency: f64,
    pub reserved_gb: f64,
}

/// Per-model (and per-deployment, via `[[tuning]]`) knobs.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knobs {
    pub step_overhead_ms: Option<f64>,
    pub seq_overhead_us: Option<f64>,
    pub frontend_latency_ms: Option<f64>,
    pub prefill_efficiency: Option<f64>,
    pub decode_efficiency: Option<f64>,
    pub routing_locality: Option<f64>,
    /// Largest batch (sequences per step) with a captured CUDA graph; bigger steps run eagerly.
    pub cuda_graph_max_batch: Option<u32>,
    /// Extra kernel-launch time of an eager step.
    pub eager_step_overhead_ms: Option<f64>,
    /// Fixed KV-cache pool over all GPUs, replacing the memory-budget computation.
    pub kv_cache_gb: Option<f64>,
    /// Token budget per step (vLLM's `max_num_batched_tokens`) this deployment is served with;
    /// `--max-num-batched-tokens` overrides it.
    pub max_num_batched_tokens: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    pub name: String,
    /// Other ids the model is served under, so a measured report finds its entry.
    #[serde(default)]
    pub aliases: Vec<String>,
    pub total_params_b: f64,
    pub active_params_b: f64,
    pub layers: u32,
    pub attention_layers: u32,
    #[serde(default)]
    pub window_layers: u32,
    #[serde(default)]
    pub sliding_window: u32,
    pub hidden: u32,
    pub q_heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    #[serde(default)]
    pub kv_latent_dim: Option<u32>,
    #[serde(default)]
    pub experts: u32,
    #[serde(default)]
    pub active_experts: u32,
    pub precision: String,
    pub kv_dtype: String,
    pub max_model_len: u32,
    #[serde(default)]
    pub default_gpus: Option<u32>,
    #[serde(flatten)]
    pub knobs: Knobs,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuning {
    pub model: String,
    pub gpu: String,
    #[serde(default)]
    pub gpus: Option<u32>,
    #[serde(flatten)]
    pub knobs: Knobs,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSet {
    pub defaults: Defaults,
    pub gpu: BTreeMap<String, GpuSpec>,
    pub model: BTreeMap<String, ModelSpec>,
    #[serde(default)]
    pub tuning: Vec<Tuning>,
}
