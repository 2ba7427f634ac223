//! What was measured: scenarios, load modes, series and their levels with every figure.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::agents::{AgentSource, AgentsLevel};
use super::outcome::ErrorKind;
use super::prompts::{LengthPlan, PromptSource};
use super::workload::{
    CacheUse, PromptCache, SessionLevel, SessionShape, Timeline, TraceLevel, TraceSource,
};

pub use crate::stats::ConfidenceInterval;
use crate::stats::Distribution;

/// A workload shape: input and output lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scenario {
    /// Stable id used by series, e.g. "chatbot".
    pub id: String,
    /// Display name, e.g. "Chatbot".
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// A multi-turn conversation (users and sessions modes): `input_tokens` is its first turn's
    /// context, `output_tokens` each turn's reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionShape>,
    /// A replayed trace (trace mode): `input_tokens` and `output_tokens` are its means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSource>,
    /// Where the prompts came from, when a file (since 1.3.0): ShareGPT, JSONL or text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(deserialize_with = "unread"))]
    pub prompts: Option<PromptSource>,
    /// How each request's lengths were drawn, when they vary (since 1.3.0): `input_tokens` and
    /// `output_tokens` are then the means of what the run asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(deserialize_with = "unread"))]
    pub lengths: Option<LengthPlan>,
    /// Agentic jobs (agents mode, since 1.5.0): `input_tokens` and `output_tokens` are the
    /// means of their calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<AgentSource>,
}

impl Scenario {
    /// A scenario of single requests of `input_tokens` in and `output_tokens` out, with no
    /// sessions, trace, prompts, length plan or agents: the base that presets, importers, suites
    /// and tests complete with struct update syntax, so a field added to scenarios is added here
    /// once.
    pub fn single(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        input_tokens: u32,
        output_tokens: u32,
    ) -> Scenario {
        Scenario {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            input_tokens,
            output_tokens,
            session: None,
            trace: None,
            prompts: None,
            lengths: None,
            agents: None,
        }
    }

    /// Whether it sends single requests (the peak, burst and rate modes'), rather than
    /// conversations, a trace's lines or agentic jobs.
    pub fn is_single(&self) -> bool {
        self.session.is_none() && self.trace.is_none() && self.agents.is_none()
    }
}

/// Skips a field the viewer never reads (wasm32 only): the viewer shows a prompt file's and a
/// length plan's effects from the levels, and their parsers would weigh about 8 KB of its
/// download (gzip). `infermeter summary` and the collector read them in full.
#[cfg(target_arch = "wasm32")]
fn unread<'de, D: serde::Deserializer<'de>, T>(d: D) -> Result<Option<T>, D::Error> {
    serde::de::IgnoredAny::deserialize(d)?;
    Ok(None)
}

/// How load was applied.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LoadMode {
    /// Exactly N requests in flight: closed loop, a new one starts when one ends.
    Peak,
    /// N requests sent at once, then drained; requests queue in the engine.
    Burst,
    /// Open-loop arrivals at a fixed rate (constant or Poisson).
    Rate,
    /// N simultaneous users, each a closed loop of sessions: a turn, the reply, think time,
    /// the next turn. A level's `concurrency` is the number of users.
    Users,
    /// Open-loop session arrivals at a rate; each session's turns follow its replies with
    /// think time. `concurrency` is the most sessions active at once.
    Sessions,
    /// A recorded trace replayed open-loop at a speed; `concurrency` is the most requests in
    /// flight.
    Trace,
    /// N agentic jobs at once, each a tree of agents whose calls fork into subagents and join;
    /// a job holds its slot until its whole tree is done. `concurrency` is the number of jobs.
    Agents,
    /// Agentic jobs arriving open-loop at a rate (constant or Poisson), each running its whole
    /// tree, overlapping freely. `concurrency` is the most jobs in flight at once (since 1.6.0).
    JobRate,
}

