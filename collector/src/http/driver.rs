//! Sends one streaming request and timestamps every SSE event on the monotonic clock.
//!
//! Time is read here and nowhere else. An event's instant is the kernel's receive timestamp of
//! the read that completed it ([`crate::http::arrival`]), so events parsed late in a burst keep the
//! instant they arrived; without one, the instant right after the event is parsed. Everything
//! downstream works from these instants.

use std::fmt;
use std::time::{Duration, Instant};

use std::borrow::Cow;

use http::header::HeaderValue;
use infermeter_report::{EngineTimings, ErrorKind, Outcome, Retried, RetryReason, TokenSource};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::http::adapters::EngineKind;
use crate::http::api::{Api, ConnectionReuse};
use crate::http::api_key::ApiKey;
use crate::http::arrival::EventClock;
use crate::http::base_url::without_credentials;
use crate::http::body::{joined, ChatMessage, PromptBody};
use crate::http::client::{Response, SendError, StreamClient};
use crate::http::sse::{Event, Events};

mod read;

use read::StreamRead;

/// Everything needed to talk to one endpoint.
#[derive(Clone)]
pub struct Driver {
    /// Pooled or not, as `--connection-reuse` says.
    client: StreamClient,
    /// Never pooled: where a request goes again when a reused connection failed it before
    /// any response byte.
    fresh_client: StreamClient,
    uri: http::Uri,
    api: Api,
    model: String,
    engine: EngineKind,
    prompt_caching: bool,
    extra_body: ExtraBody,
    /// `Bearer <key>`, marked sensitive (never printed).
    authorization: Option<HeaderValue>,
    first_token_timeout: Duration,
    total_timeout: Duration,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("uri", &self.uri)
            .field("api", &self.api)
            .field("model", &self.model)
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

/// Why a [`Driver`] cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("the endpoint {url:?} is not an http:// or https:// URL with a host ({reason}); use e.g. http://localhost:8000/v1")]
    BaseUrl { url: String, reason: String },
    #[error("the API key holds characters an HTTP header cannot carry (control or non-ASCII characters); check the key's file or variable")]
    ApiKey,
    #[error("cannot set up TLS: {0}")]
    Tls(#[from] rustls::Error),
}

/// Endpoint settings for [`Driver::new`].
#[derive(Debug, Clone)]
pub struct DriverConfig {
    /// The API base, e.g. `http://localhost:8000/v1`: the endpoint is the API's path under it.
    pub base_url: String,
    pub api: Api,
    pub model: String,
    pub engine: EngineKind,
    /// The suite's `prompt_caching`: when false, engines that can are told not to cache.
    pub prompt_caching: bool,
    pub api_key: Option<ApiKey>,
    pub connect_timeout: Duration,
    pub first_token_timeout: Duration,
    pub total_timeout: Duration,
    /// Largest number of requests in flight, to size the connection pool.
    pub max_in_flight: usize,
    pub connection_reuse: ConnectionReuse,
    /// Fields added to every request body (`--extra-body`).
    pub extra_body: ExtraBody,
}

/// Fields a user adds to every request body (`--extra-body '{"top_p": 0.9}'`): sampling
/// settings, `logit_bias`, `chat_template_kwargs` and the like. The fields that make the
/// measurement (the model, the prompt, the output length, streaming and its usage, the
/// suite's caching) are the collector's and are refused here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtraBody(pub Map<String, Value>);

impl ExtraBody {
    /// Fields the collector sets from the suite and the run: an extra body may not set them.
    pub const MEASURED: [&'static str; 11] = [
        "model",
        "messages",
        "prompt",
        "max_tokens",
        "max_completion_tokens",
        "stream",
        "stream_options",
        "ignore_eos",
        "min_tokens",
        "timings_per_token",
        "cache_prompt",
    ];

