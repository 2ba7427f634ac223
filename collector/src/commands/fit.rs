//! `infermeter fit REPORT [-o OUT]`: the simulator's engine model fitted to a measured report
//! (the engine crate's `fit`), printed level by level with its held-out error, and stored in
//! the report (or a fitted copy) for `infermeter sim --fit` and the viewer's What-if section.

use std::path::{Path, PathBuf};

use clap::Args;
use infermeter_report::analysis::format::format_number;
use infermeter_report::pretty_json::to_pretty_json;
use infermeter_report::{ErrorSummary, Fit, FitMetric, Report};
use infermeter_sim::engine::fit::configurations::{self, Configuration};
use infermeter_sim::engine::fit::{self, level_key, FitOptions};

#[derive(Debug, Clone, Args)]
pub struct FitArgs {
    /// The measured report to fit.
    pub report: PathBuf,
    /// Write the fitted copy here instead of adding the fit to REPORT.
    #[arg(short, long, value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// Model id of the simulator's tables (default: the one the report's model names).
    #[arg(long)]
    pub model: Option<String>,
    /// GPU id of the simulator's tables (default: the one the report's hardware names).
    #[arg(long)]
    pub gpu: Option<String>,
    /// Most sequences the engine runs at once (default: what its metrics showed, else 256).
    #[arg(long, value_name = "N")]
    pub max_num_seqs: Option<u32>,
    /// Most tokens in one engine step (default: 2048 for llama.cpp, else the profile's).
    #[arg(long, value_name = "N")]
    pub max_num_batched_tokens: Option<u32>,
    /// Extra profiles TOML merged over the built-in ones (a model or GPU of your own).
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// A report of another configuration of the same engine (other slots, context, batch limit
    /// or GPU count; repeatable): the model is fitted on REPORT (and any --train) and predicts
    /// it, and its held-out errors are printed. Nothing is written.
    #[arg(long = "held-out", value_name = "REPORT")]
    pub held_out: Vec<PathBuf>,
    /// Another configuration's report to fit on with REPORT, for --held-out (repeatable).
    #[arg(long, value_name = "REPORT", requires = "held_out")]
    pub train: Vec<PathBuf>,
}

/// Fits, prints the tables and writes the report; the text to print.
pub fn run(args: &FitArgs) -> anyhow::Result<String> {
    let mut report =
        crate::output::report_files::read_report(&args.report).map_err(anyhow::Error::msg)?;
    let set = infermeter_sim::profiles::load(args.profiles.as_deref())?;
    let options = FitOptions {
        model: args.model.clone(),
        gpu: args.gpu.clone(),
        max_num_seqs: args.max_num_seqs,
        max_num_batched_tokens: args.max_num_batched_tokens,
    };
    if !args.held_out.is_empty() {
        return held_out(args, &report, &set, &options);
    }
    let fitted = fit::fit(&report, &set, &options)
        .map_err(|e| anyhow::anyhow!("cannot fit {}: {e}", args.report.display()))?;
    let text = describe(&fitted);
    // The report keeps its own format version: it says how the levels were measured, and a
    // reader of any 1.x format ignores the `fit` block it does not know.
    report.fit = Some(fitted);
    let out = args.out.as_deref().unwrap_or(&args.report);
    write(out, &report)?;
    Ok(format!("{text}\nwrote the fit into {}", out.display()))
}

/// Fits on REPORT and `--train`, predicts each `--held-out` report: the table of their errors.
/// The limits given (`--max-num-seqs`, `--max-num-batched-tokens`) are REPORT's; every other
/// report's are read from it as a fit reads them (its slots from its server metrics).
fn held_out(
    args: &FitArgs,
    report: &Report,
    set: &infermeter_sim::engine::ProfileSet,
    options: &FitOptions,
) -> anyhow::Result<String> {
    let others = FitOptions {
        max_num_seqs: None,
        max_num_batched_tokens: None,
        ..options.clone()
    };
    let read = |paths: &[PathBuf]| -> anyhow::Result<Vec<(String, Report)>> {
        paths
            .iter()
            .map(|p| {
                let r = crate::output::report_files::read_report(p).map_err(anyhow::Error::msg)?;
                Ok((configuration_name(p, &r), r))
            })
            .collect()
    };
    let (train, test) = (read(&args.train)?, read(&args.held_out)?);
    let first = (configuration_name(&args.report, report), report.clone());
    let trained: Vec<Configuration<'_>> = std::iter::once(configuration(&first, options))
        .chain(train.iter().map(|t| configuration(t, &others)))
        .collect();
    let tested: Vec<Configuration<'_>> = test.iter().map(|t| configuration(t, &others)).collect();
    let results = configurations::hold_out(set, &trained, &tested)
        .map_err(|e| anyhow::anyhow!("cannot fit {}: {e}", args.report.display()))?;
    let names: Vec<&str> = trained.iter().map(|c| c.name.as_str()).collect();
    Ok(format!(
        "fitted on {}; each held-out configuration's levels predicted, relative error over them:\n\n{}",
        names.join(", "),
        configurations::describe(&results)
    ))
}

