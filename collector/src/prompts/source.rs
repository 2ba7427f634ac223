//! Prompt files, read and checked before anything is sent: ShareGPT conversations (a JSON
//! array), JSONL prompts or chats, and plain text to cut into prompts. Every problem names the
//! file and the line. Counting tokens, filtering and sampling come later ([`super::pool`]),
//! once the run's tokenizer is known.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use infermeter_report::{LengthFilters, PromptKind, SampleOrder};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::http::body::ChatMessage;

/// A scenario's `prompts`: the file and how to draw from it (a suite's table, or `--prompts`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSpec {
    /// Relative to the suite file (or, with `--prompts`, the working directory).
    pub file: PathBuf,
    /// `sharegpt`, `jsonl` or `text`; default from the extension (`.json`, `.jsonl`, else
    /// text), or the first character for other names.
    #[serde(default)]
    pub format: Option<PromptKind>,
    #[serde(default)]
    pub order: SampleOrder,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub replacement: bool,
    /// Prompts to draw (default: every prompt that passes the filters).
    #[serde(default)]
    pub count: Option<u32>,
    #[serde(default)]
    pub min_input: Option<u32>,
    #[serde(default)]
    pub max_input: Option<u32>,
    #[serde(default)]
    pub min_output: Option<u32>,
    #[serde(default)]
    pub max_output: Option<u32>,
    /// `skip` leaves out conversations without a human turn (as vLLM's ShareGPT sampling
    /// does) instead of refusing the file; they count as filtered out.
    #[serde(default)]
    pub malformed: Malformed,
}

/// What to do with a ShareGPT conversation that has no human turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Malformed {
    #[default]
    Refuse,
    Skip,
}

impl PromptSpec {
    /// Just the file, everything else at its default.
    pub fn file(file: PathBuf) -> PromptSpec {
        PromptSpec {
            file,
            format: None,
            order: SampleOrder::InOrder,
            seed: 0,
            replacement: false,
            count: None,
            min_input: None,
            max_input: None,
            min_output: None,
            max_output: None,
            malformed: Malformed::Refuse,
        }
    }

    pub fn filters(&self) -> LengthFilters {
        LengthFilters {
            min_input: self.min_input,
            max_input: self.max_input,
            min_output: self.min_output,
            max_output: self.max_output,
        }
    }
}

/// Why a prompt file cannot be used. Each names the file, and the line where there is one.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read prompt file {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("prompt file {} line {line}: {message}", .path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("prompt file {} holds no prompt: {what}", .path.display())]
    Empty { path: PathBuf, what: &'static str },
}

/// A prompt as the file has it.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryPrompt {
    /// A completion's text (JSONL `prompt`; ShareGPT's first human turn).
    Text(String),
    /// A chat (JSONL `messages`).
    Messages(Vec<ChatMessage>),
}

/// The output an entry records.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// ShareGPT: the answer after the prompt, whose tokens the run counts.
    Text(String),
    /// JSONL: `output_tokens`.
    Tokens(u32),
}

/// One prompt of a dataset file.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Where it starts in the file, from 1.
    pub line: usize,
    pub prompt: EntryPrompt,
    pub answer: Option<Answer>,
}

/// A prompt file as read: its prompts (ShareGPT, JSONL) or its text.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptFile {
    pub kind: PromptKind,
    pub path: PathBuf,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
    pub entries: Vec<Entry>,
    /// A text file's content.
    pub text: Option<Arc<str>>,
    /// Conversations without a human turn that `malformed = "skip"` left out.
    pub skipped: u64,
}

