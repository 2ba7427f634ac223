//! `infermeter run`: its options, and the [`RunConfig`] they make, once, for the run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::Args;
use infermeter_report::{LoadMode, Slo};

use crate::cli::choice;
use crate::http::adapters::EngineKind;
use crate::http::api::{Api, ConnectionReuse};
use crate::http::api_key::KeySource;
use crate::http::driver::ExtraBody;
use crate::load::Part;
use crate::prompts::source::PromptSpec;
use crate::run::power::PowerSource;
use crate::run::{self, About, ConfigError, RunConfig, RunEnd, ServerConfig, ShardConfig};
use crate::suite::spec::{parse_prompts, parse_slo, SearchSpec};
use crate::suite::{Suite, SuiteError};

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The server as you would type it: its root (http://localhost:8000), its API base
    /// (http://localhost:8000/v1) or a full endpoint URL (…/v1/chat/completions,
    /// …/v1/completions, which also sets --api).
    #[arg(long)]
    pub base_url: String,
    /// Model id; discovered from /v1/models when omitted.
    #[arg(long)]
    pub model: Option<String>,
    /// Suite: a built-in name (four-scenario, capacity, context-sweep, llama-cpu,
    /// chat-sessions) or a TOML file.
    #[arg(long, required_unless_present = "trace", conflicts_with = "trace")]
    pub suite: Option<String>,
    /// Replay this trace instead of a suite: JSONL (Mooncake's format, or the generic one with
    /// sessions) or a CSV of Azure's or BurstGPT's (told by its header); open-loop at the times
    /// it records.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Prompts from a file for every [[scenario]] of the suite without its own: ShareGPT JSON,
    /// JSONL (`prompt` or `messages`, optional `output_tokens`) or plain text (cut to each
    /// scenario's lengths), then settings as a suite's `prompts` table takes them, e.g.
    /// `sharegpt.json,order=shuffle,seed=1,count=500,max_input=1024`.
    #[arg(long, value_name = "FILE[,KEY=VALUE…]", value_parser = parse_prompts, conflicts_with = "trace")]
    pub prompts: Option<PromptSpec>,
    /// Replay speeds, one level each (2: twice as fast as recorded).
    #[arg(long, value_delimiter = ',', default_values_t = [1.0], requires = "trace")]
    pub trace_speed: Vec<f64>,
    /// Length of the slices of each level's timeline in the report, seconds.
    #[arg(long, value_name = "SECS", default_value_t = infermeter_report::aggregate::DEFAULT_SLICE_S, value_parser = parse_slice)]
    pub timeline_slice: f64,
    /// Report path; per-request records go to `<out>.records.jsonl`.
    #[arg(long)]
    pub out: PathBuf,
    /// The API to measure (default: the one a full endpoint URL names, else chat).
    #[arg(long, value_parser = choice(&Api::ALL, Api::label, Api::help))]
    pub api: Option<Api>,
    /// Engine adapter (request extras, metric names); `auto` detects it.
    #[arg(long, default_value = "auto",
        value_parser = choice(&EngineKind::ALL, EngineKind::label, EngineKind::help))]
    pub engine: EngineKind,
    /// Shrink the suite for a smoke run: fewer levels and requests, same token lengths.
    #[arg(long)]
    pub quick: bool,
    /// Overwrite an existing report.
    #[arg(long)]
    pub force: bool,
    /// Continue a partial run: keep its records and skip the levels it completed. With --search,
    /// also a complete report: the search judges the levels it holds and measures only the loads
    /// it needs and the report lacks (to find the limit a fixed sweep did not reach).
    #[arg(long)]
    pub resume: bool,
    /// Repeat every level N times and report 95% confidence intervals.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub trials: u32,
    /// Load modes to run, of those the suite defines (default: all of them).
    #[arg(long, value_delimiter = ',', value_parser = choice(&LoadMode::ALL, LoadMode::label, |_| None))]
    pub modes: Vec<LoadMode>,
    /// HF tokenizer.json for exact prompt lengths (otherwise the server's /tokenize or an estimate).
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// Environment variable holding the API key (default OPENAI_API_KEY).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// File holding the API key.
    #[arg(long)]
    pub api_key_file: Option<PathBuf>,
    /// GPU model, e.g. "NVIDIA H100 PCIe".
    #[arg(long)]
    pub gpu: Option<String>,
    /// Number of GPUs serving the model, e.g. 2 for tensor parallelism across two (default: what
    /// the simulator reports, otherwise 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub gpu_count: Option<u32>,
    /// Weight precision, e.g. FP8.
    #[arg(long)]
    pub precision: Option<String>,
    /// Report title.
    #[arg(long)]
    pub title: Option<String>,
    /// Free-form label `key=value` (repeatable).
    #[arg(long = "label", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Connect timeout, seconds.
    #[arg(long, default_value_t = RunConfig::DEFAULT_CONNECT_TIMEOUT_S)]
    pub connect_timeout: f64,
    /// Reuse connections across requests (pooled) or open one per request (never). A request
    /// that fails on a reused connection before any response byte (the server had closed it)
    /// goes again, once, on a new one; its record says so.
    #[arg(long, default_value = "pooled",
        value_parser = choice(&ConnectionReuse::ALL, ConnectionReuse::label, ConnectionReuse::help))]
    pub connection_reuse: ConnectionReuse,
    /// Fields added to every request's JSON body, e.g. '{"top_p": 0.9}' or
    /// '{"chat_template_kwargs": {"enable_thinking": false}}' (recorded in the report's labels).
    /// The fields the suite decides (model, prompt, lengths, streaming, caching) are refused.
    #[arg(long, value_name = "JSON", value_parser = ExtraBody::parse)]
    pub extra_body: Option<ExtraBody>,
    /// Time allowed until the first token, seconds (long contexts prefill for minutes).
    #[arg(long, default_value_t = RunConfig::DEFAULT_FIRST_TOKEN_TIMEOUT_S)]
    pub first_token_timeout: f64,
    /// Time allowed for a whole request, seconds.
    #[arg(long, default_value_t = RunConfig::DEFAULT_TOTAL_TIMEOUT_S)]
    pub total_timeout: f64,
    /// After Ctrl-C, how long in-flight requests may finish, seconds.
    #[arg(long, default_value_t = RunConfig::DEFAULT_GRACE_S)]
    pub grace: f64,
    /// GPU power source: auto, nvml, nvidia-smi, none, or a DCGM exporter URL.
    #[arg(long, default_value = "auto")]
    pub power: PowerSource,
    /// Server metrics URL (default: `/metrics` next to the base URL).
    #[arg(long)]
    pub metrics_url: Option<String>,
    /// Service-level objective, recorded in the report: what search mode aims at and what
    /// `summary` and the viewer judge goodput by, e.g. `ttft=5s,tpot=50ms,e2e=30s,stall=0`
    /// (`decode=20` for 20 tok/s; `job=10m` bounds an agentic job's completion time; `target=95%`
    /// is the share of requests, and of jobs, that must meet it).
    #[arg(long, value_name = "SPEC", value_parser = parse_slo)]
    pub slo: Option<Slo>,
    /// Search mode: instead of the suite's levels, find the highest concurrency at which the
    /// SLO's share of requests meets it (doubling, then bisection), per scenario. Settings
    /// `mode=peak|burst,min=1,max=256,resolution=0.1` override the suite's `[search]`.
    #[arg(long, value_name = "SPEC", num_args = 0..=1, default_missing_value = "",
        value_parser = SearchSpec::parse)]
    pub search: Option<SearchSpec>,
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// The `run` options of a sharded run.
#[derive(Debug, Clone, Args)]
pub struct ShardArgs {
    /// Run shard I of N: its share of every level's load, on the schedule every shard computes
    /// from --start-at. Shards are numbered from 0, as Kubernetes' JOB_COMPLETION_INDEX: the
    /// three shards of a run are 0/3, 1/3 and 2/3.
    #[arg(long, value_name = "I/N", requires = "start_at")]
    pub shard: Option<Part>,
    /// RFC 3339 time at which every shard begins the schedule, e.g. 2026-05-01T12:00:00Z: the
    /// same for all shards, and late enough for each to be ready (set up and connected) by then.
    #[arg(long, value_name = "RFC3339", requires = "shard", value_parser = parse_start)]
    pub start_at: Option<SystemTime>,
    /// Sharded run: seconds each peak or users level keeps its load (shards cannot agree on a
    /// count of requests without talking, so a sharded peak level lasts a fixed time; a users
    /// level's sessions should fit in it). Default: the suite's peak `min_seconds`, at least 10.
    #[arg(long, value_name = "SECONDS", requires = "shard", value_parser = positive_seconds)]
    pub level_seconds: Option<f64>,
    /// Sharded run: seconds each level is given, after its load, for its requests to finish
    /// (a burst level's whole time), and each scenario's warmup. A shard whose step runs over
    /// starts the next one late, and says so.
    #[arg(long, value_name = "SECONDS", default_value_t = RunConfig::DEFAULT_DRAIN_S, value_parser = positive_seconds)]
    pub drain_seconds: f64,
}

