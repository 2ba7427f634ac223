//! The HTTP API, shaped like vLLM's OpenAI-compatible server: `/v1/models`, `/v1/completions`,
//! `/v1/chat/completions` (streaming and not), `/tokenize`, `/detokenize`, `/metrics`, `/health`.
//!
//! - `serve`: binding, starting and stopping, the routes ([`start`], [`run`], [`RunningSim`]);
//! - `state`: what every handler shares;
//! - `api`: API errors, the key check, body and model checks, the routes besides generation;
//! - `generate`: a generation request through the engine to its response;
//! - `request`: a generation request's body read into a job;
//! - `job`: one accepted request's texts, usage and chunks;
//! - `stream`: a streamed response's events and its faults.

mod api;
mod generate;
mod job;
mod request;
mod serve;
mod state;
mod stream;

pub use serve::{run, start, RunningSim};