    /// Parses a JSON object of fields, refusing those in [`ExtraBody::MEASURED`].
    pub fn parse(text: &str) -> Result<ExtraBody, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            format!("is not JSON ({e}); give an object such as '{{\"top_p\": 0.9}}'")
        })?;
        let Value::Object(fields) = value else {
            return Err("is not a JSON object; give one such as '{\"top_p\": 0.9}'".into());
        };
        if let Some(key) = fields.keys().find(|k| Self::MEASURED.contains(&k.as_str())) {
            return Err(format!(
                "sets \"{key}\", which the collector sets from the suite (lengths, streaming, \
                 caching) so that what it measures is what the report says; change the suite instead"
            ));
        }
        Ok(ExtraBody(fields))
    }
}

/// One content-carrying stream event, or a final event counting tokens that decoded to no text.
#[derive(Debug, Clone, Copy)]
pub struct Chunk {
    /// When it arrived (see the module doc for which clock).
    pub at: Instant,
    pub tokens: u32,
    /// The simulator's CLOCK_MONOTONIC send time (`--emit-timestamps`), for timing benchmarks.
    pub server_mono_ns: Option<u64>,
}

/// What one request produced: raw instants and counts, reduced later by `aggregate`.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub sent: Instant,
    pub end: Instant,
    pub first_token: Option<Instant>,
    pub chunks: Vec<Chunk>,
    pub outcome: Outcome,
    pub prompt_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    pub cached_tokens: Option<u32>,
    pub token_source: TokenSource,
    pub engine_timings: Option<EngineTimings>,
    /// Where `chunks[].at`, `first_token` and a successful `end` came from (`Parse` if any of
    /// them had to fall back to parse time).
    pub clock: EventClock,
    /// Set when the request went a second time (then `sent` is the second attempt's).
    pub retried: Option<Retried>,
    /// The response's `id`.
    pub response_id: Option<String>,
    /// The first event carrying answer content (not reasoning), when reasoning came first.
    pub first_answer: Option<Instant>,
    /// Reasoning tokens, when the stream carried reasoning: the server's
    /// `completion_tokens_details.reasoning_tokens`, else one per reasoning event.
    pub reasoning_tokens: Option<u32>,
    /// The answer's text as streamed (reasoning left out), when asked for
    /// ([`Driver::send_from`]): a conversation's next turn carries it.
    pub answer: Option<String>,
}

/// One event's JSON. Its strings borrow from the event's text where they hold no escapes: the
/// text of every token is looked at, and kept only for a conversation's next turn.
#[derive(Debug, Deserialize)]
struct StreamChunk<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    usage: Option<Usage>,
    error: Option<Value>,
    infermeter_ts: Option<ServerTimestamp>,
    timings: Option<RawTimings>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
    tool_calls: Option<Vec<IgnoredAny>>,
}

#[derive(Debug, Deserialize)]
struct Usage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct ServerTimestamp {
    mono_ns: u64,
}

/// llama.cpp's per-request `timings` (running, with `timings_per_token`, on every chunk).
#[derive(Debug, Deserialize)]
struct RawTimings {
    prompt_n: Option<u64>,
    prompt_ms: Option<f64>,
    predicted_n: Option<u32>,
    predicted_ms: Option<f64>,
    /// Prompt tokens reused from the slot's cache.
    cache_n: Option<u64>,
}

fn non_empty(s: &Option<Cow<'_, str>>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

impl Choice<'_> {
    /// True for content, reasoning or a tool-call delta; false for the role-only first chunk.
    fn carries_output(&self) -> bool {
        self.carries_answer() || self.carries_reasoning()
    }

    /// Content (text) or a tool-call delta: what the user waits for after any reasoning.
    fn carries_answer(&self) -> bool {
        non_empty(&self.text)
            || self.delta.as_ref().is_some_and(|d| {
                non_empty(&d.content) || d.tool_calls.as_ref().is_some_and(|t| !t.is_empty())
            })
    }

    /// `reasoning_content` (vLLM, DeepSeek) or `reasoning` (OpenRouter, newer vLLM).
    fn carries_reasoning(&self) -> bool {
        self.delta
            .as_ref()
            .is_some_and(|d| non_empty(&d.reasoning_content) || non_empty(&d.reasoning))
    }

    /// The answer text of this chunk (a completion's text, a chat delta's content).
    fn answer_text(&self) -> Option<&str> {
        self.text
            .as_deref()
            .or_else(|| self.delta.as_ref().and_then(|d| d.content.as_deref()))
    }
}

