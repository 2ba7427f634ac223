//! One accepted generation request: its output's texts, its usage and its response chunks, and
//! the guard that frees its KV cache when its response is dropped.

use std::os::fd::RawFd;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::faults::Fault;
use crate::request_log::{RequestLog, ServedRequest};
use crate::scheduler::Cmd;
use crate::tokenizer;

/// Salt of the reasoning tokens' words, so reasoning and answer read differently.
const REASONING_SALT: u64 = 0x7ea5_0e11;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Completion,
    Chat,
}

/// One accepted generation request.
pub(super) struct Job {
    pub(super) kind: Kind,
    pub(super) id: String,
    pub(super) created: u64,
    pub(super) model: String,
    pub(super) prompt_tokens: u32,
    pub(super) output_tokens: u32,
    /// The first this many output tokens are reasoning (`reasoning_content`).
    pub(super) reasoning_tokens: u32,
    pub(super) finish_reason: &'static str,
    pub(super) gen_seed: u64,
    pub(super) log: Arc<RequestLog>,
    pub(super) include_usage: bool,
    pub(super) continuous_usage: bool,
    pub(super) fault: Fault,
    pub(super) emit_timestamps: bool,
    pub(super) fd: RawFd,
    /// When its HTTP request arrived.
    pub(super) received: std::time::Instant,
}

impl Job {
    /// The output token at which mid-stream faults strike.
    pub(super) fn fault_index(&self) -> u32 {
        self.output_tokens / 2
    }

    pub(super) fn token_text(&self, index: u32) -> &'static str {
        output_text(
            self.gen_seed,
            self.reasoning_tokens,
            index,
            self.fault == Fault::Utf8Split && index == self.fault_index(),
        )
    }

    pub(super) fn is_reasoning(&self, index: u32) -> bool {
        index < self.reasoning_tokens
    }

    /// The engine admitted the request with `cached` prompt tokens from its prefix cache.
    pub(super) fn admitted(&self, cached: u32) {
        self.log.push(ServedRequest {
            id: self.id.clone(),
            prompt_tokens: self.prompt_tokens,
            cached_tokens: cached,
            completion_tokens: self.output_tokens,
            reasoning_tokens: self.reasoning_tokens,
            received_s: self.log.seconds(self.received),
            completed_s: None,
        });
    }

    /// The engine produced the request's last token.
    pub(super) fn completed(&self) {
        self.log.completed(&self.id);
    }

    pub(super) fn usage(&self, completion: u32, cached: u32) -> Value {
        let mut usage = json!({
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.prompt_tokens + completion,
            "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        });
        if self.reasoning_tokens > 0 {
            let reasoning = completion.min(self.reasoning_tokens);
            usage["completion_tokens_details"] = json!({ "reasoning_tokens": reasoning });
        }
        usage
    }

    pub(super) fn chunk(&self, choices: Value, usage: Option<Value>) -> Value {
        let object = match self.kind {
            Kind::Completion => "text_completion",
            Kind::Chat => "chat.completion.chunk",
        };
        let mut v = json!({"id": self.id, "object": object, "created": self.created, "model": self.model, "choices": choices});
        if let Some(u) = usage {
            v["usage"] = u;
        }
        v
    }

    pub(super) fn content_chunk(
        &self,
        text: &str,
        reasoning: bool,
        finish: Option<&str>,
        usage: Option<Value>,
    ) -> Value {
        let choice = match (self.kind, reasoning) {
            (Kind::Completion, _) => {
                json!({"index": 0, "text": text, "logprobs": null, "finish_reason": finish, "stop_reason": null})
            }
            (Kind::Chat, false) => {
                json!({"index": 0, "delta": {"content": text}, "logprobs": null, "finish_reason": finish})
            }
            (Kind::Chat, true) => {
                json!({"index": 0, "delta": {"reasoning_content": text}, "logprobs": null, "finish_reason": finish})
            }
        };
        self.chunk(json!([choice]), usage)
    }
}

/// Output token `index`'s text: reasoning words for the first `reasoning` tokens, then the
/// answer's; the multi-byte word where a `utf8split` fault strikes.
pub(super) fn output_text(seed: u64, reasoning: u32, index: u32, split_here: bool) -> &'static str {
    if split_here {
        tokenizer::MULTIBYTE_WORD
    } else if index < reasoning {
        tokenizer::output_token(seed ^ REASONING_SALT, index)
    } else {
        tokenizer::output_token(seed, index)
    }
}

/// Sends `Cancel` when a request's response is dropped (client gone, or done), freeing its KV.
pub(super) struct CancelGuard {
    pub(super) id: u64,
    pub(super) cmds: mpsc::UnboundedSender<Cmd>,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        let _ = self.cmds.send(Cmd::Cancel(self.id));
    }
}
