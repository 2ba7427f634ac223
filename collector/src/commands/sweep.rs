//! `infermeter sweep`: one command measures every configuration of an engine's settings. For
//! each configuration of the grid (or list) it starts the server from a command template
//! (`{port}` a free port, `{name}` a parameter), waits until it is ready, measures the suite
//! with an ordinary run, and stops the server's whole process group; or, for a server started
//! by other means (`--base-url`), runs a hook between configurations. Every configuration
//! leaves a report naming its parameters (`metadata.configuration`) and a log; the folder's
//! `index.json` lists the reports (`view DIR`, `export DIR` open them compared) and how each
//! configuration ended, so `--resume` goes on where a sweep stopped.
//!
//! The plan (`plan`), the folder and index (`state`), the processes (`process`), and one
//! configuration's attempt (`attempt`) are below; this file holds the options and the loop.

mod attempt;
mod plan;
mod process;
mod state;
mod template;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use infermeter_report::index::{ConfigurationState, SweepConfiguration};
use infermeter_report::RunStatus;

use attempt::{free_port, Attempt, Ending, Signals, Step};
use plan::{SweepFlags, SweepPlan};
use state::{Start, SweepState};

#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// A sweep file (TOML: see collector/sweeps/), or `sim`: the built-in sweep of the
    /// simulator. The options below replace what it says.
    #[arg(long, value_name = "FILE|sim")]
    pub sweep: Option<String>,
    /// The server's command for each configuration, run by `sh -c` in a process group of its
    /// own: `{name}` is a parameter's value, `{port}` a free port, `{infermeter}` this binary.
    #[arg(long, value_name = "CMD")]
    pub serve: Option<String>,
    /// The address measured (default http://127.0.0.1:{port}). Without a server command: a
    /// server started by other means, measured as it is after the --hook.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Run before each configuration is measured (`sh -c`, placeholders filled), e.g. to roll
    /// the configuration out; a configuration whose hook fails is recorded as failed.
    #[arg(long, value_name = "CMD")]
    pub hook: Option<String>,
    /// A parameter and its values, every combination measured (repeatable): `mns=64,128,256`.
    #[arg(long = "param", value_name = "NAME=V1,V2")]
    pub params: Vec<String>,
    /// One configuration, instead of a grid (repeatable): `mns=64,tp=1`.
    #[arg(long = "configuration", value_name = "NAME=V,NAME=V")]
    pub configurations: Vec<String>,
    /// An environment variable of the server and hook (repeatable), placeholders filled:
    /// `CUDA_VISIBLE_DEVICES={gpus}`.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// The suite: a built-in name or a TOML file.
    #[arg(long)]
    pub suite: Option<String>,
    /// Where the reports, the servers' logs (logs/) and index.json go.
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
    /// The sweep's name (default: the file's `name`, else the folder's).
    #[arg(long)]
    pub name: Option<String>,
    /// The readiness check: a path on the server (`/health`) or a URL; ready when it answers
    /// 2xx. Default: `/models` of the API base (`/v1/models`).
    #[arg(long, value_name = "PATH|URL")]
    pub ready: Option<String>,
    /// Seconds a server (or hook) has to become ready (default 600).
    #[arg(long, value_name = "SECS")]
    pub ready_timeout: Option<f64>,
    /// Seconds a server has to exit after SIGTERM before SIGKILL (default 30).
    #[arg(long, value_name = "SECS")]
    pub stop_grace: Option<f64>,
    /// Continue the sweep in --out-dir: finished configurations are skipped, partial ones
    /// continued, failed ones tried again.
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// With --resume: go on although the serve command, parameters, suite or run options
    /// differ from the interrupted sweep's (its finished reports keep the old settings).
    #[arg(long, requires = "resume")]
    pub accept_changes: bool,
    /// Start over in an --out-dir that holds a sweep (its reports are overwritten).
    #[arg(long)]
    pub force: bool,
    /// `infermeter run` options for every configuration, after `--`, placeholders filled:
    /// `-- --quick --gpu-count {tp}`. They replace the sweep file's `run`.
    #[arg(last = true, value_name = "RUN OPTIONS")]
    pub run: Vec<String>,
}

/// The watchdog a sweep starts beside each server (hidden): stops the server's process group
/// when the sweep dies without stopping it.
#[derive(Debug, Clone, Args)]
pub struct WatchdogArgs {
    /// The sweep's process id (the watchdog's parent).
    #[arg(long)]
    pub sweep: u32,
    /// The server's process group.
    #[arg(long)]
    pub group: i32,
}

/// Runs the watchdog until the group is gone, or stops it once the sweep is.
pub async fn watchdog(args: WatchdogArgs) {
    process::watch(args.sweep, args.group).await;
}