/// Why a stream stopped early.
enum Stop {
    Failed { kind: ErrorKind, detail: String },
}

/// Why an attempt got no response head.
enum AttemptError {
    /// It failed on a reused connection before any response byte: it never reached the
    /// engine (the detail is the connection's error).
    StaleConnection(String),
    Failed(Stop),
}

impl AttemptError {
    /// The failure of an attempt that is not sent again. (A retry goes on a new connection,
    /// which cannot be stale; were it, the connection broke before the stream ended.)
    fn into_stop(self) -> Stop {
        match self {
            AttemptError::Failed(stop) => stop,
            AttemptError::StaleConnection(detail) => Stop::Failed {
                kind: ErrorKind::Disconnect,
                detail,
            },
        }
    }
}

impl Driver {
    pub fn new(config: DriverConfig) -> Result<Driver, DriverError> {
        let url = format!(
            "{}/{}",
            config.base_url.trim_end_matches('/'),
            config.api.path()
        );
        let bad_url = |reason: String| DriverError::BaseUrl {
            url: without_credentials(&url),
            reason,
        };
        let uri: http::Uri = url.parse().map_err(|e| bad_url(format!("{e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(bad_url("no http(s) scheme or host".into()));
        }
        let authorization = match &config.api_key {
            Some(key) => Some(key.bearer().ok_or(DriverError::ApiKey)?),
            None => None,
        };
        let pool = match config.connection_reuse {
            ConnectionReuse::Pooled => config.max_in_flight.max(1),
            ConnectionReuse::Never => 0,
        };
        Ok(Driver {
            client: StreamClient::new(&uri, config.connect_timeout, pool)?,
            fresh_client: StreamClient::new(&uri, config.connect_timeout, 0)?,
            uri,
            api: config.api,
            model: config.model,
            engine: config.engine,
            prompt_caching: config.prompt_caching,
            extra_body: config.extra_body,
            authorization,
            first_token_timeout: config.first_token_timeout,
            total_timeout: config.total_timeout,
        })
    }

    /// The request body for `prompt` asking for exactly `output_tokens`.
    pub fn body(&self, prompt: &str, output_tokens: u32) -> Vec<u8> {
        let prompt = match self.api {
            Api::Chat => json!([{ "role": "user", "content": prompt }]),
            Api::Completions => prompt.into(),
        };
        self.body_of(prompt, output_tokens, self.prompt_caching, false)
    }

    /// The body of a conversation's turn: its `messages` for chat, their contents one after
    /// another for completions; `caching` tells engines that can whether to use their cache.
    pub fn messages_body(
        &self,
        messages: &[ChatMessage],
        output_tokens: u32,
        caching: bool,
    ) -> Vec<u8> {
        self.body_of(self.messages(messages), output_tokens, caching, false)
    }

    /// The body of a prompt from a prompt file or cut to a drawn length: `output_tokens`
    /// exactly, or (`natural`) at most, the model stopping where it chooses.
    pub fn prompt_body(&self, prompt: &PromptBody, output_tokens: u32, natural: bool) -> Vec<u8> {
        let prompt = match prompt {
            PromptBody::Text(text) if self.api == Api::Completions => text.as_str().into(),
            PromptBody::Text(text) => json!([{ "role": "user", "content": text }]),
            PromptBody::Messages(messages) => self.messages(messages),
        };
        self.body_of(prompt, output_tokens, self.prompt_caching, natural)
    }

    /// `messages` as the API takes them: the array for chat, their texts for completions.
    fn messages(&self, messages: &[ChatMessage]) -> Value {
        match self.api {
            Api::Chat => json!(messages),
            Api::Completions => joined(messages).into(),
        }
    }

    /// A body with `prompt` (the `messages` array for chat, the text for completions).
    fn body_of(&self, prompt: Value, output_tokens: u32, caching: bool, natural: bool) -> Vec<u8> {
        let mut body = Map::new();
        body.insert("model".into(), self.model.clone().into());
        let key = match self.api {
            Api::Chat => "messages",
            Api::Completions => "prompt",
        };
        body.insert(key.into(), prompt);
        body.insert("max_tokens".into(), output_tokens.into());
        body.insert("stream".into(), true.into());
        body.insert("temperature".into(), 0.0.into());
        let mut stream_options = json!({ "include_usage": true });
        if self.engine.wants_continuous_usage() {
            stream_options["continuous_usage_stats"] = true.into();
        }
        body.insert("stream_options".into(), stream_options);
        self.engine
            .request_extras(&mut body, output_tokens, caching, natural);
        // After the collector's fields: an extra `temperature` replaces its 0.
        body.extend(self.extra_body.0.clone());
        serde_json::to_vec(&Value::Object(body)).expect("JSON of plain values")
    }

    /// Sends `body` now and reads the stream to its end. Never panics on server behaviour:
    /// every failure becomes an [`Outcome`].
    pub async fn send(&self, body: Vec<u8>) -> Exchange {
        self.send_from(body, Instant::now(), false).await
    }

    /// [`Driver::send`] of a request the scheduler dispatched at `sent` (to this task): the
    /// time until the task runs counts in its latencies. `keep_answer` keeps the answer's text
    /// in [`Exchange::answer`].
    pub async fn send_from(&self, body: Vec<u8>, sent: Instant, keep_answer: bool) -> Exchange {
        let mut exchange = Exchange {
            sent,
            end: sent,
            first_token: None,
            chunks: Vec::new(),
            outcome: Outcome::Ok,
            prompt_tokens: None,
            output_tokens: None,
            cached_tokens: None,
            token_source: TokenSource::Chunks,
            engine_timings: None,
            clock: EventClock::Parse,
            retried: None,
            response_id: None,
            first_answer: None,
            reasoning_tokens: None,
            answer: keep_answer.then(String::new),
        };
        match self.stream(body, &mut exchange).await {
            Ok(done) => exchange.end = done,
            Err(Stop::Failed { kind, detail }) => {
                exchange.end = Instant::now();
                exchange.outcome = if exchange.first_token.is_some() {
                    Outcome::Incomplete { kind, detail }
                } else {
                    Outcome::Errored { kind, detail }
                };
            }
        }
        if exchange.output_tokens.is_none() && exchange.outcome == Outcome::Ok {
            exchange.output_tokens = Some(exchange.chunks.iter().map(|c| c.tokens).sum());
        }
        exchange
    }

    /// Sends the request and reads its stream to `[DONE]`; returns that event's instant.
    async fn stream(&self, body: Vec<u8>, ex: &mut Exchange) -> Result<Instant, Stop> {
        let deadlines = Deadlines {
            first_token: tokio::time::Instant::from_std(ex.sent + self.first_token_timeout),
            total: tokio::time::Instant::from_std(ex.sent + self.total_timeout),
        };
        let mut response = self.respond(&body, ex, &deadlines).await?;
        let mut events = Events::default();
        let mut read = StreamRead::new(ex, response.arrival());
        // One timer for the whole stream, moved once when the first token comes: a timeout
        // per event would put a timer into the runtime's wheel and take it out for each.
        let mut streaming = false;
        let deadline = tokio::time::sleep_until(deadlines.next(streaming));
        tokio::pin!(deadline);
        loop {
            if !streaming && read.ex.first_token.is_some() {
                streaming = true;
                deadline.as_mut().reset(deadlines.next(streaming));
            }
            // The events the bytes so far complete, then the next bytes. The body is read in
            // this task, as the events are taken: the latest read completed this event.
            let Some(event) = events.next_event() else {
                let bytes = tokio::select! {
                    biased;
                    bytes = response.data() => bytes,
                    () = &mut deadline => return Err(timeout_stop(streaming)),
                };
                match bytes {
                    Some(Ok(bytes)) => events.push(bytes),
                    None => return read.finish(None),
                    Some(Err(e)) => {
                        return Err(Stop::Failed {
                            kind: ErrorKind::Disconnect,
                            detail: format!("stream broke: {e}"),
                        })
                    }
                }
                continue;
            };
            let stamp = read.stamp();
            match parse(&event)? {
                Parsed::Done => {
                    read.ex.clock = stamp.clock;
                    let done = read.finish(Some(stamp.at));
                    read_to_end(&mut response).await;
                    return done;
                }
                Parsed::Nothing => {}
                Parsed::Chunk(chunk) => read.classify(*chunk, stamp),
            }
        }
    }

    /// Sends the request and waits for the head of a successful response. A first attempt
    /// that failed on a reused connection before any response byte never reached the engine:
    /// it goes again, once, on a new connection, and the exchange's times start from there.
    async fn respond(
        &self,
        body: &[u8],
        ex: &mut Exchange,
        deadlines: &Deadlines,
    ) -> Result<Response, Stop> {
        let authorization = self.authorization.as_ref().map(HeaderValue::as_bytes);
        let request = self.client.request(authorization, body);
        let detail = match self.attempt(&self.client, &request, deadlines).await {
            Ok(response) => return successful(response).await,
            Err(AttemptError::Failed(stop)) => return Err(stop),
            Err(AttemptError::StaleConnection(detail)) => detail,
        };
        let again = Instant::now();
        ex.retried = Some(Retried {
            reason: RetryReason::StaleConnection,
            detail,
            lost_s: (again - ex.sent).as_secs_f64(),
        });
        ex.sent = again;
        let response = self
            .attempt(&self.fresh_client, &request, deadlines)
            .await
            .map_err(AttemptError::into_stop)?;
        successful(response).await
    }

    /// Sends the request once on `client`; the response's head, or why none came.
    async fn attempt(
        &self,
        client: &StreamClient,
        request: &[u8],
        deadlines: &Deadlines,
    ) -> Result<Response, AttemptError> {
        match tokio::time::timeout_at(deadlines.next(false), client.send(request)).await {
            Err(_) => Err(AttemptError::Failed(timeout_stop(false))),
            Ok(Err(e)) => Err(request_error(e)),
            Ok(Ok(response)) => Ok(response),
        }
    }
}

/// The response if its status is a success; else the failure, with the body's start.
async fn successful(response: Response) -> Result<Response, Stop> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let text = tokio::time::timeout(Duration::from_secs(5), response.text(64 * 1024))
        .await
        .unwrap_or_default();
    Err(Stop::Failed {
        kind: ErrorKind::Http(status.as_u16()),
        detail: format!("HTTP {status}: {}", snippet(&text)),
    })
}

/// When a request gives up: no token by `first_token`, or not done by `total`.
struct Deadlines {
    first_token: tokio::time::Instant,
    total: tokio::time::Instant,
}

impl Deadlines {
    /// The deadline for what comes next: until the first token, both apply.
    fn next(&self, streaming: bool) -> tokio::time::Instant {
        if streaming {
            self.total
        } else {
            self.first_token.min(self.total)
        }
    }
}

/// What one stream event says.
#[derive(Debug)]
enum Parsed<'a> {
    /// `[DONE]`: the stream is complete.
    Done,
    /// A keep-alive or an empty data line.
    Nothing,
    /// A chunk, with or without output.
    Chunk(Box<StreamChunk<'a>>),
}

/// Parses one event: the end, nothing, a chunk, or the failure it reports.
fn parse<'a>(event: &'a Event<'_>) -> Result<Parsed<'a>, Stop> {
    let data = event.data.trim();
    if data == "[DONE]" {
        return Ok(Parsed::Done);
    }
    if event.event == "error" {
        return Err(Stop::Failed {
            kind: ErrorKind::ErrorEvent,
            detail: snippet(data),
        });
    }
    if data.is_empty() {
        return Ok(Parsed::Nothing);
    }
    let chunk: StreamChunk = serde_json::from_str(data).map_err(|e| Stop::Failed {
        kind: ErrorKind::MalformedSse,
        detail: format!("{e}: {}", snippet(data)),
    })?;
    match &chunk.error {
        Some(error) => Err(Stop::Failed {
            kind: ErrorKind::ErrorEvent,
            detail: snippet(&error.to_string()),
        }),
        None => Ok(Parsed::Chunk(Box::new(chunk))),
    }
}

/// After `[DONE]`, how long the body's end (the last chunk's framing) may take to arrive.
const BODY_END_WAIT: Duration = Duration::from_millis(50);

/// Reads the body past `[DONE]` to its end, so the connection goes back to the pool: dropped
/// unfinished, it closes, and the next request pays for a new one. Events after
/// `[DONE]` are ignored.
async fn read_to_end(response: &mut Response) {
    let _ = tokio::time::timeout(BODY_END_WAIT, async {
        while let Some(Ok(_)) = response.data().await {}
    })
    .await;
}

fn timeout_stop(streaming: bool) -> Stop {
    if streaming {
        Stop::Failed {
            kind: ErrorKind::TimeoutTotal,
            detail: "the request exceeded the total timeout (--total-timeout)".into(),
        }
    } else {
        Stop::Failed {
            kind: ErrorKind::TimeoutFirstToken,
            detail: "no token before the first-token timeout (--first-token-timeout)".into(),
        }
    }
}

/// Classifies a failure before a response arrived: a connect error, a request the server
/// never saw (a reused connection it had closed, failing before any response byte), or a
/// disconnect. The client's errors never quote the request (its headers hold the API key).
fn request_error(e: SendError) -> AttemptError {
    match e {
        SendError::Connect(detail) => AttemptError::Failed(Stop::Failed {
            kind: ErrorKind::Connect,
            detail,
        }),
        SendError::Stale(detail) => AttemptError::StaleConnection(detail),
        SendError::Broken(detail) => AttemptError::Failed(Stop::Failed {
            kind: ErrorKind::Disconnect,
            detail,
        }),
    }
}

/// The start of a body, for error details.
fn snippet(text: &str) -> String {
    const MAX: usize = 200;
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::new("sk-secret".into()).unwrap();
        assert!(!format!("{key:?}").contains("sk-secret"));
        assert!(ApiKey::new("  ".into()).is_none());
    }

