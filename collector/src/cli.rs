//! Command-line options (clap derive). Parsing only: no behaviour lives here.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::adapters::EngineKind;

#[derive(Debug, Parser)]
#[command(
    name = "infermeter",
    version,
    long_version = env!("INFERMETER_LONG_VERSION"),
    about = "Benchmark OpenAI-compatible LLM endpoints: how many users, how fast for each"
)]
pub struct Opts {
    /// No progress bars; only warnings and errors are logged.
    #[arg(long, global = true)]
    pub quiet: bool,
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a benchmark suite against an endpoint and write a report.
    Run(Box<RunArgs>),
    /// Merge the reports of a sharded run's shards (`run --shard I/N`) into one, every level
    /// rebuilt from all their records.
    Merge(crate::merge::MergeArgs),
    /// Write the Kubernetes manifests of a sharded run (an Indexed Job of N shards, a results
    /// volume, the merge Job), its start time computed once.
    K8sManifest(crate::k8s::K8sArgs),
    /// Print the highlight figures of a report.
    Summary(SummaryArgs),
    /// Check a report file and explain any problem (exit 1 on problems).
    Validate(ValidateArgs),
    /// Run the simulated inference engine.
    Sim(Box<infermeter_sim::SimArgs>),
    /// Serve the viewer for one or more reports.
    View(crate::view::ViewArgs),
    /// Measure the collector's own timing error against the simulator's send timestamps.
    BenchTiming(BenchTimingArgs),
    /// Run thousands of streams against the simulator for minutes, print the collector's memory
    /// every few seconds, then kill it mid-level and check that its records and partial report
    /// load (exit 1 if not, or if memory grew over 5% after the first minute).
    BenchSoak(BenchSoakArgs),
    /// Measure the collector's CPU per streamed token, syscalls, context switches and memory at
    /// 64, 256 and 1,000 streams, beside a bare reader of the same streams (the floor).
    BenchClient(crate::bench_client::BenchClientArgs),
    /// The floor client `bench-client` measures (started by it).
    #[command(hide = true)]
    BenchClientFloor(crate::bench_client::BenchFloorArgs),
    /// Measure the simulator's calibration figures in real time and compare them with the
    /// published reference reports (exit 1 if any is off by more than 15%).
    Calibrate(CalibrateArgs),
    /// Write one HTML file holding the viewer and the reports, that opens anywhere, offline.
    Export(crate::export::ExportArgs),
    /// Print a shell completion script (see the README for where it goes).
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `infermeter man | man -l -`.
    Man(ManArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum)]
pub enum Api {
    /// `/v1/chat/completions` (the chat template counts toward input tokens).
    Chat,
    /// `/v1/completions` (raw prompt).
    Completions,
}

impl Api {
    pub fn label(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Completions => "completions",
        }
    }

    /// The endpoint's path under the API base.
    pub fn path(self) -> &'static str {
        match self {
            Api::Chat => "chat/completions",
            Api::Completions => "completions",
        }
    }
}

/// How the measured requests reuse connections (AIPerf's `--connection-reuse-strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConnectionReuse {
    /// Keep connections alive and reuse them across requests, as most clients do.
    Pooled,
    /// A new connection for every request, closed after its response.
    Never,
}

impl ConnectionReuse {
    /// The name written to the report (`measurement.connection_reuse`).
    pub fn label(self) -> &'static str {
        match self {
            ConnectionReuse::Pooled => "pooled",
            ConnectionReuse::Never => "never",
        }
    }
}

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
    /// Replay this JSONL trace (Mooncake's format, or the generic one with sessions) instead
    /// of a suite: open-loop at the times it records.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
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
    #[arg(long, value_enum)]
    pub api: Option<Api>,
    /// Engine adapter (request extras, metric names); `auto` detects it.
    #[arg(long, value_enum, default_value_t = EngineKind::Auto)]
    pub engine: EngineKind,
    /// Shrink the suite for a smoke run: fewer levels and requests, same token lengths.
    #[arg(long)]
    pub quick: bool,
    /// Overwrite an existing report.
    #[arg(long)]
    pub force: bool,
    /// Continue a partial run: keep its records and skip the levels it completed.
    #[arg(long)]
    pub resume: bool,
    /// Repeat every level N times and report 95% confidence intervals.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub trials: u32,
    /// Load modes to run, of those the suite defines (default: all of them).
    #[arg(long, value_delimiter = ',', value_enum)]
    pub modes: Vec<ModeName>,
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
    #[arg(long, default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Reuse connections across requests (pooled) or open one per request (never). A request
    /// that fails on a reused connection before any response byte (the server had closed it)
    /// goes again, once, on a new one; its record says so.
    #[arg(long, value_enum, default_value_t = ConnectionReuse::Pooled)]
    pub connection_reuse: ConnectionReuse,
    /// Time allowed until the first token, seconds (long contexts prefill for minutes).
    #[arg(long, default_value_t = 1800.0)]
    pub first_token_timeout: f64,
    /// Time allowed for a whole request, seconds.
    #[arg(long, default_value_t = 7200.0)]
    pub total_timeout: f64,
    /// After Ctrl-C, how long in-flight requests may finish, seconds.
    #[arg(long, default_value_t = 5.0)]
    pub grace: f64,
    /// GPU power source: auto, nvml, nvidia-smi, none, or a DCGM exporter URL.
    #[arg(long, default_value = "auto")]
    pub power: crate::power::PowerSource,
    /// Server metrics URL (default: `/metrics` next to the base URL).
    #[arg(long)]
    pub metrics_url: Option<String>,
    /// Service-level objective, recorded in the report: what search mode aims at and what
    /// `summary` and the viewer judge goodput by, e.g. `ttft=5s,tpot=50ms,e2e=30s,stall=0`
    /// (`decode=20` for 20 tok/s; `target=95%` is the share of requests that must meet it).
    #[arg(long, value_name = "SPEC", value_parser = crate::slo_spec::parse_slo)]
    pub slo: Option<infermeter_report::Slo>,
    /// Search mode: instead of the suite's levels, find the highest concurrency at which the
    /// SLO's share of requests meets it (doubling, then bisection), per scenario. Settings
    /// `mode=peak|burst,min=1,max=256,resolution=0.1` override the suite's `[search]`.
    #[arg(long, value_name = "SPEC", num_args = 0..=1, default_missing_value = "",
        value_parser = crate::slo_spec::SearchSpec::parse)]
    pub search: Option<crate::slo_spec::SearchSpec>,
    #[command(flatten)]
    pub shard: crate::shard::ShardArgs,
}

