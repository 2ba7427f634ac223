//! Each load mode's words, in one place: how a level's load reads ("single user", "32
//! concurrent", "256 queue depth", "2 req/s"), what a load counts after a number ("concurrent
//! users", "req/s"), what the highest load meeting an SLO is called, what a capacity counts
//! ([`LoadUnit`]: "concurrent requests", "simultaneous users"), which figure of a level is its
//! load, the figure a level is tested at and the header's "Load tested" range ("queue depth
//! 1–256 (burst)"), and how a what-if question names its load ("queue depth 8"). The page
//! (the header, findings, the timeline's level picker, the measurements table, the goodput
//! cards, the what-if section), `infermeter summary` and the collector's progress line all word
//! a mode through these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::coverage::Span;
use super::format::format_number;
use crate::aggregate::Applied;
use crate::schema::{Level, LoadMode};

impl LoadMode {
    /// A level's load as the reference reports word it: "single user", "32 concurrent"
    /// (peak); "1 user", "256 queue depth" (burst); "2 req/s" (rate); "16 users"; "0.5
    /// sessions/s" or "12 sessions active" (session arrivals); "4× speed" (trace replay). An
    /// open-loop level without its rate says how many it had in flight.
    pub fn describe(self, applied: &Applied) -> String {
        let n = applied.concurrency;
        match self {
            LoadMode::Peak if n == 1 => "single user".into(),
            LoadMode::Peak => format!("{n} concurrent"),
            LoadMode::Burst if n == 1 => "1 user".into(),
            LoadMode::Burst => format!("{n} queue depth"),
            LoadMode::Users if n == 1 => "1 user".into(),
            LoadMode::Users => format!("{n} users"),
            LoadMode::Rate => match applied.request_rate {
                Some(rate) => format!("{} req/s", format_number(rate)),
                None => format!("{n} in flight"),
            },
            LoadMode::Sessions => match applied.session_rate {
                Some(rate) => format!("{} sessions/s", format_number(rate)),
                None => format!("{n} sessions active"),
            },
            LoadMode::Trace => match applied.trace_speed {
                Some(speed) => format!("{}× speed", format_number(speed)),
                None => format!("{n} in flight"),
            },
            LoadMode::Agents if n == 1 => "1 job".into(),
            LoadMode::Agents => format!("{n} jobs"),
            LoadMode::JobRate => match applied.job_rate {
                Some(rate) => format!("{} jobs/s", format_number(rate)),
                None => format!("{n} jobs in flight"),
            },
        }
    }

    /// [`LoadMode::describe`] of a measured level of a series in this mode.
    pub fn describe_level(self, level: &Level) -> String {
        self.describe(&Applied::of(level))
    }

