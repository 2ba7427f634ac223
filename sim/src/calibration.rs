//! Calibration: the published reference figures (shared/reference) next to what the model gives for
//! the same workloads, computed on the virtual clock with the collector's definitions:
//! per-user decode tok/s = (output tokens - 1) / (E2E - TTFT), averaged over requests;
//! system throughput = per-user decode x concurrency; scaling efficiency = system / (single-user x N).

use crate::engine::{simulate, Arrival, Profile, RequestTiming, Workload};
use crate::profiles::ProfileSet;

/// One reference figure and the simulator's value for it.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationRow {
    pub label: String,
    pub reference: f64,
    pub simulated: f64,
    /// Set when the reference figure contradicts the rest of its own report, so no physical model
    /// can match it together with the other rows; says why and what is checked instead.
    pub note: Option<String>,
}

impl CalibrationRow {
    /// simulated / reference - 1.
    pub fn relative_error(&self) -> f64 {
        self.simulated / self.reference - 1.0
    }
}

/// Why the Qwen3-Coder scaling-efficiency row cannot be matched together with the peak row.
pub const INCONSISTENT_EFFICIENCY: &str = "reference 002 reports 2,961 tok/s at 24 in flight and \
39% x 152.9 x 32 = 1,908 tok/s at 32, i.e. throughput falling by a third from 24 to 32; its own \
RAG row (54%, 2,614 tok/s at 32) shows no KV-cache or batch limit near 32. A roofline engine's \
throughput never falls with concurrency without such a limit, so within +-15% the two rows \
exclude each other (peak >= 2,517 but @32 <= 2,194). We match the peak; this row is checked as \
a bound: simulated efficiency at 32 lies between the reference 39% and 80%.";

/// Aggregates of one peak-mode (closed loop, exactly N in flight) level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelResult {
    pub concurrency: usize,
    pub decode_tps: f64,
    pub ttft: f64,
    pub system_tps: f64,
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n.max(1) as f64
}

/// Peak mode: `concurrency` in flight, `rounds` x `concurrency` requests in total.
pub fn peak_level(profile: &Profile, concurrency: usize, input: u32, output: u32) -> LevelResult {
    let count = (concurrency * 4).max(4);
    let t: Vec<RequestTiming> = simulate(
        profile,
        &Workload::uniform(count, input, output, Arrival::ClosedLoop { concurrency }),
    );
    let decode_tps = mean(t.iter().map(RequestTiming::decode_tps));
    LevelResult {
        concurrency,
        decode_tps,
        ttft: mean(t.iter().map(RequestTiming::ttft)),
        system_tps: decode_tps * concurrency as f64,
    }
}

/// The levels the collector sweeps by default.
pub const PEAK_LEVELS: [usize; 7] = [1, 2, 4, 8, 16, 24, 32];

fn profile(model: &str, gpu: &str, gpus: u32) -> Profile {
    ProfileSet::builtin()
        .resolve(model, gpu, Some(gpus))
        .expect("built-in calibration deployment resolves")
}

fn row(label: &str, reference: f64, simulated: f64) -> CalibrationRow {
    CalibrationRow {
        label: label.to_string(),
        reference,
        simulated,
        note: None,
    }
}

/// Every reference figure we calibrate against, with the simulated value (virtual time; about a
/// second of CPU in release builds).
pub fn calibration_table() -> Vec<CalibrationRow> {
    let mut rows = Vec::new();

    // Qwen3-Coder-30B-A3B, 1x H100 PCIe, chatbot 1024 in / 128 out (reference 002).
    let p = profile("qwen3-coder-30b-a3b", "h100-pcie", 1);
    let levels: Vec<LevelResult> = PEAK_LEVELS
        .iter()
        .map(|&n| peak_level(&p, n, 1024, 128))
        .collect();
    let single = levels[0];
    let peak = levels.iter().map(|l| l.system_tps).fold(0.0, f64::max);
    let at32 = levels[levels.len() - 1];
    rows.push(row(
        "qwen3-coder-30b-a3b 1xH100-PCIe chat: single-user decode tok/s",
        152.9,
        single.decode_tps,
    ));
    rows.push(row(
        "qwen3-coder-30b-a3b 1xH100-PCIe chat: single-user TTFT s",
        0.03,
        single.ttft,
    ));
    rows.push(row(
        "qwen3-coder-30b-a3b 1xH100-PCIe chat: peak system tok/s (1..32)",
        2961.0,
        peak,
    ));
    rows.push(CalibrationRow {
        note: Some(INCONSISTENT_EFFICIENCY.to_string()),
        ..row(
            "qwen3-coder-30b-a3b 1xH100-PCIe chat: scaling efficiency @32 %",
            39.0,
            100.0 * at32.system_tps / (single.decode_tps * 32.0),
        )
    });

    // Qwen3.5-35B-A3B-FP8, 1x H100 SXM (reference 001).
    let p = profile("qwen3.5-35b-a3b-fp8", "h100-sxm", 1);
    let chat = peak_level(&p, 1, 1024, 256);
    let tool = peak_level(&p, 32, 32768, 256);
    rows.push(row(
        "qwen3.5-35b-a3b-fp8 1xH100-SXM chat 1024/256: single-user decode tok/s",
        172.5,
        chat.decode_tps,
    ));
    rows.push(row(
        "qwen3.5-35b-a3b-fp8 1xH100-SXM chat 1024/256: single-user TTFT s",
        0.20,
        chat.ttft,
    ));
    rows.push(row(
        "qwen3.5-35b-a3b-fp8 1xH100-SXM tool 32768/256 @32: per-user decode tok/s",
        13.2,
        tool.decode_tps,
    ));
    rows.push(row(
        "qwen3.5-35b-a3b-fp8 1xH100-SXM tool 32768/256 @32: TTFT s",
        6.2,
        tool.ttft,
    ));

    // Step-3.7-Flash NVFP4, 2x RTX Pro 6000 Blackwell, 1024 out (reference 003).
    let p = profile("step-3.7-flash", "rtx-pro-6000", 2);
    let one_k = peak_level(&p, 1, 1024, 1024);
    let k32 = peak_level(&p, 1, 32 * 1024, 1024);
    let k256 = peak_level(&p, 1, 256 * 1024 - 1024, 1024);
    rows.push(row(
        "step-3.7-flash 2xRTX-Pro-6000 1K ctx: single-user decode tok/s",
        94.6,
        one_k.decode_tps,
    ));
    rows.push(row(
        "step-3.7-flash 2xRTX-Pro-6000 256K ctx: single-user decode tok/s",
        78.5,
        k256.decode_tps,
    ));
    rows.push(row(
        "step-3.7-flash 2xRTX-Pro-6000 1K ctx: single-user TTFT s",
        0.381,
        one_k.ttft,
    ));
    rows.push(row(
        "step-3.7-flash 2xRTX-Pro-6000 32K ctx: single-user TTFT s",
        11.2,
        k32.ttft,
    ));
    rows
}
