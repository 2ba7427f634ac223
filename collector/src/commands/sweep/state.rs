//! The sweep's folder and its `index.json`: a report and a log per configuration, the index's
//! `reports` listing those with a report (so `view DIR` opens them) and its `sweep` section
//! every configuration's state, rewritten (atomically) at every change so a killed sweep
//! leaves it current, and read back by `--resume`.

use std::path::{Path, PathBuf};

use infermeter_report::index::{
    ComparisonEntry, ConfigurationState, IndexEntry, ReportIndex, Sweep, SweepConfiguration,
};
use infermeter_report::{load_report, Parameters, Report};

use super::plan::SweepPlan;
use crate::output::write_atomic;

/// Why the folder cannot hold the sweep.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot create {}", .path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {reason}", .path.display())]
    BadIndex {
        path: PathBuf,
        reason: infermeter_report::index::IndexError,
    },
    #[error("{} holds a sweep already: --resume continues it, --force starts it over (its reports are overwritten), or choose another --out-dir", .0.display())]
    Exists(PathBuf),
    #[error("{} holds an index.json that is not a sweep's; choose another --out-dir", .0.display())]
    NotASweep(PathBuf),
    #[error("--resume: {} holds no sweep (no index.json with a \"sweep\" section); start it without --resume", .0.display())]
    NothingToResume(PathBuf),
    #[error("--resume: the sweep in {} was started with other settings: {}. Resume with the same settings, or add --accept-changes to go on with these (the finished reports stay as they were measured)", .dir.display(), .changes.join("; "))]
    Changed { dir: PathBuf, changes: Vec<String> },
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a sweep starts in its folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct Start {
    /// Continue the sweep there.
    pub resume: bool,
    /// Start over where a sweep is.
    pub force: bool,
    /// Resume although the settings changed.
    pub accept_changes: bool,
}

/// What differs between the settings an earlier sweep recorded and this one's, in words (a
/// setting the earlier index did not record is not compared).
fn changes(earlier: &Sweep, now: &Sweep) -> Vec<String> {
    let mut changes = Vec::new();
    let mut differs = |what: &str, was: String, is: String| {
        if was != is {
            changes.push(format!("{what} changed from {was} to {is}"));
        }
    };
    let words = |v: &Option<String>| v.as_deref().map_or("none".into(), |s| format!("`{s}`"));
    differs(
        "the serve command",
        words(&earlier.serve),
        words(&now.serve),
    );
    differs("the hook", words(&earlier.hook), words(&now.hook));
    if earlier.run.is_some() {
        differs("the suite", words(&earlier.suite), words(&now.suite));
        let run = |r: &Option<Vec<String>>| {
            format!(
                "`{}`",
                r.iter().flatten().cloned().collect::<Vec<_>>().join(" ")
            )
        };
        differs("the run options", run(&earlier.run), run(&now.run));
    }
    if let Some(planned) = &earlier.planned {
        let list = |l: &[Parameters]| {
            let names: Vec<String> = l.iter().map(|p| format!("[{p}]")).collect();
            names.join(" ")
        };
        differs(
            "the configurations",
            list(planned),
            list(now.planned.as_deref().unwrap_or_default()),
        );
    }
    changes
}

/// The sweep's folder and index.
pub struct SweepState {
    dir: PathBuf,
    sweep: Sweep,
    /// The index entry of each configuration's report, while it has one.
    entries: Vec<Option<IndexEntry>>,
}

/// A file name for a configuration: the parameters that differ between configurations,
/// `mns-128_tp-2`, with anything but `[A-Za-z0-9.-]` as `_` (all of them when none differ).
fn file_stem(parameters: &Parameters, all: &[Parameters]) -> String {
    let differs = |name: &str| all.iter().any(|c| c.get(name) != parameters.get(name));
    let mut named: Vec<(&str, &str)> = parameters.iter().filter(|(n, _)| differs(n)).collect();
    if named.is_empty() {
        named = parameters.iter().collect();
    }
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let stem: Vec<String> = named
        .iter()
        .map(|(n, v)| format!("{}-{}", safe(n), safe(v)))
        .collect();
    let stem = stem.join("_");
    stem.chars().take(120).collect()
}

