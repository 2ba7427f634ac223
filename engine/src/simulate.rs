//! Runs a workload through the [`Engine`] on a virtual clock: no sleeping, deterministic.

use std::collections::VecDeque;

use crate::batching::{Engine, SeqId, SeqSpec, StepEvent};
use crate::profile::Profile;

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
    /// The least time between two requests reaching the scheduler. A server's front end hands
    /// requests to its engine one at a time, so requests sent at the same instant reach it in
    /// turn, and an idle engine starts its step with the first of them alone (the others join
    /// the next step), as the simulator served in real time and real engines do. 0: requests
    /// sent together are scheduled together.
    pub handover_s: f64,
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
        Self {
            requests,
            arrival,
            handover_s: 0.0,
        }
    }

    /// The workload with requests reaching the scheduler at least `seconds` apart.
    pub fn handed_over_in_turn(self, seconds: f64) -> Self {
        Self {
            handover_s: seconds,
            ..self
        }
    }
}

/// When requests reach the scheduler: `frontend_latency` after they are sent, and never sooner
/// than `gap` after the request before them (a front end that hands them over one at a time).
struct FrontEnd {
    latency: f64,
    gap: f64,
    last: f64,
}

impl FrontEnd {
    /// When a request sent at `sent`, after every request handed over so far, reaches the
    /// scheduler.
    fn reach(&mut self, sent: f64) -> f64 {
        let at = (sent + self.latency).max(self.last + self.gap);
        self.last = at;
        at
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
    let mut front_end = FrontEnd {
        latency: profile.frontend_latency,
        gap: workload.handover_s.max(0.0),
        last: f64::NEG_INFINITY,
    };
    match &workload.arrival {
        Arrival::ClosedLoop { concurrency } => {
            next_closed = (*concurrency).min(n);
            pending.extend((0..next_closed).map(|i| (front_end.reach(0.0), i)));
        }
        Arrival::Burst => pending.extend((0..n).map(|i| (front_end.reach(0.0), i))),
        Arrival::At(times) => {
            let mut sent: Vec<(f64, usize)> = times.iter().copied().zip(0..n).collect();
            infermeter_report::order::sort_by(&mut sent, |a, b| {
                a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
            });
            for (t, i) in sent {
                timings[i].sent = t;
                pending.push((front_end.reach(t), i));
            }
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
                            pending.push_back((front_end.reach(now), next_closed));
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
    use crate::profile::BatchEntry;
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
            handover_s: 0.0,
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
            handover_s: 0.0,
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