fn configuration<'a>((name, r): &'a (String, Report), options: &FitOptions) -> Configuration<'a> {
    Configuration {
        name: name.clone(),
        report: r,
        options: options.clone(),
    }
}

/// A configuration's name: its sweep parameters (`np=2`), else its file's name.
fn configuration_name(path: &Path, report: &Report) -> String {
    match &report.metadata.configuration {
        Some(c) if !c.parameters.is_empty() => c.parameters.to_string(),
        _ => path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        ),
    }
}

/// Writes through a temporary file beside `path`, so an interrupted write never leaves half a
/// report where the measured one was.
fn write(path: &Path, report: &Report) -> anyhow::Result<()> {
    let json = to_pretty_json(report)?;
    let tmp = path.with_extension("json.fit-tmp");
    std::fs::write(&tmp, json)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| anyhow::anyhow!("cannot replace {}: {e}", path.display()))
}

/// The fit as tables: the deployment and coefficients, every level and metric, the errors.
pub fn describe(fit: &Fit) -> String {
    let d = &fit.deployment;
    let mut s = format!(
        "fitted: {} on {}x {} (at most {} sequences and {} tokens a step), {} levels\n\n",
        d.model,
        d.gpus,
        d.gpu,
        d.max_num_seqs,
        d.max_num_batched_tokens,
        fit.levels.len()
    );
    s.push_str(&coefficients_table(fit));
    s.push_str(&format!(
        "\n{:<24} {:<18} {:>10} {:>10} {:>8} {:>10} {:>8} {:>12} {:>8}\n",
        "level",
        "metric",
        "measured",
        "fitted",
        "error",
        "held out",
        "error",
        "uncalibrated",
        "error"
    ));
    for level in &fit.levels {
        for metric in FitMetric::ALL {
            let p = metric.point(level);
            let e = |m: f64| fit::relative_error(m, p.measured).map_or("n/a".into(), percent);
            s.push_str(&format!(
                "{:<24} {:<18} {:>10} {:>10} {:>8} {:>10} {:>8} {:>12} {:>8}\n",
                level_key(level),
                unit_label(metric),
                sig(p.measured),
                sig(p.fitted),
                e(p.fitted),
                sig(p.held_out),
                e(p.held_out),
                sig(p.uncalibrated),
                e(p.uncalibrated)
            ));
        }
    }
    s.push_str("\nerror over the levels, median / worst:\n");
    for e in &fit.errors {
        s.push_str(&format!(
            "{:<18} fitted {:<16} held out (leave one level out) {:<16} uncalibrated {}\n",
            e.metric.label(),
            summary(&e.fitted),
            summary(&e.held_out),
            summary(&e.uncalibrated)
        ));
    }
    for note in &fit.notes {
        s.push_str(&format!("note: {note}\n"));
    }
    s
}

/// The fitted coefficients beside the tables' (uncalibrated) ones.
fn coefficients_table(fit: &Fit) -> String {
    let (c, u) = (&fit.coefficients, &fit.uncalibrated);
    let mut s = format!(
        "{:<28} {:>12} {:>14}\n",
        "coefficient", "fitted", "uncalibrated"
    );
    for (name, f, u) in [
        ("memory bandwidth GB/s", c.mem_bw_gbs, u.mem_bw_gbs),
        ("KV-cache read GB/s", c.kv_bw_gbs, u.kv_bw_gbs),
        ("GEMM TFLOP/s", c.gemm_tflops, u.gemm_tflops),
        ("attention TFLOP/s", c.attn_tflops, u.attn_tflops),
        ("step overhead ms", c.step_overhead_ms, u.step_overhead_ms),
        (
            "per-sequence overhead us",
            c.seq_overhead_us,
            u.seq_overhead_us,
        ),
        (
            "front-end latency ms",
            c.frontend_latency_ms,
            u.frontend_latency_ms,
        ),
        (
            "batched step overhead ms",
            c.batch_overhead_ms,
            u.batch_overhead_ms,
        ),
    ] {
        s.push_str(&format!("{name:<28} {:>12} {:>14}\n", sig(f), sig(u)));
    }
    s
}

/// "ITL s": the fit's figures are in stored units.
fn unit_label(metric: FitMetric) -> String {
    format!("{} {}", metric.label(), metric.metric().stored_unit())
}

/// Four significant figures.
fn sig(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let digits = (3 - x.abs().max(1e-12).log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

fn percent(e: f64) -> String {
    if e.is_finite() {
        format!("{:+.1}%", e * 100.0)
    } else {
        "n/a".into()
    }
}

fn summary(e: &ErrorSummary) -> String {
    format!(
        "{}% / {}",
        format_number(e.median * 100.0),
        percent(e.worst)
    )
}
