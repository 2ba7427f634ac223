//! Reports named on the command line of `view` and `export`: read, validated before anything is
//! served or written, and given a name that needs no escaping.

use std::path::{Path, PathBuf};

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
    #[error("cannot read report {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a valid report: {reason}", path.display())]
    Invalid { path: PathBuf, reason: LoadError },
}

/// Reads and validates every report, in order; the first problem wins.
pub fn read_reports(paths: &[PathBuf]) -> Result<Vec<ReportFile>, ReportFileError> {
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let text = std::fs::read_to_string(path).map_err(|source| ReportFileError::Read {
                path: path.clone(),
                source,
            })?;
            let report = infermeter_report::load_report(&text).map_err(|reason| {
                ReportFileError::Invalid {
                    path: path.clone(),
                    reason,
                }
            })?;
            Ok(ReportFile {
                name: safe_name(i + 1, path),
                text,
                report,
            })
        })
        .collect()
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
        assert!(err.to_string().starts_with("cannot read report "), "{err}");
        assert!(err.to_string().contains("missing.json"), "{err}");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        let err = read_reports(&[bad]).err().unwrap().to_string();
        assert!(err.contains("bad.json is not a valid report: "), "{err}");
    }
}
