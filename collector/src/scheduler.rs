//! Applies load for one level: peak (closed loop, N in flight), burst (N at once), rate
//! (open-loop arrivals on an absolute schedule) or a trace's schedule; users and session
//! arrivals run in [`crate::users`]. Turns each exchange into a record.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use infermeter_report::aggregate::Window;
use infermeter_report::{
    Arrivals, CacheUse, ChunkArrival, ClientHealth, Distribution, LoadMode, Outcome, RequestRecord,
    SessionTurn, TokenSource,
};
use rand::{Rng, SeedableRng};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;

use crate::arrival::ClockCounts;
use crate::dispatch::{self, Dispatcher, InFlight};
use crate::driver::{Driver, Exchange};
use crate::session::SessionPlan;
use crate::shard::Part;
use crate::trace::TracePlan;
use crate::users::{SessionRate, UsersLoad};

/// A request ready to send.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub body: Vec<u8>,
    /// Prompt length counted on the client, used when the server reports no usage.
    pub input_tokens: Option<u32>,
    /// Its session and turn, for a conversation's turn (or a trace line with sessions).
    pub session: Option<SessionTurn>,
}

impl Prepared {
    /// A request of no session.
    pub fn single(body: Vec<u8>, input_tokens: Option<u32>) -> Prepared {
        Prepared {
            body,
            input_tokens,
            session: None,
        }
    }
}

/// How one level applies load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    Peak {
        concurrency: u32,
        requests_per_slot: u32,
        min_duration: Duration,
    },
    Burst {
        concurrency: u32,
    },
    Rate {
        rate: f64,
        arrivals: Arrivals,
        duration: Duration,
        seed: u64,
    },
    /// Simultaneous users, each running its sessions one after another.
    Users(UsersLoad),
    /// New sessions arriving open-loop.
    Sessions(SessionRate),
    /// The trace's requests at their scheduled times, `speed` times faster than recorded.
    Trace {
        speed: f64,
    },
}

impl Load {
    pub fn mode(&self) -> LoadMode {
        match self {
            Load::Peak { .. } => LoadMode::Peak,
            Load::Burst { .. } => LoadMode::Burst,
            Load::Rate { .. } => LoadMode::Rate,
            Load::Users { .. } => LoadMode::Users,
            Load::Sessions { .. } => LoadMode::Sessions,
            Load::Trace { .. } => LoadMode::Trace,
        }
    }

    /// Whether the level's conversations may use the prefix cache (session loads).
    pub fn cache(&self) -> Option<CacheUse> {
        match self {
            Load::Users(u) => Some(u.cache),
            Load::Sessions(s) => Some(s.cache),
            _ => None,
        }
    }
}

/// Where records of a level go and what they are labelled with.
pub struct LevelContext<'a> {
    pub driver: &'a Driver,
    pub scenario: &'a str,
    /// Level label written into records (for rate mode: the level's index + 1 until known).
    pub concurrency: u32,
    pub trial: u32,
    pub prepare: &'a (dyn Fn(u64) -> Prepared + Sync),
    /// The conversations of the suite's session scenarios and this level's scenario index
    /// (users and sessions loads).
    pub sessions: Option<(&'a SessionPlan, usize)>,
    /// The replayed trace (trace loads).
    pub trace: Option<&'a TracePlan>,
    pub on_record: &'a (dyn Fn(&RequestRecord) + Sync),
    /// Flips to true on Ctrl-C / SIGTERM: stop sending.
    pub stop: watch::Receiver<bool>,
    /// How long in-flight requests may finish after a stop.
    pub grace: Duration,
    /// When the level starts: records and window count from it (a sharded run's step start).
    pub origin: Instant,
    /// In a sharded run, this shard: it sends only its arrivals of a rate level, and stamps
    /// its records.
    pub part: Option<Part>,
}

/// The outcome of one level trial.
#[derive(Debug)]
pub struct LevelRun {
    pub records: Vec<RequestRecord>,
    pub window: Window,
    pub client: ClientHealth,
    /// Most requests in flight at once.
    pub max_in_flight: u32,
    pub interrupted: bool,
    /// Where the output token counts of successful requests came from.
    pub token_source: Option<TokenSource>,
    /// Which clock stamped the events of the requests that got a stream.
    pub clocks: ClockCounts,
}

