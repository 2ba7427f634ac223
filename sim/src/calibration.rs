//! Calibration: the published reference figures (shared/reference) next to what the model gives for
//! the same workloads, computed on the virtual clock with the collector's definitions:
//! per-user decode tok/s = (output tokens - 1) / (E2E - TTFT), averaged over requests;
//! system throughput = per-user decode x concurrency; scaling efficiency = system / (single-user x N).
//!
//! [`REFERENCES`] is the one list of reference figures; [`Reference::value`] turns measured levels
//! into a figure, so the virtual-time table here and `infermeter-dev calibrate` (real time, through the
//! collector) compute every figure the same way.

use crate::engine::measure::{measure, LevelSpec, Load};
use crate::engine::Profile;
use crate::profiles::ProfileSet;

/// One model on `gpus` GPUs of one kind (profile ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deployment {
    pub model: &'static str,
    pub gpu: &'static str,
    pub gpus: u32,
}

/// Which figure of a peak-mode (closed loop, exactly N in flight) sweep a reference states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// Mean per-user decode tok/s at `concurrency`.
    DecodeTokS,
    /// Mean TTFT (s) at `concurrency`.
    TtftS,
    /// Per-user decode x `concurrency`.
    SystemTokS,
    /// Highest system tok/s over every level measured (the reference reached it at `concurrency`).
    PeakSystemTokS,
    /// System tok/s at `concurrency` / (single-user decode x `concurrency`), in %.
    ScalingEfficiencyPct,
}

/// One published figure and the workload it was measured on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// Deployment and scenario, as the table prints it.
    pub setup: &'static str,
    pub deployment: Deployment,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub concurrency: u32,
    pub figure: Figure,
    pub value: f64,
}

/// Aggregates of one peak-mode level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelResult {
    pub concurrency: u32,
    pub decode_tps: f64,
    pub ttft: f64,
}

impl LevelResult {
    pub fn system_tps(&self) -> f64 {
        self.decode_tps * f64::from(self.concurrency)
    }
}

impl Reference {
    /// What the table calls this figure.
    pub fn figure_label(&self) -> String {
        let n = self.concurrency;
        match (self.figure, n) {
            (Figure::DecodeTokS, 1) => "single-user decode tok/s".into(),
            (Figure::TtftS, 1) => "single-user TTFT s".into(),
            (Figure::DecodeTokS, _) => format!("per-user decode tok/s @{n}"),
            (Figure::TtftS, _) => format!("TTFT s @{n}"),
            (Figure::SystemTokS, _) => format!("system tok/s @{n}"),
            (Figure::PeakSystemTokS, _) => format!("peak system tok/s (reference: @{n})"),
            (Figure::ScalingEfficiencyPct, _) => format!("scaling efficiency @{n} %"),
        }
    }

    /// Concurrency levels this figure needs measured.
    pub fn levels_needed(&self) -> Vec<u32> {
        match self.figure {
            Figure::ScalingEfficiencyPct => vec![1, self.concurrency],
            _ => vec![self.concurrency],
        }
    }

    /// The figure from the levels measured on this reference's workload; `None` when a level it
    /// needs is missing.
    pub fn value(&self, levels: &[LevelResult]) -> Option<f64> {
        let at = |n: u32| levels.iter().find(|l| l.concurrency == n);
        let here = at(self.concurrency);
        match self.figure {
            Figure::DecodeTokS => here.map(|l| l.decode_tps),
            Figure::TtftS => here.map(|l| l.ttft),
            Figure::SystemTokS => here.map(LevelResult::system_tps),
            Figure::PeakSystemTokS => levels.iter().map(LevelResult::system_tps).reduce(f64::max),
            Figure::ScalingEfficiencyPct => {
                let single = at(1)?.decode_tps;
                here.map(|l| 100.0 * l.system_tps() / (single * f64::from(self.concurrency)))
            }
        }
    }

    /// Whether `other` runs the same deployment and request shape (so shares its levels).
    pub fn same_workload(&self, other: &Reference) -> bool {
        (self.deployment, self.input_tokens, self.output_tokens)
            == (other.deployment, other.input_tokens, other.output_tokens)
    }
}

const QWEN3_CODER: Deployment = Deployment {
    model: "qwen3-coder-30b-a3b",
    gpu: "h100-pcie",
    gpus: 1,
};
const QWEN35: Deployment = Deployment {
    model: "qwen3.5-35b-a3b-fp8",
    gpu: "h100-sxm",
    gpus: 1,
};
const STEP: Deployment = Deployment {
    model: "step-3.7-flash",
    gpu: "rtx-pro-6000",
    gpus: 2,
};

const fn reference(
    setup: &'static str,
    deployment: Deployment,
    (input_tokens, output_tokens): (u32, u32),
    concurrency: u32,
    figure: Figure,
    value: f64,
) -> Reference {
    Reference {
        setup,
        deployment,
        input_tokens,
        output_tokens,
        concurrency,
        figure,
        value,
    }
}

const CODER_CHAT: &str = "Qwen3-Coder-30B-A3B 1xH100-PCIe chat 1024/128";
const QWEN35_CHAT: &str = "Qwen3.5-35B-A3B-FP8 1xH100-SXM chat 1024/256";
const QWEN35_TOOL: &str = "Qwen3.5-35B-A3B-FP8 1xH100-SXM tool 32768/256";
const STEP_1K: &str = "Step-3.7-Flash NVFP4 2xRTX-Pro-6000 1K/1024";
const STEP_32K: &str = "Step-3.7-Flash NVFP4 2xRTX-Pro-6000 32K/1024";
const STEP_256K: &str = "Step-3.7-Flash NVFP4 2xRTX-Pro-6000 256K/1024";
/// 256K context including the 1024 output tokens (the model's maximum length).
const INPUT_256K: u32 = 256 * 1024 - 1024;

