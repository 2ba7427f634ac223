//! `infermeter`: parse options, set up logging, dispatch. Behaviour lives in the library.

use std::process::ExitCode;

use clap::Parser;
use infermeter::cli::{Command, LogFormat, Opts};
use infermeter::run::RunEnd;
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
    let result = runtime.block_on(async move {
        match opts.command {
            Command::Run(args) => match infermeter::run::run(*args, show_progress).await? {
                RunEnd::Complete => Ok(ExitCode::SUCCESS),
                // 128 + signal number, as shells report it.
                RunEnd::Interrupted("SIGTERM") => Ok(ExitCode::from(143)),
                RunEnd::Interrupted(_) => Ok(ExitCode::from(130)),
            },
            Command::Summary(args) => {
                let report =
                    infermeter::summary::read_report(&args.report).map_err(anyhow::Error::msg)?;
                println!("{}", infermeter::summary::summary(&report, &args));
                Ok(ExitCode::SUCCESS)
            }
            Command::Validate(args) => match infermeter::summary::read_report(&args.report) {
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
            Command::Sim(args) => infermeter_sim::run(*args).await.map(|()| ExitCode::SUCCESS),
            Command::View(args) => infermeter::view::run(args)
                .await
                .map(|()| ExitCode::SUCCESS),
            Command::BenchTiming(args) => infermeter::bench_timing::run(args)
                .await
                .map(|_| ExitCode::SUCCESS),
            Command::Calibrate(args) => infermeter::calibrate::run(args).await.map(|ok| {
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
