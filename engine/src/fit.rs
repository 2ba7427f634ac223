//! The engine model fitted to a measured report, and its predictions: one implementation for
//! `infermeter fit`, `infermeter sim --fit` and the viewer's What-if section.
//!
//! The fitted coefficients are the step-time model's free ones ([`FitCoefficients`]): weight and
//! KV-cache read bandwidth, GEMM and attention rates, per-step, per-sequence and batched-step
//! overhead, front-end latency.
//! Each is bounded to physical sense: a rate never above the datasheet's peak (nor below a
//! ten-thousandth of it, see `Bounds`), a time between a microsecond and seconds. The fit
//! minimises a robust (soft-L1) loss of the log ratios of modelled to measured level means
//! (TTFT, ITL, per-user decode, system throughput; and the engine's own prefill speed where a
//! report has it) with Nelder-Mead in the logs, restarted.
//! Robust, because one level of one or two requests (a report's single-user levels) can be off
//! by half from its neighbours through noise alone, and a squared loss would bend every other
//! level towards it.

use std::collections::BTreeMap;

use infermeter_report::{
    Arrivals, ErrorSummary, Fit, FitCoefficients, FitDeployment, FitErrors, FitLevel, FitMetric,
    FitPoint, Level, LoadMode, Report, Series,
};

use crate::measure::{measure, Distributions, Figures, LevelSpec, Load};
use crate::profile::{BatchEntry, Profile};
use crate::profiles::{ProfileError, ProfileSet};

/// What the report does not say and the reader may: which deployment of the tables, and the
/// engine's limits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitOptions {
    /// Model id of the tables (default: the one whose id, name or alias the report's model is).
    pub model: Option<String>,
    /// GPU id of the tables (default: the one whose name or alias the report's hardware is).
    pub gpu: Option<String>,
    /// Most sequences at once (default: the most the server ran while requests waited, else
    /// the profile's).
    pub max_num_seqs: Option<u32>,
    /// Most tokens per step (default: llama.cpp's batch of 2048 for llama.cpp, else the
    /// profile's).
    pub max_num_batched_tokens: Option<u32>,
}

/// Why a report cannot be fitted, or a fit not used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error("the report's model {model:?} is not in the simulator's tables; name one with --model (known: {known})")]
    UnknownModel { model: String, known: String },
    #[error("the report's hardware {hardware:?} is not in the simulator's tables; name one with --gpu (known: {known})")]
    UnknownHardware { hardware: String, known: String },
    #[error("the report has {found} level(s) the model can replay (peak, burst or rate levels with TTFT, ITL, decode speed and throughput measured); a fit needs at least {needed}")]
    TooFewLevels { found: usize, needed: usize },
}

/// Fewest levels a fit accepts: with fewer, leaving one out leaves too little to fit.
pub const MIN_LEVELS: usize = 3;

/// One level of the report the model replays: where it is, its load, what was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredLevel {
    pub scenario: String,
    pub mode: LoadMode,
    pub concurrency: u32,
    pub request_rate: Option<f64>,
    pub spec: LevelSpec,
    pub measured: Figures,
    /// The measured TTFT, token gap and end-to-end distributions, as far as the report has
    /// them (an imported report may have means only).
    pub distributions: Distributions,
    /// The engine's own prefill speed of the level's prompts (llama.cpp's `timings`, tok/s),
    /// where the report has it and each request ran alone (one user, or a burst of one): the
    /// model's prefill of the prompt is judged by it too, which pins how a prompt's cost grows
    /// with its length apart from the front end's latency (TTFT alone gives their sum).
    pub prefill_tok_s: Option<f64>,
}

