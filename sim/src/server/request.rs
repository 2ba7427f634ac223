//! A generation request's body read into a [`Job`] and the engine's [`SeqSpec`]: vLLM's checks
//! and messages, the prompt's tokens, the output's length (where a model would stop) and the
//! prompt's prefix-cache blocks.

use std::os::fd::RawFd;
use std::sync::atomic::Ordering;

use axum::body::Bytes;
use serde_json::Value;

use crate::engine::SeqSpec;
use crate::faults::Fault;
use crate::rng;
use crate::server::api::{
    bad_request, check_model, parse_json, parse_messages, unix_secs, Rejection,
};
use crate::server::job::{output_text, Job, Kind};
use crate::server::state::Shared;
use crate::tokenizer;

/// Mean length of a natural (EOS-terminated) answer, in tokens: each token ends the answer with
/// probability 1/300, like a model that stops when it is done.
const MEAN_NATURAL_OUTPUT: f64 = 300.0;

pub(super) fn prepare(
    s: &Shared,
    body: &Bytes,
    kind: Kind,
    fault: Fault,
    fd: RawFd,
    received: std::time::Instant,
) -> Result<(Job, SeqSpec, bool), Rejection> {
    let v = parse_json(body)?;
    check_model(s, &v)?;
    reject_unsupported(&v, kind)?;
    let stream = as_bool(&v, "stream")?;
    let (include_usage, continuous_usage) = usage_options(&v, stream)?;
    let ids = prompt_ids(&v, kind)?;
    let prompt = ids.len() as u32;
    let max_tokens = max_tokens(&v, kind, prompt, s.max_sequence_tokens)?;
    let min_tokens = as_u32(&v, "min_tokens")?.unwrap_or(0);
    if min_tokens > max_tokens {
        return Err(bad_request(
            "`min_tokens` must not exceed `max_tokens`",
            "min_tokens",
        ));
    }
    let ignore_eos = as_bool(&v, "ignore_eos")?;
    let request_seed = v.get("seed").and_then(Value::as_u64).unwrap_or(0);
    let prompt_hash = rng::combine(&ids.iter().map(|&t| u64::from(t)).collect::<Vec<_>>());
    let gen_seed = rng::combine(&[s.seed, request_seed, prompt_hash]);
    let (output_tokens, finish_reason) =
        output_length(gen_seed, max_tokens, min_tokens, ignore_eos);
    // A reasoning model thinks before every chat answer; at least one answer token remains.
    let reasoning_tokens = match kind {
        Kind::Chat => s.reasoning_tokens.min(output_tokens.saturating_sub(1)),
        Kind::Completion => 0,
    };
    let n = s.next_id.fetch_add(1, Ordering::Relaxed);
    let prefix = match kind {
        Kind::Completion => "cmpl",
        Kind::Chat => "chatcmpl",
    };
    let job = Job {
        kind,
        id: format!("{prefix}-sim{n:016x}"),
        created: unix_secs(),
        model: s.served_name.clone(),
        prompt_tokens: prompt,
        output_tokens,
        reasoning_tokens,
        finish_reason,
        gen_seed,
        log: s.log.clone(),
        include_usage,
        continuous_usage,
        fault,
        emit_timestamps: s.emit_timestamps,
        fd,
        received,
    };
    let spec = SeqSpec {
        prompt_tokens: prompt,
        output_tokens,
        block_hashes: if s.profile.prefix_cache {
            cache_blocks(&ids, &job, s.profile.kv_block_size)
        } else {
            Vec::new()
        },
    };
    Ok((job, spec, stream))
}

/// How many tokens the answer has and why it ends: where a model would emit EOS (geometric,
/// mean [`MEAN_NATURAL_OUTPUT`], fixed by the seed), within `min_tokens..=max_tokens`, or
/// `max_tokens` when EOS is ignored.
fn output_length(
    gen_seed: u64,
    max_tokens: u32,
    min_tokens: u32,
    ignore_eos: bool,
) -> (u32, &'static str) {
    let natural = 1.0
        + (-(1.0 - rng::unit(rng::mix(gen_seed ^ 0xe05))).ln() * (MEAN_NATURAL_OUTPUT - 1.0))
            .floor();
    let natural = natural.min(f64::from(u32::MAX)) as u32;
    if ignore_eos || natural >= max_tokens {
        (max_tokens, "length")
    } else if natural < min_tokens {
        (min_tokens, "stop")
    } else {
        (natural, "stop")
    }
}

/// The prefix-cache blocks of the request's sequence: on past the prompt over the answer it
/// will generate, so a finished answer stays cached for the next turn that carries it.
fn cache_blocks(prompt: &[u32], job: &Job, block: u32) -> Vec<u64> {
    let answer = (0..job.output_tokens)
        .map(|i| tokenizer::hash_id(output_text(job.gen_seed, job.reasoning_tokens, i, false)));
    let sequence: Vec<u32> = prompt.iter().copied().chain(answer).collect();
    block_hashes(&sequence, block)
}

/// `stream_options`: whether usage comes with the last chunk, and with every chunk.
fn usage_options(v: &Value, stream: bool) -> Result<(bool, bool), Rejection> {
    let options = v.get("stream_options").filter(|o| !o.is_null());
    if options.is_some() && !stream {
        return Err(bad_request(
            "`stream_options` can only be set when `stream` is true",
            "stream_options",
        ));
    }
    let include_usage = options
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    let continuous_usage = include_usage
        && options
            .and_then(|o| o.get("continuous_usage_stats"))
            .and_then(Value::as_bool)
            == Some(true);
    Ok((include_usage, continuous_usage))
}

