//! The HTTP API, shaped like vLLM's OpenAI-compatible server: `/v1/models`, `/v1/completions`,
//! `/v1/chat/completions` (streaming and not), `/tokenize`, `/detokenize`, `/metrics`, `/health`.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::engine::{Profile, SeqSpec};
use crate::faults::{Fault, FaultPlan};
use crate::metrics::Metrics;
use crate::request_log::{RequestLog, ServedRequest};
use crate::scheduler::{self, Cmd, Delivery};
use crate::tokenizer::{self, ChatMessage};
use crate::{rng, SimConfig, SimError};

/// Mean length of a natural (EOS-terminated) answer, in tokens: each token ends the answer with
/// probability 1/300, like a model that stops when it is done.
const MEAN_NATURAL_OUTPUT: f64 = 300.0;
/// Pause between the two halves of a `utf8split` chunk so they leave as separate writes.
const SPLIT_PAUSE: Duration = Duration::from_millis(20);
/// Salt of the reasoning tokens' words, so reasoning and answer read differently.
const REASONING_SALT: u64 = 0x7ea5_0e11;

/// An error response from request validation (boxed: responses are large).
type Rejection = Box<Response>;

struct Shared {
    profile: Profile,
    served_name: String,
    api_key: Option<String>,
    emit_timestamps: bool,
    reasoning_tokens: u32,
    time_scale: f64,
    log: Arc<RequestLog>,
    faults: FaultPlan,
    seed: u64,
    max_sequence_tokens: u64,
    next_id: AtomicU64,
    arrivals: AtomicU64,
    metrics: Arc<Mutex<Metrics>>,
    cmds: mpsc::UnboundedSender<Cmd>,
}

/// A running simulator.
pub struct RunningSim {
    pub addr: SocketAddr,
    profile: Profile,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    scheduler: tokio::task::JoinHandle<()>,
}

impl RunningSim {
    /// The model id it serves (as `/v1/models` lists it).
    pub fn model_name(&self) -> &str {
        &self.profile.model_name
    }

    /// `http://ADDR/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The deployment being simulated.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Stop accepting, give open streams a moment, then stop.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut server) = self.server.take() {
            if tokio::time::timeout(Duration::from_secs(2), &mut server)
                .await
                .is_err()
            {
                server.abort();
            }
        }
        self.scheduler.abort();
    }

    /// Run until the server stops (it only stops on [`RunningSim::shutdown`] or a fatal error).
    pub async fn wait(mut self) {
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
        self.scheduler.abort();
    }
}

/// The accepted socket's descriptor, so the `reset` fault can make the kernel send a RST.
#[derive(Clone, Copy, Debug)]
struct ConnFd(RawFd);

impl Connected<axum::serve::IncomingStream<'_, TcpListener>> for ConnFd {
    fn connect_info(stream: axum::serve::IncomingStream<'_, TcpListener>) -> Self {
        // Every SSE event must leave at once, not wait for Nagle.
        let _ = stream.io().set_nodelay(true);
        ConnFd(stream.io().as_raw_fd())
    }
}

fn bind(addr: SocketAddr) -> Result<TcpListener, SimError> {
    let err = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            SimError::PortInUse { addr }
        } else {
            SimError::Bind { addr, source }
        }
    };
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(err)?;
    socket.set_reuseaddr(true).map_err(err)?;
    socket.bind(addr).map_err(err)?;
    // A deep backlog: benchmarks open thousands of connections at once.
    socket.listen(4096).map_err(err)
}

/// Bind, spawn the server and its scheduler on the current runtime, and return at once.
pub async fn start(config: SimConfig) -> Result<RunningSim, SimError> {
    let profile = config.profile()?;
    let faults = FaultPlan::parse(config.faults.as_deref(), config.seed)?;
    let listener = bind(config.listen)?;
    let addr = listener.local_addr().map_err(|source| SimError::Bind {
        addr: config.listen,
        source,
    })?;
    let metrics = Arc::new(Mutex::new(Metrics::default()));
    let engine = crate::engine::Engine::new(profile.clone());
    let max_sequence_tokens = engine.max_sequence_tokens();
    let (cmds, scheduler) = scheduler::spawn(profile.clone(), metrics.clone(), config.time_scale);
    let shared = Arc::new(Shared {
        served_name: profile.model_name.clone(),
        profile: profile.clone(),
        api_key: config.api_key.filter(|k| !k.is_empty()),
        emit_timestamps: config.emit_timestamps,
        reasoning_tokens: config.reasoning_tokens,
        time_scale: config.time_scale,
        log: Arc::new(RequestLog::default()),
        faults,
        seed: config.seed,
        max_sequence_tokens,
        next_id: AtomicU64::new(0),
        arrivals: AtomicU64::new(0),
        metrics,
        cmds,
    });
    let app = router(shared);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let serve = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<ConnFd>(),
        )
        .with_graceful_shutdown(async {
            let _ = stop_rx.await;
        });
        if let Err(e) = serve.await {
            tracing::error!("infermeter sim server stopped: {e}");
        }
    });
    Ok(RunningSim {
        addr,
        profile,
        stop: Some(stop_tx),
        server: Some(server),
        scheduler,
    })
}

