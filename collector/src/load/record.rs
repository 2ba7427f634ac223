//! From an exchange to a record: [`to_record`] is the one way (measured requests and warmups
//! alike), and a level's [`Recorder`] keeps its records as they finish, streaming each to the
//! records file.

use std::sync::Arc;
use std::time::{Duration, Instant};

use infermeter_report::aggregate::Window;
use infermeter_report::{
    AgentCall, AskedLengths, CacheUse, ChunkArrival, LoadMode, Outcome, RequestRecord, SessionTurn,
    TokenSource,
};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::dispatch::{self, InFlight};
use super::{LevelContext, LevelRun};
use crate::http::arrival::ClockCounts;
use crate::http::driver::Exchange;
use crate::prompts::Prepared;

/// What a record says besides its exchange: which request of which level it was, and when it
/// was due.
#[derive(Debug, Clone, Copy)]
pub struct Stamp<'a> {
    pub scenario: &'a str,
    pub mode: LoadMode,
    /// The level's number in the records: its load, or its place from 1 (open-loop modes).
    pub concurrency: u32,
    pub trial: u32,
    pub index: u64,
    pub warmup: bool,
    pub in_window: bool,
    /// The level's start: the record's times count from it.
    pub start: Instant,
    pub scheduled: Instant,
    /// Latency counts from the scheduled start (open loop: queueing in the client is not
    /// hidden), else from the send.
    pub from_schedule: bool,
    /// The prompt's length as the client counted it, for a server that reports no usage.
    pub input_tokens: Option<u32>,
    pub session: Option<SessionTurn>,
    pub cache: Option<CacheUse>,
    pub shard: Option<u32>,
    /// What the request asked, where its scenario draws prompts or lengths.
    pub asked: Option<AskedLengths>,
    /// Its place in its agentic job (agents mode).
    pub agent: Option<AgentCall>,
}

/// The record of one exchange.
pub fn to_record(ex: Exchange, stamp: Stamp<'_>) -> RequestRecord {
    let origin = if stamp.from_schedule {
        stamp.scheduled.min(ex.sent)
    } else {
        ex.sent
    };
    let started = matches!(ex.outcome, Outcome::Ok | Outcome::Incomplete { .. });
    RequestRecord {
        scenario: stamp.scenario.to_string(),
        mode: stamp.mode,
        concurrency: stamp.concurrency,
        trial: stamp.trial,
        index: stamp.index,
        warmup: stamp.warmup,
        in_window: stamp.in_window,
        scheduled_s: secs(stamp.start, stamp.scheduled),
        sent_s: secs(stamp.start, ex.sent),
        ttft_s: ex.first_token.map(|t| secs(origin, t)),
        e2e_s: Some(secs(origin, ex.end)),
        input_tokens: ex.prompt_tokens.or(stamp.input_tokens),
        output_tokens: if started { ex.output_tokens } else { None },
        cached_tokens: ex.cached_tokens,
        chunks: ex
            .chunks
            .iter()
            .map(|c| ChunkArrival {
                t: secs(ex.sent, c.at),
                tokens: c.tokens,
            })
            .collect(),
        queue_wait_s: None,
        engine_timings: ex.engine_timings,
        outcome: ex.outcome,
        retried: ex.retried,
        session: stamp.session,
        cache: stamp.cache,
        first_answer_s: ex.first_answer.map(|t| secs(origin, t)),
        reasoning_tokens: ex.reasoning_tokens,
        response_id: ex.response_id,
        shard: stamp.shard,
        asked: stamp.asked,
        agent: stamp.agent,
    }
}

/// Seconds from `from` to `to` (0 when `to` came first).
pub fn secs(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_secs_f64()
}

/// When the last of `records` ended, seconds after the level start.
pub fn last_end(records: &[RequestRecord]) -> f64 {
    records
        .iter()
        .filter_map(|r| r.e2e_s.map(|e| r.sent_s.max(r.scheduled_s) + e))
        .fold(0.0, f64::max)
}

/// A finished request with what its record needs besides the exchange.
pub struct Done {
    pub index: u64,
    pub scheduled: Instant,
    pub input_tokens: Option<u32>,
    pub session: Option<SessionTurn>,
    pub asked: Option<AskedLengths>,
    pub agent: Option<AgentCall>,
    pub exchange: Exchange,
}