impl MeasuredLevel {
    /// The level of `series` as the model replays it; `None` when it cannot (a mode without a
    /// closed form here, no figures).
    fn of(report: &Report, series: &Series, level: &Level) -> Option<MeasuredLevel> {
        let scenario = report.scenarios.iter().find(|s| s.id == series.scenario)?;
        if scenario.session.is_some() || scenario.trace.is_some() || level.requests.ok == 0 {
            return None;
        }
        let m = &level.metrics;
        let (ttft, itl, decode) = (m.ttft_s?, m.itl_s?, m.decode_tok_s?);
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if ![ttft.mean, itl.mean, decode.mean, level.system_output_tok_s]
            .into_iter()
            .all(positive)
        {
            return None;
        }
        let mean_or = |d: Option<infermeter_report::Distribution>, default: u32| {
            d.map_or(default, |d| d.mean.round().max(1.0) as u32)
        };
        let load = match series.mode {
            LoadMode::Peak => Load::Peak {
                concurrency: level.concurrency,
                // An imported report may not say how many requests its figures pool: then
                // every request that succeeded.
                measured: ttft.count.unwrap_or(level.requests.ok) as u32,
            },
            LoadMode::Burst => Load::Burst {
                requests: level.concurrency,
            },
            LoadMode::Rate => Load::Rate {
                rate: level.request_rate?,
                requests: level.requests.total() as u32,
                poisson: series.arrivals == Some(Arrivals::Poisson),
            },
            _ => return None,
        };
        Some(MeasuredLevel {
            scenario: series.scenario.clone(),
            mode: series.mode,
            concurrency: level.concurrency,
            request_rate: level.request_rate,
            spec: LevelSpec {
                load,
                input_tokens: mean_or(m.input_tokens, scenario.input_tokens),
                output_tokens: mean_or(m.output_tokens, scenario.output_tokens),
            },
            measured: Figures {
                ttft_s: ttft.mean,
                itl_s: itl.mean,
                decode_tok_s: decode.mean,
                // Not fitted: a report may not have it.
                tpot_s: m.tpot_s.map_or(f64::NAN, |d| d.mean),
                system_output_tok_s: level.system_output_tok_s,
                e2e_s: m.e2e_s.map_or(f64::NAN, |d| d.mean),
            },
            distributions: Distributions {
                ttft_s: m.ttft_s,
                itl_s: m.itl_s,
                e2e_s: m.e2e_s,
            },
            prefill_tok_s: (level.concurrency == 1
                && matches!(series.mode, LoadMode::Peak | LoadMode::Burst))
            .then(|| level.server.as_ref()?.engine_prefill_tok_s.map(|d| d.mean))
            .flatten()
            .filter(|x| positive(*x)),
        })
    }
}

/// The levels of `report` the model replays, and a note for each series it leaves out.
pub fn measured_levels(report: &Report) -> (Vec<MeasuredLevel>, Vec<String>) {
    let mut levels = Vec::new();
    let mut notes = Vec::new();
    for series in &report.series {
        let before = levels.len();
        levels.extend(
            series
                .levels
                .iter()
                .filter_map(|l| MeasuredLevel::of(report, series, l)),
        );
        let left = series.levels.len() - (levels.len() - before);
        if left > 0 {
            notes.push(format!(
                "{} {}: {left} level(s) left out (the model replays peak, burst and rate levels of single requests with TTFT, ITL, decode speed and throughput measured)",
                series.scenario,
                series.mode.label()
            ));
        }
    }
    (levels, notes)
}

/// The deployment of the tables `report` was measured on, with the engine's limits.
pub fn deployment_of(
    report: &Report,
    set: &ProfileSet,
    options: &FitOptions,
) -> Result<FitDeployment, FitError> {
    let model_id = &report.metadata.model.id;
    let model = match &options.model {
        Some(m) => m.clone(),
        None => entry_named(&set.model, model_id, |m| (&m.name, &m.aliases)).ok_or_else(|| {
            FitError::UnknownModel {
                model: model_id.clone(),
                known: ids(&set.model),
            }
        })?,
    };
    let hardware = &report.metadata.hardware.gpu_model;
    let gpu = match &options.gpu {
        Some(g) => g.clone(),
        None => entry_named(&set.gpu, hardware, |g| (&g.name, &g.aliases)).ok_or_else(|| {
            FitError::UnknownHardware {
                hardware: hardware.clone(),
                known: ids(&set.gpu),
            }
        })?,
    };
    let gpus = report.metadata.hardware.gpu_count.max(1);
    let base = set.resolve(&model, &gpu, Some(gpus))?;
    let max_num_seqs = options
        .max_num_seqs
        .or_else(|| slots_seen(report))
        .unwrap_or(base.max_num_seqs);
    let llama_cpp = is_llama_cpp(&report.metadata.engine.name);
    let max_num_batched_tokens = options
        .max_num_batched_tokens
        .or(llama_cpp.then_some(LLAMA_CPP_BATCH))
        .unwrap_or(base.max_num_batched_tokens);
    Ok(FitDeployment {
        model,
        gpu,
        gpus,
        max_num_seqs: max_num_seqs.max(1),
        max_num_batched_tokens: max_num_batched_tokens.max(1),
    })
}

