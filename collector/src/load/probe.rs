//! The client's own event-loop delay over a level: how late a 1 ms ticker wakes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Measures how late a 1 ms ticker wakes while a level runs.
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
                let due = tokio::time::Instant::now() + Duration::from_millis(1);
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
