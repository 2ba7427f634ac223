//! Rate mode (`[rate]`): open-loop arrivals at a fixed rate (constant or Poisson) for a set
//! time, each sent at its scheduled instant whatever came back before; latency counts from
//! the schedule, so queueing in the client is not hidden. The level's load is the most
//! requests it saw in flight.

use std::time::Duration;

use infermeter_report::aggregate::{open_loop_concurrency, Applied};
use infermeter_report::{Arrivals, LoadMode};

use super::open_loop::{arrival_offsets, run_open_loop};
use super::{LevelContext, LevelFuture, Load, MergedLoad, MergedWindow, Merging, Part, Sharded};
use crate::suite::Suite;

/// A rate level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Its place in the series, from 1.
    pub number: u32,
    pub rate: f64,
    pub arrivals: Arrivals,
    pub duration: Duration,
    pub seed: u64,
}

impl Load for Rate {
    fn plan(suite: &Suite, scenario: usize) -> Vec<Rate> {
        let Some(r) = suite.rate.as_ref().filter(|_| suite.is_single(scenario)) else {
            return Vec::new();
        };
        (r.rates.iter().enumerate())
            .map(|(position, &rate)| Rate {
                number: position as u32 + 1,
                rate,
                arrivals: r.arrivals,
                duration: Duration::from_secs_f64(r.duration_s),
                seed: r.seed.wrapping_add(position as u64),
            })
            .collect()
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Rate
    }

    fn record_label(&self) -> u32 {
        self.number
    }

    fn arrivals(&self) -> Option<Arrivals> {
        Some(self.arrivals)
    }

    fn applied(&self, max_in_flight: u32, previous: Option<u32>) -> Applied {
        Applied {
            concurrency: open_loop_concurrency(max_in_flight, previous),
            request_rate: Some(self.rate),
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        let offsets = arrival_offsets(self.rate, self.arrivals, self.duration, self.seed);
        // A sharded run's shard sends only its arrivals (by their number).
        let schedule = (0u64..)
            .zip(offsets)
            .filter(|(index, _)| ctx.owns(*index))
            .collect();
        Box::pin(run_open_loop(ctx, LoadMode::Rate, schedule, self.duration))
    }

    fn shard(&self, _: Part, _: Duration) -> Sharded {
        Sharded::dealt_out(*self, self.duration)
    }

    fn merging() -> Merging {
        Merging {
            window: MergedWindow::Span,
            load: MergedLoad::InFlight,
            replays_trace: false,
        }
    }
}