/// The id of the table entry whose id, name or alias is `wanted` (case and spaces aside).
fn entry_named<T>(
    table: &BTreeMap<String, T>,
    wanted: &str,
    names: impl Fn(&T) -> (&String, &Vec<String>),
) -> Option<String> {
    let same = |a: &str| a.trim().eq_ignore_ascii_case(wanted.trim());
    table
        .iter()
        .find(|(id, entry)| {
            let (name, aliases) = names(entry);
            same(id) || same(name) || aliases.iter().any(|a| same(a))
        })
        .map(|(id, _)| id.clone())
}

/// A table's ids, for an error that lists them.
fn ids<T>(table: &BTreeMap<String, T>) -> String {
    table.keys().cloned().collect::<Vec<_>>().join(", ")
}

/// llama-server's default logical batch (`--batch-size`): the most tokens one step carries.
const LLAMA_CPP_BATCH: u32 = 2048;

/// The most sequences the server ran at once while others waited (its slots), from the
/// `/metrics` figures of the levels; `None` when no level queued.
fn slots_seen(report: &Report) -> Option<u32> {
    report
        .series
        .iter()
        .flat_map(|s| &s.levels)
        .filter_map(|l| l.server.as_ref())
        .filter(|s| s.waiting_max.is_some_and(|w| w > 0.0))
        .filter_map(|s| s.running_max)
        .map(|r| r.round() as u32)
        .max()
}

/// The profile of `deployment` served by `engine` (a report's `metadata.engine.name`),
/// uncalibrated: the tables' coefficients.
pub fn base_profile(
    set: &ProfileSet,
    deployment: &FitDeployment,
    engine: &str,
) -> Result<Profile, FitError> {
    let mut p = set.resolve(&deployment.model, &deployment.gpu, Some(deployment.gpus))?;
    p.max_num_seqs = deployment.max_num_seqs;
    p.max_num_batched_tokens = deployment.max_num_batched_tokens;
    p.gathers_arrivals = gathers_arrivals(engine);
    Ok(p)
}

/// Whether the engine a report names starts the requests that reach it together in one step
/// ([`Profile::gathers_arrivals`]): llama.cpp's server. Replaying its arrivals one at a time
/// stalled every decode that llama-server runs in lockstep with a prefill, and put the held-out
/// ITL of the `--parallel` sweep three times further off (docs/what-if.md).
pub fn gathers_arrivals(engine: &str) -> bool {
    is_llama_cpp(engine)
}

fn is_llama_cpp(engine: &str) -> bool {
    engine.trim().eq_ignore_ascii_case("llama.cpp")
}

/// A profile's coefficients.
pub fn coefficients(p: &Profile) -> FitCoefficients {
    FitCoefficients {
        mem_bw_gbs: p.mem_bw / 1e9,
        kv_bw_gbs: p.kv_bw / 1e9,
        gemm_tflops: p.flops / 1e12,
        attn_tflops: p.attn_flops / 1e12,
        step_overhead_ms: p.step_overhead * 1e3,
        seq_overhead_us: p.seq_overhead * 1e6,
        frontend_latency_ms: p.frontend_latency * 1e3,
        batch_overhead_ms: p.batch_overhead * 1e3,
    }
}

