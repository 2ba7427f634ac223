//! `infermeter run --shard I/N --start-at T`: one of N client processes (hosts, pods) that
//! together apply a run's load. Each sends its part of every level (each load mode says how it
//! is shared: `crate::load::Load::shard`), on a schedule all of them compute alike from the
//! start time and the plan, so they enter and leave each level together; `infermeter merge`
//! rebuilds the levels from all their records.
//!
//! A search cannot be sharded: each shard would choose the next level from its own share of
//! the requests, and shards do not talk to one another during a run (the run refuses it,
//! `crate::run::ConfigError::SearchSharded`).

mod clock;
mod schedule;

use std::time::{Duration, Instant, SystemTime};

use infermeter_report::{ShardClock, ShardLevel, ShardPart, ShardTrial, Sharding};

use super::config::ShardConfig;
use crate::http::api_key::ApiKey;
use crate::load::{LevelRun, Part, PlannedLevel, Sharded};
use crate::suite::Suite;
pub use schedule::Schedule;

/// Flips to true on Ctrl-C / SIGTERM.
type Stop = tokio::sync::watch::Receiver<bool>;

/// Why a shard cannot run its part.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--start-at: that time passed {late:.1} s ago on this host's clock; give every shard one start time late enough for all to be set up (e.g. `infermeter k8s-manifest --start-in`)")]
    StartPassed { late: f64 },
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
        config: Option<&ShardConfig>,
        suite: &Suite,
        levels: &[PlannedLevel],
        trials: u32,
        resume: bool,
    ) -> Result<Option<ShardRun>, ShardError> {
        let Some(config) = config else {
            return Ok(None);
        };
        let (part, start_at) = (config.part, config.start_at);
        if resume {
            return Err(ShardError::Resume);
        }
        let level_seconds = config
            .level_seconds
            .unwrap_or_else(|| suite.peak.as_ref().map_or(0.0, |p| p.min_seconds).max(10.0));
        let timing = schedule::Timing {
            level: Duration::from_secs_f64(level_seconds),
            drain: Duration::from_secs_f64(config.drain_seconds),
        };
        let schedule = Schedule::new(levels, part, trials, suite.warmup > 0, timing);
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
            drain_seconds: config.drain_seconds,
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

    /// This shard's part of `planned`.
    pub fn part_of(&self, planned: &PlannedLevel) -> Sharded {
        planned
            .load
            .shard(self.part, Duration::from_secs_f64(self.level_seconds))
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
        ShardLevel {
            scenario: scenario.to_string(),
            mode: planned.mode(),
            level: planned.record_label(),
            cache: planned.cache(),
            request_rate: planned.load.applied(0, None).request_rate,
            share: self.part_of(planned).share,
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
