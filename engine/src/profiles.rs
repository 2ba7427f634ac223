//! Hardware and model profiles: a data file (`engine/profiles.toml`, embedded) merged with any
//! user tables, resolved into one [`Profile`] for a (model, GPU, GPU count) deployment.
//!
//! The build script turns the TOML into JSON, so resolving needs no TOML parser: the viewer
//! (wasm32) reads the same tables with the `serde_json` it already has. A user's TOML file
//! (`infermeter sim --profiles FILE`) is read by the simulator and merged here as JSON.

use serde_json::Value;

use crate::profile::{DeploymentCard, Peaks, Profile};

/// The profiles shipped with the simulator, as written (`engine/profiles.toml`).
pub const DEFAULT_PROFILES: &str = include_str!("../profiles.toml");

/// The same tables as JSON, converted by the build script: what a user's tables merge over.
const DEFAULT_PROFILES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/profiles.json"));

// `fn builtin_tables() -> ProfileSet`: the same tables as Rust, written by the build script.
include!(concat!(env!("OUT_DIR"), "/profiles.rs"));

/// Step token budget when neither the profile nor the command line sets one (vLLM V1's default
/// for online serving on GPUs with 70 GiB or more).
pub const DEFAULT_MAX_NUM_BATCHED_TOKENS: u32 = 8192;

const GB: f64 = 1e9;
const GIB: f64 = (1u64 << 30) as f64;

/// Why a deployment cannot be resolved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    #[error("unknown GPU {gpu:?}; known GPUs: {known} (add more with --profiles FILE)")]
    UnknownGpu { gpu: String, known: String },
    #[error("unknown model {model:?}; known models: {known} (add more with --profiles FILE)")]
    UnknownModel { model: String, known: String },
    #[error(
        "model {model} needs {weights_gb:.0} GB for weights but {gpus} x {gpu} offer {budget_gb:.0} GB \
         at 90% utilisation with room for a KV cache; use more GPUs (e.g. --gpus {suggested_gpus}) or a \
         bigger GPU (--gpu)"
    )]
    DoesNotFit {
        model: String,
        weights_gb: f64,
        gpus: u32,
        gpu: String,
        budget_gb: f64,
        suggested_gpus: u32,
    },
    #[error("profiles {path}: {message}")]
    Invalid { path: String, message: String },
}

/// The tables' types (also read by the build script).
mod tables;

pub use tables::*;

/// Merges `over` into `base`: tables key by key (recursively), arrays appended, anything else
/// replaced. So a user's `[gpu.h200]` changes only the keys it sets and `[[tuning]]` rows add up.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (key, value) in o {
                match b.get_mut(&key) {
                    Some(existing) if existing.is_object() || existing.is_array() => {
                        merge(existing, value)
                    }
                    _ => {
                        b.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(o)) => b.extend(o),
        (base, over) => *base = over,
    }
}

impl ProfileSet {
    /// The embedded defaults (built as Rust: no parsing, and no parser in the viewer's wasm).
    pub fn builtin() -> Self {
        builtin_tables()
    }

    /// The embedded defaults as JSON, to merge a user's tables over ([`merge`]).
    pub fn builtin_value() -> Value {
        serde_json::from_str(DEFAULT_PROFILES_JSON).expect("the build script wrote valid JSON")
    }

    /// The tables of `value` (merged from several sources); `name` says where the last came from.
    pub fn from_value(value: Value, name: &str) -> Result<Self, ProfileError> {
        serde_json::from_value(value).map_err(|e| ProfileError::Invalid {
            path: name.to_string(),
            message: e.to_string(),
        })
    }

    /// Resolve a deployment. `gpus = None` takes the model's `default_gpus` (or 1).
    pub fn resolve(
        &self,
        model: &str,
        gpu: &str,
        gpus: Option<u32>,
    ) -> Result<Profile, ProfileError> {
        Deployment::new(self, model, gpu, gpus)?.profile()
    }
}

/// One deployment being resolved: a model on a number of one kind of GPU, with its knobs.
struct Deployment<'a> {
    set: &'a ProfileSet,
    model_id: &'a str,
    gpu_id: &'a str,
    model: &'a ModelSpec,
    gpu: &'a GpuSpec,
    gpus: u32,
    /// The model's knobs with every matching `[[tuning]]` row's set values over them.
    knobs: Knobs,
}