    /// What a load of this mode counts, after the number `value`: "concurrent users", "1
    /// concurrent user", "queued requests", "req/s".
    pub fn unit(self, value: f64) -> &'static str {
        match (self, value == 1.0) {
            (LoadMode::Peak, true) => "concurrent user",
            (LoadMode::Peak, false) => "concurrent users",
            (LoadMode::Burst, true) => "queued request",
            (LoadMode::Burst, false) => "queued requests",
            (LoadMode::Rate, _) => "req/s",
            (LoadMode::Users, true) => "user",
            (LoadMode::Users, false) => "users",
            (LoadMode::Sessions, _) => "sessions/s",
            (LoadMode::Trace, _) => "× trace speed",
            (LoadMode::Agents, true) => "concurrent job",
            (LoadMode::Agents, false) => "concurrent jobs",
            (LoadMode::JobRate, _) => "jobs/s",
        }
    }

    /// What the highest load of this mode meeting an SLO is called: "max users meeting the
    /// SLO" (peak), "max queue depth meeting the SLO" (burst), "max request rate …" (rate).
    pub fn max_load_name(self) -> &'static str {
        match self {
            LoadMode::Burst => "max queue depth meeting the SLO",
            LoadMode::Rate => "max request rate meeting the SLO",
            LoadMode::Peak => "max users meeting the SLO",
            LoadMode::Users => "max simultaneous users meeting the SLO",
            LoadMode::Sessions => "max session rate meeting the SLO",
            LoadMode::Trace => "max trace speed meeting the SLO",
            LoadMode::Agents => "max concurrent jobs meeting the SLO",
            LoadMode::JobRate => "max job rate meeting the SLO",
        }
    }

    /// Whether TTFT growing over a level of this mode means the level was over-saturated: not
    /// in burst mode, whose queue is sent at once and drains by design, so its TTFT always
    /// grows.
    pub fn can_saturate(self) -> bool {
        self != LoadMode::Burst
    }

    /// What a capacity of this mode counts: users in users mode, jobs in the agents modes, requests
    /// in flight in every other.
    pub fn capacity_unit(self) -> LoadUnit {
        match self {
            LoadMode::Users => LoadUnit::Users,
            LoadMode::Agents | LoadMode::JobRate => LoadUnit::Jobs,
            _ => LoadUnit::Requests,
        }
    }

    /// A level's load as this mode measures it: requests in flight (peak), sent at once (burst)
    /// or the target arrival rate (rate, job rate).
    pub fn level_load(self, level: &Level) -> f64 {
        match (self, level.request_rate, Applied::of(level).job_rate) {
            (LoadMode::Rate, Some(rate), _) | (LoadMode::JobRate, _, Some(rate)) => rate,
            _ => f64::from(level.concurrency),
        }
    }

    /// The figure a level of this mode was tested at, for the range of loads a report tested:
    /// requests in flight (peak), queue depth (burst), users, the arrival rate (rate), new
    /// sessions per second (session arrivals), the replay speed (trace), new jobs per second
    /// (job rate); `None` where the level
    /// lacks it (an open-loop level without its rate).
    pub fn tested_value(self, level: &Level) -> Option<f64> {
        match self {
            LoadMode::Peak | LoadMode::Burst | LoadMode::Users | LoadMode::Agents => {
                Some(f64::from(level.concurrency))
            }
            LoadMode::Rate => level.request_rate,
            LoadMode::Sessions => level.sessions.as_ref().and_then(|s| s.session_rate),
            LoadMode::Trace => level.trace.as_ref().map(|t| t.speed),
            LoadMode::JobRate => Applied::of(level).job_rate,
        }
    }

    /// The page header's "Load tested" words for this mode's range of tested loads: "1–32
    /// concurrent requests (peak)", "queue depth 1–256 (burst)", "0.5–2 requests/s (rate)";
    /// `None` for the modes whose sections state their loads (users, session arrivals, trace).
    pub fn tested_range_text(self, range: Span<f64>) -> Option<String> {
        let count = |n: f64| (n as u32).to_string();
        match self {
            LoadMode::Peak => {
                let noun = if range.high == 1.0 {
                    "request"
                } else {
                    "requests"
                };
                Some(format!("{} concurrent {noun} (peak)", range.text(count)))
            }
            LoadMode::Burst => Some(format!("queue depth {} (burst)", range.text(count))),
            LoadMode::Rate => Some(format!("{} requests/s (rate)", range.text(format_number))),
            LoadMode::Users
            | LoadMode::Sessions
            | LoadMode::Trace
            | LoadMode::Agents
            | LoadMode::JobRate => None,
        }
    }

    /// A what-if question's load of `n`: "queue depth 8" (burst), else "8 users".
    pub fn question_load(self, n: u32) -> String {
        match self {
            LoadMode::Burst => format!("queue depth {n}"),
            LoadMode::Agents => format!("{n} concurrent jobs"),
            _ => format!("{n} users"),
        }
    }
}

/// What a series' load counts: requests in flight, or users (users mode), so a verdict speaks
/// in what the report measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadUnit {
    #[default]
    Requests,
    Users,
    /// Agentic jobs at once (agents mode).
    Jobs,
}

