//! The simulator's own account of the requests it served (`GET /infermeter/requests`): the
//! ground truth a client's measurement is checked against, kept apart from the responses so a
//! test compares what the client recorded with what the engine did, not the response with
//! itself.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::Serialize;

/// Entries kept; older ones are dropped first.
const CAPACITY: usize = 100_000;

/// One request as the engine served it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServedRequest {
    /// The response's `id`.
    pub id: String,
    pub prompt_tokens: u32,
    /// Prompt tokens the prefix cache served at admission.
    pub cached_tokens: u32,
    /// Output tokens planned (reasoning included).
    pub completion_tokens: u32,
    pub reasoning_tokens: u32,
}

/// The most recent [`CAPACITY`] requests, in admission order.
#[derive(Debug, Default)]
pub struct RequestLog(Mutex<VecDeque<ServedRequest>>);

impl RequestLog {
    pub fn push(&self, entry: ServedRequest) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if log.len() == CAPACITY {
            log.pop_front();
        }
        log.push_back(entry);
    }

    pub fn entries(&self) -> Vec<ServedRequest> {
        let log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().cloned().collect()
    }
}
