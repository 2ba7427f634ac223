//! Reports the simulator makes on the virtual clock, for the fit's tests: what the collector
//! writes of the simulator on a machine with no timing error.

use infermeter_report::{
    Distribution, EngineInfo, HardwareInfo, Level, LevelMetrics, Metadata, ModelInfo,
    RequestCounts, Scenario, Series,
};

use super::*;
use crate::measure::measure_distributions;

/// A report of `profile` measured on the virtual clock with the collector's definitions: what
/// the collector writes of the simulator on a machine with no timing error.
pub fn simulated_report(profile: &Profile, model: &str, gpu: &str) -> Report {
    let mut report: Report = serde_json::from_value(serde_json::json!({
        "schema_version": infermeter_report::SCHEMA_VERSION,
        "metadata": Metadata {
            model: ModelInfo { id: model.into(), ..ModelInfo::default() },
            engine: EngineInfo { name: "infermeter-sim".into(), ..EngineInfo::default() },
            hardware: HardwareInfo { gpu_model: gpu.into(), gpu_count: profile.gpus, ..HardwareInfo::default() },
            ..Metadata::default()
        },
        "scenarios": [],
        "series": [],
    }))
    .unwrap();
    for (id, input, output) in [("chat", 1024, 128), ("rag", 4096, 128)] {
        report
            .scenarios
            .push(Scenario::single(id, id, "", input, output));
        for (mode, loads) in [
            (LoadMode::Peak, vec![1, 4, 16]),
            (LoadMode::Burst, vec![1, 8, 32]),
        ] {
            let levels = loads
                .into_iter()
                .map(|n| {
                    let load = match mode {
                        LoadMode::Peak => Load::Peak {
                            concurrency: n,
                            measured: 3 * n,
                        },
                        _ => Load::Burst { requests: n },
                    };
                    let spec = LevelSpec {
                        load,
                        input_tokens: input,
                        output_tokens: output,
                    };
                    simulated_level(n, profile, &spec)
                })
                .collect();
            report.series.push(Series {
                scenario: id.into(),
                mode,
                arrivals: None,
                levels,
                cache: None,
            });
        }
    }
    report
}

/// A level as the collector reports it: the measured requests' TTFT, token gaps and end-to-end
/// latency as distributions, the decode speed's mean.
fn simulated_level(concurrency: u32, profile: &Profile, spec: &LevelSpec) -> Level {
    let (f, d) = measure_distributions(profile, spec);
    serde_json::from_value(serde_json::json!({
        "concurrency": concurrency,
        "duration_s": 10.0,
        "requests": RequestCounts { ok: u64::from(concurrency), ..RequestCounts::default() },
        "metrics": LevelMetrics {
            ttft_s: d.ttft_s,
            itl_s: d.itl_s,
            e2e_s: d.e2e_s,
            decode_tok_s: Distribution::from_samples(&[f.decode_tok_s]),
            ..LevelMetrics::default()
        },
        "system_output_tok_s": f.system_output_tok_s,
    }))
    .unwrap()
}

/// The tables' Llama-3.1-8B on an H100 SXM, as some other engine runs it: slower memory and
/// GEMMs, a heavier step and front end.
pub fn other_engine() -> Profile {
    other_engine_on(1)
}

/// [`other_engine`] on `gpus` H100s: the tables' deployment with the same changes.
pub fn other_engine_on(gpus: u32) -> Profile {
    let mut p = ProfileSet::builtin()
        .resolve("llama-3.1-8b", "h100-sxm", Some(gpus))
        .unwrap();
    p.mem_bw *= 0.7;
    p.flops *= 0.5;
    p.attn_flops *= 0.8;
    p.step_overhead = 3e-3;
    p.seq_overhead = 60e-6;
    p.frontend_latency = 20e-3;
    p
}
