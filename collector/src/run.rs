//! `infermeter run`: plans the suite, runs every level, streams records and writes the report
//! (partial on Ctrl-C / SIGTERM, resumable with `--resume`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};
use infermeter_report::{
    ClientHealth, EngineInfo, HardwareInfo, LoadMode, Measurement, Metadata, ModelInfo, Outcome,
    RecordsLink, Report, RequestRecord, RunStatus, Scenario, Series, TestParameters, TokenSource,
    SCHEMA_VERSION,
};
use tokio::sync::watch;

use crate::adapters::{self, EngineKind};
use crate::aggregate::{self, Trial};
use crate::arrival::{ClockCounts, MIXED_CLOCKS};
use crate::cli::{ModeName, RunArgs};
use crate::driver::{ApiKey, Driver, DriverConfig};
use crate::endpoint::{self, ServerInfo};
use crate::output::{self, Start};
use crate::power::PowerSampler;
use crate::progress::Progress;
use crate::prompt::Tokenizer;
use crate::prompt_plan::PromptPlan;
use crate::records::{self, RecordWriter};
use crate::scheduler::{self, LevelContext, Load};
use crate::scrape::{self, Scraper};
use crate::suite::Suite;
use crate::transport::error_chain;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    Complete,
    /// Stopped by a signal; the partial report is written.
    Interrupted(&'static str),
}

/// Reads the API key: `--api-key-file`, else `--api-key-env`, else `OPENAI_API_KEY`.
pub fn api_key(args: &RunArgs) -> anyhow::Result<Option<ApiKey>> {
    if let Some(path) = &args.api_key_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read --api-key-file {}", path.display()))?;
        return match ApiKey::new(text) {
            Some(k) => Ok(Some(k)),
            None => bail!("--api-key-file {} is empty", path.display()),
        };
    }
    let var = args.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY");
    match std::env::var(var) {
        Ok(v) => Ok(ApiKey::new(v)),
        Err(_) if args.api_key_env.is_some() => {
            bail!("--api-key-env {var}: the environment variable is not set")
        }
        Err(_) => Ok(None),
    }
}

/// The base URL as written to the report: no user name or password.
fn redact_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// Complete levels per (scenario, mode) of a resumed run.
type DoneLevels = BTreeMap<(String, LoadMode), usize>;

/// One level of the plan.
#[derive(Debug, Clone)]
struct PlannedLevel {
    scenario: usize,
    load: Load,
    /// Written into records: the concurrency, or the 1-based level number in rate mode.
    record_label: u32,
    request_rate: Option<f64>,
}

fn plan(suite: &Suite, modes: &[ModeName]) -> Vec<PlannedLevel> {
    let wanted = |m: ModeName| modes.is_empty() || modes.contains(&m);
    let mut levels = Vec::new();
    for (scenario, _) in suite.scenarios.iter().enumerate() {
        if let (Some(p), true) = (&suite.peak, wanted(ModeName::Peak)) {
            for &n in &p.levels {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Peak {
                        concurrency: n,
                        requests_per_slot: p.requests_per_slot,
                        min_duration: Duration::from_secs_f64(p.min_seconds),
                    },
                    record_label: n,
                    request_rate: None,
                });
            }
        }
        if let (Some(b), true) = (&suite.burst, wanted(ModeName::Burst)) {
            for &n in &b.levels {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Burst { concurrency: n },
                    record_label: n,
                    request_rate: None,
                });
            }
        }
        if let (Some(r), true) = (&suite.rate, wanted(ModeName::Rate)) {
            for (i, &rate) in r.rates.iter().enumerate() {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Rate {
                        rate,
                        arrivals: r.arrivals,
                        duration: Duration::from_secs_f64(r.duration_s),
                        seed: r.seed.wrapping_add(i as u64),
                    },
                    record_label: i as u32 + 1,
                    request_rate: Some(rate),
                });
            }
        }
    }
    levels
}

fn max_in_flight(levels: &[PlannedLevel]) -> usize {
    levels
        .iter()
        .map(|l| match l.load {
            Load::Peak { concurrency, .. } | Load::Burst { concurrency } => concurrency as usize,
            Load::Rate { .. } => 64,
        })
        .max()
        .unwrap_or(1)
}

