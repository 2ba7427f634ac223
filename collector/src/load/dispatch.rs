//! Open-loop sends on time: a thread of its own fires each request at its scheduled instant.
//!
//! Tokio's timer has a 1 ms tick, and a runtime worker busy reading streams polls a waiting
//! task late; under load both made a trace's replay leave milliseconds behind its schedule. The
//! level's task hands each request (its body built, its task spawned and waiting) to this
//! thread a little ahead of time; the thread sleeps to just before the instant, spins to it and
//! signals the request's task with the instant it fired: the request's send time. When the
//! task then gets to run is the client's delay, counted in the request's latencies.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// How far ahead of its instant an open-loop request is handed over (and its body built).
pub const LOOKAHEAD: Duration = Duration::from_secs(1);
/// The last stretch before an instant is spun, not slept: the OS wakes a sleeper up to tens of
/// microseconds late.
const SPIN: Duration = Duration::from_micros(300);

/// The thread firing a level's requests, earliest first whatever order they came in; it ends
/// when dropped, after firing what it holds.
pub struct Dispatcher {
    queue: mpsc::Sender<Pending>,
}

/// A request waiting for its instant.
struct Pending {
    due: Instant,
    go: oneshot::Sender<Instant>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.due == other.due
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
/// Reversed: the heap's top is the earliest.
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.due.cmp(&self.due)
    }
}

impl Dispatcher {
    pub fn start() -> Dispatcher {
        let (queue, requests) = mpsc::channel::<Pending>();
        std::thread::Builder::new()
            .name("infermeter-dispatch".into())
            .spawn(move || {
                raise_priority();
                fire(requests)
            })
            .expect("a thread starts");
        Dispatcher { queue }
    }

    /// The signal of a request due at `due`: it yields the instant it was fired.
    pub fn at(&self, due: Instant) -> oneshot::Receiver<Instant> {
        let (go, fired) = oneshot::channel();
        if let Err(mpsc::SendError(pending)) = self.queue.send(Pending { due, go }) {
            // The thread is gone (it cannot end before we drop it): send now rather than never.
            let _ = pending.go.send(Instant::now());
        }
        fired
    }
}

/// Asks the OS to run this thread first when it wakes, where the client may: real-time
/// priority (SCHED_FIFO 1), else nice -10. On a busy machine a thread that mostly sleeps then
/// preempts the others at its instant rather than waiting out their time slice; it sleeps
/// again within microseconds, so it takes nothing from them. Refused (not root, no
/// CAP_SYS_NICE): it runs as any thread.
fn raise_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: sched_param is plain data we own for the call; gettid and setpriority take no
    // pointers (on Linux PRIO_PROCESS with a thread id sets that thread's nice value).
    unsafe {
        let param = libc::sched_param { sched_priority: 1 };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
            libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -10);
        }
    }
}

/// The thread: waits for the earliest pending instant (or a new request), fires it, again.
fn fire(requests: mpsc::Receiver<Pending>) {
    let mut pending = std::collections::BinaryHeap::new();
    loop {
        let Some(next) = pending.peek().map(|p: &Pending| p.due) else {
            match requests.recv() {
                Ok(p) => pending.push(p),
                Err(_) => return,
            }
            continue;
        };
        let wake = next.checked_sub(SPIN).unwrap_or(next);
        match requests.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(p) => {
                pending.push(p);
                continue;
            }
            // Nothing new before the instant: fire it.
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The level is over: fire what someone still waits for, forget the rest.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                pending.retain(|p| !p.go.is_closed());
                if pending.is_empty() {
                    return;
                }
                if pending.peek().map(|p| p.due) != Some(next) {
                    continue;
                }
                std::thread::sleep(wake.saturating_duration_since(Instant::now()));
            }
        }
        while Instant::now() < next {
            std::hint::spin_loop();
        }
        if let Some(p) = pending.pop() {
            // A request whose task is gone was cut by a stop: nothing to send.
            let _ = p.go.send(Instant::now());
        }
    }
}

/// A signal that has fired now: for a request sent as soon as its task runs.
pub fn now() -> oneshot::Receiver<Instant> {
    let (go, fired) = oneshot::channel();
    let _ = go.send(Instant::now());
    fired
}

/// Requests in flight (fired, not finished) and the most at once.
#[derive(Debug, Default)]
pub struct InFlight {
    now: AtomicU32,
    most: AtomicU32,
}

impl InFlight {
    pub fn started(&self) {
        let n = self.now.fetch_add(1, Ordering::Relaxed) + 1;
        self.most.fetch_max(n, Ordering::Relaxed);
    }

    pub fn finished(&self) {
        self.now.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn most(&self) -> u32 {
        self.most.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests fire at their instants, earliest first whatever order they came in.
    #[tokio::test]
    async fn requests_fire_at_their_instants() {
        let dispatcher = Dispatcher::start();
        let start = Instant::now() + Duration::from_millis(20);
        // Handed over out of order: 0, 19, 1, 18, ...
        let dues: Vec<Instant> = (0..20u64)
            .map(|i| if i % 2 == 0 { i / 2 } else { 19 - i / 2 })
            .map(|i| start + Duration::from_millis(i * 7))
            .collect();
        let signals: Vec<_> = dues.iter().map(|&d| dispatcher.at(d)).collect();
        for (due, signal) in dues.into_iter().zip(signals) {
            let fired = signal.await.unwrap();
            assert!(fired >= due);
            // Generous for a loaded machine; the replay test holds it to its 1 ms.
            assert!(
                fired - due < Duration::from_millis(20),
                "{:?} late",
                fired - due
            );
        }
        let at_once = now().await.unwrap();
        assert!(at_once <= Instant::now());
    }
}