impl PromptFile {
    /// Reads and checks the file `spec` names (relative to `dir`).
    pub fn read(spec: &PromptSpec, dir: &Path) -> Result<PromptFile, SourceError> {
        let path = if spec.file.is_relative() {
            dir.join(&spec.file)
        } else {
            spec.file.clone()
        };
        let bytes = std::fs::read(&path).map_err(|source| SourceError::Read {
            path: path.clone(),
            source,
        })?;
        let sha256 = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            SourceError::Line {
                path: path.clone(),
                line,
                message: "is not UTF-8 text".into(),
            }
        })?;
        let kind = spec.format.unwrap_or_else(|| guess_kind(&path, &text));
        let mut file = PromptFile {
            kind,
            path,
            sha256,
            entries: Vec::new(),
            text: None,
            skipped: 0,
        };
        match kind {
            PromptKind::Sharegpt => file.read_sharegpt(&text, spec.malformed)?,
            PromptKind::Jsonl => file.read_jsonl(&text)?,
            PromptKind::Text => file.read_text(text)?,
        }
        Ok(file)
    }

    /// The file's name, without its folder.
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    fn error(&self, line: usize, message: impl Into<String>) -> SourceError {
        SourceError::Line {
            path: self.path.clone(),
            line,
            message: message.into(),
        }
    }

    fn read_sharegpt(&mut self, text: &str, malformed: Malformed) -> Result<(), SourceError> {
        // The first problem in the file's order: a conversation before broken JSON is judged.
        let (conversations, broken) = json_array(text);
        for (line, value) in conversations {
            match sharegpt_entry(line, &value) {
                Ok(entry) => self.entries.push(entry),
                Err(_) if malformed == Malformed::Skip => self.skipped += 1,
                Err(message) => {
                    return Err(self.error(
                        line,
                        format!("{message}; fix or remove it, or set malformed = \"skip\" in the scenario's prompts to leave such conversations out"),
                    ))
                }
            }
        }
        if let Some((line, message)) = broken {
            return Err(self.error(line, message));
        }
        if self.entries.is_empty() {
            return Err(SourceError::Empty {
                path: self.path.clone(),
                what: "a ShareGPT file is a JSON array of {\"conversations\": [{\"from\": \"human\", \"value\": …}, …]}",
            });
        }
        Ok(())
    }

    fn read_jsonl(&mut self, text: &str) -> Result<(), SourceError> {
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry = jsonl_entry(n + 1, line).map_err(|m| self.error(n + 1, m))?;
            self.entries.push(entry);
        }
        if self.entries.is_empty() {
            return Err(SourceError::Empty {
                path: self.path.clone(),
                what: "each line of a JSONL prompt file is {\"prompt\": …} or {\"messages\": […]}, with an optional \"output_tokens\"",
            });
        }
        Ok(())
    }

    fn read_text(&mut self, text: String) -> Result<(), SourceError> {
        if text.trim().is_empty() {
            return Err(SourceError::Empty {
                path: self.path.clone(),
                what: "the text file is empty",
            });
        }
        self.text = Some(text.into());
        Ok(())
    }
}

/// From the extension, else the first character: `[` ShareGPT, `{` JSONL, else text.
fn guess_kind(path: &Path, text: &str) -> PromptKind {
    match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => PromptKind::Jsonl,
        Some("json") => PromptKind::Sharegpt,
        Some("txt" | "md") => PromptKind::Text,
        _ => match text.trim_start().chars().next() {
            Some('[') => PromptKind::Sharegpt,
            Some('{') => PromptKind::Jsonl,
            _ => PromptKind::Text,
        },
    }
}

/// The line (from 1) of byte `at` of `text`.
fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A problem of a file and the line it is on.
type LineProblem = (usize, String);

/// The elements of a JSON array, each with the line it starts on, up to the first problem; and
/// that problem's line and what it is.
fn json_array(text: &str) -> (Vec<(usize, Value)>, Option<LineProblem>) {
    let mut items = Vec::new();
    let broken = json_elements(text, &mut items).err();
    (items, broken)
}

