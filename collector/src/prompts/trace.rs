//! Trace replay: a file of requests with their times and lengths, sent open-loop at the times
//! it says (scaled by a speed), with prompts synthesised to each line's length. A file whose
//! first line is not a JSON object is a CSV of arrivals (Azure's or BurstGPT's, told by its
//! header: `csv_trace.rs`), whose rows share no blocks.
//!
//! JSONL formats (one JSON object per line; blank lines skipped):
//! - **Mooncake** (`timestamp` ms, `input_length`, `output_length`, `hash_ids`): each hash id
//!   names a 512-token block of the prompt; lines that share ids share those blocks.
//! - **generic**: the same fields plus `session_id` (string or number) and `turn`; `hash_ids`
//!   optional. A line without `hash_ids` but with a session shares its session's earlier
//!   context: block `j` of every line of a session is the same, so each turn's prompt starts
//!   with the previous turn's. A line with neither is unique.
//!
//! A Bailian trace (lines with a `chat_id`) is refused: its chats are agentic jobs
//! (`bailian.rs`).
//!
//! A block's text is the same words for the same id (a run's nonce and the replay's level
//! mixed in, so neither an earlier run nor an earlier speed leaves it cached): words the run's
//! tokenizer counts as one token each, so a block of 512 words is 512 tokens and two prompts
//! sharing `k` blocks share `512·k` tokens, which is what the engine's cache can see.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use infermeter_report::{Scenario, SessionTurn, TraceSource};
use serde::Deserialize;

use crate::http::body::ChatMessage;
use crate::http::driver::Driver;
use crate::prompts::csv_trace::{self, CsvError, CsvTrace};
use crate::prompts::filler::WORDS;
use crate::prompts::text::{Tokenizer, TokenizerError};
use crate::prompts::Prepared;

/// Tokens per shared block (Mooncake's).
pub const BLOCK_TOKENS: u32 = 512;
/// Words kept for block texts: enough that blocks read differently.
const MIN_WORDS: usize = 32;

/// Why a trace cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    #[error("trace {} line {line}: {message}", .path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("trace {} holds no request; each line needs timestamp, input_length and output_length", .0.display())]
    Empty(PathBuf),
    #[error("cannot count the tokens of the trace's block words")]
    Tokens(#[from] TokenizerError),
    #[error("the tokenizer counts fewer than {MIN_WORDS} of the filler words as one token each, so trace prompts cannot be built token-exact (pass --tokenizer with the model's tokenizer.json)")]
    Words,
}

/// One line as written.
#[derive(Debug, Clone, Deserialize)]
struct RawLine {
    timestamp: f64,
    input_length: u32,
    output_length: u32,
    #[serde(default)]
    hash_ids: Option<Vec<u64>>,
    #[serde(default)]
    session_id: Option<serde_json::Value>,
    #[serde(default)]
    turn: Option<u32>,
    /// Bailian's: read only to refuse its traces, whose times are seconds and blocks 16 tokens.
    #[serde(default)]
    chat_id: Option<serde_json::Value>,
}

/// One request of the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceLine {
    /// Milliseconds after the trace's first request.
    pub offset_ms: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// The prompt's blocks, in order: explicit `hash_ids`, or derived from the session.
    pub blocks: Vec<u64>,
    pub session: Option<SessionTurn>,
}

/// A trace read from its file: its lines and what the report says about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub lines: Vec<TraceLine>,
    pub source: TraceSource,
    /// Rows left out as no request (a CSV's failed requests: no input or no output tokens).
    pub skipped: u64,
}

/// Derived block ids live apart from a file's own (its `hash_ids` are small numbers).
const DERIVED: u64 = 1 << 63;

