//! The command line: the global options and the subcommands (clap derive). Each subcommand's
//! options live beside it in `commands/`; parsing only, no behaviour lives here.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};

use crate::commands::{
    bench_client::BenchClientArgs, bench_client::BenchFloorArgs, bench_soak::BenchSoakArgs,
    bench_timing::BenchTimingArgs, calibrate::CalibrateArgs, docs::CompletionsArgs, docs::ManArgs,
    export::ExportArgs, fit::FitArgs, import::ImportArgs, k8s::K8sArgs, merge::MergeArgs,
    run::RunArgs, summary::SummaryArgs, summary::ValidateArgs, sweep::SweepArgs,
    sweep::WatchdogArgs, view::ViewArgs,
};

#[derive(Debug, Parser)]
#[command(
    name = "infermeter",
    version,
    long_version = env!("INFERMETER_LONG_VERSION"),
    about = "Benchmark OpenAI-compatible LLM endpoints: how many users, how fast for each"
)]
pub struct Opts {
    /// No progress bars; only warnings and errors are logged.
    #[arg(long, global = true)]
    pub quiet: bool,
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a benchmark suite against an endpoint and write a report.
    Run(Box<RunArgs>),
    /// Measure every configuration of an engine's settings: start the server of each (or run a
    /// hook), wait until ready, run the suite, stop it; a report per configuration and an
    /// index, compared by `view DIR`.
    Sweep(Box<SweepArgs>),
    /// Stops a sweep's server when the sweep dies (started by `sweep`).
    #[command(hide = true)]
    SweepWatchdog(WatchdogArgs),
    /// Merge the reports of a sharded run's shards (`run --shard I/N`) into one, every level
    /// rebuilt from all their records.
    Merge(MergeArgs),
    /// Write the Kubernetes manifests of a sharded run (an Indexed Job of N shards, a results
    /// volume, the merge Job), its start time computed once.
    K8sManifest(K8sArgs),
    /// Print the highlight figures of a report.
    Summary(SummaryArgs),
    /// Check a report file and explain any problem (exit 1 on problems).
    Validate(ValidateArgs),
    /// Run the simulated inference engine.
    Sim(Box<infermeter_sim::SimArgs>),
    /// Fit the simulator's engine model to a measured report, print its error level by level
    /// (leave-one-level-out beside the uncalibrated profile) and store the fit in the report.
    Fit(FitArgs),
    /// Serve the viewer for one or more reports.
    View(ViewArgs),
    /// Measure the collector's own timing error against the simulator's send timestamps.
    BenchTiming(BenchTimingArgs),
    /// Run thousands of streams against the simulator for minutes, print the collector's memory
    /// every few seconds, then kill it mid-level and check that its records and partial report
    /// load (exit 1 if not, or if memory grew over 5% after the first minute).
    BenchSoak(BenchSoakArgs),
    /// Measure the collector's CPU per streamed token, syscalls, context switches and memory at
    /// 64, 256 and 1,000 streams, beside a bare reader of the same streams (the floor).
    BenchClient(BenchClientArgs),
    /// The floor client `bench-client` measures (started by it).
    #[command(hide = true)]
    BenchClientFloor(BenchFloorArgs),
    /// Measure the simulator's calibration figures in real time and compare them with the
    /// published reference reports (exit 1 if any is off by more than 15%).
    Calibrate(CalibrateArgs),
    /// Write one HTML file holding the viewer and the reports, that opens anywhere, offline.
    Export(ExportArgs),
    /// Read the result files of vLLM bench serve, AIPerf, guidellm or inference-perf into a
    /// report (`view`, `export` and `summary` take such files directly too).
    Import(ImportArgs),
    /// Print a shell completion script (see the README for where it goes).
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `infermeter man | man -l -`.
    Man(ManArgs),
}

/// A positive, finite number of `unit`: the parser behind the options that take a duration or
/// a speed.
pub fn positive(text: &str, unit: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("\"{text}\" is not a positive number of {unit}")),
    }
}

/// A value parser for one of `all`, spelt as `name` gives (and explained by `help`, in
/// `--help`): the enums below the command line name their own values, so the options that
/// take them (`--modes`, `--api`, `--engine`, `--connection-reuse`) derive from them.
pub fn choice<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    help: fn(T) -> Option<&'static str>,
) -> impl TypedValueParser<Value = T> {
    let values = all.iter().map(move |&v| {
        let value = PossibleValue::new(name(v));
        match help(v) {
            Some(text) => value.help(text),
            None => value,
        }
    });
    PossibleValuesParser::new(values).map(move |text: String| {
        *all.iter()
            .find(|&&v| name(v) == text)
            .expect("clap admits only the possible values")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn options_are_consistent() {
        Opts::command().debug_assert();
    }
}