/// Pushes the elements of the JSON array `text` onto `items` until the first problem.
fn json_elements(text: &str, items: &mut Vec<(usize, Value)>) -> Result<(), LineProblem> {
    let bytes = text.as_bytes();
    let skip_space = |mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        at
    };
    let mut at = skip_space(0);
    if bytes.get(at) != Some(&b'[') {
        let what = if at == bytes.len() {
            "is empty".to_string()
        } else {
            "is not a JSON array; a ShareGPT file is a JSON array of conversations (for one JSON object per line, name the file .jsonl or set format = \"jsonl\")".to_string()
        };
        return Err((line_at(text, at), what));
    }
    at = skip_space(at + 1);
    if bytes.get(at) == Some(&b']') {
        return Ok(());
    }
    loop {
        let start = at;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => items.push((line_at(text, start), value)),
            Some(Err(e)) => {
                let line = line_at(text, start) + e.line().saturating_sub(1);
                return Err((line, format!("is not valid JSON: {e}")));
            }
            None => return Err((line_at(text, start), "the JSON array is not closed".into())),
        }
        at = skip_space(start + stream.byte_offset());
        match bytes.get(at) {
            Some(b',') => at = skip_space(at + 1),
            Some(b']') => return Ok(()),
            _ => {
                return Err((
                    line_at(text, at),
                    "is not valid JSON: expected , or ] after an element of the array".into(),
                ))
            }
        }
    }
}

/// Roles ShareGPT files use for the user and for the model.
const HUMAN: [&str; 2] = ["human", "user"];
const MODEL: [&str; 6] = ["gpt", "assistant", "chatgpt", "bing", "bard", "model"];

/// A ShareGPT conversation's first human turn and the answer after it.
fn sharegpt_entry(line: usize, value: &Value) -> Result<Entry, String> {
    let turns = value
        .get("conversations")
        .and_then(Value::as_array)
        .ok_or("a conversation needs \"conversations\": an array of {\"from\", \"value\"}")?;
    let turn = |t: &Value| -> Option<(String, String)> {
        Some((
            t.get("from")?.as_str()?.to_ascii_lowercase(),
            t.get("value")?.as_str()?.to_string(),
        ))
    };
    let turns: Vec<(String, String)> = turns.iter().filter_map(turn).collect();
    let first = turns
        .iter()
        .position(|(from, value)| HUMAN.contains(&from.as_str()) && !value.trim().is_empty())
        .ok_or(
            "the conversation has no human turn (\"from\": \"human\" with a non-empty \"value\")",
        )?;
    let answer = turns[first + 1..]
        .iter()
        .find(|(from, _)| MODEL.contains(&from.as_str()))
        .map(|(_, value)| Answer::Text(value.clone()));
    Ok(Entry {
        line,
        prompt: EntryPrompt::Text(turns[first].1.clone()),
        answer,
    })
}

