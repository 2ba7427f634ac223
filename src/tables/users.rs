//! The users-served table of the Users section: for each session scenario, one row per use
//! case whose context holds the conversation (then the scenario's default limits), one column
//! per cache use measured. The figures are `report::analysis::sessions::users_served`'.

use infermeter_report::analysis::sessions::{caching_gains, users_served, ScenarioUsersServed};
use infermeter_report::CacheUse;

use crate::charts::Source;
use crate::findings::capacity::{figure_text, thresholds_text};
use crate::state::ViewState;

/// One row: a scenario under one use case's limits.
#[derive(Debug, Clone, PartialEq)]
pub struct UsersRow {
    pub scenario_name: String,
    /// The use case (or "<scenario> (default limits)").
    pub name: String,
    /// Its limits as the reader set them: "Thresholds: TTFT < 10 s, generation speed > 10 tok/s".
    pub limits: String,
    /// By column: the figure ("≈ 24 users") and the verdict sentence; `None` where that cache
    /// use was not measured.
    pub cells: Vec<Option<(String, String)>>,
}

/// The table of one report.
#[derive(Debug, Clone, PartialEq)]
pub struct UsersTable {
    /// Column headings after the use case and its limits: "Caching allowed", ...
    pub columns: Vec<String>,
    pub rows: Vec<UsersRow>,
    /// How many users caching adds, where the series with caching defeated reached the limits.
    pub gains: Vec<String>,
}

/// Users served in `source` under the reader's limits (the use-case sliders) and statistic.
pub fn users_table(source: &Source, view: &ViewState) -> UsersTable {
    let served = users_served(source.analysis.report(), view.stat, &|id, preset| {
        view.thresholds(id, preset)
    });
    table(&served)
}

fn table(served: &[ScenarioUsersServed]) -> UsersTable {
    let mut caches: Vec<Option<CacheUse>> = served
        .iter()
        .flat_map(|s| s.served.iter().map(|u| u.cache))
        .collect();
    infermeter_report::order::sort(&mut caches);
    caches.dedup();
    let mut rows: Vec<UsersRow> = Vec::new();
    for scenario in served {
        let first_row = rows.len();
        for u in &scenario.served {
            let column = caches.iter().position(|c| *c == u.cache).unwrap_or(0);
            let existing = rows[first_row..].iter().position(|r| r.name == u.name);
            let row = match existing {
                Some(i) => &mut rows[first_row + i],
                None => {
                    rows.push(UsersRow {
                        scenario_name: scenario.scenario_name.clone(),
                        name: u.name.clone(),
                        limits: thresholds_text(&u.thresholds),
                        cells: vec![None; caches.len()],
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            row.cells[column] = Some((figure_text(&u.capacity), u.verdict.clone()));
        }
    }
    let columns = caches
        .iter()
        .map(|c| match c {
            Some(CacheUse::Allowed) => "Caching allowed".to_string(),
            Some(CacheUse::Defeated) => "Caching defeated".to_string(),
            None => "Caching not set".to_string(),
        })
        .collect();
    UsersTable {
        columns,
        rows,
        gains: caching_gains(served).iter().map(|g| g.sentence()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::{sample, sessions_sample, with_sources};
    use infermeter_report::analysis::capacity::LimitKind;
    use infermeter_report::presets::use_cases;

    /// The session fixture: a row per use case that holds the chat's last turn, then the
    /// default limits; both cache uses side by side, in users; a slider moved for a use case
    /// changes its row.
    #[test]
    fn users_served_by_use_case_and_cache_use() {
        let report = sessions_sample();
        let t = with_sources(&report, |s| users_table(&s[0], &ViewState::default()));
        assert_eq!(t.columns, ["Caching allowed", "Caching defeated"]);
        let last = t.rows.last().unwrap();
        assert_eq!(last.name, "Chat (default limits)");
        assert!(t.rows.iter().all(|r| r.cells.iter().all(Option::is_some)));
        let (figure, verdict) = t.rows[0].cells[0].clone().unwrap();
        assert!(figure.ends_with(" users"), "{figure}");
        assert!(verdict.contains("simultaneous users"), "{verdict}");
        assert!(!t.rows.iter().any(|r| r.name == "Code Completion"));

        let general = use_cases()
            .into_iter()
            .find(|u| u.name == t.rows[0].name)
            .unwrap();
        let mut strict = ViewState::default();
        strict.set_threshold(general.id, general.thresholds, LimitKind::Ttft, 1e-6);
        let moved = with_sources(&report, |s| users_table(&s[0], &strict));
        let (figure, _) = moved.rows[0].cells[0].clone().unwrap();
        assert_eq!(figure, "Not recommended for this use case");
        assert!(
            moved.rows[0].limits.contains("TTFT < 0.000001 s"),
            "{}",
            moved.rows[0].limits
        );
        assert_eq!(moved.rows[1..], t.rows[1..]);
    }

    #[test]
    fn a_report_without_sessions_has_an_empty_table() {
        let report = sample();
        let t = with_sources(&report, |s| users_table(&s[0], &ViewState::default()));
        assert!(t.rows.is_empty() && t.columns.is_empty());
    }
}
