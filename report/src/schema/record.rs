//! One request as the records file (JSONL) holds it, its outcome and errors, and the shards a
//! sharded run's parts record.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::agents::AgentCall;
use super::outcome::{Outcome, Retried};
use super::prompts::AskedLengths;
use super::series::LoadMode;
use super::workload::{CacheUse, SessionTurn};

/// One request, as written to the JSONL records file (one object per line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestRecord {
    pub scenario: String,
    pub mode: LoadMode,
    pub concurrency: u32,
    /// Trial index (0 unless repeat trials were asked for).
    #[serde(default)]
    pub trial: u32,
    /// Sequence number within the level.
    pub index: u64,
    /// Warmup requests are recorded but excluded from statistics.
    #[serde(default)]
    pub warmup: bool,
    /// False when outside the steady-state window of a peak level.
    #[serde(default = "yes")]
    pub in_window: bool,
    pub outcome: Outcome,
    /// Seconds from the level start to the scheduled start of the request.
    pub scheduled_s: f64,
    /// Seconds from the level start to when the request was actually sent.
    pub sent_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Arrival time of each content-carrying event, seconds after sending, with its token count.
    /// With running counts, tokens that decode to no text count on the next content event, or
    /// on the final event that reported them when none follows: the counts add up to
    /// `output_tokens`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<ChunkArrival>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_wait_s: Option<f64>,
    /// Engine-reported timings (e.g. llama.cpp), passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_timings: Option<EngineTimings>,
    /// Set when the request was sent twice: its first attempt failed on a reused connection
    /// before any response byte, so it never reached the engine, and the second went on a new
    /// connection. `sent_s` and the latencies are the second attempt's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<Retried>,
    /// The request's session and turn (users and sessions modes, traces with sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionTurn>,
    /// Whether the request's series let the prefix cache help (session series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// Seconds from the start (as `ttft_s`) to the first answer token, after the reasoning;
    /// only for requests that streamed reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_s: Option<f64>,
    /// Reasoning tokens (`completion_tokens_details.reasoning_tokens`, else one per reasoning
    /// event); only for requests that streamed reasoning. Included in `output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// The response's `id` as the server named it, to find the request in the server's logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The shard that sent it, in a sharded run (see [`Sharding`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
    /// What it was asked, where its scenario has a prompt file or drawn lengths (since 1.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<AskedLengths>,
    /// Its place in its agentic job: job, agent, parent, depth, call (agents mode since 1.5.0,
    /// job_rate mode since 1.6.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentCall>,
}

/// A run whose load came from several client processes, each sending its share of every level
/// on one schedule, so that all enter and leave each level together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sharding {
    /// Shards in the run.
    pub count: u32,
    /// RFC 3339 time at which every shard began its schedule (`--start-at`).
    pub start_at: String,
    /// Seconds a peak level keeps its requests in flight (`--level-seconds`).
    pub level_seconds: f64,
    /// Seconds given to each level's requests to finish after its load, and to each scenario's
    /// warmup (`--drain-seconds`).
    pub drain_seconds: f64,
    /// In a shard's report, that shard; in a merged report, every shard in index order.
    pub shards: Vec<ShardPart>,
}

/// One shard of a sharded run: where it ran, its clock, and its part of every level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardPart {
    /// From 0 (Kubernetes' `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// Host name of the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The report file it was merged from (merged reports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub clock: ShardClock,
    /// Every level of the schedule in order, with this shard's share (zero included).
    pub levels: Vec<ShardLevel>,
}

/// What a shard knows of its clock. Shards align on their own wall clocks (CLOCK_REALTIME, kept
/// in step by NTP or the like); each compares its clock with the server's `Date` headers, so a
/// merge can tell when two shards' clocks disagree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardClock {
    /// The server's clock minus this host's, seconds: the middle of the interval the `Date`
    /// headers of `samples` responses allow. None when the server sent no `Date`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_offset_s: Option<f64>,
    /// Half the width of that interval: the offset is within ± this. `Date` has one-second
    /// resolution; samples sent at spread phases of the second narrow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_offset_bound_s: Option<f64>,
    #[serde(default)]
    pub samples: u32,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, seconds, when the shard mapped `start_at` onto its
    /// monotonic clock (every level start is placed through this mapping).
    pub realtime_minus_monotonic_s: f64,
    /// The same when the shard finished: a difference says the wall clock was stepped or
    /// slewed during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realtime_minus_monotonic_end_s: Option<f64>,
}

/// A shard's part of one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardLevel {
    pub scenario: String,
    pub mode: LoadMode,
    /// The level as its records name it (`RequestRecord::concurrency`): the whole run's
    /// concurrency in peak and burst mode, its users in users mode, the level's number in the
    /// open-loop modes (rate, sessions, trace).
    pub level: u32,
    /// Session levels: the series' cache use (a run measures a users level once per cache
    /// use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// The whole run's target arrival rate (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// Requests this shard kept in flight (peak), sent at once (burst), or its users (users).
    /// None in the open-loop modes, whose arrivals, sessions or trace lines are dealt out in
    /// turn (see `trials[].max_in_flight`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<u32>,
    /// One per trial.
    pub trials: Vec<ShardTrial>,
}

/// When a shard ran one trial of a level, and its measurement window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardTrial {
    /// Seconds after its scheduled start that the trial began: 0 on time, more when the
    /// shard's previous step ran over its time. Records and window count from the actual start.
    pub late_s: f64,
    /// Measurement window, seconds after the trial's start.
    pub window_start_s: f64,
    pub window_end_s: f64,
    /// Most requests this shard had in flight.
    pub max_in_flight: u32,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChunkArrival {
    /// Seconds after the request was sent.
    pub t: f64,
    /// Tokens carried by the event.
    pub tokens: u32,
}

/// Server-side per-request timings some engines report (llama.cpp's `timings`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineTimings {
    pub prompt_n: Option<u64>,
    pub prompt_ms: Option<f64>,
    pub predicted_n: Option<u64>,
    pub predicted_ms: Option<f64>,
    /// Prompt tokens reused from the engine's cache (llama.cpp `cache_n`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_n: Option<u64>,
}

impl RequestRecord {
    /// A successful measured request of `scenario` in `mode` (level 1, trial 0) with nothing
    /// timed or counted yet: the base that tests and tools fill in with struct update syntax,
    /// `RequestRecord { ttft_s: Some(0.1), ..RequestRecord::ok("chatbot", LoadMode::Peak, 0) }`,
    /// so a field added to records is added here once.
    pub fn ok(scenario: &str, mode: LoadMode, index: u64) -> RequestRecord {
        RequestRecord {
            scenario: scenario.into(),
            mode,
            concurrency: 1,
            trial: 0,
            index,
            warmup: false,
            in_window: true,
            outcome: Outcome::Ok,
            scheduled_s: 0.0,
            sent_s: 0.0,
            ttft_s: None,
            e2e_s: None,
            input_tokens: None,
            output_tokens: None,
            cached_tokens: None,
            chunks: Vec::new(),
            queue_wait_s: None,
            engine_timings: None,
            session: None,
            cache: None,
            first_answer_s: None,
            reasoning_tokens: None,
            response_id: None,
            retried: None,
            shard: None,
            asked: None,
            agent: None,
        }
    }
}
