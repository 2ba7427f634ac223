//! Ctrl-C, SIGTERM and SIGHUP: the run stops sending, gives in-flight requests a short grace, and keeps
//! everything measured. A caller can stop a run the same way ([`StopRequest`]): a sweep does
//! when the server it measures exits.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// Set once Ctrl-C or SIGTERM arrives; says which.
pub struct StopSignal {
    receiver: watch::Receiver<bool>,
    name: Arc<Mutex<&'static str>>,
    /// The listening task: it ends with the run, or a sweep's earlier runs would each log
    /// the signal that stops a later one.
    listener: tokio::task::AbortHandle,
}

impl Drop for StopSignal {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// A stop asked for by the caller, with what asked for it ("the server's exit"), as the
/// report's partial status names it.
#[derive(Debug, Clone)]
pub struct StopRequest(watch::Receiver<Option<&'static str>>);

/// Asks the run holding the matching [`StopRequest`] to stop.
#[derive(Debug)]
pub struct StopRequester(watch::Sender<Option<&'static str>>);

impl StopRequest {
    /// A request and what sends it.
    pub fn new() -> (StopRequester, StopRequest) {
        let (tx, rx) = watch::channel(None);
        (StopRequester(tx), StopRequest(rx))
    }

    /// Waits until the stop is asked for (never, once the requester is gone without asking).
    async fn asked(mut self) -> &'static str {
        let why = self
            .0
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|why| *why);
        match why {
            Some(why) => why,
            None => std::future::pending().await,
        }
    }
}

impl StopRequester {
    pub fn stop(&self, why: &'static str) {
        let _ = self.0.send(Some(why));
    }
}

impl StopSignal {
    /// Starts listening (on the current runtime) for a signal, or for `request`.
    pub fn listen(request: Option<StopRequest>) -> StopSignal {
        let (tx, receiver) = watch::channel(false);
        let name = Arc::new(Mutex::new("signal"));
        let seen = name.clone();
        let listener = tokio::spawn(async move {
            let asked = async move {
                match request {
                    Some(request) => request.asked().await,
                    None => std::future::pending().await,
                }
            };
            let name = tokio::select! {
                name = wait_for_signal() => {
                    tracing::warn!("{name} received: stopping, in-flight requests get a short grace");
                    name
                }
                why = asked => {
                    tracing::warn!("{why}: stopping the run, in-flight requests get a short grace");
                    why
                }
            };
            *seen.lock().unwrap_or_else(|e| e.into_inner()) = name;
            let _ = tx.send(true);
        });
        StopSignal {
            receiver,
            name,
            listener: listener.abort_handle(),
        }
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

/// Waits for Ctrl-C (SIGINT), SIGTERM or SIGHUP (a closed terminal or ssh session: handled as
/// SIGTERM, so a sweep stops its server and keeps what it measured); its name. SIGHUP is left
/// alone where it is ignored (`nohup`): such a run was meant to outlive its terminal.
#[cfg(unix)]
pub async fn wait_for_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let hangup = async {
        if hangup_ignored() {
            return std::future::pending().await;
        }
        match signal(SignalKind::hangup()) {
            Ok(mut hup) => hup.recv().await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hangup => "SIGHUP",
    }
}

/// Whether SIGHUP is ignored (as `nohup` leaves it).
#[cfg(unix)]
fn hangup_ignored() -> bool {
    // SAFETY: a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The exit code of a run or sweep that signal `name` stopped: 128 + its number, as shells
/// report it.
pub fn exit_code(name: &str) -> u8 {
    match name {
        "SIGHUP" => 129,
        "SIGTERM" => 143,
        _ => 130,
    }
}

#[cfg(not(unix))]
pub async fn wait_for_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}
