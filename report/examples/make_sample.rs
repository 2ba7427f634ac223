//! Writes `data/reports/sample-synthetic.json`: a hand-made report shaped after the published
//! Qwen3.5-35B-A3B-FP8 on 1xH100 reference figures. Built through the crate's types so it always
//! matches the schema. Run: `cargo run -p infermeter-report --example make_sample`.

use std::path::Path;

use infermeter_report::presets::FOUR_SCENARIOS;
use infermeter_report::pretty_json::to_pretty_json;
use infermeter_report::{
    to_ticks, Distribution, EngineInfo, HardwareInfo, Level, LevelMetrics, LoadMode, Measurement,
    Metadata, ModelInfo, PowerStats, Report, RequestColumns, RequestCounts, RunStatus, Series,
    TestParameters, DEFAULT_STALL_GAP_S, SCHEMA_VERSION,
};

const PEAK_LEVELS: [u32; 7] = [1, 2, 4, 8, 16, 24, 32];
const BURST_LEVELS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// Per scenario (FOUR_SCENARIOS order): mean per-user decode tok/s and mean TTFT s per level.
/// Anchors from the reference: 172.5 tok/s and 0.189 s single-user chatbot, 70.6 / 13.2 tok/s
/// at 32 (chatbot / tool calling), 6.18 s worst peak TTFT.
const PEAK_DECODE: [[f64; 7]; 4] = [
    [172.5, 160.1, 142.3, 121.0, 98.4, 82.5, 70.6],
    [170.8, 152.0, 126.6, 97.1, 66.3, 51.0, 41.5],
    [168.1, 139.5, 101.0, 64.3, 37.8, 27.9, 22.4],
    [165.0, 121.7, 76.5, 43.2, 23.6, 17.1, 13.2],
];
const PEAK_TTFT: [[f64; 7]; 4] = [
    [0.189, 0.205, 0.228, 0.27, 0.36, 0.47, 0.58],
    [0.52, 0.58, 0.66, 0.82, 1.12, 1.41, 1.72],
    [1.05, 1.21, 1.48, 1.95, 2.71, 3.35, 4.02],
    [1.85, 2.12, 2.55, 3.2, 4.3, 5.25, 6.18],
];
/// Burst: 9774 tok/s system at chatbot depth 256 (= 256 x 38.18), slowest stream 25.7 tok/s
/// (RAG / QA at 128); TTFT crosses 3 s at depths 131 / 84 / 19 / 8.
const BURST_DECODE: [[f64; 9]; 4] = [
    [
        172.4,
        165.0,
        150.2,
        131.5,
        108.0,
        82.0,
        60.4,
        45.1,
        9774.0 / 256.0,
    ],
    [168.9, 158.2, 139.5, 114.8, 86.0, 58.3, 37.9, 25.7, 26.3],
    [168.0, 150.3, 125.6, 96.2, 68.4, 48.7, 38.2, 33.5, 31.9],
    [164.9, 140.2, 108.3, 77.5, 55.0, 42.6, 36.9, 34.8, 34.1],
];
const BURST_TTFT: [[f64; 9]; 4] = [
    [0.19, 0.21, 0.26, 0.36, 0.58, 1.02, 1.85, 2.9, 8.25],
    [0.53, 0.6, 0.74, 1.0, 1.45, 1.95, 2.45, 4.6, 12.6],
    [1.06, 1.22, 1.55, 2.05, 2.65, 4.6, 11.8, 24.5, 49.8],
    [1.86, 2.1, 2.45, 2.95, 5.1, 10.4, 21.3, 43.0, 86.5],
];

/// Seconds of each peak-mode measurement window.
const PEAK_WINDOW_S: f64 = 60.0;

fn main() {
    let scenarios: Vec<_> = FOUR_SCENARIOS.iter().map(|p| p.to_scenario()).collect();
    let mut series = Vec::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        let shape = (scenario.input_tokens, scenario.output_tokens);
        series.push(Series {
            scenario: scenario.id.clone(),
            mode: LoadMode::Peak,
            arrivals: None,
            cache: None,
            levels: PEAK_LEVELS
                .iter()
                .enumerate()
                .map(|(j, &n)| peak_level(n, shape, PEAK_DECODE[i][j], PEAK_TTFT[i][j]))
                .collect(),
        });
        series.push(Series {
            scenario: scenario.id.clone(),
            mode: LoadMode::Burst,
            arrivals: None,
            cache: None,
            levels: BURST_LEVELS
                .iter()
                .enumerate()
                .map(|(j, &n)| {
                    burst_level(
                        n,
                        shape,
                        BURST_DECODE[i][j],
                        BURST_TTFT[i][j],
                        BURST_TTFT[i][0],
                    )
                })
                .collect(),
        });
    }
    let report = Report {
        schema_version: SCHEMA_VERSION.into(),
        metadata: metadata(),
        status: RunStatus::Complete,
        measurement: Measurement::default(),
        scenarios,
        series,
        records: None,
        warnings: Vec::new(),
        sharding: None,
    };
    let path =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("run with cargo run --example"))
            .parent()
            .expect("the crate sits in the workspace")
            .join("data/reports/sample-synthetic.json");
    let mut json = to_pretty_json(&report).expect("a report serialises");
    json.push(b'\n');
    std::fs::write(&path, json).unwrap_or_else(|e| panic!("writing {path:?}: {e}"));
    println!("wrote {}", path.display());
}

