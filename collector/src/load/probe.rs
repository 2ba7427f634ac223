//! The client's own event-loop delay over a level: how late a 10 ms ticker wakes.
//!
//! Not 1 ms, as before: each tick wakes a parked runtime worker (a context switch, and another
//! when it parks again), and a thousand a second cost ~1.3 µs of kernel time per streamed event
//! at 256 streams, a tenth of the client's CPU (docs/performance.md, issue #38). How late a
//! timer fires is the same measure at either period.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the probe's timer is due.
const PERIOD: Duration = Duration::from_millis(10);

/// Measures how late a ticker wakes while a level runs.
pub struct LoopProbe {
    task: tokio::task::JoinHandle<Vec<f64>>,
    stop: Arc<AtomicBool>,
}

impl LoopProbe {
    pub fn start() -> LoopProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut delays = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let due = tokio::time::Instant::now() + PERIOD;
                tokio::time::sleep_until(due).await;
                // Tokio's timer wheel has 1 ms resolution: lateness below that is the wheel.
                let late = tokio::time::Instant::now().saturating_duration_since(due);
                delays.push(late.as_secs_f64());
            }
            delays
        });
        LoopProbe { task, stop }
    }

    /// Each tick's lateness, seconds.
    pub async fn finish(self) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or_default()
    }
}
