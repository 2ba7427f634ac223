//! A streamed response: the SSE events of one request as its tokens come from the engine, with
//! the injected stream faults (keep-alive comments, CRLF, split characters, stalls, resets).

use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::faults::Fault;
use crate::scheduler::Delivery;
use crate::server::job::{CancelGuard, Job, Kind};

/// Pause between the two halves of a `utf8split` chunk so they leave as separate writes.
const SPLIT_PAUSE: Duration = Duration::from_millis(20);

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
pub(super) struct SseStream {
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
    pub(super) fn new(job: Job, rx: mpsc::UnboundedReceiver<Delivery>, guard: CancelGuard) -> Self {
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

    pub(super) fn nl(&self) -> &'static str {
        if self.job.fault == Fault::Crlf {
            "\r\n"
        } else {
            "\n"
        }
    }

    pub(super) fn frame(&self, mut v: Value) -> Bytes {
        if self.job.emit_timestamps {
            v["infermeter_ts"] = timestamps();
        }
        let nl = self.nl();
        Bytes::from(format!("data: {v}{nl}{nl}"))
    }

    pub(super) fn push_raw(&mut self, text: &str) {
        if self.job.fault == Fault::KeepAlive {
            let nl = self.nl();
            self.out
                .push_back(Out::Raw(Bytes::from(format!(": keep-alive{nl}{nl}"))));
        }
        self.out.push_back(Out::Raw(Bytes::from(text.to_string())));
    }

    pub(super) fn push_event(&mut self, v: Value, split: bool) {
        if self.job.fault == Fault::KeepAlive {
            let nl = self.nl();
            self.out
                .push_back(Out::Raw(Bytes::from(format!(": keep-alive{nl}{nl}"))));
        }
        self.out
            .push_back(if split { Out::Split(v) } else { Out::Event(v) });
    }

    pub(super) fn on_token(&mut self, index: u32, finished: bool) {
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
            self.job.completed();
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
    pub(super) fn flush_pending(&mut self, produced: u32, finish: Option<&str>, split: bool) {
        let text = std::mem::take(&mut self.pending);
        self.pending_count = 0;
        let job = &self.job;
        let usage = job
            .continuous_usage
            .then(|| job.usage(produced, self.cached));
        let v = job.content_chunk(&text, self.pending_reasoning, finish, usage);
        self.push_event(v, split);
    }

    pub(super) async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
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

/// CLOCK_MONOTONIC and the UNIX clock, in nanoseconds.
pub(super) fn timestamps() -> Value {
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
pub(super) fn set_linger_zero(fd: RawFd) {
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
