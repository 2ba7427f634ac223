//! Burst mode (`[burst]`): N requests sent at once, then drained; requests queue in the
//! engine. The window is the whole level.

use std::sync::Arc;
use std::time::{Duration, Instant};

use infermeter_report::aggregate::{Applied, Window};
use infermeter_report::LoadMode;
use tokio::task::JoinSet;

use super::record::{spawn, Recorder};
use super::{
    LevelContext, LevelFuture, LevelRun, Load, MergedLoad, MergedWindow, Merging, Part, Sharded,
};
use crate::prompts::Prepared;
use crate::suite::Suite;

/// A burst level of `queue_depth` requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burst {
    pub queue_depth: u32,
}

impl Burst {
    pub fn new(queue_depth: u32) -> Burst {
        Burst { queue_depth }
    }
}

impl Load for Burst {
    fn plan(suite: &Suite, scenario: usize) -> Vec<Burst> {
        match &suite.burst {
            Some(b) if suite.is_single(scenario) => {
                b.levels.iter().map(|&n| Burst::new(n)).collect()
            }
            _ => Vec::new(),
        }
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Burst
    }

    fn record_label(&self) -> u32 {
        self.queue_depth
    }

    fn max_in_flight(&self) -> usize {
        self.queue_depth as usize
    }

    fn expected_requests(&self) -> Option<u64> {
        Some(u64::from(self.queue_depth))
    }

    fn applied(&self, _: u32, _: Option<u32>) -> Applied {
        Applied {
            concurrency: self.queue_depth,
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        Box::pin(run_burst(ctx, self.queue_depth))
    }

    /// The shard sends its share at once; the drain time is the whole step.
    fn shard(&self, part: Part, _: Duration) -> Sharded {
        let share = part.share(self.queue_depth);
        Sharded {
            load: Arc::new(Burst::new(share)),
            share: Some(share),
            load_time: Duration::ZERO,
        }
    }

    fn merging() -> Merging {
        Merging {
            window: MergedWindow::Span,
            load: MergedLoad::Shares,
            replays_trace: false,
        }
    }
}

async fn run_burst(ctx: &LevelContext<'_>, queue_depth: u32) -> LevelRun {
    let mut rec = Recorder::new(ctx, ctx.origin, LoadMode::Burst);
    // Build every body first so the burst leaves together.
    let prepared: Vec<Prepared> = (0..u64::from(queue_depth)).map(|i| ctx.prompt(i)).collect();
    let mut set = JoinSet::new();
    let scheduled = Instant::now();
    for (index, p) in prepared.into_iter().enumerate() {
        spawn(&mut set, ctx, index as u64, scheduled, p);
    }
    let interrupted = rec.drain(&mut set, true, false).await;
    let end_s = rec.last_end();
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        queue_depth,
        interrupted,
    )
}
