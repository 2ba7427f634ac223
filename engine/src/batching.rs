//! The scheduler state machine: a vLLM-V1-like continuous-batching scheduler over a paged KV
//! cache. No I/O, no clocks: [`Engine::step`] plans one step and says how long it takes; the
//! simulator's server sleeps that long in real time, [`crate::simulate`] adds it to a virtual clock.
//!
//! Scheduling (per step, like vLLM V1): running sequences first, each gets `min(remaining, budget)`
//! tokens (1 when decoding, a chunk when prefilling); if the KV cache has no room the newest running
//! sequence is preempted (its KV freed, recomputed later). Then, if nothing was preempted, waiting
//! requests are admitted FIFO while `max_num_seqs`, the token budget and free KV blocks allow.
//! A sequence whose every known token is computed samples one new token at the end of the step.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use crate::profile::{BatchEntry, Profile, StepCost};

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

/// Hashing for the engine's maps, whose keys are request ids and block hashes (already
/// hashed): one multiply instead of SipHash. The fit replays levels thousands of times and
/// spent most of its time hashing ids. Lookups only: no order depends on it.
type IdHash = BuildHasherDefault<IdHasher>;

#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
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
    seqs: HashMap<SeqId, Seq, IdHash>,
    waiting: VecDeque<SeqId>,
    running: Vec<SeqId>,
    free_blocks: u32,
    cache: HashMap<u64, CacheEntry, IdHash>,
    evictable: BTreeSet<(u64, u64)>,
    tick: u64,
}

impl Engine {
    pub fn new(profile: Profile) -> Self {
        let free_blocks = profile.kv_capacity_blocks;
        Self {
            profile,
            seqs: HashMap::default(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            free_blocks,
            cache: HashMap::default(),
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
