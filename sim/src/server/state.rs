//! What every handler shares: the deployment, the engine's command channel and the counters,
//! and the accepted connection's socket.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use axum::extract::connect_info::Connected;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::engine::Profile;
use crate::faults::FaultPlan;
use crate::metrics::Metrics;
use crate::request_log::RequestLog;
use crate::scheduler::Cmd;

pub(super) struct Shared {
    pub(super) profile: Profile,
    pub(super) served_name: String,
    pub(super) api_key: Option<String>,
    pub(super) emit_timestamps: bool,
    pub(super) reasoning_tokens: u32,
    pub(super) time_scale: f64,
    pub(super) log: Arc<RequestLog>,
    pub(super) faults: FaultPlan,
    pub(super) seed: u64,
    pub(super) max_sequence_tokens: u64,
    pub(super) next_id: AtomicU64,
    pub(super) arrivals: AtomicU64,
    pub(super) metrics: Arc<Mutex<Metrics>>,
    pub(super) cmds: mpsc::UnboundedSender<Cmd>,
}

/// The accepted socket's descriptor, so the `reset` fault can make the kernel send a RST.
#[derive(Clone, Copy, Debug)]
pub(super) struct ConnFd(pub(super) RawFd);

impl Connected<axum::serve::IncomingStream<'_, TcpListener>> for ConnFd {
    fn connect_info(stream: axum::serve::IncomingStream<'_, TcpListener>) -> Self {
        // Every SSE event must leave at once, not wait for Nagle.
        let _ = stream.io().set_nodelay(true);
        ConnFd(stream.io().as_raw_fd())
    }
}
