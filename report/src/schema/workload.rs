//! What multi-turn sessions, trace replays and the per-level timelines add to the report: the
//! shape of a session scenario, where a replayed trace came from, per-turn and per-slice figures
//! of a level, and the session fields of a record. Plain data, like the rest of the schema.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stats::Distribution;

/// Whether a series let the engine's prefix cache reuse what earlier requests computed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CacheUse {
    /// Each turn sends the conversation as the engine saw it before (shared system prompt,
    /// earlier turns, the answers as received), so a prefix cache can skip their prefill.
    Allowed,
    /// Each request starts with a unique prefix, so no cache can help: every turn is prefilled
    /// in full, as an engine without prefix caching would.
    Defeated,
}

impl CacheUse {
    pub fn label(self) -> &'static str {
        match self {
            CacheUse::Allowed => "caching allowed",
            CacheUse::Defeated => "caching defeated",
        }
    }

    /// Short id for keys and file names: "allowed", "defeated".
    pub fn id(self) -> &'static str {
        match self {
            CacheUse::Allowed => "allowed",
            CacheUse::Defeated => "defeated",
        }
    }
}

/// A multi-turn conversation: the first turn's context, what each later turn adds and how long
/// the user thinks between a reply and the next turn. The scenario's `input_tokens` is the first
/// turn's context (system prompt and first message), `output_tokens` the reply of every turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionShape {
    /// Tokens of the system prompt that every user and every session shares (0: none).
    #[serde(default)]
    pub system_prompt_tokens: u32,
    /// Tokens of the user's first message.
    pub first_turn_tokens: u32,
    /// Tokens of the user's message in each later turn; the previous answer joins the context
    /// before it, as the engine saw it streamed.
    pub turn_tokens: u32,
    /// Turns per session.
    pub turns: u32,
    /// Between a reply's end and the user's next turn.
    pub think_time: ThinkTime,
}

/// How long a user thinks (reads, runs tools) between a reply and the next turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "distribution", rename_all = "snake_case", deny_unknown_fields)]
// The wasm reads it without serde's buffer (schema/from_value.rs).
#[cfg_attr(target_arch = "wasm32", serde(try_from = "serde_json::Value"))]
pub enum ThinkTime {
    /// Always `seconds`.
    Fixed { seconds: f64 },
    /// Exponential with mean `mean_s` (memoryless: most pauses short, a few long).
    Exponential { mean_s: f64 },
    /// Lognormal with mean `mean_s` and shape `sigma` (the spread of log-times): a long tail.
    Lognormal { mean_s: f64, sigma: f64 },
}

impl ThinkTime {
    /// The mean pause, seconds.
    pub fn mean_s(&self) -> f64 {
        match *self {
            ThinkTime::Fixed { seconds } => seconds,
            ThinkTime::Exponential { mean_s } | ThinkTime::Lognormal { mean_s, .. } => mean_s,
        }
    }

    /// The pause for a uniform draw `u` in [0, 1) and, for the lognormal, a standard normal
    /// draw `z`; seconds, never negative.
    pub fn sample(&self, u: f64, z: f64) -> f64 {
        let s = match *self {
            ThinkTime::Fixed { seconds } => seconds,
            ThinkTime::Exponential { mean_s } => -(1.0 - u).ln() * mean_s,
            // mean = exp(mu + sigma^2 / 2), so mu = ln(mean) - sigma^2 / 2.
            ThinkTime::Lognormal { mean_s, sigma } => {
                (mean_s.ln() - sigma * sigma / 2.0 + sigma * z).exp()
            }
        };
        s.max(0.0)
    }

    /// The same distribution with its mean scaled to at most `max_mean_s` (a smoke run).
    pub fn capped(self, max_mean_s: f64) -> ThinkTime {
        let factor = if self.mean_s() > max_mean_s {
            max_mean_s / self.mean_s()
        } else {
            1.0
        };
        match self {
            ThinkTime::Fixed { seconds } => ThinkTime::Fixed {
                seconds: seconds * factor,
            },
            ThinkTime::Exponential { mean_s } => ThinkTime::Exponential {
                mean_s: mean_s * factor,
            },
            ThinkTime::Lognormal { mean_s, sigma } => ThinkTime::Lognormal {
                mean_s: mean_s * factor,
                sigma,
            },
        }
    }
}

/// Where a replayed trace came from. The scenario's `input_tokens` and `output_tokens` are the
/// trace's means, rounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceSource {
    /// The trace file's name.
    pub file: String,
    /// "mooncake" (`timestamp`, `input_length`, `output_length`, `hash_ids`) or "generic"
    /// (with `session_id` and `turn`).
    pub format: String,
    /// Requests (lines) in the trace.
    pub requests: u64,
    /// From the first to the last scheduled request at speed 1, seconds.
    pub duration_s: f64,
    /// Tokens per shared prompt block (`hash_ids`): 512 for Mooncake.
    pub block_tokens: u32,
    /// Prompt tokens the trace's shared blocks let a prefix cache skip (blocks seen in an
    /// earlier line), over all prompt tokens: the cache-hit ratio the trace implies.
    pub shared_block_ratio: f64,
}

/// A request's place in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionTurn {
    /// The session, unique within its level (a user's sessions are numbered after each other).
    pub id: u64,
    /// 1-based turn within the session.
    pub turn: u32,
}

/// Cached prompt tokens against all prompt tokens, over the requests that reported both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PromptCache {
    /// Successful requests that reported a cached count.
    pub requests: u64,
    /// Their prompt tokens.
    pub prompt_tokens: u64,
    /// Their prompt tokens served from the engine's prefix cache.
    pub cached_tokens: u64,
}

impl PromptCache {
    /// Cached over prompt tokens, 0..1; `None` without prompt tokens.
    pub fn hit_ratio(&self) -> Option<f64> {
        (self.prompt_tokens > 0).then(|| self.cached_tokens as f64 / self.prompt_tokens as f64)
    }
}

/// The session side of a users or sessions level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionLevel {
    /// Sessions that sent at least one turn.
    pub started: u64,
    /// Sessions whose every turn succeeded.
    pub completed: u64,
    /// Arrival rate of new sessions, per second (sessions mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_rate: Option<f64>,
    /// Figures of each turn index, ascending.
    pub turns: Vec<TurnStats>,
}

/// Successful requests of one turn index at a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnStats {
    /// 1-based.
    pub turn: u32,
    /// Successful requests of this turn.
    pub ok: u64,
    /// Failed requests of this turn.
    pub failed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<Distribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
}

/// A trace replayed at one speed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceLevel {
    /// Time compression: 2 sends the trace's requests twice as fast as recorded.
    pub speed: f64,
}

/// A level's figures in fixed time slices from its start, so warm-up, drift and cache fill
/// show. With several trials, slices pool the trials at the same offset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timeline {
    /// Slice length, seconds.
    pub slice_s: f64,
    pub slices: Vec<TimelineSlice>,
}

/// One slice of a [`Timeline`]. Requests count in the slice they finished in (completions,
/// errors) or started in (TTFT, cache); tokens in the slice they arrived in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimelineSlice {
    /// Seconds from the level start.
    pub start_s: f64,
    /// Successful requests that finished in the slice.
    pub completed: u64,
    /// Failed requests that finished in the slice.
    pub errors: u64,
    /// Output tokens that arrived in the slice.
    pub output_tokens: u64,
    /// TTFT of the successful requests started in the slice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<Distribution>,
    /// Cached prompt tokens of the successful requests started in the slice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
}
