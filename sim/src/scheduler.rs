//! The real-time driver: one task owns the [`Engine`], plans a step, sleeps until the step's end on
//! the monotonic clock (`tokio::time::sleep_until`), then hands every sequence its token. One timer
//! per step for the whole batch, however many streams are open.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::engine::{Engine, Profile, SeqId, SeqSpec, StepEvent};
use crate::metrics::Metrics;

/// When the loop falls this far behind model time (a slow machine), it restarts the clock from
/// now rather than bursting to catch up.
const MAX_LAG: Duration = Duration::from_millis(50);

/// How an idle engine that gathers its arrivals ([`Profile::gathers_arrivals`]: a fit of a
/// llama.cpp report) gathers the requests sent together (a burst, a closed loop's replacements
/// of requests that finished in one step), so that they start in one step as the model's replay
/// starts them: each request ready (its API-server work done) within `GATHER_QUIET` of the one
/// before it joins, up to `GATHER_MAX` after the first. Requests count by the instant they are
/// ready, not the one the scheduler hears of them: a fixed window on the latter missed a client's
/// replacements whose API-server waits ended late on a loaded machine, so a closed loop split in
/// two and never joined again (the what-if's measured check read TTFT 18% low and ITL 31% high
/// in CI). The first step then runs from the last one's instant: gathering costs no model time.
/// Why 15 ms: with three busy loops beside the check on two cores, four replacements sent
/// together became ready up to 10 ms apart (half within 2 ms). The price: an open loop's
/// arrivals that close are started together, where the replay starts them a step apart.
const GATHER_QUIET: Duration = Duration::from_millis(15);
const GATHER_MAX: Duration = Duration::from_millis(45);

pub(crate) enum Cmd {
    Add {
        id: SeqId,
        spec: SeqSpec,
        arrived: Instant,
        /// When the engine sees it: `arrived` plus the API server's work. Sent at once, so the
        /// scheduler knows of a request before it is ready, whatever the machine's load.
        ready: Instant,
        /// Whether the request ends by reaching max_tokens (for `finished_reason` metrics).
        length: bool,
        tx: mpsc::UnboundedSender<Delivery>,
    },
    Cancel(SeqId),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Delivery {
    Admitted { cached_tokens: u32 },
    Token { index: u32, finished: bool },
}

struct Sub {
    tx: mpsc::UnboundedSender<Delivery>,
    arrived: Instant,
    admitted: Option<Instant>,
    first: Option<Instant>,
    last: Option<Instant>,
    length: bool,
}

/// Starts the scheduler task; every step lasts its modelled time × `time_scale`.
pub(crate) fn spawn(
    profile: Profile,
    metrics: Arc<Mutex<Metrics>>,
    time_scale: f64,
) -> (mpsc::UnboundedSender<Cmd>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let scheduler = Scheduler {
        engine: Engine::new(profile),
        subs: HashMap::new(),
        arriving: Vec::new(),
        metrics,
    };
    let handle = tokio::spawn(scheduler.run(rx, time_scale));
    (tx, handle)
}

/// The engine, the requests it serves, and those still in the API server.
struct Scheduler {
    engine: Engine,
    subs: HashMap<SeqId, Sub>,
    /// Requests not ready yet, with the instant each is, in the order they become ready.
    arriving: Vec<(Instant, SeqId, SeqSpec)>,
    metrics: Arc<Mutex<Metrics>>,
}

impl Scheduler {
    fn apply(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Add {
                id,
                spec,
                arrived,
                ready,
                length,
                tx,
            } => {
                let mut m = self.metrics.lock().expect("metrics");
                m.prompt_tokens += u64::from(spec.prompt_tokens);
                drop(m);
                let at = self
                    .arriving
                    .partition_point(|&(r, i, _)| (r, i) <= (ready, id));
                self.arriving.insert(at, (ready, id, spec));
                self.subs.insert(
                    id,
                    Sub {
                        tx,
                        arrived,
                        admitted: None,
                        first: None,
                        last: None,
                        length,
                    },
                );
            }
            Cmd::Cancel(id) => self.forget(id),
        }
    }

    /// A request cancelled, or whose receiver is gone: wherever it is, it goes.
    fn forget(&mut self, id: SeqId) {
        self.arriving.retain(|(_, a, _)| *a != id);
        self.engine.cancel(id);
        self.subs.remove(&id);
    }

    /// Hands the engine every request ready by `by`, in the order they became ready; the
    /// instant the last of them was.
    fn hand_over(&mut self, by: Instant) -> Option<Instant> {
        let n = self.arriving.partition_point(|&(ready, _, _)| ready <= by);
        let last = n.checked_sub(1).map(|i| self.arriving[i].0);
        for (_, id, spec) in self.arriving.drain(..n) {
            self.engine.add(id, spec);
        }
        last
    }

    fn earliest(&self) -> Option<Instant> {
        self.arriving.first().map(|&(ready, _, _)| ready)
    }

