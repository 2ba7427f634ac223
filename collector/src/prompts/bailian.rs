//! Alibaba Bailian traces (alibaba-edu/qwen-bailian-usagetraces-anon: `qwen_traceA_blksz_16`,
//! `qwen_traceB_blksz_16`, `qwen_coder_blksz_16`, `qwen_thinking_blksz_16`) read as agentic
//! jobs. One JSON object per line: `chat_id` (a number or a string), `parent_chat_id` (`-1`,
//! `null` or absent for a chat that starts a conversation), `timestamp` (seconds from the
//! trace's start), `input_length`, `output_length`, `turn`, `type` and `hash_ids` (the
//! prompt's 16-token blocks, salted hashes numbered across the whole file).
//!
//! How the tree is built. In these traces a chat's parent is the request whose reply it
//! follows: the previous turn of the same conversation, or of the same automated task (trace
//! B's API callers). So:
//! - a root chat starts a job, its first agent's first call; the job starts at its timestamp;
//! - the first chat (by timestamp, then by line) whose parent is chat P is P's agent's next
//!   call: a follow-up turn, sent once P has its whole reply;
//! - a later chat with the same parent P (a branch: a regenerated answer, a task that fans out)
//!   cannot be the same agent's next call, which is taken; it starts a child agent spawned
//!   after P's call, one deeper, whose own follow-ups are its calls. Nothing in the trace says
//!   that any later call waited for it, so it runs in the background (`joined_by: None`): the
//!   job lasts until it finishes, no call waits for it.
//!
//! Timing: `Job::offset_ms` is the root's time after the first root's; `Call::offset_ms` a
//! chat's time after its root's. The trace records arrivals only, not tool or think time
//! apart from the model's, so every `wait_ms` is 0: played on the trace's timing a call keeps
//! its recorded gap, played on think time only a follow-up is sent as soon as it may be.
//! `turn` and `type` are not used (the order is the parent links' and the times'; image and
//! file requests are replayed as text of their token length).
//!
//! Blocks: `hash_ids` as written (`JobSet::block_tokens` 16). A chat without `hash_ids` starts
//! with its parent's blocks (as far as its own length goes) and adds blocks of its own, so a
//! follow-up shares the context it continues. The player scopes block ids per job (so one
//! job's replay does not warm another's), so a system prompt two conversations share in the
//! file is not shared between their jobs when played.
//!
//! Refused before anything is sent, naming the file, the line and what is wrong: a line that
//! is not a JSON object or is cut short (the file's last line), a missing field, a field that
//! is not a number, a negative or fractional length, an input of 0 tokens, a `chat_id` that
//! appears twice, a `parent_chat_id` that never appears as a `chat_id`, and a chat timed
//! before its parent. A reply of 0 tokens (a request cut off) is asked for 1 token: its
//! follow-ups still need it sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::jobs::{Agent, Call, Job, JobError, JobSet};
use super::trace::derived;

/// Tokens per `hash_ids` block in the published traces (the `blksz_16` of their names).
pub const BAILIAN_BLOCK_TOKENS: u32 = 16;

/// Why a Bailian trace cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum BailianError {
    #[error("cannot read Bailian trace {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    #[error("Bailian trace {} line {line}: {message}", .path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("Bailian trace {} holds no chat; each line needs chat_id, timestamp (seconds), input_length and output_length", .0.display())]
    Empty(PathBuf),
    #[error("Bailian trace {}: {}", .0.display(), .1)]
    Job(PathBuf, #[source] JobError),
}

/// One chat as written.
struct Chat {
    line: usize,
    id: String,
    parent: Option<String>,
    ms: f64,
    input: u32,
    output: u32,
    hash_ids: Option<Vec<u64>>,
}

/// Where a chat was placed: its job, agent and call.
#[derive(Clone, Copy)]
struct Place {
    job: usize,
    agent: usize,
    call: usize,
}

/// Reads a Bailian trace file into jobs.
pub fn read_bailian(path: &Path) -> Result<JobSet, BailianError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| BailianError::Read(path.to_path_buf(), e))?;
    parse_bailian(path, &text)
}

