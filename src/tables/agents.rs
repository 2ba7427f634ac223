//! The Agents section's tables: per agents scenario, each level's jobs, completion times, jobs
//! per hour, where the jobs' time went and whether the level meets the job SLO, under the page's
//! SLO sliders. The figures are `report::analysis::agents`'; these only write them.

use infermeter_report::analysis::agents::{
    agents_findings, job_slo, AgentsLevelFigures, DEFAULT_JOB_SLO,
};
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::goodput::report_slo;
use infermeter_report::Stat;
use infermeter_report::{Report, Slo};

use crate::charts::Source;
use crate::state::ViewState;

/// One agents scenario's table.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentsTable {
    pub scenario: String,
    /// The capacity in concurrent jobs under the SLO, in a sentence.
    pub capacity: String,
    pub rows: Vec<AgentsRow>,
}

/// One level: of concurrent jobs, or of jobs arriving at a rate.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentsRow {
    /// "4 jobs", "0.5 jobs/s".
    pub load: String,
    /// "15 of 16".
    pub completed: String,
    /// Completion time at p50 and p95: "12.3 s / 20.1 s".
    pub completion: String,
    pub jobs_per_hour: String,
    /// Jobs per hour per user ([`jobs_per_user_hour`](infermeter_report::analysis::agents::jobs_per_user_hour)).
    pub per_user: String,
    /// Shares of the jobs' time on the root lane: (what, share 0..1, "62%").
    pub split: [(&'static str, f64, String); 3],
    /// "yes" or "no", with the shares meeting each bound.
    pub meets: String,
}

/// The job SLO the main report's jobs are judged by before a slider moves: its own bounds, the
/// defaults where it states none ([`job_slo`]).
pub fn base_job_slo(report: Option<&Report>) -> Slo {
    report.map_or(DEFAULT_JOB_SLO, |r| job_slo(Some(&report_slo(r))))
}

/// The job SLO the page applies: the sliders' (the goodput TTFT bound and target, the Agents
/// section's job bound; a slider at its rightmost position removes its bound) on
/// [`base_job_slo`].
pub fn page_job_slo(sources: &[Source], view: &ViewState) -> Slo {
    view.slo(base_job_slo(sources.first().map(|s| s.analysis.report())))
}

/// The tables of `source`'s agents scenarios under `slo`.
pub fn agents_tables(source: &Source, slo: &Slo) -> Vec<AgentsTable> {
    let report = source.analysis.report();
    agents_findings(report, slo)
        .into_iter()
        .map(|found| {
            let name = (report.scenarios.iter())
                .find(|s| s.id == found.scenario)
                .map_or(found.scenario.clone(), |s| s.name.clone());
            AgentsTable {
                capacity: found.capacity_sentence(&name),
                rows: found
                    .levels
                    .iter()
                    .chain(&found.rate_levels)
                    .map(row)
                    .collect(),
                scenario: name,
            }
        })
        .collect()
}

fn row(l: &AgentsLevelFigures) -> AgentsRow {
    let at = |stat| {
        (l.completion_s.and_then(|d| d.get(stat)))
            .map_or("—".into(), |s| format!("{} s", format_number(s)))
    };
    let percent = |share: f64| format!("{}%", format_number(share * 100.0));
    AgentsRow {
        load: l.load(),
        completed: format!("{} of {}", l.completed, l.jobs),
        completion: format!("{} / {}", at(Stat::P50), at(Stat::P95)),
        jobs_per_hour: format_number(l.jobs_per_hour),
        per_user: l.jobs_per_user_hour.map_or("—".into(), format_number),
        split: [
            ("Engine", l.engine_share, percent(l.engine_share)),
            ("Tools and think", l.tools_share, percent(l.tools_share)),
            ("Children", l.children_share, percent(l.children_share)),
        ],
        meets: format!(
            "{} ({} of jobs, {} of calls)",
            if l.meets { "yes" } else { "no" },
            percent(l.jobs_meeting),
            percent(l.calls_meeting)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::analysis::capacity::LimitKind;

    /// The most concurrent jobs whose level, and every one below it, has `target` of its calls
    /// succeeded within `max_ttft_s` and of its jobs completed within `max_job_s`, recomputed
    /// from the fixture's raw per-request columns and the jobs' calls' send and end times.
    fn capacity_from_columns(max_ttft_s: f64, target: f64, max_job_s: f64) -> Option<u32> {
        let mut capacity = None;
        for level in &agents_sample().series[0].levels {
            let columns = level.per_request.as_ref().unwrap();
            let met = (columns.status.iter().zip(&columns.ttft))
                .filter(|(s, t)| **s == 0 && f64::from(**t) * 1e-4 <= max_ttft_s + 1e-12)
                .count() as f64
                / columns.status.len() as f64;
            let jobs = &level.agents.as_ref().unwrap().jobs;
            let done = (jobs.iter())
                .filter(|j| j.ok && j.wall_s <= max_job_s)
                .count() as f64
                / jobs.len() as f64;
            if met < target || done < target {
                break;
            }
            capacity = Some(level.concurrency);
        }
        capacity
    }

    /// Each level's split of the jobs' time sums to the whole; the capacity in jobs follows the
    /// page's TTFT bound as the raw columns say (every level at the report's SLO, fewer once
    /// the bound is 0.1 s: the fixture's calls wait up to 0.2 s at 8 jobs).
    #[test]
    fn the_tables_follow_the_pages_slo() {
        let report = agents_sample();
        let mut view = ViewState::default();
        let tables = with_sources(&report, |s| agents_tables(&s[0], &page_job_slo(s, &view)));
        assert_eq!(tables.len(), 1);
        let rows = &tables[0].rows;
        assert_eq!(
            rows.iter().map(|r| r.load.as_str()).collect::<Vec<_>>(),
            ["1 job", "4 jobs", "8 jobs"]
        );
        for row in rows {
            let total: f64 = row.split.iter().map(|p| p.1).sum();
            assert!((total - 1.0).abs() < 1e-9, "{row:?}");
            assert_eq!(row.completed, "8 of 8");
        }
        let base = report_slo(&report);
        let expected = capacity_from_columns(base.limits.max_ttft_s.unwrap(), base.target, 600.0);
        assert_eq!(expected, Some(8));
        assert!(
            tables[0].capacity.contains("serves 8 concurrent jobs"),
            "{}",
            tables[0].capacity
        );
        view.slo.set_bound(&base, LimitKind::Ttft, Some(0.1));
        let expected = capacity_from_columns(0.1, base.target, 600.0).unwrap();
        assert!(expected < 8);
        let tables = with_sources(&report, |s| agents_tables(&s[0], &page_job_slo(s, &view)));
        let capacity = &tables[0].capacity;
        assert!(
            capacity.contains(&format!("serves {expected} concurrent job")),
            "{capacity}"
        );
        assert!(
            capacity.contains("calls' first token within 0.1 s"),
            "{capacity}"
        );
    }

    /// The job bound's slider: at 2.5 s the fixture's jobs at 8 at once (2.6 s and more) fail,
    /// the capacity in jobs is what the raw records say; at its rightmost position no job
    /// bound is left.
    #[test]
    fn the_job_slider_moves_the_jobs_served() {
        let report = agents_sample();
        let mut view = ViewState::default();
        let base = base_job_slo(Some(&report));
        assert_eq!(base.limits.max_job_s, Some(600.0));
        view.slo.set_bound(&base, LimitKind::Job, Some(2.5));
        let slo = with_sources(&report, |s| page_job_slo(s, &view));
        assert_eq!(slo.limits.max_job_s, Some(2.5));
        let tables = with_sources(&report, |s| agents_tables(&s[0], &slo));
        let ttft = base.limits.max_ttft_s.unwrap();
        let expected = capacity_from_columns(ttft, base.target, 2.5).unwrap();
        assert!(expected < 8, "{expected}");
        let capacity = &tables[0].capacity;
        assert!(
            capacity.contains(&format!("serves {expected} concurrent job"))
                && capacity.contains("jobs within 2.5 s"),
            "{capacity}"
        );
        assert!(tables[0].rows.last().unwrap().meets.starts_with("no"));
        view.slo.set_bound(&base, LimitKind::Job, None);
        let slo = with_sources(&report, |s| page_job_slo(s, &view));
        assert_eq!(slo.limits.max_job_s, None);
    }
}