    fn publish(&self) {
        let s = self.engine.stats();
        let mut m = self.metrics.lock().expect("metrics");
        m.running = s.running;
        m.waiting = s.waiting;
        m.kv_usage = s.kv_usage;
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Cmd>, time_scale: f64) {
        let mut clock: Option<Instant> = None;
        loop {
            while let Ok(cmd) = rx.try_recv() {
                self.apply(cmd);
            }
            self.hand_over(Instant::now());
            let Some(step) = self.engine.step() else {
                // Idle: wait for work, and restart the clock when it comes.
                self.publish();
                let Some(first) = self.wait_for_work(&mut rx).await else {
                    return;
                };
                clock = Some(first);
                continue;
            };
            let now = Instant::now();
            let start = match clock {
                Some(t) if now.saturating_duration_since(t) < MAX_LAG => t,
                _ => now,
            };
            let end = start + Duration::from_secs_f64(step.duration * time_scale);
            let mut gone = admit(&step.events, start, &mut self.subs, &self.metrics);
            self.publish();
            tokio::time::sleep_until(end).await;
            clock = Some(end);
            deliver(step.events, end, &mut self.subs, &self.metrics, &mut gone);
            for id in gone {
                self.forget(id);
            }
        }
    }

    /// An idle engine's wait for a ready request, gathering those sent with it when the engine
    /// does. The instant the last request it handed over was ready, from which the first step
    /// runs; `None` once the server has closed the channel.
    async fn wait_for_work(&mut self, rx: &mut mpsc::UnboundedReceiver<Cmd>) -> Option<Instant> {
        let first = loop {
            let next = self.earliest();
            tokio::select! {
                cmd = rx.recv() => self.apply(cmd?),
                () = sleep_until_some(next) => break next.expect("slept until it"),
            }
        };
        if !self.engine.profile().gathers_arrivals {
            let now = Instant::now();
            return Some(self.hand_over(now).unwrap_or(now));
        }
        let mut until = first + GATHER_QUIET;
        loop {
            until = self.gathering_until(first, until);
            match tokio::time::timeout_at(until, rx.recv()).await {
                Ok(Some(cmd)) => self.apply(cmd),
                Ok(None) => return None,
                Err(_) => return Some(self.hand_over(until).unwrap_or(until)),
            }
        }
    }

    /// The end of a gathering that began with a request ready at `first` and now ends at
    /// `until`: each request ready by then puts it `GATHER_QUIET` past its own instant.
    fn gathering_until(&self, first: Instant, mut until: Instant) -> Instant {
        let cap = first + GATHER_MAX;
        for &(ready, _, _) in &self.arriving {
            if ready > until {
                break;
            }
            until = until.max((ready + GATHER_QUIET).min(cap));
        }
        until
    }
}

/// Sleeps until `at`, or forever without one.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The step's admissions and preemptions, at its start: each admitted request learns it (its
/// cached prompt tokens) and its queue time is counted. The requests whose receiver is gone.
fn admit(
    events: &[StepEvent],
    start: Instant,
    subs: &mut HashMap<SeqId, Sub>,
    metrics: &Mutex<Metrics>,
) -> Vec<SeqId> {
    let mut gone = Vec::new();
    let mut m = metrics.lock().expect("metrics");
    for ev in events {
        match *ev {
            StepEvent::Admitted { id, cached_tokens } => {
                if let Some(sub) = subs.get_mut(&id) {
                    sub.admitted = Some(start);
                    m.queue_time.observe((start - sub.arrived).as_secs_f64());
                    m.prefix_cache_hits += u64::from(cached_tokens);
                    if sub.tx.send(Delivery::Admitted { cached_tokens }).is_err() {
                        gone.push(id);
                    }
                }
            }
            StepEvent::Preempted { .. } => m.preemptions += 1,
            StepEvent::Token { .. } => {}
        }
    }
    gone
}

/// The step's tokens, at its end: each to its request, with the latency metrics; a finished
/// request leaves. Requests whose receiver is gone are added to `gone`.
fn deliver(
    events: Vec<StepEvent>,
    end: Instant,
    subs: &mut HashMap<SeqId, Sub>,
    metrics: &Mutex<Metrics>,
    gone: &mut Vec<SeqId>,
) {
    let mut m = metrics.lock().expect("metrics");
    for ev in events {
        let StepEvent::Token {
            id,
            index,
            finished,
        } = ev
        else {
            continue;
        };
        let Some(sub) = subs.get_mut(&id) else {
            continue;
        };
        m.generation_tokens += 1;
        match sub.last {
            None => {
                sub.first = Some(end);
                m.ttft.observe((end - sub.arrived).as_secs_f64());
                let admitted = sub.admitted.unwrap_or(sub.arrived);
                m.prefill_time.observe((end - admitted).as_secs_f64());
            }
            Some(last) => m.itl.observe((end - last).as_secs_f64()),
        }
        sub.last = Some(end);
        if sub.tx.send(Delivery::Token { index, finished }).is_err() {
            gone.push(id);
        }
        if finished {
            m.e2e.observe((end - sub.arrived).as_secs_f64());
            m.decode_time
                .observe((end - sub.first.unwrap_or(end)).as_secs_f64());
            if sub.length {
                m.success_length += 1;
            } else {
                m.success_stop += 1;
            }
            subs.remove(&id);
        }
    }
}