/// Every published figure we calibrate against (reference 002: Qwen3-Coder; 001: Qwen3.5;
/// 003: Step-3.7-Flash).
pub const REFERENCES: [Reference; 14] = [
    reference(
        CODER_CHAT,
        QWEN3_CODER,
        (1024, 128),
        1,
        Figure::DecodeTokS,
        152.9,
    ),
    reference(
        CODER_CHAT,
        QWEN3_CODER,
        (1024, 128),
        1,
        Figure::TtftS,
        0.030,
    ),
    reference(
        CODER_CHAT,
        QWEN3_CODER,
        (1024, 128),
        8,
        Figure::SystemTokS,
        1121.0,
    ),
    reference(
        CODER_CHAT,
        QWEN3_CODER,
        (1024, 128),
        24,
        Figure::PeakSystemTokS,
        2961.0,
    ),
    reference(
        CODER_CHAT,
        QWEN3_CODER,
        (1024, 128),
        32,
        Figure::ScalingEfficiencyPct,
        39.0,
    ),
    reference(
        QWEN35_CHAT,
        QWEN35,
        (1024, 256),
        1,
        Figure::DecodeTokS,
        172.5,
    ),
    reference(QWEN35_CHAT, QWEN35, (1024, 256), 1, Figure::TtftS, 0.20),
    reference(
        QWEN35_TOOL,
        QWEN35,
        (32768, 256),
        32,
        Figure::DecodeTokS,
        13.2,
    ),
    reference(QWEN35_TOOL, QWEN35, (32768, 256), 32, Figure::TtftS, 6.2),
    reference(STEP_1K, STEP, (1024, 1024), 1, Figure::DecodeTokS, 94.6),
    reference(STEP_1K, STEP, (1024, 1024), 1, Figure::TtftS, 0.381),
    reference(STEP_32K, STEP, (32 * 1024, 1024), 1, Figure::TtftS, 11.2),
    reference(
        STEP_256K,
        STEP,
        (INPUT_256K, 1024),
        1,
        Figure::DecodeTokS,
        78.5,
    ),
    reference(STEP_256K, STEP, (INPUT_256K, 1024), 1, Figure::TtftS, 109.9),
];

/// One reference figure and the simulator's value for it.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationRow {
    pub reference: Reference,
    pub simulated: f64,
}

impl CalibrationRow {
    pub fn label(&self) -> String {
        format!(
            "{}: {}",
            self.reference.setup,
            self.reference.figure_label()
        )
    }

    /// simulated / reference - 1.
    pub fn relative_error(&self) -> f64 {
        self.simulated / self.reference.value - 1.0
    }
}

/// Requests measured per slot of a calibration level (the collector's `requests_per_slot`):
/// long requests take minutes each, so one per slot is enough to average their steady decode.
pub fn requests_per_slot(input_tokens: u32) -> u32 {
    if input_tokens > 16_384 {
        1
    } else {
        3
    }
}

/// Peak mode on the virtual clock, measured like the collector's peak mode
/// (`run_peak` in collector/src/scheduler.rs, mirrored by [`crate::engine::measure`]):
/// `concurrency` in flight, closed loop; the steady state is the first
/// `requests_per_slot x concurrency` requests to finish among those sent after the first wave.
pub fn peak_level(profile: &Profile, concurrency: u32, input: u32, output: u32) -> LevelResult {
    let figures = measure(
        profile,
        &LevelSpec {
            load: Load::Peak {
                concurrency: concurrency.max(1),
                measured: concurrency.max(1) * requests_per_slot(input),
            },
            input_tokens: input,
            output_tokens: output,
        },
    );
    LevelResult {
        concurrency,
        decode_tps: figures.decode_tok_s,
        ttft: figures.ttft_s,
    }
}

/// The levels the collector sweeps by default.
pub const PEAK_LEVELS: [u32; 7] = [1, 2, 4, 8, 16, 24, 32];

/// The built-in profile of a calibration deployment.
pub fn profile(d: Deployment) -> Profile {
    ProfileSet::builtin()
        .resolve(d.model, d.gpu, Some(d.gpus))
        .expect("built-in calibration deployment resolves")
}

/// Every reference figure with the simulated value (virtual time; a few seconds of CPU in
/// release builds). Peak throughput is taken over all of [`PEAK_LEVELS`].
pub fn calibration_table() -> Vec<CalibrationRow> {
    let mut measured: Vec<(Reference, Vec<LevelResult>)> = Vec::new();
    REFERENCES
        .iter()
        .map(|r| {
            let levels = match measured.iter().position(|(m, _)| m.same_workload(r)) {
                Some(i) => &mut measured[i].1,
                None => {
                    measured.push((*r, Vec::new()));
                    &mut measured.last_mut().expect("just pushed").1
                }
            };
            let needed = match r.figure {
                Figure::PeakSystemTokS => PEAK_LEVELS.to_vec(),
                _ => r.levels_needed(),
            };
            let p = profile(r.deployment);
            for n in needed {
                if !levels.iter().any(|l| l.concurrency == n) {
                    levels.push(peak_level(&p, n, r.input_tokens, r.output_tokens));
                }
            }
            CalibrationRow {
                reference: *r,
                simulated: r.value(levels).expect("every level needed was simulated"),
            }
        })
        .collect()
}
