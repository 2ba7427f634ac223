//! Predictions beyond the measured levels from a report's fit: what the viewer's What-if
//! section shows and `infermeter sim --fit` serves. Each prediction is the fitted engine
//! ([`crate::fit::fitted_profile`], or [`crate::fit::scaled_profile`] on other GPUs) running
//! the level on the virtual clock, measured as the collector measures ([`crate::measure`]).

use infermeter_report::analysis::capacity::meets;
use infermeter_report::analysis::Metric;
use infermeter_report::{Fit, FitErrors, FitMetric, Limits, LoadMode};

use crate::fit::{scaled_profile, FitError};
use crate::measure::{measure, Figures, LevelSpec, Load};
use crate::profile::Profile;
use crate::profiles::ProfileSet;

/// Requests measured per slot of a predicted peak level: the collector's default
/// (`requests_per_slot` of a suite).
pub const REQUESTS_PER_SLOT: u32 = 3;

/// The reader's question: a load, request lengths and a deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    /// Peak (users in flight) or burst (requests sent at once).
    pub mode: LoadMode,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// GPU id of the simulator's tables, and how many.
    pub gpu: String,
    pub gpus: u32,
    /// The engine serving it, as the report names it (`metadata.engine.name`): how it admits
    /// requests that arrive together ([`crate::fit::gathers_arrivals`]).
    pub engine: String,
}

impl WhatIf {
    /// The engine that answers it.
    pub fn engine(&self, fit: &Fit, set: &ProfileSet) -> Result<Profile, FitError> {
        scaled_profile(fit, &self.engine, set, &self.gpu, self.gpus.max(1))
    }

    /// The figures at `load` users (peak) or queue depth (burst).
    pub fn predict(&self, engine: &Profile, load: u32) -> Figures {
        let load = load.max(1);
        let load = match self.mode {
            LoadMode::Burst => Load::Burst { requests: load },
            _ => Load::Peak {
                concurrency: load,
                measured: REQUESTS_PER_SLOT * load,
            },
        };
        measure(
            engine,
            &LevelSpec {
                load,
                input_tokens: self.input_tokens.max(1),
                output_tokens: self.output_tokens.max(1),
            },
        )
    }

    /// Whether this is the deployment and request shape the fit was measured on, so the
    /// report's measured levels answer it too.
    pub fn is_measured_deployment(&self, fit: &Fit) -> bool {
        self.gpu == fit.deployment.gpu && self.gpus == fit.deployment.gpus
    }
}

/// The loads a curve is drawn at: doubling from 1 to `4 × highest`, and that end itself.
pub fn curve_loads(highest_measured: u32) -> Vec<u32> {
    let end = highest_measured.max(1).saturating_mul(4);
    let mut loads: Vec<u32> = std::iter::successors(Some(1u32), |n| n.checked_mul(2))
        .take_while(|n| *n < end)
        .collect();
    loads.push(end);
    loads
}

/// Whether predicted means meet `limits`, each limit judged on the mean of its figure (TPOT:
/// each request's, averaged, as a measured report states it). A prediction has no end-to-end
/// latency or stall figure: those limits are not judged here.
pub fn means_meet(limits: &Limits, f: &Figures) -> bool {
    limits.limits().into_iter().all(|(metric, bound, limit)| {
        let value = match metric {
            Metric::Ttft => f.ttft_s,
            Metric::DecodeTokS => f.decode_tok_s,
            Metric::Tpot => f.tpot_s,
            Metric::Itl => f.itl_s,
            _ => return true,
        };
        meets(value, bound, limit)
    })
}

/// The most users (or the deepest queue) up to `highest` whose predicted means meet `limits`
/// ([`means_meet`]), by bisection between loads of the curve; `None` when even one fails,
/// `Some(highest)` when all pass (the page says "≥").
pub fn most_meeting(what: &WhatIf, engine: &Profile, limits: &Limits, highest: u32) -> Option<u32> {
    let meets = |n: u32| means_meet(limits, &what.predict(engine, n));
    if !meets(1) {
        return None;
    }
    if meets(highest) {
        return Some(highest);
    }
    // meets(lo) and !meets(hi): what fails at a load fails beyond it for these means.
    let (mut lo, mut hi) = (1u32, highest);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// How much longer than the longest measured request a context may be and still count as
/// measured ground: beyond it, attention and the KV cache work where no level looked.
pub const CONTEXT_REACH: u32 = 4;

/// Why a question lies outside what the fit saw, so that no fitted error may be stated for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extrapolation {
    /// Another GPU kind: scaled by datasheets.
    OtherGpu { gpu: String },
    /// Another count of the same GPU: a fit on one count cannot split a decode step between
    /// the weights' read, which divides, and the overhead, which does not.
    OtherGpuCount { gpus: u32 },
    /// A context (input + output tokens) more than [`CONTEXT_REACH`] times the longest measured.
    LongerContext { tokens: u32, longest: u32 },
}

