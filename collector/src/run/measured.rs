//! One measured level: its trials as the scheduler ran them, with what the side channels saw
//! meanwhile, reduced to the report's `Level` and the warnings it deserves.

use infermeter_report::aggregate::{self, Expected, Trial};
use infermeter_report::{
    ClientHealth, ErrorKind, Level, Outcome, PowerStats, RequestRecord, ServerMetrics, TokenSource,
};

use crate::http::arrival::{ClockCounts, MIXED_CLOCKS};
use crate::load::{LevelRun, PlannedLevel};

pub struct Measured {
    /// One per trial, in order; the last may have been cut short by a stop.
    pub runs: Vec<LevelRun>,
    /// The server's `/metrics` over the level, when it has them.
    pub server: Option<ServerMetrics>,
    pub power: Option<PowerStats>,
}

impl Measured {
    /// Whether a stop cut the level short.
    pub fn interrupted(&self) -> bool {
        self.runs.iter().any(|r| r.interrupted)
    }

    /// Whether the endpoint went away during the level: its last requests (in the order they
    /// were sent) all failed to connect, and they are most of its requests. A refused
    /// connection or two near a level's end, among requests the server served, is a hiccup,
    /// not a server gone.
    pub fn endpoint_gone(&self) -> bool {
        let mut sent: Vec<&RequestRecord> = self
            .runs
            .iter()
            .flat_map(|r| &r.records)
            .filter(|r| !r.warmup)
            .collect();
        sent.sort_by(|a, b| {
            (a.trial, a.sent_s)
                .partial_cmp(&(b.trial, b.sent_s))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let refused = |r: &&&RequestRecord| {
            matches!(
                &r.outcome,
                Outcome::Errored {
                    kind: ErrorKind::Connect,
                    ..
                }
            )
        };
        let trailing = sent.iter().rev().take_while(refused).count();
        trailing > 0 && trailing * 2 > sent.len()
    }

    /// Where the output token counts came from, as the first trial that had a success says.
    pub fn token_source(&self) -> Option<TokenSource> {
        self.runs.iter().find_map(|r| r.token_source)
    }

    fn trials(&self) -> Vec<Trial<'_>> {
        self.runs
            .iter()
            .map(|r| Trial {
                records: &r.records,
                window: r.window,
            })
            .collect()
    }

    /// Which clock stamped the events, over every trial.
    fn clocks(&self) -> ClockCounts {
        self.runs
            .iter()
            .fold(ClockCounts::default(), |all, r| all.merge(r.clocks))
    }

    /// The level's figures: what its records say ([`aggregate::assemble`], its timeline in
    /// slices of `slice_s`), the server's own speeds where the engine reports them, power and
    /// the client's health. `previous` is the report concurrency of the series' last level.
    pub fn level(&self, planned: &PlannedLevel, previous: Option<u32>, slice_s: f64) -> Level {
        let trials = self.trials();
        let max_in_flight = self.runs.iter().map(|r| r.max_in_flight).max();
        let applied = planned.load.applied(max_in_flight.unwrap_or(1), previous);
        let mut level = aggregate::assemble(&applied, &trials, slice_s);
        level.server = aggregate::server(self.server.clone(), &trials);
        level.power = self.power.clone();
        level.client = self.runs.last().map(|r| ClientHealth {
            // Over every trial, not just the last.
            event_clock: self.clocks().summary().map(str::to_string),
            retried: self.runs.iter().map(|r| r.client.retried).sum(),
            ..r.client.clone()
        });
        level
    }

    /// Warnings about what the level measured versus what was asked.
    pub fn warnings(&self, label: &str, expected: &Expected<'_>, level: &Level) -> Vec<String> {
        let records: Vec<&RequestRecord> = self.runs.iter().flat_map(|r| &r.records).collect();
        let mut warnings = aggregate::warnings(label, expected, &records, level);
        let clocks = self.clocks();
        if clocks.summary() == Some(MIXED_CLOCKS) {
            warnings.push(format!(
                "{label}: {} of {} request(s) were timed when parsed, not by the kernel's receive timestamp",
                clocks.parse,
                clocks.parse + clocks.kernel_receive
            ));
        }
        warnings
    }
}