fn metadata() -> Metadata {
    Metadata {
        title: Some("Qwen3.5-35B-A3B-FP8 on 1xH100 (synthetic sample)".into()),
        synthetic: true,
        source: Some(
            "Hand-made, not measured: shaped after the published Qwen/Qwen3.5-35B-A3B-FP8 on 1xH100 \
             reference figures (four-scenario report). System throughput follows the reference's \
             convention (concurrency x mean per-user decode speed); percentiles come from \
             generated log-normal samples around the reference means."
                .into(),
        ),
        model: ModelInfo {
            id: "Qwen/Qwen3.5-35B-A3B-FP8".into(),
            organization: Some("Qwen".into()),
            architecture: Some("MoE".into()),
            total_params_b: Some(35.0),
            active_params_b: Some(3.0),
            precision: Some("FP8".into()),
        },
        engine: EngineInfo {
            name: "vLLM".into(),
            api: Some("chat".into()),
            ..EngineInfo::default()
        },
        hardware: HardwareInfo {
            gpu_model: "NVIDIA H100 80GB HBM3".into(),
            gpu_count: 1,
            vram_gb: Some(80.0),
            host: None,
        },
        test: TestParameters {
            suite: Some("four-scenario".into()),
            prompt_caching: Some(false),
            speculative_decoding: Some(false),
            kv_cache_dtype: None,
            ..TestParameters::default()
        },
        started_at: "2026-01-15T09:00:00Z".into(),
        finished_at: Some("2026-01-15T10:12:00Z".into()),
        collector_version: env!("CARGO_PKG_VERSION").into(),
        labels: Default::default(),
        provenance: None,
    }
}

/// A closed-loop level: `n` streams for the whole window.
fn peak_level(n: u32, (input, output): (u32, u32), decode: f64, ttft: f64) -> Level {
    let e2e = ttft + f64::from(output - 1) / decode;
    let ok = ((f64::from(n) * PEAK_WINDOW_S / e2e).round() as usize).max(n as usize);
    let ttft_s = samples(ttft, 0.15, ok);
    let queue_wait = samples(0.01 * ttft, 0.6, ok);
    let mut level = level(n, (input, output), decode, &ttft_s, &queue_wait);
    level.duration_s = PEAK_WINDOW_S;
    // Idle-ish 290 W single stream, towards the 700 W limit as batches and contexts grow.
    let load = (f64::from(n).log2() / 5.0).min(1.0);
    let context = f64::from(input).log2() - 10.0; // 0 at 1K, 5 at 32K
    let mean_w = 290.0 + 330.0 * load + 12.0 * context;
    level.power = Some(PowerStats {
        mean_w,
        max_w: (mean_w * 1.08).min(700.0),
        energy_j: mean_w * PEAK_WINDOW_S,
        source: "nvml".into(),
        samples: (PEAK_WINDOW_S * 10.0) as u64,
    });
    level
}

/// `n` requests sent at once and drained; later ones queue, so TTFT spreads widely.
/// `prefill_s` is the TTFT of a request that does not queue.
fn burst_level(n: u32, shape: (u32, u32), decode: f64, ttft: f64, prefill_s: f64) -> Level {
    // Queue positions are uniform, so TTFT spreads evenly from one prefill to about twice the mean.
    let floor = ttft.min(prefill_s);
    let ttft_s: Vec<f64> = (0..n)
        .map(|i| floor + 2.0 * (ttft - floor) * (f64::from(i) + 0.5) / f64::from(n))
        .collect();
    let queue_wait: Vec<f64> = ttft_s.iter().map(|t| t - floor).collect();
    let mut level = level(n, shape, decode, &ttft_s, &queue_wait);
    let e2e_max = level.metrics.e2e_s.and_then(|d| d.max).expect("filled");
    level.duration_s = e2e_max;
    level
}