impl Extrapolation {
    /// "2 GPUs (the fit saw 1)", for the page's labels.
    pub fn describe(&self, fit: &Fit) -> String {
        match self {
            Extrapolation::OtherGpu { gpu } => {
                format!("{gpu}, scaled by datasheets from {}", fit.deployment.gpu)
            }
            Extrapolation::OtherGpuCount { gpus } => {
                format!("{gpus} GPUs (the fit saw {})", fit.deployment.gpus)
            }
            Extrapolation::LongerContext { tokens, longest } => {
                format!("a {tokens}-token context, over {CONTEXT_REACH}x the longest measured ({longest})")
            }
        }
    }
}

/// Whether `what` lies outside what `fit` was fitted on (the first reason that applies);
/// `None` when the fit's held-out error stands for it.
pub fn extrapolation(fit: &Fit, what: &WhatIf) -> Option<Extrapolation> {
    if what.gpu != fit.deployment.gpu {
        return Some(Extrapolation::OtherGpu {
            gpu: what.gpu.clone(),
        });
    }
    if what.gpus != fit.deployment.gpus {
        return Some(Extrapolation::OtherGpuCount { gpus: what.gpus });
    }
    let longest = fit
        .levels
        .iter()
        .map(|l| l.input_tokens + l.output_tokens)
        .max()?;
    let tokens = what.input_tokens + what.output_tokens;
    (tokens > CONTEXT_REACH.saturating_mul(longest))
        .then_some(Extrapolation::LongerContext { tokens, longest })
}

/// The uncalibrated profile's median error of `metric` over the measured levels: the error
/// stated beside an extrapolation, where no fitted error applies.
pub fn uncalibrated_error(fit: &Fit, metric: FitMetric) -> Option<f64> {
    median_error(fit, metric, |e| e.uncalibrated.median)
}

/// The held-out (leave-one-level-out) median error of `metric`, the figure stated beside its
/// predictions; `None` when the fit has no levels of it.
pub fn held_out_error(fit: &Fit, metric: FitMetric) -> Option<f64> {
    median_error(fit, metric, |e| e.held_out.median)
}

