//! Which workloads a report's capacity is judged on: each preset use case matched to the
//! scenario that measured it, then the report's other scenarios with default limits. A scenario
//! is judged on its peak sweep, or, for a session scenario, on its users series (caching
//! allowed where measured), so its capacity is in users.

use schemars::JsonSchema;
use serde::Serialize;

use super::Analysis;
use crate::presets::{use_cases, SLUGGISH_ITL_S, TTFT_BANDS};
use crate::schema::Limits;
use crate::schema::{CacheUse, LoadMode, Report, Series};

/// A workload checked against limits: a preset use case matched to one of the report's
/// scenarios, or one of the report's own scenarios with default limits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapacityTarget {
    /// Use-case id (or the scenario id for a report's own scenario); URL and test-id key.
    pub id: String,
    pub name: String,
    pub description: String,
    /// What prompt caching would change; only for a report measured without it.
    pub caching_note: Option<String>,
    pub scenario_id: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Limits before the reader moves a slider.
    pub preset: Limits,
    /// True for a preset use case (listed in the use-case guidance table).
    pub is_use_case: bool,
    /// The series judged: peak (concurrent requests) or users (simultaneous users).
    pub mode: LoadMode,
    /// The users series' cache use (caching allowed where the report measured it).
    pub cache: Option<CacheUse>,
}

impl CapacityTarget {
    /// The series this target is judged on in `report` (matched by scenario, mode and cache).
    pub fn series<'a>(&self, report: &'a Report) -> Option<&'a Series> {
        report.series.iter().find(|s| {
            s.scenario == self.scenario_id
                && s.mode == self.mode
                && s.cache == self.cache
                && !s.levels.is_empty()
        })
    }
}

/// The series a scenario's capacity is judged on: its peak sweep, else its users series with
/// caching allowed (what production users get), else its first users series.
fn judged_series<'a>(report: &'a Report, scenario_id: &str) -> Option<&'a Series> {
    let of = |mode: LoadMode| {
        report
            .series
            .iter()
            .filter(move |s| s.scenario == scenario_id && s.mode == mode && !s.levels.is_empty())
    };
    of(LoadMode::Peak).next().or_else(|| {
        of(LoadMode::Users)
            .find(|s| s.cache != Some(CacheUse::Defeated))
            .or_else(|| of(LoadMode::Users).next())
    })
}

/// Limits for a report's own scenario: ITL stays out of the sluggish band and TTFT out of the
/// frustrating one (the presets' experience bands).
pub fn default_scenario_thresholds() -> Limits {
    Limits {
        max_ttft_s: Some(TTFT_BANDS[TTFT_BANDS.len() - 1].lower),
        max_itl_s: Some(SLUGGISH_ITL_S),
        ..Limits::default()
    }
}

