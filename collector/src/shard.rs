//! `infermeter run --shard I/N --start-at T`: one of N client processes (hosts, pods) that
//! together apply a run's load. Each sends its share of every level, on a schedule all of them
//! compute alike from the start time and the suite, so they enter and leave each level
//! together; `infermeter merge` (crate::merge) rebuilds the levels from all their records.
//!
//! Shares: a level of N requests in flight (peak) or sent at once (burst) gives shard i
//! `N / count` requests, plus one for each of the first `N % count` shards. A rate level's
//! arrivals, the whole run's schedule, are dealt out in turn (arrival k to shard k mod count), so
//! together the shards send exactly the single run's schedule. Users, session arrivals and
//! trace replays are refused for now: their sessions would belong with [`Part::owns`] given a
//! stable hash of their id (FNV-1a of the session id, say), so that a session's turns stay on
//! one shard, and the merge would key series by their cache use too.

mod clock;
mod schedule;

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime};

use infermeter_report::{LoadMode, ShardClock, ShardLevel, ShardPart, ShardTrial, Sharding};

use crate::driver::ApiKey;
use crate::run::PlannedLevel;
use crate::scheduler::{LevelRun, Load};
use crate::suite::Suite;
pub use schedule::Schedule;

/// Flips to true on Ctrl-C / SIGTERM.
type Stop = tokio::sync::watch::Receiver<bool>;

/// The `run` options of a sharded run.
#[derive(Debug, Clone, clap::Args)]
pub struct ShardArgs {
    /// Run shard I of N: its share of every level's load, on the schedule every shard computes
    /// from --start-at. Shards are numbered from 0, as Kubernetes' JOB_COMPLETION_INDEX: the
    /// three shards of a run are 0/3, 1/3 and 2/3.
    #[arg(long, value_name = "I/N", requires = "start_at")]
    pub shard: Option<Part>,
    /// RFC 3339 time at which every shard begins the schedule, e.g. 2026-05-01T12:00:00Z: the
    /// same for all shards, and late enough for each to be ready (set up and connected) by then.
    #[arg(long, value_name = "RFC3339", requires = "shard", value_parser = parse_start)]
    pub start_at: Option<SystemTime>,
    /// Sharded run: seconds each peak level keeps its requests in flight (shards cannot agree on
    /// a count of requests without talking, so a sharded peak level lasts a fixed time).
    /// Default: the suite's peak `min_seconds`, at least 10.
    #[arg(long, value_name = "SECONDS", requires = "shard", value_parser = positive_seconds)]
    pub level_seconds: Option<f64>,
    /// Sharded run: seconds each level is given, after its load, for its requests to finish
    /// (a burst level's whole time), and each scenario's warmup. A shard whose step runs over
    /// starts the next one late, and says so.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = positive_seconds)]
    pub drain_seconds: f64,
}

fn parse_start(text: &str) -> Result<SystemTime, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(SystemTime::from)
        .map_err(|e| {
            format!("\"{text}\" is not an RFC 3339 time such as 2026-05-01T12:00:00Z ({e})")
        })
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("\"{text}\" is not a positive number of seconds")),
    }
}

/// Shard `index` of `count`, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub index: u32,
    pub count: u32,
}

impl Part {
    /// This shard's share of `total` requests: as even as can be, the remainder on the first
    /// shards.
    pub fn share(self, total: u32) -> u32 {
        total / self.count + u32::from(self.index < total % self.count)
    }

    /// Whether item `key` of a level is this shard's: rate arrivals by their number; sessions
    /// and trace lines, when they exist, by a stable hash of their id.
    pub fn owns(self, key: u64) -> bool {
        key % u64::from(self.count) == u64::from(self.index)
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Part {
    type Err = String;

    fn from_str(text: &str) -> Result<Part, String> {
        let usage = "takes INDEX/COUNT with shards numbered from 0, e.g. 0/3, 1/3 and 2/3 for a run of three";
        let (index, count) = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)))
            .ok_or_else(|| format!("\"{text}\": --shard {usage}"))?;
        if count == 0 {
            return Err(format!(
                "\"{text}\": a run has at least one shard; --shard {usage}"
            ));
        }
        if index >= count {
            return Err(format!(
                "\"{text}\": shard {index} does not exist in a run of {count} (shards are numbered from 0 to {}, as Kubernetes' JOB_COMPLETION_INDEX); --shard {usage}",
                count - 1
            ));
        }
        Ok(Part { index, count })
    }
}

/// Why a shard cannot run its part.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--start-at: that time passed {late:.1} s ago on this host's clock; give every shard one start time late enough for all to be set up (e.g. `infermeter k8s-manifest --start-in`)")]
    StartPassed { late: f64 },
    #[error("--shard cannot run {} levels yet (a session's turns must stay on one shard); run the session or trace part of the suite unsharded (--modes), or shard only its peak, burst and rate levels", mode.label())]
    Unsupported { mode: LoadMode },
    #[error("--resume cannot continue a sharded run: its levels are tied to --start-at; start all shards again with a new --start-at")]
    Resume,
    #[error("shard {part} was ready {late:.1} s after --start-at: the other shards began without it; give a start time further ahead")]
    NotReady { part: Part, late: f64 },
}

