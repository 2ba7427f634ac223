//! The level plan: which levels a run measures, in order, and what each mode means for a level
//! beyond its load (its number in the records, its key in the report). A new load mode adds a
//! `Load` variant (scheduler) and its levels here; a search hands the run levels one at a time
//! instead of this fixed list ([`probe`]).

use std::time::Duration;

use infermeter_report::{CacheUse, LoadMode};

use crate::cli::ModeName;
use crate::scheduler::Load;
use crate::suite::{PeakPlan, Suite};
use crate::users::{SessionRate, UsersLoad};

/// One level of the plan.
#[derive(Debug, Clone)]
pub struct PlannedLevel {
    /// Index of its scenario in the suite.
    pub scenario: usize,
    pub load: Load,
    /// Written into records: the concurrency, or the 1-based level number in rate mode.
    pub record_label: u32,
    pub request_rate: Option<f64>,
    /// Its place among the levels of its series (scenario, mode and cache use), from 0: a
    /// resumed run skips the levels its partial report completed.
    pub position: usize,
}

/// Every level of `suite` for the `modes` asked (all when empty): scenario by scenario, peak
/// then burst then rate (single-request scenarios), users then sessions (session scenarios,
/// caching allowed then defeated), or the trace's speeds; levels in the suite's order.
pub fn plan(suite: &Suite, modes: &[ModeName]) -> Vec<PlannedLevel> {
    let wanted = |m: ModeName| modes.is_empty() || modes.contains(&m);
    let mut levels = Vec::new();
    for (scenario, s) in suite.scenarios.iter().enumerate() {
        if s.session.is_some() {
            levels.extend(session_levels(suite, scenario, &wanted));
            continue;
        }
        if s.trace.is_some() {
            if let (Some(t), true) = (&suite.trace, wanted(ModeName::Trace)) {
                for (position, &speed) in t.speeds.iter().enumerate() {
                    levels.push(PlannedLevel {
                        scenario,
                        load: Load::Trace { speed },
                        record_label: position as u32 + 1,
                        request_rate: None,
                        position,
                    });
                }
            }
            continue;
        }
        if let (Some(p), true) = (&suite.peak, wanted(ModeName::Peak)) {
            for (position, &n) in p.levels.iter().enumerate() {
                levels.push(PlannedLevel {
                    position,
                    ..PlannedLevel::peak(scenario, p, n)
                });
            }
        }
        if let (Some(b), true) = (&suite.burst, wanted(ModeName::Burst)) {
            for (position, &n) in b.levels.iter().enumerate() {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Burst { concurrency: n },
                    record_label: n,
                    request_rate: None,
                    position,
                });
            }
        }
        if let (Some(r), true) = (&suite.rate, wanted(ModeName::Rate)) {
            for (position, &rate) in r.rates.iter().enumerate() {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Rate {
                        rate,
                        arrivals: r.arrivals,
                        duration: Duration::from_secs_f64(r.duration_s),
                        seed: r.seed.wrapping_add(position as u64),
                    },
                    record_label: position as u32 + 1,
                    request_rate: Some(rate),
                    position,
                });
            }
        }
    }
    levels
}

/// The level a search probes: `load` requests in flight (peak, each level as long as the
/// suite's `[peak]` says) or sent at once (burst).
pub fn probe(suite: &Suite, scenario: usize, mode: LoadMode, load: u32) -> PlannedLevel {
    match mode {
        LoadMode::Burst => PlannedLevel {
            scenario,
            load: Load::Burst { concurrency: load },
            record_label: load,
            request_rate: None,
            position: 0,
        },
        _ => PlannedLevel::peak(scenario, &suite.peak.clone().unwrap_or_default(), load),
    }
}

/// The users and sessions levels of session scenario `scenario`: per mode, a series for each
/// cache use.
fn session_levels(
    suite: &Suite,
    scenario: usize,
    wanted: &dyn Fn(ModeName) -> bool,
) -> Vec<PlannedLevel> {
    let mut levels = Vec::new();
    if let (Some(u), true) = (&suite.users, wanted(ModeName::Users)) {
        for &cache in &u.cache {
            for (position, &users) in u.levels.iter().enumerate() {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Users(UsersLoad {
                        users,
                        sessions_per_user: u.sessions_per_user,
                        cache,
                        seed: u.seed.wrapping_add(position as u64),
                    }),
                    record_label: users,
                    request_rate: None,
                    position,
                });
            }
        }
    }
    if let (Some(r), true) = (&suite.session_rate, wanted(ModeName::Sessions)) {
        for &cache in &r.cache {
            for (position, &rate) in r.rates.iter().enumerate() {
                levels.push(PlannedLevel {
                    scenario,
                    load: Load::Sessions(SessionRate {
                        rate,
                        arrivals: r.arrivals,
                        duration: Duration::from_secs_f64(r.duration_s),
                        cache,
                        seed: r.seed.wrapping_add(position as u64),
                    }),
                    record_label: position as u32 + 1,
                    request_rate: None,
                    position,
                });
            }
        }
    }
    levels
}

