//! `simulate` on fixed workloads gives the same timings, bit for bit, as it did before the pure
//! engine moved into its own crate (`engine/`, issue #34). The fingerprint was recorded from
//! main's simulator before the move; a change to the step-time model or the scheduler that moves
//! any timestamp by one bit fails here and must say why it changes behaviour.

use infermeter_sim::engine::{simulate, Arrival, RequestTiming, SeqSpec, Workload};
use infermeter_sim::profiles::ProfileSet;

/// FNV-1a over the bits of every figure `simulate` returns.
fn fingerprint(runs: &[Vec<RequestTiming>]) -> (u64, usize) {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut eat = |x: u64| {
        for byte in x.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    let mut tokens = 0;
    for timings in runs {
        for t in timings {
            eat(t.sent.to_bits());
            eat(t.admitted.to_bits());
            eat(u64::from(t.cached_tokens));
            eat(u64::from(t.preemptions));
            tokens += t.tokens.len();
            for tok in &t.tokens {
                eat(tok.to_bits());
            }
        }
    }
    (hash, tokens)
}

/// Closed loop, burst and open-loop arrivals over dense, MoE, sliding-window, tensor-parallel,
/// CUDA-graph-limited and KV-limited deployments, with and without the prefix cache.
fn fixed_runs() -> Vec<Vec<RequestTiming>> {
    let set = ProfileSet::builtin();
    let resolve = |model, gpu, gpus| set.resolve(model, gpu, Some(gpus)).expect("resolves");
    let llama = resolve("llama-3.1-8b", "h100-sxm", 1);
    let coder = resolve("qwen3-coder-30b-a3b", "h100-pcie", 1);
    let qwen35 = resolve("qwen3.5-35b-a3b-fp8", "h100-sxm", 1);
    let step = resolve("step-3.7-flash", "rtx-pro-6000", 2);
    let mut small_kv = llama.clone();
    small_kv.kv_capacity_blocks = 4 * 1100 / 16;
    let mut cached = llama.clone();
    cached.prefix_cache = true;
    let shared = SeqSpec {
        prompt_tokens: 1000,
        output_tokens: 20,
        block_hashes: (0..62).collect(),
    };
    let times: Vec<f64> = (0..24).map(|i| f64::from(i) * 0.037).collect();
    vec![
        simulate(
            &llama,
            &Workload::uniform(40, 1024, 128, Arrival::ClosedLoop { concurrency: 8 }),
        ),
        simulate(&llama, &Workload::uniform(32, 4096, 64, Arrival::Burst)),
        simulate(&coder, &Workload::uniform(24, 1024, 128, Arrival::Burst)),
        simulate(
            &coder,
            &Workload::uniform(80, 1024, 64, Arrival::ClosedLoop { concurrency: 32 }),
        ),
        simulate(
            &qwen35,
            &Workload::uniform(12, 32768, 32, Arrival::ClosedLoop { concurrency: 4 }),
        ),
        simulate(&step, &Workload::uniform(3, 8192, 64, Arrival::Burst)),
        simulate(&small_kv, &Workload::uniform(16, 1000, 100, Arrival::Burst)),
        simulate(&llama, &Workload::uniform(24, 2048, 32, Arrival::At(times))),
        simulate(
            &cached,
            &Workload {
                requests: vec![shared.clone(), shared.clone(), shared],
                arrival: Arrival::ClosedLoop { concurrency: 1 },
                handover_s: 0.0,
            },
        ),
    ]
}

#[test]
fn simulate_gives_the_timings_it_gave_before_the_engine_moved() {
    let (hash, tokens) = fingerprint(&fixed_runs());
    assert_eq!(
        tokens,
        40 * 128 + 32 * 64 + 24 * 128 + 80 * 64 + 12 * 32 + 3 * 64 + 16 * 100 + 24 * 32 + 3 * 20
    );
    assert_eq!(
        hash, 0x30a1_438f_0a95_aa2d,
        "timings changed (fingerprint {hash:#x})"
    );
}