/// Scheduling lag (p99) above this may have distorted the level.
const DISTORTION_THRESHOLD_S: f64 = 0.005;

/// A finished request with what its record needs besides the exchange.
pub struct Done {
    pub index: u64,
    pub scheduled: Instant,
    pub input_tokens: Option<u32>,
    pub session: Option<SessionTurn>,
    pub exchange: Exchange,
}

/// Runs the level to completion (or until stopped).
pub async fn run_level(ctx: LevelContext<'_>, load: Load) -> LevelRun {
    let probe = LoopProbe::start();
    let start = ctx.origin;
    let mut run = match load {
        Load::Peak {
            concurrency,
            requests_per_slot,
            min_duration,
        } => {
            run_peak(
                &ctx,
                start,
                concurrency,
                u64::from(requests_per_slot) * u64::from(concurrency),
                min_duration,
            )
            .await
        }
        Load::Burst { concurrency } => run_burst(&ctx, start, concurrency).await,
        Load::Rate {
            rate,
            arrivals,
            duration,
            seed,
        } => {
            let schedule = arrival_offsets(rate, arrivals, duration, seed);
            run_open_loop(&ctx, start, LoadMode::Rate, schedule, duration).await
        }
        Load::Trace { speed } => {
            let trace = ctx.trace.expect("a trace level has its trace");
            let schedule = trace.trace().offsets(speed);
            let duration = schedule.last().copied().unwrap_or_default();
            run_open_loop(&ctx, start, LoadMode::Trace, schedule, duration).await
        }
        Load::Users(load) => {
            let (plan, scenario) = ctx.sessions.expect("a users level has its sessions");
            crate::users::run_users(&ctx, plan, scenario, start, load).await
        }
        Load::Sessions(load) => {
            let (plan, scenario) = ctx.sessions.expect("a sessions level has its sessions");
            crate::users::run_session_arrivals(&ctx, plan, scenario, start, load).await
        }
    };
    let loop_delays = probe.finish().await;
    let lags: Vec<f64> = run
        .records
        .iter()
        .map(|r| (r.sent_s - r.scheduled_s).max(0.0))
        .collect();
    let p99 = |v: &[f64]| {
        Distribution::from_samples(v)
            .and_then(|d| d.p99)
            .unwrap_or(0.0)
    };
    let scheduling_lag_p99_s = p99(&lags);
    let event_loop_delay_p99_s = p99(&loop_delays);
    run.client = ClientHealth {
        scheduling_lag_p99_s,
        event_loop_delay_p99_s,
        distorted: scheduling_lag_p99_s > DISTORTION_THRESHOLD_S,
        event_clock: run.clocks.summary().map(str::to_string),
        retried: run.records.iter().filter(|r| r.retried.is_some()).count() as u64,
    };
    run
}

