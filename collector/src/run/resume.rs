//! `--resume`: which levels a partial report completed, and the level it was measuring when it
//! stopped, which is measured again (its first attempt's records set aside, never dropped).

use std::collections::BTreeMap;
use std::path::Path;

use infermeter_report::{CacheUse, LoadMode, Report, RequestRecord};

use crate::load::level_label;
use crate::output::records::{self, RecordsError};
use crate::run::config::RunConfig;

/// Complete levels per series (scenario, mode, cache use) of a resumed run.
pub type DoneLevels = BTreeMap<(String, LoadMode, Option<CacheUse>), usize>;

/// The series key of a record's level.
fn series_of(r: &RequestRecord) -> (&str, LoadMode, Option<CacheUse>) {
    (&r.scenario, r.mode, r.cache)
}

/// The warning that flags a level cut short by a stop follows its label with this.
pub const WAS_INTERRUPTED: &str = "was interrupted";

/// Whether the level of `record` is complete in a partial `report`: there, and not flagged as
/// cut short. A level the run stopped in is flagged, or absent when the process died in it.
fn level_is_complete(report: &Report, record: &RequestRecord) -> bool {
    let flag = format!(
        "{} {WAS_INTERRUPTED}",
        level_label(
            &record.scenario,
            record.mode,
            record.concurrency,
            record.cache
        )
    );
    let present = report
        .series
        .iter()
        .find(|s| (s.scenario.as_str(), s.mode, s.cache) == series_of(record))
        .is_some_and(|s| {
            // Open-loop levels are keyed by what they saw; records by the level's number.
            if record.mode.is_open_loop() {
                s.levels.len() >= record.concurrency as usize
            } else {
                s.levels.iter().any(|l| l.concurrency == record.concurrency)
            }
        });
    present && !report.warnings.iter().any(|w| w.starts_with(&flag))
}

/// Prepares a complete report for `--resume --search`: the search judges the levels it holds
/// and measures only the loads it needs and the report lacks. The report then records the
/// search and its SLO, and says which levels came from when.
pub fn extend(mut report: Report, config: &RunConfig) -> Report {
    let settings = config
        .search
        .as_ref()
        .expect("--resume of a complete report is a search");
    let started = &report.metadata.started_at;
    let day = started.get(..10).unwrap_or(started);
    report.warnings.push(format!(
        "searched further on {} ({} mode, loads {} to {}): the levels the search needed and \
         this report lacked were measured then; the others are from the run that started {}",
        chrono::Utc::now().format("%Y-%m-%d"),
        settings.mode.label(),
        settings.min,
        settings.max,
        day,
    ));
    report.metadata.test.search = Some(settings.clone());
    report.metadata.test.slo = config.slo;
    // The levels measured now carry what the current format records (e.g. which tokenizer
    // counted the prompts); the earlier ones lack only fields the newer formats made optional.
    report.schema_version = infermeter_report::SCHEMA_VERSION.to_string();
    report
}

