//! `infermeter-dev`'s command line and its subcommands: what the project's developers run to
//! measure the meter itself (its timing error, its CPU and memory at scale) and to check the
//! simulator against the published figures. Apart from `infermeter` so that users' command list
//! holds only what they run; built from the same crate, so each measures the same code.

pub mod bench_client;
pub mod bench_soak;
pub mod bench_timing;
pub mod calibrate;
mod collector;
mod proc_stats;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli::{exit_code, Globals};
use bench_client::{BenchClientArgs, BenchFloorArgs};
use bench_soak::BenchSoakArgs;
use bench_timing::BenchTimingArgs;
use calibrate::CalibrateArgs;

/// The developers' commands; `infermeter-dev --help` lists them.
#[derive(Debug, Parser)]
#[command(
    name = "infermeter-dev",
    version,
    long_version = env!("INFERMETER_LONG_VERSION"),
    about = "Measure the meter: the collector's own timing error, CPU and memory, and the simulator against published figures"
)]
pub struct Opts {
    #[command(flatten)]
    pub globals: Globals,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
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
}

/// Runs the command; its exit code, or the error to print with its causes.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::BenchTiming(args) => {
            bench_timing::run(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchSoak(args) => Ok(exit_code(bench_soak::run(args).await?)),
        Command::BenchClient(args) => {
            bench_client::run(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchClientFloor(args) => {
            bench_client::floor(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate(args) => Ok(exit_code(calibrate::run(args).await?)),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn options_are_consistent() {
        Opts::command().debug_assert();
    }
}
