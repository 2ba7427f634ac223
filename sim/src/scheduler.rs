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

/// How long an idle engine that gathers its arrivals ([`Profile::gathers_arrivals`]: a fit of a
/// llama.cpp report) waits, once a request comes, for the others sent with it (a burst, a
/// closed loop's replacements of requests that finished in one step), so that they start in
/// one step as the model's replay starts them. Well under any step it models.
const GATHER: Duration = Duration::from_millis(2);

pub(crate) enum Cmd {
    Add {
        id: SeqId,
        spec: SeqSpec,
        arrived: Instant,
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
    let handle = tokio::spawn(run(Engine::new(profile), rx, metrics, time_scale));
    (tx, handle)
}

fn apply(cmd: Cmd, engine: &mut Engine, subs: &mut HashMap<SeqId, Sub>, metrics: &Mutex<Metrics>) {
    match cmd {
        Cmd::Add {
            id,
            spec,
            arrived,
            length,
            tx,
        } => {
            let mut m = metrics.lock().expect("metrics");
            m.prompt_tokens += u64::from(spec.prompt_tokens);
            drop(m);
            engine.add(id, spec);
            subs.insert(
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
        Cmd::Cancel(id) => {
            engine.cancel(id);
            subs.remove(&id);
        }
    }
}

fn publish(engine: &Engine, metrics: &Mutex<Metrics>) {
    let s = engine.stats();
    let mut m = metrics.lock().expect("metrics");
    m.running = s.running;
    m.waiting = s.waiting;
    m.kv_usage = s.kv_usage;
}

async fn run(
    mut engine: Engine,
    mut rx: mpsc::UnboundedReceiver<Cmd>,
    metrics: Arc<Mutex<Metrics>>,
    time_scale: f64,
) {
    let mut subs: HashMap<SeqId, Sub> = HashMap::new();
    let mut clock: Option<Instant> = None;
    loop {
        while let Ok(cmd) = rx.try_recv() {
            apply(cmd, &mut engine, &mut subs, &metrics);
        }
        let Some(step) = engine.step() else {
            // Idle: wait for work, and restart the clock when it comes.
            publish(&engine, &metrics);
            clock = None;
            match rx.recv().await {
                Some(cmd) => apply(cmd, &mut engine, &mut subs, &metrics),
                None => return,
            }
            if engine.profile().gathers_arrivals {
                let until = Instant::now() + GATHER;
                loop {
                    match tokio::time::timeout_at(until, rx.recv()).await {
                        Ok(Some(cmd)) => apply(cmd, &mut engine, &mut subs, &metrics),
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
            }
            continue;
        };
        let now = Instant::now();
        let start = match clock {
            Some(t) if now.saturating_duration_since(t) < MAX_LAG => t,
            _ => now,
        };
        let end = start + Duration::from_secs_f64(step.duration * time_scale);
        let mut gone = admit(&step.events, start, &mut subs, &metrics);
        publish(&engine, &metrics);
        tokio::time::sleep_until(end).await;
        clock = Some(end);
        deliver(step.events, end, &mut subs, &metrics, &mut gone);
        for id in gone {
            engine.cancel(id);
            subs.remove(&id);
        }
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