/// Use cases whose scenario the report measured (by scenario id, or by input and output
/// tokens), then the report's other scenarios; only scenarios with a peak or a users series.
pub fn targets(report: &Report) -> Vec<CapacityTarget> {
    let analysis = Analysis::new(report);
    let measured = |id: &str| judged_series(report, id).is_some();
    let judged =
        |id: &str| judged_series(report, id).map_or((LoadMode::Peak, None), |s| (s.mode, s.cache));
    let cached = report.metadata.test.prompt_caching == Some(true);
    let mut out: Vec<CapacityTarget> = Vec::new();
    for uc in use_cases() {
        let scenario = analysis
            .scenario(uc.scenario_id)
            .or_else(|| {
                report.scenarios.iter().find(|s| {
                    s.input_tokens == uc.context_tokens && s.output_tokens == uc.output_tokens
                })
            })
            .filter(|s| measured(&s.id));
        if let Some(s) = scenario {
            let (mode, cache) = judged(&s.id);
            out.push(CapacityTarget {
                id: uc.id.into(),
                name: uc.name.into(),
                description: uc.description.into(),
                caching_note: uc.caching_note.filter(|_| !cached).map(String::from),
                scenario_id: s.id.clone(),
                input_tokens: s.input_tokens,
                output_tokens: s.output_tokens,
                preset: uc.thresholds,
                is_use_case: true,
                mode,
                cache,
            });
        }
    }
    for s in &report.scenarios {
        let covered = out.iter().any(|t| t.scenario_id == s.id || t.id == s.id);
        if !covered && measured(&s.id) {
            let (mode, cache) = judged(&s.id);
            out.push(CapacityTarget {
                id: s.id.clone(),
                name: s.name.clone(),
                description: s.description.clone(),
                caching_note: None,
                scenario_id: s.id.clone(),
                input_tokens: s.input_tokens,
                output_tokens: s.output_tokens,
                preset: default_scenario_thresholds(),
                is_use_case: false,
                mode,
                cache,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{report, series};

    /// A use case matched by id, another by token counts, the rest of the scenarios with the
    /// default limits; a scenario without peak runs is judged on nothing.
    #[test]
    fn use_cases_match_scenarios_by_id_or_tokens() {
        let mut r = report(
            &["code_completion", "chat8k", "mine", "burst_only"],
            vec![
                series("code_completion", LoadMode::Peak, &[(1, 0.1, 100.0)]),
                series("chat8k", LoadMode::Peak, &[(1, 0.1, 100.0)]),
                series("mine", LoadMode::Peak, &[(1, 0.1, 100.0)]),
                series("burst_only", LoadMode::Burst, &[(1, 0.1, 100.0)]),
            ],
        );
        r.scenarios[1].input_tokens = 8192;
        r.scenarios[1].output_tokens = 1024;
        let t = targets(&r);
        let ids: Vec<(&str, &str, bool)> = t
            .iter()
            .map(|t| (t.id.as_str(), t.scenario_id.as_str(), t.is_use_case))
            .collect();
        assert_eq!(
            ids,
            [
                ("code_completion", "code_completion", true),
                ("short_form_chatbot", "chat8k", true),
                ("mine", "mine", false)
            ]
        );
        assert_eq!(t[2].preset, default_scenario_thresholds());
        assert!(t
            .iter()
            .all(|t| t.mode == LoadMode::Peak && t.cache.is_none()));
        assert_eq!(t[0].series(&r).unwrap().scenario, "code_completion");
    }

    /// A session scenario is judged on its users series with caching allowed, whatever the
    /// report's order: its capacity is in users.
    #[test]
    fn session_scenarios_are_judged_on_their_users_series() {
        let users = |cache| {
            let mut s = series("chat", LoadMode::Users, &[(1, 0.1, 100.0), (16, 0.4, 60.0)]);
            s.cache = Some(cache);
            s
        };
        let r = report(
            &["chat"],
            vec![users(CacheUse::Defeated), users(CacheUse::Allowed)],
        );
        let [t] = &targets(&r)[..] else {
            panic!("one target: {:?}", targets(&r))
        };
        assert_eq!((t.id.as_str(), t.mode), ("chat", LoadMode::Users));
        assert_eq!(t.cache, Some(CacheUse::Allowed));
        let judged = t.series(&r).unwrap();
        assert_eq!(judged.cache, Some(CacheUse::Allowed));
        let cap = super::super::capacity(judged, &t.preset, crate::Stat::Mean);
        assert_eq!(cap.unit, super::super::capacity::LoadUnit::Users);
        // Defeated alone: judged on that.
        let r = report(&["chat"], vec![users(CacheUse::Defeated)]);
        assert_eq!(targets(&r)[0].cache, Some(CacheUse::Defeated));
    }

    /// Reference 003's caching notes, only for a report that prefilled every context in full.
    #[test]
    fn caching_notes_only_without_prompt_caching() {
        let mut r = report(
            &["ctx_32k"],
            vec![series("ctx_32k", LoadMode::Peak, &[(1, 11.2, 92.0)])],
        );
        let noted = |r: &Report| {
            targets(r)
                .iter()
                .filter(|t| t.caching_note.is_some())
                .count()
        };
        assert_eq!(noted(&r), 1);
        r.metadata.test.prompt_caching = Some(true);
        assert_eq!(noted(&r), 0);
    }
}