/// `p` with the coefficients `c`.
pub fn with_coefficients(p: &Profile, c: &FitCoefficients) -> Profile {
    Profile {
        mem_bw: c.mem_bw_gbs * 1e9,
        kv_bw: c.kv_bw_gbs * 1e9,
        flops: c.gemm_tflops * 1e12,
        attn_flops: c.attn_tflops * 1e12,
        step_overhead: c.step_overhead_ms * 1e-3,
        seq_overhead: c.seq_overhead_us * 1e-6,
        frontend_latency: c.frontend_latency_ms * 1e-3,
        batch_overhead: c.batch_overhead_ms * 1e-3,
        ..p.clone()
    }
}

/// The fitted engine: the fit's deployment with its coefficients.
pub fn fitted_profile(fit: &Fit, engine: &str, set: &ProfileSet) -> Result<Profile, FitError> {
    Ok(with_coefficients(
        &base_profile(set, &fit.deployment, engine)?,
        &fit.coefficients,
    ))
}

/// The fitted engine (served by `engine`) on `gpus` × `gpu` instead: memory, KV capacity and
/// tensor-parallel costs from the tables, each fitted rate scaled by the ratio of the datasheet
/// peaks (the engine's efficiency is assumed to carry over), overheads unchanged.
pub fn scaled_profile(
    fit: &Fit,
    engine: &str,
    set: &ProfileSet,
    gpu: &str,
    gpus: u32,
) -> Result<Profile, FitError> {
    let fitted = fitted_profile(fit, engine, set)?;
    let target = base_profile(
        set,
        &FitDeployment {
            gpu: gpu.to_string(),
            gpus,
            ..fit.deployment.clone()
        },
        engine,
    )?;
    Ok(scale_to(&fitted, &target))
}

/// `fitted`'s coefficients carried to `target`'s deployment: each rate scaled by the ratio of
/// the datasheet peaks, the overheads as they are, everything else (memory, limits,
/// tensor-parallel costs) `target`'s.
pub fn scale_to(fitted: &Profile, target: &Profile) -> Profile {
    let (from, to) = (fitted.peak, target.peak);
    Profile {
        mem_bw: fitted.mem_bw * to.mem_bw / from.mem_bw,
        kv_bw: fitted.kv_bw * to.mem_bw / from.mem_bw,
        flops: fitted.flops * to.flops / from.flops,
        attn_flops: fitted.attn_flops * to.attn_flops / from.attn_flops,
        step_overhead: fitted.step_overhead,
        seq_overhead: fitted.seq_overhead,
        frontend_latency: fitted.frontend_latency,
        batch_overhead: fitted.batch_overhead,
        ..target.clone()
    }
}

/// Where each coefficient may go, in natural logs of its profile units.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    low: [f64; DIMS],
    high: [f64; DIMS],
}

const DIMS: usize = 8;

impl Bounds {
    /// Rates between 1e-4 (1e-5 for attention and KV reads, whose kernels vary most) of the
    /// datasheet peak and the peak itself; step overhead 1 µs – 1 s, per-sequence 0.1 µs –
    /// 0.1 s, front end 10 µs – 10 s, a batched step's 0.1 µs (none, in effect) – 1 s.
    fn of(p: &Profile) -> Bounds {
        let pk = p.peak;
        let low = [
            pk.mem_bw * 1e-4,
            pk.mem_bw * 1e-5,
            pk.flops * 1e-4,
            pk.attn_flops * 1e-5,
            1e-6,
            1e-7,
            1e-5,
            1e-7,
        ];
        let high = [
            pk.mem_bw,
            pk.mem_bw,
            pk.flops,
            pk.attn_flops,
            1.0,
            0.1,
            10.0,
            1.0,
        ];
        Bounds {
            low: low.map(f64::ln),
            high: high.map(f64::ln),
        }
    }

