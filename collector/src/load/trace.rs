//! Trace replay (`[trace]`, `--trace`): a recorded trace's requests sent open-loop at the
//! times it records, `speed` times faster, each line's prompt of its own length (shared blocks
//! shared token for token). The level's load is the most requests it saw in flight.

use std::sync::Arc;
use std::time::Duration;

use infermeter_report::aggregate::{open_loop_concurrency, Applied};
use infermeter_report::LoadMode;

use super::open_loop::run_open_loop;
use super::{LevelContext, LevelFuture, Load, MergedLoad, MergedWindow, Merging, Part, Sharded};
use crate::suite::Suite;

/// A replay at one speed.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// Its place in the series, from 1.
    pub number: u32,
    pub speed: f64,
    /// From the first line's send to the last's.
    pub duration: Duration,
    /// Each line of the trace, by number: what a shard deals out (its session, or its number
    /// where it has none: a session's turns share their context) and when it is sent.
    pub lines: Arc<[(u64, Duration)]>,
}

impl Load for Replay {
    fn plan(suite: &Suite, scenario: usize) -> Vec<Replay> {
        let (Some(spec), Some(trace)) = (&suite.trace, &suite.loaded_trace) else {
            return Vec::new();
        };
        if suite.scenarios[scenario].trace.is_none() {
            return Vec::new();
        }
        (spec.speeds.iter().enumerate())
            .map(|(position, &speed)| {
                let offsets = trace.offsets(speed);
                let lines = (0u64..)
                    .zip(&trace.lines)
                    .zip(&offsets)
                    .map(|((index, line), &offset)| (line.session.map_or(index, |s| s.id), offset))
                    .collect();
                Replay {
                    number: position as u32 + 1,
                    speed,
                    duration: offsets.last().copied().unwrap_or_default(),
                    lines,
                }
            })
            .collect()
    }

    fn mode(&self) -> LoadMode {
        LoadMode::Trace
    }

    fn record_label(&self) -> u32 {
        self.number
    }

    fn applied(&self, max_in_flight: u32, previous: Option<u32>) -> Applied {
        Applied {
            concurrency: open_loop_concurrency(max_in_flight, previous),
            trace_speed: Some(self.speed),
            ..Applied::default()
        }
    }

    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a> {
        // A shard replays whole sessions, or every count-th line of a trace without sessions.
        let schedule = (0u64..)
            .zip(self.lines.iter())
            .filter(|(_, (key, _))| ctx.owns(*key))
            .map(|(index, &(_, offset))| (index, offset))
            .collect();
        Box::pin(run_open_loop(ctx, LoadMode::Trace, schedule, self.duration))
    }

    fn shard(&self, _: Part, _: Duration) -> Sharded {
        Sharded::dealt_out(self.clone(), self.duration)
    }

    fn merging() -> Merging {
        Merging {
            window: MergedWindow::Span,
            load: MergedLoad::InFlight,
            replays_trace: true,
        }
    }
}