/// A Bailian trace's text as jobs (`path` names it in errors).
pub fn parse_bailian(path: &Path, text: &str) -> Result<JobSet, BailianError> {
    let bad = |line: usize, message: String| BailianError::Line {
        path: path.to_path_buf(),
        line,
        message,
    };
    let chats = chats(text).map_err(|(line, message)| bad(line, message))?;
    if chats.is_empty() {
        return Err(BailianError::Empty(path.to_path_buf()));
    }
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(chats.len());
    for (i, c) in chats.iter().enumerate() {
        if let Some(j) = by_id.insert(&c.id, i) {
            return Err(bad(
                c.line,
                format!(
                    "chat_id {} appears again (first on line {}); each chat needs its own id",
                    c.id, chats[j].line
                ),
            ));
        }
    }
    let mut order: Vec<usize> = (0..chats.len()).collect();
    order.sort_by(|&a, &b| chats[a].ms.total_cmp(&chats[b].ms).then(a.cmp(&b)));
    let mut jobs: Vec<Job> = Vec::new();
    let mut starts: Vec<f64> = Vec::new();
    let mut places: Vec<Option<Place>> = vec![None; chats.len()];
    let mut blocks: Vec<Vec<u64>> = vec![Vec::new(); chats.len()];
    for i in order {
        let c = &chats[i];
        let parent = match &c.parent {
            None => None,
            Some(p) => {
                let Some(&pi) = by_id.get(p.as_str()) else {
                    return Err(bad(c.line, format!("parent_chat_id {p} never appears as a chat_id; a follow-up needs the chat it follows (set it to -1 to start a job with this chat, or keep the parent's line)")));
                };
                let Some(place) = places[pi] else {
                    return Err(bad(c.line, before_parent(c, &chats[pi])));
                };
                Some((pi, place))
            }
        };
        let inherited = parent.map_or(&[][..], |(pi, _)| &blocks[pi][..]);
        blocks[i] = chat_blocks(c, inherited);
        let place = place_chat(
            &mut jobs,
            &mut starts,
            c,
            parent.map(|(_, p)| p),
            &blocks[i],
        );
        places[i] = Some(place);
    }
    let first = starts.first().copied().unwrap_or(0.0);
    for (job, start) in jobs.iter_mut().zip(&starts) {
        job.offset_ms = Some(start - first);
        job.check()
            .map_err(|e| BailianError::Job(path.to_path_buf(), e))?;
    }
    Ok(JobSet {
        jobs,
        block_tokens: BAILIAN_BLOCK_TOKENS,
    })
}

/// Why chat `c` cannot follow `parent`, which comes after it (in time, or at the same time
/// on a later line).
fn before_parent(c: &Chat, parent: &Chat) -> String {
    let when = if c.ms == parent.ms {
        "at the same time as, and on a line before,"
    } else {
        "timed before"
    };
    format!(
        "chat {} at {} s is {when} its parent {} (line {}) at {} s; a follow-up is sent after the chat it follows",
        c.id,
        c.ms / 1000.0,
        parent.id,
        parent.line,
        parent.ms / 1000.0
    )
}

/// Puts chat `c` in its place: a new job for a root, its parent agent's next call for the
/// first follow-up, a new background child agent for a branch. Jobs are made in time order, so
/// `starts` holds each job's root time.
fn place_chat(
    jobs: &mut Vec<Job>,
    starts: &mut Vec<f64>,
    c: &Chat,
    parent: Option<Place>,
    blocks: &[u64],
) -> Place {
    let Some(p) = parent else {
        jobs.push(Job {
            name: format!("chat-{}", c.id),
            agents: vec![agent(None, 0, None)],
            offset_ms: None,
        });
        starts.push(c.ms);
        let job = jobs.len() - 1;
        jobs[job].agents[0].calls.push(call(c, 0.0, blocks));
        return Place {
            job,
            agent: 0,
            call: 0,
        };
    };
    let start = starts[p.job];
    let job = &mut jobs[p.job];
    let own = &mut job.agents[p.agent];
    if own.calls.len() == p.call + 1 {
        own.calls.push(call(c, start, blocks));
        return Place {
            call: p.call + 1,
            ..p
        };
    }
    let depth = own.depth + 1;
    let mut child = agent(Some(p.agent), depth, Some(p.call));
    child.calls.push(call(c, start, blocks));
    job.agents.push(child);
    Place {
        job: p.job,
        agent: job.agents.len() - 1,
        call: 0,
    }
}

fn agent(parent: Option<usize>, depth: u32, spawned_after: Option<usize>) -> Agent {
    Agent {
        parent,
        depth,
        spawned_after,
        joined_by: None,
        calls: Vec::new(),
    }
}

fn call(c: &Chat, job_start: f64, blocks: &[u64]) -> Call {
    Call {
        input_tokens: c.input,
        output_tokens: c.output.max(1),
        wait_ms: 0.0,
        offset_ms: Some(c.ms - job_start),
        blocks: blocks.to_vec(),
    }
}

/// A chat's blocks: its `hash_ids`, or its parent's as far as its length goes and then its
/// own.
fn chat_blocks(c: &Chat, parent: &[u64]) -> Vec<u64> {
    if let Some(ids) = &c.hash_ids {
        return ids.clone();
    }
    let count = c.input.div_ceil(BAILIAN_BLOCK_TOKENS) as usize;
    let shared = parent.len().min(count);
    let own = (shared..count).map(|j| derived(u64::MAX - c.line as u64, j as u64));
    parent[..shared].iter().copied().chain(own).collect()
}

