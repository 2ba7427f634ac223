//! Job arrivals (`[agents] rates`): agentic jobs arriving open-loop at a rate (constant or
//! Poisson) for a set time, each playing its whole tree as agents.rs's [`Player`] plays it, the
//! jobs overlapping freely: arrival `i` plays the set's job `i` mod its size, its first call
//! sent at its arrival whatever came back before. The level's load is the most jobs in flight
//! at once; a sharded run deals the arrivals out by their number (a job's calls stay on one
//! shard).

use std::sync::Arc;
use std::time::Duration;

use infermeter_report::aggregate::{open_loop_concurrency, Applied, Window};
use infermeter_report::{Arrivals, LoadMode};

use super::agents::Player;
use super::conversations::{drive, Task};
use super::open_loop::arrival_offsets;
use super::record::Recorder;
use super::{
    LevelContext, LevelFuture, LevelRun, Load, MergedLoad, MergedWindow, Merging, Part, Sharded,
};
use crate::prompts::jobs::JobSet;
use crate::suite::agents::AgentsSpec;
use crate::suite::Suite;

/// A level of job arrivals.
#[derive(Debug, Clone)]
pub struct JobArrivals {
    /// Its place in the series, from 1.
    pub number: u32,
    /// New jobs per second.
    pub rate: f64,
    pub arrivals: Arrivals,
    /// How long jobs arrive: the window lasts at least this.
    pub duration: Duration,
    /// Of the arrivals.
    pub seed: u64,
    pub set: Arc<JobSet>,
    pub spec: Arc<AgentsSpec>,
}

impl JobArrivals {
    /// When each job arrives, from the level's start.
    fn offsets(&self) -> Vec<Duration> {
        arrival_offsets(self.rate, self.arrivals, self.duration, self.seed)
    }
}

impl Load for JobArrivals {
    fn plan(suite: &Suite, scenario: usize) -> Vec<JobArrivals> {
        let (Some(spec), Some(set)) = (&suite.agents, &suite.loaded_jobs) else {
            return Vec::new();
        };
        if suite.scenarios[scenario].agents.is_none() {
            return Vec::new();
        }
        let shared = Arc::new(spec.clone());
        (spec.rates.iter().enumerate())
            .map(|(position, &rate)| JobArrivals {
                number: position as u32 + 1,
                rate,
                arrivals: spec.arrivals,
                duration: Duration::from_secs_f64(spec.duration_s),
                seed: spec.seed.wrapping_add(position as u64),
                set: set.clone(),
                spec: shared.clone(),
            })
            .collect()
    }

    fn mode(&self) -> LoadMode {
        LoadMode::JobRate
    }

    fn record_label(&self) -> u32 {
        self.number
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(self.arrivals)
    }

    /// Every agent of every arrival at once, at most.
    fn max_in_flight(&self) -> usize {
        let widest = self.set.jobs.iter().map(|j| j.agents.len()).max();
        (self.offsets().len().max(1) * widest.unwrap_or(1)).min(4096)
    }

    fn expected_requests(&self) -> Option<u64> {
        let n = self.set.jobs.len();
        let calls = |i: usize| self.set.jobs[i % n].calls() as u64;
        Some((0..self.offsets().len()).map(calls).sum())
    }

    fn applied(&self, max_in_flight: u32, previous: Option<u32>) -> Applied {
        Applied {
            concurrency: open_loop_concurrency(max_in_flight, previous),
            job_rate: Some(self.rate),
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        Box::pin(run_job_arrivals(ctx, self))
    }

    /// The shard plays every count-th arrival (its calls stay with it).
    fn shard(&self, _: Part, _: Duration) -> Sharded {
        Sharded::dealt_out(self.clone(), self.duration)
    }

    fn merging() -> Merging {
        Merging {
            window: MergedWindow::Span,
            load: MergedLoad::InFlight,
            replays_trace: false,
        }
    }
}

async fn run_job_arrivals(ctx: &LevelContext<'_>, load: &JobArrivals) -> LevelRun {
    let start = ctx.origin;
    let (player, receiver) = Player::new(ctx, &load.set, &load.spec);
    let tasks: Vec<Task> = (0u64..)
        .zip(load.offsets())
        .filter(|(play, _)| ctx.owns(*play))
        .map(|(play, offset)| {
            let player = &player;
            Box::pin(async move {
                player.job(play, start + offset).await;
            }) as Task
        })
        .collect();
    let mut rec = Recorder::new(ctx, start, LoadMode::JobRate);
    let interrupted = drive(ctx, receiver, &mut rec, tasks, false).await;
    let end_s = rec.last_end().max(load.duration.as_secs_f64());
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        player.most_playing(),
        interrupted,
    )
}