impl LoadMode {
    /// Every mode, in the order a scenario's levels are planned and listed.
    pub const ALL: [LoadMode; 8] = [
        LoadMode::Peak,
        LoadMode::Burst,
        LoadMode::Rate,
        LoadMode::Users,
        LoadMode::Sessions,
        LoadMode::Trace,
        LoadMode::Agents,
        LoadMode::JobRate,
    ];

    /// Whether the mode is an open loop (rate, session arrivals, trace replay, job arrivals): its
    /// levels' `concurrency` is the most requests (sessions, jobs) they saw in flight, and their
    /// records
    /// number them from 1 instead.
    pub fn is_open_loop(self) -> bool {
        matches!(
            self,
            LoadMode::Rate | LoadMode::Sessions | LoadMode::Trace | LoadMode::JobRate
        )
    }

    /// Whether the mode plays agentic jobs (at a number at once, or arriving at a rate): its
    /// levels have agents figures and the page's Agents section shows them.
    pub fn plays_jobs(self) -> bool {
        matches!(self, LoadMode::Agents | LoadMode::JobRate)
    }

    /// The mode's name, as the report's JSON and the command line spell it.
    pub fn label(self) -> &'static str {
        match self {
            LoadMode::Peak => "peak",
            LoadMode::Burst => "burst",
            LoadMode::Rate => "rate",
            LoadMode::Users => "users",
            LoadMode::Sessions => "sessions",
            LoadMode::Trace => "trace",
            LoadMode::Agents => "agents",
            LoadMode::JobRate => "job_rate",
        }
    }
}

/// Arrival process for rate mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    Constant,
    Poisson,
}

/// One scenario under one load mode, measured at several levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    /// Id of a [`Scenario`] in the same report.
    pub scenario: String,
    pub mode: LoadMode,
    /// Rate and job-rate modes only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Levels in increasing order of load.
    pub levels: Vec<Level>,
    /// Session series: whether the engine's prefix cache could reuse earlier turns. A report
    /// may hold the same scenario and mode twice, once for each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
}

/// One measured load level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Level {
    /// Requests in flight (peak), queue depth (burst), or peak observed in flight (rate).
    pub concurrency: u32,
    /// Target arrival rate, requests per second (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// Measurement window, seconds.
    pub duration_s: f64,
    pub requests: RequestCounts,
    pub metrics: LevelMetrics,
    /// Output tokens per second summed over all requests in the window.
    pub system_output_tok_s: f64,
    /// Input tokens per second processed in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_input_tok_s: Option<f64>,
    /// Completed requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerMetrics>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientHealth>,
    /// Repeat trials of this level, when `--trials` > 1: the mean and a 95% confidence interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<TrialSummary>,
    /// Cached prompt tokens of the successful requests, when the engine reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    /// Users and sessions modes: sessions and the figures of each turn index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionLevel>,
    /// Trace mode: the replay's speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceLevel>,
    /// Agents mode: its jobs' figures (since 1.5.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<AgentsLevel>,
    /// The level in fixed time slices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// The level's measured requests one by one (since 1.2.0): what goodput under any SLO is
    /// computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request: Option<RequestColumns>,
}

impl Level {
    /// A level of `concurrency` with its window, outcomes, distributions and throughput, and
    /// nothing else: the base that importers, tools and tests complete with struct update
    /// syntax, so a field added to levels is added here once.
    pub fn new(
        concurrency: u32,
        duration_s: f64,
        requests: RequestCounts,
        metrics: LevelMetrics,
        system_output_tok_s: f64,
    ) -> Level {
        Level {
            concurrency,
            request_rate: None,
            duration_s,
            requests,
            metrics,
            system_output_tok_s,
            system_input_tok_s: None,
            requests_per_s: None,
            power: None,
            server: None,
            client: None,
            trials: None,
            prompt_cache: None,
            sessions: None,
            trace: None,
            agents: None,
            timeline: None,
            per_request: None,
        }
    }
}

