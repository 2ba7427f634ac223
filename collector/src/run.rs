//! `infermeter run`: a [`Run`] prepares (suite, plan, output files, endpoint, prompts), measures
//! each planned level and finishes the report; records stream to their file as requests
//! complete, the report is rewritten after every level (partial on Ctrl-C / SIGTERM, resumable
//! with `--resume`).

mod measured;
mod metadata;
mod plan;
mod resume;
mod search;
mod stop;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use infermeter_report::aggregate;
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::goodput::{self, slo_text};
use infermeter_report::{
    CacheUse, Level, LoadMode, Outcome, RecordsLink, Report, RequestRecord, RunStatus, Scenario,
    SearchSettings, Series, Slo, TokenSource,
};

use crate::adapters::{self, EngineKind};
use crate::base_url::{without_credentials, BaseUrl, BaseUrlError};
use crate::cli::{Api, RunArgs};
use crate::driver::{ApiKey, Driver, DriverConfig, DriverError};
use crate::endpoint::{self, DiscoveryError, ServerInfo};
use crate::heap;
use crate::output::{self, OutputError, Start};
use crate::power::{PowerError, PowerSampler};
use crate::progress::Progress;
use crate::prompt::{Tokenizer, TokenizerError};
use crate::prompt_plan::{PromptError, PromptPlan};
use crate::records::{self, RecordWriter, RecordsError};
use crate::scheduler::{self, LevelContext, LevelRun, Load};
use crate::scrape::Scraper;
use crate::session::{SessionError, SessionPlan};
use crate::shard::{self as sharding, ShardError, ShardRun};
use crate::slo_spec::SpecError;
use crate::suite::{Suite, SuiteError};
use crate::trace::{TraceError, TracePlan};
use crate::transport::{self, error_chain};
use measured::Measured;
#[cfg(test)]
pub use plan::plan;
pub use plan::{level_label, rate_concurrency, PlannedLevel};
use resume::{DoneLevels, WAS_INTERRUPTED};
use search::Search;
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
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error("suite \"{suite}\" has no level for the modes asked (--modes)")]
    NoLevels { suite: String },
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("cannot read --api-key-file {}", .path.display())]
    KeyFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--api-key-file {} is empty", .0.display())]
    EmptyKeyFile(PathBuf),
    #[error("--api-key-env {0}: the environment variable is not set")]
    KeyEnv(String),
    #[error("cannot build the HTTP client")]
    HttpClient(#[source] reqwest::Error),
    #[error(transparent)]
    BaseUrl(#[from] BaseUrlError),
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
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
    #[error("--search: {0}")]
    Search(SpecError),
    #[error("search mode needs an SLO to aim at: pass --slo (e.g. --slo ttft=5s,tpot=50ms) or set slo in the suite's [search]")]
    SearchWithoutSlo,
    #[error("search mode cannot be sharded: each shard would choose the next level from its own share of the requests. Search from one host, then shard a run of the levels it found ([peak] levels in the suite)")]
    SearchSharded,
    #[error(transparent)]
    Shard(#[from] ShardError),
}

/// Requests of one level run told apart in a prompt's id (the rest of its 10 digits number the
/// level runs).
const LEVEL_REQUESTS: u64 = 10_000_000;

/// Runs the benchmark described by `args`.
pub async fn run(args: RunArgs, show_progress: bool) -> Result<RunEnd, RunError> {
    Run::prepare(args, show_progress).await?.execute().await
}

/// Reads the API key: `--api-key-file`, else `--api-key-env`, else `OPENAI_API_KEY`.
fn api_key(args: &RunArgs) -> Result<Option<ApiKey>, RunError> {
    if let Some(path) = &args.api_key_file {
        let text = std::fs::read_to_string(path).map_err(|source| RunError::KeyFile {
            path: path.clone(),
            source,
        })?;
        return ApiKey::new(text)
            .map(Some)
            .ok_or_else(|| RunError::EmptyKeyFile(path.clone()));
    }
    let var = args.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY");
    match std::env::var(var) {
        Ok(v) => Ok(ApiKey::new(v)),
        Err(_) if args.api_key_env.is_some() => Err(RunError::KeyEnv(var.to_string())),
        Err(_) => Ok(None),
    }
}

/// A benchmark run between its steps: what it measures with and what it has measured.
pub struct Run {
    args: RunArgs,
    suite: Suite,
    levels: Vec<PlannedLevel>,
    /// Levels per series that a resumed run's partial report completed.
    done: DoneLevels,
    driver: Driver,
    prompts: PromptPlan,
    /// The conversations of the suite's session scenarios.
    sessions: SessionPlan,
    /// The trace a trace suite replays.
    trace: Option<TracePlan>,
    report: Report,
    outputs: Outputs,
    stop: StopSignal,
    progress: Progress,
    scraper: Scraper,
    /// Per scenario: whether its warmup requests were sent.
    warmed: Vec<bool>,
    /// Level runs (levels times trials) so far: each numbers its requests' prompts apart.
    level_runs: AtomicU64,
    token_source: Option<TokenSource>,
    /// This shard's schedule and share, in a sharded run (`--shard`).
    shard: Option<ShardRun>,
    /// Search mode: where to search and the SLO to aim at (instead of `levels`).
    search: Option<(SearchSettings, Slo)>,
}

/// The SLO of a run (`--slo`, else the suite's `[search]`), and its search settings when it
/// searches (`--search` over the suite's `[search]`).
fn slo_and_search(
    args: &RunArgs,
    suite: &Suite,
) -> Result<(Option<Slo>, Option<SearchSettings>), RunError> {
    let suite_search = suite.search.clone().unwrap_or_default();
    let suite_slo = suite_search.slo().map_err(RunError::Search)?;
    let slo = args.slo.or(suite_slo);
    if args.search.is_none() && suite.search.is_none() {
        return Ok((slo, None));
    }
    let base = suite_search.spec().map_err(RunError::Search)?;
    let settings = args
        .search
        .clone()
        .unwrap_or_default()
        .settle(&base)
        .map_err(RunError::Search)?;
    if slo.is_none() {
        return Err(RunError::SearchWithoutSlo);
    }
    Ok((slo, Some(settings)))
}

impl Run {
    /// Everything before the first level: the suite and its plan, the output files (fresh or
    /// resumed), the endpoint (model, engine, tokenizer) and every scenario's request body.
    /// Fails before anything is measured.
    pub async fn prepare(args: RunArgs, show_progress: bool) -> Result<Run, RunError> {
        let mut suite = match (&args.suite, &args.trace) {
            (Some(name), _) => Suite::load(name)?,
            (None, Some(trace)) => Suite::for_trace(trace, args.trace_speed.clone())?,
            (None, None) => unreachable!("clap requires --suite unless --trace is given"),
        };
        if args.quick {
            suite = suite.quick();
        }
        let (slo, search) = slo_and_search(&args, &suite)?;
        if search.is_some() && args.shard.shard.is_some() {
            return Err(RunError::SearchSharded);
        }
        // A search chooses its levels as it goes.
        let levels = match search {
            Some(_) => Vec::new(),
            None => plan::plan(&suite, &args.modes),
        };
        if levels.is_empty() && search.is_none() {
            return Err(RunError::NoLevels { suite: suite.name });
        }
        let max_in_flight = search
            .as_ref()
            .map_or_else(|| plan::max_in_flight(&levels), |s| s.max as usize);
        let mut shard = ShardRun::new(&args.shard, &suite, &levels, args.trials, args.resume)?;
        let start = output::prepare(&args.out, args.force, args.resume)?;
        let endpoint = Endpoint::discover(&args).await?;
        if let Some(shard) = &mut shard {
            let url = format!("{}/models", endpoint.api_base);
            shard
                .check_clock(&endpoint.side_client, &url, endpoint.key.as_ref())
                .await;
        }
        tracing::info!(
            endpoint = without_credentials(&endpoint.url()),
            model = endpoint.model,
            engine = endpoint.engine.display_name(),
            connections = args.connection_reuse.label(),
            suite = suite.name,
            "starting"
        );
        let driver = endpoint.driver(&args, &suite, max_in_flight)?;
        let tokenizer = endpoint.tokenizer(&args).await?;
        let prompts = PromptPlan::new(&driver, &suite, tokenizer, endpoint.api).await?;
        let sessions = SessionPlan::new(&prompts, &suite).await?;
        let trace = match suite.loaded_trace.take() {
            Some(trace) => {
                let overhead = prompts
                    .overhead()
                    .await
                    .map_err(PromptError::CalibrationPrompt)?;
                let nonce = u64::from(prompts.ids().run_nonce());
                Some(TracePlan::new(trace, prompts.tokenizer(), overhead, nonce).await?)
            }
            None => None,
        };
        let records_path = records::records_path(&args.out);
        let (report, done) = match start {
            Start::Fresh => {
                let mut report = Report {
                    sharding: shard.as_ref().map(ShardRun::sharding),
                    ..metadata::new_report(&args, &suite, &endpoint)
                };
                report.metadata.test.slo = slo;
                report.metadata.test.search = search.clone();
                (report, DoneLevels::new())
            }
            Start::Resume(partial) => resume::resume(*partial, &records_path)?,
        };
        let outputs = Outputs::open(args.out.clone(), records_path, args.resume)?;
        Ok(Run {
            warmed: vec![false; suite.scenarios.len()],
            level_runs: AtomicU64::new(0),
            stop: StopSignal::listen(),
            progress: Progress::new(show_progress),
            scraper: Scraper::new(endpoint.side_client, endpoint.metrics_url),
            args,
            suite,
            levels,
            done,
            driver,
            prompts,
            sessions,
            trace,
            report,
            outputs,
            token_source: None,
            search: search.zip(slo),
            shard,
        })
    }

    /// Measures every planned level the report does not hold yet, in order (or searches each
    /// scenario), then finishes.
    pub async fn execute(mut self) -> Result<RunEnd, RunError> {
        let interrupted = match self.search.clone() {
            Some((settings, slo)) => self.search_each_scenario(&settings, &slo).await?,
            None => self.planned_levels().await?,
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
        for scenario in 0..self.suite.scenarios.len() {
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
        let id = self.suite.scenarios[scenario].id.clone();
        let mode = settings.mode;
        let mut search = Search::new(settings.clone());
        while let Some(load) = search.next() {
            if self.measured(&id, mode, load).is_none() {
                if self.stop.is_set() {
                    return Ok(LevelEnd::Interrupted);
                }
                let planned = plan::probe(&self.suite, scenario, mode, load);
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
            self.suite.scenarios[planned.scenario].id.clone(),
            planned.load.mode(),
            planned.cache(),
        );
        planned.position < self.done.get(&series).copied().unwrap_or(0)
    }

    /// Measures one level (after its scenario's warmup), adds it to the report with its
    /// warnings and writes the report. A level cut short by a stop keeps what it measured,
    /// flagged, and the report waits for [`Run::finish`].
    async fn level(&mut self, planned: &PlannedLevel) -> Result<LevelEnd, RunError> {
        let scenario = self.suite.scenarios[planned.scenario].clone();
        let mode = planned.load.mode();
        let cache = planned.cache();
        self.warm_up(planned.scenario).await?;
        let label = level_label(&scenario.id, mode, planned.record_label, cache);
        self.progress
            .start_level(&label, planned.expected_requests(self.args.trials));
        self.scraper.start().await;
        let power = PowerSampler::start(&self.args.power).await?;
        let (runs, late_s) = self.trials(planned, &scenario).await?;
        if let Some(shard) = &self.shard {
            let part = shard.level(&scenario.id, planned, &runs, &late_s);
            self.report
                .warnings
                .extend(sharding::late_warnings(&label, &part));
            if let Some(sharding) = &mut self.report.sharding {
                sharding.shards[0].levels.push(part);
            }
        }
        let measured = Measured {
            runs,
            server: self.scraper.stop().await,
            power: match power {
                Some(sampler) => sampler.stop().await,
                None => None,
            },
        };
        let interrupted = measured.interrupted();
        self.token_source = self.token_source.or(measured.token_source());
        let previous = self.series(&scenario.id, mode, cache).levels.last();
        let mut level = measured.level(planned, previous.map(|l| l.concurrency));
        level.timeline = measured.timeline(self.args.timeline_slice);
        let has_data = level.requests.total() > 0;
        if has_data {
            self.progress.finish_level(&label, &level);
            // In order of load: a search probes out of order.
            let levels = &mut self.series(&scenario.id, mode, cache).levels;
            let at = levels.partition_point(|l| l.concurrency < level.concurrency);
            levels.insert(at, level.clone());
        }
        // Only a trace level's requests are asked the trace's lengths: a suite may also run
        // request sweeps and sessions, whose requests are asked their scenario's.
        let replayed = self.trace.as_ref().filter(|_| mode == LoadMode::Trace);
        let trace_lengths: Option<Vec<(u32, u32)>> = replayed.map(|t| {
            let lines = &t.trace().lines;
            lines
                .iter()
                .map(|l| (l.input_tokens, l.output_tokens))
                .collect()
        });
        let expected = aggregate::Expected {
            scenario: &scenario,
            prompt_caching: self.suite.prompt_caching,
            cache,
            trace_lengths: trace_lengths.as_deref(),
        };
        let warnings = measured.warnings(&label, &expected, &level);
        self.report.warnings.extend(warnings);
        if interrupted {
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

    /// Runs the level's trials (`--trials`), stopping after one a stop cut short; with how late
    /// each began on a sharded run's schedule.
    async fn trials(
        &self,
        planned: &PlannedLevel,
        scenario: &Scenario,
    ) -> Result<(Vec<LevelRun>, Vec<f64>), RunError> {
        let (prompts, outputs, progress) = (&self.prompts, &self.outputs, &self.progress);
        let on_record = |r: &RequestRecord| {
            outputs.write_record(r);
            progress.on_record(r);
        };
        let trace = self
            .trace
            .as_ref()
            .filter(|_| matches!(planned.load, Load::Trace { .. }));
        let sessions = (scenario.session.is_some()).then_some((&self.sessions, planned.scenario));
        let mut runs = Vec::new();
        let mut late = Vec::new();
        for trial in 0..self.args.trials {
            // Every level run (and trial) has prompts of its own: request 0 of one level must
            // not find request 0 of the last in an engine's prefix cache, nor a trace's replay
            // the previous speed's blocks.
            let serial = self.level_runs.fetch_add(1, Ordering::Relaxed);
            let prepare = |index: u64| match trace {
                Some(t) => t.prepare(&self.driver, index, serial),
                None => prompts.prepare(
                    planned.scenario,
                    serial % 1_000 * LEVEL_REQUESTS + index % LEVEL_REQUESTS,
                ),
            };
            let (origin, late_s, load) = match &self.shard {
                Some(shard) => {
                    let stop = self.stop.receiver();
                    let (origin, late_s) = shard.wait_trial(planned, trial, stop).await?;
                    (origin, late_s, shard.load(planned.load))
                }
                None => (Instant::now(), 0.0, planned.load),
            };
            late.push(late_s);
            let ctx = LevelContext {
                driver: &self.driver,
                scenario: &scenario.id,
                concurrency: planned.record_label,
                trial,
                prepare: &prepare,
                sessions,
                trace,
                on_record: &on_record,
                stop: self.stop.receiver(),
                grace: Duration::from_secs_f64(self.args.grace),
                origin,
                part: self.shard.as_ref().map(|s| s.part),
            };
            let run = scheduler::run_level(ctx, load).await;
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
        let scenario = &self.suite.scenarios[scenario_index];
        for i in 0..self.suite.warmup {
            // Warmup indices count down from the top so they never collide with measured ones.
            let prepared = self
                .prompts
                .prepare(scenario_index, u64::MAX - u64::from(i));
            let ex = self.driver.send(prepared.body).await;
            let record = RequestRecord {
                scenario: scenario.id.clone(),
                mode: LoadMode::Peak,
                concurrency: 1,
                trial: 0,
                index: u64::from(i),
                warmup: true,
                in_window: false,
                scheduled_s: 0.0,
                sent_s: 0.0,
                ttft_s: ex.first_token.map(|t| (t - ex.sent).as_secs_f64()),
                e2e_s: Some((ex.end - ex.sent).as_secs_f64()),
                input_tokens: ex.prompt_tokens,
                output_tokens: ex.output_tokens,
                cached_tokens: ex.cached_tokens,
                chunks: Vec::new(),
                queue_wait_s: None,
                engine_timings: ex.engine_timings,
                outcome: ex.outcome,
                retried: ex.retried,
                session: None,
                cache: None,
                first_answer_s: None,
                reasoning_tokens: ex.reasoning_tokens,
                response_id: ex.response_id,
                shard: self.shard.as_ref().map(|s| s.part.index),
            };
            if record.outcome != Outcome::Ok {
                tracing::warn!(
                    scenario = scenario.id,
                    "warmup request failed: {:?}",
                    record.outcome
                );
            }
            self.outputs.write_record(&record);
        }
        Ok(())
    }

    /// The report's series of `scenario` in `mode` (and `cache` use), added (empty) if the
    /// report has none yet.
    fn series(&mut self, scenario: &str, mode: LoadMode, cache: Option<CacheUse>) -> &mut Series {
        let rate = self.suite.rate.as_ref();
        self.report.series_mut(scenario, mode, cache, || {
            (mode == LoadMode::Rate)
                .then(|| rate.map(|r| r.arrivals))
                .flatten()
        })
    }

    /// Writes the report as it stands, with the records file's name and count.
    fn write_report(&mut self) -> Result<(), RunError> {
        if let Some(src) = self.token_source {
            self.report.measurement.output_token_source = src;
        }
        Ok(self.outputs.write_report(&mut self.report)?)
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
            report = %self.args.out.display(),
            records = %self.outputs.records.path().display(),
            "report written"
        );
        Ok(end)
    }
}

/// The endpoint as the run found it: what it serves, which engine, and how to reach it.
struct Endpoint {
    /// For everything but the measured requests: discovery, tokenizer, metrics.
    side_client: reqwest::Client,
    /// The API base, e.g. `http://host:8000/v1`, whatever form `--base-url` took.
    api_base: String,
    api: Api,
    metrics_url: String,
    key: Option<ApiKey>,
    info: ServerInfo,
    model: String,
    engine: EngineKind,
}

impl Endpoint {
    /// Reads the API key and `--base-url`, and asks the server about itself (where its API
    /// is, model, engine, version).
    async fn discover(args: &RunArgs) -> Result<Endpoint, RunError> {
        let key = api_key(args)?;
        let base_url = BaseUrl::parse(&args.base_url)?;
        let api = base_url.api(args.api)?;
        let side_client =
            transport::http_client(args.connect_timeout(), 4).map_err(RunError::HttpClient)?;
        let discovered = endpoint::discover(
            &side_client,
            &base_url,
            args.metrics_url.as_deref(),
            key.as_ref(),
            args.model.is_none(),
        )
        .await?;
        let mut info = discovered.info;
        let model = args
            .model
            .clone()
            .or(info.model.clone())
            .expect("discover insists on a model when none is given");
        let engine = adapters::identify(
            args.engine,
            &mut info,
            &side_client,
            &discovered.api_base,
            key.as_ref(),
        )
        .await;
        Ok(Endpoint {
            side_client,
            api_base: discovered.api_base,
            api,
            metrics_url: discovered.metrics_url,
            key,
            info,
            model,
            engine,
        })
    }

    /// The measured endpoint's URL, e.g. `http://host:8000/v1/chat/completions`.
    fn url(&self) -> String {
        format!("{}/{}", self.api_base, self.api.path())
    }

    /// The driver of the measured requests, its pool sized for the most requests in flight.
    fn driver(
        &self,
        args: &RunArgs,
        suite: &Suite,
        max_in_flight: usize,
    ) -> Result<Driver, DriverError> {
        Driver::new(DriverConfig {
            base_url: self.api_base.clone(),
            api: self.api,
            model: self.model.clone(),
            engine: self.engine,
            prompt_caching: suite.prompt_caching,
            api_key: self.key.clone(),
            connect_timeout: args.connect_timeout(),
            first_token_timeout: args.first_token_timeout(),
            total_timeout: args.total_timeout(),
            max_in_flight,
            connection_reuse: args.connection_reuse,
        })
    }

    /// The best tokenizer at hand: `--tokenizer`, the server's `/tokenize`, else an estimate.
    async fn tokenizer(&self, args: &RunArgs) -> Result<Tokenizer, TokenizerError> {
        if let Some(path) = &args.tokenizer {
            return Tokenizer::from_path(path);
        }
        let key = self.key.as_ref().map(ApiKey::expose);
        let server =
            Tokenizer::from_server(self.side_client.clone(), &self.api_base, &self.model, key);
        Ok(server.await.unwrap_or_else(|e| {
            tracing::debug!("no server tokenizer: {}", error_chain(&e));
            Tokenizer::estimate()
        }))
    }
}

/// A probed level against the SLO: whether it passed, a line for the log, and a warning for
/// the report when the level was over-saturated.
struct Judgement {
    passed: bool,
    summary: String,
    warning: Option<String>,
}

impl Judgement {
    fn fail(summary: String) -> Judgement {
        Judgement {
            passed: false,
            summary,
            warning: None,
        }
    }
}

/// Whether `level` meets `slo`: its attainment reaches the target and, outside burst mode
/// (whose queue drains by design), TTFT did not grow without bound over it. An over-saturated
/// level fails whatever its attainment: its figures only depend on how long it ran.
fn judge(level: &Level, mode: LoadMode, slo: &Slo, label: &str) -> Judgement {
    let Some(attainment) = goodput::attainment(level, slo) else {
        return Judgement::fail(format!("{label}: no per-request figures to judge"));
    };
    let share = format!(
        "{label}: {}% of {} requests met {}",
        format_number(attainment.fraction * 100.0),
        attainment.total,
        slo_text(slo)
    );
    let saturated = (mode != LoadMode::Burst)
        .then(|| goodput::saturation(level))
        .flatten();
    match saturated {
        Some(s) => Judgement {
            passed: false,
            summary: format!("{share}: over-saturated, counted as failing"),
            warning: Some(format!(
                "{label}: over-saturated (median TTFT rose from {} s to {} s over the level); \
                 the search counts it as failing and probes no higher load",
                format_number(s.first_ttft_s),
                format_number(s.last_ttft_s)
            )),
        },
        None => {
            let passed = attainment.passes(slo);
            Judgement {
                passed,
                summary: format!("{share}: {}", if passed { "pass" } else { "fail" }),
                warning: None,
            }
        }
    }
}

/// How a level's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LevelEnd {
    Complete,
    /// A stop cut it short: the run ends after it.
    Interrupted,
}

/// Where a run writes: the report, rewritten whole, and the records, appended one by one.
struct Outputs {
    report: PathBuf,
    records: RecordWriter,
    /// Records in the records file, those of a resumed run's earlier attempts included.
    count: AtomicU64,
}

impl Outputs {
    /// Opens the records file: continued when resuming (its records counted), else new.
    fn open(report: PathBuf, records_path: PathBuf, resume: bool) -> Result<Outputs, RunError> {
        let count = if resume {
            records::read_records(&records_path).map_or(0, |r| r.len() as u64)
        } else {
            0
        };
        Ok(Outputs {
            records: RecordWriter::open(&records_path, resume)?,
            report,
            count: AtomicU64::new(count),
        })
    }

    fn write_record(&self, r: &RequestRecord) {
        if let Err(e) = self.records.write(r) {
            tracing::error!("cannot append to {}: {e}", self.records.path().display());
        }
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn write_report(&self, report: &mut Report) -> Result<(), OutputError> {
        let _ = self.records.sync();
        report.records = Some(RecordsLink {
            path: self
                .records
                .path()
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            count: self.count.load(Ordering::Relaxed),
        });
        output::write_report(&self.report, report)
    }
}
