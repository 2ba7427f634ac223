//! Weka / SemiAnalysis cc-traces (Claude Code sessions captured through a proxy, the corpus
//! AIPerf's AgentX scenario replays): one JSON object per trace, a folder of `*.json` files or
//! one file, read into a [`JobSet`] (a job per trace).
//!
//! A trace: `id`, `models`, `block_size` (64), optionally `hash_id_scope` ("local"),
//! `tool_tokens`, `system_tokens`, `totals`, and `requests` in order. A request is a call
//! (`type` `"n"` or `"s"`, streamed or not: both are sent streamed here) with `t` (seconds from
//! the trace's start), `in`, `out`, `hash_ids` (blocks of `block_size` tokens, scoped to the
//! trace), `think_time` and `api_time` (seconds, optional), `stop`, `model`; or a subagent
//! (`type` `"subagent"`, with `agent_id`, `status` and its own `requests`, which may hold
//! subagents in turn). A subagent is a child agent spawned after its parent's preceding call
//! (with its parent where none precedes it) and joined by the parent's following call; one with
//! no following call, or with `status` `"async_launched"`, runs in the background (no call
//! waits for it). Models named in the trace are ignored: every call goes to the model measured.
//! Fields this reader does not use are allowed (the corpus adds some between releases).
//!
//! A call's `wait_ms` is, by [`Timing`], the gap the trace recorded between what the call
//! waited for (its agent's previous reply, `t + api_time`, and the joined children's last
//! replies; its spawn, `t` of the subagent entry, for a child's first call) and its send, or
//! its `think_time`. Files that are malformed, truncated or of another format are refused
//! before anything is sent, naming the file, the entry (`requests[3].requests[1]`) and what
//! is wrong.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::jobs::{Agent, Call, Job, JobSet};

/// Tokens per block of cc-traces' `hash_ids`.
pub const CC_BLOCK_TOKENS: u32 = 64;

/// Which recorded time a call waits before it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timing {
    /// The gap the trace recorded between what the call waited for and its send.
    #[default]
    Trace,
    /// The client's own `think_time` only (0 where the trace has none).
    ThinkOnly,
}

/// Why a cc-traces file cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum CcTraceError {
    #[error("cannot read cc-traces {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    #[error("cc-traces folder {} holds no *.json trace", .0.display())]
    Empty(PathBuf),
    #[error("cc-traces file {}, {entry}: {message} (a cc-traces trace is one JSON object with `requests`, each a call of `t`, `type` \"n\" or \"s\", `in`, `out`, `hash_ids`, or a `type` \"subagent\" with its own `requests`)", .file.display())]
    Entry {
        file: PathBuf,
        entry: String,
        message: String,
    },
}

/// Reads a cc-traces trace file, or every `*.json` of a folder in name order, a job each.
pub fn read(path: &Path, timing: Timing) -> Result<JobSet, CcTraceError> {
    let files = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| CcTraceError::Read(path.into(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(CcTraceError::Empty(path.into()));
        }
        files
    } else {
        vec![path.to_path_buf()]
    };
    let jobs = files
        .iter()
        .map(|file| read_file(file, timing))
        .collect::<Result<Vec<Job>, _>>()?;
    Ok(JobSet {
        jobs,
        block_tokens: CC_BLOCK_TOKENS,
    })
}

/// One trace file, a job.
fn read_file(file: &Path, timing: Timing) -> Result<Job, CcTraceError> {
    let text = std::fs::read_to_string(file).map_err(|e| CcTraceError::Read(file.into(), e))?;
    let bad = |entry: &str, message: String| CcTraceError::Entry {
        file: file.into(),
        entry: entry.into(),
        message,
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| bad("the file", format!("not valid JSON (truncated?): {e}")))?;
    let job = parse_trace(&value, timing).map_err(|(entry, message)| bad(&entry, message))?;
    // The reader builds trees the player accepts; a broken one is this reader's bug, named.
    job.check().map_err(|e| bad("the trace", e.to_string()))?;
    let name = job.name.clone();
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
    Ok(Job {
        name: if name.is_empty() {
            stem.unwrap_or_default()
        } else {
            name
        },
        ..job
    })
}

/// A failure: the entry's path in the trace and what is wrong with it.
type Bad = (String, String);

/// A trace's job (its name empty when the trace has no `id`).
fn parse_trace(v: &Value, timing: Timing) -> Result<Job, Bad> {
    let top = |m: &str| ("the trace".to_string(), m.to_string());
    let obj = v
        .as_object()
        .ok_or_else(|| top("is not a JSON object: not a cc-traces trace"))?;
    let requests = obj
        .get("requests")
        .ok_or_else(|| top("has no `requests`: not a cc-traces trace"))?;
    if let Some(size) = obj.get("block_size") {
        if size.as_u64() != Some(u64::from(CC_BLOCK_TOKENS)) {
            return Err(top(&format!(
                "`block_size` is {size}; only cc-traces' {CC_BLOCK_TOKENS}-token blocks are read"
            )));
        }
    }
    match obj.get("hash_id_scope").map(|s| s.as_str()) {
        None | Some(Some("local")) => {}
        Some(Some("global")) => return Err(top("`hash_id_scope` \"global\" (blocks shared across traces) is not supported: each trace's blocks are its own")),
        Some(other) => return Err(top(&format!("`hash_id_scope` is {other:?}, neither \"local\" nor \"global\""))),
    }
    let name = match obj.get("id") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => return Err(top(&format!("`id` is {other}, not a string"))),
    };
    let mut agents = vec![Agent::root()];
    walk(requests, "requests", 0, 0.0, timing, &mut agents)?;
    Ok(Job {
        name,
        agents,
        offset_ms: None,
    })
}

