//! `infermeter`: parse options, set up logging, dispatch. Behaviour lives in the folders, one
//! layer each: `commands/` (a file per subcommand, its options beside it) over `run/` (a
//! measuring run), `load/` (the load modes), `prompts/`, `http/` and `output/`; only
//! `commands/` and `cli` know the command line. No other crate links the collector (its tests
//! drive the binary).

mod cli;
mod commands;
mod http;
mod load;
mod output;
mod prompts;
mod run;
mod suite;

use std::process::ExitCode;

use clap::Parser;
use cli::{LogFormat, Opts};
use tracing_subscriber::EnvFilter;

fn init_logging(opts: &Opts) {
    let default = if opts.quiet { "warn" } else { "info" };
    let filter =
        EnvFilter::try_from_env("INFERMETER_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: logs piped to a file or CI stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match opts.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.with_target(false).init(),
    }
}

fn main() -> ExitCode {
    let opts = Opts::parse();
    init_logging(&opts);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let show_progress = !opts.quiet && opts.log_format == LogFormat::Text;
    let result = runtime.block_on(commands::dispatch(opts.command, show_progress));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