/// Why the options do not make a run.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl RunArgs {
    /// The run these options ask for: the suite read (and shrunk by `--quick`), the SLO and
    /// search settled.
    pub fn config(self, show_progress: bool) -> Result<RunConfig, OptionsError> {
        let mut suite = match (&self.suite, &self.trace) {
            (Some(name), _) => Suite::load(name)?,
            (None, Some(trace)) => Suite::for_trace(trace, self.trace_speed.clone())?,
            (None, None) => unreachable!("clap requires --suite unless --trace is given"),
        };
        if let Some(spec) = &self.prompts {
            suite.use_prompts(spec)?;
        }
        if self.quick {
            suite = suite.quick();
        }
        let api_key = match (&self.api_key_file, &self.api_key_env) {
            (Some(path), _) => KeySource::File(path.clone()),
            (None, Some(var)) => KeySource::Env {
                var: var.clone(),
                named: true,
            },
            (None, None) => KeySource::default(),
        };
        let seconds = Duration::from_secs_f64;
        let mut config = RunConfig {
            server: ServerConfig {
                base_url: self.base_url,
                model: self.model,
                api: self.api,
                engine: self.engine,
                api_key,
                tokenizer: self.tokenizer,
                metrics_url: self.metrics_url,
                connect_timeout: seconds(self.connect_timeout),
                first_token_timeout: seconds(self.first_token_timeout),
                total_timeout: seconds(self.total_timeout),
                connection_reuse: self.connection_reuse,
                extra_body: self.extra_body.clone().unwrap_or_default(),
            },
            modes: self.modes,
            force: self.force,
            resume: self.resume,
            trials: self.trials,
            timeline_slice_s: self.timeline_slice,
            grace: seconds(self.grace),
            power: self.power,
            shard: self.shard.config(),
            about: About {
                title: self.title,
                labels: with_extra_body(self.labels, self.extra_body.as_ref()),
                gpu: self.gpu,
                gpu_count: self.gpu_count,
                precision: self.precision,
                configuration: None,
            },
            show_progress,
            ..RunConfig::new(String::new(), suite, self.out)
        };
        config.settle_slo(self.slo, self.search)?;
        Ok(config)
    }
}