/// The file's chats, with their line numbers (from 1); blank lines skipped. An error is the
/// line and what is wrong with it.
fn chats(text: &str) -> Result<Vec<Chat>, (usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let obj: Map<String, Value> = serde_json::from_str(line).map_err(|e| {
            let why = if e.is_eof() {
                "the line ends before its JSON object does: the file looks cut short (download it again)".to_string()
            } else {
                format!("not a JSON object ({e}); a Bailian line is one, with chat_id, parent_chat_id, timestamp, input_length, output_length")
            };
            (n + 1, why)
        })?;
        out.push(chat(n + 1, &obj).map_err(|e| (n + 1, e))?);
    }
    Ok(out)
}

/// One line's chat, checked.
fn chat(line: usize, obj: &Map<String, Value>) -> Result<Chat, String> {
    let id = match obj.get("chat_id") {
        None | Some(Value::Null) => return Err("chat_id is missing (a Bailian line needs chat_id, timestamp in seconds, input_length and output_length)".into()),
        Some(v) => id_text(v).ok_or_else(|| format!("chat_id {v} is not a number or a string"))?,
    };
    let parent = match obj.get("parent_chat_id") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let p = id_text(v)
                .ok_or_else(|| format!("parent_chat_id {v} is not a number or a string"))?;
            (p != "-1").then_some(p)
        }
    };
    let seconds = number(obj, "timestamp")?;
    let input = length(obj, "input_length")?;
    if input == 0 {
        return Err("input_length is 0: a call needs a prompt".into());
    }
    let hash_ids = match obj.get("hash_ids") {
        None | Some(Value::Null) => None,
        Some(Value::Array(ids)) => Some(
            ids.iter()
                .map(|v| {
                    v.as_u64()
                        .ok_or_else(|| format!("hash_ids holds {v}, not a block number"))
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(v) => return Err(format!("hash_ids is {v}, not a list of block numbers")),
    };
    Ok(Chat {
        line,
        id,
        parent,
        ms: seconds * 1000.0,
        input,
        output: length(obj, "output_length")?,
        hash_ids,
    })
}

/// An id as text: `159` and `"159"` are the same chat.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn number(obj: &Map<String, Value>, key: &str) -> Result<f64, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Err(format!("{key} is missing")),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{key} {v} is not a number")),
    }
}