impl SweepArgs {
    fn flags(self) -> SweepFlags {
        SweepFlags {
            sweep: self.sweep,
            name: self.name,
            serve: self.serve,
            base_url: self.base_url,
            hook: self.hook,
            params: self.params,
            configurations: self.configurations,
            env: self.env,
            suite: self.suite,
            ready: self.ready,
            ready_timeout_s: self.ready_timeout,
            stop_grace_s: self.stop_grace,
            run: self.run,
            out_dir: self.out_dir,
        }
    }
}

/// Runs the sweep; its exit code: 0 when every configuration is complete, 1 when one failed,
/// 128 + the signal's number when a signal stopped it.
pub async fn run(args: SweepArgs, show_progress: bool) -> anyhow::Result<ExitCode> {
    let start = Start {
        resume: args.resume,
        force: args.force,
        accept_changes: args.accept_changes,
    };
    let plan = SweepPlan::new(args.flags())?;
    let infermeter = std::env::current_exe()
        .map(|p| shell_word(&p.to_string_lossy()))
        .unwrap_or_else(|_| "infermeter".into());
    let sweep = Sweeper {
        plan: &plan,
        infermeter: &infermeter,
        show_progress,
    };
    sweep.check_run_options()?;
    process::become_subreaper();
    let mut state = SweepState::open(&plan, start)?;
    let signals = Signals::listen();
    let interrupted = sweep.each(&mut state, &signals).await?;
    println!("{}", summary(&state, &plan.name));
    Ok(match interrupted {
        Some(name) => ExitCode::from(crate::run::stop::exit_code(name)),
        None if state.configurations()[..plan.configurations.len()]
            .iter()
            .all(|c| c.state == ConfigurationState::Complete) =>
        {
            ExitCode::SUCCESS
        }
        None => ExitCode::FAILURE,
    })
}

/// A path as one word of a shell command.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,@".contains(c);
    if text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The sweep being run.
struct Sweeper<'a> {
    plan: &'a SweepPlan,
    infermeter: &'a str,
    show_progress: bool,
}

impl Sweeper<'_> {
    /// Configuration `i`'s attempt.
    fn attempt<'s>(
        &'s self,
        state: &SweepState,
        i: usize,
        port: u16,
        signals: &'s Signals,
    ) -> Attempt<'s> {
        Attempt {
            plan: self.plan,
            parameters: &self.plan.configurations[i],
            port,
            infermeter: self.infermeter,
            report: state.report_path(i),
            log: state.log_path(i),
            resume: state
                .report(i)
                .is_some_and(|r| matches!(r.status, RunStatus::Partial { .. })),
            signals,
            show_progress: self.show_progress,
        }
    }

    /// Every configuration's run options parse (and its suite loads) before any server starts.
    fn check_run_options(&self) -> anyhow::Result<()> {
        let signals = Signals::idle();
        for (i, parameters) in self.plan.configurations.iter().enumerate() {
            let attempt = Attempt {
                plan: self.plan,
                parameters,
                port: 0,
                infermeter: self.infermeter,
                report: self.plan.out_dir.join(format!("check-{i}.json")),
                log: self.plan.out_dir.join("check.log"),
                resume: false,
                signals: &signals,
                show_progress: false,
            };
            attempt
                .run_config()
                .map_err(|e| anyhow::anyhow!("configuration {parameters}: {e}"))?;
        }
        Ok(())
    }

    /// Measures each configuration not finished yet, in order, recording each ending; the
    /// signal that stopped the sweep, if one did.
    async fn each(
        &self,
        state: &mut SweepState,
        signals: &Signals,
    ) -> anyhow::Result<Option<&'static str>> {
        let total = self.plan.configurations.len();
        for i in 0..total {
            if let Some(name) = signals.fired() {
                return Ok(Some(name));
            }
            self.stop_left_over(state, i).await;
            if self.finished(state, i)? {
                continue;
            }
            tracing::info!(
                "sweep {}: configuration {} of {total}: {}",
                self.plan.name,
                i + 1,
                self.plan.configurations[i]
            );
            let ending = self.attempt_one(state, i, signals).await?;
            let interrupted = match &ending {
                Ending::Interrupted(name) => Some(*name),
                _ => None,
            };
            record(state, i, ending);
            state.save()?;
            if interrupted.is_some() {
                return Ok(interrupted);
            }
        }
        Ok(None)
    }

    /// Stops the server an interrupted sweep left running for configuration `i` (the index
    /// says `running` with its pid), before any other server starts.
    async fn stop_left_over(&self, state: &mut SweepState, i: usize) {
        let c = state.configuration(i);
        if c.state != ConfigurationState::Running {
            return;
        }
        let Some(pid) = c.server_pid else { return };
        let parameters = c.parameters.to_string();
        let grace = self.plan.stop_grace;
        if process::stop_left_over(pid as i32, &self.plan.out_dir, grace).await {
            tracing::warn!(
                "sweep: stopped the server of {parameters} (process group {pid}) that an interrupted sweep left running"
            );
        }
    }

    /// Whether configuration `i` needs no attempt: complete, its report there and complete.
    /// (A sweep killed between a run's end and the index's update left it `running`.)
    fn finished(&self, state: &mut SweepState, i: usize) -> anyhow::Result<bool> {
        let complete = state
            .report(i)
            .is_some_and(|r| r.status == RunStatus::Complete);
        let c = state.configuration(i);
        if !complete {
            return Ok(false);
        }
        tracing::info!("sweep: {} is measured already: skipped", c.parameters);
        if c.state != ConfigurationState::Complete {
            c.state = ConfigurationState::Complete;
            c.failure = None;
            state.refresh_entry(i);
            state.save()?;
        }
        Ok(true)
    }

    /// Starts configuration `i` (marked running in the index, with its port and server pid).
    async fn attempt_one(
        &self,
        state: &mut SweepState,
        i: usize,
        signals: &Signals,
    ) -> anyhow::Result<Ending> {
        let port = free_port()?;
        let c = state.configuration(i);
        c.state = ConfigurationState::Running;
        c.port = Some(port);
        c.started_at = Some(chrono::Utc::now().to_rfc3339());
        (c.finished_at, c.failure, c.server_pid, c.ready_s) = (None, None, None, None);
        state.save()?;
        let attempt = self.attempt(state, i, port, signals);
        let mut step = |step| {
            let c = state.configuration(i);
            match step {
                Step::Started(pid) => c.server_pid = Some(pid),
                Step::Ready(s) => c.ready_s = Some((s * 1000.0).round() / 1000.0),
            }
            if let Err(e) = state.save() {
                tracing::warn!("{e:#}");
            }
        };
        let ending = match self.plan.serve {
            Some(_) => attempt.serve(&mut step).await,
            None => attempt.hooked(&mut step).await,
        };
        state.configuration(i).finished_at = Some(chrono::Utc::now().to_rfc3339());
        Ok(ending)
    }
}