/// Start, announce on stderr, serve until Ctrl-C or SIGTERM.
pub async fn run(config: SimConfig) -> Result<(), SimError> {
    let sim = start(config).await?;
    let p = sim.profile();
    eprintln!(
        "infermeter sim: serving {} on {}x {} at {}",
        p.model_name,
        p.gpus,
        p.gpu_name,
        sim.base_url()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(SimError::Signal)?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map_err(SimError::Signal)?,
        _ = term.recv() => {}
    }
    sim.shutdown().await;
    Ok(())
}

fn router(shared: Arc<Shared>) -> Router {
    let protected = Router::new()
        .route("/v1/models", get(models))
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .route("/infermeter/requests", get(served_requests))
        .route_layer(middleware::from_fn_with_state(shared.clone(), auth));
    Router::new()
        .route("/health", get(|| async { StatusCode::OK }))
        .route("/metrics", get(metrics))
        .route(
            "/version",
            get(|| async { axum::Json(json!({"version": env!("CARGO_PKG_VERSION")})) }),
        )
        .merge(protected)
        .fallback(|| async {
            api_error(
                StatusCode::NOT_FOUND,
                "Not Found: no such route".into(),
                None,
            )
        })
        .with_state(shared)
}

// ------------------------------------------------------------------ errors and auth

fn api_error(status: StatusCode, message: String, param: Option<&str>) -> Response {
    let kind = match status.as_u16() {
        401 => "authentication_error",
        404 => "NotFoundError",
        429 => "rate_limit_exceeded",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    let body = json!({"error": {"message": message, "type": kind, "param": param, "code": status.as_u16()}});
    (status, axum::Json(body)).into_response()
}

fn bad_request(message: impl Into<String>, param: &str) -> Rejection {
    Box::new(api_error(
        StatusCode::BAD_REQUEST,
        message.into(),
        Some(param),
    ))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn auth(State(s): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    if let Some(key) = &s.api_key {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), key.as_bytes())) {
            return api_error(
                StatusCode::UNAUTHORIZED,
                "Invalid or missing API key: send the header `Authorization: Bearer <key>` with the key \
                 the simulator was started with (--api-key or INFERMETER_SIM_API_KEY)."
                    .into(),
                None,
            );
        }
    }
    next.run(req).await
}

// ------------------------------------------------------------------ simple endpoints

async fn models(State(s): State<Arc<Shared>>) -> Response {
    axum::Json(json!({
        "object": "list",
        "data": [{
            "id": s.served_name,
            "object": "model",
            "created": unix_secs(),
            "owned_by": "infermeter-sim",
            "root": s.served_name,
            "parent": null,
            "max_model_len": s.profile.max_model_len,
            "permission": [],
            "infermeter_sim": s.profile.card,
        }]
    }))
    .into_response()
}

/// The ground truth of every request served: `{"requests": [{id, prompt_tokens,
/// cached_tokens, completion_tokens, reasoning_tokens}, ...]}`, oldest first.
async fn served_requests(State(s): State<Arc<Shared>>) -> Response {
    axum::Json(json!({ "requests": s.log.entries() })).into_response()
}

async fn metrics(State(s): State<Arc<Shared>>) -> Response {
    let text = s.metrics.lock().expect("metrics").render(&s.served_name);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

fn parse_json(body: &Bytes) -> Result<Value, Rejection> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(bad_request("request body must be a JSON object", "body")),
        Err(e) => Err(bad_request(
            format!("request body is not valid JSON: {e}"),
            "body",
        )),
    }
}

