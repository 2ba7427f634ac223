//! Reports named on the command line of `view` and `export`: read, validated before anything is
//! served or written, and given a name that needs no escaping. Other tools' result files (vLLM
//! bench serve, AIPerf, guidellm, inference-perf, and folders of them) are read into reports by
//! the report crate's converters, exactly as the viewer reads them ([`read_imports`], which
//! `import` and `summary` use too). A folder holding an `index.json` (a sweep's output folder)
//! stands for the reports it lists, in its order ([`report_paths`]). One report read for a
//! command that takes one (`summary`, `validate`, `merge`, `fit`, `bench-soak`):
//! [`read_report`].

use std::path::{Path, PathBuf};

use infermeter_report::import::{self, Format, Input};
use infermeter_report::index::{IndexError, ReportIndex};
use infermeter_report::{LoadError, Report};

/// A report file, validated.
pub struct ReportFile {
    /// `<n>-<file name>` (n from 1) with anything but `[A-Za-z0-9._-]` replaced: safe in a URL
    /// and in HTML, and two reports with the same file name stay apart.
    pub name: String,
    /// The file's text as it was read (what is served or inlined: nothing is lost).
    pub text: String,
    pub report: Report,
}

/// Why a report named on the command line cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ReportFileError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a valid report: {reason}", path.display())]
    Invalid { path: PathBuf, reason: LoadError },
    #[error("{} holds neither an index.json (the list of reports a sweep writes) nor a result file of vLLM bench serve, AIPerf, guidellm or inference-perf", .0.display())]
    NothingInFolder(PathBuf),
    #[error("{}: {reason}", path.display())]
    BadIndex { path: PathBuf, reason: IndexError },
    #[error("{} lists no report: no configuration of its sweep measured a level (its \"sweep\" section says why, its logs/ folder holds the servers' output)", path.display())]
    EmptyIndex { path: PathBuf },
    #[error(transparent)]
    Import(#[from] import::ImportError),
}

/// Reads and validates every report, in order; the first problem wins. Each path is an
/// infermeter report, or other tools' files (a folder of them) imported into the reports they
/// make, served as the report written.
pub fn read_reports(paths: &[PathBuf]) -> Result<Vec<ReportFile>, ReportFileError> {
    let mut files = Vec::with_capacity(paths.len());
    for path in &report_paths(paths)? {
        let text = (!path.is_dir()).then(|| read(path)).transpose()?;
        let n = files.len() + 1;
        match text {
            Some(text) if !is_import(path, Some(&text)) => {
                let report = infermeter_report::load_report(&text).map_err(|reason| {
                    ReportFileError::Invalid {
                        path: path.clone(),
                        reason,
                    }
                })?;
                files.push(ReportFile {
                    name: safe_name(n, path),
                    text,
                    report,
                });
            }
            _ => {
                for (i, (_, report)) in read_imports(std::slice::from_ref(path))?
                    .into_iter()
                    .enumerate()
                {
                    let text = infermeter_report::pretty_json::to_pretty_json(&report)
                        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                        .expect("a report serialises");
                    files.push(ReportFile {
                        name: safe_name(n + i, &path.with_extension("imported.json")),
                        text,
                        report,
                    });
                }
            }
        }
    }
    Ok(files)
}

/// The paths with each folder that holds an `index.json` (a sweep's) replaced by the reports it
/// lists, relative to it (and kept inside it); other paths as they are.
pub fn report_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReportFileError> {
    let mut files = Vec::new();
    for path in paths {
        let index_path = path.join("index.json");
        if !path.is_dir() || !index_path.is_file() {
            files.push(path.clone());
            continue;
        }
        let text = read(&index_path)?;
        let bad = |reason| ReportFileError::BadIndex {
            path: index_path.clone(),
            reason,
        };
        let index = ReportIndex::parse(&text).map_err(bad)?;
        index.check_paths().map_err(bad)?;
        if index.reports.is_empty() {
            return Err(ReportFileError::EmptyIndex { path: index_path });
        }
        files.extend(index.reports.iter().map(|entry| path.join(&entry.path)));
    }
    Ok(files)
}

/// Whether `path` is for the importers rather than an infermeter report: a folder, or a file
/// whose content (`text`) is another tool's.
pub fn is_import(path: &Path, text: Option<&str>) -> bool {
    path.is_dir()
        || text
            .and_then(import::detect)
            .is_some_and(|f| f != Format::Infermeter)
}