/// A level with every distribution filled, one request per TTFT sample.
fn level(
    n: u32,
    (input, output): (u32, u32),
    decode: f64,
    ttft_s: &[f64],
    queue_wait_s: &[f64],
) -> Level {
    let ok = ttft_s.len();
    let itl = 1.0 / decode;
    let decode_s = samples(decode, 0.08, ok);
    let e2e: Vec<f64> = ttft_s
        .iter()
        .zip(&decode_s)
        .map(|(t, d)| t + f64::from(output - 1) / d)
        .collect();
    let prefill: Vec<f64> = ttft_s.iter().map(|t| f64::from(input) / t).collect();
    let tpot: Vec<f64> = decode_s.iter().map(|d| 1.0 / d).collect();
    // Pooled token gaps: capped so a level holds at most ~20k generated samples.
    let gaps = (ok * (output as usize - 1)).min(20_000);
    let itl_s = samples(itl, 0.35, gaps);
    let dist = |v: &[f64]| Distribution::from_samples(v).expect("samples are finite");
    let tokens = |t: u32| Distribution {
        count: Some(ok as u64),
        ..Distribution::constant(f64::from(t))
    };
    let system_output_tok_s = f64::from(n) * decode;
    let requests = RequestCounts {
        ok: ok as u64,
        ..RequestCounts::default()
    };
    let metrics = LevelMetrics {
        ttft_s: Some(dist(ttft_s)),
        itl_s: Some(dist(&itl_s)),
        inter_chunk_s: Some(dist(&itl_s)),
        tpot_s: Some(dist(&tpot)),
        e2e_s: Some(dist(&e2e)),
        decode_tok_s: Some(dist(&decode_s)),
        prefill_tok_s: Some(dist(&prefill)),
        queue_wait_s: Some(dist(queue_wait_s)),
        input_tokens: Some(tokens(input)),
        output_tokens: Some(tokens(output)),
        first_answer_s: None,
        reasoning_tokens: None,
    };
    Level {
        system_input_tok_s: Some(system_output_tok_s * f64::from(input) / f64::from(output)),
        requests_per_s: Some(system_output_tok_s / f64::from(output)),
        per_request: Some(columns(output, ttft_s, &e2e, &tpot)),
        ..Level::new(n, 0.0, requests, metrics, system_output_tok_s)
    }
}

/// The requests of a level one by one, as the collector keeps them for goodput: each TTFT with
/// the decode speed drawn for it, in a sending order that mixes fast and slow ones (the
/// samples are generated in ascending order), its worst pause three times its time per token
/// (a stall when that is over the stall gap).
fn columns(output: u32, ttft_s: &[f64], e2e_s: &[f64], tpot_s: &[f64]) -> RequestColumns {
    let n = ttft_s.len();
    // A stride coprime with n visits every request once, out of order.
    let stride = (1..)
        .map(|k| n / 3 + k)
        .find(|s| gcd(*s, n) == 1)
        .expect("a coprime stride");
    let order: Vec<usize> = (0..n).map(|i| i * stride % n.max(1)).collect();
    let pick =
        |values: &[f64]| -> Vec<u32> { order.iter().map(|&i| to_ticks(values[i])).collect() };
    let stall_gap = to_ticks(DEFAULT_STALL_GAP_S);
    let max_gap: Vec<u32> = order.iter().map(|&i| to_ticks(3.0 * tpot_s[i])).collect();
    RequestColumns {
        status: vec![RequestColumns::OK; n],
        ttft: pick(ttft_s),
        e2e: pick(e2e_s),
        output_tokens: vec![output; n],
        stalls: max_gap.iter().map(|&g| u32::from(g > stall_gap)).collect(),
        max_gap,
        jitter: vec![180; n],
        stall_gap,
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `count` deterministic log-normal samples with coefficient of variation about `spread`,
/// scaled so their mean is exactly `mean`.
fn samples(mean: f64, spread: f64, count: usize) -> Vec<f64> {
    let sigma = (1.0 + spread * spread).ln().sqrt();
    let raw: Vec<f64> = (0..count)
        .map(|i| {
            let p = (i as f64 + 0.5) / count as f64;
            // Logistic approximation of the normal quantile; exact shape does not matter here.
            (sigma * (p / (1.0 - p)).ln() * 0.5513).exp()
        })
        .collect();
    let raw_mean = raw.iter().sum::<f64>() / count as f64;
    raw.iter().map(|v| v * mean / raw_mean).collect()
}