/// One JSONL line: `prompt` or `messages`, and `output_tokens`.
fn jsonl_entry(line: usize, text: &str) -> Result<Entry, String> {
    #[derive(Deserialize)]
    struct Line {
        prompt: Option<String>,
        messages: Option<Vec<RawMessage>>,
        output_tokens: Option<u32>,
    }
    #[derive(Deserialize)]
    struct RawMessage {
        role: String,
        content: String,
    }
    let parsed: Line = serde_json::from_str(text).map_err(|e| {
        format!("is not a JSON object with \"prompt\" (text) or \"messages\" (a chat: role and text content), and an optional whole \"output_tokens\": {e}")
    })?;
    let prompt = match (parsed.prompt, parsed.messages) {
        (Some(p), None) if !p.trim().is_empty() => EntryPrompt::Text(p),
        (None, Some(m)) if !m.is_empty() => EntryPrompt::Messages(
            m.into_iter()
                .map(|m| ChatMessage::with_role(&m.role, m.content))
                .collect(),
        ),
        (Some(_), Some(_)) => return Err("has both \"prompt\" and \"messages\"; keep one".into()),
        _ => return Err("needs a non-empty \"prompt\" or \"messages\"".into()),
    };
    if parsed.output_tokens == Some(0) {
        return Err("\"output_tokens\" must be at least 1".into());
    }
    Ok(Entry {
        line,
        prompt,
        answer: parsed.output_tokens.map(Answer::Tokens),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, body: &str) -> Result<PromptFile, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(name), body).unwrap();
        PromptFile::read(&PromptSpec::file(name.into()), dir.path()).map_err(|e| e.to_string())
    }

    #[test]
    fn sharegpt_conversations_give_the_first_human_turn_and_its_answer() {
        let file = read(
            "d.json",
            r#"[
  {"id": "a", "conversations": [{"from": "system", "value": "be brief"},
     {"from": "human", "value": "Hi there"}, {"from": "gpt", "value": "Hello!"}]},
  {"id": "b", "conversations": [{"from": "human", "value": "Only a question"}]}
]"#,
        )
        .unwrap();
        assert_eq!(file.kind, PromptKind::Sharegpt);
        assert_eq!(file.sha256.len(), 64);
        let [a, b] = &file.entries[..] else { panic!() };
        assert_eq!(a.line, 2);
        assert_eq!(a.prompt, EntryPrompt::Text("Hi there".into()));
        assert_eq!(a.answer, Some(Answer::Text("Hello!".into())));
        assert_eq!((b.line, b.answer.clone()), (4, None));
    }

    /// Acceptance (#36): bad files get an error naming the file and the line.
    #[test]
    fn bad_files_name_the_file_and_line() {
        let err = read("d.json", "[\n {\"conversations\": []},\n {\"x\": 1 2}\n]").unwrap_err();
        assert!(
            err.contains("d.json line 2") && err.contains("no human turn"),
            "{err}"
        );
        let err = read(
            "d.json",
            "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"q\"}]},\n {\"x\": 1 2}\n]",
        )
        .unwrap_err();
        assert!(
            err.contains("d.json line 3") && err.contains("not valid JSON"),
            "{err}"
        );
        let err = read("d.json", "not json at all").unwrap_err();
        assert!(
            err.contains("d.json line 1") && err.contains("not a JSON array"),
            "{err}"
        );
        let err = read("p.jsonl", "{\"prompt\": \"a\"}\n\n{\"prompt\": tru}\n").unwrap_err();
        assert!(
            err.contains("p.jsonl line 3") && err.contains("not a JSON object"),
            "{err}"
        );
        let err = read("p.jsonl", "{\"other\": 1}\n").unwrap_err();
        assert!(
            err.contains("line 1") && err.contains("\"prompt\""),
            "{err}"
        );
        for (name, body) in [("e.json", ""), ("e.jsonl", "\n\n"), ("e.txt", "  \n")] {
            let err = read(name, body).unwrap_err();
            assert!(
                err.contains(name) && (err.contains("empty") || err.contains("no prompt")),
                "{err}"
            );
        }
        let err = read("m.json", "[]").unwrap_err();
        assert!(err.contains("holds no prompt"), "{err}");
    }

    #[test]
    fn malformed_conversations_can_be_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("d.json"),
            r#"[{"conversations": [{"from": "gpt", "value": "?"}]},
                {"conversations": [{"from": "human", "value": "q"}]}]"#,
        )
        .unwrap();
        let spec = PromptSpec {
            malformed: Malformed::Skip,
            ..PromptSpec::file("d.json".into())
        };
        let file = PromptFile::read(&spec, dir.path()).unwrap();
        assert_eq!((file.entries.len(), file.skipped), (1, 1));
    }

    #[test]
    fn jsonl_prompts_and_chats() {
        let file = read(
            "p.jsonl",
            "{\"prompt\": \"Write a poem\", \"output_tokens\": 64}\n\
             {\"messages\": [{\"role\": \"system\", \"content\": \"s\"}, {\"role\": \"user\", \"content\": \"u\"}]}\n",
        )
        .unwrap();
        assert_eq!(file.kind, PromptKind::Jsonl);
        assert_eq!(file.entries[0].answer, Some(Answer::Tokens(64)));
        let EntryPrompt::Messages(m) = &file.entries[1].prompt else {
            panic!()
        };
        assert_eq!((m[0].role.as_str(), m[1].content.as_str()), ("system", "u"));
        let text = read("book", "Call me Ishmael.").unwrap();
        assert_eq!(text.kind, PromptKind::Text);
        assert_eq!(text.name(), "book");
    }
}
