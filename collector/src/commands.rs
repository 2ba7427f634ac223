//! The subcommands, one file each with its clap options beside it; [`dispatch`] runs the one
//! asked for. Everything below this folder takes plain values, never clap types.

pub mod bench_client;
pub mod bench_soak;
pub mod bench_timing;
pub mod calibrate;
pub mod docs;
pub mod export;
pub mod fit;
pub mod import;
pub mod k8s;
pub mod merge;
pub mod run;
pub mod summary;
pub mod sweep;
pub mod view;

use std::process::ExitCode;

use anyhow::Context;

use crate::cli::Command;

/// Runs the command; its exit code, or the error to print with its causes.
pub async fn dispatch(command: Command, show_progress: bool) -> anyhow::Result<ExitCode> {
    let done = |ok: bool| {
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    };
    match command {
        Command::Run(args) => run::run(*args, show_progress).await,
        Command::Sweep(args) => sweep::run(*args, show_progress).await,
        Command::SweepWatchdog(args) => {
            sweep::watchdog(args).await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Summary(args) => summary::print(&args).map(|()| ExitCode::SUCCESS),
        Command::Validate(args) => Ok(done(summary::validate(&args))),
        Command::Sim(args) => {
            infermeter_sim::run(*args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fit(args) => {
            println!("{}", fit::run(&args)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::View(args) => view::run(args).await.map(|()| ExitCode::SUCCESS),
        Command::BenchSoak(args) => Ok(done(bench_soak::run(args).await?)),
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
        Command::Import(args) => {
            println!("{}", import::run(&args)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => {
            docs::write_completions(args.shell, &mut std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => {
            match args.out_dir {
                Some(dir) => docs::write_man_pages(&dir).with_context(|| {
                    format!("cannot write the manual pages into {}", dir.display())
                })?,
                None => docs::write_man_page(&mut std::io::stdout())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate(args) => Ok(done(calibrate::run(args).await?)),
    }
}
