//! How a request ended: its outcome, why it failed, and why it was retried.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why and at what cost a request was sent a second time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Retried {
    pub reason: RetryReason,
    /// The first attempt's failure, as the connection reported it.
    pub detail: String,
    /// Seconds from the first attempt's send to its failure: the client's cost, not the
    /// server's, and outside the recorded latencies.
    pub lost_s: f64,
}

/// Why a request was retried. Only a failure that proves the request never reached the
/// engine is retried: a failure after any response byte, or on a new connection, never is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetryReason {
    /// `stale_connection`: a kept-alive connection the server had closed (without
    /// `Connection: close`, or as its idle timeout ran out) failed the request before any
    /// response byte. The client's connection handling, not the server's failure.
    StaleConnection,
    /// A reason this build does not know (a newer collector's), so its records still load.
    /// Never written.
    #[serde(other)]
    #[schemars(skip)]
    Unknown,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Outcome {
    Ok,
    /// Streamed some output but did not finish.
    Incomplete {
        kind: ErrorKind,
        detail: String,
    },
    /// Failed before any output, or finished without any.
    Errored {
        kind: ErrorKind,
        detail: String,
    },
}

/// Why a request failed, written as a short name (`"disconnect"`, `"http_429"`). A kind says
/// what went wrong, not always whose fault it was: a request that never reached the server, or
/// that the client's own connection handling lost, is not a failure of the server.
#[derive(Clone)]
pub enum ErrorKind {
    /// `connect`: no connection could be opened (refused, unreachable, TLS handshake failed,
    /// `--connect-timeout` passed). The request never reached the server: the endpoint is down
    /// or unreachable from the client, not a request the server failed.
    Connect,
    /// `disconnect`: the connection closed or broke before the stream ended: the server or
    /// something between (a proxy) dropped it. (Before any response byte on a reused keep-alive
    /// connection, the client's pool had sent on a connection the server had just closed: the
    /// client's connection handling. Such a request goes again on a new connection, recorded in
    /// `RequestRecord::retried`, and counts by that attempt's outcome: never as a disconnect.)
    Disconnect,
    /// `http_<code>`, e.g. `http_429`: the server answered with this non-success status (the
    /// detail holds the start of its body). 429 and 5xx are the server refusing or failing
    /// under load; 400, 401, 404 are usually the client's settings (request fields, API key,
    /// model name).
    Http(u16),
    /// `timeout_first_token`: no token arrived before `--first-token-timeout`. The server was
    /// slower (queueing, prefill) than the limit the client set.
    TimeoutFirstToken,
    /// `timeout_total`: the whole request took longer than `--total-timeout`, the client's
    /// limit.
    TimeoutTotal,
    /// `malformed_sse`: an event's data was not the JSON chunk the API defines: the server's
    /// (or a proxy's) fault.
    MalformedSse,
    /// `error_event`: the server reported an error inside the stream (an `error` event, or a
    /// chunk with an `error` field): the server's failure.
    ErrorEvent,
    /// `closed_without_done`: the stream ended cleanly but without the final `[DONE]` event:
    /// the server's fault.
    ClosedWithoutDone,
    /// `no_output`: the stream finished (`[DONE]`) without any content: the server produced
    /// nothing.
    NoOutput,
    /// A kind this build does not know, kept as written: a newer collector's (a reader accepts
    /// every minor version of its major version). Never written by this build.
    Other(String),
}

impl ErrorKind {
    /// Every kind with a fixed name: all but `Http` and `Other`.
    const NAMED: [ErrorKind; 8] = [
        ErrorKind::Connect,
        ErrorKind::Disconnect,
        ErrorKind::TimeoutFirstToken,
        ErrorKind::TimeoutTotal,
        ErrorKind::MalformedSse,
        ErrorKind::ErrorEvent,
        ErrorKind::ClosedWithoutDone,
        ErrorKind::NoOutput,
    ];

    /// The name written to reports and records.
    pub fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Disconnect => "disconnect",
            ErrorKind::TimeoutFirstToken => "timeout_first_token",
            ErrorKind::TimeoutTotal => "timeout_total",
            ErrorKind::MalformedSse => "malformed_sse",
            ErrorKind::ErrorEvent => "error_event",
            ErrorKind::ClosedWithoutDone => "closed_without_done",
            ErrorKind::NoOutput => "no_output",
            ErrorKind::Http(status) => return Cow::Owned(format!("http_{status}")),
            ErrorKind::Other(name) => return Cow::Owned(name.clone()),
        })
    }

    /// The kind of a written name; every name reads back to itself (`http_` takes a
    /// three-digit status, as HTTP has).
    pub fn from_name(name: &str) -> ErrorKind {
        if let Some(named) = ErrorKind::NAMED.iter().find(|k| k.name() == name) {
            return named.clone();
        }
        let status = name
            .strip_prefix("http_")
            .filter(|digits| digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok());
        match status {
            Some(status) => ErrorKind::Http(status),
            None => ErrorKind::Other(name.to_string()),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The name, quoted: an outcome in a log reads as it does in the records.
impl fmt::Debug for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.name(), f)
    }
}

/// Kinds compare by name: `Other("disconnect")` is `Disconnect`, and `error_kinds` lists kinds
/// in the order of their names, as it did when they were strings.
impl PartialEq for ErrorKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ErrorKind {}

impl Ord for ErrorKind {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name().cmp(&other.name())
    }
}

impl PartialOrd for ErrorKind {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = ErrorKind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an error kind such as \"disconnect\" or \"http_429\"")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ErrorKind, E> {
                Ok(ErrorKind::from_name(name))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// The names this build writes: the fixed ones, and `http_` with a status. (See the type for
/// what each means; `Other` is for reading only.)
impl JsonSchema for ErrorKind {
    fn schema_name() -> Cow<'static, str> {
        "ErrorKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let named: Vec<Cow<'static, str>> = ErrorKind::NAMED.iter().map(ErrorKind::name).collect();
        schemars::json_schema!({
            "description": "Why a request failed: a fixed name, or http_<status> for a non-success HTTP status.",
            "anyOf": [
                { "type": "string", "enum": named },
                { "type": "string", "pattern": "^http_[0-9]{3}$" }
            ]
        })
    }
}