impl Trace {
    /// Reads and checks a trace file: JSONL when its first line is a JSON object, else a CSV
    /// whose header says its format (`csv_trace.rs`).
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| TraceError::Read(path.to_path_buf(), e))?;
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        if first.is_some_and(|l| !l.trim_start_matches('\u{feff}').starts_with('{')) {
            let csv = csv_trace::read(&text).map_err(|e| match e {
                CsvError::Empty => TraceError::Empty(path.to_path_buf()),
                CsvError::Line(line, message) => TraceError::Line {
                    path: path.to_path_buf(),
                    line,
                    message,
                },
            })?;
            return Ok(Trace::of_csv(path, csv));
        }
        let raw = raw_lines(path, &text)?;
        let first = raw
            .first()
            .map(|(_, r)| r.timestamp)
            .ok_or_else(|| TraceError::Empty(path.to_path_buf()))?;
        let generic = raw.iter().any(|(_, r)| r.session_id.is_some());
        let mut sessions = SessionIds::default();
        let lines: Vec<TraceLine> = raw
            .iter()
            .map(|(n, r)| {
                let session = r.session_id.as_ref().map(|v| SessionTurn {
                    id: sessions.id(v),
                    turn: r.turn.unwrap_or(1),
                });
                let count = r.input_length.div_ceil(BLOCK_TOKENS) as u64;
                let blocks = match (&r.hash_ids, session) {
                    (Some(ids), _) => ids.clone(),
                    (None, Some(s)) => (0..count).map(|j| derived(s.id, j)).collect(),
                    (None, None) => unique_blocks(*n, r.input_length),
                };
                TraceLine {
                    offset_ms: r.timestamp - first,
                    input_tokens: r.input_length,
                    output_tokens: r.output_length,
                    blocks,
                    session,
                }
            })
            .collect();
        let format = if generic { "generic" } else { "mooncake" };
        Ok(Trace::new(path, format, lines, 0))
    }

    /// A CSV trace's rows as lines of no session, each prompt its own.
    fn of_csv(path: &Path, csv: CsvTrace) -> Trace {
        let lines = csv
            .rows
            .iter()
            .map(|r| TraceLine {
                offset_ms: r.at_ms,
                input_tokens: r.input_tokens,
                output_tokens: r.output_tokens,
                blocks: unique_blocks(r.line, r.input_tokens),
                session: None,
            })
            .collect();
        Trace::new(path, csv.format, lines, csv.skipped)
    }

    fn new(path: &Path, format: &str, lines: Vec<TraceLine>, skipped: u64) -> Trace {
        let source = TraceSource {
            file: path.file_name().map_or_else(
                || path.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            ),
            format: format.into(),
            requests: lines.len() as u64,
            duration_s: lines.last().map_or(0.0, |l| l.offset_ms / 1000.0),
            block_tokens: BLOCK_TOKENS,
            shared_block_ratio: shared_block_ratio(&lines),
        };
        Trace {
            lines,
            source,
            skipped,
        }
    }

    /// The trace as a report scenario: its mean lengths, and where it came from.
    pub fn scenario(&self) -> Scenario {
        let n = self.lines.len().max(1) as f64;
        let mean = |f: fn(&TraceLine) -> u32| {
            (self.lines.iter().map(|l| f64::from(f(l))).sum::<f64>() / n).round() as u32
        };
        let stem = Path::new(&self.source.file)
            .file_stem()
            .map_or("trace".into(), |s| s.to_string_lossy().into_owned());
        let id: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        Scenario {
            id: format!("trace_{id}"),
            name: format!("Trace {stem}"),
            description: format!(
                "{} requests replayed from {} ({} format) at the times it records; lengths are the trace's means.{}",
                self.source.requests, self.source.file, self.source.format,
                if self.skipped > 0 {
                    let rows = if self.skipped == 1 { "row" } else { "rows" };
                    format!(" {} {rows} of no input or no output tokens (failed requests) left out.", self.skipped)
                } else {
                    String::new()
                }
            ),
            input_tokens: mean(|l| l.input_tokens).max(1),
            output_tokens: mean(|l| l.output_tokens).max(1),
            session: None,
            trace: Some(self.source.clone()),
            prompts: None,
            lengths: None,
            agents: None,
        }
    }

    /// Each line's send time from the level start at `speed`.
    pub fn offsets(&self, speed: f64) -> Vec<Duration> {
        self.lines
            .iter()
            .map(|l| Duration::from_secs_f64(l.offset_ms / 1000.0 / speed))
            .collect()
    }
}