fn check_model(s: &Shared, v: &Value) -> Result<(), Rejection> {
    match v.get("model") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(m)) if *m == s.served_name || *m == s.profile.model_id => Ok(()),
        Some(m) => Err(Box::new(api_error(
            StatusCode::NOT_FOUND,
            format!(
                "The model `{}` does not exist. This server serves `{}`.",
                m.as_str().unwrap_or("?"),
                s.served_name
            ),
            Some("model"),
        ))),
    }
}

fn parse_messages(v: &Value) -> Result<Vec<ChatMessage>, Rejection> {
    let Some(arr) = v
        .get("messages")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    else {
        return Err(bad_request(
            "`messages` must be a non-empty array",
            "messages",
        ));
    };
    arr.iter()
        .map(|m| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| bad_request("every message needs a string `role`", "messages"))?;
            let content = match m.get("content") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(""),
                Some(_) => {
                    return Err(bad_request(
                        "message `content` must be a string or an array of parts",
                        "messages",
                    ))
                }
            };
            Ok(ChatMessage {
                role: role.to_string(),
                content,
            })
        })
        .collect()
}

async fn tokenize(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    let v = match parse_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    if let Err(r) = check_model(&s, &v) {
        return *r;
    }
    let tokens = if v.get("messages").is_some() {
        let messages = match parse_messages(&v) {
            Ok(m) => m,
            Err(r) => return *r,
        };
        let add = v
            .get("add_generation_prompt")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        tokenizer::encode(&tokenizer::apply_chat_template(&messages, add))
    } else if let Some(p) = v.get("prompt").and_then(Value::as_str) {
        tokenizer::encode(p)
    } else {
        return *bad_request("send `prompt` (a string) or `messages` (a chat)", "prompt");
    };
    axum::Json(json!({"count": tokens.len(), "max_model_len": s.profile.max_model_len, "tokens": tokens, "token_strs": null}))
        .into_response()
}

async fn detokenize(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    let v = match parse_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    if let Err(r) = check_model(&s, &v) {
        return *r;
    }
    let Some(ids) = v.get("tokens").and_then(Value::as_array).and_then(|a| {
        a.iter()
            .map(|t| t.as_u64().and_then(|t| u32::try_from(t).ok()))
            .collect::<Option<Vec<u32>>>()
    }) else {
        return *bad_request("`tokens` must be an array of token ids", "tokens");
    };
    axum::Json(json!({"prompt": tokenizer::decode(&ids)})).into_response()
}

// ------------------------------------------------------------------ generation

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Completion,
    Chat,
}

/// One accepted generation request.
struct Job {
    kind: Kind,
    id: String,
    created: u64,
    model: String,
    prompt_tokens: u32,
    output_tokens: u32,
    /// The first this many output tokens are reasoning (`reasoning_content`).
    reasoning_tokens: u32,
    finish_reason: &'static str,
    gen_seed: u64,
    log: Arc<RequestLog>,
    include_usage: bool,
    continuous_usage: bool,
    fault: Fault,
    emit_timestamps: bool,
    fd: RawFd,
}

impl Job {
    /// The output token at which mid-stream faults strike.
    fn fault_index(&self) -> u32 {
        self.output_tokens / 2
    }