/// Prepares a resumed run: the level that was running when the run stopped is measured again,
/// so its figures are dropped and its records set aside. (A run stopped between levels, or in a
/// warmup, has no such level.) Returns the number of complete levels per series.
pub fn resume(
    mut report: Report,
    records_path: &Path,
) -> Result<(Report, DoneLevels), RecordsError> {
    let all = records::read_records(records_path)?;
    let last = all.iter().rev().find(|r| !r.warmup).cloned();
    if let Some(last) = last.filter(|r| !level_is_complete(&report, r)) {
        let (interrupted, kept): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| {
            !r.warmup && series_of(r) == series_of(&last) && r.concurrency == last.concurrency
        });
        // The interrupted level is measured again in one go; its first attempt's requests are
        // set aside before the records file drops them, so nothing measured is lost.
        let aside = records::interrupted_path(records_path);
        records::append_records(&aside, &interrupted)?;
        records::rewrite_records(records_path, &kept)?;
        report.warnings.push(format!(
            "{}: measured again after an interruption; the {} requests of the first attempt \
             are kept in {}",
            level_label(&last.scenario, last.mode, last.concurrency, last.cache),
            interrupted.len(),
            aside.file_name().unwrap_or_default().to_string_lossy()
        ));
        if let Some(series) = report
            .series
            .iter_mut()
            .find(|s| (s.scenario.as_str(), s.mode, s.cache) == series_of(&last))
        {
            if last.mode.is_open_loop() {
                let before = last.concurrency.saturating_sub(1) as usize;
                series.levels.truncate(before);
            } else {
                series.levels.retain(|l| l.concurrency != last.concurrency);
            }
        }
    }
    report.warnings.retain(|w| !w.contains(WAS_INTERRUPTED));
    let done = report
        .series
        .iter()
        .map(|s| ((s.scenario.clone(), s.mode, s.cache), s.levels.len()))
        .collect();
    Ok((report, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real run (llama.cpp on CPU, shipped in data/) stopped after its last level,
    /// cpu-1024 burst @8 (8 requests, the last in its records file), with `edit` applied to
    /// its report; returns what `resume` leaves and sets aside.
    fn resumed(edit: impl FnOnce(&mut Report)) -> (Report, DoneLevels, usize, Vec<RequestRecord>) {
        // Read at run time: a build cache shared by checkouts can hold this binary built in
        // another one.
        let root = std::env::var("CARGO_MANIFEST_DIR").unwrap();
        let data = format!("{root}/../data/reports/llama-cpu-tiny-llama");
        let mut report = infermeter_report::load_report(
            &std::fs::read_to_string(format!("{data}.json")).unwrap(),
        )
        .unwrap();
        edit(&mut report);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json.records.jsonl");
        std::fs::copy(format!("{data}.records.jsonl"), &path).unwrap();
        let (report, done) = resume(report, &path).unwrap();
        let kept = records::read_records(&path).unwrap().len();
        let aside = dir.path().join("report.json.records.interrupted.jsonl");
        let aside = if aside.exists() {
            records::read_records(&aside).unwrap()
        } else {
            Vec::new()
        };
        (report, done, kept, aside)
    }

    fn done_in(done: &DoneLevels, scenario: &str, mode: LoadMode) -> usize {
        done[&(scenario.to_string(), mode, None)]
    }

    #[test]
    fn a_run_stopped_between_levels_keeps_every_level() {
        let (report, done, kept, aside) = resumed(|_| {});
        assert_eq!((kept, aside.len()), (69, 0));
        assert_eq!(done_in(&done, "cpu-1024", LoadMode::Burst), 2);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn a_level_cut_short_is_set_aside_and_measured_again() {
        let flagged = |r: &mut Report| {
            r.warnings.push(format!(
                "cpu-1024 burst @8 {WAS_INTERRUPTED}: its figures cover only the requests finished before the stop"
            ))
        };
        // The process died in the level: it never reached the report.
        let died = |r: &mut Report| {
            let series = r
                .series
                .iter_mut()
                .find(|s| s.scenario == "cpu-1024" && s.mode == LoadMode::Burst);
            series.unwrap().levels.retain(|l| l.concurrency != 8);
        };
        for edit in [&flagged as &dyn Fn(&mut Report), &died] {
            let (report, done, kept, aside) = resumed(edit);
            assert_eq!((kept, aside.len()), (61, 8));
            assert!(aside
                .iter()
                .all(|r| r.scenario == "cpu-1024" && r.concurrency == 8));
            assert_eq!(done_in(&done, "cpu-1024", LoadMode::Burst), 1);
            assert_eq!(done_in(&done, "cpu-1024", LoadMode::Peak), 2);
            assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
            assert!(report.warnings[0].starts_with("cpu-1024 burst @8: measured again"));
        }
    }
}