/// The KV cache a deployment's memory leaves room for.
struct Memory {
    /// KV bytes per token over the full-attention layers, and over the sliding-window ones.
    kv_bytes_per_token: f64,
    window_kv_bytes_per_token: f64,
    /// Tokens the KV-cache pool holds.
    kv_capacity_tokens: f64,
}

impl<'a> Deployment<'a> {
    fn new(
        set: &'a ProfileSet,
        model_id: &'a str,
        gpu_id: &'a str,
        gpus: Option<u32>,
    ) -> Result<Deployment<'a>, ProfileError> {
        let model = set
            .model
            .get(model_id)
            .ok_or_else(|| ProfileError::UnknownModel {
                model: model_id.to_string(),
                known: set.model.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
        let gpu = set
            .gpu
            .get(gpu_id)
            .ok_or_else(|| ProfileError::UnknownGpu {
                gpu: gpu_id.to_string(),
                known: set.gpu.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
        let gpus = gpus.or(model.default_gpus).unwrap_or(1).max(1);
        let mut knobs = model.knobs.clone();
        for t in &set.tuning {
            if t.model == model_id && t.gpu == gpu_id && t.gpus.is_none_or(|n| n == gpus) {
                let k = &t.knobs;
                macro_rules! take {
                    ($($f:ident),*) => { $( if k.$f.is_some() { knobs.$f = k.$f; } )* };
                }
                take!(
                    step_overhead_ms,
                    seq_overhead_us,
                    frontend_latency_ms,
                    prefill_efficiency,
                    decode_efficiency,
                    routing_locality,
                    cuda_graph_max_batch,
                    eager_step_overhead_ms,
                    kv_cache_gb,
                    max_num_batched_tokens
                );
            }
        }
        Ok(Deployment {
            set,
            model_id,
            gpu_id,
            model,
            gpu,
            gpus,
            knobs,
        })
    }

    /// The KV cache beside the weights; an error when no usable pool is left.
    fn memory(&self, bytes_per_param: f64) -> Result<Memory, ProfileError> {
        let (m, g) = (self.model, self.gpu);
        let kv_bytes = precision_bytes(&m.kv_dtype, self.model_id)?;
        let kv_elems_per_layer = m
            .kv_latent_dim
            .map(f64::from)
            .unwrap_or(2.0 * f64::from(m.kv_heads) * f64::from(m.head_dim));
        let kv_bytes_per_token = kv_elems_per_layer * f64::from(m.attention_layers) * kv_bytes;
        let window_kv_bytes_per_token = kv_elems_per_layer * f64::from(m.window_layers) * kv_bytes;
        let weight_bytes = m.total_params_b * 1e9 * bytes_per_param;
        let n = f64::from(self.gpus);
        let utilisation = self.set.defaults.gpu_memory_utilization;
        let kv_pool = match self.knobs.kv_cache_gb {
            Some(gb) => gb * GB,
            None => g.vram_gib * GIB * n * utilisation - weight_bytes - g.reserved_gb * GB * n,
        };
        // The pool is sized by full-attention KV only: sliding-window layers hold at most
        // `sliding_window` tokens per sequence, small next to it (their reads are still timed).
        let kv_capacity_tokens = if kv_bytes_per_token > 0.0 {
            (kv_pool / kv_bytes_per_token).floor()
        } else {
            f64::MAX
        };
        if kv_pool <= 0.0 || kv_capacity_tokens < f64::from(self.set.defaults.kv_block_size) {
            return Err(self.does_not_fit(weight_bytes));
        }
        Ok(Memory {
            kv_bytes_per_token,
            window_kv_bytes_per_token,
            kv_capacity_tokens,
        })
    }

    /// The error for weights that leave no KV-cache room, with a GPU count that would fit.
    fn does_not_fit(&self, weight_bytes: f64) -> ProfileError {
        let g = self.gpu;
        let utilisation = self.set.defaults.gpu_memory_utilization;
        ProfileError::DoesNotFit {
            model: self.model_id.to_string(),
            weights_gb: weight_bytes / GB,
            gpus: self.gpus,
            gpu: self.gpu_id.to_string(),
            budget_gb: g.vram_gib * GIB / GB * f64::from(self.gpus) * utilisation,
            suggested_gpus: (1..=64)
                .find(|k| {
                    g.vram_gib * GIB * f64::from(*k) * (utilisation - 0.05)
                        > weight_bytes + g.reserved_gb * GB * f64::from(*k)
                })
                .unwrap_or(64)
                .max(self.model.default_gpus.unwrap_or(1))
                .max(self.gpus + 1),
        }
    }

    /// Parameters every token reads (dense) and those of one expert (0 for a dense model).
    fn parameter_split(&self) -> (f64, f64) {
        let m = self.model;
        let (experts, active_experts) = (f64::from(m.experts), f64::from(m.active_experts));
        if m.experts > 0 && m.experts > m.active_experts {
            let per_expert =
                (m.total_params_b - m.active_params_b) * 1e9 / (experts - active_experts);
            (
                m.active_params_b * 1e9 - active_experts * per_expert,
                per_expert,
            )
        } else {
            (m.active_params_b * 1e9, 0.0)
        }
    }

    fn profile(self) -> Result<Profile, ProfileError> {
        let (m, g, knobs) = (self.model, self.gpu, &self.knobs);
        let bytes_per_param = precision_bytes(&m.precision, self.model_id)?;
        let memory = self.memory(bytes_per_param)?;
        let tflops = match m.precision.as_str() {
            "bf16" | "fp16" => g.tflops_bf16,
            "fp8" => g.tflops_fp8,
            _ => g.tflops_fp4,
        };
        let (dense_params, expert_params) = self.parameter_split();
        let n = f64::from(self.gpus);
        let block = self.set.defaults.kv_block_size;
        let mem_bw =
            g.mem_bw_gbs * GB * n * g.mem_efficiency * knobs.decode_efficiency.unwrap_or(1.0);
        Ok(Profile {
            model_id: self.model_id.to_string(),
            model_name: m.name.clone(),
            gpu_id: self.gpu_id.to_string(),
            gpu_name: g.name.clone(),
            gpus: self.gpus,
            card: DeploymentCard {
                gpu: g.name.clone(),
                gpu_count: self.gpus,
                vram_gib: g.vram_gib * n,
                total_params_b: m.total_params_b,
                active_params_b: m.active_params_b,
                architecture: if expert_params > 0.0 { "MoE" } else { "dense" }.into(),
                precision: m.precision.to_ascii_uppercase(),
                kv_cache_dtype: m.kv_dtype.clone(),
            },
            active_params: m.active_params_b * 1e9,
            dense_params,
            expert_params,
            experts: f64::from(m.experts),
            active_experts: f64::from(m.active_experts),
            bytes_per_param,
            layers: m.layers,
            attention_layers: m.attention_layers,
            window_layers: m.window_layers,
            sliding_window: m.sliding_window,
            hidden: m.hidden,
            attn_dim: f64::from(m.q_heads) * f64::from(m.head_dim),
            kv_bytes_per_token: memory.kv_bytes_per_token,
            window_kv_bytes_per_token: memory.window_kv_bytes_per_token,
            kv_block_size: block,
            kv_capacity_blocks: (memory.kv_capacity_tokens / f64::from(block))
                .floor()
                .min(1e9) as u32,
            max_model_len: m.max_model_len,
            mem_bw,
            kv_bw: mem_bw,
            flops: tflops * 1e12 * n * g.flop_efficiency * knobs.prefill_efficiency.unwrap_or(1.0),
            // Attention kernels (FlashAttention) run in BF16 whatever the weights' precision.
            attn_flops: g.tflops_bf16 * 1e12 * n * g.flop_efficiency,
            peak: Peaks {
                mem_bw: g.mem_bw_gbs * GB * n,
                flops: tflops * 1e12 * n,
                attn_flops: g.tflops_bf16 * 1e12 * n,
            },
            interconnect_bw: g.interconnect_gbs * GB,
            allreduce_latency: g.allreduce_latency_us * 1e-6,
            step_overhead: knobs.step_overhead_ms.unwrap_or(1.0) * 1e-3,
            seq_overhead: knobs.seq_overhead_us.unwrap_or(20.0) * 1e-6,
            frontend_latency: knobs.frontend_latency_ms.unwrap_or(5.0) * 1e-3,
            cuda_graph_max_batch: knobs.cuda_graph_max_batch.unwrap_or(u32::MAX),
            eager_step_overhead: knobs.eager_step_overhead_ms.unwrap_or(0.0) * 1e-3,
            gathers_arrivals: false,
            batch_overhead: 0.0,
            routing_locality: knobs.routing_locality.unwrap_or(0.0).clamp(0.0, 0.999),
            max_num_seqs: 256,
            max_num_batched_tokens: knobs
                .max_num_batched_tokens
                .unwrap_or(DEFAULT_MAX_NUM_BATCHED_TOKENS)
                .max(1),
            prefix_cache: false,
        })
    }
}

fn precision_bytes(p: &str, model: &str) -> Result<f64, ProfileError> {
    Ok(match p {
        "bf16" | "fp16" => 2.0,
        "fp8" | "int8" => 1.0,
        // 4-bit values plus one FP8 scale per 16 values.
        "nvfp4" | "fp4" => 0.5625,
        other => {
            return Err(ProfileError::Invalid {
                path: format!("model {model}"),
                message: format!("unknown precision {other:?}; use bf16, fp8 or nvfp4"),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_pair_resolves_or_says_it_does_not_fit() {
        let set = ProfileSet::builtin();
        assert_eq!(set.gpu.len(), 8);
        assert_eq!(set.model.len(), 7);
        let mut fit = 0;
        for m in set.model.keys() {
            for g in set.gpu.keys() {
                match set.resolve(m, g, None) {
                    Ok(p) => {
                        assert!(p.kv_capacity_blocks > 0, "{m} on {g}");
                        fit += 1;
                    }
                    Err(ProfileError::DoesNotFit { .. }) => {}
                    Err(e) => panic!("{m} on {g}: {e}"),
                }
            }
        }
        // Every model fits some GPU, and most pairs fit.
        assert!(fit > set.model.len() * set.gpu.len() / 2, "{fit} pairs fit");
        for m in set.model.keys() {
            assert!(
                set.gpu.keys().any(|g| set.resolve(m, g, None).is_ok()),
                "{m} fits no GPU"
            );
        }
    }

    /// The tables built as Rust are the tables read from the JSON, key for key.
    #[test]
    fn the_builtin_tables_are_the_file() {
        let read = ProfileSet::from_value(ProfileSet::builtin_value(), "profiles.toml").unwrap();
        assert_eq!(ProfileSet::builtin(), read);
    }

    #[test]
    fn merged_tables_change_only_the_keys_they_set() {
        let mut value = ProfileSet::builtin_value();
        let rows = |v: &Value| v["tuning"].as_array().map_or(0, Vec::len);
        let builtin_rows = rows(&value);
        merge(
            &mut value,
            serde_json::json!({
                "gpu": {"h200": {"vram_gib": 1000.0}},
                "tuning": [{"model": "llama-3.1-8b", "gpu": "h200", "step_overhead_ms": 2.0}],
            }),
        );
        assert_eq!(rows(&value), builtin_rows + 1, "[[tuning]] rows add up");
        let set = ProfileSet::from_value(value, "mine.toml").unwrap();
        assert_eq!(set.gpu["h200"].vram_gib, 1000.0);
        assert_eq!(set.gpu["h200"].mem_bw_gbs, 4800.0);
        let err = ProfileSet::from_value(serde_json::json!({"gpu": 1}), "bad.toml").unwrap_err();
        assert!(err.to_string().starts_with("profiles bad.toml: "), "{err}");
    }

    #[test]
    fn unknown_gpu_lists_known_ones() {
        let err = ProfileSet::builtin()
            .resolve("llama-3.1-8b", "h900", None)
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("h900") && msg.contains("h100-pcie") && msg.contains("rtx-pro-6000"),
            "{msg}"
        );
    }
}
