//! Agentic jobs in the schema: where an agents scenario's jobs came from ([`AgentSource`]),
//! each call's place in its job ([`AgentCall`], on its record), and a level's figures per job
//! ([`AgentsLevel`], built from the records by `aggregate`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stats::Distribution;

/// Where an agents scenario's jobs came from and their shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentSource {
    /// The trace file or folder's name, or "generated".
    pub source: String,
    /// "cc-traces" (Weka / SemiAnalysis), or another reader's or the generator's name.
    pub format: String,
    /// Jobs in the set (a level plays them in turn).
    pub jobs: u64,
    /// Agents and calls over every job.
    pub agents: u64,
    pub calls: u64,
    /// The deepest agent's depth (0: no subagents).
    pub max_depth: u32,
    /// Tokens per shared prompt block: 64 for cc-traces.
    pub block_tokens: u32,
    /// What a call waits before it is sent: "trace" (the recorded gap, scaled and capped),
    /// "think" (the recorded think time) or "none".
    pub timing: String,
}

/// A call's place in its agentic job (agents mode): a job is a tree of agents, each a
/// sequence of calls; a child agent starts after its parent's call `spawned_after` has its
/// whole reply and the parent's call `joined_by` waits for it to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentCall {
    /// The job, unique within its level (its number in the level's plays).
    pub job: u64,
    /// The agent within its job: 0 is the root, a parent comes before its children.
    pub agent: u32,
    /// The parent agent; none for the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// 0 for the root, its parent's + 1 for a child.
    pub depth: u32,
    /// The call's index among its agent's calls, from 0.
    pub call: u32,
    /// The parent's call after whose reply the agent started; none: it started with its parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawned_after: Option<u32>,
    /// The parent's call that waited for the agent to finish; none: the root, or an agent run
    /// in the background (its job still lasted until it finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined_by: Option<u32>,
}

/// An agents level's figures, job by job and over its jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentsLevel {
    /// Every job the level played, every trial, in order of start.
    pub jobs: Vec<JobFigures>,
    /// Wall time of the jobs whose calls all succeeded, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_s: Option<Distribution>,
    /// Calls per job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_job: Option<Distribution>,
    /// Jobs completed (all calls succeeded) per hour of the level's time.
    pub jobs_per_hour: f64,
    /// Job-rate levels: the jobs offered per second (since 1.6.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_rate: Option<f64>,
    /// Cached against prompt tokens of the successful calls, by agent depth (0: the roots).
    pub cache_by_depth: Vec<DepthCache>,
    /// The calls of one job as played, to draw it: the level's job of median wall time among
    /// those whose calls all succeeded (among all its jobs when none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_job: Option<SampleJob>,
}

/// One job's calls with their times, for the viewer's swim lanes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SampleJob {
    /// Its trial and its number in the level ([`AgentCall::job`]).
    pub trial: u32,
    pub job: u64,
    /// Its first send, seconds after the level's start, and its wall time.
    pub start_s: f64,
    pub wall_s: f64,
    /// Every call, by agent then call.
    pub calls: Vec<SampleCall>,
}

/// One call of a [`SampleJob`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SampleCall {
    /// Its place in the job.
    pub place: AgentCall,
    /// Sent, and its last token (or failure), seconds after the job's start.
    pub sent_s: f64,
    pub end_s: f64,
    /// Time to its first token, seconds; none when none came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    pub ok: bool,
}

/// One job as played: its wall time and where it went on its root agent's lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobFigures {
    /// Its trial and its number in the level ([`AgentCall::job`]).
    pub trial: u32,
    pub job: u64,
    /// Calls sent, agents and the deepest agent's depth.
    pub calls: u32,
    pub agents: u32,
    pub max_depth: u32,
    /// Whether every call succeeded.
    pub ok: bool,
    /// From its first call's send to its last reply (background agents included), seconds after
    /// the level's start.
    pub start_s: f64,
    pub wall_s: f64,
    /// The wall time split on the root agent's lane (they sum to `wall_s`): its calls in flight
    /// (`engine_s`), waiting for the children a call joins or, after its last call, for the
    /// background ones (`children_s`), and the rest, tool and think time (`tools_s`).
    pub engine_s: f64,
    pub children_s: f64,
    pub tools_s: f64,
    /// The chain of calls that set the job's end, first to last, each after the one before it
    /// replied: `(agent, call)`.
    pub critical_path: Vec<(u32, u32)>,
    /// The critical path's calls in flight, seconds (the rest of `wall_s` is waits on it).
    pub critical_engine_s: f64,
}

/// Cached against prompt tokens at one agent depth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DepthCache {
    pub depth: u32,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
}