/// The file's lines as written, with their line numbers (from 1): each a request with a
/// timestamp and lengths, in order of timestamp (blank lines skipped).
fn raw_lines(path: &Path, text: &str) -> Result<Vec<(usize, RawLine)>, TraceError> {
    let bad = |line: usize, message: String| TraceError::Line {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut raw: Vec<(usize, RawLine)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: RawLine = serde_json::from_str(line).map_err(|e| {
            let why = if e.is_eof() {
                "the line ends before its JSON object does: the file looks cut short (download it again)".to_string()
            } else {
                format!("{e} (a line needs timestamp in ms, input_length and output_length)")
            };
            bad(n + 1, why)
        })?;
        if r.chat_id.is_some() {
            return Err(bad(n + 1, "has a chat_id: this is a Bailian trace (times in seconds, 16-token blocks, chats that follow each other), whose jobs the agents load mode plays, not --trace".into()));
        }
        if !r.timestamp.is_finite() || r.input_length == 0 || r.output_length == 0 {
            return Err(bad(
                n + 1,
                "timestamp must be a number and input_length, output_length at least 1".into(),
            ));
        }
        if let Some((_, prev)) = raw.last() {
            let prev: f64 = prev.timestamp;
            if r.timestamp < prev {
                return Err(bad(
                    n + 1,
                    format!(
                        "timestamp {} comes before the previous line's {prev}; sort the trace by timestamp",
                        r.timestamp
                    ),
                ));
            }
        }
        raw.push((n + 1, r));
    }
    Ok(raw)
}

/// Numbers a trace's sessions from 0 in order of first appearance (`session_id` may be a
/// string or a number).
#[derive(Default)]
struct SessionIds(BTreeMap<String, u64>);

