//! The open loop that rate mode and trace replay share: request `i` leaves at its scheduled
//! offset from the level start whatever came back before, handed to the dispatcher thread
//! ahead of time; latency counts from the scheduled start.

use std::sync::Arc;
use std::time::Duration;

use infermeter_report::aggregate::Window;
use infermeter_report::{Arrivals, LoadMode};
use rand::{Rng, SeedableRng};
use tokio::task::JoinSet;

use super::dispatch::{self, Dispatcher, InFlight};
use super::record::{spawn_on_signal, Recorder};
use super::{LevelContext, LevelRun};

/// Sends each `(number, offset)` of `schedule` (this shard's part, in order of offset) at the
/// level start plus its offset; the window runs at least `duration`.
pub async fn run_open_loop(
    ctx: &LevelContext<'_>,
    mode: LoadMode,
    schedule: Vec<(u64, Duration)>,
    duration: Duration,
) -> LevelRun {
    // The level starts a handover's lead from now, so the first request is handed over on
    // time too; records count from there.
    let origin = ctx.origin + dispatch::LOOKAHEAD;
    let mut rec = Recorder::new(ctx, origin, mode);
    let dispatcher = Dispatcher::start();
    let in_flight = Arc::new(InFlight::default());
    let mut set = JoinSet::new();
    let mut stop = ctx.stop.clone();
    let mut interrupted = false;
    for (index, offset) in schedule {
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
    let end_s = rec.last_end().max(duration.as_secs_f64());
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
