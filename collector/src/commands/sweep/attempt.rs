//! One configuration of a sweep, measured once: its server started (or its hook run), the
//! readiness check waited for, the suite measured by an ordinary run with the configuration's
//! `RunConfig`, the server stopped. How it ended is an [`Ending`]; the sweep records it.

use std::net::TcpListener;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use clap::Parser;
use infermeter_report::index::{Failure, FailureStage};
use infermeter_report::{Configuration, Parameters};
use reqwest::Url;
use tokio::sync::watch;

use super::plan::SweepPlan;
use super::process::{describe, marker_dir, Group, Stopped, SWEEP_DIR_VAR};
use super::template::Template;
use crate::commands::run::RunArgs;
use crate::http::base_url::BaseUrl;
use crate::http::transport::error_chain;
use crate::run::stop::{wait_for_signal, StopRequest};
use crate::run::{RunConfig, RunEnd, RunError};

/// How a configuration's attempt ended.
#[derive(Debug)]
pub enum Ending {
    Complete,
    Failed(Failure),
    /// A signal stopped the sweep (its name).
    Interrupted(&'static str),
}

/// Ctrl-C and SIGTERM, as the sweep sees them (a run inside it sees them too).
#[derive(Clone)]
pub struct Signals(watch::Receiver<Option<&'static str>>);

impl Signals {
    pub fn listen() -> Signals {
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let _ = tx.send(Some(wait_for_signal().await));
        });
        Signals(rx)
    }

    /// Signals that never come (for checking a plan).
    pub fn idle() -> Signals {
        Signals(watch::channel(None).1)
    }

    /// The signal, once one came.
    pub fn fired(&self) -> Option<&'static str> {
        *self.0.borrow()
    }

    async fn wait(&self) -> &'static str {
        let mut rx = self.0.clone();
        let name = rx.wait_for(Option::is_some).await.ok().and_then(|n| *n);
        match name {
            Some(name) => name,
            None => std::future::pending().await,
        }
    }
}

/// `infermeter run`'s options, parsed as the command line would parse them.
#[derive(Debug, Parser)]
#[command(name = "infermeter sweep's run options", no_binary_name = true)]
struct RunLine {
    #[command(flatten)]
    run: RunArgs,
}

/// A free port on loopback for a server to listen on.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One configuration and what its attempt is given.
pub struct Attempt<'a> {
    pub plan: &'a SweepPlan,
    pub parameters: &'a Parameters,
    pub port: u16,
    /// This binary, for `{infermeter}`.
    pub infermeter: &'a str,
    pub report: std::path::PathBuf,
    pub log: std::path::PathBuf,
    /// Continue the configuration's partial report (else start it afresh).
    pub resume: bool,
    pub signals: &'a Signals,
    pub show_progress: bool,
}

/// What an attempt reports while it goes on, for the index.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// The server started: its process id.
    Started(u32),
    /// It answered the readiness check after this many seconds.
    Ready(f64),
}

/// Why the readiness check ended.
enum Readiness {
    Ready(Duration),
    Exited(ExitStatus),
    TimedOut(String),
    Signal(&'static str),
}

fn failure(stage: FailureStage, reason: String, tail: Vec<String>) -> Failure {
    Failure {
        stage,
        reason,
        log_tail: tail,
        ..Failure::default()
    }
}

/// A failure of a process that exited: the reason, its status and log tail.
fn exit_failure(stage: FailureStage, what: String, status: ExitStatus, group: &Group) -> Failure {
    let (words, exit_code, exit_signal) = describe(status);
    Failure {
        stage,
        reason: what.replace("{exit}", &words),
        exit_code,
        exit_signal,
        log_tail: group.log_tail(),
    }
}

impl Attempt<'_> {
    /// A template with this configuration's values.
    pub fn fill(&self, template: &Template) -> String {
        let port = self.port.to_string();
        template.fill(|name| match name {
            "port" => Some(port.as_str()),
            "infermeter" => Some(self.infermeter),
            _ => self.parameters.get(name),
        })
    }

    /// The server's (and hook's) environment besides the sweep's own.
    /// The plan's environment, filled, and the sweep's marker ([`SWEEP_DIR_VAR`]).
    fn env(&self) -> Vec<(String, String)> {
        let env = self.plan.env.iter();
        let mut env: Vec<(String, String)> = env.map(|(k, t)| (k.clone(), self.fill(t))).collect();
        let dir = marker_dir(&self.plan.out_dir);
        env.push((SWEEP_DIR_VAR.into(), dir.display().to_string()));
        env
    }