/// Listens for Ctrl-C and SIGTERM; the receiver flips to true and the name is kept.
fn stop_signal() -> (
    watch::Receiver<bool>,
    std::sync::Arc<std::sync::Mutex<&'static str>>,
) {
    let (tx, rx) = watch::channel(false);
    let which = std::sync::Arc::new(std::sync::Mutex::new("signal"));
    let seen = which.clone();
    tokio::spawn(async move {
        let name = wait_for_signal().await;
        *seen.lock().unwrap_or_else(|e| e.into_inner()) = name;
        tracing::warn!("{name} received: stopping, in-flight requests get a short grace");
        let _ = tx.send(true);
    });
    (rx, which)
}

#[cfg(unix)]
async fn wait_for_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

/// Where a run writes.
struct Outputs {
    report: PathBuf,
    records: RecordWriter,
    count: AtomicU64,
}

impl Outputs {
    fn write_record(&self, r: &RequestRecord) {
        if let Err(e) = self.records.write(r) {
            tracing::error!("cannot append to {}: {e}", self.records.path().display());
        }
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn write_report(&self, report: &mut Report) -> anyhow::Result<()> {
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
        Ok(output::write_report(&self.report, report)?)
    }
}

/// Runs the benchmark described by `args`.
pub async fn run(args: RunArgs, show_progress: bool) -> anyhow::Result<RunEnd> {
    let mut suite = Suite::load(&args.suite)?;
    if args.quick {
        suite = suite.quick();
    }
    let levels = plan(&suite, &args.modes);
    if levels.is_empty() {
        bail!(
            "suite \"{}\" has no level for the modes asked (--modes)",
            suite.name
        );
    }
    let start = output::prepare(&args.out, args.force, args.resume)?;
    let key = api_key(&args)?;
    let metrics_url = args
        .metrics_url
        .clone()
        .unwrap_or_else(|| scrape::metrics_url(&args.base_url));
    let side_client = crate::transport::http_client(args.connect_timeout(), 4)?;
    let mut info = endpoint::discover(
        &side_client,
        &args.base_url,
        &metrics_url,
        key.as_ref(),
        args.model.is_none(),
    )
    .await?;
    let model = args
        .model
        .clone()
        .or(info.model.clone())
        .expect("discover insists on a model when none is given");
    let engine = adapters::identify(
        args.engine,
        &mut info,
        &side_client,
        &args.base_url,
        key.as_ref(),
    )
    .await;
    tracing::info!(
        model,
        engine = engine.display_name(),
        suite = suite.name,
        "starting"
    );
    let driver = Driver::new(DriverConfig {
        base_url: args.base_url.clone(),
        api: args.api,
        model: model.clone(),
        engine,
        prompt_caching: suite.prompt_caching,
        api_key: key.clone(),
        connect_timeout: args.connect_timeout(),
        first_token_timeout: args.first_token_timeout(),
        total_timeout: args.total_timeout(),
        max_in_flight: max_in_flight(&levels),
    })?;
    let tokenizer = match &args.tokenizer {
        Some(path) => Tokenizer::from_path(path)?,
        None => match Tokenizer::from_server(
            side_client.clone(),
            &args.base_url,
            &model,
            key.as_ref().map(ApiKey::expose),
        )
        .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!("no server tokenizer: {}", error_chain(&e));
                Tokenizer::estimate()
            }
        },
    };
    let prompts = PromptPlan::new(&driver, &suite, tokenizer, args.api).await?;

    let records_path = records::records_path(&args.out);
    let (mut report, done_levels) = match start {
        Start::Fresh => (
            new_report(&args, &suite, &model, engine, &info),
            BTreeMap::new(),
        ),
        Start::Resume(partial) => resume(*partial, &records_path)?,
    };
    let outputs = Outputs {
        records: RecordWriter::open(&records_path, args.resume)?,
        report: args.out.clone(),
        count: AtomicU64::new(records_count(&records_path, args.resume)),
    };
    let (stop, which_signal) = stop_signal();
    let progress = Progress::new(show_progress);
    let mut scraper = Scraper::new(side_client.clone(), metrics_url);
    let mut warmed = vec![false; suite.scenarios.len()];
    let mut token_source: Option<TokenSource> = None;
    let mut interrupted = false;

    for planned in &levels {
        let scenario = &suite.scenarios[planned.scenario];
        let mode = planned.load.mode();
        let done_count = done_levels
            .get(&(scenario.id.clone(), mode))
            .copied()
            .unwrap_or(0);
        let position = levels
            .iter()
            .filter(|l| l.scenario == planned.scenario && l.load.mode() == mode)
            .position(|l| std::ptr::eq(l, planned))
            .unwrap_or(0);
        if position < done_count {
            continue;
        }
        if *stop.borrow() {
            interrupted = true;
            break;
        }
        if !warmed[planned.scenario] {
            warmed[planned.scenario] = true;
            warmup(
                &driver,
                &prompts,
                planned.scenario,
                scenario,
                suite.warmup,
                &outputs,
            )
            .await;
        }
        let label = level_label(&scenario.id, mode, planned.record_label);
        progress.start_level(
            &label,
            match planned.load {
                Load::Burst { concurrency } => {
                    Some(u64::from(concurrency) * u64::from(args.trials))
                }
                _ => None,
            },
        );
        scraper.start().await;
        let power = PowerSampler::start(&args.power).await?;
        let mut runs = Vec::new();
        for trial in 0..args.trials {
            let prepare = |index: u64| prompts.prepare(planned.scenario, index);
            let on_record = |r: &RequestRecord| {
                outputs.write_record(r);
                progress.on_record(r);
            };
            let ctx = LevelContext {
                driver: &driver,
                scenario: &scenario.id,
                concurrency: planned.record_label,
                trial,
                prepare: &prepare,
                on_record: &on_record,
                stop: stop.clone(),
                grace: Duration::from_secs_f64(args.grace),
            };
            let run = scheduler::run_level(ctx, planned.load).await;
            let stopped = run.interrupted;
            runs.push(run);
            if stopped {
                break;
            }
        }
        let server = scraper.stop().await;
        let power_stats = match power {
            Some(sampler) => sampler.stop().await,
            None => None,
        };
        interrupted = runs.iter().any(|r| r.interrupted);
        token_source = token_source.or(runs.iter().find_map(|r| r.token_source));
        let trials: Vec<Trial<'_>> = runs
            .iter()
            .map(|r| Trial {
                records: &r.records,
                window: r.window,
            })
            .collect();
        let series = series_for(&mut report, &scenario.id, mode, &suite);
        let concurrency = match planned.load {
            // Rate levels are keyed by observed peak in flight, kept increasing for the schema.
            Load::Rate { .. } => {
                let observed = runs
                    .iter()
                    .map(|r| r.max_in_flight)
                    .max()
                    .unwrap_or(1)
                    .max(1);
                let previous = series.levels.last().map_or(0, |l| l.concurrency);
                observed.max(previous + 1)
            }
            _ => planned.record_label,
        };
        let mut level = aggregate::level(concurrency, planned.request_rate, &trials);
        level.server = match (server, aggregate::engine_speeds(&trials)) {
            (Some(scraped), Some(speeds)) => Some(infermeter_report::ServerMetrics {
                engine_prefill_tok_s: speeds.engine_prefill_tok_s,
                engine_decode_tok_s: speeds.engine_decode_tok_s,
                ..scraped
            }),
            (scraped, speeds) => scraped.or(speeds),
        };
        level.power = power_stats;
        let clocks = runs
            .iter()
            .fold(ClockCounts::default(), |all, r| all.merge(r.clocks));
        level.client = runs.last().map(|r| ClientHealth {
            // Over every trial, not just the last.
            event_clock: clocks.summary().map(str::to_string),
            ..r.client.clone()
        });
        let has_data = level.requests.total() > 0;
        if has_data {
            progress.finish_level(&label, &level);
            series.levels.push(level.clone());
        }
        report
            .warnings
            .extend(level_warnings(&label, scenario, &suite, &trials, &level));
        if clocks.summary() == Some(MIXED_CLOCKS) {
            report.warnings.push(format!(
                "{label}: {} of {} request(s) were timed when parsed, not by the kernel's receive timestamp",
                clocks.parse,
                clocks.parse + clocks.kernel_receive
            ));
        }
        if interrupted {
            if has_data {
                report.warnings.push(format!(
                    "{label} {WAS_INTERRUPTED}: its figures cover only the requests finished before the stop"
                ));
            }
            break;
        }
        report.status = RunStatus::Partial {
            reason: format!("run in progress; levels through {label} are complete"),
        };
        if let Some(src) = token_source {
            report.measurement.output_token_source = src;
        }
        outputs.write_report(&mut report)?;
    }
    report.series.retain(|s| !s.levels.is_empty());
    if let Some(src) = token_source {
        report.measurement.output_token_source = src;
    }
    report.metadata.finished_at = Some(chrono::Utc::now().to_rfc3339());
    let end = if interrupted || *stop.borrow() {
        let name = *which_signal.lock().unwrap_or_else(|e| e.into_inner());
        report.status = RunStatus::Partial {
            reason: format!("interrupted by {name}; resume with --resume"),
        };
        RunEnd::Interrupted(name)
    } else {
        report.status = RunStatus::Complete;
        RunEnd::Complete
    };
    outputs.write_report(&mut report)?;
    tracing::info!(
        report = %args.out.display(),
        records = %outputs.records.path().display(),
        "report written"
    );
    Ok(end)
}