/// The labels, with the extra body's fields as `extra_body` (compact JSON) so the report says
/// what every request carried; a label of that name given by the user is kept as given.
fn with_extra_body(
    mut labels: Vec<(String, String)>,
    extra: Option<&ExtraBody>,
) -> Vec<(String, String)> {
    if let Some(extra) = extra.filter(|e| !e.0.is_empty()) {
        if !labels.iter().any(|(k, _)| k == "extra_body") {
            let json = serde_json::Value::Object(extra.0.clone()).to_string();
            labels.push(("extra_body".into(), json));
        }
    }
    labels
}

impl ShardArgs {
    fn config(&self) -> Option<ShardConfig> {
        Some(ShardConfig {
            part: self.shard?,
            start_at: self.start_at?,
            level_seconds: self.level_seconds,
            drain_seconds: self.drain_seconds,
        })
    }
}

/// Runs the benchmark; its exit code: 0 when complete, 128 + the signal's number when a
/// signal stopped it (as shells report it).
pub async fn run(args: RunArgs, show_progress: bool) -> anyhow::Result<ExitCode> {
    let config = args.config(show_progress)?;
    Ok(match run::run(config).await? {
        RunEnd::Complete => ExitCode::SUCCESS,
        RunEnd::Interrupted(name) => ExitCode::from(run::stop::exit_code(name)),
    })
}

fn parse_slice(s: &str) -> Result<f64, String> {
    crate::cli::positive(s, "seconds")
}

fn parse_label(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("label \"{s}\" is not key=value"))?;
    if k.trim().is_empty() {
        return Err(format!("label \"{s}\" has an empty key"));
    }
    Ok((k.trim().to_string(), v.trim().to_string()))
}

fn parse_start(text: &str) -> Result<SystemTime, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(SystemTime::from)
        .map_err(|e| {
            format!("\"{text}\" is not an RFC 3339 time such as 2026-05-01T12:00:00Z ({e})")
        })
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    crate::cli::positive(text, "seconds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse() {
        assert_eq!(parse_label("a = b").unwrap(), ("a".into(), "b".into()));
        assert!(parse_label("nokey").is_err());
        assert!(parse_label("=v").is_err());
    }

    #[test]
    fn shard_times_are_checked() {
        assert!(parse_start("2026-05-01T12:00:00Z").is_ok());
        assert!(parse_start("tomorrow").unwrap_err().contains("RFC 3339"));
        assert!(positive_seconds("0").is_err());
    }
}
