//! Reads `profiles.toml` into the tables' own types (`src/profiles/tables.rs`, included here)
//! and writes it out twice: as Rust (`profiles.rs`, the built-in tables built without parsing,
//! so the viewer's wasm carries no TOML or JSON reader for them) and as JSON (`profiles.json`,
//! what the simulator merges a user's file over). A malformed file fails the build with its
//! parse error.

use std::fmt::Write;
use std::path::PathBuf;

#[allow(dead_code)]
mod tables {
    include!("src/profiles/tables.rs");
}

use tables::{Defaults, GpuSpec, Knobs, ModelSpec, ProfileSet, Tuning};

fn main() {
    println!("cargo::rerun-if-changed=profiles.toml");
    println!("cargo::rerun-if-changed=src/profiles/tables.rs");
    let text = std::fs::read_to_string("profiles.toml").expect("engine/profiles.toml is readable");
    let table: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("engine/profiles.toml: {e}"));
    let json = serde_json::to_string(&table).expect("TOML values serialise as JSON");
    let set: ProfileSet =
        toml::from_str(&text).unwrap_or_else(|e| panic!("engine/profiles.toml: {e}"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("profiles.json"), json).expect("OUT_DIR is writable");
    std::fs::write(out.join("profiles.rs"), rust(&set)).expect("OUT_DIR is writable");
}

/// `fn builtin_tables() -> ProfileSet { ... }`.
fn rust(set: &ProfileSet) -> String {
    let mut s = String::from("fn builtin_tables() -> ProfileSet {\n    ProfileSet {\n");
    let d: &Defaults = &set.defaults;
    let _ = writeln!(
        s,
        "defaults: Defaults {{ gpu_memory_utilization: {}, kv_block_size: {} }},",
        f(d.gpu_memory_utilization),
        d.kv_block_size
    );
    s.push_str("gpu: std::collections::BTreeMap::from([\n");
    for (id, g) in &set.gpu {
        let _ = writeln!(s, "({}, {}),", text(id), gpu(g));
    }
    s.push_str("]),\nmodel: std::collections::BTreeMap::from([\n");
    for (id, m) in &set.model {
        let _ = writeln!(s, "({}, {}),", text(id), model(m));
    }
    s.push_str("]),\ntuning: vec![\n");
    for t in &set.tuning {
        let _ = writeln!(s, "{},", tuning(t));
    }
    s.push_str("],\n    }\n}\n");
    s
}

fn f(x: f64) -> String {
    format!("{x:?}_f64")
}

fn text(x: &str) -> String {
    format!("String::from({x:?})")
}

fn texts(xs: &[String]) -> String {
    let items: Vec<String> = xs.iter().map(|x| text(x)).collect();
    format!("vec![{}]", items.join(", "))
}

fn option<T>(x: &Option<T>, show: impl Fn(&T) -> String) -> String {
    x.as_ref()
        .map_or("None".into(), |v| format!("Some({})", show(v)))
}

fn gpu(g: &GpuSpec) -> String {
    format!(
        "GpuSpec {{ name: {}, aliases: {}, vram_gib: {}, mem_bw_gbs: {}, tflops_bf16: {}, \
         tflops_fp8: {}, tflops_fp4: {}, interconnect_gbs: {}, allreduce_latency_us: {}, \
         mem_efficiency: {}, flop_efficiency: {}, reserved_gb: {} }}",
        text(&g.name),
        texts(&g.aliases),
        f(g.vram_gib),
        f(g.mem_bw_gbs),
        f(g.tflops_bf16),
        f(g.tflops_fp8),
        f(g.tflops_fp4),
        f(g.interconnect_gbs),
        f(g.allreduce_latency_us),
        f(g.mem_efficiency),
        f(g.flop_efficiency),
        f(g.reserved_gb)
    )
}

fn knobs(k: &Knobs) -> String {
    let of = |x: &Option<f64>| option(x, |v| f(*v));
    let count = |x: &Option<u32>| option(x, |v| format!("{v}_u32"));
    format!(
        "Knobs {{ step_overhead_ms: {}, seq_overhead_us: {}, frontend_latency_ms: {}, \
         prefill_efficiency: {}, decode_efficiency: {}, routing_locality: {}, \
         cuda_graph_max_batch: {}, eager_step_overhead_ms: {}, kv_cache_gb: {}, \
         max_num_batched_tokens: {} }}",
        of(&k.step_overhead_ms),
        of(&k.seq_overhead_us),
        of(&k.frontend_latency_ms),
        of(&k.prefill_efficiency),
        of(&k.decode_efficiency),
        of(&k.routing_locality),
        count(&k.cuda_graph_max_batch),
        of(&k.eager_step_overhead_ms),
        of(&k.kv_cache_gb),
        count(&k.max_num_batched_tokens)
    )
}

fn model(m: &ModelSpec) -> String {
    let count = |x: &Option<u32>| option(x, |v| format!("{v}_u32"));
    format!(
        "ModelSpec {{ name: {}, aliases: {}, total_params_b: {}, active_params_b: {}, \
         layers: {}, attention_layers: {}, window_layers: {}, sliding_window: {}, hidden: {}, \
         q_heads: {}, kv_heads: {}, head_dim: {}, kv_latent_dim: {}, experts: {}, \
         active_experts: {}, precision: {}, kv_dtype: {}, max_model_len: {}, default_gpus: {}, \
         knobs: {} }}",
        text(&m.name),
        texts(&m.aliases),
        f(m.total_params_b),
        f(m.active_params_b),
        m.layers,
        m.attention_layers,
        m.window_layers,
        m.sliding_window,
        m.hidden,
        m.q_heads,
        m.kv_heads,
        m.head_dim,
        count(&m.kv_latent_dim),
        m.experts,
        m.active_experts,
        text(&m.precision),
        text(&m.kv_dtype),
        m.max_model_len,
        count(&m.default_gpus),
        knobs(&m.knobs)
    )
}

fn tuning(t: &Tuning) -> String {
    format!(
        "Tuning {{ model: {}, gpu: {}, gpus: {}, knobs: {} }}",
        text(&t.model),
        text(&t.gpu),
        option(&t.gpus, |v| format!("{v}_u32")),
        knobs(&t.knobs)
    )
}
