//! A resolved deployment and its roofline step-time model: what one step of a batch costs.
//! Built from the tables by [`crate::profiles::ProfileSet::resolve`].

/// Facts a benchmark report records about the simulated deployment; the simulator advertises
/// them in `/v1/models` (`infermeter_sim`) so a report says what was simulated.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeploymentCard {
    pub gpu: String,
    pub gpu_count: u32,
    /// Total VRAM over all GPUs, GiB.
    pub vram_gib: f64,
    pub total_params_b: f64,
    pub active_params_b: f64,
    /// "MoE" or "dense".
    pub architecture: String,
    /// Weight precision as written in reports, e.g. "FP8".
    pub precision: String,
    pub kv_cache_dtype: String,
}

/// A resolved deployment: one model on `gpus` GPUs of one kind, with every number the step-time
/// model needs. Built by [`crate::profiles::ProfileSet::resolve`]; fields are public so tests and
/// calibration can adjust them.
#[derive(Debug, Clone)]
pub struct Profile {
    pub model_id: String,
    pub model_name: String,
    pub gpu_id: String,
    pub gpu_name: String,
    pub gpus: u32,
    /// What the deployment is, as a benchmark report describes it (advertised in `/v1/models`).
    pub card: DeploymentCard,
    /// Parameters used per token (FLOPs), dense part, and one expert's parameters.
    pub active_params: f64,
    pub dense_params: f64,
    pub expert_params: f64,
    pub experts: f64,
    pub active_experts: f64,
    pub bytes_per_param: f64,
    pub layers: u32,
    pub attention_layers: u32,
    pub window_layers: u32,
    pub sliding_window: u32,
    pub hidden: u32,
    /// Query heads x head dim (attention FLOPs per token per context token per layer / 4).
    pub attn_dim: f64,
    /// KV bytes per token in full-attention layers, and in sliding-window layers.
    pub kv_bytes_per_token: f64,
    pub window_kv_bytes_per_token: f64,
    pub kv_block_size: u32,
    pub kv_capacity_blocks: u32,
    pub max_model_len: u32,
    /// Effective memory bandwidth (bytes/s), GEMM compute at the weights' precision and attention
    /// compute (BF16) in FLOP/s over all GPUs, efficiencies applied.
    pub mem_bw: f64,
    pub flops: f64,
    pub attn_flops: f64,
    /// Bandwidth of attention's KV-cache reads (bytes/s): `mem_bw` unless a fit found the
    /// engine's attention reads the cache slower than its weights (gathering paged blocks
    /// instead of reading them in place).
    pub kv_bw: f64,
    /// The datasheet's figures behind those three, efficiencies not applied: the most a fitted
    /// coefficient may reach.
    pub peak: Peaks,
    /// Per-GPU interconnect bandwidth (bytes/s) and per all-reduce latency (s) for tensor parallelism.
    pub interconnect_bw: f64,
    pub allreduce_latency: f64,
    /// Seconds per step, per sequence per step, and per request before it is queued.
    pub step_overhead: f64,
    pub seq_overhead: f64,
    pub frontend_latency: f64,
    /// Largest batch (sequences in a step) run through captured CUDA graphs; larger steps run
    /// eagerly and pay `eager_step_overhead` seconds of kernel launches on top.
    pub cuda_graph_max_batch: u32,
    pub eager_step_overhead: f64,
    pub routing_locality: f64,
    pub max_num_seqs: u32,
    pub max_num_batched_tokens: u32,
    pub prefix_cache: bool,
    /// Requests that reach an idle engine together start in one step, as llama-server's loop
    /// takes every queued task before its next step (requests a closed loop replaces together
    /// stay in lockstep there); otherwise they are handed to the scheduler one at a time and an
    /// idle engine starts with the first alone (vLLM's front end; the simulator's own server).
    /// Read from the engine a report names ([`crate::fit::gathers_arrivals`]), not fitted.
    pub gathers_arrivals: bool,
    /// Seconds added to a step of two or more sequences: what batching itself costs beyond
    /// each sequence's share (a CPU's matrix-vector kernels giving way to matrix-matrix ones).
    /// 0 in the tables; fitted.
    pub batch_overhead: f64,
}

