//! Peak mode (`[peak]`): exactly N requests in flight, a closed loop: a new one starts when
//! one ends. The first wave leaves together and is not measured; the window runs from the
//! first request after it to the drain, once enough requests finished in it and the level
//! lasted long enough.

use std::time::{Duration, Instant};

use infermeter_report::aggregate::{Applied, Window};
use infermeter_report::LoadMode;
use tokio::task::JoinSet;

use super::record::{secs, spawn, Recorder};
use super::{
    LevelContext, LevelFuture, LevelRun, Load, MergedLoad, MergedWindow, Merging, Part, Sharded,
};
use crate::suite::{PeakPlan, Suite};

/// A peak level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peak {
    pub concurrency: u32,
    /// The level ends once this many requests per slot finished inside the window...
    pub requests_per_slot: u32,
    /// ...and it lasted this long.
    pub min_duration: Duration,
}

impl Peak {
    /// A level of `n` in flight, as long as `plan` says.
    pub fn new(plan: &PeakPlan, n: u32) -> Peak {
        Peak {
            concurrency: n,
            requests_per_slot: plan.requests_per_slot,
            min_duration: Duration::from_secs_f64(plan.min_seconds),
        }
    }
}

impl Load for Peak {
    fn plan(suite: &Suite, scenario: usize) -> Vec<Peak> {
        match &suite.peak {
            Some(p) if suite.is_single(scenario) => {
                p.levels.iter().map(|&n| Peak::new(p, n)).collect()
            }
            _ => Vec::new(),
        }
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Peak
    }

    fn record_label(&self) -> u32 {
        self.concurrency
    }

    fn max_in_flight(&self) -> usize {
        self.concurrency as usize
    }

    fn applied(&self, _: u32, _: Option<u32>) -> Applied {
        Applied {
            concurrency: self.concurrency,
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        Box::pin(run_peak(ctx, *self))
    }

    /// The shard keeps its share in flight for `level_time`: time alone ends a sharded peak
    /// level, so every shard drains at the same moment.
    fn shard(&self, part: Part, level_time: Duration) -> Sharded {
        let share = part.share(self.concurrency);
        Sharded {
            load: std::sync::Arc::new(Peak {
                concurrency: share,
                requests_per_slot: 0,
                min_duration: level_time,
            }),
            share: Some(share),
            load_time: level_time,
        }
    }

    /// A peak level's figures are its steady state, every shard's share in flight at once.
    fn merging() -> Merging {
        Merging {
            window: MergedWindow::Steady,
            load: MergedLoad::Shares,
            replays_trace: false,
        }
    }
}

async fn run_peak(ctx: &LevelContext<'_>, peak: Peak) -> LevelRun {
    let start = ctx.origin;
    let target_in_window = u64::from(peak.requests_per_slot) * u64::from(peak.concurrency);
    let mut rec = Recorder::new(ctx, start, LoadMode::Peak);
    let mut stop = ctx.stop.clone();
    let mut set = JoinSet::new();
    let n = u64::from(peak.concurrency);
    for index in 0..n {
        spawn(&mut set, ctx, index, Instant::now(), ctx.prompt(index));
    }
    let mut next_index = n;
    let mut window_start: Option<Instant> = None;
    let mut in_window_done = 0u64;
    let mut interrupted = false;
    let min_end = tokio::time::Instant::from_std(start + peak.min_duration);
    let drain_start = loop {
        let done = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => { interrupted = true; break Instant::now(); }
            // Once enough requests finished, the drain starts at `min_duration` on the dot,
            // not at the next completion after it (a sharded level's shards drain together).
            _ = tokio::time::sleep_until(min_end), if in_window_done >= target_in_window => {
                break Instant::now();
            }
            done = set.join_next() => done,
        };
        let Some(done) = done else {
            break Instant::now();
        };
        let done = match done {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("request task failed: {e}");
                continue;
            }
        };
        // The first wave starts in lockstep: only requests started after it count.
        let in_window = done.index >= n;
        if in_window {
            in_window_done += 1;
        }
        rec.record(done, in_window, false);
        if in_window_done >= target_in_window && start.elapsed() >= peak.min_duration {
            break Instant::now();
        }
        let scheduled = Instant::now();
        window_start.get_or_insert(scheduled);
        spawn(&mut set, ctx, next_index, scheduled, ctx.prompt(next_index));
        next_index += 1;
    };
    // Requests still running straddle the drain: record them, outside the window.
    interrupted |= rec.drain(&mut set, false, false).await;
    let window = Window {
        start_s: window_start.map_or(0.0, |w| secs(start, w)),
        end_s: secs(start, drain_start),
    };
    rec.finish(window, peak.concurrency, interrupted)
}
