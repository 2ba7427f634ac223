//! A measuring run: a [`Run`] prepares (plan, output files, server, prompts), measures each
//! planned level and finishes the report; records stream to their file as requests complete,
//! the report is rewritten after every level (partial on Ctrl-C / SIGTERM, resumable with
//! `--resume`). It reads a [`RunConfig`], never the command line.

mod config;
pub mod heap;
mod measured;
mod metadata;
pub mod power;
mod resume;
mod search;
pub mod shard;
pub mod stop;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use infermeter_report::aggregate::Expected;
use infermeter_report::{
    Level, LoadMode, Outcome, Report, RequestRecord, RunStatus, Scenario, SearchSettings, Series,
    Slo, TokenSource,
};

use crate::http::base_url::without_credentials;
use crate::http::driver::{Driver, DriverError};
use crate::http::scrape::Scraper;
use crate::http::server::{Server, ServerError};
use crate::load::record::{to_record, Stamp};
use crate::load::{self, level_label, LevelContext, LevelRun, PlannedLevel};
use crate::output::progress::Progress;
use crate::output::records::RecordsError;
use crate::output::run_files::RunFiles;
use crate::output::{self, OutputError, Start};
use crate::prompts::conversation::{SessionError, SessionPlan};
use crate::prompts::plan::{PromptError, PromptPlan};
use crate::prompts::text::{Tokenizer, TokenizerError};
use crate::prompts::trace::{BlockWords, TraceError, TracePlan};
pub use config::{About, ConfigError, RunConfig, ServerConfig, ShardConfig};
use measured::Measured;
use power::{PowerError, PowerSampler};
use resume::{DoneLevels, WAS_INTERRUPTED};
use search::{judge, Judgement, Search};
use shard::{ShardError, ShardRun};
use stop::StopSignal;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    Complete,
    /// Stopped by a signal; the partial report is written.
    Interrupted(&'static str),
}