/// Spawns a request that is sent now.
fn spawn(
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
fn spawn_on_signal(
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
    /// The cache use of a session level, written into each record.
    pub cache: Option<CacheUse>,
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
            cache: None,
        }
    }

    /// Every record so far.
    pub fn records(&self) -> &[RequestRecord] {
        &self.records
    }

    /// The trial's run: its records, window and load (`run_level` adds the client's health).
    pub fn finish(self, window: Window, max_in_flight: u32, interrupted: bool) -> LevelRun {
        LevelRun {
            records: self.records,
            window,
            client: ClientHealth::default(),
            max_in_flight,
            interrupted,
            token_source: self.token_source,
            clocks: self.clocks,
        }
    }

    pub fn record(&mut self, done: Done, in_window: bool, latency_from_schedule: bool) {
        if done.exchange.outcome == Outcome::Ok {
            self.token_source = Some(done.exchange.token_source);
        }
        // A request refused before its stream timed nothing with either clock.
        if !matches!(done.exchange.outcome, Outcome::Errored { .. }) {
            self.clocks.add(done.exchange.clock);
        }
        let mut record = to_record(
            self.ctx,
            self.mode,
            self.start,
            done,
            in_window,
            latency_from_schedule,
        );
        record.cache = self.cache;
        (self.ctx.on_record)(&record);
        self.records.push(record);
    }

    /// Records the requests still in flight as they finish. Waits for all of them unless a stop
    /// arrives (or has arrived): then only for the grace period, and the rest are cut.
    /// Returns whether a stop was seen.
    async fn drain(
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

async fn run_peak(
    ctx: &LevelContext<'_>,
    start: Instant,
    concurrency: u32,
    target_in_window: u64,
    min_duration: Duration,
) -> LevelRun {
    let mut rec = Recorder::new(ctx, start, LoadMode::Peak);
    let mut stop = ctx.stop.clone();
    let mut set = JoinSet::new();
    let n = u64::from(concurrency);
    for index in 0..n {
        spawn(&mut set, ctx, index, Instant::now(), (ctx.prepare)(index));
    }
    let mut next_index = n;
    let mut window_start: Option<Instant> = None;
    let mut in_window_done = 0u64;
    let mut interrupted = false;
    let min_end = tokio::time::Instant::from_std(start + min_duration);
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
        if in_window_done >= target_in_window && start.elapsed() >= min_duration {
            break Instant::now();
        }
        let scheduled = Instant::now();
        window_start.get_or_insert(scheduled);
        spawn(
            &mut set,
            ctx,
            next_index,
            scheduled,
            (ctx.prepare)(next_index),
        );
        next_index += 1;
    };
    // Requests still running straddle the drain: record them, outside the window.
    interrupted |= rec.drain(&mut set, false, false).await;
    let window = Window {
        start_s: window_start.map_or(0.0, |w| secs(start, w)),
        end_s: secs(start, drain_start),
    };
    rec.finish(window, concurrency, interrupted)
}

async fn run_burst(ctx: &LevelContext<'_>, start: Instant, concurrency: u32) -> LevelRun {
    let mut rec = Recorder::new(ctx, start, LoadMode::Burst);
    // Build every body first so the burst leaves together.
    let prepared: Vec<Prepared> = (0..u64::from(concurrency)).map(ctx.prepare).collect();
    let mut set = JoinSet::new();
    let scheduled = Instant::now();
    for (index, p) in prepared.into_iter().enumerate() {
        spawn(&mut set, ctx, index as u64, scheduled, p);
    }
    let interrupted = rec.drain(&mut set, true, false).await;
    let end_s = last_end(&rec.records);
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        concurrency,
        interrupted,
    )
}

/// Open loop: request `i` leaves at `start + schedule[i]` whatever came back before (rate
/// mode's arrivals, a trace's timestamps); the window runs at least `duration`.
async fn run_open_loop(
    ctx: &LevelContext<'_>,
    start: Instant,
    mode: LoadMode,
    schedule: Vec<Duration>,
    duration: Duration,
) -> LevelRun {
    // The level starts a handover's lead from now, so the first request is handed over on
    // time too; records count from there.
    let origin = start + dispatch::LOOKAHEAD;
    let mut rec = Recorder::new(ctx, origin, mode);
    let dispatcher = Dispatcher::start();
    let in_flight = Arc::new(InFlight::default());
    let mut set = JoinSet::new();
    let mut stop = ctx.stop.clone();
    let mut interrupted = false;
    // A sharded run's shard sends only its arrivals (by their number).
    let owned = schedule
        .into_iter()
        .enumerate()
        .map(|(index, offset)| (index as u64, offset))
        .filter(|(index, _)| ctx.part.is_none_or(|part| part.owns(*index)));
    for (index, offset) in owned {
        // Absolute schedule: each arrival is placed from the level start, so lateness never
        // accumulates into drift. Finished requests are recorded until it is time to hand this
        // one to the dispatcher.
        let scheduled = origin + offset;
        let handover = scheduled
            .checked_sub(dispatch::LOOKAHEAD)
            .unwrap_or(scheduled);
        loop {
            tokio::select! {
                biased;
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(handover)) => break,
                _ = stop.wait_for(|s| *s) => { interrupted = true; break; }
                Some(done) = set.join_next(), if !set.is_empty() => {
                    match done {
                        Ok(d) => rec.record(d, true, true),
                        Err(e) => tracing::error!("request task failed: {e}"),
                    }
                }
            }
        }
        if interrupted {
            break;
        }
        let prepared = (ctx.prepare)(index);
        let go = dispatcher.at(scheduled);
        let counted = Some(in_flight.clone());
        spawn_on_signal(&mut set, ctx, index, scheduled, prepared, go, counted);
    }
    drop(dispatcher);
    interrupted |= rec.drain(&mut set, true, true).await;
    let end_s = last_end(&rec.records).max(duration.as_secs_f64());
    rec.finish(
        Window {
            start_s: 0.0,
            end_s,
        },
        in_flight.most(),
        interrupted,
    )
}

