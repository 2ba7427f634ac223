//! [`RunConfig`]: everything a measuring run is told, decided once (from the command line by
//! `commands::run`, or by a caller such as `calibrate`) and read by everything below. Plain
//! values only: no layer under the command line sees its options.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use infermeter_report::{Configuration, LoadMode, SearchSettings, Slo};

use crate::http::adapters::EngineKind;
use crate::http::api::ConnectionReuse;
use crate::http::api_key::KeySource;
use crate::http::driver::ExtraBody;
pub use crate::http::server::ServerConfig;
use crate::load::Part;
use crate::run::power::PowerSource;
use crate::run::stop::StopRequest;
use crate::suite::spec::{SearchSpec, SpecError};
use crate::suite::Suite;

/// A run: the server, the suite and how to measure it, where the results go.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub server: ServerConfig,
    /// The suite as it runs (`--quick` applied).
    pub suite: Suite,
    /// The load modes to run, of those the suite defines (empty: all of them).
    pub modes: Vec<LoadMode>,
    /// The report; its records go to `<out>.records.jsonl`.
    pub out: PathBuf,
    /// Overwrite an existing report.
    pub force: bool,
    /// Continue a partial run.
    pub resume: bool,
    /// Each level measured this many times.
    pub trials: u32,
    /// The length of the slices of each level's timeline, seconds.
    pub timeline_slice_s: f64,
    /// After a stop, how long in-flight requests may finish.
    pub grace: Duration,
    pub power: PowerSource,
    /// The SLO the report records (goodput is judged by it; a search aims at it).
    pub slo: Option<Slo>,
    /// Search mode: where to search, instead of the suite's levels (then `slo` is set).
    pub search: Option<SearchSettings>,
    /// This process's part of a sharded run.
    pub shard: Option<ShardConfig>,
    /// What the report says about the run beyond what the server tells.
    pub about: About,
    /// Progress bars on the terminal.
    pub show_progress: bool,
    /// A stop the caller may ask for besides Ctrl-C and SIGTERM (a sweep's, when the server
    /// it measures exits).
    pub stop_request: Option<StopRequest>,
}

/// A shard's part: which, from when, and the fixed step times every shard computes alike.
#[derive(Debug, Clone, Copy)]
pub struct ShardConfig {
    pub part: Part,
    pub start_at: SystemTime,
    /// Seconds a peak or users level keeps its load (default: the suite's peak `min_seconds`,
    /// at least 10).
    pub level_seconds: Option<f64>,
    /// Seconds each level is given after its load for its requests to finish.
    pub drain_seconds: f64,
}

/// What the report states about the deployment and the run that the server may not know.
#[derive(Debug, Clone, Default)]
pub struct About {
    pub title: Option<String>,
    pub labels: Vec<(String, String)>,
    pub gpu: Option<String>,
    pub gpu_count: Option<u32>,
    pub precision: Option<String>,
    /// The sweep's configuration this run measures.
    pub configuration: Option<Configuration>,
}

/// Why a run's SLO or search settings do not hold together.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--search: {0}")]
    Search(SpecError),
    #[error("search mode needs an SLO to aim at: pass --slo (e.g. --slo ttft=5s,tpot=50ms) or set slo in the suite's [search]")]
    SearchWithoutSlo,
    #[error("search mode cannot be sharded: each shard would choose the next level from its own share of the requests, and shards do not talk to one another (nor to a coordinator) during a run. Search from one host, then shard a run of the levels it found ([peak] levels in the suite)")]
    SearchSharded,
}

impl RunConfig {
    pub const DEFAULT_CONNECT_TIMEOUT_S: f64 = 10.0;
    pub const DEFAULT_FIRST_TOKEN_TIMEOUT_S: f64 = 1800.0;
    pub const DEFAULT_TOTAL_TIMEOUT_S: f64 = 7200.0;
    pub const DEFAULT_GRACE_S: f64 = 5.0;
    pub const DEFAULT_DRAIN_S: f64 = 60.0;

    /// A run of `suite` against `base_url` into `out` with every other setting at its default
    /// (as `infermeter run` has them without options).
    pub fn new(base_url: String, suite: Suite, out: PathBuf) -> RunConfig {
        RunConfig {
            server: ServerConfig {
                base_url,
                model: None,
                api: None,
                engine: EngineKind::Auto,
                api_key: KeySource::default(),
                tokenizer: None,
                metrics_url: None,
                connect_timeout: Duration::from_secs_f64(Self::DEFAULT_CONNECT_TIMEOUT_S),
                first_token_timeout: Duration::from_secs_f64(Self::DEFAULT_FIRST_TOKEN_TIMEOUT_S),
                total_timeout: Duration::from_secs_f64(Self::DEFAULT_TOTAL_TIMEOUT_S),
                connection_reuse: ConnectionReuse::Pooled,
                extra_body: ExtraBody::default(),
            },
            suite,
            modes: Vec::new(),
            out,
            force: false,
            resume: false,
            trials: 1,
            timeline_slice_s: infermeter_report::aggregate::DEFAULT_SLICE_S,
            grace: Duration::from_secs_f64(Self::DEFAULT_GRACE_S),
            power: PowerSource::default(),
            slo: None,
            search: None,
            shard: None,
            about: About::default(),
            show_progress: false,
            stop_request: None,
        }
    }

    /// Sets the SLO (`slo`, else the suite's `[search]` one) and, when the run searches
    /// (`search` given or the suite has a `[search]`), the search settings (`search` over the
    /// suite's). A search needs an SLO and cannot be sharded.
    pub fn settle_slo(
        &mut self,
        slo: Option<Slo>,
        search: Option<SearchSpec>,
    ) -> Result<(), ConfigError> {
        let suite_search = self.suite.search.clone().unwrap_or_default();
        let suite_slo = suite_search.slo().map_err(ConfigError::Search)?;
        self.slo = slo.or(suite_slo);
        if search.is_none() && self.suite.search.is_none() {
            return Ok(());
        }
        let base = suite_search.spec().map_err(ConfigError::Search)?;
        let settings = search
            .unwrap_or_default()
            .settle(&base)
            .map_err(ConfigError::Search)?;
        if self.slo.is_none() {
            return Err(ConfigError::SearchWithoutSlo);
        }
        if self.shard.is_some() {
            return Err(ConfigError::SearchSharded);
        }
        self.search = Some(settings);
        Ok(())
    }
}