    fn token_text(&self, index: u32) -> &'static str {
        output_text(
            self.gen_seed,
            self.reasoning_tokens,
            index,
            self.fault == Fault::Utf8Split && index == self.fault_index(),
        )
    }

    fn is_reasoning(&self, index: u32) -> bool {
        index < self.reasoning_tokens
    }

    /// The engine admitted the request with `cached` prompt tokens from its prefix cache.
    fn admitted(&self, cached: u32) {
        self.log.push(ServedRequest {
            id: self.id.clone(),
            prompt_tokens: self.prompt_tokens,
            cached_tokens: cached,
            completion_tokens: self.output_tokens,
            reasoning_tokens: self.reasoning_tokens,
        });
    }

    fn usage(&self, completion: u32, cached: u32) -> Value {
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

    fn chunk(&self, choices: Value, usage: Option<Value>) -> Value {
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

    fn content_chunk(
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
fn output_text(seed: u64, reasoning: u32, index: u32, split_here: bool) -> &'static str {
    if split_here {
        tokenizer::MULTIBYTE_WORD
    } else if index < reasoning {
        tokenizer::output_token(seed ^ REASONING_SALT, index)
    } else {
        tokenizer::output_token(seed, index)
    }
}

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// CLOCK_MONOTONIC and the UNIX clock, in nanoseconds.
fn timestamps() -> Value {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let mono = ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128;
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    json!({"mono_ns": mono as u64, "unix_ns": unix as u64})
}

/// Make closing this socket send a TCP RST instead of a FIN.
fn set_linger_zero(fd: RawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `fd` is the socket of the connection whose response is being written right now
    // (hyper holds it open while it polls this body); setsockopt only reads `linger`.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
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

async fn completions(s: State<Arc<Shared>>, c: ConnectInfo<ConnFd>, body: Bytes) -> Response {
    generate(s, c, body, Kind::Completion).await
}

async fn chat_completions(s: State<Arc<Shared>>, c: ConnectInfo<ConnFd>, body: Bytes) -> Response {
    generate(s, c, body, Kind::Chat).await
}

async fn generate(
    State(s): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ConnFd>,
    body: Bytes,
    kind: Kind,
) -> Response {
    let arrived = Instant::now();
    let index = s.arrivals.fetch_add(1, Ordering::Relaxed);
    let fault = s.faults.for_request(index);
    if let Fault::Status(code) = fault {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let message = match code {
            429 => "Rate limit reached (simulated fault); retry after 1 second",
            503 => "Service temporarily unavailable (simulated fault)",
            _ => "Internal server error (simulated fault)",
        };
        let mut r = api_error(status, message.into(), None);
        if code == 429 {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        return r;
    }
    match prepare(&s, &body, kind, fault, conn.0) {
        Ok((job, spec, stream)) => run_job(s, job, spec, stream, arrived).await,
        Err(r) => *r,
    }
}

fn prepare(
    s: &Shared,
    body: &Bytes,
    kind: Kind,
    fault: Fault,
    fd: RawFd,
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
    // Where a model would emit EOS (geometric, mean MEAN_NATURAL_OUTPUT), fixed by the seeds.
    let natural = 1.0
        + (-(1.0 - rng::unit(rng::mix(gen_seed ^ 0xe05))).ln() * (MEAN_NATURAL_OUTPUT - 1.0))
            .floor();
    let natural = natural.min(f64::from(u32::MAX)) as u32;
    let (output_tokens, finish_reason) = if ignore_eos || natural >= max_tokens {
        (max_tokens, "length")
    } else if natural < min_tokens {
        (min_tokens, "stop")
    } else {
        (natural, "stop")
    };
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
    };
    let spec = SeqSpec {
        prompt_tokens: prompt,
        output_tokens,
        block_hashes: if s.profile.prefix_cache {
            // On past the prompt over the answer the request will generate: a finished answer
            // stays cached for the next turn that carries it.
            let answer = (0..output_tokens)
                .map(|i| tokenizer::hash_id(output_text(gen_seed, reasoning_tokens, i, false)));
            let sequence: Vec<u32> = ids.iter().copied().chain(answer).collect();
            block_hashes(&sequence, s.profile.kv_block_size)
        } else {
            Vec::new()
        },
    };
    Ok((job, spec, stream))
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

/// Sends `Cancel` when a request's response is dropped (client gone, or done), freeing its KV.
struct CancelGuard {
    id: u64,
    cmds: mpsc::UnboundedSender<Cmd>,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        let _ = self.cmds.send(Cmd::Cancel(self.id));
    }
}

async fn run_job(
    s: Arc<Shared>,
    job: Job,
    spec: SeqSpec,
    stream: bool,
    arrived: Instant,
) -> Response {
    // API-server work (templating, tokenising, scheduling hand-off) before the engine sees it.
    tokio::time::sleep(Duration::from_secs_f64(
        s.profile.frontend_latency * s.time_scale,
    ))
    .await;
    let id = s.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = mpsc::unbounded_channel();
    let length = job.finish_reason == "length";
    if s.cmds
        .send(Cmd::Add {
            id,
            spec,
            arrived,
            length,
            tx,
        })
        .is_err()
    {
        return api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the simulator is shutting down".into(),
            None,
        );
    }
    let guard = CancelGuard {
        id,
        cmds: s.cmds.clone(),
    };
    if stream {
        let state = SseStream::new(job, rx, guard);
        let body = Body::from_stream(futures::stream::unfold(state, |mut st| async move {
            st.next().await.map(|item| (item, st))
        }));
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream; charset=utf-8")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(body)
            .expect("valid response")
    } else {
        whole_response(job, rx, guard).await
    }
}

async fn whole_response(
    job: Job,
    mut rx: mpsc::UnboundedReceiver<Delivery>,
    guard: CancelGuard,
) -> Response {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut cached = 0;
    let mut produced = 0;
    while let Some(d) = rx.recv().await {
        match d {
            Delivery::Admitted { cached_tokens } => {
                cached = cached_tokens;
                job.admitted(cached);
            }
            Delivery::Token { index, finished } => {
                let into = if job.is_reasoning(index) {
                    &mut reasoning
                } else {
                    &mut text
                };
                into.push_str(job.token_text(index));
                produced = index + 1;
                if let Fault::Stall(secs) = job.fault {
                    if index == job.fault_index() {
                        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
                    }
                }
                if finished {
                    break;
                }
            }
        }
    }
    drop(guard);
    if produced < job.output_tokens {
        return api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the simulator is shutting down".into(),
            None,
        );
    }
    if job.fault == Fault::Reset {
        let fd = job.fd;
        let body = Body::from_stream(futures::stream::once(async move {
            set_linger_zero(fd);
            Err::<Bytes, _>(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "simulated reset",
            ))
        }));
        return Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .expect("valid response");
    }
    let choice = match job.kind {
        Kind::Completion => {
            json!({"index": 0, "text": text, "logprobs": null, "finish_reason": job.finish_reason, "stop_reason": null, "prompt_logprobs": null})
        }
        Kind::Chat => {
            let reasoning = (!reasoning.is_empty()).then_some(reasoning);
            json!({"index": 0, "message": {"role": "assistant", "content": text, "reasoning_content": reasoning, "tool_calls": []}, "logprobs": null, "finish_reason": job.finish_reason, "stop_reason": null})
        }
    };
    let object = match job.kind {
        Kind::Completion => "text_completion",
        Kind::Chat => "chat.completion",
    };
    let mut v = json!({"id": job.id, "object": object, "created": job.created, "model": job.model, "choices": [choice], "usage": job.usage(job.output_tokens, cached)});
    if job.emit_timestamps {
        v["infermeter_ts"] = timestamps();
    }
    axum::Json(v).into_response()
}

