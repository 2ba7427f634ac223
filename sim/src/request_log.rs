//! The simulator's own account of the requests it served (`GET /infermeter/requests`): the
//! ground truth a client's measurement is checked against, kept apart from the responses so a
//! test compares what the client recorded with what the engine did, not the response with
//! itself. Each entry says when the request arrived and when its last token was produced, in
//! seconds from the simulator's start, so a test can check the order of dependent requests
//! (an agent's call and the subagents it spawns) on the server's clock.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

/// Entries kept; older ones are dropped first.
const CAPACITY: usize = 100_000;

/// One request as the engine served it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServedRequest {
    /// The response's `id`.
    pub id: String,
    pub prompt_tokens: u32,
    /// Prompt tokens the prefix cache served at admission.
    pub cached_tokens: u32,
    /// Output tokens planned (reasoning included).
    pub completion_tokens: u32,
    pub reasoning_tokens: u32,
    /// When its HTTP request arrived, seconds from the simulator's start.
    pub received_s: f64,
    /// When the engine produced its last token, seconds from the simulator's start; none while
    /// it runs (or when it was cancelled).
    pub completed_s: Option<f64>,
}

/// The most recent [`CAPACITY`] requests, in admission order, and the instant times count from.
#[derive(Debug)]
pub struct RequestLog {
    started: Instant,
    entries: Mutex<VecDeque<ServedRequest>>,
}

impl Default for RequestLog {
    fn default() -> Self {
        RequestLog {
            started: Instant::now(),
            entries: Mutex::default(),
        }
    }
}

impl RequestLog {
    /// Seconds from the simulator's start to `at`.
    pub fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.started).as_secs_f64()
    }

    pub fn push(&self, entry: ServedRequest) {
        let mut log = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if log.len() == CAPACITY {
            log.pop_front();
        }
        log.push_back(entry);
    }

    /// Request `id` produced its last token now.
    pub fn completed(&self, id: &str) {
        let now = self.seconds(Instant::now());
        let mut log = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = log.iter_mut().rev().find(|e| e.id == id) {
            entry.completed_s = Some(now);
        }
    }

    pub fn entries(&self) -> Vec<ServedRequest> {
        let log = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().cloned().collect()
    }
}