    /// Unit-cube coordinates of `p`'s coefficients (clamped into the bounds).
    fn encode(&self, p: &Profile) -> [f64; DIMS] {
        let v = [
            p.mem_bw,
            p.kv_bw,
            p.flops,
            p.attn_flops,
            p.step_overhead,
            p.seq_overhead,
            p.frontend_latency,
            p.batch_overhead,
        ];
        std::array::from_fn(|i| {
            ((v[i].max(1e-300).ln() - self.low[i]) / (self.high[i] - self.low[i])).clamp(0.0, 1.0)
        })
    }

    fn decode(&self, base: &Profile, u: &[f64]) -> Profile {
        let v: [f64; DIMS] = std::array::from_fn(|i| {
            (self.low[i] + u[i].clamp(0.0, 1.0) * (self.high[i] - self.low[i])).exp()
        });
        Profile {
            mem_bw: v[0],
            kv_bw: v[1],
            flops: v[2],
            attn_flops: v[3],
            step_overhead: v[4],
            seq_overhead: v[5],
            frontend_latency: v[6],
            batch_overhead: v[7],
            ..base.clone()
        }
    }
}

/// Weights of the metrics in the loss: TTFT and ITL are the fit's targets; per-user decode and
/// throughput follow mostly from ITL and count half.
const WEIGHTS: [(FitMetric, f64); 4] = [
    (FitMetric::TtftS, 1.0),
    (FitMetric::ItlS, 1.0),
    (FitMetric::DecodeTokS, 0.5),
    (FitMetric::SystemOutputTokS, 0.5),
];

/// Log ratios up to this size count about squared, larger ones about linearly.
const LOSS_SCALE: f64 = 0.1;

fn figure(f: &Figures, metric: FitMetric) -> f64 {
    match metric {
        FitMetric::TtftS => f.ttft_s,
        FitMetric::ItlS => f.itl_s,
        FitMetric::DecodeTokS => f.decode_tok_s,
        FitMetric::SystemOutputTokS => f.system_output_tok_s,
    }
}

/// The soft-L1 loss of `p` over `levels`: each level's figures, and the engine's own prefill
/// speed where the level has it (weighted as TTFT).
fn loss(p: &Profile, levels: &[&MeasuredLevel]) -> f64 {
    levels
        .iter()
        .map(|l| {
            let modelled = measure(p, &l.spec);
            let figures: f64 = WEIGHTS
                .iter()
                .map(|&(metric, weight)| {
                    weight * soft_l1(figure(&modelled, metric), figure(&l.measured, metric))
                })
                .sum();
            let prefill = l.prefill_tok_s.map_or(0.0, |x| {
                soft_l1(
                    f64::from(l.spec.input_tokens) / prefill_seconds(p, l.spec.input_tokens),
                    x,
                )
            });
            figures + prefill
        })
        .sum()
}

/// The soft-L1 loss of the log ratio of `modelled` to `measured` (nothing when nothing was
/// measured; a large loss when the model gives no figure).
fn soft_l1(modelled: f64, measured: f64) -> f64 {
    if !(measured.is_finite() && measured > 0.0) {
        return 0.0;
    }
    let r = if modelled.is_finite() && modelled > 0.0 {
        (modelled / measured).ln()
    } else {
        10.0
    };
    let z = r / LOSS_SCALE;
    2.0 * ((1.0 + z * z).sqrt() - 1.0)
}

/// Seconds `p` takes to prefill a prompt of `tokens` alone: its steps of at most the token
/// budget, each over the context the ones before it left.
fn prefill_seconds(p: &Profile, tokens: u32) -> f64 {
    let budget = p.max_num_batched_tokens.max(1);
    let mut done = 0;
    let mut seconds = 0.0;
    while done < tokens.max(1) {
        let chunk = (tokens.max(1) - done).min(budget);
        seconds += p.step_time(&[BatchEntry {
            tokens: chunk,
            context: done,
        }]);
        done += chunk;
    }
    seconds
}

