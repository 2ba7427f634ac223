//! `infermeter`: parse options, set up logging, dispatch. Behaviour lives in the modules, one
//! concern each; none is public, since no other crate links the collector (its tests drive the
//! binary).

// Commands, one module each (`dispatch` calls them); `cli` holds their options.
mod bench_client;
mod bench_soak;
mod bench_timing;
mod calibrate;
mod cli;
mod cli_docs;
mod export;
mod k8s;
mod merge;
mod run;
mod summary;
// `pub` only because `RunningView::addr` is read by view's own tests alone: in a private
// module it would count as dead code.
pub mod view;
// Where `view` and `export` find the built viewer and the reports they show.
mod report_files;
mod viewer_files;

// What a run is made of: the suite and its prompts, the engine adapters, the request driver
// and its clock, the load scheduler, and what becomes of each request.
mod adapters;
mod arrival;
mod base_url;
mod connection_log;
mod dispatch;
mod driver;
mod endpoint;
mod heap;
mod output;
mod progress;
mod prompt;
mod prompt_plan;
mod records;
mod scheduler;
mod shard;
mod slo_spec;
mod sse;
mod suite;
mod transport;
// Multi-turn sessions (the conversations and the users who hold them) and trace replay.
mod session;
mod trace;
mod users;

// Side channels sampled during each level.
mod power;
mod scrape;

#[cfg(test)]
mod test_server;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use cli::{Command, LogFormat, Opts};
use run::RunEnd;
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

/// Runs the command; its exit code, or the error to print with its causes.
async fn dispatch(command: Command, show_progress: bool) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => match run::run(*args, show_progress).await? {
            RunEnd::Complete => Ok(ExitCode::SUCCESS),
            // 128 + signal number, as shells report it.
            RunEnd::Interrupted("SIGTERM") => Ok(ExitCode::from(143)),
            RunEnd::Interrupted(_) => Ok(ExitCode::from(130)),
        },
        Command::Summary(args) => {
            let report = summary::read_report(&args.report).map_err(anyhow::Error::msg)?;
            println!("{}", summary::summary(&report, &args));
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate(args) => match summary::read_report(&args.report) {
            Ok(report) => {
                println!(
                    "{} is a valid report (schema {}, {} series)",
                    args.report.display(),
                    report.schema_version,
                    report.series.len()
                );
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Ok(ExitCode::FAILURE)
            }
        },
        Command::Sim(args) => {
            infermeter_sim::run(*args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::View(args) => view::run(args).await.map(|()| ExitCode::SUCCESS),
        Command::BenchSoak(args) => match bench_soak::run(args).await? {
            true => Ok(ExitCode::SUCCESS),
            false => Ok(ExitCode::FAILURE),
        },
        Command::BenchClient(args) => {
            bench_client::run(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchClientFloor(args) => {
            bench_client::floor(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::BenchTiming(args) => {
            bench_timing::run(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge(args) => {
            println!("{}", merge::merge(&args)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::K8sManifest(args) => {
            println!("{}", k8s::write(&args)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Export(args) => {
            println!("{}", export::export(&args)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => {
            cli_docs::write_completions(args.shell, &mut std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => {
            match args.out_dir {
                Some(dir) => cli_docs::write_man_pages(&dir).with_context(|| {
                    format!("cannot write the manual pages into {}", dir.display())
                })?,
                None => cli_docs::write_man_page(&mut std::io::stdout())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate(args) => match calibrate::run(args).await? {
            true => Ok(ExitCode::SUCCESS),
            false => Ok(ExitCode::FAILURE),
        },
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
    let result = runtime.block_on(dispatch(opts.command, show_progress));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
