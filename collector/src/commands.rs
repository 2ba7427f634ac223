//! `infermeter`'s command line and its subcommands, one file each with its clap options beside
//! it; [`dispatch`] runs the one asked for. Everything below this folder takes plain values,
//! never clap types. The developers' commands (self-benchmarks, calibration) are `dev/`'s.

pub mod docs;
pub mod export;
pub mod fit;
pub mod import;
pub mod k8s;
pub mod merge;
pub mod run;
pub mod sim;
pub mod summary;
pub mod sweep;
pub mod view;

use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, Parser, Subcommand};

use crate::cli::{exit_code, Globals};
use docs::{CompletionsArgs, ManArgs};
use export::ExportArgs;
use fit::FitArgs;
use import::ImportArgs;
use k8s::K8sArgs;
use merge::MergeArgs;
use run::RunArgs;
use sim::SimArgs;
use summary::{SummaryArgs, ValidateArgs};
use sweep::{SweepArgs, WatchdogArgs};
use view::ViewArgs;

/// What users run; `infermeter --help` lists it.
#[derive(Debug, Parser)]
#[command(
    name = "infermeter",
    version,
    long_version = env!("INFERMETER_LONG_VERSION"),
    about = "Benchmark OpenAI-compatible LLM endpoints: how many users, how fast for each"
)]
pub struct Opts {
    #[command(flatten)]
    pub globals: Globals,
    #[command(subcommand)]
    pub command: Command,
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
    Sim(Box<SimArgs>),
    /// Fit the simulator's engine model to a measured report, print its error level by level
    /// (leave-one-level-out beside the uncalibrated profile) and store the fit in the report.
    Fit(FitArgs),
    /// Serve the viewer for one or more reports.
    View(ViewArgs),
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

/// Runs the command; its exit code, or the error to print with its causes.
pub async fn dispatch(command: Command, show_progress: bool) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(*args, show_progress).await,
        Command::Sweep(args) => sweep::run(*args, show_progress).await,
        Command::SweepWatchdog(args) => {
            sweep::watchdog(args).await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Summary(args) => summary::print(&args).map(|()| ExitCode::SUCCESS),
        Command::Validate(args) => Ok(exit_code(summary::validate(&args))),
        Command::Sim(args) => {
            infermeter_sim::run(args.config()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fit(args) => {
            println!("{}", fit::run(&args)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::View(args) => view::run(args).await.map(|()| ExitCode::SUCCESS),
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
            docs::write_completions(Opts::command(), args.shell, &mut std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => {
            match args.out_dir {
                Some(dir) => docs::write_man_pages(Opts::command(), &dir).with_context(|| {
                    format!("cannot write the manual pages into {}", dir.display())
                })?,
                None => docs::write_man_page(Opts::command(), &mut std::io::stdout())?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_consistent() {
        Opts::command().debug_assert();
    }

    /// Every subcommand's name as the user types it (`k8s-manifest`, not `K8sManifest`), but
    /// the hidden ones that only other commands start (`sweep-watchdog`).
    fn subcommands() -> Vec<String> {
        let names: Vec<String> = Opts::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_string())
            .collect();
        assert!(names.len() >= 9, "{names:?}");
        names
    }

    /// What users run, and only that: the developers' commands are `infermeter-dev`'s.
    #[test]
    fn the_command_list_is_what_users_run() {
        let users = [
            "run",
            "sweep",
            "merge",
            "k8s-manifest",
            "summary",
            "validate",
            "sim",
            "fit",
            "view",
            "export",
            "import",
            "completions",
            "man",
        ];
        assert_eq!(subcommands(), users);
    }

    #[test]
    fn completions_for_each_shell_name_every_subcommand() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut script = Vec::new();
            docs::write_completions(Opts::command(), shell, &mut script).unwrap();
            let script = String::from_utf8(script).unwrap();
            for name in subcommands() {
                assert!(script.contains(&name), "{shell}: no {name}");
            }
            // An option of a subcommand is completed too.
            assert!(script.contains("base-url"), "{shell}: no --base-url");
        }
    }

    #[test]
    fn man_page_lists_every_subcommand() {
        let mut page = Vec::new();
        docs::write_man_page(Opts::command(), &mut page).unwrap();
        // roff writes a hyphen as `\-`.
        let page = String::from_utf8(page).unwrap().replace("\\-", "-");
        assert!(page.contains(".TH infermeter 1"), "title line");
        for name in subcommands() {
            assert!(page.contains(&name), "no {name}");
        }
    }

    #[test]
    fn man_pages_go_one_per_subcommand_into_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("man1");
        docs::write_man_pages(Opts::command(), &out).unwrap();
        for name in subcommands() {
            let page = std::fs::read_to_string(out.join(format!("infermeter-{name}.1")))
                .unwrap_or_else(|e| panic!("infermeter-{name}.1: {e}"));
            assert!(page.contains(".SH NAME"), "{name}");
        }
        let main = std::fs::read_to_string(out.join("infermeter.1")).unwrap();
        assert!(
            main.contains("k8s\\-manifest"),
            "the main page lists the subcommands"
        );
    }
}
