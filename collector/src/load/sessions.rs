//! Session arrivals (`[sessions]`, session scenarios): new sessions arriving open-loop at a
//! rate for a set time; each session's turns then follow its replies with think times. TTFT
//! and E2E count from each turn's scheduled start. The level's load is the most sessions
//! active at once.

use std::time::Duration;

use infermeter_report::aggregate::{open_loop_concurrency, Applied, Window};
use infermeter_report::{Arrivals, CacheUse, LoadMode};

use super::conversations::{Conversations, Task};
use super::open_loop::arrival_offsets;
use super::record::Recorder;
use super::{
    LevelContext, LevelFuture, LevelRun, Load, MergedLoad, MergedWindow, Merging, Part, Sharded,
};
use crate::suite::Suite;

/// A level of session arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionArrivals {
    /// Its suite scenario, whose conversations the sessions hold.
    pub scenario: usize,
    /// Its place in its series, from 1.
    pub number: u32,
    pub rate: f64,
    pub arrivals: Arrivals,
    /// How long arrivals are offered: the window lasts at least this.
    pub duration: Duration,
    pub cache: CacheUse,
    /// Of the arrivals and the think times.
    pub seed: u64,
}

impl Load for SessionArrivals {
    /// A series per cache use, its levels in the suite's order.
    fn plan(suite: &Suite, scenario: usize) -> Vec<SessionArrivals> {
        let Some(r) = &suite.session_rate else {
            return Vec::new();
        };
        if suite.scenarios[scenario].session.is_none() {
            return Vec::new();
        }
        let mut levels = Vec::new();
        for &cache in &r.cache {
            for (position, &rate) in r.rates.iter().enumerate() {
                levels.push(SessionArrivals {
                    scenario,
                    number: position as u32 + 1,
                    rate,
                    arrivals: r.arrivals,
                    duration: Duration::from_secs_f64(r.duration_s),
                    cache,
                    seed: r.seed.wrapping_add(position as u64),
                });
            }
        }
        levels
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Sessions
    }

    fn record_label(&self) -> u32 {
        self.number
    }

    fn cache(&self) -> Option<CacheUse> {
        Some(self.cache)
    }

    fn applied(&self, max_in_flight: u32, previous: Option<u32>) -> Applied {
        Applied {
            concurrency: open_loop_concurrency(max_in_flight, previous),
            session_rate: Some(self.rate),
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        Box::pin(run_session_arrivals(ctx, *self))
    }

    /// The shard starts every count-th session (its turns stay with it).
    fn shard(&self, _: Part, _: Duration) -> Sharded {
        Sharded::dealt_out(*self, self.duration)
    }

    fn merging() -> Merging {
        Merging {
            window: MergedWindow::Span,
            load: MergedLoad::InFlight,
            replays_trace: false,
        }
    }
}

async fn run_session_arrivals(ctx: &LevelContext<'_>, load: SessionArrivals) -> LevelRun {
    let start = ctx.origin;
    let level = Conversations::new(ctx, load.scenario, load.cache);
    let schedule = arrival_offsets(load.rate, load.arrivals, load.duration, load.seed);
    let tasks: Vec<Task> = (0u64..)
        .zip(schedule)
        .filter(|(session, _)| ctx.owns(*session))
        .map(|(session, offset)| {
            let level = &level;
            let mut thinker = level.thinker(load.seed, session);
            let due = start + offset;
            Box::pin(async move {
                level.session(session, &mut thinker, due).await;
            }) as Task
        })
        .collect();
    let mut rec = Recorder::new(ctx, start, LoadMode::Sessions);
    let interrupted = level.drive(&mut rec, tasks, true).await;
    let end_s = rec.last_end().max(load.duration.as_secs_f64());
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        level.most_active(),
        interrupted,
    )
}