/// Datasheet peaks over all GPUs: memory bandwidth (bytes/s), GEMM FLOP/s at the weights'
/// precision and BF16 FLOP/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peaks {
    pub mem_bw: f64,
    pub flops: f64,
    pub attn_flops: f64,
}

/// One sequence's share of a step: `tokens` new tokens on top of `context` already in the KV cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchEntry {
    pub tokens: u32,
    pub context: u32,
}

/// Where a step's time goes (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepCost {
    pub compute: f64,
    pub memory: f64,
    pub overhead: f64,
    pub tensor_parallel: f64,
}

impl StepCost {
    pub fn total(&self) -> f64 {
        self.compute.max(self.memory) + self.overhead + self.tensor_parallel
    }
}

impl Profile {
    /// KV capacity in tokens.
    pub fn kv_capacity_tokens(&self) -> u64 {
        u64::from(self.kv_capacity_blocks) * u64::from(self.kv_block_size)
    }

    /// Distinct experts read in one step of `tokens` tokens (per layer, in expectation).
    pub fn experts_touched(&self, tokens: u32) -> f64 {
        if self.expert_params <= 0.0 || tokens == 0 {
            return 0.0;
        }
        // Independent uniform routing would give E(1-(1-k/E)^T); real routers are skewed and
        // tokens of one batch share experts, modelled as fewer effective independent draws.
        let draws = 1.0 + (f64::from(tokens) - 1.0) * (1.0 - self.routing_locality);
        self.experts * (1.0 - (1.0 - self.active_experts / self.experts).powf(draws))
    }

    /// Roofline cost of one step.
    pub fn step_cost(&self, batch: &[BatchEntry]) -> StepCost {
        if batch.is_empty() {
            return StepCost::default();
        }
        let total: u32 = batch.iter().map(|b| b.tokens).sum();
        let t = f64::from(total);
        let window = f64::from(self.sliding_window);
        let mut attn_ctx = 0.0; // sum over new tokens of layer-weighted context they attend to
        let mut kv_read = 0.0;
        for b in batch {
            let q = f64::from(b.tokens);
            let mean_ctx = f64::from(b.context) + (q + 1.0) / 2.0;
            attn_ctx += q
                * (f64::from(self.attention_layers) * mean_ctx
                    + f64::from(self.window_layers) * mean_ctx.min(window));
            let end = f64::from(b.context) + q;
            kv_read +=
                end * self.kv_bytes_per_token + end.min(window) * self.window_kv_bytes_per_token;
        }
        let gemm_flops = 2.0 * self.active_params * t;
        let attention_flops = 4.0 * self.attn_dim * attn_ctx;
        let weights = (self.dense_params + self.experts_touched(total) * self.expert_params)
            * self.bytes_per_param;
        let tensor_parallel = if self.gpus > 1 {
            let g = f64::from(self.gpus);
            let bytes = t * f64::from(self.hidden) * 2.0 * 2.0 * (g - 1.0) / g;
            2.0 * f64::from(self.layers) * (self.allreduce_latency + bytes / self.interconnect_bw)
        } else {
            0.0
        };
        let eager = if batch.len() > self.cuda_graph_max_batch as usize {
            self.eager_step_overhead
        } else {
            0.0
        };
        StepCost {
            compute: gemm_flops / self.flops + attention_flops / self.attn_flops,
            // Written so that with `kv_bw == mem_bw` (every profile of the tables) the sum is
            // the one it always was, bit for bit.
            memory: (weights + kv_read * (self.mem_bw / self.kv_bw)) / self.mem_bw,
            overhead: self.step_overhead
                + self.seq_overhead * batch.len() as f64
                + eager
                + if batch.len() >= 2 {
                    self.batch_overhead
                } else {
                    0.0
                },
            tensor_parallel,
        }
    }

    /// Seconds one step takes.
    pub fn step_time(&self, batch: &[BatchEntry]) -> f64 {
        self.step_cost(batch).total()
    }
}