/// The reports other tools' result files make (a sweep's files join into one), each with the
/// names of the files it was read from. A folder stands for the result files in it; an AIPerf
/// summary takes the `profile_export.jsonl` beside it unless that is named too.
pub fn read_imports(paths: &[PathBuf]) -> Result<Vec<(Vec<String>, Report)>, ReportFileError> {
    let mut files: Vec<(String, String)> = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = folder_files(path)?;
            if found.is_empty() {
                return Err(ReportFileError::NothingInFolder(path.clone()));
            }
            files.extend(found);
        } else {
            let text = read(path)?;
            let summary = import::detect(&text) == Some(Format::AiperfSummary);
            files.push((path.display().to_string(), text));
            let records = path.with_file_name("profile_export.jsonl");
            if summary && records.is_file() && !paths.contains(&records) {
                files.push((records.display().to_string(), read(&records)?));
            }
        }
    }
    let inputs: Vec<Input<'_>> = files
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    let reports = import::read(&inputs)?;
    Ok(reports
        .into_iter()
        .map(|report| {
            let names = report
                .metadata
                .provenance
                .as_ref()
                .map(|p| p.files.clone())
                .unwrap_or_default();
            (names, report)
        })
        .collect())
}

/// The result files of a folder, by name: JSON and JSONL files whose content is a tool's
/// format. inference-perf's summary of every stage is left out when its stages are there.
fn folder_files(dir: &Path) -> Result<Vec<(String, String)>, ReportFileError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ReportFileError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    paths.sort();
    let mut found = Vec::new();
    for path in paths {
        let text = read(&path)?;
        if matches!(import::detect(&text), Some(f) if f != Format::Infermeter) {
            found.push((path.display().to_string(), text));
        }
    }
    let has_stages = found
        .iter()
        .any(|(name, _)| name.contains("stage_") && name.ends_with("_lifecycle_metrics.json"));
    if has_stages {
        found.retain(|(name, _)| !name.ends_with("summary_lifecycle_metrics.json"));
    }
    // A summary before its records, so each pairs with the one in its folder.
    found.sort_by_key(|(_, text)| import::detect(text) == Some(Format::AiperfRecords));
    Ok(found)
}

fn read(path: &Path) -> Result<String, ReportFileError> {
    std::fs::read_to_string(path).map_err(|source| ReportFileError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn safe_name(n: usize, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.json".into());
    let safe: String = file
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{n}-{safe}")
}

/// Loads a report file with an error that names the file: an infermeter report, or another
/// tool's result file (or a folder of them) imported as one.
pub fn read_report(path: &Path) -> Result<Report, String> {
    let text = (!path.is_dir())
        .then(|| std::fs::read_to_string(path))
        .transpose()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if is_import(path, text.as_deref()) {
        let mut reports = read_imports(&[path.to_path_buf()]).map_err(|e| e.to_string())?;
        return match reports.len() {
            1 => Ok(reports.remove(0).1),
            n => Err(format!(
                "{} makes {n} reports; name its files one report at a time",
                path.display()
            )),
        };
    }
    infermeter_report::load_report(text.as_deref().unwrap_or_default())
        .map_err(|e| describe(path, &e))
}

fn describe(path: &Path, e: &LoadError) -> String {
    match e {
        LoadError::Invalid(problems) => {
            let mut s = format!("{} is inconsistent:", path.display());
            for p in problems {
                s.push_str(&format!("\n  - {p}"));
            }
            s
        }
        other => format!("{}: {other}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_numbered_and_safe_anywhere() {
        assert_eq!(safe_name(1, Path::new("runs/a.json")), "1-a.json");
        assert_eq!(
            safe_name(2, Path::new("my run <\"x\">.json")),
            "2-my_run___x__.json"
        );
    }

    #[test]
    fn a_missing_or_invalid_report_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let err = read_reports(std::slice::from_ref(&missing)).err().unwrap();
        assert!(err.to_string().starts_with("cannot read "), "{err}");
        assert!(err.to_string().contains("missing.json"), "{err}");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        let err = read_reports(&[bad]).err().unwrap().to_string();
        assert!(err.contains("bad.json is not a valid report: "), "{err}");
    }

    #[test]
    fn a_folder_with_an_index_stands_for_the_reports_it_lists() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().to_path_buf();
        // Without an index, a folder is the importers' (other tools' result files).
        assert_eq!(
            report_paths(std::slice::from_ref(&folder)).unwrap(),
            std::slice::from_ref(&folder)
        );
        let err = read_reports(std::slice::from_ref(&folder)).err().unwrap();
        assert!(
            err.to_string().contains("holds neither an index.json"),
            "{err}"
        );
        let index = folder.join("index.json");
        std::fs::write(&index, r#"{"reports": [{"path": "b.json"}, "a.json"]}"#).unwrap();
        let other = PathBuf::from("c.json");
        assert_eq!(
            report_paths(&[folder.clone(), other.clone()]).unwrap(),
            [folder.join("b.json"), folder.join("a.json"), other]
        );
        std::fs::write(&index, r#"{"reports": ["../secret.json"]}"#).unwrap();
        let err = report_paths(std::slice::from_ref(&folder)).unwrap_err();
        assert!(err.to_string().contains("must not leave"), "{err}");
        std::fs::write(&index, r#"{"reports": []}"#).unwrap();
        let err = report_paths(std::slice::from_ref(&folder)).unwrap_err();
        assert!(err.to_string().contains("lists no report"), "{err}");
    }
}