fn records_count(path: &Path, resume: bool) -> u64 {
    if !resume {
        return 0;
    }
    records::read_records(path).map_or(0, |r| r.len() as u64)
}

async fn warmup(
    driver: &Driver,
    prompts: &PromptPlan,
    index: usize,
    scenario: &Scenario,
    count: u32,
    outputs: &Outputs,
) {
    for i in 0..count {
        // Warmup indices count down from the top so they never collide with measured ones.
        let prepared = prompts.prepare(index, u64::MAX - u64::from(i));
        let ex = driver.send(prepared.body).await;
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
        };
        if record.outcome != Outcome::Ok {
            tracing::warn!(
                scenario = scenario.id,
                "warmup request failed: {:?}",
                record.outcome
            );
        }
        outputs.write_record(&record);
    }
}

fn series_for<'r>(
    report: &'r mut Report,
    scenario: &str,
    mode: LoadMode,
    suite: &Suite,
) -> &'r mut Series {
    let at = match report
        .series
        .iter()
        .position(|s| s.scenario == scenario && s.mode == mode)
    {
        Some(i) => i,
        None => {
            report.series.push(Series {
                scenario: scenario.into(),
                mode,
                arrivals: (mode == LoadMode::Rate)
                    .then(|| suite.rate.as_ref().map(|r| r.arrivals))
                    .flatten(),
                levels: Vec::new(),
            });
            report.series.len() - 1
        }
    };
    &mut report.series[at]
}

