//! The steps of a sharded run and when each begins, counted from `--start-at`. Every shard
//! computes the same schedule from the plan and two durations, so they need not talk: each
//! scenario's warmup gets the drain time; each trial of a level gets its load time (a peak
//! level's `--level-seconds`, a rate level's `duration_s`, none for a burst) plus the drain time.

use std::collections::BTreeMap;
use std::time::Duration;

use infermeter_report::{CacheUse, LoadMode};

use crate::load::{Part, PlannedLevel};

/// The two durations a schedule is made of.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// How long a peak level keeps its requests in flight.
    pub level: Duration,
    /// How long requests are given to finish after a level's load, and a warmup.
    pub drain: Duration,
}

/// A step: a scenario's warmup, or one trial of a level (scenario, mode, cache use, place in
/// its series, trial).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Warmup(usize),
    Trial(usize, LoadMode, Option<CacheUse>, usize, u32),
}

/// When each step begins, after the start.
#[derive(Debug, Clone)]
pub struct Schedule {
    starts: BTreeMap<Step, Duration>,
    length: Duration,
}

impl Schedule {
    /// The schedule of `part` (its steps' times are every shard's).
    pub fn new(
        levels: &[PlannedLevel],
        part: Part,
        trials: u32,
        warmup: bool,
        timing: Timing,
    ) -> Schedule {
        let mut starts = BTreeMap::new();
        let mut at = Duration::ZERO;
        for planned in levels {
            if warmup && !starts.contains_key(&Step::Warmup(planned.scenario)) {
                starts.insert(Step::Warmup(planned.scenario), at);
                at += timing.drain;
            }
            let load = planned.load.shard(part, timing.level).load_time;
            for trial in 0..trials {
                starts.insert(trial_step(planned, trial), at);
                at += load + timing.drain;
            }
        }
        Schedule { starts, length: at }
    }

    /// When `scenario`'s warmup begins (None when the suite has no warmup).
    pub fn warmup(&self, scenario: usize) -> Option<Duration> {
        self.starts.get(&Step::Warmup(scenario)).copied()
    }

    /// When `trial` of `planned` begins.
    pub fn trial(&self, planned: &PlannedLevel, trial: u32) -> Option<Duration> {
        self.starts.get(&trial_step(planned, trial)).copied()
    }

    /// From the start to the end of the last step.
    pub fn length(&self) -> Duration {
        self.length
    }
}

fn trial_step(planned: &PlannedLevel, trial: u32) -> Step {
    Step::Trial(
        planned.scenario,
        planned.mode(),
        planned.cache(),
        planned.position,
        trial,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::plan;
    use crate::suite::Suite;

    #[test]
    fn steps_follow_the_plan_with_fixed_durations() {
        let suite: Suite = toml::from_str(
            "name = \"s\"\nwarmup = 1\n[[scenario]]\nid = \"a\"\nname = \"A\"\ninput_tokens = 8\n\
             output_tokens = 8\n[peak]\nlevels = [1, 2]\n[burst]\nlevels = [4]\n\
             [rate]\nrates = [1.0]\nduration_s = 3.0\n",
        )
        .unwrap();
        let levels = plan(&suite, &[]);
        let timing = Timing {
            level: Duration::from_secs(10),
            drain: Duration::from_secs(2),
        };
        let part = Part { index: 1, count: 2 };
        let s = Schedule::new(&levels, part, 2, true, timing);
        let secs = |d: Option<Duration>| d.unwrap().as_secs();
        assert_eq!(secs(s.warmup(0)), 0);
        // Peak @1: trials at 2 and 14; peak @2 at 26 and 38; burst @4 at 50 and 52; rate at
        // 54 and 59.
        let starts: Vec<u64> = levels
            .iter()
            .flat_map(|l| [secs(s.trial(l, 0)), secs(s.trial(l, 1))])
            .collect();
        assert_eq!(starts, [2, 14, 26, 38, 50, 52, 54, 59]);
        assert_eq!(s.length().as_secs(), 64);
        assert!(s.trial(&levels[0], 2).is_none());
        assert!(Schedule::new(&levels, part, 1, false, timing)
            .warmup(0)
            .is_none());
    }

    /// A users level loads the server for the level time, once per cache use: the two series'
    /// levels of the same users are two steps.
    #[test]
    fn users_levels_get_the_level_time_per_cache_use() {
        let suite = Suite::load("chat-sessions").unwrap().quick();
        let levels = plan(&suite, &[]);
        let timing = Timing {
            level: Duration::from_secs(10),
            drain: Duration::from_secs(2),
        };
        let s = Schedule::new(&levels, Part { index: 0, count: 2 }, 1, true, timing);
        let starts: Vec<u64> = levels
            .iter()
            .map(|l| s.trial(l, 0).unwrap().as_secs())
            .collect();
        assert_eq!(starts, [2, 14, 26, 38, 50, 62]);
        assert_eq!(s.length().as_secs(), 74);
    }
}