fn length(obj: &Map<String, Value>, key: &str) -> Result<u32, String> {
    let x = number(obj, key)?;
    if x < 0.0 {
        return Err(format!("{key} {x} is negative"));
    }
    if x.fract() != 0.0 || x > f64::from(u32::MAX) {
        return Err(format!("{key} {x} is not a whole number of tokens"));
    }
    Ok(x as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<JobSet, String> {
        parse_bailian(Path::new("qwen.jsonl"), text).map_err(|e| e.to_string())
    }

    const TRACE: &str = r#"{"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 40, "output_length": 13, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]}
{"chat_id": 7, "timestamp": 60.0, "input_length": 20, "output_length": 5, "turn": 1}

{"chat_id": 160, "parent_chat_id": 159, "timestamp": 62.5, "input_length": 70, "output_length": 8, "type": "text", "turn": 2, "hash_ids": [1, 2, 3, 4, 5]}
{"chat_id": "161", "parent_chat_id": "159", "timestamp": 63.0, "input_length": 60, "output_length": 0, "turn": 2, "hash_ids": [1, 2, 3, 9]}
{"chat_id": 162, "parent_chat_id": 161, "timestamp": 64.0, "input_length": 80, "output_length": 9, "turn": 3}
{"chat_id": 8, "parent_chat_id": 7, "timestamp": 65.0, "input_length": 50, "output_length": 6, "turn": 2}
"#;

    #[test]
    fn follow_ups_continue_an_agent_and_branches_start_background_children() {
        let set = parse(TRACE).unwrap();
        assert_eq!(set.block_tokens, 16);
        // Jobs in order of their roots' times: chat 7 (60 s), then chat 159 (61.114 s).
        let names: Vec<&str> = set.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["chat-7", "chat-159"]);
        let [a, b] = &set.jobs[..] else { panic!() };
        assert_eq!(a.offset_ms, Some(0.0));
        assert!((b.offset_ms.unwrap() - 1114.0).abs() < 1e-6);
        // Chat 7 and its follow-up 8: one agent of two calls.
        assert_eq!((a.agents.len(), a.calls()), (1, 2));
        assert_eq!(a.agents[0].calls[1].offset_ms, Some(5000.0));
        // 159 → 160 (follow-up), 159 → 161 (a branch: child agent) → 162 (its follow-up).
        assert_eq!(b.agents.len(), 2);
        let root = &b.agents[0];
        assert_eq!(root.calls.len(), 2);
        assert_eq!(root.calls[1].blocks, vec![1, 2, 3, 4, 5]);
        let child = &b.agents[1];
        assert_eq!(
            (
                child.parent,
                child.depth,
                child.spawned_after,
                child.joined_by
            ),
            (Some(0), 1, Some(0), None)
        );
        assert_eq!(child.calls.len(), 2);
        // A reply of 0 tokens is asked for 1.
        assert_eq!(child.calls[0].output_tokens, 1);
        // Chat 162 has no hash_ids: it starts with 161's blocks, then its own (80 / 16 = 5).
        let blocks = &child.calls[1].blocks;
        assert_eq!(blocks.len(), 5);
        assert_eq!(blocks[..4], [1, 2, 3, 9]);
        assert!(blocks[4] >= 1 << 63);
        assert!((child.calls[1].offset_ms.unwrap() - 2886.0).abs() < 1e-6);
        for job in &set.jobs {
            assert_eq!(job.check(), Ok(()));
            assert!(job
                .agents
                .iter()
                .flat_map(|a| &a.calls)
                .all(|c| c.wait_ms == 0.0));
        }
    }

    #[test]
    fn a_follow_up_without_hash_ids_shares_its_parents_derived_blocks() {
        let set = parse(
            "{\"chat_id\": 1, \"timestamp\": 0, \"input_length\": 32, \"output_length\": 4}\n\
             {\"chat_id\": 2, \"parent_chat_id\": 1, \"timestamp\": 1, \"input_length\": 64, \"output_length\": 4}\n",
        )
        .unwrap();
        let calls = &set.jobs[0].agents[0].calls;
        assert_eq!(calls[0].blocks.len(), 2);
        assert_eq!(calls[1].blocks[..2], calls[0].blocks[..]);
        assert_ne!(calls[1].blocks[2], calls[0].blocks[0]);
    }

    /// Each malformed case is refused naming the file, the line and what is wrong.
    #[test]
    fn malformed_traces_are_refused_with_their_line() {
        let ok = r#"{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1.0, "input_length": 10, "output_length": 2}"#;
        let cases = [
            (format!("{ok}\n{{\"chat_id\": 2, \"timestamp\": 2.0, \"input_length\": 10}}\n"), "line 2", "output_length is missing"),
            ("{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46]}\n".to_string(), "line 1", "chat_id is missing"),
            (format!("{ok}\n{{\"chat_id\": 2, \"timestamp\": 2.0, \"input_length\": \"ten\", \"output_length\": 2}}\n"), "line 2", "input_length \"ten\" is not a number"),
            (format!("{ok}\n{{\"chat_id\": 2, \"timestamp\": 2.0, \"input_length\": 10, \"output_length\": -3}}\n"), "line 2", "output_length -3 is negative"),
            (format!("{ok}\n{{\"chat_id\": 2, \"parent_chat_id\": 99, \"timestamp\": 2.0, \"input_length\": 10, \"output_length\": 2}}\n"), "line 2", "parent_chat_id 99 never appears"),
            (format!("{ok}\n{{\"chat_id\": 2, \"parent_chat_id\": 1, \"timestamp\": 0.5, \"input_length\": 10, \"output_length\": 2}}\n"), "line 2", "timed before its parent 1 (line 1)"),
            (format!("{{\"chat_id\": 2, \"parent_chat_id\": 1, \"timestamp\": 1.0, \"input_length\": 10, \"output_length\": 2}}\n{ok}\n"), "line 1", "on a line before, its parent 1 (line 2)"),
            (format!("{ok}\n{ok}\n"), "line 2", "chat_id 1 appears again (first on line 1)"),
            (format!("{ok}\n{{\"chat_id\": 2, \"timestamp\": 2.0, \"input_le"), "line 2", "cut short"),
            ("TIMESTAMP,ContextTokens,GeneratedTokens\n".to_string(), "line 1", "not a JSON object"),
            (format!("{ok}\n{{\"chat_id\": 2, \"timestamp\": 2.0, \"input_length\": 0, \"output_length\": 2}}\n"), "line 2", "input_length is 0"),
            ("{\"chat_id\": 2, \"timestamp\": 2.0, \"input_length\": 3, \"output_length\": 2, \"hash_ids\": [\"a\"]}\n".to_string(), "line 1", "not a block number"),
        ];
        for (text, at, what) in cases {
            let err = parse(&text).unwrap_err();
            assert!(
                err.contains("qwen.jsonl") && err.contains(at) && err.contains(what),
                "{text:?}: {err}"
            );
        }
        assert!(parse("\n\n").unwrap_err().contains("holds no chat"));
    }
}