impl SweepState {
    /// The folder made ready: a fresh sweep (`force` over an earlier one), or an earlier sweep
    /// continued (`resume`), its configurations matched by their parameters; the plan's new
    /// ones added, the earlier ones it no longer has kept.
    pub fn open(plan: &SweepPlan, start: Start) -> Result<SweepState, StateError> {
        let Start {
            resume,
            force,
            accept_changes,
        } = start;
        let dir = plan.out_dir.clone();
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).map_err(|source| StateError::Create {
            path: logs.clone(),
            source,
        })?;
        let earlier = read_sweep(&dir)?;
        let earlier = match (earlier, resume, force) {
            (Some(_), false, false) => return Err(StateError::Exists(dir)),
            (None, true, _) => return Err(StateError::NothingToResume(dir)),
            (Some(sweep), true, _) => Some(sweep),
            _ => None,
        };
        let mut sweep = Sweep {
            name: plan.name.clone(),
            serve: plan.serve.as_ref().map(|t| t.as_str().to_string()),
            base_url: plan.base_url.as_str().to_string(),
            hook: plan.hook.as_ref().map(|t| t.as_str().to_string()),
            suite: plan.suite.clone(),
            run: Some(
                plan.run_options
                    .iter()
                    .map(|t| t.as_str().to_string())
                    .collect(),
            ),
            planned: Some(plan.configurations.clone()),
            configurations: Vec::new(),
        };
        if let Some(earlier) = earlier.as_ref().filter(|_| !accept_changes) {
            let changes = changes(earlier, &sweep);
            if !changes.is_empty() {
                return Err(StateError::Changed { dir, changes });
            }
        }
        let mut taken: Vec<String> = Vec::new();
        if let Some(earlier) = &earlier {
            taken.extend(earlier.configurations.iter().map(|c| c.report.clone()));
        }
        for parameters in &plan.configurations {
            let known = earlier.as_ref().and_then(|e| e.configuration(parameters));
            let configuration = match known {
                Some(known) => known.clone(),
                None => new_configuration(parameters, &plan.configurations, &mut taken),
            };
            sweep.configurations.push(configuration);
        }
        // Nothing measured is dropped: what the plan no longer has stays listed.
        if let Some(earlier) = earlier {
            let gone: Vec<SweepConfiguration> = earlier
                .configurations
                .into_iter()
                .filter(|c| sweep.configuration(&c.parameters).is_none())
                .collect();
            sweep.configurations.extend(gone);
        }
        let mut state = SweepState {
            entries: vec![None; sweep.configurations.len()],
            dir,
            sweep,
        };
        for i in 0..state.entries.len() {
            state.refresh_entry(i);
        }
        state.save()?;
        Ok(state)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    /// Whether any configuration has a report the index lists.
    pub fn has_reports(&self) -> bool {
        self.entries.iter().any(Option::is_some)
    }

    pub fn configurations(&self) -> &[SweepConfiguration] {
        &self.sweep.configurations
    }

    pub fn configuration(&mut self, i: usize) -> &mut SweepConfiguration {
        &mut self.sweep.configurations[i]
    }

    pub fn report_path(&self, i: usize) -> PathBuf {
        self.dir.join(&self.sweep.configurations[i].report)
    }

    pub fn log_path(&self, i: usize) -> PathBuf {
        self.dir.join(&self.sweep.configurations[i].log)
    }

    /// The configuration's report as it is on disk, if it has a usable one.
    pub fn report(&self, i: usize) -> Option<Report> {
        let text = std::fs::read_to_string(self.report_path(i)).ok()?;
        load_report(&text).ok()
    }