/// Arrival offsets from the level start for `duration` at `rate` per second.
pub fn arrival_offsets(
    rate: f64,
    arrivals: Arrivals,
    duration: Duration,
    seed: u64,
) -> Vec<Duration> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut t = 0.0;
    let mut offsets = Vec::new();
    let end = duration.as_secs_f64();
    while t < end {
        offsets.push(Duration::from_secs_f64(t));
        t += match arrivals {
            Arrivals::Constant => 1.0 / rate,
            // Exponential inter-arrival times make a Poisson process.
            Arrivals::Poisson => -(1.0 - rng.random::<f64>()).ln() / rate,
        };
    }
    offsets
}

fn secs(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_secs_f64()
}

/// When the last of `records` ended, seconds after the level start.
pub fn last_end(records: &[RequestRecord]) -> f64 {
    records
        .iter()
        .filter_map(|r| r.e2e_s.map(|e| r.sent_s.max(r.scheduled_s) + e))
        .fold(0.0, f64::max)
}

fn to_record(
    ctx: &LevelContext<'_>,
    mode: LoadMode,
    start: Instant,
    done: Done,
    in_window: bool,
    latency_from_schedule: bool,
) -> RequestRecord {
    let ex = done.exchange;
    // Rate mode measures from the scheduled start so queueing in the client is not hidden.
    let origin = if latency_from_schedule {
        done.scheduled.min(ex.sent)
    } else {
        ex.sent
    };
    let started = matches!(ex.outcome, Outcome::Ok | Outcome::Incomplete { .. });
    RequestRecord {
        scenario: ctx.scenario.to_string(),
        mode,
        concurrency: ctx.concurrency,
        trial: ctx.trial,
        index: done.index,
        warmup: false,
        in_window,
        scheduled_s: secs(start, done.scheduled),
        sent_s: secs(start, ex.sent),
        ttft_s: ex.first_token.map(|t| secs(origin, t)),
        e2e_s: Some(secs(origin, ex.end)),
        input_tokens: ex.prompt_tokens.or(done.input_tokens),
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
        session: done.session,
        cache: None,
        first_answer_s: ex.first_answer.map(|t| secs(origin, t)),
        reasoning_tokens: ex.reasoning_tokens,
        response_id: ex.response_id,
        shard: ctx.part.map(|p| p.index),
    }
}

/// Measures how late a 1 ms ticker wakes: the client's own event-loop delay.
struct LoopProbe {
    task: tokio::task::JoinHandle<Vec<f64>>,
    stop: Arc<AtomicBool>,
}

impl LoopProbe {
    fn start() -> LoopProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut delays = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let due = tokio::time::Instant::now() + Duration::from_millis(1);
                tokio::time::sleep_until(due).await;
                // Tokio's timer wheel has 1 ms resolution: lateness below that is the wheel.
                let late = tokio::time::Instant::now().saturating_duration_since(due);
                delays.push(late.as_secs_f64());
            }
            delays
        });
        LoopProbe { task, stop }
    }

    async fn finish(self) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_arrivals_are_evenly_spaced() {
        let offsets = arrival_offsets(4.0, Arrivals::Constant, Duration::from_secs(1), 0);
        let ms: Vec<u128> = offsets.iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, [0, 250, 500, 750]);
    }

    #[test]
    fn poisson_arrivals_have_the_asked_rate() {
        let offsets = arrival_offsets(50.0, Arrivals::Poisson, Duration::from_secs(100), 7);
        let n = offsets.len() as f64;
        assert!((n / 100.0 - 50.0).abs() < 3.0, "{n}");
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(
            offsets,
            arrival_offsets(50.0, Arrivals::Poisson, Duration::from_secs(100), 7)
        );
    }
}