enum Out {
    /// A JSON event, serialised (and timestamped) when it is written.
    Event(Value),
    /// A JSON event written in two parts, split inside a multi-byte character.
    Split(Value),
    Raw(Bytes),
    Pause(Duration),
    Reset,
}

/// The SSE body of one streamed request.
struct SseStream {
    job: Job,
    rx: mpsc::UnboundedReceiver<Delivery>,
    out: VecDeque<Out>,
    pending: String,
    pending_count: u32,
    /// Whether the pending text is reasoning.
    pending_reasoning: bool,
    cached: u32,
    sent_role: bool,
    done: bool,
    _guard: CancelGuard,
}

impl SseStream {
    fn new(job: Job, rx: mpsc::UnboundedReceiver<Delivery>, guard: CancelGuard) -> Self {
        Self {
            job,
            rx,
            out: VecDeque::new(),
            pending: String::new(),
            pending_count: 0,
            pending_reasoning: false,
            cached: 0,
            sent_role: false,
            done: false,
            _guard: guard,
        }
    }

    fn nl(&self) -> &'static str {
        if self.job.fault == Fault::Crlf {
            "\r\n"
        } else {
            "\n"
        }
    }

    fn frame(&self, mut v: Value) -> Bytes {
        if self.job.emit_timestamps {
            v["infermeter_ts"] = timestamps();
        }
        let nl = self.nl();
        Bytes::from(format!("data: {v}{nl}{nl}"))
    }

    fn push_raw(&mut self, text: &str) {
        if self.job.fault == Fault::KeepAlive {
            let nl = self.nl();
            self.out
                .push_back(Out::Raw(Bytes::from(format!(": keep-alive{nl}{nl}"))));
        }
        self.out.push_back(Out::Raw(Bytes::from(text.to_string())));
    }

    fn push_event(&mut self, v: Value, split: bool) {
        if self.job.fault == Fault::KeepAlive {
            let nl = self.nl();
            self.out
                .push_back(Out::Raw(Bytes::from(format!(": keep-alive{nl}{nl}"))));
        }
        self.out
            .push_back(if split { Out::Split(v) } else { Out::Event(v) });
    }

    fn on_token(&mut self, index: u32, finished: bool) {
        let job = &self.job;
        let nl = self.nl();
        if job.kind == Kind::Chat && !self.sent_role {
            self.sent_role = true;
            let role = job.chunk(
                json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]),
                job.continuous_usage.then(|| job.usage(0, self.cached)),
            );
            self.push_event(role, false);
        }
        let at_fault = index == self.job.fault_index();
        let mut split = false;
        if at_fault {
            match self.job.fault {
                Fault::Stall(secs) => self
                    .out
                    .push_back(Out::Pause(Duration::from_secs_f64(secs))),
                Fault::Reset => {
                    // hyper writes out what it holds when the body waits, and a RST drops what
                    // was not written yet: without the pause the tokens before the fault could
                    // be lost, making a mid-stream reset look like one before any token.
                    self.out.push_back(Out::Pause(Duration::from_millis(20)));
                    self.out.push_back(Out::Reset);
                    self.done = true;
                    return;
                }
                Fault::Malformed => self.push_raw(&format!("data: {{\"id\": \"truncated{nl}{nl}")),
                Fault::ErrorEvent => {
                    let err = json!({"error": {"message": "simulated engine error mid-stream", "type": "InternalServerError", "param": null, "code": 500}});
                    self.push_event(err, false);
                    self.push_raw(&format!("data: [DONE]{nl}{nl}"));
                    self.done = true;
                    return;
                }
                Fault::Utf8Split => split = true,
                _ => {}
            }
        }
        let reasoning = self.job.is_reasoning(index);
        if self.pending_count > 0 && self.pending_reasoning != reasoning {
            // Reasoning and answer never share a chunk.
            self.flush_pending(index, None, false);
        }
        self.pending_reasoning = reasoning;
        self.pending.push_str(self.job.token_text(index));
        self.pending_count += 1;
        let per_chunk = match self.job.fault {
            Fault::Multi(k) => k,
            _ => 1,
        };
        if self.pending_count < per_chunk && !finished && !split {
            return;
        }
        let finish = finished.then_some(self.job.finish_reason);
        self.flush_pending(index + 1, finish, split);
        if finished {
            if self.job.include_usage {
                let job = &self.job;
                let u = job.chunk(json!([]), Some(job.usage(job.output_tokens, self.cached)));
                self.push_event(u, false);
            }
            if self.job.fault != Fault::NoDone {
                self.push_raw(&format!("data: [DONE]{nl}{nl}"));
            }
            self.done = true;
        }
    }

    /// Emits the pending tokens as one chunk; `produced` is the running output count after them.
    fn flush_pending(&mut self, produced: u32, finish: Option<&str>, split: bool) {
        let text = std::mem::take(&mut self.pending);
        self.pending_count = 0;
        let job = &self.job;
        let usage = job
            .continuous_usage
            .then(|| job.usage(produced, self.cached));
        let v = job.content_chunk(&text, self.pending_reasoning, finish, usage);
        self.push_event(v, split);
    }

    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        loop {
            if let Some(o) = self.out.pop_front() {
                match o {
                    Out::Event(v) => return Some(Ok(self.frame(v))),
                    Out::Raw(b) => return Some(Ok(b)),
                    Out::Pause(d) => {
                        tokio::time::sleep(d).await;
                        continue;
                    }
                    Out::Reset => {
                        set_linger_zero(self.job.fd);
                        self.out.clear();
                        return Some(Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "simulated reset",
                        )));
                    }
                    Out::Split(v) => {
                        let b = self.frame(v);
                        // Split after the first byte of the first multi-byte character.
                        let at = b
                            .iter()
                            .position(|&c| c >= 0xC0)
                            .map_or(b.len() / 2, |i| i + 1);
                        self.out.push_front(Out::Raw(b.slice(at..)));
                        self.out.push_front(Out::Pause(SPLIT_PAUSE));
                        return Some(Ok(b.slice(..at)));
                    }
                }
            }
            if self.done {
                return None;
            }
            match self.rx.recv().await {
                // The scheduler stopped (shutdown): end the stream without [DONE].
                None => return None,
                Some(Delivery::Admitted { cached_tokens }) => {
                    self.cached = cached_tokens;
                    self.job.admitted(cached_tokens);
                }
                Some(Delivery::Token { index, finished }) => self.on_token(index, finished),
            }
        }
    }
}
