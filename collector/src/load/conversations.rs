//! What the sessions of a users or session-arrivals level share ([`Conversations`]): the
//! conversation texts, the driver, where finished turns go, and the count of sessions active.
//! Each turn is one request the level records as it finishes; a failed turn ends its session,
//! since the next turn would carry an answer that never came.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use infermeter_report::{CacheUse, Outcome};
use tokio::sync::{mpsc, watch};

use super::dispatch::Dispatcher;
use super::record::{Done, Recorder};
use super::LevelContext;
use crate::prompts::conversation::{Conversation, SessionPlan};
use crate::prompts::think::Thinker;

/// Numbers every level run (and trial) of the process, so no two share a user's messages (nor
/// an agentic job's blocks).
pub(super) static LEVEL_RUNS: AtomicU64 = AtomicU64::new(0);

/// One user's (or arriving session's) sessions, run as one task of the level.
pub type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// What the sessions of one level share: the conversation texts, the driver, where finished
/// turns go, and the counts.
pub struct Conversations<'c> {
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

impl<'c> Conversations<'c> {
    /// The sessions of suite scenario `scenario`, their prefix cache used as `cache` says.
    pub fn new(ctx: &'c LevelContext<'c>, scenario: usize, cache: CacheUse) -> Self {
        let (finished, receiver) = mpsc::unbounded_channel();
        Conversations {
            ctx,
            plan: ctx.conversations,
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
    pub fn thinker(&self, seed: u64, user: u64) -> Thinker {
        let seed = seed
            ^ u64::from(self.ctx.trial).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ user.wrapping_mul(0xD1B5_4A32_D192_ED03);
        Thinker::new(self.plan.think_time(self.scenario), seed)
    }

    /// Waits for `due` on the dispatcher's clock (an arrival or a turn sent late would count
    /// the client's lateness as the user's); the instant it fired, or `None` when a stop came
    /// first.
    async fn wait_until(&self, due: Instant) -> Option<Instant> {
        wait_until(&self.dispatcher, &self.ctx.stop, due).await
    }

    /// Runs session `session` from its first turn, due at `first_due`; true when every turn
    /// succeeded (false also when a stop ended it).
    pub async fn session(&self, session: u64, thinker: &mut Thinker, first_due: Instant) -> bool {
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
            asked: prepared.asked,
            agent: None,
            exchange,
        });
        if ok {
            convo.answered(answer);
        }
        ok
    }

    /// The most sessions active at once so far.
    pub fn most_active(&self) -> u32 {
        self.most_active.load(Ordering::Relaxed)
    }

    /// Polls the level's tasks and records each finished turn as it comes, until every task is
    /// done, or a stop arrives: then in-flight turns get the grace period and the rest are cut.
    /// Returns whether a stop was seen.
    pub async fn drive(
        &self,
        rec: &mut Recorder<'_, '_>,
        tasks: Vec<Task<'_>>,
        from_schedule: bool,
    ) -> bool {
        let receiver = self
            .receiver
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("a level is driven once");
        drive(self.ctx, receiver, rec, tasks, from_schedule).await
    }
}

/// Waits for `due` on `dispatcher`'s clock; the instant it fired, or `None` when a stop came
/// first.
pub(super) async fn wait_until(
    dispatcher: &Dispatcher,
    stop: &watch::Receiver<bool>,
    due: Instant,
) -> Option<Instant> {
    let mut stop = stop.clone();
    if *stop.borrow() {
        return None;
    }
    let go = dispatcher.at(due);
    tokio::select! {
        biased;
        _ = stop.wait_for(|s| *s) => None,
        fired = go => Some(fired.unwrap_or_else(|_| Instant::now())),
    }
}

/// Polls a level's tasks and records each request they finish (sent on `receiver`) as it
/// comes, until every task is done, or a stop arrives: then in-flight requests get the grace
/// period and the rest are cut. Returns whether a stop was seen.
pub(super) async fn drive(
    ctx: &LevelContext<'_>,
    mut receiver: mpsc::UnboundedReceiver<Done>,
    rec: &mut Recorder<'_, '_>,
    tasks: Vec<Task<'_>>,
    from_schedule: bool,
) -> bool {
    let mut tasks: FuturesUnordered<Task> = tasks.into_iter().collect();
    let mut stop: watch::Receiver<bool> = ctx.stop.clone();
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        if deadline.is_none() && *stop.borrow() {
            deadline = Some(tokio::time::Instant::now() + ctx.grace);
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

/// A request's task, aborted if the session waiting for it is dropped (a stop's grace ran out).
pub(super) struct AbortOnDrop<T>(pub(super) tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    pub(super) async fn wait(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