impl LoadUnit {
    /// "a single request", "a single user".
    pub fn single(self) -> &'static str {
        match self {
            LoadUnit::Requests => "a single request",
            LoadUnit::Users => "a single user",
            LoadUnit::Jobs => "a single job",
        }
    }

    /// "concurrent requests", "simultaneous users".
    pub fn plural(self) -> &'static str {
        match self {
            LoadUnit::Requests => "concurrent requests",
            LoadUnit::Users => "simultaneous users",
            LoadUnit::Jobs => "concurrent jobs",
        }
    }

    /// "request", "user".
    pub fn noun(self) -> &'static str {
        match self {
            LoadUnit::Requests => "request",
            LoadUnit::Users => "user",
            LoadUnit::Jobs => "job",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(concurrency: u32) -> Applied {
        Applied {
            concurrency,
            ..Applied::default()
        }
    }

    #[test]
    fn every_mode_says_what_its_load_counts() {
        let said = |mode: LoadMode, applied: Applied| mode.describe(&applied);
        assert_eq!(said(LoadMode::Peak, at(1)), "single user");
        assert_eq!(said(LoadMode::Peak, at(32)), "32 concurrent");
        assert_eq!(said(LoadMode::Burst, at(1)), "1 user");
        assert_eq!(said(LoadMode::Burst, at(64)), "64 queue depth");
        assert_eq!(said(LoadMode::Users, at(1)), "1 user");
        assert_eq!(said(LoadMode::Users, at(16)), "16 users");
        let rate = Applied {
            request_rate: Some(2.5),
            ..at(7)
        };
        assert_eq!(said(LoadMode::Rate, rate), "2.5 req/s");
        assert_eq!(said(LoadMode::Rate, at(7)), "7 in flight");
        let sessions = Applied {
            session_rate: Some(0.5),
            ..at(12)
        };
        assert_eq!(said(LoadMode::Sessions, sessions), "0.5 sessions/s");
        assert_eq!(said(LoadMode::Sessions, at(12)), "12 sessions active");
        let trace = Applied {
            trace_speed: Some(4.0),
            ..at(9)
        };
        assert_eq!(said(LoadMode::Trace, trace), "4× speed");
        // Users and trace levels are never "concurrent" requests.
        assert_eq!(said(LoadMode::Trace, at(9)), "9 in flight");
        assert_eq!(said(LoadMode::Agents, at(1)), "1 job");
        assert_eq!(said(LoadMode::Agents, at(16)), "16 jobs");
        let jobs = Applied {
            job_rate: Some(0.5),
            ..at(3)
        };
        assert_eq!(said(LoadMode::JobRate, jobs), "0.5 jobs/s");
        assert_eq!(said(LoadMode::JobRate, at(3)), "3 jobs in flight");
    }

    #[test]
    fn units_agree_with_the_number() {
        assert_eq!(LoadMode::Peak.unit(1.0), "concurrent user");
        assert_eq!(LoadMode::Peak.unit(2.0), "concurrent users");
        assert_eq!(LoadMode::Burst.unit(16.0), "queued requests");
        assert_eq!(LoadMode::Rate.unit(1.0), "req/s");
    }

    #[test]
    fn a_capacity_and_a_question_count_users_or_requests() {
        assert_eq!(
            LoadMode::Users.capacity_unit().plural(),
            "simultaneous users"
        );
        assert_eq!(
            LoadMode::Burst.capacity_unit().plural(),
            "concurrent requests"
        );
        assert_eq!(LoadMode::Burst.question_load(8), "queue depth 8");
        assert_eq!(LoadMode::Peak.question_load(8), "8 users");
        assert_eq!(LoadMode::Agents.capacity_unit().plural(), "concurrent jobs");
        assert_eq!(LoadMode::Agents.unit(4.0), "concurrent jobs");
    }
}