/// Why a run could not start, or could not keep what it measured.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("suite \"{suite}\" has no level for the modes asked (--modes)")]
    NoLevels { suite: String },
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    Prompts(#[from] PromptError),
    #[error(transparent)]
    Sessions(#[from] SessionError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error(transparent)]
    Power(#[from] PowerError),
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error(
        "the requests of {level} failed to connect to {endpoint}: the server went away or is \
         unreachable. The run stopped there; the levels before it and every record are kept \
         in {report}. Start the server again and go on with --resume"
    )]
    EndpointGone {
        endpoint: String,
        level: String,
        report: String,
    },
}

/// The level run warmups are numbered in (their ids differ from every measured request's).
const WARMUP_SERIAL: u64 = 999;

/// Runs the benchmark `config` describes.
pub async fn run(config: RunConfig) -> Result<RunEnd, RunError> {
    Run::prepare(config).await?.execute().await
}

/// A benchmark run between its steps: what it measures with and what it has measured.
pub struct Run {
    config: RunConfig,
    levels: Vec<PlannedLevel>,
    /// Levels per series that a resumed run's partial report completed.
    done: DoneLevels,
    driver: Driver,
    requests: Requests,
    report: Report,
    files: RunFiles,
    stop: StopSignal,
    progress: Progress,
    scraper: Scraper,
    /// Per scenario: whether its warmup requests were sent.
    warmed: Vec<bool>,
    /// Level runs (levels times trials) so far: each numbers its requests' prompts apart.
    level_runs: AtomicU64,
    token_source: Option<TokenSource>,
    /// This shard's schedule and share, in a sharded run.
    shard: Option<ShardRun>,
    /// The server's URL as errors name it (no credentials).
    endpoint: String,
}

/// What the requests of a run say: a body per scenario, the conversations of its session
/// scenarios, and the trace it replays.
struct Requests {
    prompts: PromptPlan,
    sessions: SessionPlan,
    trace: Option<TracePlan>,
    /// The words of agentic jobs' prompt blocks (a suite with `[agents]`).
    block_words: Option<Arc<BlockWords>>,
}

impl Requests {
    /// Builds them with the best tokenizer at hand, ids stamped with `run_nonce`.
    async fn build(
        config: &RunConfig,
        server: &Server,
        driver: &Driver,
        run_nonce: u32,
    ) -> Result<Requests, RunError> {
        let suite = &config.suite;
        let tokenizer = Tokenizer::best(config.server.tokenizer.as_deref(), server).await?;
        let context = server.info.max_model_len;
        let prompts =
            PromptPlan::new(driver, suite, tokenizer, server.api, run_nonce, context).await?;
        let sessions = SessionPlan::new(&prompts, suite).await?;
        let block_words = match suite.loaded_trace.is_some() || suite.loaded_jobs.is_some() {
            true => {
                let overhead = prompts
                    .overhead()
                    .await
                    .map_err(PromptError::CalibrationPrompt)?;
                let nonce = u64::from(run_nonce);
                let words = BlockWords::new(prompts.tokenizer(), overhead, nonce).await?;
                Some(Arc::new(words))
            }
            false => None,
        };
        let trace = (suite.loaded_trace.clone())
            .zip(block_words.clone())
            .map(|(trace, words)| TracePlan::new(trace, words));
        Ok(Requests {
            prompts,
            sessions,
            trace,
            block_words,
        })
    }

    /// The report's word on each scenario whose prompts were drawn: the mean lengths asked
    /// (a prompt file's are known only now) and how many prompts it sends.
    fn describe(&self, scenarios: &mut [Scenario]) {
        for (i, scenario) in scenarios.iter_mut().enumerate() {
            let Some(pool) = self.prompts.pool(i) else {
                continue;
            };
            (scenario.input_tokens, scenario.output_tokens) = pool.means();
            if let Some(source) = &mut scenario.prompts {
                source.used = pool.count() as u64;
                // A text file holds the prompts cut from it.
                if source.kind == infermeter_report::PromptKind::Text {
                    source.available = source.used;
                }
                source.filtered_out = pool.filtered_out;
            }
        }
    }
}

/// The nonce stamped into this run's prompts (so a repeated or resumed run does not meet the
/// last one's cache): the shards of a sharded run share theirs, derived from their start time,
/// so that the prompts a single run would share (a system prompt, a trace's blocks) are shared
/// across shards too.
fn run_nonce(shard: Option<&ShardConfig>) -> u32 {
    use rand::Rng;
    match shard {
        Some(s) => {
            let since = s.start_at.duration_since(std::time::UNIX_EPOCH);
            (since.map_or(0, |d| d.as_millis()) % 10_000) as u32
        }
        None => rand::rng().random_range(0..10_000),
    }
}

impl Run {
    /// Everything before the first level: the plan, the output files (fresh or resumed), the
    /// server (model, engine, tokenizer) and every scenario's requests. Fails before anything
    /// is measured.
    pub async fn prepare(mut config: RunConfig) -> Result<Run, RunError> {
        let levels = planned_levels(&config)?;
        let max_in_flight = config
            .search
            .as_ref()
            .map_or_else(|| load::max_in_flight(&levels), |s| s.max as usize);
        let (suite, trials, resume) = (&config.suite, config.trials, config.resume);
        let mut shard = ShardRun::new(config.shard.as_ref(), suite, &levels, trials, resume)?;
        let searching = config.search.is_some();
        let start = output::prepare(&config.out, config.force, config.resume, searching)?;
        let server = Server::find(&config.server).await?;
        if let Some(shard) = &mut shard {
            let url = format!("{}/models", server.api_base);
            let key = server.key.as_ref();
            shard.check_clock(&server.side_client, &url, key).await;
        }
        tracing::info!(
            endpoint = without_credentials(&server.url()),
            model = server.model,
            engine = server.engine.display_name(),
            connections = config.server.connection_reuse.label(),
            suite = suite.name,
            "starting"
        );
        let driver = server.driver(&config.server, suite.prompt_caching, max_in_flight)?;
        let nonce = run_nonce(config.shard.as_ref());
        let requests = Requests::build(&config, &server, &driver, nonce).await?;
        requests.describe(&mut config.suite.scenarios);
        let (report, done) = match start {
            Start::Fresh => {
                let sharding = shard.as_ref().map(ShardRun::sharding);
                (
                    metadata::new_report(&config, &server, sharding),
                    DoneLevels::new(),
                )
            }
            Start::Resume(partial) => {
                let records = crate::output::records::records_path(&config.out);
                resume::resume(*partial, &records)?
            }
            Start::Extend(complete) => (resume::extend(*complete, &config), DoneLevels::new()),
        };
        let mut report = report;
        report.measurement.prompt_tokens = Some(requests.prompts.tokenizer().counter());
        let files = RunFiles::open(config.out.clone(), config.resume)?;
        let endpoint = without_credentials(&server.url());
        Ok(Run {
            warmed: vec![false; config.suite.scenarios.len()],
            level_runs: AtomicU64::new(0),
            stop: StopSignal::listen(config.stop_request.clone()),
            progress: Progress::new(config.show_progress),
            scraper: Scraper::new(server.side_client, server.metrics_url),
            levels,
            done,
            driver,
            requests,
            report,
            files,
            token_source: None,
            shard,
            endpoint,
            config,
        })
    }

    /// Measures every planned level the report does not hold yet, in order (or searches each
    /// scenario), then finishes.
    pub async fn execute(mut self) -> Result<RunEnd, RunError> {
        let interrupted = match (self.config.search.clone(), self.config.slo) {
            (Some(settings), Some(slo)) => self.search_each_scenario(&settings, &slo).await?,
            _ => self.planned_levels().await?,
        };
        self.finish(interrupted)
    }

    /// Measures the planned levels; whether a stop ended the run.
    async fn planned_levels(&mut self) -> Result<bool, RunError> {
        let levels = std::mem::take(&mut self.levels);
        for planned in &levels {
            if self.is_done(planned) {
                continue;
            }
            if self.stop.is_set() || self.level(planned).await? == LevelEnd::Interrupted {
                return Ok(true);
            }
            heap::release_freed();
        }
        Ok(false)
    }

    /// Searches every scenario in turn; whether a stop ended the run.
    async fn search_each_scenario(
        &mut self,
        settings: &SearchSettings,
        slo: &Slo,
    ) -> Result<bool, RunError> {
        for scenario in 0..self.config.suite.scenarios.len() {
            if self.search_scenario(scenario, settings, slo).await? == LevelEnd::Interrupted {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Probes levels of one scenario until the search settles: each level measured (or, when
    /// resuming, found in the report) and judged against the SLO.
    async fn search_scenario(
        &mut self,
        scenario: usize,
        settings: &SearchSettings,
        slo: &Slo,
    ) -> Result<LevelEnd, RunError> {
        let id = self.config.suite.scenarios[scenario].id.clone();
        let mode = settings.mode;
        let mut search = Search::new(settings.clone());
        while let Some(load) = search.next() {
            if self.measured(&id, mode, load).is_none() {
                if self.stop.is_set() {
                    return Ok(LevelEnd::Interrupted);
                }
                let planned = load::probe(&self.config.suite, scenario, mode, load);
                if self.level(&planned).await? == LevelEnd::Interrupted {
                    return Ok(LevelEnd::Interrupted);
                }
            }
            let label = level_label(&id, mode, load, None);
            let passed = match self.measured(&id, mode, load) {
                Some(level) => judge(level, mode, slo, &label),
                None => Judgement::fail(format!("{label}: no request was measured")),
            };
            tracing::info!("search: {}", passed.summary);
            // A resumed search judges its earlier levels again: their warnings are there.
            if let Some(warning) = passed.warning.filter(|w| !self.report.warnings.contains(w)) {
                self.report.warnings.push(warning);
            }
            search.record(load, passed.passed);
        }
        Ok(LevelEnd::Complete)
    }

    /// The level of `scenario` under `mode` at concurrency `load`, if measured.
    fn measured(&self, scenario: &str, mode: LoadMode, load: u32) -> Option<&Level> {
        self.report
            .series
            .iter()
            .find(|s| s.scenario == scenario && s.mode == mode)?
            .levels
            .iter()
            .find(|l| l.concurrency == load)
    }

    /// Whether a resumed run's partial report completed `planned`.
    fn is_done(&self, planned: &PlannedLevel) -> bool {
        let series = (
            self.config.suite.scenarios[planned.scenario].id.clone(),
            planned.mode(),
            planned.cache(),
        );
        planned.position < self.done.get(&series).copied().unwrap_or(0)
    }

    /// Measures one level (after its scenario's warmup), adds it to the report with its
    /// warnings and writes the report. A level cut short by a stop keeps what it measured,
    /// flagged, and the report waits for [`Run::finish`].
    async fn level(&mut self, planned: &PlannedLevel) -> Result<LevelEnd, RunError> {
        let scenario = self.config.suite.scenarios[planned.scenario].clone();
        self.warm_up(planned.scenario).await?;
        let label = level_label(
            &scenario.id,
            planned.mode(),
            planned.record_label(),
            planned.cache(),
        );
        let trials = u64::from(self.config.trials);
        let expected = planned.load.expected_requests().map(|n| n * trials);
        self.progress.start_level(&label, expected);
        self.scraper.start().await;
        let power = PowerSampler::start(&self.config.power).await?;
        let (runs, late_s) = self.trials(planned, &scenario).await?;
        self.record_shard_part(&label, &scenario, planned, &runs, &late_s);
        let measured = Measured {
            runs,
            server: self.scraper.stop().await,
            power: match power {
                Some(sampler) => sampler.stop().await,
                None => None,
            },
        };
        if measured.endpoint_gone() {
            return Err(self.endpoint_gone(label));
        }
        self.token_source = self.token_source.or(measured.token_source());
        let has_data = self.add_level(&label, planned, &scenario, &measured);
        if measured.interrupted() {
            if has_data {
                self.report.warnings.push(format!(
                    "{label} {WAS_INTERRUPTED}: its figures cover only the requests finished before the stop"
                ));
            }
            return Ok(LevelEnd::Interrupted);
        }
        self.report.status = RunStatus::Partial {
            reason: format!("run in progress; levels through {label} are complete"),
        };
        self.write_report()?;
        Ok(LevelEnd::Complete)
    }

    /// The run's end when the server went away during `label` (its last requests could not
    /// connect): the report keeps the levels measured before, partial and resumable, and the
    /// error names the endpoint and the level. The level itself is left out, its figures those
    /// of a server that stopped answering; its records stay in the records file.
    fn endpoint_gone(&mut self, label: String) -> RunError {
        self.report.series.retain(|s| !s.levels.is_empty());
        self.report.warnings.push(format!(
            "{label} is left out: {} stopped accepting connections during it (its requests are in the records file)",
            self.endpoint
        ));
        self.report.status = RunStatus::Partial {
            reason: format!(
                "stopped at {label}: {} refused every connection; resume with --resume",
                self.endpoint
            ),
        };
        if let Err(e) = self.write_report() {
            return e;
        }
        RunError::EndpointGone {
            endpoint: self.endpoint.clone(),
            level: label,
            report: self.files.report_path().display().to_string(),
        }
    }

    /// Adds the measured level to its series (in order of load: a search probes out of order)
    /// with its warnings; whether it had any request.
    fn add_level(
        &mut self,
        label: &str,
        planned: &PlannedLevel,
        scenario: &Scenario,
        measured: &Measured,
    ) -> bool {
        let (mode, cache) = (planned.mode(), planned.cache());
        let series = self.series(&scenario.id, planned);
        let previous = series.levels.last().map(|l| l.concurrency);
        let level = measured.level(planned, previous, self.config.timeline_slice_s);
        let has_data = level.requests.total() > 0;
        if has_data {
            self.progress.finish_level(label, mode, &level);
            let levels = &mut self.series(&scenario.id, planned).levels;
            let at = levels.partition_point(|l| l.concurrency < level.concurrency);
            levels.insert(at, level.clone());
        }
        // Only a trace level's requests are asked the trace's lengths: a suite may also run
        // request sweeps and sessions, whose requests are asked their scenario's.
        let replayed = (self.requests.trace.as_ref()).filter(|_| planned.load.replays_trace());
        let trace_lengths = replayed.map(TracePlan::lengths);
        let expected = Expected {
            scenario,
            // An agentic job's calls share their prefixes by design.
            prompt_caching: self.config.suite.prompt_caching || scenario.agents.is_some(),
            cache,
            trace_lengths: trace_lengths.as_deref(),
        };
        let warnings = measured.warnings(label, &expected, &level);
        self.report.warnings.extend(warnings);
        has_data
    }

    /// In a sharded run, what this shard did of the level, and warnings where it began late.
    fn record_shard_part(
        &mut self,
        label: &str,
        scenario: &Scenario,
        planned: &PlannedLevel,
        runs: &[LevelRun],
        late_s: &[f64],
    ) {
        let Some(shard) = &self.shard else { return };
        let part = shard.level(&scenario.id, planned, runs, late_s);
        let late = shard::late_warnings(label, &part);
        self.report.warnings.extend(late);
        if let Some(sharding) = &mut self.report.sharding {
            sharding.shards[0].levels.push(part);
        }
    }

    /// Runs the level's trials (`--trials`), stopping after one a stop cut short; with how late
    /// each began on a sharded run's schedule.
    async fn trials(
        &self,
        planned: &PlannedLevel,
        scenario: &Scenario,
    ) -> Result<(Vec<LevelRun>, Vec<f64>), RunError> {
        let (requests, files, progress) = (&self.requests, &self.files, &self.progress);
        let on_record = |r: &RequestRecord| {
            files.write_record(r);
            progress.on_record(r);
        };
        let trace = (requests.trace.as_ref()).filter(|_| planned.load.replays_trace());
        let mut runs = Vec::new();
        let mut late = Vec::new();
        for trial in 0..self.config.trials {
            // Every level run (and trial) has prompts of its own: request 0 of one level must
            // not find request 0 of the last in an engine's prefix cache, nor a trace's replay
            // the previous speed's blocks.
            let serial = self.level_runs.fetch_add(1, Ordering::Relaxed);
            let prepare = |number: u64| match trace {
                Some(t) => t.prepare(&self.driver, number, serial),
                None => requests.prompts.prepare(planned.scenario, serial, number),
            };
            let (origin, late_s, load) = match &self.shard {
                Some(shard) => {
                    let stop = self.stop.receiver();
                    let (origin, late_s) = shard.wait_trial(planned, trial, stop).await?;
                    (origin, late_s, shard.part_of(planned).load)
                }
                None => (Instant::now(), 0.0, planned.load.clone()),
            };
            late.push(late_s);
            let ctx = LevelContext {
                driver: &self.driver,
                scenario: &scenario.id,
                concurrency: planned.record_label(),
                trial,
                prepare: &prepare,
                conversations: &requests.sessions,
                block_words: requests.block_words.as_deref(),
                cache: planned.cache(),
                on_record: &on_record,
                stop: self.stop.receiver(),
                grace: self.config.grace,
                origin,
                part: self.shard.as_ref().map(|s| s.part),
            };
            let run = load::run_level(&ctx, load.as_ref()).await;
            let stopped = run.interrupted;
            runs.push(run);
            if stopped {
                break;
            }
        }
        Ok((runs, late))
    }

    /// Sends a scenario's warmup requests, one at a time, before its first level: recorded as
    /// warmup, never measured.
    async fn warm_up(&mut self, scenario_index: usize) -> Result<(), RunError> {
        if std::mem::replace(&mut self.warmed[scenario_index], true) {
            return Ok(());
        }
        if let Some(shard) = &self.shard {
            shard
                .wait_warmup(scenario_index, self.stop.receiver())
                .await?;
        }
        let scenario = &self.config.suite.scenarios[scenario_index];
        for i in 0..self.config.suite.warmup {
            // Warmup indices count down from the top so they never collide with measured ones.
            let number = u64::MAX - u64::from(i);
            let prepared = self
                .requests
                .prompts
                .prepare(scenario_index, WARMUP_SERIAL, number);
            let ex = self.driver.send(prepared.body).await;
            let sent = ex.sent;
            let record = to_record(
                ex,
                Stamp {
                    scenario: &scenario.id,
                    mode: LoadMode::Peak,
                    concurrency: 1,
                    trial: 0,
                    index: u64::from(i),
                    warmup: true,
                    in_window: false,
                    start: sent,
                    scheduled: sent,
                    from_schedule: false,
                    input_tokens: prepared.input_tokens,
                    session: None,
                    cache: None,
                    shard: self.shard.as_ref().map(|s| s.part.index),
                    asked: prepared.asked,
                    agent: None,
                },
            );
            if record.outcome != Outcome::Ok {
                tracing::warn!(
                    scenario = scenario.id,
                    "warmup request failed: {:?}",
                    record.outcome
                );
            }
            self.files.write_record(&record);
        }
        Ok(())
    }

    /// The report's series of `scenario` that the level `planned` belongs to (its mode and
    /// cache use), added (empty, with the level's arrivals) if the report has none yet.
    fn series(&mut self, scenario: &str, planned: &PlannedLevel) -> &mut Series {
        let (mode, cache) = (planned.mode(), planned.cache());
        self.report
            .series_mut(scenario, mode, cache, || planned.load.arrivals())
    }

    /// Writes the report as it stands, with the records file's name and count.
    fn write_report(&mut self) -> Result<(), RunError> {
        if let Some(src) = self.token_source {
            self.report.measurement.output_token_source = src;
        }
        Ok(self.files.write_report(&mut self.report)?)
    }

    /// Writes the final report: complete, or partial when a stop ended the run.
    fn finish(mut self, interrupted: bool) -> Result<RunEnd, RunError> {
        self.report.series.retain(|s| !s.levels.is_empty());
        self.report.metadata.finished_at = Some(chrono::Utc::now().to_rfc3339());
        if let Some(sharding) = &mut self.report.sharding {
            ShardRun::finish(sharding);
        }
        let end = if interrupted || self.stop.is_set() {
            let name = self.stop.name();
            self.report.status = RunStatus::Partial {
                reason: format!("interrupted by {name}; resume with --resume"),
            };
            RunEnd::Interrupted(name)
        } else {
            self.report.status = RunStatus::Complete;
            RunEnd::Complete
        };
        self.write_report()?;
        tracing::info!(
            report = %self.files.report_path().display(),
            records = %self.files.records_path().display(),
            "report written"
        );
        Ok(end)
    }
}

/// The levels a run measures: the suite's for the modes asked, or none for a search, which
/// chooses its levels as it goes.
fn planned_levels(config: &RunConfig) -> Result<Vec<PlannedLevel>, RunError> {
    if config.search.is_some() {
        return Ok(Vec::new());
    }
    let levels = load::plan(&config.suite, &config.modes);
    if levels.is_empty() {
        return Err(RunError::NoLevels {
            suite: config.suite.name.clone(),
        });
    }
    Ok(levels)
}

/// How a level's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LevelEnd {
    Complete,
    /// A stop cut it short: the run ends after it.
    Interrupted,
}
