//! What every route shares and the routes besides generation: API errors in vLLM's shape, the
//! API key check, the request body and model checks, `/v1/models`, `/metrics`, `/tokenize`,
//! `/detokenize` and the served requests' ground truth.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::server::state::Shared;
use crate::tokenizer::{self, ChatMessage};

/// An error response from request validation (boxed: responses are large).
pub(super) type Rejection = Box<Response>;

pub(super) fn api_error(status: StatusCode, message: String, param: Option<&str>) -> Response {
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

pub(super) fn bad_request(message: impl Into<String>, param: &str) -> Rejection {
    Box::new(api_error(
        StatusCode::BAD_REQUEST,
        message.into(),
        Some(param),
    ))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(super) async fn auth(State(s): State<Arc<Shared>>, req: Request, next: Next) -> Response {
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

pub(super) async fn models(State(s): State<Arc<Shared>>) -> Response {
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
pub(super) async fn served_requests(State(s): State<Arc<Shared>>) -> Response {
    axum::Json(json!({ "requests": s.log.entries() })).into_response()
}

pub(super) async fn metrics(State(s): State<Arc<Shared>>) -> Response {
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

pub(super) fn parse_json(body: &Bytes) -> Result<Value, Rejection> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(bad_request("request body must be a JSON object", "body")),
        Err(e) => Err(bad_request(
            format!("request body is not valid JSON: {e}"),
            "body",
        )),
    }
}

pub(super) fn check_model(s: &Shared, v: &Value) -> Result<(), Rejection> {
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

pub(super) fn parse_messages(v: &Value) -> Result<Vec<ChatMessage>, Rejection> {
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

pub(super) async fn tokenize(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
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

pub(super) async fn detokenize(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
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

pub(super) fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