    #[test]
    fn role_only_chunk_carries_no_output() {
        let parse = |s: &'static str| serde_json::from_str::<StreamChunk<'static>>(s).unwrap();
        let role = parse(r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#);
        assert!(!role.choices[0].carries_output());
        let reasoning = parse(r#"{"choices":[{"delta":{"reasoning_content":"hm"}}]}"#);
        assert!(reasoning.choices[0].carries_output());
        let tool = parse(r#"{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}"#);
        assert!(tool.choices[0].carries_output());
        let text = parse(r#"{"choices":[{"text":"a"}]}"#);
        assert!(text.choices[0].carries_output());
    }

    #[test]
    fn each_event_parses_to_the_end_nothing_a_chunk_or_its_failure() {
        let event = |name: &'static str, data: &'static str| Event {
            event: name,
            data: data.into(),
        };
        let failure = |e: Event| match parse(&e) {
            Err(Stop::Failed { kind, detail }) => (kind, detail),
            Ok(parsed) => panic!("{e:?} parsed as {parsed:?}"),
        };
        assert!(matches!(
            parse(&event("message", " [DONE] ")),
            Ok(Parsed::Done)
        ));
        assert!(matches!(parse(&event("message", "")), Ok(Parsed::Nothing)));
        let text = event("message", r#"{"choices":[{"text":"a"}]}"#);
        let chunk = parse(&text);
        assert!(matches!(chunk, Ok(Parsed::Chunk(c)) if c.choices[0].carries_output()));
        let (kind, detail) = failure(event("message", "{not json"));
        assert_eq!(kind, ErrorKind::MalformedSse);
        assert!(detail.ends_with(": {not json"), "{detail}");
        let (kind, detail) = failure(event("error", "overloaded"));
        assert_eq!(
            (kind, detail.as_str()),
            (ErrorKind::ErrorEvent, "overloaded")
        );
        let (kind, detail) = failure(event("message", r#"{"error":{"message":"boom"}}"#));
        assert_eq!(kind, ErrorKind::ErrorEvent);
        assert!(detail.contains("boom"), "{detail}");
    }

    /// A pooled driver of the completions API at `base_url`, with 5 s timeouts.
    fn test_driver(base_url: String, engine: EngineKind) -> Driver {
        Driver::new(DriverConfig {
            base_url,
            api: Api::Completions,
            model: "m".into(),
            engine,
            prompt_caching: false,
            api_key: None,
            connect_timeout: Duration::from_secs(5),
            first_token_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(5),
            max_in_flight: 1,
            connection_reuse: ConnectionReuse::Pooled,
            extra_body: ExtraBody::default(),
        })
        .unwrap()
    }

    #[test]
    fn an_extra_body_adds_its_fields_and_may_not_set_the_measured_ones() {
        let mut driver = test_driver("http://127.0.0.1:9/v1".into(), EngineKind::Llamacpp);
        driver.extra_body =
            ExtraBody::parse(r#"{"temperature": 0.7, "logit_bias": {"2": 1.3}}"#).unwrap();
        let body: Value =
            serde_json::from_slice(&driver.prompt_body(&PromptBody::Text("hi".into()), 8, true))
                .unwrap();
        assert_eq!(body["temperature"], 0.7, "{body}");
        assert_eq!(body["logit_bias"]["2"], 1.3, "{body}");
        assert_eq!(body["max_tokens"], 8, "{body}");
        assert_eq!(body["stream"], true, "{body}");
        for key in ExtraBody::MEASURED {
            let err = ExtraBody::parse(&format!(r#"{{"{key}": 1}}"#)).unwrap_err();
            assert!(
                err.contains(&format!("\"{key}\"")) && err.contains("suite"),
                "{err}"
            );
        }
        assert!(ExtraBody::parse("[1]")
            .unwrap_err()
            .contains("not a JSON object"));
        assert!(ExtraBody::parse("{top_p: 1}")
            .unwrap_err()
            .contains("not JSON"));
    }

    /// What a keep-alive test server does with a request.
    #[derive(Debug, Clone, Copy)]
    enum Answer {
        /// A one-token stream, chunked; the body's last chunk 5 ms after `[DONE]`.
        Stream,
        /// The status line alone, then close.
        PartialHead,
        /// Close without a byte.
        Close,
    }

    /// Serves each connection's requests in turn as `answer(connection, request)` says, with
    /// keep-alive; returns the API base and the count of connections accepted.
    async fn keep_alive_server(
        answer: impl Fn(usize, usize) -> Answer + Copy + Send + 'static,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let accepted = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            loop {
                let (mut tcp, _) = listener.accept().await.unwrap();
                let connection = counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    for request in 0.. {
                        crate::http::transport::read_request(&mut tcp).await;
                        match answer(connection, request) {
                            Answer::Stream => {
                                let events =
                                    "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n";
                                let head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
                                let chunk = format!("{head}{:x}\r\n{events}\r\n", events.len());
                                tcp.write_all(chunk.as_bytes()).await.unwrap();
                                tokio::time::sleep(Duration::from_millis(5)).await;
                                tcp.write_all(b"0\r\n\r\n").await.unwrap();
                            }
                            Answer::PartialHead => {
                                tcp.write_all(b"HTTP/1.1 200 OK\r\n").await.unwrap();
                                return;
                            }
                            Answer::Close => return,
                        }
                    }
                });
            }
        });
        (base_url, accepted)
    }

    /// Streams, but `answer` to the second request on the first connection.
    fn second_request(answer: Answer) -> impl Fn(usize, usize) -> Answer + Copy + Send {
        move |connection, request| match (connection, request) {
            (0, 1) => answer,
            _ => Answer::Stream,
        }
    }

    /// Two requests in turn, the second once the first's connection is idle in the pool.
    async fn two_in_turn(base_url: String) -> (Exchange, Exchange) {
        let driver = test_driver(base_url, EngineKind::Vllm);
        let first = driver.send(driver.body("hi", 1)).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        (first, driver.send(driver.body("hi", 1)).await)
    }

    /// A disconnect before any output, sent once.
    fn assert_disconnected_once(ex: &Exchange) {
        assert!(ex.retried.is_none());
        let disconnect =
            matches!(&ex.outcome, Outcome::Errored { kind, .. } if *kind == ErrorKind::Disconnect);
        assert!(disconnect, "{:?}", ex.outcome);
    }

    fn connections(accepted: &std::sync::atomic::AtomicUsize) -> usize {
        accepted.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[tokio::test]
    async fn the_next_request_reuses_a_streams_connection() {
        let (base_url, accepted) = keep_alive_server(|_, _| Answer::Stream).await;
        let (first, second) = two_in_turn(base_url).await;
        assert_eq!((first.outcome, second.outcome), (Outcome::Ok, Outcome::Ok));
        assert!(second.retried.is_none());
        // The body was read to its end after [DONE], so the connection went back to the pool.
        assert_eq!(connections(&accepted), 1);
    }

    #[tokio::test]
    async fn a_reused_connection_closed_before_any_byte_is_retried_on_a_new_one() {
        let (base_url, accepted) = keep_alive_server(second_request(Answer::Close)).await;
        let (first, second) = two_in_turn(base_url).await;
        assert!(first.retried.is_none());
        assert_eq!(second.outcome, Outcome::Ok);
        let retried = second.retried.expect("the second request went again");
        assert_eq!(retried.reason, RetryReason::StaleConnection);
        assert!(
            retried.detail.contains("connection closed"),
            "{}",
            retried.detail
        );
        // Its times are the second attempt's.
        assert!(second.sent >= first.end);
        assert_eq!(connections(&accepted), 2);
    }

    #[tokio::test]
    async fn a_failure_after_any_response_byte_is_never_retried() {
        let (base_url, accepted) = keep_alive_server(second_request(Answer::PartialHead)).await;
        let (_, second) = two_in_turn(base_url).await;
        assert_disconnected_once(&second);
        assert_eq!(connections(&accepted), 1);
    }

    #[tokio::test]
    async fn a_new_connection_closed_before_any_byte_is_a_failure() {
        let (base_url, accepted) = keep_alive_server(|_, _| Answer::Close).await;
        let driver = test_driver(base_url, EngineKind::Vllm);
        let ex = driver.send(driver.body("hi", 1)).await;
        assert_disconnected_once(&ex);
        assert_eq!(connections(&accepted), 1);
    }

    /// Serves one request with `events` as a close-delimited SSE body, as llama.cpp does.
    async fn serve_once(events: &'static [&'static str]) -> String {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            crate::http::transport::read_request(&mut tcp).await;
            let mut response = String::from("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
            for event in events {
                response.push_str(&format!("data: {event}\n\n"));
            }
            tcp.write_all(response.as_bytes()).await.unwrap();
        });
        base_url
    }

    #[tokio::test]
    async fn tokens_without_text_still_add_up() {
        // llama.cpp: a held-back token (counted by the next content event) and a last token
        // that decodes to nothing (counted only by the final event).
        let base_url = serve_once(&[
            r#"{"choices":[{"text":"a"}],"timings":{"predicted_n":1}}"#,
            r#"{"choices":[{"text":"b"}],"timings":{"predicted_n":2}}"#,
            r#"{"choices":[{"text":"é"}],"timings":{"predicted_n":4}}"#,
            r#"{"choices":[{"text":"","finish_reason":"length"}],"timings":{"predicted_n":5},"usage":{"completion_tokens":5,"prompt_tokens":3}}"#,
            "[DONE]",
        ])
        .await;
        let driver = test_driver(base_url, EngineKind::Llamacpp);
        let ex = driver.send(driver.body("hi", 5)).await;
        assert_eq!(ex.outcome, Outcome::Ok);
        assert_eq!(ex.token_source, TokenSource::ContinuousUsage);
        assert_eq!(ex.output_tokens, Some(5));
        let tokens: Vec<u32> = ex.chunks.iter().map(|c| c.tokens).collect();
        assert_eq!(tokens, [1, 1, 2, 1]);
        assert!(ex.chunks.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(ex.chunks[3].at <= ex.end);
    }

    #[test]
    fn snippets_are_bounded() {
        assert_eq!(snippet("short"), "short");
        assert_eq!(snippet(&"é".repeat(500)).chars().count(), 201);
    }
}
