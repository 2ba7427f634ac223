//! Load in users: N simultaneous users, each a closed loop of sessions (a turn, its reply, a
//! think time, the next turn), or sessions arriving open-loop at a rate. Each turn is one
//! request the level records as it finishes; a failed turn ends its session, since the next
//! turn would carry an answer that never came.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use infermeter_report::aggregate::Window;
use infermeter_report::{Arrivals, CacheUse, LoadMode, Outcome};
use tokio::sync::{mpsc, watch};

use crate::dispatch::Dispatcher;
use crate::scheduler::{arrival_offsets, Done, LevelContext, LevelRun, Recorder};
use crate::session::{Conversation, SessionPlan, Thinker};

/// N users, each running its sessions one after another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsersLoad {
    pub users: u32,
    pub sessions_per_user: u32,
    pub cache: CacheUse,
    /// Of the think times.
    pub seed: u64,
}

/// New sessions arriving open-loop at `rate` per second for `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionRate {
    pub rate: f64,
    pub arrivals: Arrivals,
    /// How long arrivals are offered: the window lasts at least this.
    pub duration: Duration,
    pub cache: CacheUse,
    /// Of the arrivals and the think times.
    pub seed: u64,
}

/// Numbers every level run (and trial) of the process, so no two share a user's messages.
static LEVEL_RUNS: AtomicU64 = AtomicU64::new(0);

type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Users mode: every user starts after a first think time (so the users do not move in
/// lockstep), then runs `sessions_per_user` sessions back to back. Latency counts from when a
/// turn was sent: the users wait for their replies (closed loop).
pub async fn run_users(
    ctx: &LevelContext<'_>,
    plan: &SessionPlan,
    scenario: usize,
    start: Instant,
    load: UsersLoad,
) -> LevelRun {
    let level = Sessions::new(ctx, plan, scenario, load.cache);
    let tasks: Vec<Task> = (0..load.users)
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
    rec.cache = Some(load.cache);
    let interrupted = level.drive(&mut rec, tasks, false).await;
    let end_s = last_end(&rec);
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        load.users,
        interrupted,
    )
}

/// Sessions mode: session `i` starts at `start + schedule[i]` whatever the others do (open
/// loop); its turns then follow its replies with think times. TTFT and E2E count from each
/// turn's scheduled start. The level's load is the most sessions active at once.
pub async fn run_session_arrivals(
    ctx: &LevelContext<'_>,
    plan: &SessionPlan,
    scenario: usize,
    start: Instant,
    load: SessionRate,
) -> LevelRun {
    let level = Sessions::new(ctx, plan, scenario, load.cache);
    let schedule = arrival_offsets(load.rate, load.arrivals, load.duration, load.seed);
    let tasks: Vec<Task> = schedule
        .iter()
        .enumerate()
        .map(|(session, offset)| {
            let level = &level;
            let mut thinker = level.thinker(load.seed, session as u64);
            let due = start + *offset;
            Box::pin(async move {
                level.session(session as u64, &mut thinker, due).await;
            }) as Task
        })
        .collect();
    let mut rec = Recorder::new(ctx, start, LoadMode::Sessions);
    rec.cache = Some(load.cache);
    let interrupted = level.drive(&mut rec, tasks, true).await;
    let end_s = last_end(&rec).max(load.duration.as_secs_f64());
    let most_active = level.most_active.load(Ordering::Relaxed);
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        most_active,
        interrupted,
    )
}

/// When the last request of the level ended, seconds after its start.
fn last_end(rec: &Recorder<'_, '_>) -> f64 {
    crate::scheduler::last_end(rec.records())
}

/// What the sessions of one level share: the conversation texts, the driver, where finished
/// turns go, and the counts.
struct Sessions<'c> {
    ctx: &'c LevelContext<'c>,
    plan: &'c SessionPlan,
    scenario: usize,
    cache: CacheUse,
    serial: u64,
    dispatcher: Dispatcher,
    finished: mpsc::UnboundedSender<Done>,
    receiver: std::sync::Mutex<Option<mpsc::UnboundedReceiver<Done>>>,
    next_index: AtomicU64,
    active: AtomicU32,
    most_active: AtomicU32,
}

impl<'c> Sessions<'c> {
    fn new(
        ctx: &'c LevelContext<'c>,
        plan: &'c SessionPlan,
        scenario: usize,
        cache: CacheUse,
    ) -> Self {
        let (finished, receiver) = mpsc::unbounded_channel();
        Sessions {
            ctx,
            plan,
            scenario,
            cache,
            serial: LEVEL_RUNS.fetch_add(1, Ordering::Relaxed),
            dispatcher: Dispatcher::start(),
            finished,
            receiver: std::sync::Mutex::new(Some(receiver)),
            next_index: AtomicU64::new(0),
            active: AtomicU32::new(0),
            most_active: AtomicU32::new(0),
        }
    }