    fn base_url(&self) -> String {
        self.fill(&self.plan.base_url)
    }

    /// The readiness check's URL: the plan's (a path goes on the base URL's host), else the
    /// API base's `/models`.
    fn ready_url(&self) -> String {
        let base = self.base_url();
        match self.plan.ready.as_ref().map(|t| self.fill(t)) {
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => url,
            Some(path) => match Url::parse(&base) {
                Ok(mut url) => {
                    url.set_path(&path);
                    url.to_string()
                }
                Err(_) => format!("{base}{path}"),
            },
            None => match BaseUrl::parse(&base) {
                Ok(parsed) => format!("{}/models", parsed.candidates()[0]),
                Err(_) => format!("{base}/v1/models"),
            },
        }
    }

    /// The configuration's run: the run options filled, with the sweep's base URL, report,
    /// suite and title, parsed as `infermeter run` parses them.
    pub fn run_config(&self) -> Result<RunConfig, String> {
        let report = self.report.to_string_lossy().into_owned();
        let mut line = vec![
            "--base-url".to_string(),
            self.base_url(),
            "--out".into(),
            report,
        ];
        line.push(if self.resume { "--resume" } else { "--force" }.into());
        if let Some(suite) = &self.plan.suite {
            line.extend(["--suite".to_string(), suite.clone()]);
        }
        let options: Vec<String> = self.plan.run_options.iter().map(|t| self.fill(t)).collect();
        if !options
            .iter()
            .any(|o| o == "--title" || o.starts_with("--title="))
        {
            let title = format!("{}: {}", self.plan.name, self.parameters);
            line.extend(["--title".to_string(), title]);
        }
        line.extend(options);
        let parsed = RunLine::try_parse_from(&line).map_err(|e| {
            // clap's message up to its usage line, on one line: "the following required
            // arguments were not provided: --suite <SUITE>".
            let text = e.to_string();
            let words: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let words = words.join(" ");
            format!("the run options: {}", words.trim_start_matches("error: "))
        })?;
        let mut config = parsed
            .run
            .config(self.show_progress)
            .map_err(|e| format!("the run options: {}", error_chain(&e)))?;
        config.about.configuration = Some(Configuration {
            sweep: Some(self.plan.name.clone()),
            parameters: self.parameters.clone(),
        });
        Ok(config)
    }

    /// Starts the server, waits until it is ready, measures, stops it.
    pub async fn serve(&self, step: &mut dyn FnMut(Step)) -> Ending {
        let serve = self
            .plan
            .serve
            .as_ref()
            .expect("a serving sweep has a command");
        let command = self.fill(serve);
        let what = format!("server of {}", self.parameters);
        let mut group = match Group::start(&what, &command, &self.env(), &self.log) {
            Ok(group) => group,
            Err(e) => {
                let reason = format!("cannot start `sh -c {command}`: {e}");
                return Ending::Failed(failure(FailureStage::Start, reason, Vec::new()));
            }
        };
        step(Step::Started(group.pid()));
        tracing::info!(pid = group.pid(), log = %self.log.display(), "sweep: {} started", what);
        let ending = self.ready_then_measure(&mut group, step).await;
        match group.stop(self.plan.stop_grace).await {
            Stopped::Left(pids) => tracing::warn!(
                "sweep: the server of {} left processes {pids:?} even after SIGKILL",
                self.parameters
            ),
            stopped => tracing::info!("sweep: server of {} stopped ({stopped:?})", self.parameters),
        }
        ending
    }

    async fn ready_then_measure(&self, group: &mut Group, step: &mut dyn FnMut(Step)) -> Ending {
        let ready_s = match self.wait_ready(Some(group)).await {
            Readiness::Ready(took) => took,
            Readiness::Exited(status) => {
                let what = "the server {exit} before it was ready".to_string();
                return Ending::Failed(exit_failure(FailureStage::Start, what, status, group));
            }
            Readiness::TimedOut(reason) => {
                let tail = group.log_tail();
                return Ending::Failed(failure(FailureStage::Ready, reason, tail));
            }
            Readiness::Signal(name) => return Ending::Interrupted(name),
        };
        tracing::info!(
            "sweep: {} ready after {:.1} s",
            self.parameters,
            ready_s.as_secs_f64()
        );
        step(Step::Ready(ready_s.as_secs_f64()));
        self.measure(Some(group)).await
    }