/// Seconds per tick: the times of [`RequestColumns`] are whole tenths of a millisecond, finer
/// than the collector's timing error and short to write.
pub const TICK_S: f64 = 1e-4;

/// A stream pause longer than this is a stall, seconds: the default of
/// [`RequestColumns::stall_gap`].
pub const DEFAULT_STALL_GAP_S: f64 = 0.1;

/// The measured requests of a level, one entry per request and one array per figure (entry `i`
/// of every column is request `i`): the level's requests in its measurement window (warmups
/// and a peak level's ramp-up and drain left out), failed ones included, in the order they were
/// sent. Times are integers of [`TICK_S`] (0.1 ms: `52341` is 5.2341 s), so a request costs
/// about 31 bytes of JSON as the collector writes it, 8.5 gzipped (measured on the bundled
/// sample by `node tests/browser/bench-goodput.mjs`; README, "Headline figures").
///
/// Later versions add columns (a reader ignores those it does not know); each new column is
/// optional, so files without it stay valid. Every column holds one entry per request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestColumns {
    /// How each request ended: [`RequestColumns::OK`], [`RequestColumns::INCOMPLETE`] or
    /// [`RequestColumns::ERRORED`] (a failed request meets no SLO).
    pub status: Vec<u8>,
    /// Time to first token, ticks (0 for a request that received none). In rate mode from the
    /// scheduled start, as the level's distributions.
    pub ttft: Vec<u32>,
    /// End-to-end latency, ticks.
    pub e2e: Vec<u32>,
    /// Output tokens (0 when unknown).
    pub output_tokens: Vec<u32>,
    /// Longest pause between two content events of the stream, ticks (0 with fewer than two).
    /// This and the next two are empty when the stream's gaps were not recorded (since 1.3.0: a
    /// report imported from a tool that keeps no per-request gaps).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub max_gap: Vec<u32>,
    /// Pauses between content events longer than `stall_gap`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<u32>,
    /// The request's p99 pause over its median pause, in hundredths (100: an even stream; 0
    /// with fewer than two pauses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jitter: Vec<u32>,
    /// The pause beyond which a gap counts as a stall, ticks.
    pub stall_gap: u32,
    /// Input tokens (0 when unknown), since 1.3.0: only for levels whose requests were asked
    /// lengths of their own (a prompt file or drawn lengths); absent (empty) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_tokens: Vec<u32>,
}

impl RequestColumns {
    /// `status` of a request that completed with the full stream.
    pub const OK: u8 = 0;
    /// `status` of a request that streamed some output but did not finish.
    pub const INCOMPLETE: u8 = 1;
    /// `status` of a request that failed before or without output.
    pub const ERRORED: u8 = 2;

    /// Requests held.
    pub fn len(&self) -> usize {
        self.status.len()
    }

    pub fn is_empty(&self) -> bool {
        self.status.is_empty()
    }

    /// Whether the streams' gaps were recorded (`max_gap`, `stalls` and `jitter`).
    pub fn has_smoothness(&self) -> bool {
        !self.stalls.is_empty() || self.is_empty()
    }

    /// The columns by name with their lengths, for the validator (an optional column that is
    /// absent is not listed).
    pub fn column_lengths(&self) -> Vec<(&'static str, usize)> {
        let optional =
            (!self.input_tokens.is_empty()).then_some(("input_tokens", self.input_tokens.len()));
        let mut lengths = vec![
            ("status", self.status.len()),
            ("ttft", self.ttft.len()),
            ("e2e", self.e2e.len()),
            ("output_tokens", self.output_tokens.len()),
            ("max_gap", self.max_gap.len()),
            ("stalls", self.stalls.len()),
            ("jitter", self.jitter.len()),
        ];
        lengths.extend(optional);
        lengths
    }
}