/// The prompt's tokens: a completion's prompt, or the chat with its template applied.
fn prompt_ids(v: &Value, kind: Kind) -> Result<Vec<u32>, Rejection> {
    let ids = match kind {
        Kind::Completion => completion_prompt(v)?,
        Kind::Chat => {
            let messages = parse_messages(v)?;
            let add = v
                .get("add_generation_prompt")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            tokenizer::encode(&tokenizer::apply_chat_template(&messages, add))
        }
    };
    if ids.is_empty() {
        return Err(bad_request("the prompt is empty", "prompt"));
    }
    Ok(ids)
}

/// The most tokens the request may produce: as asked (completions default to 16), else what
/// the context leaves after the prompt; refused when prompt and output exceed the context.
fn max_tokens(v: &Value, kind: Kind, prompt: u32, max_len: u64) -> Result<u32, Rejection> {
    let requested = match kind {
        Kind::Completion => as_u32(v, "max_tokens")?.or(Some(16)),
        Kind::Chat => match as_u32(v, "max_completion_tokens")? {
            Some(n) => Some(n),
            None => as_u32(v, "max_tokens")?,
        },
    };
    let max_tokens = match requested {
        Some(0) => return Err(bad_request("`max_tokens` must be at least 1", "max_tokens")),
        Some(n) => n,
        None => (max_len.saturating_sub(u64::from(prompt))).min(u64::from(u32::MAX)) as u32,
    };
    if u64::from(prompt) + u64::from(max_tokens) > max_len || max_tokens == 0 {
        return Err(bad_request(
            format!(
                "This model's maximum context length is {max_len} tokens. However, you requested {} tokens \
                 ({prompt} in the prompt, {max_tokens} in the completion). Please reduce the length of the \
                 prompt or completion.",
                u64::from(prompt) + u64::from(max_tokens)
            ),
            "max_tokens",
        ));
    }
    Ok(max_tokens)
}

fn as_u32(v: &Value, key: &str) -> Result<Option<u32>, Rejection> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| bad_request(format!("`{key}` must be a non-negative integer"), key)),
    }
}

fn as_bool(v: &Value, key: &str) -> Result<bool, Rejection> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad_request(format!("`{key}` must be a boolean"), key)),
    }
}

fn reject_unsupported(v: &Value, kind: Kind) -> Result<(), Rejection> {
    let more_than_one = |k: &str| v.get(k).and_then(Value::as_u64).is_some_and(|n| n > 1);
    if more_than_one("n") {
        return Err(bad_request(
            "`n` > 1 is not supported by this server; send n = 1",
            "n",
        ));
    }
    if more_than_one("best_of") {
        return Err(bad_request(
            "`best_of` > 1 is not supported by this server",
            "best_of",
        ));
    }
    if v.get("echo").and_then(Value::as_bool) == Some(true) {
        return Err(bad_request(
            "`echo` is not supported by this server",
            "echo",
        ));
    }
    let logprobs = match kind {
        Kind::Completion => v.get("logprobs").is_some_and(|l| !l.is_null()),
        Kind::Chat => v.get("logprobs").and_then(Value::as_bool) == Some(true),
    };
    if logprobs {
        return Err(bad_request(
            "`logprobs` is not supported by this server",
            "logprobs",
        ));
    }
    if v.get("suffix").is_some_and(|s| !s.is_null()) {
        return Err(bad_request(
            "`suffix` is not supported by this server",
            "suffix",
        ));
    }
    Ok(())
}

/// Prompt token ids for a completions request.
fn completion_prompt(v: &Value) -> Result<Vec<u32>, Rejection> {
    let err = || {
        bad_request(
            "`prompt` must be a string, a list of one string, or a list of token ids",
            "prompt",
        )
    };
    let ids = |a: &Vec<Value>| {
        a.iter()
            .map(|t| t.as_u64().and_then(|t| u32::try_from(t).ok()))
            .collect::<Option<Vec<u32>>>()
    };
    match v.get("prompt") {
        Some(Value::String(s)) => Ok(tokenizer::encode(s)),
        Some(Value::Array(a)) if a.len() == 1 && a[0].is_string() => Ok(tokenizer::encode(a[0].as_str().unwrap_or(""))),
        Some(Value::Array(a)) if a.len() == 1 && a[0].is_array() => {
            ids(a[0].as_array().expect("array")).ok_or_else(err)
        }
        Some(Value::Array(a)) if a.iter().all(Value::is_number) && !a.is_empty() => ids(a).ok_or_else(err),
        Some(Value::Array(a)) if a.len() > 1 => Err(bad_request(
            "batched prompts (a list of several prompts) are not supported by this server; send one prompt per request",
            "prompt",
        )),
        _ => Err(err()),
    }
}

fn block_hashes(ids: &[u32], block: u32) -> Vec<u64> {
    let mut h = 0u64;
    ids.chunks_exact(block as usize)
        .map(|c| {
            h = rng::combine(&[
                h,
                rng::combine(&c.iter().map(|&t| u64::from(t)).collect::<Vec<_>>()),
            ]);
            h
        })
        .collect()
}