/// Nelder–Mead over the unit cube (points clamped into it), from `start` with a simplex of
/// `size`; at most `evals` evaluations.
fn nelder_mead(
    f: &impl Fn(&[f64]) -> f64,
    start: &[f64],
    size: f64,
    evals: usize,
) -> (Vec<f64>, f64) {
    let n = start.len();
    let clamp = |x: Vec<f64>| x.into_iter().map(|v| v.clamp(0.0, 1.0)).collect::<Vec<_>>();
    let mut simplex: Vec<(Vec<f64>, f64)> = (0..=n)
        .map(|i| {
            let mut x = start.to_vec();
            if i > 0 {
                // Step inwards when the start sits on the upper edge.
                x[i - 1] += if x[i - 1] + size <= 1.0 { size } else { -size };
            }
            let x = clamp(x);
            let y = f(&x);
            (x, y)
        })
        .collect();
    let mut used = n + 1;
    let along = |a: &[f64], b: &[f64], t: f64| {
        clamp(a.iter().zip(b).map(|(a, b)| a + t * (b - a)).collect())
    };
    while used < evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if simplex[n].1 - simplex[0].1 <= 1e-10 * (1.0 + simplex[0].1.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|d| simplex[..n].iter().map(|p| p.0[d]).sum::<f64>() / n as f64)
            .collect();
        let worst = simplex[n].clone();
        let reflected = along(&centroid, &worst.0, -1.0);
        let fr = f(&reflected);
        used += 1;
        if fr < simplex[0].1 {
            let expanded = along(&centroid, &worst.0, -2.0);
            let fe = f(&expanded);
            used += 1;
            simplex[n] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (reflected, fr);
        } else {
            let contracted = along(&centroid, &worst.0, 0.5);
            let fc = f(&contracted);
            used += 1;
            if fc < worst.1 {
                simplex[n] = (contracted, fc);
            } else {
                let best = simplex[0].0.clone();
                for p in simplex.iter_mut().skip(1) {
                    let x = along(&best, &p.0, 0.5);
                    p.1 = f(&x);
                    p.0 = x;
                }
                used += n;
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0)
}

/// The Nelder–Mead rounds of a fit from the tables' coefficients: each round's simplex size (in
/// the unit cube of log coefficients) and evaluations. Each round restarts from the best point
/// so far with a smaller simplex, which gets Nelder–Mead out of the collapsed simplices it
/// otherwise stops in.
pub const ROUNDS: [(f64, usize); 3] = [(0.25, 500), (0.08, 300), (0.02, 200)];

/// One configuration's share of a fit: its deployment, uncalibrated, and its levels.
pub struct Part<'a> {
    pub base: Profile,
    pub levels: Vec<&'a MeasuredLevel>,
}

/// The coefficients that fit every part's levels best, as the first part's profile: the other
/// parts run them carried to their deployments ([`scale_to`]). Starts from the first part's
/// coefficients and is bounded by its datasheet peaks.
pub fn fit_parts(parts: &[Part<'_>], rounds: &[(f64, usize)]) -> Profile {
    let base = &parts[0].base;
    let bounds = Bounds::of(base);
    let f = |u: &[f64]| {
        let p = bounds.decode(base, u);
        parts
            .iter()
            .enumerate()
            .map(|(i, part)| match i {
                // The first part's own profile, not carried to itself: a single-configuration
                // fit stays the one it always was, bit for bit.
                0 => loss(&p, &part.levels),
                _ => loss(&scale_to(&p, &part.base), &part.levels),
            })
            .sum::<f64>()
    };
    let mut best = bounds.encode(base).to_vec();
    for &(size, evals) in rounds {
        best = nelder_mead(&f, &best, size, evals).0;
    }
    bounds.decode(base, &best)
}

/// The coefficients that fit `levels` best, starting from `base`'s.
pub fn fit_profile(base: &Profile, levels: &[&MeasuredLevel]) -> Profile {
    fit_parts(
        &[Part {
            base: base.clone(),
            levels: levels.to_vec(),
        }],
        &ROUNDS,
    )
}

/// Fits the model to `report`: every level, then each level left out in turn.
pub fn fit(report: &Report, set: &ProfileSet, options: &FitOptions) -> Result<Fit, FitError> {
    let deployment = deployment_of(report, set, options)?;
    let base = base_profile(set, &deployment, &report.metadata.engine.name)?;
    let (levels, notes) = measured_levels(report);
    if levels.len() < MIN_LEVELS {
        return Err(FitError::TooFewLevels {
            found: levels.len(),
            needed: MIN_LEVELS,
        });
    }
    let all: Vec<&MeasuredLevel> = levels.iter().collect();
    let fitted = fit_profile(&base, &all);
    let fit_levels = levels
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let others: Vec<&MeasuredLevel> = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| *l)
                .collect();
            // From the tables, as the full fit: a refit warm-started from the full fit would
            // start from coefficients that saw the level it is judged on.
            let held_out = fit_profile(&base, &others);
            fit_level(level, &fitted, &held_out, &base)
        })
        .collect::<Vec<_>>();
    Ok(Fit {
        deployment,
        coefficients: coefficients(&fitted),
        uncalibrated: coefficients(&base),
        errors: error_table(&fit_levels),
        levels: fit_levels,
        notes,
    })
}

