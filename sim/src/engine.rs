//! The pure engine model: a vLLM-V1-like continuous-batching scheduler over a paged KV cache, and a
//! roofline step-time model. No I/O, no clocks: [`Engine::step`] plans one step and says how long
//! it takes; the server sleeps that long in real time, [`simulate`] just adds it to a virtual clock.
//!
//! Scheduling (per step, like vLLM V1): running sequences first, each gets `min(remaining, budget)`
//! tokens (1 when decoding, a chunk when prefilling); if the KV cache has no room the newest running
//! sequence is preempted (its KV freed, recomputed later). Then, if nothing was preempted, waiting
//! requests are admitted FIFO while `max_num_seqs`, the token budget and free KV blocks allow.
//! A sequence whose every known token is computed samples one new token at the end of the step.

use std::collections::{BTreeSet, HashMap, VecDeque};

/// A resolved deployment: one model on `gpus` GPUs of one kind, with every number the step-time
/// model needs. Built by [`crate::profiles::ProfileSet::resolve`]; fields are public so tests and
/// calibration can adjust them.
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
            memory: (weights + kv_read) / self.mem_bw,
            overhead: self.step_overhead + self.seq_overhead * batch.len() as f64 + eager,
            tensor_parallel,
        }
    }

    /// Seconds one step takes.
    pub fn step_time(&self, batch: &[BatchEntry]) -> f64 {
        self.step_cost(batch).total()
    }
}

/// Identifies a request inside the engine.
pub type SeqId = u64;

/// What the engine needs to know about a request.
#[derive(Debug, Clone, Default)]
pub struct SeqSpec {
    pub prompt_tokens: u32,
    /// Exactly how many tokens this request will generate (EOS already decided by the server).
    pub output_tokens: u32,
    /// Chained hashes of the sequence's full KV blocks (for the prefix cache): the prompt's, and
    /// on past it over the output the request will generate, so a finished sequence leaves its
    /// answer cached for a next turn that carries it; may be empty.
    pub block_hashes: Vec<u64>,
}

/// Something that happened in a step, at its end.
#[derive(Debug, Clone, PartialEq)]
pub enum StepEvent {
    /// First scheduled (left the waiting queue) with this many prompt tokens served from cache.
    Admitted { id: SeqId, cached_tokens: u32 },
    /// Output token `index` (0-based) was produced; `finished` on the last one.
    Token {
        id: SeqId,
        index: u32,
        finished: bool,
    },
    /// Evicted from the KV cache; it will be recomputed.
    Preempted { id: SeqId },
}

/// One planned step.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub duration: f64,
    pub cost: StepCost,
    pub batch_tokens: u32,
    pub batch_seqs: u32,
    pub events: Vec<StepEvent>,
}

#[derive(Debug)]
struct Seq {
    spec: SeqSpec,
    generated: u32,
    computed: u32,
    private_blocks: u32,
    shared: Vec<u64>,
    admitted: bool,
}

impl Seq {
    fn len(&self) -> u32 {
        self.spec.prompt_tokens + self.generated
    }
    fn blocks(&self) -> u32 {
        self.private_blocks + self.shared.len() as u32
    }
}

#[derive(Debug)]
struct CacheEntry {
    refs: u32,
    tick: u64,
}

/// Occupancy figures for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EngineStats {
    pub running: usize,
    pub waiting: usize,
    /// Fraction of KV blocks held by live sequences.
    pub kv_usage: f64,
}

/// The scheduler state machine.
#[derive(Debug)]
pub struct Engine {
    profile: Profile,
    seqs: HashMap<SeqId, Seq>,
    waiting: VecDeque<SeqId>,
    running: Vec<SeqId>,
    free_blocks: u32,
    cache: HashMap<u64, CacheEntry>,
    evictable: BTreeSet<(u64, u64)>,
    tick: u64,
}