impl SessionIds {
    fn id(&mut self, session_id: &serde_json::Value) -> u64 {
        let key = match session_id {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let next = self.0.len() as u64;
        *self.0.entry(key).or_insert(next)
    }
}

/// The blocks of a prompt that shares nothing (the line `line` of its file): ids no other line
/// has.
fn unique_blocks(line: usize, input_tokens: u32) -> Vec<u64> {
    let count = u64::from(input_tokens.div_ceil(BLOCK_TOKENS));
    (0..count)
        .map(|j| derived(u64::MAX - line as u64, j))
        .collect()
}

/// A block id derived from `owner` (a session, a line, an agentic job) and `block`, apart from
/// a file's own ids and from every other owner's.
pub fn derived(owner: u64, block: u64) -> u64 {
    DERIVED | (mix(owner ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 1)
}

/// Prompt tokens in blocks an earlier line already sent, over all prompt tokens: what a cache
/// that kept everything could skip.
fn shared_block_ratio(lines: &[TraceLine]) -> f64 {
    let mut seen: HashSet<u64> = HashSet::new();
    let (mut shared, mut total) = (0u64, 0u64);
    for l in lines {
        let prefix = l.blocks.iter().take_while(|b| seen.contains(b)).count() as u64;
        shared += (prefix * u64::from(BLOCK_TOKENS)).min(u64::from(l.input_tokens));
        total += u64::from(l.input_tokens);
        seen.extend(l.blocks.iter().copied());
    }
    if total == 0 {
        0.0
    } else {
        shared as f64 / total as f64
    }
}

/// A trace ready to send: its lines and the words its blocks are written in.
pub struct TracePlan {
    trace: Trace,
    words: Arc<BlockWords>,
}

impl TracePlan {
    /// The trace's lines in `words`.
    pub fn new(trace: Trace, words: Arc<BlockWords>) -> TracePlan {
        TracePlan { trace, words }
    }

    /// Each line's (input, output) tokens, by line: what its request was asked.
    pub fn lengths(&self) -> Vec<(u32, u32)> {
        let lines = &self.trace.lines;
        lines
            .iter()
            .map(|l| (l.input_tokens, l.output_tokens))
            .collect()
    }

    /// The request of line `index`, its blocks' texts salted with `salt` (the level run), so
    /// each replay starts with a cold cache.
    pub fn prepare(&self, driver: &Driver, index: u64, salt: u64) -> Prepared {
        let line = &self.trace.lines[index as usize];
        let own = derived(u64::MAX - index, 1 << 40);
        let text = (self.words).prompt(&line.blocks, BLOCK_TOKENS, line.input_tokens, own, salt);
        let body = driver.messages_body(&[ChatMessage::user(text)], line.output_tokens, true);
        Prepared {
            body,
            input_tokens: Some(line.input_tokens),
            session: line.session,
            asked: None,
        }
    }
}

/// The words prompt blocks are written in (each one token to the run's tokenizer), what the
/// server adds to a prompt's text (a chat template, a BOS) and the run's nonce: a trace's and
/// agentic jobs' prompts are built from them, block by block.
pub struct BlockWords {
    words: Vec<&'static str>,
    overhead: u32,
    nonce: u64,
}

impl BlockWords {
    /// Finds the words `tokenizer` counts as one token each (also in a row), and the tokens
    /// the server adds around a prompt (`overhead`, learnt by the prompt plan).
    pub async fn new(
        tokenizer: &Tokenizer,
        overhead: u32,
        nonce: u64,
    ) -> Result<BlockWords, TraceError> {
        let empty = tokenizer.count_text("").await.unwrap_or(0);
        let mut words = Vec::new();
        for &word in WORDS {
            let run = format!(" {word}").repeat(8);
            if tokenizer.count_text(&run).await?.saturating_sub(empty) == 8 {
                words.push(word);
            }
        }
        if words.len() < MIN_WORDS {
            return Err(TraceError::Words);
        }
        let plan = BlockWords {
            words,
            overhead,
            nonce,
        };
        // A whole block of mixed words must count a token per word too.
        let block = plan.block_text(0, 1, BLOCK_TOKENS as usize);
        if tokenizer.count_text(&block).await?.saturating_sub(empty) != BLOCK_TOKENS {
            tracing::warn!("the tokenizer merges the trace's block words; prompt lengths and shared blocks will be off by a few tokens");
        }
        Ok(plan)
    }

    /// A prompt of `input_tokens` tokens as the server counts them: the first words of each of
    /// `blocks` (blocks of `block_tokens` words), salted with `salt` (the level run, so each
    /// replay starts with a cold cache), then block `own`'s where the blocks run short. What
    /// the server adds (`overhead`) comes off the last block, which real traces leave to each
    /// request alone: the shared blocks stay whole.
    pub fn prompt(
        &self,
        blocks: &[u64],
        block_tokens: u32,
        input_tokens: u32,
        own: u64,
        salt: u64,
    ) -> String {
        let words = input_tokens.saturating_sub(self.overhead).max(1) as usize;
        let mut text = String::with_capacity(words * 7);
        let mut left = words;
        for &block in blocks {
            if left == 0 {
                break;
            }
            let n = left.min(block_tokens as usize);
            text.push_str(&self.block_text(block, salt, n));
            left -= n;
        }
        // Fewer blocks than the length needs: the rest is the request's own.
        if left > 0 {
            text.push_str(&self.block_text(own, salt, left));
        }
        text
    }

    /// The first `n` words of block `block`'s text.
    fn block_text(&self, block: u64, salt: u64, n: usize) -> String {
        let mut state = mix(block ^ mix(self.nonce ^ salt.wrapping_mul(0xD1B5_4A32_D192_ED03)));
        let mut text = String::with_capacity(n * 7);
        for _ in 0..n {
            state = mix(state);
            text.push(' ');
            text.push_str(self.words[(state % self.words.len() as u64) as usize]);
        }
        text
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(lines: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, lines).unwrap();
        (dir, path)
    }

    #[test]
    fn mooncake_lines_share_blocks_by_hash_id() {
        let (_dir, path) = write(
            "{\"timestamp\": 1000, \"input_length\": 1024, \"output_length\": 8, \"hash_ids\": [1, 2]}\n\n\
             {\"timestamp\": 1500, \"input_length\": 1500, \"output_length\": 8, \"hash_ids\": [1, 2, 3]}\n",
        );
        let t = Trace::read(&path).unwrap();
        assert_eq!(t.source.format, "mooncake");
        assert_eq!(t.lines[1].offset_ms, 500.0);
        assert_eq!(t.offsets(2.0)[1], Duration::from_millis(250));
        // Line 2 shares 1,024 of its 1,500 tokens.
        assert!((t.source.shared_block_ratio - 1024.0 / 2524.0).abs() < 1e-12);
        let s = t.scenario();
        assert_eq!(
            (s.id.as_str(), s.input_tokens, s.output_tokens),
            ("trace_t", 1262, 8)
        );
    }

    #[test]
    fn generic_sessions_share_their_earlier_context() {
        let (_dir, path) = write(
            "{\"timestamp\": 0, \"session_id\": \"a\", \"turn\": 1, \"input_length\": 600, \"output_length\": 4}\n\
             {\"timestamp\": 10, \"session_id\": 7, \"turn\": 1, \"input_length\": 600, \"output_length\": 4}\n\
             {\"timestamp\": 20, \"session_id\": \"a\", \"turn\": 2, \"input_length\": 1200, \"output_length\": 4}\n",
        );
        let t = Trace::read(&path).unwrap();
        assert_eq!(t.source.format, "generic");
        let [a1, b1, a2] = &t.lines[..] else { panic!() };
        assert_eq!(a2.session, Some(SessionTurn { id: 0, turn: 2 }));
        assert_eq!(b1.session.unwrap().id, 1);
        assert_eq!(a2.blocks[..2], a1.blocks[..]);
        assert_ne!(b1.blocks[0], a1.blocks[0]);
    }

    #[test]
    fn csv_traces_are_read_by_their_header_whatever_their_extension() {
        let (_dir, path) = write(
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
             5,ChatGPT,600,18,618,Conversation log\n\
             6,ChatGPT,600,0,600,Conversation log\n\
             7.5,GPT-4,40,20,60,API log\n",
        );
        let t = Trace::read(&path).unwrap();
        assert_eq!((t.source.format.as_str(), t.skipped), ("burstgpt", 1));
        assert_eq!(t.lines[1].offset_ms, 2500.0);
        assert_eq!(t.lines[0].blocks.len(), 2);
        assert_eq!(t.source.shared_block_ratio, 0.0);
        assert!(t
            .scenario()
            .description
            .contains("1 row of no input or no output tokens"));
        let (_dir, path) = write("Time,In,Out\n1,2,3\n");
        let err = Trace::read(&path).unwrap_err().to_string();
        assert!(err.contains("t.jsonl line 1: unknown header"), "{err}");
        let (_dir, path) = write("Timestamp,Request tokens,Response tokens\n1,0,3\n");
        let err = Trace::read(&path).unwrap_err().to_string();
        assert!(err.contains("t.jsonl holds no request"), "{err}");
    }

    #[test]
    fn bad_traces_say_which_line_and_what_to_do() {
        let (_dir, path) = write(
            "{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1}\n{\"timestamp\": 4, \"input_length\": 10, \"output_length\": 1}\n",
        );
        let err = Trace::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("line 2") && err.contains("sort the trace"),
            "{err}"
        );
        let (_dir, path) = write("{\"timestamp\": 5, \"input_length\": 10}\n");
        let err = Trace::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("line 1") && err.contains("output_length"),
            "{err}"
        );
        let (_dir, path) = write(
            "{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1}\n{\"timestamp\": 6, \"input_len",
        );
        let err = Trace::read(&path).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("cut short"), "{err}");
        let (_dir, path) = write(
            "{\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 1.5, \"input_length\": 10, \"output_length\": 1}\n",
        );
        let err = Trace::read(&path).unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("Bailian"), "{err}");
        let (_dir, path) = write("\n");
        assert!(Trace::read(&path)
            .unwrap_err()
            .to_string()
            .contains("holds no request"));
    }
}