/// How late a step may begin before it is reported: the timer's own lateness stays below this.
const LATE_TOLERANCE: Duration = Duration::from_millis(50);

/// A shard's part of a run: its schedule on this host's monotonic clock, and what it records
/// about itself into the report's `sharding`.
pub struct ShardRun {
    pub part: Part,
    schedule: Schedule,
    /// `--start-at` on this host's monotonic clock.
    start: Instant,
    level_seconds: f64,
    drain_seconds: f64,
    start_at: SystemTime,
    clock: ShardClock,
    /// Whether a step has begun yet (the first one is not allowed to be late).
    begun: std::sync::atomic::AtomicBool,
}

impl ShardRun {
    /// The shard's schedule, or None for a run that is not sharded. Refuses a start time that
    /// has passed.
    pub fn new(
        args: &ShardArgs,
        suite: &Suite,
        levels: &[PlannedLevel],
        trials: u32,
        resume: bool,
    ) -> Result<Option<ShardRun>, ShardError> {
        let (Some(part), Some(start_at)) = (args.shard, args.start_at) else {
            return Ok(None);
        };
        if resume {
            return Err(ShardError::Resume);
        }
        // A session's turns must stay on one shard, and a trace's lines that share blocks
        // should too: until they are dealt out by session, a sharded run has neither.
        if let Some(planned) = levels.iter().find(|l| {
            matches!(
                l.load,
                Load::Users(_) | Load::Sessions(_) | Load::Trace { .. }
            )
        }) {
            return Err(ShardError::Unsupported {
                mode: planned.load.mode(),
            });
        }
        let level_seconds = args
            .level_seconds
            .unwrap_or_else(|| suite.peak.as_ref().map_or(0.0, |p| p.min_seconds).max(10.0));
        let timing = schedule::Timing {
            level: Duration::from_secs_f64(level_seconds),
            drain: Duration::from_secs_f64(args.drain_seconds),
        };
        let schedule = Schedule::new(levels, trials, suite.warmup > 0, timing);
        // One reading of both clocks maps every step: the schedule runs on the monotonic clock,
        // which NTP never steps.
        let realtime_minus_monotonic_s = clock::realtime_minus_monotonic_s();
        let (now, now_mono) = (SystemTime::now(), Instant::now());
        let ahead = start_at
            .duration_since(now)
            .map_err(|e| ShardError::StartPassed {
                late: e.duration().as_secs_f64(),
            })?;
        tracing::info!(
            shard = %part,
            starts_in_s = ahead.as_secs_f64(),
            lasts_s = schedule.length().as_secs_f64(),
            "sharded run: waiting for --start-at"
        );
        Ok(Some(ShardRun {
            part,
            schedule,
            start: now_mono + ahead,
            level_seconds,
            drain_seconds: args.drain_seconds,
            start_at,
            clock: ShardClock {
                realtime_minus_monotonic_s,
                ..ShardClock::default()
            },
            begun: false.into(),
        }))
    }

    /// Compares this host's clock with the server's `Date` headers (a few requests).
    pub async fn check_clock(&mut self, client: &reqwest::Client, url: &str, key: Option<&ApiKey>) {
        let samples = clock::sample_dates(client, url, key).await;
        self.clock.samples = samples.len() as u32;
        match clock::server_offset(&samples) {
            Some(offset) => {
                self.clock.server_offset_s = Some(offset.mid_s);
                self.clock.server_offset_bound_s = Some(offset.bound_s);
            }
            None => tracing::warn!(
                "the server sent no usable Date header: this shard's clock cannot be compared with the others'"
            ),
        }
    }

    /// The report's `sharding` for this shard, before its first level.
    pub fn sharding(&self) -> Sharding {
        Sharding {
            count: self.part.count,
            start_at: chrono::DateTime::<chrono::Utc>::from(self.start_at)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            level_seconds: self.level_seconds,
            drain_seconds: self.drain_seconds,
            shards: vec![ShardPart {
                index: self.part.index,
                host: clock::host_name(),
                file: None,
                clock: self.clock.clone(),
                levels: Vec::new(),
            }],
        }
    }

    /// The clock mapping again, at the end of the run.
    pub fn finish(sharding: &mut Sharding) {
        for shard in &mut sharding.shards {
            shard.clock.realtime_minus_monotonic_end_s = Some(clock::realtime_minus_monotonic_s());
        }
    }

    /// Waits for the warmup step of `scenario` (or a stop).
    pub async fn wait_warmup(&self, scenario: usize, stop: Stop) -> Result<(), ShardError> {
        match self.schedule.warmup(scenario) {
            Some(at) => self.wait(at, stop).await.map(|_| ()),
            None => Ok(()),
        }
    }

