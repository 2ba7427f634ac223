//! `/v1/completions` and `/v1/chat/completions`: a request's faults, its trip through the
//! engine, and its response, whole or streamed.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::engine::SeqSpec;
use crate::faults::Fault;
use crate::scheduler::{Cmd, Delivery};
use crate::server::api::api_error;
use crate::server::job::{CancelGuard, Job, Kind};
use crate::server::request::prepare;
use crate::server::state::{ConnFd, Shared};
use crate::server::stream::{set_linger_zero, timestamps, SseStream};

pub(super) async fn completions(
    s: State<Arc<Shared>>,
    c: ConnectInfo<ConnFd>,
    body: Bytes,
) -> Response {
    generate(s, c, body, Kind::Completion).await
}

pub(super) async fn chat_completions(
    s: State<Arc<Shared>>,
    c: ConnectInfo<ConnFd>,
    body: Bytes,
) -> Response {
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
    match prepare(&s, &body, kind, fault, conn.0, arrived.into_std()) {
        Ok((job, spec, stream)) => run_job(s, job, spec, stream, arrived).await,
        Err(r) => *r,
    }
}

async fn run_job(
    s: Arc<Shared>,
    job: Job,
    spec: SeqSpec,
    stream: bool,
    arrived: Instant,
) -> Response {
    // API-server work (templating, tokenising, scheduling hand-off) before the engine sees it:
    // the scheduler holds the request until then.
    let ready = arrived + Duration::from_secs_f64(s.profile.frontend_latency * s.time_scale);
    let id = s.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = mpsc::unbounded_channel();
    let length = job.finish_reason == "length";
    if s.cmds
        .send(Cmd::Add {
            id,
            spec,
            arrived,
            ready,
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
                    job.completed();
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
