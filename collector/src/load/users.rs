//! Users mode (`[users]`, session scenarios): N simultaneous users, each a closed loop of
//! sessions (a turn, its reply, a think time, the next turn). Every user starts after a first
//! think time (so the users do not move in lockstep), then runs its sessions back to back;
//! latency counts from when a turn was sent: the users wait for their replies.

use std::sync::Arc;
use std::time::{Duration, Instant};

use infermeter_report::aggregate::{Applied, Window};
use infermeter_report::{CacheUse, LoadMode};

use super::conversations::{Conversations, Task};
use super::record::Recorder;
use super::{
    LevelContext, LevelFuture, LevelRun, Load, MergedLoad, MergedWindow, Merging, Part, Sharded,
};
use crate::suite::Suite;

/// A users level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Users {
    /// Its suite scenario, whose conversations the users hold.
    pub scenario: usize,
    pub users: u32,
    pub sessions_per_user: u32,
    pub cache: CacheUse,
    /// Of the think times.
    pub seed: u64,
}

impl Load for Users {
    /// A series per cache use, its levels in the suite's order.
    fn plan(suite: &Suite, scenario: usize) -> Vec<Users> {
        let Some(u) = &suite.users else {
            return Vec::new();
        };
        if suite.scenarios[scenario].session.is_none() {
            return Vec::new();
        }
        let mut levels = Vec::new();
        for &cache in &u.cache {
            for (position, &users) in u.levels.iter().enumerate() {
                levels.push(Users {
                    scenario,
                    users,
                    sessions_per_user: u.sessions_per_user,
                    cache,
                    seed: u.seed.wrapping_add(position as u64),
                });
            }
        }
        levels
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Users
    }

    fn record_label(&self) -> u32 {
        self.users
    }

    fn cache(&self) -> Option<CacheUse> {
        Some(self.cache)
    }

    fn max_in_flight(&self) -> usize {
        self.users as usize
    }

    fn applied(&self, _: u32, _: Option<u32>) -> Applied {
        Applied {
            concurrency: self.users,
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        Box::pin(run_users(ctx, *self))
    }

    /// The shard runs every count-th user (its sessions stay with it) and gives them
    /// `level_time`: a users level's sessions should fit in `--level-seconds`.
    fn shard(&self, part: Part, level_time: Duration) -> Sharded {
        Sharded {
            load: Arc::new(*self),
            share: Some(part.share(self.users)),
            load_time: level_time,
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

async fn run_users(ctx: &LevelContext<'_>, load: Users) -> LevelRun {
    let start = ctx.origin;
    let level = Conversations::new(ctx, load.scenario, load.cache);
    // Users keep their numbers on a shard: the same think times and sessions as one process.
    let owned: Vec<u32> = (0..load.users)
        .filter(|&user| ctx.owns(u64::from(user)))
        .collect();
    let users = owned.len() as u32;
    let tasks: Vec<Task> = owned
        .into_iter()
        .map(|user| {
            let level = &level;
            let mut thinker = level.thinker(load.seed, u64::from(user));
            Box::pin(async move {
                let mut due = start + thinker.pause();
                for n in 0..load.sessions_per_user {
                    let session =
                        u64::from(user) * u64::from(load.sessions_per_user) + u64::from(n);
                    if !level.session(session, &mut thinker, due).await {
                        return;
                    }
                    due = Instant::now();
                }
            }) as Task
        })
        .collect();
    let mut rec = Recorder::new(ctx, start, LoadMode::Users);
    let interrupted = level.drive(&mut rec, tasks, false).await;
    let end_s = rec.last_end();
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        users,
        interrupted,
    )
}
