//! A simulator on a thread and runtime of its own, for callers that measure timing in the same
//! process (`infermeter-dev bench-timing`, `infermeter-dev calibrate`): the engine's step timers then never
//! queue behind the caller's tasks, nor the caller's behind the engine's.

use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::{SimConfig, SimError};

/// A running simulator on its own thread; [`ThreadedSim::stop`] shuts it down and joins it.
pub struct ThreadedSim {
    base_url: String,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<Result<(), SimError>>,
}

impl ThreadedSim {
    /// Starts the simulator on a new thread with a multi-threaded runtime (`multi_thread`) or a
    /// current-thread one, and returns once it serves.
    pub async fn start(config: SimConfig, multi_thread: bool) -> Result<ThreadedSim, SimError> {
        let (url_tx, url_rx) = oneshot::channel();
        let (stop, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || -> Result<(), SimError> {
            let rt = if multi_thread {
                tokio::runtime::Runtime::new()
            } else {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            }
            .map_err(SimError::Runtime)?;
            rt.block_on(async move {
                let sim = crate::start(config).await?;
                let _ = url_tx.send(sim.base_url());
                let _ = stop_rx.await;
                sim.shutdown().await;
                Ok(())
            })
        });
        match url_rx.await {
            Ok(base_url) => Ok(ThreadedSim {
                base_url,
                stop,
                thread,
            }),
            // The thread ended before serving: its error says why.
            Err(_) => Err(thread
                .join()
                .map_err(|_| SimError::Panicked)?
                .err()
                .unwrap_or(SimError::StoppedEarly)),
        }
    }

    /// `http://ADDR/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Shuts the simulator down and waits for its thread.
    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}