/// Seconds as whole ticks ([`TICK_S`]), rounded; negative or non-finite as 0, and beyond
/// `u32` (119 hours) as its maximum.
pub fn to_ticks(seconds: f64) -> u32 {
    if seconds.is_finite() && seconds > 0.0 {
        (seconds / TICK_S).round().min(f64::from(u32::MAX)) as u32
    } else {
        0
    }
}

/// Request outcomes at a level. Errors never count as successes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestCounts {
    /// Completed with the full stream.
    pub ok: u64,
    /// Started streaming but did not finish (disconnect, stream closed early, timeout mid-stream).
    pub incomplete: u64,
    /// Failed before or without output (HTTP error, connect error, malformed stream, error event).
    pub errored: u64,
    /// How many failed requests (incomplete and errored) failed in each way.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_kinds: BTreeMap<ErrorKind, u64>,
}

impl RequestCounts {
    pub fn total(&self) -> u64 {
        self.ok + self.incomplete + self.errored
    }
}

/// Distributions of every per-request metric at a level. Times in seconds, speeds in tok/s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelMetrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<Distribution>,
    /// Per-token inter-token latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_s: Option<Distribution>,
    /// Gap between content-carrying stream events (differs from ITL when chunks hold several tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_chunk_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_s: Option<Distribution>,
    /// Per-user decode speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_tok_s: Option<Distribution>,
    /// Per-user prefill speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tok_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_wait_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<Distribution>,
    /// Time to the first answer token, after any reasoning (levels where reasoning streamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_s: Option<Distribution>,
    /// Reasoning tokens per request (levels where reasoning streamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<Distribution>,
}

/// GPU power during a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PowerStats {
    /// Mean total power of all GPUs, watts.
    pub mean_w: f64,
    pub max_w: f64,
    /// Energy over the window, joules.
    pub energy_j: f64,
    /// e.g. "nvml", "nvidia-smi", "dcgm-exporter".
    pub source: String,
    pub samples: u64,
}

/// Server-side figures scraped from `/metrics` (or engine timings) during a level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerMetrics {
    /// Mean request queue time from the engine's histogram, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time_mean_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_time_mean_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_time_mean_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<f64>,
    /// KV-cache usage, fraction 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_max: Option<f64>,
    /// Engine-reported per-request prefill speed (e.g. llama.cpp `timings`), tok/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_prefill_tok_s: Option<Distribution>,
    /// Engine-reported per-request decode speed, tok/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_decode_tok_s: Option<Distribution>,
    /// Which metric family was found: "vllm", "sglang", "tgi", "llamacpp".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Number of scrapes during the level.
    #[serde(default)]
    pub scrapes: u64,
}

/// The collector's own health during a level: if it lagged, its numbers may be distorted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientHealth {
    /// How late requests were sent versus their scheduled start, seconds (p99).
    pub scheduling_lag_p99_s: f64,
    /// Event-loop delay measured by a ticking probe, seconds (p99).
    pub event_loop_delay_p99_s: f64,
    /// True when the lag was large enough that the client may have distorted the level.
    pub distorted: bool,
    /// Which clock stamped the stream events of the level's requests: "kernel_receive" (the
    /// kernel's socket receive timestamp, immune to the client's parsing backlog), "parse" (when
    /// the client parsed the event) or "mixed". A string so later values load in older readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_clock: Option<String>,
    /// Requests sent a second time, on a new connection, because their first attempt failed on
    /// a reused connection before any response byte (see [`RequestRecord::retried`]). They are
    /// counted by their second attempt's outcome, never as failures of the first.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Mean and 95% confidence interval across repeat trials of a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialSummary {
    pub trials: u32,
    /// Metric name -> interval over trial means.
    pub intervals: BTreeMap<String, ConfidenceInterval>,
}

/// Where the per-request records are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordsLink {
    /// Path relative to the report file (or a URL).
    pub path: String,
    pub count: u64,
}