/// One median error of `metric` (`which` picks it), when the fit has a finite one.
fn median_error(fit: &Fit, metric: FitMetric, which: fn(&FitErrors) -> f64) -> Option<f64> {
    fit.errors
        .iter()
        .find(|e| e.metric == metric)
        .map(which)
        .filter(|e| e.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled report `name` (data/reports).
    fn bundled(name: &str) -> infermeter_report::Report {
        let path = format!("{}/../data/reports/{name}", env!("CARGO_MANIFEST_DIR"));
        infermeter_report::load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// #43 item 7: the H100 report's ctx-4k peak 4 measured a mean TPOT of 75.8 ms, where
    /// 1 / its mean decode speed is 64.4 ms (a mean of inverses is not the inverse of a mean).
    /// The prediction's mean TPOT is each request's, averaged, as the report's is.
    #[test]
    fn the_predicted_mean_tpot_is_the_mean_of_each_requests() {
        let report = bundled("h100-transformers-llama-3.1-8b-shape.json");
        let fit = report.fit.as_ref().expect("the bundled report's fit");
        let level = report
            .series
            .iter()
            .find(|s| s.scenario == "ctx-4k" && s.mode == LoadMode::Peak)
            .and_then(|s| s.levels.iter().find(|l| l.concurrency == 4))
            .unwrap();
        let measured = level.metrics.tpot_s.unwrap().mean;
        let inverse = 1.0 / level.metrics.decode_tok_s.unwrap().mean;
        assert!((measured * 1e3 - 75.8).abs() < 0.05 && (inverse * 1e3 - 64.4).abs() < 0.05);
        let what = WhatIf {
            mode: LoadMode::Peak,
            input_tokens: 4096,
            output_tokens: 128,
            gpu: fit.deployment.gpu.clone(),
            gpus: fit.deployment.gpus,
            engine: report.metadata.engine.name.clone(),
        };
        let engine = what.engine(fit, &ProfileSet::builtin()).unwrap();
        let predicted = what.predict(&engine, 4);
        // 69.1 ms predicted: 8.8% under the measured mean TPOT.
        assert!(
            (predicted.tpot_s * 1e3 - 69.1).abs() < 0.05,
            "{predicted:?}"
        );
        assert!(
            (predicted.tpot_s / measured - 1.0).abs() < 0.1,
            "{predicted:?}"
        );
    }

    /// #47 item 4: another GPU, another count of it, or a context over 4x the longest measured
    /// is an extrapolation; the measured deployment at measured lengths is not.
    #[test]
    fn questions_outside_the_fit_are_extrapolations() {
        let report = bundled("llama-cpu-tiny-llama.json");
        let fit = report.fit.as_ref().unwrap();
        let measured = WhatIf {
            mode: LoadMode::Peak,
            input_tokens: 1024,
            output_tokens: 32,
            gpu: fit.deployment.gpu.clone(),
            gpus: fit.deployment.gpus,
            engine: report.metadata.engine.name.clone(),
        };
        assert_eq!(extrapolation(fit, &measured), None);
        // The longest measured is 1,024 + 32: four times that is still measured ground.
        let four = WhatIf {
            input_tokens: 4 * 1024 + 3 * 32,
            ..measured.clone()
        };
        assert_eq!(extrapolation(fit, &four), None);
        let longer = WhatIf {
            input_tokens: four.input_tokens + 1,
            ..measured.clone()
        };
        let e = extrapolation(fit, &longer).unwrap();
        assert_eq!(
            e.describe(fit),
            "a 4225-token context, over 4x the longest measured (1056)"
        );
        let two = WhatIf {
            gpus: 2,
            ..measured.clone()
        };
        assert_eq!(
            extrapolation(fit, &two).unwrap().describe(fit),
            "2 GPUs (the fit saw 1)"
        );
        let h200 = WhatIf {
            gpu: "h200".into(),
            ..measured
        };
        assert!(matches!(
            extrapolation(fit, &h200),
            Some(Extrapolation::OtherGpu { .. })
        ));
        let u = uncalibrated_error(fit, FitMetric::TtftS).unwrap();
        assert_eq!(u, fit.errors[0].uncalibrated.median);
    }

    #[test]
    fn curves_double_up_to_four_times_the_highest_measured() {
        assert_eq!(curve_loads(8), [1, 2, 4, 8, 16, 32]);
        assert_eq!(curve_loads(6), [1, 2, 4, 8, 16, 24]);
        assert_eq!(curve_loads(1), [1, 2, 4]);
    }

    #[test]
    fn the_most_users_meeting_an_slo_is_where_the_means_cross_it() {
        let engine = ProfileSet::builtin()
            .resolve("llama-3.1-8b", "h100-sxm", Some(1))
            .unwrap();
        let what = WhatIf {
            mode: LoadMode::Burst,
            input_tokens: 4096,
            output_tokens: 64,
            gpu: "h100-sxm".into(),
            gpus: 1,
            engine: "vLLM".into(),
        };
        let bound = what.predict(&engine, 20).ttft_s;
        let slo = Limits {
            max_ttft_s: Some(bound),
            ..Limits::default()
        };
        let most = most_meeting(&what, &engine, &slo, 128).unwrap();
        assert!(
            most >= 20 && means_meet(&slo, &what.predict(&engine, most)),
            "{most}"
        );
        assert!(!means_meet(&slo, &what.predict(&engine, most + 1)));
        assert_eq!(
            most_meeting(&what, &engine, &Limits::default(), 128),
            Some(128)
        );
        let none = Limits {
            max_ttft_s: Some(1e-6),
            ..Limits::default()
        };
        assert_eq!(most_meeting(&what, &engine, &none, 128), None);
    }
}