    /// A user's (or an arriving session's) think times: seeded by the level's seed, the trial
    /// and the user, so a rerun draws the same.
    fn thinker(&self, seed: u64, user: u64) -> Thinker {
        let seed = seed
            ^ u64::from(self.ctx.trial).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ user.wrapping_mul(0xD1B5_4A32_D192_ED03);
        Thinker::new(self.plan.think_time(self.scenario), seed)
    }

    /// Waits for `due` on the dispatcher's clock (an arrival or a turn sent late would count
    /// the client's lateness as the user's); the instant it fired, or `None` when a stop came
    /// first.
    async fn wait_until(&self, due: Instant) -> Option<Instant> {
        let mut stop = self.ctx.stop.clone();
        if *stop.borrow() {
            return None;
        }
        let go = self.dispatcher.at(due);
        tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => None,
            fired = go => Some(fired.unwrap_or_else(|_| Instant::now())),
        }
    }

    /// Runs session `session` from its first turn, due at `first_due`; true when every turn
    /// succeeded (false also when a stop ended it).
    async fn session(&self, session: u64, thinker: &mut Thinker, first_due: Instant) -> bool {
        let mut convo = self
            .plan
            .start(self.scenario, self.serial, session, self.cache);
        let now = self.active.fetch_add(1, Ordering::Relaxed) + 1;
        self.most_active.fetch_max(now, Ordering::Relaxed);
        let mut due = first_due;
        let completed = loop {
            if convo.is_over() {
                break true;
            }
            if convo.next_turn_number() > 1 {
                due = Instant::now() + thinker.pause();
            }
            let Some(sent) = self.wait_until(due).await else {
                break false;
            };
            if !self.turn(&mut convo, due, sent).await {
                break false;
            }
        };
        self.active.fetch_sub(1, Ordering::Relaxed);
        completed
    }

    /// Sends the conversation's next turn (scheduled at `due`, fired at `sent`) and records
    /// it; true when it succeeded and its answer joined the conversation.
    async fn turn(&self, convo: &mut Conversation<'_>, due: Instant, sent: Instant) -> bool {
        let prepared = convo.next_request(self.ctx.driver);
        let driver = self.ctx.driver.clone();
        let body = prepared.body;
        // Its own task, as every measured request: streams are read in parallel.
        let request = AbortOnDrop(tokio::spawn(async move {
            driver.send_from(body, sent, true).await
        }));
        let Ok(mut exchange) = request.wait().await else {
            return false;
        };
        let ok = exchange.outcome == Outcome::Ok;
        let answer = exchange.answer.take().unwrap_or_default();
        let _ = self.finished.send(Done {
            index: self.next_index.fetch_add(1, Ordering::Relaxed),
            scheduled: due.min(exchange.sent),
            input_tokens: prepared.input_tokens,
            session: prepared.session,
            exchange,
        });
        if ok {
            convo.answered(answer);
        }
        ok
    }

    /// Polls the level's tasks and records each finished turn as it comes, until every task is
    /// done, or a stop arrives: then in-flight turns get the grace period and the rest are cut.
    /// Returns whether a stop was seen.
    async fn drive(
        &self,
        rec: &mut Recorder<'_, '_>,
        tasks: Vec<Task<'_>>,
        from_schedule: bool,
    ) -> bool {
        let mut receiver = self
            .receiver
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("a level is driven once");
        let mut tasks: FuturesUnordered<Task> = tasks.into_iter().collect();
        let mut stop: watch::Receiver<bool> = self.ctx.stop.clone();
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            if deadline.is_none() && *stop.borrow() {
                deadline = Some(tokio::time::Instant::now() + self.ctx.grace);
            }
            let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
            tokio::select! {
                biased;
                Some(done) = receiver.recv() => rec.record(done, true, from_schedule),
                _ = stop.wait_for(|s| *s), if deadline.is_none() => continue,
                _ = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => break,
                next = tasks.next(), if !tasks.is_empty() => {
                    if next.is_none() { continue; }
                }
                else => break,
            }
            if tasks.is_empty() {
                // Every task is done: record what they sent last, then stop.
                while let Ok(done) = receiver.try_recv() {
                    rec.record(done, true, from_schedule);
                }
                break;
            }
        }
        deadline.is_some()
    }
}

/// A request's task, aborted if the session waiting for it is dropped (a stop's grace ran out).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    async fn wait(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