/// Most requests any level of the plan has in flight, to size the connection pool.
pub fn max_in_flight(levels: &[PlannedLevel]) -> usize {
    levels
        .iter()
        .map(|l| match l.load {
            Load::Peak { concurrency, .. } | Load::Burst { concurrency } => concurrency as usize,
            Load::Users(u) => u.users as usize,
            Load::Rate { .. } | Load::Sessions(_) | Load::Trace { .. } => 64,
        })
        .max()
        .unwrap_or(1)
}

/// How progress lines and warnings name a level, e.g. "chatbot peak @4", "chat users @8
/// (caching defeated)" (`record_label`: the records' `concurrency`, a level's number for the
/// open-loop modes).
pub fn level_label(
    scenario: &str,
    mode: LoadMode,
    record_label: u32,
    cache: Option<CacheUse>,
) -> String {
    let cache = cache.map_or(String::new(), |c| format!(" ({})", c.label()));
    format!("{scenario} {} @{record_label}{cache}", mode.label())
}

impl PlannedLevel {
    /// A peak level of `n` in flight, as `plan` sets it (first of its series).
    fn peak(scenario: usize, plan: &PeakPlan, n: u32) -> PlannedLevel {
        PlannedLevel {
            scenario,
            load: Load::Peak {
                concurrency: n,
                requests_per_slot: plan.requests_per_slot,
                min_duration: Duration::from_secs_f64(plan.min_seconds),
            },
            record_label: n,
            request_rate: None,
            position: 0,
        }
    }

    /// Session levels: whether the prefix cache may help.
    pub fn cache(&self) -> Option<CacheUse> {
        self.load.cache()
    }

    /// Requests the level sends over `trials` trials when known in advance (burst), for the
    /// progress bar.
    pub fn expected_requests(&self, trials: u32) -> Option<u64> {
        match self.load {
            Load::Burst { concurrency } => Some(u64::from(concurrency) * u64::from(trials)),
            _ => None,
        }
    }

    /// The level's `concurrency` in the report. Open-loop levels (rate, sessions, trace) are
    /// keyed by the most requests (sessions) the trials had in flight, kept increasing along
    /// the series (`previous`) as the schema wants.
    pub fn report_concurrency(&self, max_in_flight: u32, previous: Option<u32>) -> u32 {
        match self.load {
            Load::Rate { .. } | Load::Sessions(_) | Load::Trace { .. } => {
                rate_concurrency(max_in_flight, previous)
            }
            _ => self.record_label,
        }
    }
}

pub use infermeter_report::aggregate::rate_concurrency;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_orders_scenarios_then_modes() {
        let suite = Suite::load("four-scenario").unwrap().quick();
        let levels = plan(&suite, &[ModeName::Burst]);
        assert_eq!(levels.len(), 4 * 3);
        assert!(levels.iter().all(|l| l.load.mode() == LoadMode::Burst));
        let all = plan(&suite, &[]);
        assert_eq!(all.len(), 4 * 6);
        // Each series counts its own levels.
        let positions: Vec<usize> = all.iter().take(6).map(|l| l.position).collect();
        assert_eq!(positions, [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn rate_levels_are_keyed_by_load_and_keep_increasing() {
        let suite: Suite = toml::from_str(
            "name = \"r\"\n[[scenario]]\nid = \"s\"\nname = \"S\"\ninput_tokens = 8\n\
             output_tokens = 8\n[rate]\nrates = [1.0, 2.0]\nduration_s = 1.0\n",
        )
        .unwrap();
        let levels = plan(&suite, &[]);
        assert_eq!(levels[1].record_label, 2);
        assert_eq!(levels[1].request_rate, Some(2.0));
        assert_eq!(levels[1].report_concurrency(5, Some(3)), 5);
        assert_eq!(levels[1].report_concurrency(2, Some(3)), 4);
        assert_eq!(levels[0].report_concurrency(0, None), 1);
        assert_eq!(levels[1].expected_requests(2), None);
    }
}