impl Engine {
    pub fn new(profile: Profile) -> Self {
        let free_blocks = profile.kv_capacity_blocks;
        Self {
            profile,
            seqs: HashMap::new(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            free_blocks,
            cache: HashMap::new(),
            evictable: BTreeSet::new(),
            tick: 0,
        }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Longest prompt + output the engine can ever hold (model length and KV capacity).
    pub fn max_sequence_tokens(&self) -> u64 {
        u64::from(self.profile.max_model_len).min(self.profile.kv_capacity_tokens())
    }

    /// Queue a request. Requests longer than [`Self::max_sequence_tokens`] must be rejected by the
    /// caller; they could never be scheduled.
    pub fn add(&mut self, id: SeqId, mut spec: SeqSpec) {
        spec.output_tokens = spec.output_tokens.max(1);
        self.seqs.insert(
            id,
            Seq {
                spec,
                generated: 0,
                computed: 0,
                private_blocks: 0,
                shared: Vec::new(),
                admitted: false,
            },
        );
        self.waiting.push_back(id);
    }

    /// Drop a request (client went away); frees its KV blocks.
    pub fn cancel(&mut self, id: SeqId) {
        if self.seqs.contains_key(&id) {
            self.release(id);
            self.seqs.remove(&id);
            self.running.retain(|r| *r != id);
            self.waiting.retain(|w| *w != id);
        }
    }

    pub fn is_idle(&self) -> bool {
        self.seqs.is_empty()
    }

    pub fn stats(&self) -> EngineStats {
        let total = self.profile.kv_capacity_blocks.max(1);
        let held: u32 = self.running.iter().map(|id| self.seqs[id].blocks()).sum();
        EngineStats {
            running: self.running.len(),
            waiting: self.waiting.len(),
            kv_usage: f64::from(held.min(total)) / f64::from(total),
        }
    }

    fn blocks_for(&self, tokens: u32) -> u32 {
        tokens.div_ceil(self.profile.kv_block_size)
    }

    fn alloc(&mut self, n: u32) -> bool {
        while self.free_blocks < n {
            let Some(&(tick, hash)) = self.evictable.iter().next() else {
                return false;
            };
            self.evictable.remove(&(tick, hash));
            self.cache.remove(&hash);
            self.free_blocks += 1;
        }
        self.free_blocks -= n;
        true
    }

    fn unref(&mut self, hash: u64) {
        self.tick += 1;
        if let Some(e) = self.cache.get_mut(&hash) {
            e.refs -= 1;
            if e.refs == 0 {
                e.tick = self.tick;
                self.evictable.insert((self.tick, hash));
            }
        }
    }

    fn incref(&mut self, hash: u64) {
        if let Some(e) = self.cache.get_mut(&hash) {
            if e.refs == 0 {
                self.evictable.remove(&(e.tick, hash));
            }
            e.refs += 1;
        }
    }

    /// Free a sequence's KV (private blocks back to the pool, shared blocks unreferenced).
    fn release(&mut self, id: SeqId) {
        let Some(seq) = self.seqs.get_mut(&id) else {
            return;
        };
        let private = std::mem::take(&mut seq.private_blocks);
        let shared = std::mem::take(&mut seq.shared);
        seq.computed = 0;
        self.free_blocks += private;
        for h in shared {
            self.unref(h);
        }
    }

    /// Reuse cached prompt blocks for a sequence about to be admitted; returns tokens reused.
    fn attach_prefix(&mut self, id: SeqId) -> u32 {
        if !self.profile.prefix_cache {
            return 0;
        }
        let block = self.profile.kv_block_size;
        let seq = &self.seqs[&id];
        let len = seq.len();
        let hits: Vec<u64> = seq
            .spec
            .block_hashes
            .iter()
            .take_while(|h| self.cache.contains_key(h))
            // Always leave at least one token to compute, so a token can be sampled.
            .take(((len - 1) / block) as usize)
            .copied()
            .collect();
        for h in &hits {
            self.incref(*h);
        }
        let seq = self.seqs.get_mut(&id).expect("seq");
        seq.computed = hits.len() as u32 * block;
        seq.shared = hits;
        seq.computed
    }

    /// Move a sequence's full blocks of its first `tokens` tokens into the prefix cache: the
    /// prompt's once it is computed, and (as vLLM does) the answer's too when it finishes.
    fn register_blocks(&mut self, id: SeqId, tokens: u32) {
        let block = self.profile.kv_block_size;
        let seq = &self.seqs[&id];
        let full = ((tokens / block) as usize).min(seq.spec.block_hashes.len());
        let todo: Vec<u64> = seq.spec.block_hashes[seq.shared.len().min(full)..full].to_vec();
        for h in todo {
            self.tick += 1;
            let seq = self.seqs.get_mut(&id).expect("seq");
            if seq.private_blocks == 0 {
                break;
            }
            seq.private_blocks -= 1;
            seq.shared.push(h);
            if self.cache.contains_key(&h) {
                // Computed twice concurrently: keep the cached copy, give ours back.
                self.free_blocks += 1;
                self.incref(h);
            } else {
                self.cache.insert(
                    h,
                    CacheEntry {
                        refs: 1,
                        tick: self.tick,
                    },
                );
            }
        }
    }

    fn preempt(&mut self, id: SeqId, events: &mut Vec<StepEvent>) {
        self.release(id);
        self.running.retain(|r| *r != id);
        self.waiting.push_front(id);
        events.push(StepEvent::Preempted { id });
    }

    /// Plan and commit one step. Returns `None` when nothing can run (idle).
    pub fn step(&mut self) -> Option<Step> {
        let mut plan = StepPlan {
            budget: self.profile.max_num_batched_tokens.max(1),
            ..StepPlan::default()
        };
        self.continue_running(&mut plan);
        if !plan.preempted {
            self.admit_waiting(&mut plan);
        }
        if plan.entries.is_empty() {
            return if plan.events.is_empty() {
                None
            } else {
                Some(Step {
                    events: plan.events,
                    ..Step::default()
                })
            };
        }
        Some(self.commit(plan))
    }

    /// Gives the running sequences their next tokens, in order, while the budget lasts;
    /// preempts from the back when the KV cache is full.
    fn continue_running(&mut self, plan: &mut StepPlan) {
        let mut i = 0;
        while i < self.running.len() && plan.budget > 0 {
            let id = self.running[i];
            let seq = &self.seqs[&id];
            let q = (seq.len() - seq.computed).min(plan.budget);
            let need = self
                .blocks_for(seq.computed + q)
                .saturating_sub(seq.blocks());
            let mut self_preempted = false;
            while !self.alloc(need) {
                let victim = *self.running.last().expect("running is non-empty");
                self.preempt(victim, &mut plan.events);
                plan.preempted = true;
                if victim == id {
                    self_preempted = true;
                    break;
                }
            }
            if self_preempted {
                break;
            }
            self.plan_entry(id, q, need, plan);
            i += 1;
        }
    }

    /// Admits waiting sequences (after their cached prefix) while the budget, the batch size
    /// and the KV cache allow.
    fn admit_waiting(&mut self, plan: &mut StepPlan) {
        while plan.budget > 0 && self.running.len() < self.profile.max_num_seqs as usize {
            let Some(&id) = self.waiting.front() else {
                break;
            };
            let cached = self.attach_prefix(id);
            let seq = &self.seqs[&id];
            let q = (seq.len() - seq.computed).min(plan.budget);
            let need = self
                .blocks_for(seq.computed + q)
                .saturating_sub(seq.blocks());
            if !self.alloc(need) {
                self.release(id);
                break;
            }
            self.waiting.pop_front();
            self.running.push(id);
            let seq = self.seqs.get_mut(&id).expect("seq");
            if !seq.admitted {
                seq.admitted = true;
                plan.events.push(StepEvent::Admitted {
                    id,
                    cached_tokens: cached,
                });
            }
            self.plan_entry(id, q, need, plan);
        }
    }

    /// Puts `q` tokens of `id` (whose `need` new blocks are allocated) into the step.
    fn plan_entry(&mut self, id: SeqId, q: u32, need: u32, plan: &mut StepPlan) {
        let seq = self.seqs.get_mut(&id).expect("seq");
        seq.private_blocks += need;
        plan.entries.push((
            id,
            BatchEntry {
                tokens: q,
                context: seq.computed,
            },
        ));
        plan.budget -= q;
    }

    /// Runs the planned batch: its cost, each sequence's progress and tokens, the prefix
    /// cache's new blocks, and the finished sequences released.
    fn commit(&mut self, plan: StepPlan) -> Step {
        let StepPlan {
            entries,
            mut events,
            ..
        } = plan;
        let batch: Vec<BatchEntry> = entries.iter().map(|p| p.1).collect();
        let cost = self.profile.step_cost(&batch);
        let mut finished = Vec::new();
        for (id, entry) in &entries {
            let seq = self.seqs.get_mut(id).expect("seq");
            let was_prefilling = seq.computed < seq.spec.prompt_tokens;
            seq.computed += entry.tokens;
            let prompt_done = was_prefilling && seq.computed >= seq.spec.prompt_tokens;
            if seq.computed == seq.len() {
                seq.generated += 1;
                let done = seq.generated >= seq.spec.output_tokens;
                events.push(StepEvent::Token {
                    id: *id,
                    index: seq.generated - 1,
                    finished: done,
                });
                if done {
                    finished.push(*id);
                }
            }
            if prompt_done && self.profile.prefix_cache {
                let prompt = self.seqs[id].spec.prompt_tokens;
                self.register_blocks(*id, prompt);
            }
        }
        for id in finished {
            if self.profile.prefix_cache {
                // The last token was sampled, never fed back: its KV was not computed.
                let computed = self.seqs[&id].computed;
                self.register_blocks(id, computed);
            }
            self.cancel(id);
        }
        Step {
            duration: cost.total(),
            cost,
            batch_tokens: batch.iter().map(|b| b.tokens).sum(),
            batch_seqs: batch.len() as u32,
            events,
        }
    }
}

/// One step as it is planned: the token budget left, the batch so far, its events, and
/// whether a preemption stops admissions this step.
#[derive(Default)]
struct StepPlan {
    budget: u32,
    entries: Vec<(SeqId, BatchEntry)>,
    events: Vec<StepEvent>,
    preempted: bool,
}

// ------------------------------------------------------------------ virtual-time simulation

/// How requests arrive in [`simulate`].
#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    /// Exactly `concurrency` requests in flight; a finished request is replaced at once (the
    /// collector's "peak" mode). Requests are taken from the workload in order.
    ClosedLoop { concurrency: usize },
    /// Every request arrives at time 0 (the collector's "burst" mode).
    Burst,
    /// Request i arrives at `times[i]` seconds (open loop).
    At(Vec<f64>),
}

/// A workload for [`simulate`].
#[derive(Debug, Clone)]
pub struct Workload {
    pub requests: Vec<SeqSpec>,
    pub arrival: Arrival,
}

impl Workload {
    /// `count` identical requests of `input` prompt tokens and exactly `output` output tokens.
    pub fn uniform(count: usize, input: u32, output: u32, arrival: Arrival) -> Self {
        let requests = (0..count)
            .map(|_| SeqSpec {
                prompt_tokens: input,
                output_tokens: output,
                block_hashes: Vec::new(),
            })
            .collect();
        Self { requests, arrival }
    }
}

/// Per-request timings from [`simulate`], seconds from the start of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestTiming {
    /// When the client sent it.
    pub sent: f64,
    /// When it left the waiting queue.
    pub admitted: f64,
    /// When each output token left the server.
    pub tokens: Vec<f64>,
    pub cached_tokens: u32,
    pub preemptions: u32,
}