/// Spawns a request that is sent now.
pub fn spawn(
    set: &mut JoinSet<Done>,
    ctx: &LevelContext<'_>,
    index: u64,
    scheduled: Instant,
    prepared: Prepared,
) {
    spawn_on_signal(set, ctx, index, scheduled, prepared, dispatch::now(), None);
}

/// Spawns a request that is sent when `go` fires, with the instant it fired: when its task
/// then gets to run is the client's delay, inside its latencies. `in_flight` counts it from
/// then until it ends.
pub fn spawn_on_signal(
    set: &mut JoinSet<Done>,
    ctx: &LevelContext<'_>,
    index: u64,
    scheduled: Instant,
    prepared: Prepared,
    go: oneshot::Receiver<Instant>,
    in_flight: Option<Arc<InFlight>>,
) {
    let driver = ctx.driver.clone();
    set.spawn(async move {
        // The dispatcher never drops a signal it holds; were it gone, send at once.
        let sent = go.await.unwrap_or_else(|_| Instant::now());
        if let Some(n) = &in_flight {
            n.started();
        }
        let exchange = driver.send_from(prepared.body, sent, false).await;
        if let Some(n) = &in_flight {
            n.finished();
        }
        Done {
            index,
            scheduled,
            input_tokens: prepared.input_tokens,
            session: prepared.session,
            asked: prepared.asked,
            agent: None,
            exchange,
        }
    });
}

/// Records a level's requests as they finish: streamed to the records file, kept for the level.
pub struct Recorder<'a, 'b> {
    ctx: &'a LevelContext<'b>,
    start: Instant,
    mode: LoadMode,
    records: Vec<RequestRecord>,
    token_source: Option<TokenSource>,
    clocks: ClockCounts,
}

impl<'a, 'b> Recorder<'a, 'b> {
    pub fn new(ctx: &'a LevelContext<'b>, start: Instant, mode: LoadMode) -> Recorder<'a, 'b> {
        Recorder {
            ctx,
            start,
            mode,
            records: Vec::new(),
            token_source: None,
            clocks: ClockCounts::default(),
        }
    }

    /// When the last request so far ended, seconds after the level start.
    pub fn last_end(&self) -> f64 {
        last_end(&self.records)
    }

    /// The trial's run: its records, window and load (`run_level` adds the client's health).
    pub fn finish(self, window: Window, max_in_flight: u32, interrupted: bool) -> LevelRun {
        LevelRun {
            records: self.records,
            window,
            client: Default::default(),
            max_in_flight,
            interrupted,
            token_source: self.token_source,
            clocks: self.clocks,
        }
    }

    pub fn record(&mut self, done: Done, in_window: bool, from_schedule: bool) {
        let ex = done.exchange;
        if ex.outcome == Outcome::Ok {
            self.token_source = Some(ex.token_source);
        }
        // A request refused before its stream timed nothing with either clock.
        if !matches!(ex.outcome, Outcome::Errored { .. }) {
            self.clocks.add(ex.clock);
        }
        let ctx = self.ctx;
        let record = to_record(
            ex,
            Stamp {
                scenario: ctx.scenario,
                mode: self.mode,
                concurrency: ctx.concurrency,
                trial: ctx.trial,
                index: done.index,
                warmup: false,
                in_window,
                start: self.start,
                scheduled: done.scheduled,
                from_schedule,
                input_tokens: done.input_tokens,
                session: done.session,
                cache: ctx.cache,
                shard: ctx.part.map(|p| p.index),
                asked: done.asked,
                agent: done.agent,
            },
        );
        (ctx.on_record)(&record);
        self.records.push(record);
    }

    /// Records the requests still in flight as they finish. Waits for all of them unless a stop
    /// arrives (or has arrived): then only for the grace period, and the rest are cut.
    /// Returns whether a stop was seen.
    pub async fn drain(
        &mut self,
        set: &mut JoinSet<Done>,
        in_window: bool,
        from_schedule: bool,
    ) -> bool {
        let mut stop = self.ctx.stop.clone();
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            if deadline.is_none() && *stop.borrow() {
                deadline = Some(tokio::time::Instant::now() + self.ctx.grace);
            }
            let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
            let next = tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s), if deadline.is_none() => continue,
                _ = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => break,
                next = set.join_next() => next,
            };
            match next {
                Some(Ok(done)) => self.record(done, in_window, from_schedule),
                Some(Err(e)) => tracing::error!("request task failed: {e}"),
                None => break,
            }
        }
        set.abort_all();
        deadline.is_some()
    }
}