/// Reads agent `me`'s `requests` (at `path`) into its calls and its children, the agent having
/// started `start_s` into the trace; returns when its last reply, and its children's, came.
fn walk(
    requests: &Value,
    path: &str,
    me: usize,
    start_s: f64,
    timing: Timing,
    agents: &mut Vec<Agent>,
) -> Result<f64, Bad> {
    let list = requests
        .as_array()
        .ok_or_else(|| (path.to_string(), "is not a list".to_string()))?;
    if list.is_empty() {
        return Err((path.to_string(), "holds no request".to_string()));
    }
    // When the agent's previous reply came, and the recorded ends of the children the next
    // call joins.
    let mut ready_s = start_s;
    let mut joined_end_s = start_s;
    let mut last_t = start_s;
    let mut end_s = start_s;
    let mut waiting: Vec<usize> = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let here = format!("{path}[{i}]");
        let bad = |m: String| (here.clone(), m);
        let kind = entry
            .get("type")
            .ok_or_else(|| bad("has no `type`".into()))?;
        let t = seconds(entry, "t", true).map_err(bad)?.unwrap_or(0.0);
        if t < last_t {
            return Err(bad(format!(
                "`t` {t} comes before {last_t}, the previous entry's (or its agent's spawn): entries must be in order"
            )));
        }
        last_t = t;
        match kind.as_str() {
            Some("n" | "s") => {
                let call = parse_call(entry, t, ready_s.max(joined_end_s), timing).map_err(bad)?;
                let index = agents[me].calls.len();
                for child in waiting.drain(..) {
                    agents[child].joined_by = Some(index);
                }
                let api = seconds(entry, "api_time", false).map_err(bad)?;
                ready_s = t + api.unwrap_or(0.0);
                joined_end_s = ready_s;
                end_s = end_s.max(ready_s);
                agents[me].calls.push(call);
            }
            Some("subagent") => {
                let (child, child_end) = subagent(entry, &here, me, t, timing, agents)?;
                end_s = end_s.max(child_end);
                let background =
                    entry.get("status").and_then(Value::as_str) == Some("async_launched");
                if !background {
                    joined_end_s = joined_end_s.max(child_end);
                    waiting.push(child);
                }
            }
            _ => {
                return Err(bad(format!(
                    "`type` is {kind}, not \"n\", \"s\" or \"subagent\""
                )))
            }
        }
    }
    if agents[me].calls.is_empty() {
        return Err((path.to_string(), "holds subagents but no call".into()));
    }
    Ok(end_s)
}

/// The subagent `entry` (at `here`) of agent `me`, spawned `t` seconds into the trace, read
/// into a child and its own children: the child's index and when its tree's last reply came.
fn subagent(
    entry: &Value,
    here: &str,
    me: usize,
    t: f64,
    timing: Timing,
    agents: &mut Vec<Agent>,
) -> Result<(usize, f64), Bad> {
    let child = agents.len();
    agents.push(Agent {
        parent: Some(me),
        depth: agents[me].depth + 1,
        spawned_after: agents[me].calls.len().checked_sub(1),
        joined_by: None,
        calls: Vec::new(),
    });
    let inner = entry.get("requests").ok_or_else(|| {
        (
            here.to_string(),
            "is a subagent without `requests`".to_string(),
        )
    })?;
    let end = walk(inner, &format!("{here}.requests"), child, t, timing, agents)?;
    Ok((child, end))
}

/// A call entry, sent `t` seconds into the trace, after what it waits for came at `ready_s`.
fn parse_call(entry: &Value, t: f64, ready_s: f64, timing: Timing) -> Result<Call, String> {
    let tokens = |key: &str| -> Result<u32, String> {
        let v = entry
            .get(key)
            .ok_or_else(|| format!("has no `{key}` (tokens)"))?;
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("`{key}` is {v}, not a whole number of tokens"))
    };
    let input_tokens = tokens("in")?;
    let output_tokens = tokens("out")?;
    if input_tokens == 0 {
        return Err("`in` is 0: a call needs a prompt".into());
    }
    let blocks = match entry.get("hash_ids") {
        None => Vec::new(),
        Some(v) => v
            .as_array()
            .and_then(|ids| ids.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
            .ok_or_else(|| format!("`hash_ids` is {v}, not a list of non-negative integers"))?,
    };
    let think = seconds(entry, "think_time", false)?;
    let wait_s = match timing {
        Timing::Trace => (t - ready_s).max(0.0),
        Timing::ThinkOnly => think.unwrap_or(0.0),
    };
    Ok(Call {
        input_tokens,
        output_tokens,
        wait_ms: wait_s * 1e3,
        offset_ms: Some(t * 1e3),
        blocks,
    })
}

/// Field `key` of `entry` in seconds: a finite, non-negative number; `None` when absent or
/// null (an error when `required`).
fn seconds(entry: &Value, key: &str, required: bool) -> Result<Option<f64>, String> {
    match entry.get(key) {
        None | Some(Value::Null) if required => Err(format!("has no `{key}` (seconds)")),
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(s) if s.is_finite() && s >= 0.0 => Ok(Some(s)),
            _ => Err(format!(
                "`{key}` is {v}, not a non-negative number of seconds"
            )),
        },
    }
}

#[cfg(test)]
mod tests;
