//! Agentic jobs (`[agents]`): N jobs at once, each a tree of agents whose calls fork into
//! subagents and join, played by the rule of prompts/jobs.rs. A job holds its slot until its
//! whole tree is done (background agents too), then the slot plays its next job, as AIPerf's
//! lanes do; slot `s` of `N` plays the set's jobs `s`, `s + N`, …, each play's prompt blocks
//! its own (so a repeated job finds nothing of its last play in the prefix cache) and shared
//! between the play's agents as the source's block ids say. A job's first call goes at once;
//! every other waits what the suite's timing says after what it waits for. Every call's record
//! names its job, agent, parent, depth and call. Job arrivals at a rate (job_rate.rs) play
//! their jobs with the same [`Player`].

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use infermeter_report::aggregate::{Applied, Window};
use infermeter_report::{AgentCall, AskedLengths, LoadMode, Outcome};
use tokio::sync::{mpsc, watch};

use super::conversations::{drive, wait_until, AbortOnDrop, Task, LEVEL_RUNS};
use super::dispatch::Dispatcher;
use super::record::{Done, Recorder};
use super::{
    LevelContext, LevelFuture, LevelRun, Load, MergedLoad, MergedWindow, Merging, Part, Sharded,
};
use crate::http::body::ChatMessage;
use crate::prompts::jobs::{Job, JobSet};
use crate::prompts::trace::{derived, BlockWords};
use crate::suite::agents::AgentsSpec;
use crate::suite::Suite;

/// A level of agentic jobs.
#[derive(Debug, Clone)]
pub struct Agents {
    /// Jobs at once: the level's load and its records' `concurrency`.
    pub jobs_at_once: u32,
    /// Jobs the level plays, dealt out to its slots in turn.
    pub plays: u32,
    pub set: Arc<JobSet>,
    pub spec: Arc<AgentsSpec>,
}

impl Load for Agents {
    fn plan(suite: &Suite, scenario: usize) -> Vec<Agents> {
        let (Some(spec), Some(set)) = (&suite.agents, &suite.loaded_jobs) else {
            return Vec::new();
        };
        if suite.scenarios[scenario].agents.is_none() {
            return Vec::new();
        }
        let spec = Arc::new(spec.clone());
        (spec.levels.iter())
            .map(|&n| Agents {
                jobs_at_once: n,
                plays: spec.jobs.unwrap_or((set.jobs.len() as u32).max(n)),
                set: set.clone(),
                spec: spec.clone(),
            })
            .collect()
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Agents
    }

    fn record_label(&self) -> u32 {
        self.jobs_at_once
    }

    /// Every agent of every job at once, at most.
    fn max_in_flight(&self) -> usize {
        let widest = self.set.jobs.iter().map(|j| j.agents.len()).max();
        (self.jobs_at_once as usize * widest.unwrap_or(1)).min(4096)
    }

    fn expected_requests(&self) -> Option<u64> {
        let n = self.set.jobs.len() as u64;
        Some(
            (0..u64::from(self.plays))
                .map(|p| self.set.jobs[(p % n) as usize].calls() as u64)
                .sum(),
        )
    }

    fn applied(&self, _: u32, _: Option<u32>) -> Applied {
        Applied {
            concurrency: self.jobs_at_once,
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        Box::pin(run_agents(ctx, self))
    }

    /// The shard runs every count-th slot (its jobs stay with it), given `level_time`.
    fn shard(&self, part: Part, level_time: Duration) -> Sharded {
        Sharded {
            load: Arc::new(self.clone()),
            share: Some(part.share(self.jobs_at_once)),
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

async fn run_agents(ctx: &LevelContext<'_>, load: &Agents) -> LevelRun {
    let start = ctx.origin;
    let (player, receiver) = Player::new(ctx, &load.set, &load.spec);
    let slots: Vec<u32> = (0..load.jobs_at_once)
        .filter(|&slot| ctx.owns(u64::from(slot)))
        .collect();
    let owned = slots.len() as u32;
    let tasks: Vec<Task> = slots
        .into_iter()
        .map(|slot| {
            let player = &player;
            Box::pin(async move {
                let plays =
                    (u64::from(slot)..u64::from(load.plays)).step_by(load.jobs_at_once as usize);
                for play in plays {
                    if !player.job(play, Instant::now()).await {
                        return;
                    }
                }
            }) as Task
        })
        .collect();
    let mut rec = Recorder::new(ctx, start, LoadMode::Agents);
    let interrupted = drive(ctx, receiver, &mut rec, tasks, false).await;
    let end_s = rec.last_end();
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        owned,
        interrupted,
    )
}

/// Where an agent of a playing job stands.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    /// Its first call went (the root's: the job is in flight from then).
    started: bool,
    /// Its calls with their whole reply.
    replied: usize,
    /// It sends no more calls (its last replied, one failed, or a stop came).
    ended: bool,
    /// It has ended and so have all of its children, recursively.
    finished: bool,
}

/// What a level's jobs share: plays them and sends their calls' records to the level's
/// recorder.
pub(super) struct Player<'c> {
    ctx: &'c LevelContext<'c>,
    set: &'c JobSet,
    spec: &'c AgentsSpec,
    words: &'c BlockWords,
    /// The level run's, so no run finds another's blocks in the cache.
    salt: u64,
    dispatcher: Dispatcher,
    finished: mpsc::UnboundedSender<Done>,
    next_index: AtomicU64,
    /// Jobs playing now, and the most at once.
    playing: AtomicU32,
    most_playing: AtomicU32,
}

impl<'c> Player<'c> {
    /// A level's player of `set` as `spec` times it, and where its calls' records come.
    pub(super) fn new(
        ctx: &'c LevelContext<'c>,
        set: &'c JobSet,
        spec: &'c AgentsSpec,
    ) -> (Player<'c>, mpsc::UnboundedReceiver<Done>) {
        let (finished, receiver) = mpsc::unbounded_channel();
        let Some(words) = ctx.block_words else {
            unreachable!("a run with [agents] builds its block words");
        };
        let player = Player {
            ctx,
            set,
            spec,
            words,
            salt: LEVEL_RUNS.fetch_add(1, Ordering::Relaxed),
            dispatcher: Dispatcher::start(),
            finished,
            next_index: AtomicU64::new(0),
            playing: AtomicU32::new(0),
            most_playing: AtomicU32::new(0),
        };
        (player, receiver)
    }