/// Writes an attempt's ending into the configuration's state.
fn record(state: &mut SweepState, i: usize, ending: Ending) {
    let c: &mut SweepConfiguration = state.configuration(i);
    match ending {
        Ending::Complete => c.state = ConfigurationState::Complete,
        Ending::Interrupted(_) => c.state = ConfigurationState::Interrupted,
        Ending::Failed(failure) => {
            tracing::warn!(
                "sweep: {} failed ({:?}): {}",
                c.parameters,
                failure.stage,
                failure.reason
            );
            c.state = ConfigurationState::Failed;
            c.failure = Some(failure);
        }
    }
    state.refresh_entry(i);
}

/// What the sweep did, a line per configuration, and how to compare them.
fn summary(state: &SweepState, name: &str) -> String {
    let configurations = state.configurations();
    let count = |s: ConfigurationState| configurations.iter().filter(|c| c.state == s).count();
    let mut text = format!(
        "Sweep {name}: {} configurations, {} complete, {} failed, {} interrupted, {} not run ({})\n",
        configurations.len(),
        count(ConfigurationState::Complete),
        count(ConfigurationState::Failed),
        count(ConfigurationState::Interrupted),
        count(ConfigurationState::Pending),
        state.index_path().display(),
    );
    let width = configurations
        .iter()
        .map(|c| c.parameters.to_string().len())
        .max()
        .unwrap_or(0);
    for c in configurations {
        let state_name = format!("{:?}", c.state).to_lowercase();
        let detail = match (&c.failure, c.state) {
            (Some(f), _) => format!("{} (log: {})", f.reason, state.dir().join(&c.log).display()),
            (None, ConfigurationState::Pending) => "not measured yet: --resume measures it".into(),
            (None, _) => state.dir().join(&c.report).display().to_string(),
        };
        text.push_str(&format!(
            "  {:<11} {:<width$}  {detail}\n",
            state_name,
            c.parameters.to_string()
        ));
    }
    if !state.has_reports() {
        return text;
    }
    let dir = state.dir().display();
    text.push_str(&format!(
        "Compare them: infermeter view {dir}   (rank them: infermeter summary {dir}; one file to share: infermeter export {dir})"
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_one_shell_word() {
        assert_eq!(shell_word("/usr/bin/infermeter"), "/usr/bin/infermeter");
        assert_eq!(shell_word("/a b/it's"), r"'/a b/it'\''s'");
    }
}