/// Warnings about what the level measured versus what was asked.
fn level_warnings(
    label: &str,
    scenario: &Scenario,
    suite: &Suite,
    trials: &[Trial<'_>],
    level: &infermeter_report::Level,
) -> Vec<String> {
    let ok: Vec<&RequestRecord> = trials
        .iter()
        .flat_map(|t| t.records.iter())
        .filter(|r| r.outcome == Outcome::Ok)
        .collect();
    let mut warnings = Vec::new();
    let cached = ok
        .iter()
        .filter(|r| r.cached_tokens.unwrap_or(0) > 0)
        .count();
    if cached > 0 && !suite.prompt_caching {
        warnings.push(format!(
            "{label}: {cached} request(s) reported cached prompt tokens in a no-cache suite; TTFT may be optimistic"
        ));
    }
    let wrong_output = ok
        .iter()
        .filter(|r| r.output_tokens.is_some_and(|n| n != scenario.output_tokens))
        .count();
    if wrong_output > 0 {
        warnings.push(format!(
            "{label}: {wrong_output} request(s) produced a different number of output tokens than the {} asked (the engine may ignore ignore_eos/min_tokens)",
            scenario.output_tokens
        ));
    }
    let target = f64::from(scenario.input_tokens);
    let off_input = ok
        .iter()
        .filter(|r| {
            r.input_tokens
                .is_some_and(|n| (f64::from(n) - target).abs() > target * 0.02 + 2.0)
        })
        .count();
    if off_input > 0 {
        warnings.push(format!(
            "{label}: {off_input} request(s) had an input length more than 2% away from {}; pass --tokenizer for exact prompts",
            scenario.input_tokens
        ));
    }
    if level.client.as_ref().is_some_and(|c| c.distorted) {
        warnings.push(format!(
            "{label}: the client sent requests late (scheduling lag p99 above 5 ms); its figures may be distorted"
        ));
    }
    if level.requests.ok == 0 && level.requests.total() > 0 {
        warnings.push(format!("{label}: every request failed"));
    }
    warnings
}

fn new_report(
    args: &RunArgs,
    suite: &Suite,
    model: &str,
    engine: EngineKind,
    info: &ServerInfo,
) -> Report {
    let mut labels: BTreeMap<String, String> = args.labels.iter().cloned().collect();
    if let Some(len) = info.max_model_len {
        labels
            .entry("max_model_len".into())
            .or_insert(len.to_string());
    }
    let simulated = engine.is_simulator();
    let card = info.simulated.as_ref();
    Report {
        schema_version: SCHEMA_VERSION.into(),
        metadata: Metadata {
            title: args.title.clone(),
            synthetic: simulated,
            source: simulated.then(|| "infermeter simulator".to_string()),
            model: ModelInfo {
                id: model.into(),
                // "Qwen/Qwen3-..." -> "Qwen"; `owned_by` names the engine ("vllm"), not the maker.
                organization: model.split_once('/').map(|(org, _)| org.to_string()),
                architecture: card.map(|c| c.architecture.clone()),
                total_params_b: card.map(|c| c.total_params_b),
                active_params_b: card.map(|c| c.active_params_b),
                precision: args
                    .precision
                    .clone()
                    .or_else(|| card.map(|c| c.precision.clone())),
            },
            engine: EngineInfo {
                name: engine.display_name().into(),
                version: info.version.clone(),
                flags: Vec::new(),
                api: Some(args.api.label().into()),
                base_url: Some(redact_url(&args.base_url)),
            },
            hardware: HardwareInfo {
                gpu_model: args
                    .gpu
                    .clone()
                    .or_else(|| card.map(|c| c.gpu.clone()))
                    .unwrap_or_else(|| "unknown (pass --gpu)".into()),
                gpu_count: args
                    .gpu_count
                    .or_else(|| card.map(|c| c.gpu_count))
                    .unwrap_or(1),
                // A datasheet's "80GB" is the simulator's 80 GiB; reports quote the datasheet.
                vram_gb: card.map(|c| c.vram_gib),
                host: None,
            },
            test: TestParameters {
                suite: Some(suite.name.clone()),
                prompt_caching: Some(suite.prompt_caching),
                kv_cache_dtype: card.map(|c| c.kv_cache_dtype.clone()),
                ..TestParameters::default()
            },
            started_at: chrono::Utc::now().to_rfc3339(),
            finished_at: None,
            collector_version: env!("CARGO_PKG_VERSION").into(),
            labels,
        },
        status: RunStatus::Partial {
            reason: "run in progress".into(),
        },
        measurement: Measurement {
            steady_state: Some("peak mode: the first wave of N requests (started together) and requests still running when the first slot drains are excluded; throughput counts tokens arriving inside the window".into()),
            ..Measurement::default()
        },
        scenarios: suite.scenarios.clone(),
        series: Vec::new(),
        records: None,
        warnings: Vec::new(),
    }
}

/// How progress lines and warnings name a level, e.g. "chatbot peak @4" (`record_label`: the
/// records' `concurrency`, a rate level's number for rate mode).
fn level_label(scenario: &str, mode: LoadMode, record_label: u32) -> String {
    format!("{scenario} {} @{record_label}", mode.label())
}

/// The warning that flags a level cut short by a stop follows its label with this.
const WAS_INTERRUPTED: &str = "was interrupted";

/// Whether the level of `record` is complete in a partial `report`: there, and not flagged as
/// cut short. A level the run stopped in is flagged, or absent when the process died in it.
fn level_is_complete(report: &Report, record: &RequestRecord) -> bool {
    let flag = format!(
        "{} {WAS_INTERRUPTED}",
        level_label(&record.scenario, record.mode, record.concurrency)
    );
    let present = report
        .series
        .iter()
        .find(|s| s.scenario == record.scenario && s.mode == record.mode)
        .is_some_and(|s| match record.mode {
            LoadMode::Rate => s.levels.len() >= record.concurrency as usize,
            _ => s.levels.iter().any(|l| l.concurrency == record.concurrency),
        });
    present && !report.warnings.iter().any(|w| w.starts_with(&flag))
}

/// Prepares a resumed run: the level that was running when the run stopped is measured again,
/// so its figures are dropped and its records set aside. (A run stopped between levels, or in a
/// warmup, has no such level.) Returns the number of complete levels per series.
fn resume(mut report: Report, records_path: &Path) -> anyhow::Result<(Report, DoneLevels)> {
    let all = records::read_records(records_path)?;
    let last = all.iter().rev().find(|r| !r.warmup).cloned();
    if let Some(last) = last.filter(|r| !level_is_complete(&report, r)) {
        let (interrupted, kept): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| {
            !r.warmup
                && r.scenario == last.scenario
                && r.mode == last.mode
                && r.concurrency == last.concurrency
        });
        // The interrupted level is measured again in one go; its first attempt's requests are
        // set aside before the records file drops them, so nothing measured is lost.
        let aside = records::interrupted_path(records_path);
        records::append_records(&aside, &interrupted)?;
        records::rewrite_records(records_path, &kept)?;
        report.warnings.push(format!(
            "{}: measured again after an interruption; the {} requests of the first attempt \
             are kept in {}",
            level_label(&last.scenario, last.mode, last.concurrency),
            interrupted.len(),
            aside.file_name().unwrap_or_default().to_string_lossy()
        ));
        if let Some(series) = report
            .series
            .iter_mut()
            .find(|s| s.scenario == last.scenario && s.mode == last.mode)
        {
            match last.mode {
                LoadMode::Rate => series
                    .levels
                    .truncate(last.concurrency.saturating_sub(1) as usize),
                _ => series.levels.retain(|l| l.concurrency != last.concurrency),
            }
        }
    }
    report.warnings.retain(|w| !w.contains(WAS_INTERRUPTED));
    let done = report
        .series
        .iter()
        .map(|s| ((s.scenario.clone(), s.mode), s.levels.len()))
        .collect();
    Ok((report, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_the_report() {
        assert_eq!(
            redact_url("http://user:pw@host:8000/v1"),
            "http://host:8000/v1"
        );
        assert_eq!(redact_url("http://host/v1"), "http://host/v1");
    }

    #[test]
    fn plan_orders_scenarios_then_modes() {
        let suite = Suite::load("four-scenario").unwrap().quick();
        let levels = plan(&suite, &[ModeName::Burst]);
        assert_eq!(levels.len(), 4 * 3);
        assert!(levels.iter().all(|l| l.load.mode() == LoadMode::Burst));
        assert_eq!(plan(&suite, &[]).len(), 4 * 6);
    }

    /// A real run (llama.cpp on CPU, shipped in data/) stopped after its last level,
    /// cpu-1024 burst @8 (8 requests, the last in its records file), with `edit` applied to
    /// its report; returns what `resume` leaves and sets aside.
    fn resumed(edit: impl FnOnce(&mut Report)) -> (Report, DoneLevels, usize, Vec<RequestRecord>) {
        // Read at run time: a build cache shared by checkouts can hold this binary built in
        // another one.
        let root = std::env::var("CARGO_MANIFEST_DIR").unwrap();
        let data = format!("{root}/../data/reports/llama-cpu-tiny-llama");
        let mut report = infermeter_report::load_report(
            &std::fs::read_to_string(format!("{data}.json")).unwrap(),
        )
        .unwrap();
        edit(&mut report);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json.records.jsonl");
        std::fs::copy(format!("{data}.records.jsonl"), &path).unwrap();
        let (report, done) = resume(report, &path).unwrap();
        let kept = records::read_records(&path).unwrap().len();
        let aside = dir.path().join("report.json.records.interrupted.jsonl");
        let aside = if aside.exists() {
            records::read_records(&aside).unwrap()
        } else {
            Vec::new()
        };
        (report, done, kept, aside)
    }

    fn done_in(done: &DoneLevels, scenario: &str, mode: LoadMode) -> usize {
        done[&(scenario.to_string(), mode)]
    }

    #[test]
    fn a_run_stopped_between_levels_keeps_every_level() {
        let (report, done, kept, aside) = resumed(|_| {});
        assert_eq!((kept, aside.len()), (69, 0));
        assert_eq!(done_in(&done, "cpu-1024", LoadMode::Burst), 2);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn a_level_cut_short_is_set_aside_and_measured_again() {
        let flagged = |r: &mut Report| {
            r.warnings.push(format!(
                "cpu-1024 burst @8 {WAS_INTERRUPTED}: its figures cover only the requests finished before the stop"
            ))
        };
        // The process died in the level: it never reached the report.
        let died = |r: &mut Report| {
            let series = r
                .series
                .iter_mut()
                .find(|s| s.scenario == "cpu-1024" && s.mode == LoadMode::Burst);
            series.unwrap().levels.retain(|l| l.concurrency != 8);
        };
        for edit in [&flagged as &dyn Fn(&mut Report), &died] {
            let (report, done, kept, aside) = resumed(edit);
            assert_eq!((kept, aside.len()), (61, 8));
            assert!(aside
                .iter()
                .all(|r| r.scenario == "cpu-1024" && r.concurrency == 8));
            assert_eq!(done_in(&done, "cpu-1024", LoadMode::Burst), 1);
            assert_eq!(done_in(&done, "cpu-1024", LoadMode::Peak), 2);
            assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
            assert!(report.warnings[0].starts_with("cpu-1024 burst @8: measured again"));
        }
    }
}