    /// The most jobs it has played at once.
    pub(super) fn most_playing(&self) -> u32 {
        self.most_playing.load(Ordering::Relaxed)
    }

    /// Plays job `play` (the set's job `play` mod its size) to the end of its tree, its first
    /// call due at `arrival`; false when a stop came.
    pub(super) async fn job(&self, play: u64, arrival: Instant) -> bool {
        let set = self.set;
        let job = &set.jobs[(play % set.jobs.len() as u64) as usize];
        let progress: Vec<watch::Sender<Progress>> = (job.agents.iter())
            .map(|_| watch::channel(Progress::default()).0)
            .collect();
        let agents = (0..job.agents.len()).map(|a| self.agent(play, job, a, &progress, arrival));
        futures::future::join_all(agents).await;
        if progress[0].borrow().started {
            self.playing.fetch_sub(1, Ordering::Relaxed);
        }
        !*self.ctx.stop.borrow()
    }

    /// Agent `a` of `job`: waits to be spawned, sends its calls in turn (each after the
    /// children it joins have finished and its wait; the root's first at `arrival`), then waits
    /// for its children.
    async fn agent(
        &self,
        play: u64,
        job: &Job,
        a: usize,
        progress: &[watch::Sender<Progress>],
        arrival: Instant,
    ) {
        let me = &job.agents[a];
        let spawned = match me.parent {
            None => true,
            Some(p) => {
                let need = me.spawned_after.map_or(0, |s| s + 1);
                let state = progress[p]
                    .subscribe()
                    .wait_for(|s| s.replied >= need || s.ended)
                    .await
                    .map(|s| *s)
                    .unwrap_or_default();
                state.replied >= need
            }
        };
        let children: Vec<usize> = (job.agents.iter().enumerate())
            .filter(|(_, c)| c.parent == Some(a))
            .map(|(i, _)| i)
            .collect();
        for (i, call) in me.calls.iter().enumerate().filter(|_| spawned) {
            for &c in children
                .iter()
                .filter(|&&c| job.agents[c].joined_by == Some(i))
            {
                finished(&progress[c]).await;
            }
            let due = match (a, i) {
                (0, 0) => arrival,
                _ => Instant::now() + Duration::from_secs_f64(self.spec.wait_s(call.wait_ms)),
            };
            let Some(sent) = wait_until(&self.dispatcher, &self.ctx.stop, due).await else {
                break;
            };
            if (a, i) == (0, 0) {
                progress[a].send_modify(|s| s.started = true);
                let now = self.playing.fetch_add(1, Ordering::Relaxed) + 1;
                self.most_playing.fetch_max(now, Ordering::Relaxed);
            }
            if !self.call(play, job, a, i, due, sent).await {
                break;
            }
            progress[a].send_modify(|s| s.replied = i + 1);
        }
        progress[a].send_modify(|s| s.ended = true);
        for &c in &children {
            finished(&progress[c]).await;
        }
        progress[a].send_modify(|s| s.finished = true);
    }

    /// Sends call `i` of agent `a` (due at `due`, fired at `sent`) and records it; true when it
    /// succeeded.
    async fn call(
        &self,
        play: u64,
        job: &Job,
        a: usize,
        i: usize,
        due: Instant,
        sent: Instant,
    ) -> bool {
        let me = &job.agents[a];
        let call = &me.calls[i];
        // Blocks scoped to the play: its agents share them, no other play does.
        let blocks: Vec<u64> = call.blocks.iter().map(|&b| derived(play, b)).collect();
        let own = derived(play, (1 << 40) | ((a as u64) << 20) | i as u64);
        let block_tokens = self.set.block_tokens;
        let text = (self.words).prompt(&blocks, block_tokens, call.input_tokens, own, self.salt);
        let driver = self.ctx.driver.clone();
        let body = driver.messages_body(&[ChatMessage::user(text)], call.output_tokens, true);
        let request = AbortOnDrop(tokio::spawn(async move {
            driver.send_from(body, sent, false).await
        }));
        let Ok(exchange) = request.wait().await else {
            return false;
        };
        let ok = exchange.outcome == Outcome::Ok;
        let index = |n: Option<usize>| n.map(|n| n as u32);
        let _ = self.finished.send(Done {
            index: self.next_index.fetch_add(1, Ordering::Relaxed),
            scheduled: due.min(exchange.sent),
            input_tokens: Some(call.input_tokens),
            session: None,
            // Each call asks its own lengths: its checks compare with these, not the means.
            asked: Some(AskedLengths {
                input_tokens: call.input_tokens,
                output_tokens: call.output_tokens,
                natural: false,
                prompt: None,
            }),
            agent: Some(AgentCall {
                job: play,
                agent: a as u32,
                parent: index(me.parent),
                depth: me.depth,
                call: i as u32,
                spawned_after: index(me.spawned_after),
                joined_by: index(me.joined_by),
            }),
            exchange,
        });
        ok
    }
}

/// Waits until the agent `progress` follows has finished (a closed channel counts as finished).
async fn finished(progress: &watch::Sender<Progress>) {
    let _ = progress.subscribe().wait_for(|s| s.finished).await;
}