    /// Reads configuration `i`'s report again for the index's list (after it was measured).
    pub fn refresh_entry(&mut self, i: usize) {
        let configuration = &self.sweep.configurations[i];
        self.entries[i] = self
            .report(i)
            .filter(|r| !r.series.is_empty())
            .map(|report| {
                let mut entry = IndexEntry::of_report(configuration.report.clone(), &report);
                let note = match (&configuration.state, &configuration.failure) {
                    (_, Some(failure)) => format!(" · partial: {}", failure.reason),
                    (ConfigurationState::Complete, None) => String::new(),
                    (state, None) => format!(" · partial ({state:?})").to_lowercase(),
                };
                entry.description = Some(format!("{}{note}", configuration.parameters));
                entry
            });
    }

    /// Writes the index as it stands.
    pub fn save(&mut self) -> Result<(), StateError> {
        let reports: Vec<IndexEntry> = self.entries.iter().flatten().cloned().collect();
        // The landing page's link to every measured configuration at once, compared.
        let comparisons = (reports.len() >= 2)
            .then(|| ComparisonEntry {
                title: "Every configuration of the sweep, compared".into(),
                paths: reports.iter().map(|e| e.path.clone()).collect(),
                synthetic: reports.iter().any(|e| e.synthetic),
            })
            .into_iter()
            .collect();
        let index = ReportIndex {
            reports,
            comparisons,
            sweep: Some(self.sweep.clone()),
        };
        let path = self.index_path();
        let mut text = index.to_json();
        text.push('\n');
        write_atomic(&path, text.as_bytes()).map_err(|source| StateError::Write { path, source })
    }
}

/// A configuration not measured yet, its files named apart from those `taken`.
fn new_configuration(
    parameters: &Parameters,
    all: &[Parameters],
    taken: &mut Vec<String>,
) -> SweepConfiguration {
    let stem = file_stem(parameters, all);
    let mut report = format!("{stem}.json");
    let mut n = 2;
    while taken.contains(&report) {
        report = format!("{stem}-{n}.json");
        n += 1;
    }
    taken.push(report.clone());
    let log = format!("logs/{}.log", report.trim_end_matches(".json"));
    SweepConfiguration {
        parameters: parameters.clone(),
        report,
        log,
        ..SweepConfiguration::default()
    }
}

/// The sweep section of `dir/index.json`, if there is one.
fn read_sweep(dir: &Path) -> Result<Option<Sweep>, StateError> {
    let path = dir.join("index.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|source| StateError::Read {
        path: path.clone(),
        source,
    })?;
    match Sweep::from_index(&text) {
        Ok(Some(sweep)) => Ok(Some(sweep)),
        Ok(None) => Err(StateError::NotASweep(dir.to_path_buf())),
        Err(reason) => Err(StateError::BadIndex { path, reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parameters(pairs: &[(&str, &str)]) -> Parameters {
        pairs.iter().copied().collect()
    }

    #[test]
    fn files_are_named_by_the_parameters_that_differ() {
        let all = [
            parameters(&[("model", "Qwen/Qwen3-8B"), ("mns", "64"), ("tp", "1")]),
            parameters(&[("model", "Qwen/Qwen3-8B"), ("mns", "128"), ("tp", "1")]),
        ];
        assert_eq!(file_stem(&all[1], &all), "mns-128");
        assert_eq!(
            file_stem(&all[0], &all[..1]),
            "model-Qwen_Qwen3-8B_mns-64_tp-1"
        );
        let mut taken = vec!["mns-128.json".to_string()];
        let c = new_configuration(&all[1], &all, &mut taken);
        assert_eq!(
            (c.report.as_str(), c.log.as_str()),
            ("mns-128-2.json", "logs/mns-128-2.log")
        );
        assert_eq!(c.state, ConfigurationState::Pending);
    }
}