    /// Waits for a trial's step (or a stop); returns the instant its records and window count
    /// from and how many seconds late it began (0 on time).
    pub async fn wait_trial(
        &self,
        planned: &PlannedLevel,
        trial: u32,
        stop: Stop,
    ) -> Result<(Instant, f64), ShardError> {
        let at = self
            .schedule
            .trial(planned, trial)
            .expect("the schedule holds every planned trial");
        self.wait(at, stop).await
    }

    async fn wait(&self, offset: Duration, mut stop: Stop) -> Result<(Instant, f64), ShardError> {
        let due = self.start + offset;
        let first = !self.begun.swap(true, std::sync::atomic::Ordering::Relaxed);
        let now = Instant::now();
        if now <= due {
            tokio::select! {
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(due)) => {}
                // The step then finds the stop set and measures nothing.
                _ = stop.wait_for(|s| *s) => {}
            }
            return Ok((due, 0.0));
        }
        let late = (now - due).as_secs_f64();
        if first && now - due > LATE_TOLERANCE {
            return Err(ShardError::NotReady {
                part: self.part,
                late,
            });
        }
        // Counting from the actual start keeps a rate level's arrivals from all coming due at
        // once; the merge moves the records back onto the shared clock by `late`.
        Ok((
            now,
            if now - due > LATE_TOLERANCE {
                late
            } else {
                0.0
            },
        ))
    }

    /// This shard's part of `load`.
    pub fn load(&self, load: Load) -> Load {
        match load {
            Load::Peak { concurrency, .. } => Load::Peak {
                concurrency: self.part.share(concurrency),
                // Time alone ends a sharded peak level: every shard drains at the same moment.
                requests_per_slot: 0,
                min_duration: Duration::from_secs_f64(self.level_seconds),
            },
            Load::Burst { concurrency } => Load::Burst {
                concurrency: self.part.share(concurrency),
            },
            // The scheduler deals the arrivals out (LevelContext::part). Session and trace
            // loads never reach here: `ShardRun::new` refuses them.
            open
            @ (Load::Rate { .. } | Load::Users(_) | Load::Sessions(_) | Load::Trace { .. }) => open,
        }
    }

    /// What the shard records of a measured level: its share, and each trial's lateness and
    /// window.
    pub fn level(
        &self,
        scenario: &str,
        planned: &PlannedLevel,
        runs: &[LevelRun],
        late_s: &[f64],
    ) -> ShardLevel {
        let share = match self.load(planned.load) {
            Load::Peak { concurrency, .. } | Load::Burst { concurrency } => Some(concurrency),
            Load::Rate { .. } | Load::Users(_) | Load::Sessions(_) | Load::Trace { .. } => None,
        };
        ShardLevel {
            scenario: scenario.to_string(),
            mode: planned.load.mode(),
            level: planned.record_label,
            request_rate: planned.request_rate,
            share,
            trials: runs
                .iter()
                .zip(late_s)
                .map(|(run, &late_s)| ShardTrial {
                    late_s,
                    window_start_s: run.window.start_s,
                    window_end_s: run.window.end_s,
                    max_in_flight: run.max_in_flight,
                })
                .collect(),
        }
    }
}

/// Warnings for the trials of a level a shard began late: the shards' loads then overlapped
/// only in part.
pub fn late_warnings(label: &str, level: &ShardLevel) -> Vec<String> {
    level
        .trials
        .iter()
        .enumerate()
        .filter(|(_, t)| t.late_s > 0.0)
        .map(|(trial, t)| {
            format!(
                "{label} (trial {trial}): this shard began {:.2} s after its scheduled start, as its previous step ran over its time; raise --drain-seconds so every step fits",
                t.late_s
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_even_with_the_remainder_first() {
        let parts = |count: u32| (0..count).map(move |index| Part { index, count });
        let shares =
            |total: u32, count: u32| -> Vec<u32> { parts(count).map(|p| p.share(total)).collect() };
        assert_eq!(shares(7, 3), [3, 2, 2]);
        assert_eq!(shares(2, 3), [1, 1, 0]);
        assert_eq!(shares(6, 3), [2, 2, 2]);
        assert_eq!(shares(5, 1), [5]);
        for total in 0..50 {
            for count in 1..9 {
                let s = shares(total, count);
                assert_eq!(s.iter().sum::<u32>(), total);
                assert!(s.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
            }
        }
        // Every arrival belongs to exactly one shard.
        for key in 0..100 {
            assert_eq!(parts(3).filter(|p| p.owns(key)).count(), 1);
        }
    }

    #[test]
    fn shard_option_is_checked() {
        assert_eq!("1/3".parse::<Part>(), Ok(Part { index: 1, count: 3 }));
        let err = "3/3".parse::<Part>().unwrap_err();
        assert!(err.contains("numbered from 0 to 2"), "{err}");
        assert!("0/0".parse::<Part>().unwrap_err().contains("at least one"));
        assert!("1-3".parse::<Part>().unwrap_err().contains("INDEX/COUNT"));
        assert!(parse_start("2026-05-01T12:00:00Z").is_ok());
        assert!(parse_start("tomorrow").unwrap_err().contains("RFC 3339"));
        assert!(positive_seconds("0").is_err());
    }
}