    /// A server started by other means: the hook, the readiness check, the measurement.
    pub async fn hooked(&self, step: &mut dyn FnMut(Step)) -> Ending {
        if let Some(hook) = &self.plan.hook {
            if let Some(ending) = self.hook(hook).await {
                return ending;
            }
        }
        match self.wait_ready(None).await {
            Readiness::Ready(took) => {
                step(Step::Ready(took.as_secs_f64()));
                self.measure(None).await
            }
            Readiness::Exited(_) => unreachable!("no process is watched"),
            Readiness::TimedOut(reason) => {
                Ending::Failed(failure(FailureStage::Ready, reason, Vec::new()))
            }
            Readiness::Signal(name) => Ending::Interrupted(name),
        }
    }

    /// Runs the hook to its end (within the readiness timeout); an ending unless it succeeded.
    async fn hook(&self, hook: &Template) -> Option<Ending> {
        let command = self.fill(hook);
        let what = format!("hook of {}", self.parameters);
        let mut group = match Group::start(&what, &command, &self.env(), &self.log) {
            Ok(group) => group,
            Err(e) => {
                let reason = format!("cannot start the hook `sh -c {command}`: {e}");
                return Some(Ending::Failed(failure(
                    FailureStage::Hook,
                    reason,
                    Vec::new(),
                )));
            }
        };
        let timeout = self.plan.ready_timeout;
        let ending = tokio::select! {
            status = group.exited() => {
                if status.success() {
                    return None;
                }
                let what = "the hook {exit}".to_string();
                Ending::Failed(exit_failure(FailureStage::Hook, what, status, &group))
            }
            _ = tokio::time::sleep(timeout) => {
                let reason = format!("the hook did not finish within {:.0} s", timeout.as_secs_f64());
                Ending::Failed(failure(FailureStage::Hook, reason, group.log_tail()))
            }
            name = self.signals.wait() => Ending::Interrupted(name),
        };
        group.stop(self.plan.stop_grace).await;
        Some(ending)
    }

    /// Asks the readiness URL until it answers 2xx, the server exits, the time is up or a
    /// signal comes.
    async fn wait_ready(&self, mut group: Option<&mut Group>) -> Readiness {
        let url = self.ready_url();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("a plain client builds");
        let started = Instant::now();
        let mut last = "no answer yet".to_string();
        while started.elapsed() < self.plan.ready_timeout {
            if let Some(status) = group.as_mut().and_then(|g| g.try_exited()) {
                return Readiness::Exited(status);
            }
            if let Some(name) = self.signals.fired() {
                return Readiness::Signal(name);
            }
            match client.get(&url).send().await {
                Ok(answer) if answer.status().is_success() => {
                    return Readiness::Ready(started.elapsed())
                }
                Ok(answer) => last = format!("it answered {}", answer.status()),
                Err(e) => last = error_chain(&e),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Readiness::TimedOut(format!(
            "the server was not ready within {:.0} s: GET {url} never answered 2xx (last: {last}); raise --ready-timeout if it needs longer",
            self.plan.ready_timeout.as_secs_f64()
        ))
    }

    /// The configuration's run; stopped, and its partial report kept, if the server exits.
    async fn measure(&self, group: Option<&mut Group>) -> Ending {
        let mut config = match self.run_config() {
            Ok(config) => config,
            Err(reason) => return Ending::Failed(failure(FailureStage::Run, reason, Vec::new())),
        };
        let (requester, request) = StopRequest::new();
        config.stop_request = Some(request);
        let run = crate::run::run(config);
        tokio::pin!(run);
        let Some(group) = group else {
            return ended(run.await, None, Vec::new());
        };
        tokio::select! {
            end = &mut run => ended(end, None, group.log_tail()),
            status = group.exited() => {
                requester.stop("the server's exit");
                let end = run.await;
                let what = "the server {exit} during the run".to_string();
                let exit = exit_failure(FailureStage::Run, what, status, group);
                ended(end, Some(exit), Vec::new())
            }
        }
    }
}

/// How a run ended, as the configuration's ending: failed where the server exited during it
/// (unless every level was measured), with the server's log tail where the run failed.
fn ended(end: Result<RunEnd, RunError>, exit: Option<Failure>, tail: Vec<String>) -> Ending {
    match (end, exit) {
        (Ok(RunEnd::Complete), _) => Ending::Complete,
        (_, Some(exit)) => Ending::Failed(exit),
        (Ok(RunEnd::Interrupted(name)), None) => Ending::Interrupted(name),
        (Err(e), None) => Ending::Failed(failure(
            FailureStage::Run,
            format!("the run failed: {}", error_chain(&e)),
            tail,
        )),
    }
}