/// A level's figures from the three models.
fn fit_level(
    level: &MeasuredLevel,
    fitted: &Profile,
    held_out: &Profile,
    base: &Profile,
) -> FitLevel {
    let [f, h, u] = [fitted, held_out, base].map(|p| measure(p, &level.spec));
    let point = |metric| FitPoint {
        measured: figure(&level.measured, metric),
        fitted: figure(&f, metric),
        held_out: figure(&h, metric),
        uncalibrated: figure(&u, metric),
    };
    let measured_requests = match level.spec.load {
        Load::Peak { measured, .. } => measured,
        Load::Burst { requests } | Load::Rate { requests, .. } => requests,
    };
    FitLevel {
        scenario: level.scenario.clone(),
        mode: level.mode,
        concurrency: level.concurrency,
        request_rate: level.request_rate,
        input_tokens: level.spec.input_tokens,
        output_tokens: level.spec.output_tokens,
        measured_requests,
        ttft_s: point(FitMetric::TtftS),
        itl_s: point(FitMetric::ItlS),
        decode_tok_s: point(FitMetric::DecodeTokS),
        system_output_tok_s: point(FitMetric::SystemOutputTokS),
    }
}

/// The errors of each metric over `levels`.
pub fn error_table(levels: &[FitLevel]) -> Vec<FitErrors> {
    FitMetric::ALL
        .iter()
        .map(|&metric| {
            let summary = |model: fn(&FitPoint) -> f64| {
                summarise(levels.iter().filter_map(|l| {
                    let p = metric.point(l);
                    relative_error(model(p), p.measured)
                }))
            };
            FitErrors {
                metric,
                fitted: summary(|p| p.fitted),
                held_out: summary(|p| p.held_out),
                uncalibrated: summary(|p| p.uncalibrated),
            }
        })
        .collect()
}

/// `modelled / measured − 1`; `None` when the measurement is missing.
pub fn relative_error(modelled: f64, measured: f64) -> Option<f64> {
    (measured.is_finite() && measured > 0.0).then(|| {
        if modelled.is_finite() {
            modelled / measured - 1.0
        } else {
            f64::INFINITY
        }
    })
}

fn summarise(errors: impl Iterator<Item = f64>) -> ErrorSummary {
    let mut e: Vec<f64> = errors.collect();
    e.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let median = match e.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => e[n / 2].abs(),
        n => (e[n / 2 - 1].abs() + e[n / 2].abs()) / 2.0,
    };
    ErrorSummary {
        median,
        worst: e.last().copied().unwrap_or(f64::NAN),
    }
}

/// The key a level goes by in tables: "ctx-1k peak 8".
pub fn level_key(level: &FitLevel) -> String {
    format!(
        "{} {} {}",
        level.scenario,
        level.mode.label(),
        level.concurrency
    )
}

pub mod configurations;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
