//! `infermeter-dev calibrate`: the simulator's calibration table measured for real. Each reference
//! workload (`infermeter_sim::calibration::REFERENCES`) gets its own in-process simulator and an
//! ordinary `infermeter run` (peak mode, only the levels its figures need); the figures are read
//! back from the written reports and set beside the published ones and the virtual-time
//! prediction (`infermeter_sim::calibration_table`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use infermeter_report::{load_report, LoadError, LoadMode, Report};
use infermeter_sim::calibration::{requests_per_slot, LevelResult, Reference, REFERENCES};
use infermeter_sim::{CalibrationRow, SimError};

use crate::http::adapters::EngineKind;
use crate::http::transport::error_chain;
use crate::run::power::PowerSource;
use crate::run::{RunConfig, RunEnd, RunError};
use crate::suite::{Suite, SuiteError};

#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    /// One request per slot and no workload of over 100K input tokens (about a minute).
    #[arg(long)]
    pub quick: bool,
    /// Where the runs' reports go (default: infermeter-calibrate in the temp directory).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Why a workload could not be measured, or the calibration not run.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("cannot create {}", .path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}", .path.display())]
    WriteSuite {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error("cannot start the simulator")]
    Sim(#[source] SimError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("{setup}: the run was interrupted")]
    Interrupted { setup: String },
    #[error("cannot read {}", .path.display())]
    ReadReport {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a usable report", .path.display())]
    BadReport { path: PathBuf, source: LoadError },
    #[error("the virtual-time prediction failed")]
    Prediction(#[source] tokio::task::JoinError),
}

/// Largest deviation from a published figure that still counts as calibrated.
pub const TOLERANCE: f64 = 0.15;

/// `--quick` leaves out workloads longer than this many input tokens (minutes per request).
const QUICK_MAX_INPUT_TOKENS: u32 = 100_000;

/// One workload to measure: a deployment, a request shape and the peak levels its figures need.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub reference: Reference,
    pub levels: Vec<u32>,
}

/// The workloads behind [`REFERENCES`], each once, with the union of the levels their figures need.
pub fn plans(quick: bool) -> Vec<Plan> {
    let mut plans: Vec<Plan> = Vec::new();
    for r in REFERENCES
        .iter()
        .filter(|r| !quick || r.input_tokens <= QUICK_MAX_INPUT_TOKENS)
    {
        let at = match plans.iter().position(|p| p.reference.same_workload(r)) {
            Some(i) => i,
            None => {
                plans.push(Plan {
                    reference: *r,
                    levels: Vec::new(),
                });
                plans.len() - 1
            }
        };
        plans[at].levels.extend(r.levels_needed());
        plans[at].levels.sort_unstable();
        plans[at].levels.dedup();
    }
    plans
}

/// A one-scenario suite for `plan` (TOML, as `--suite FILE` reads it).
fn suite_toml(plan: &Plan, quick: bool) -> String {
    let r = &plan.reference;
    // The same count the virtual-time prediction measures (its steady-state window).
    let per_slot = if quick {
        1
    } else {
        requests_per_slot(r.input_tokens)
    };
    let levels: Vec<String> = plan.levels.iter().map(u32::to_string).collect();
    format!(
        "name = \"calibrate\"\nwarmup = 0\n\n[[scenario]]\nid = \"calibrate\"\nname = \"{setup}\"\n\
         input_tokens = {input}\noutput_tokens = {output}\n\n[peak]\nlevels = [{levels}]\n\
         requests_per_slot = {per_slot}\nmin_seconds = 0\n",
        setup = r.setup,
        input = r.input_tokens,
        output = r.output_tokens,
        levels = levels.join(", "),
    )
}

/// Per-level figures of a report's peak series (mean per-user decode and TTFT).
pub fn levels_of(report: &Report) -> Vec<LevelResult> {
    report
        .series
        .iter()
        .filter(|s| s.mode == LoadMode::Peak)
        .flat_map(|s| &s.levels)
        .filter_map(|l| {
            Some(LevelResult {
                concurrency: l.concurrency,
                decode_tps: l.metrics.decode_tok_s.as_ref()?.mean,
                ttft: l.metrics.ttft_s.as_ref()?.mean,
            })
        })
        .collect()
}

/// Measures one workload: a simulator of its deployment on its own runtime (so the simulated
/// engine's timers never queue behind the client's work), and `infermeter run` against it.
async fn measure(plan: &Plan, dir: &Path, quick: bool) -> Result<Vec<LevelResult>, CalibrateError> {
    let r = &plan.reference;
    let d = r.deployment;
    let name = format!(
        "{}-{}x{}-{}-{}",
        d.model, d.gpus, d.gpu, r.input_tokens, r.output_tokens
    );
    let suite = dir.join(format!("{name}.suite.toml"));
    std::fs::write(&suite, suite_toml(plan, quick)).map_err(|source| {
        CalibrateError::WriteSuite {
            path: suite.clone(),
            source,
        }
    })?;
    let out = dir.join(format!("{name}.json"));
    let sim_config = infermeter_sim::SimConfig {
        listen: "127.0.0.1:0".parse().expect("literal address"),
        model: d.model.into(),
        gpu: d.gpu.into(),
        gpus: d.gpus,
        ..infermeter_sim::SimConfig::default()
    };
    let sim = infermeter_sim::ThreadedSim::start(sim_config, false)
        .await
        .map_err(CalibrateError::Sim)?;
    let base_url = sim.base_url().to_string();
    // An ordinary run, with the settings `infermeter run --force --power none --engine sim`
    // would give it.
    let suite = Suite::load(&suite.to_string_lossy())?;
    let mut config = RunConfig {
        force: true,
        power: PowerSource::None,
        ..RunConfig::new(base_url, suite, out.clone())
    };
    config.server.engine = EngineKind::Sim;
    let end = crate::run::run(config).await;
    sim.stop();
    if end? != RunEnd::Complete {
        return Err(CalibrateError::Interrupted {
            setup: r.setup.into(),
        });
    }
    let text = std::fs::read_to_string(&out).map_err(|source| CalibrateError::ReadReport {
        path: out.clone(),
        source,
    })?;
    let report =
        load_report(&text).map_err(|source| CalibrateError::BadReport { path: out, source })?;
    Ok(levels_of(&report))
}

/// One printed row.
#[derive(Debug, Clone)]
pub struct MeasuredRow {
    pub reference: Reference,
    /// `None` when not measured (left out by `--quick`, or its level failed).
    pub measured: Option<f64>,
    pub virtual_time: Option<f64>,
}

impl MeasuredRow {
    pub fn error(&self) -> Option<f64> {
        self.measured.map(|m| m / self.reference.value - 1.0)
    }

    pub fn within_tolerance(&self) -> bool {
        self.error().is_some_and(|e| e.abs() <= TOLERANCE)
    }
}

/// About four significant digits.
fn figure(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.1}"),
        a if a >= 1.0 => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}