impl RunArgs {
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.connect_timeout)
    }
    pub fn first_token_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.first_token_timeout)
    }
    pub fn total_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.total_timeout)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeName {
    Peak,
    Burst,
    Rate,
    Users,
    Sessions,
    Trace,
}

fn parse_slice(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("\"{s}\" is not a positive number of seconds")),
    }
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

#[derive(Debug, Clone, Args)]
pub struct SummaryArgs {
    pub report: PathBuf,
    /// Machine-readable output: every figure the report page states, as JSON.
    #[arg(long)]
    pub json: bool,
    /// Which figure of each distribution to read, as the viewer's Statistic selector: mean,
    /// p50, p90, p95, p99, p99.9, min or max.
    #[arg(long, default_value = "mean", value_parser = parse_stat)]
    pub stat: infermeter_report::Stat,
    /// TTFT threshold for the max safe queue depth, seconds.
    #[arg(long, default_value_t = infermeter_report::analysis::DEFAULT_TTFT_THRESHOLD_S)]
    pub ttft_threshold: f64,
    /// Electricity price for the energy costs, dollars per kWh.
    #[arg(long, default_value_t = infermeter_report::analysis::cost::DEFAULT_USD_PER_KWH)]
    pub usd_per_kwh: f64,
    /// The SLO to judge goodput by, as `run --slo` takes it (default: the one the run
    /// recorded, else TTFT 5 s and TPOT 50 ms for 95% of requests).
    #[arg(long, value_name = "SPEC", value_parser = crate::slo_spec::parse_slo)]
    pub slo: Option<infermeter_report::Slo>,
}

fn parse_stat(s: &str) -> Result<infermeter_report::Stat, String> {
    infermeter_report::Stat::parse(s).ok_or_else(|| {
        let all: Vec<&str> = infermeter_report::Stat::ALL
            .iter()
            .map(|s| s.label())
            .collect();
        format!("\"{s}\" is not a statistic; use one of {}", all.join(", "))
    })
}

#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    pub report: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct BenchTimingArgs {
    /// Concurrent streams to measure at.
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 100, 1000])]
    pub streams: Vec<u32>,
    /// Output tokens per stream.
    #[arg(long, default_value_t = 64)]
    pub tokens: u32,
}

#[derive(Debug, Clone, Args)]
pub struct BenchSoakArgs {
    /// Concurrent streams (each level is a peak level of this many).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    pub streams: u32,
    /// How long the collector runs before it is killed, minutes.
    #[arg(long, default_value_t = 10.0)]
    pub minutes: f64,
    /// Shortest duration of each level, seconds: a level keeps its records until it ends.
    #[arg(long, default_value_t = 60.0)]
    pub level_seconds: f64,
    /// Seconds between two readings of the collector's memory.
    #[arg(long, default_value_t = 10.0)]
    pub sample_seconds: f64,
    /// Memory growth compares the peak of the window that starts here, seconds, with the peak
    /// of the last window.
    #[arg(long, default_value_t = 60.0)]
    pub baseline_seconds: f64,
    /// The length of those two windows, seconds: at least one level's rise and fall (a level
    /// of 60 s lasts about 75 with its last requests).
    #[arg(long, default_value_t = 90.0)]
    pub window_seconds: f64,
    /// Input and output tokens of every request.
    #[arg(long, default_value_t = 128)]
    pub input_tokens: u32,
    #[arg(long, default_value_t = 64)]
    pub output_tokens: u32,
    /// Extra simulated time of every engine step, milliseconds: the tokens each stream gets per
    /// second, and so the events per second the collector reads (2,000 streams at 100 ms: at
    /// most 20,000 events/s).
    #[arg(long, default_value_t = 100.0)]
    pub step_ms: f64,
    /// Where the suite, report, records and the collector's log go (default: infermeter-soak
    /// in the temp directory).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// One request per slot and no workload of over 100K input tokens (about a minute).
    #[arg(long)]
    pub quick: bool,
    /// Where the runs' reports go (default: infermeter-calibrate in the temp directory).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write infermeter.1 and a page per subcommand (infermeter-run.1, …) into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn options_are_consistent() {
        Opts::command().debug_assert();
    }

    #[test]
    fn labels_parse() {
        assert_eq!(parse_label("a = b").unwrap(), ("a".into(), "b".into()));
        assert!(parse_label("nokey").is_err());
        assert!(parse_label("=v").is_err());
    }
}
