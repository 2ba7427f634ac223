//! The collector, behind two binaries: `infermeter` (what users run, [`infermeter`]) and
//! `infermeter-dev` (the developers' self-benchmarks and calibration, [`infermeter_dev`]),
//! each a one-line `main` over this library. Behaviour lives in the folders, one layer each:
//! `commands/` (a file per `infermeter` subcommand, its options beside it) and `dev/` (the same
//! for `infermeter-dev`) over `cli` (the options both share), `run/` (a measuring run), `load/`
//! (the load modes), `prompts/`, `http/` and `output/`; only `commands/`, `dev/` and `cli` know
//! the command line. Nothing else links this library: it exports only the two entry points (its
//! tests drive the binaries).

mod cli;
mod commands;
mod dev;
mod http;
mod load;
mod output;
mod prompts;
mod run;
mod suite;

use std::future::Future;
use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use cli::{Globals, LogFormat};

/// `infermeter`: parse options, set up logging, run the subcommand.
pub fn infermeter() -> ExitCode {
    let opts = commands::Opts::parse();
    let show_progress = opts.globals.show_progress();
    execute(
        &opts.globals,
        commands::dispatch(opts.command, show_progress),
    )
}

/// `infermeter-dev`: parse options, set up logging, run the subcommand.
pub fn infermeter_dev() -> ExitCode {
    let opts = dev::Opts::parse();
    execute(&opts.globals, dev::dispatch(opts.command))
}

/// Logs as `globals` ask, runs `command` to its end on a runtime, prints its error if any.
fn execute(globals: &Globals, command: impl Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    init_logging(globals);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(globals: &Globals) {
    let default = if globals.quiet { "warn" } else { "info" };
    let filter =
        EnvFilter::try_from_env("INFERMETER_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: logs piped to a file or CI stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match globals.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.with_target(false).init(),
    }
}