/// The table as text.
pub fn table(rows: &[MeasuredRow]) -> String {
    let mut out = format!(
        "{:<48} {:<36} {:>9} {:>9} {:>7} {:>9} {:>7}\n",
        "setup", "figure", "reference", "measured", "diff", "virtual", "diff"
    );
    let pct = |e: Option<f64>| e.map_or("-".into(), |e| format!("{:+.1}%", 100.0 * e));
    for r in rows {
        let reference = r.reference.value;
        out.push_str(&format!(
            "{:<48} {:<36} {:>9} {:>9} {:>7} {:>9} {:>7}\n",
            r.reference.setup,
            r.reference.figure_label(),
            figure(reference),
            r.measured.map_or("-".into(), figure),
            pct(r.error()),
            r.virtual_time.map_or("-".into(), figure),
            pct(r.virtual_time.map(|v| v / reference - 1.0)),
        ));
    }
    out
}

/// Runs every workload concurrently (they are independent simulators that mostly sleep), prints
/// the table and returns whether every measured figure is within [`TOLERANCE`].
pub async fn run(args: CalibrateArgs) -> Result<bool, CalibrateError> {
    let started = Instant::now();
    let dir: PathBuf = args
        .out_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("infermeter-calibrate"));
    std::fs::create_dir_all(&dir).map_err(|source| CalibrateError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let plans = plans(args.quick);
    eprintln!(
        "infermeter-dev calibrate: {} workloads in parallel on in-process simulators; reports in {}",
        plans.len(),
        dir.display()
    );
    let predicted: Vec<CalibrationRow> =
        tokio::task::spawn_blocking(infermeter_sim::calibration_table)
            .await
            .map_err(CalibrateError::Prediction)?;
    let (dir, quick) = (&dir, args.quick);
    let measured = futures::future::join_all(
        plans
            .iter()
            .map(|plan| async move { (plan, measure(plan, dir, quick).await) }),
    )
    .await;
    let mut rows = Vec::new();
    for r in &REFERENCES {
        let levels = measured
            .iter()
            .find(|(plan, _)| plan.reference.same_workload(r));
        let value = match levels {
            Some((_, Ok(levels))) => r.value(levels),
            Some((_, Err(e))) => {
                eprintln!("{}: {}", r.setup, error_chain(e));
                None
            }
            None => None,
        };
        rows.push(MeasuredRow {
            reference: *r,
            measured: value,
            virtual_time: predicted
                .iter()
                .find(|p| p.reference == *r)
                .map(|p| p.simulated),
        });
    }
    println!("{}", table(&rows));
    let considered: Vec<&MeasuredRow> = rows
        .iter()
        .filter(|r| !args.quick || r.reference.input_tokens <= QUICK_MAX_INPUT_TOKENS)
        .collect();
    let ok = considered.iter().all(|r| r.within_tolerance());
    println!(
        "{} of {} figures within ±{:.0}% of the reference (measured in real time through the collector; \
         virtual = the simulator's virtual-clock prediction); {:.0} s",
        considered.iter().filter(|r| r.within_tolerance()).count(),
        considered.len(),
        100.0 * TOLERANCE,
        started.elapsed().as_secs_f64()
    );
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_workload_is_measured_once_with_the_levels_it_needs() {
        let all = plans(false);
        assert_eq!(all.len(), 6);
        let coder = all
            .iter()
            .find(|p| p.reference.deployment.model == "qwen3-coder-30b-a3b")
            .unwrap();
        assert_eq!(coder.levels, [1, 8, 24, 32]);
        assert!(REFERENCES
            .iter()
            .all(|r| all.iter().any(|p| p.reference.same_workload(r)
                && r.levels_needed().iter().all(|n| p.levels.contains(n)))));
        assert!(plans(true)
            .iter()
            .all(|p| p.reference.input_tokens <= QUICK_MAX_INPUT_TOKENS));
    }

    #[test]
    fn suite_file_parses_as_a_suite() {
        let plan = &plans(false)[0];
        let path =
            std::env::temp_dir().join(format!("calibrate-suite-{}.toml", std::process::id()));
        std::fs::write(&path, suite_toml(plan, false)).unwrap();
        let suite = crate::suite::Suite::load(path.to_str().unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(suite.peak.unwrap().levels, plan.levels);
        assert_eq!(suite.scenarios[0].input_tokens, plan.reference.input_tokens);
        assert_eq!(suite.warmup, 0);
    }

    #[test]
    fn a_row_outside_tolerance_or_unmeasured_fails() {
        let row = |measured| MeasuredRow {
            reference: REFERENCES[0],
            measured,
            virtual_time: None,
        };
        let v = REFERENCES[0].value;
        assert!(row(Some(v * 1.1)).within_tolerance());
        assert!(!row(Some(v * 1.2)).within_tolerance());
        assert!(!row(None).within_tolerance());
        assert!(table(&[row(None)]).contains(" - "));
    }
}
