//! Users served under each use case's limits, and what caching the prompt prefix gained.

use schemars::JsonSchema;
use serde::Serialize;

use super::{last_turn_context, UsersServed};
use crate::analysis::capacity::{capacity, Capacity};
use crate::analysis::use_cases::default_scenario_thresholds;
use crate::presets::use_cases;
use crate::schema::{CacheUse, Limits, LoadMode, Report, Scenario, Series};
use crate::stats::Stat;

/// The limits of a use case (or a scenario's defaults, by the scenario's id) as the reader set
/// them: `(id, preset) -> limits`. The presets alone: `&|_, preset| preset`.
pub type LimitsOf<'a> = &'a dyn Fn(&str, Limits) -> Limits;

/// One session scenario's users served under limits the reader may have moved (the use-case
/// sliders): the page's users-served table.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScenarioUsersServed {
    pub scenario: String,
    pub scenario_name: String,
    /// Use case by use case (then the default limits), caching allowed before defeated.
    pub served: Vec<UsersServed>,
}

/// Users served by every session scenario with a users series, under `limits`.
pub fn users_served(report: &Report, stat: Stat, limits: LimitsOf) -> Vec<ScenarioUsersServed> {
    report
        .scenarios
        .iter()
        .filter_map(|scenario| {
            let shape = scenario.session.as_ref()?;
            let series: Vec<&Series> = report
                .series
                .iter()
                .filter(|s| s.scenario == scenario.id && s.mode == LoadMode::Users)
                .filter(|s| !s.levels.is_empty())
                .collect();
            if series.is_empty() {
                return None;
            }
            let last = last_turn_context(scenario, shape);
            Some(ScenarioUsersServed {
                scenario: scenario.id.clone(),
                scenario_name: scenario.name.clone(),
                served: scenario_users_served(scenario, &series, last, stat, limits),
            })
        })
        .collect()
}

/// How many more users the prefix cache lets a session scenario serve under one set of limits,
/// where the users series with caching defeated reached those limits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CachingGain {
    pub scenario_name: String,
    /// The use case, or "<scenario> (default limits)".
    pub limits_name: String,
    /// Users served with caching allowed (whole users, read between levels where needed).
    pub allowed: u32,
    /// Every level tested with caching allowed met the limits: `allowed` is a lower bound.
    pub allowed_is_bound: bool,
    pub defeated: u32,
}

impl CachingGain {
    /// "Within the limits of General Chatbot, prefix caching adds 96 users to Chat session: 160
    /// with it, 64 without." With a bound: "adds at least 96 users: ≥ 160 with it (every level
    /// tested passes), 64 without."
    pub fn sentence(&self) -> String {
        let gain = self.allowed.saturating_sub(self.defeated);
        let noun = if gain == 1 { "user" } else { "users" };
        let (at_least, with) = if self.allowed_is_bound {
            (
                "at least ",
                format!("≥ {} with it (every level tested passes)", self.allowed),
            )
        } else {
            ("", format!("{} with it", self.allowed))
        };
        format!(
            "Within the limits of {}, prefix caching adds {at_least}{gain} {noun} to {}: {with}, {} without.",
            self.limits_name,
            self.scenario_name,
            self.defeated
        )
    }
}

/// For every limits under which the series with caching defeated stopped meeting them (and met
/// them at its lowest level), the users caching adds.
pub fn caching_gains(served: &[ScenarioUsersServed]) -> Vec<CachingGain> {
    let users = |c: &Capacity| c.estimate.map(|e| e.concurrency);
    served
        .iter()
        .flat_map(|scenario| {
            let of = move |cache: CacheUse, id: &str| {
                scenario
                    .served
                    .iter()
                    .find(|u| u.cache == Some(cache) && u.id == id)
            };
            scenario
                .served
                .iter()
                .filter(|u| u.cache == Some(CacheUse::Defeated))
                .filter_map(move |defeated| {
                    let allowed = of(CacheUse::Allowed, &defeated.id)?;
                    defeated.capacity.first_breach?;
                    Some(CachingGain {
                        scenario_name: scenario.scenario_name.clone(),
                        limits_name: defeated.name.clone(),
                        allowed: users(&allowed.capacity)?,
                        allowed_is_bound: allowed.capacity.first_breach.is_none(),
                        defeated: users(&defeated.capacity)?,
                    })
                })
        })
        .collect()
}

/// For each users series (caching allowed first): the use cases whose context budget holds the
/// session's last turn, then the default limits.
pub(super) fn scenario_users_served(
    scenario: &Scenario,
    series: &[&Series],
    last_turn_context_tokens: u32,
    stat: Stat,
    limits: LimitsOf,
) -> Vec<UsersServed> {
    let mut users: Vec<&Series> = series
        .iter()
        .copied()
        .filter(|s| s.mode == LoadMode::Users)
        .collect();
    crate::order::sort_by_key(&mut users, |s| s.cache);
    let presets: Vec<(String, String, Limits)> = use_cases()
        .into_iter()
        .filter(|uc| uc.context_tokens >= last_turn_context_tokens)
        .map(|uc| (uc.id.to_string(), uc.name.to_string(), uc.thresholds))
        .chain([(
            scenario.id.clone(),
            format!("{} (default limits)", scenario.name),
            default_scenario_thresholds(),
        )])
        .collect();
    users
        .into_iter()
        .flat_map(|series| {
            presets.iter().map(move |(id, name, preset)| {
                let thresholds = limits(id, *preset);
                let capacity = capacity(series, &thresholds, stat);
                UsersServed {
                    verdict: capacity.verdict_sentence(),
                    id: id.clone(),
                    name: name.clone(),
                    thresholds,
                    cache: series.cache,
                    capacity,
                }
            })
        })
        .collect()
}