impl RequestTiming {
    pub fn ttft(&self) -> f64 {
        self.tokens.first().map_or(f64::NAN, |t| t - self.sent)
    }
    /// When its last token left the server (NaN if it produced none).
    pub fn finished(&self) -> f64 {
        self.tokens.last().copied().unwrap_or(f64::NAN)
    }
    pub fn e2e(&self) -> f64 {
        self.tokens.last().map_or(f64::NAN, |t| t - self.sent)
    }
    /// (output tokens - 1) / (E2E - TTFT): the reports' per-user decode speed.
    pub fn decode_tps(&self) -> f64 {
        let n = self.tokens.len();
        if n < 2 {
            return f64::NAN;
        }
        (n - 1) as f64 / (self.tokens[n - 1] - self.tokens[0])
    }
}

/// Run a workload through the engine on a virtual clock (no sleeping). Deterministic.
pub fn simulate(profile: &Profile, workload: &Workload) -> Vec<RequestTiming> {
    let mut engine = Engine::new(profile.clone());
    let n = workload.requests.len();
    let mut timings = vec![RequestTiming::default(); n];
    // (time it reaches the scheduler, request index), kept sorted by time.
    let mut pending: Vec<(f64, usize)> = Vec::new();
    let mut next_closed = 0;
    let fl = profile.frontend_latency;
    match &workload.arrival {
        Arrival::ClosedLoop { concurrency } => {
            next_closed = (*concurrency).min(n);
            pending.extend((0..next_closed).map(|i| (fl, i)));
        }
        Arrival::Burst => pending.extend((0..n).map(|i| (fl, i))),
        Arrival::At(times) => {
            for (i, t) in times.iter().enumerate().take(n) {
                timings[i].sent = *t;
                pending.push((t + fl, i));
            }
            pending.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
    }
    let mut pending: VecDeque<(f64, usize)> = pending.into();
    let mut now = 0.0_f64;
    let mut done = 0;
    while done < n {
        while pending.front().is_some_and(|p| p.0 <= now) {
            let (_, i) = pending.pop_front().expect("front");
            engine.add(i as SeqId, workload.requests[i].clone());
        }
        let Some(step) = engine.step() else {
            match pending.front() {
                Some(p) => {
                    now = p.0;
                    continue;
                }
                None => break, // nothing can ever run (request larger than the KV cache)
            }
        };
        now += step.duration;
        for ev in step.events {
            match ev {
                StepEvent::Admitted { id, cached_tokens } => {
                    let t = &mut timings[id as usize];
                    t.admitted = now - step.duration;
                    t.cached_tokens = cached_tokens;
                }
                StepEvent::Preempted { id } => timings[id as usize].preemptions += 1,
                StepEvent::Token { id, finished, .. } => {
                    timings[id as usize].tokens.push(now);
                    if finished {
                        done += 1;
                        if matches!(workload.arrival, Arrival::ClosedLoop { .. }) && next_closed < n
                        {
                            timings[next_closed].sent = now;
                            // Keep `pending` sorted: later arrivals never precede earlier ones.
                            pending.push_back((now + fl, next_closed));
                            next_closed += 1;
                        }
                    }
                }
            }
        }
    }
    timings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::ProfileSet;

    fn profile() -> Profile {
        ProfileSet::builtin()
            .resolve("llama-3.1-8b", "h100-sxm", Some(1))
            .unwrap()
    }

    #[test]
    fn single_request_produces_exact_tokens() {
        let t = simulate(&profile(), &Workload::uniform(1, 1000, 50, Arrival::Burst));
        assert_eq!(t[0].tokens.len(), 50);
        assert!(t[0].tokens.windows(2).all(|w| w[1] > w[0]));
    }

    #[test]
    fn kv_cache_limit_makes_a_burst_queue() {
        let mut p = profile();
        p.kv_capacity_blocks = 4 * 1100 / 16; // room for about four 1000+100 sequences
        let t = simulate(&p, &Workload::uniform(16, 1000, 100, Arrival::Burst));
        assert!(t.iter().all(|r| r.tokens.len() == 100));
        let mut ttfts: Vec<f64> = t.iter().map(|r| r.ttft()).collect();
        ttfts.sort_by(f64::total_cmp);
        // The last requests wait for earlier ones to finish: several request lifetimes.
        assert!(ttfts[15] > 3.0 * t[0].e2e(), "{ttfts:?}");
        let max_seqs = 4;
        let p2 = Profile {
            max_num_seqs: max_seqs,
            ..profile()
        };
        let t2 = simulate(&p2, &Workload::uniform(8, 100, 20, Arrival::Burst));
        assert!(t2[4].admitted >= t2[0].tokens[19] - 1e-12);
    }

    #[test]
    fn prefix_cache_reuses_blocks() {
        let mut p = profile();
        p.prefix_cache = true;
        let hashes: Vec<u64> = (0..62).collect();
        let spec = SeqSpec {
            prompt_tokens: 1000,
            output_tokens: 10,
            block_hashes: hashes,
        };
        let w = Workload {
            requests: vec![spec.clone(), spec],
            arrival: Arrival::ClosedLoop { concurrency: 1 },
        };
        let t = simulate(&p, &w);
        assert_eq!(t[0].cached_tokens, 0);
        assert_eq!(t[1].cached_tokens, 992);
        assert!(t[1].ttft() < t[0].ttft() / 2.0);
    }

    /// A finished sequence leaves its answer's full blocks cached, so a next turn that carries
    /// the answer reuses them.
    #[test]
    fn a_finished_answer_stays_cached_for_the_next_turn() {
        let mut p = profile();
        p.prefix_cache = true;
        // Turn 1: 1000 prompt tokens, 100 output; its hashes run over the output too.
        let first = SeqSpec {
            prompt_tokens: 1000,
            output_tokens: 100,
            block_hashes: (0..68).collect(),
        };
        // Turn 2 carries all 1100 and 300 more: shared blocks 0..68 (1088 tokens), then new.
        let second = SeqSpec {
            prompt_tokens: 1400,
            output_tokens: 10,
            block_hashes: (0..68).chain(1000..1020).collect(),
        };
        let w = Workload {
            requests: vec![first, second],
            arrival: Arrival::ClosedLoop { concurrency: 1 },
        };
        let t = simulate(&p, &w);
        // Turn 1's computed tokens: 1000 + 99 (the last sampled token is never fed back), so
        // 68 full blocks.
        assert_eq!(t[1].cached_tokens, 68 * 16);
    }

    #[test]
    fn moe_reads_more_experts_with_bigger_batches() {
        let p = ProfileSet::builtin()
            .resolve("qwen3-coder-30b-a3b", "h100-pcie", None)
            .unwrap();
        assert!((p.experts_touched(1) - 8.0).abs() < 1e-9);
        assert!(p.experts_touched(32) > p.experts_touched(8));
        assert!(p.experts_touched(100_000) <= 128.0 + 1e-9);
    }

    #[test]
    fn tensor_parallel_speeds_decode_sublinearly() {
        let set = ProfileSet::builtin();
        let decode = |gpus| {
            let p = set.resolve("llama-3.1-8b", "h100-sxm", Some(gpus)).unwrap();
            simulate(&p, &Workload::uniform(1, 1000, 100, Arrival::Burst))[0].decode_tps()
        };
        let (one, two) = (decode(1), decode(2));
        assert!(two > one * 1.2 && two < one * 2.0, "{one} {two}");
    }

    #[test]
    fn moe_batches_cost_more_than_dense_batches() {
        let set = ProfileSet::builtin();
        let growth = |model: &str| {
            let p = set.resolve(model, "h100-sxm", Some(1)).unwrap();
            let batch = |n| {
                vec![
                    BatchEntry {
                        tokens: 1,
                        context: 100
                    };
                    n
                ]
            };
            p.step_time(&batch(32)) / p.step_time(&batch(1))
        };
        let (moe, dense) = (growth("qwen3.5-35b-a3b-fp8"), growth("llama-3.1-8b"));
        assert!(moe > dense * 1.3, "moe x{moe:.2} dense x{dense:.2}");
    }
}
