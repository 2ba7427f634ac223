//! Ctrl-C and SIGTERM: the run stops sending, gives in-flight requests a short grace, and keeps
//! everything measured.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// Set once Ctrl-C or SIGTERM arrives; says which.
pub struct StopSignal {
    receiver: watch::Receiver<bool>,
    name: Arc<Mutex<&'static str>>,
}

impl StopSignal {
    /// Starts listening (on the current runtime).
    pub fn listen() -> StopSignal {
        let (tx, receiver) = watch::channel(false);
        let name = Arc::new(Mutex::new("signal"));
        let seen = name.clone();
        tokio::spawn(async move {
            let name = wait_for_signal().await;
            *seen.lock().unwrap_or_else(|e| e.into_inner()) = name;
            tracing::warn!("{name} received: stopping, in-flight requests get a short grace");
            let _ = tx.send(true);
        });
        StopSignal { receiver, name }
    }

    pub fn is_set(&self) -> bool {
        *self.receiver.borrow()
    }

    /// The signal's name ("SIGINT", "SIGTERM"), once one arrived.
    pub fn name(&self) -> &'static str {
        *self.name.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A receiver that flips to true on the stop, for the scheduler.
    pub fn receiver(&self) -> watch::Receiver<bool> {
        self.receiver.clone()
    }
}

#[cfg(unix)]
async fn wait_for_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}
