//! Writing the report: atomically (temp file, fsync, rename), and never over an existing report
//! unless asked.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use infermeter_report::pretty_json::to_pretty_json;
use infermeter_report::{load_report, LoadError, Report, RunStatus};

/// Writes `bytes` to `path` so a reader sees either the old file or the complete new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        // Persist the rename itself.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes the report atomically.
pub fn write_report(path: &Path, report: &Report) -> Result<(), OutputError> {
    let write = || {
        let mut text = to_pretty_json(report).map_err(std::io::Error::other)?;
        text.push(b'\n');
        write_atomic(path, &text)
    };
    write().map_err(|source| OutputError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// How the run treats an existing report at the output path.
#[derive(Debug)]
pub enum Start {
    /// Nothing there (or `--force`): start fresh.
    Fresh,
    /// `--resume` of a partial report.
    Resume(Box<Report>),
    /// `--resume --search` of a complete report: the search reuses the levels it holds and
    /// measures only those it needs and the report lacks (e.g. to find the limit of a sweep
    /// whose every level met the SLO).
    Extend(Box<Report>),
}

/// Why the report cannot be written where `--out` says. Each names the file and the flag to use.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("--resume: {} does not exist; start the run without --resume", .0.display())]
    NothingToResume(PathBuf),
    #[error("--resume: cannot read {}", .path.display())]
    ResumeUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--resume: {} is not a usable report", .path.display())]
    ResumeUnusable { path: PathBuf, source: LoadError },
    #[error("--resume: {} is already complete; nothing to resume (add --search to search further from the levels it holds)", .0.display())]
    AlreadyComplete(PathBuf),
    #[error("{} already exists; pass --force to overwrite it, --resume to continue a partial run, or choose another --out", .0.display())]
    Exists(PathBuf),
    #[error("the directory of --out {} does not exist", .0.display())]
    NoDirectory(PathBuf),
    #[error("cannot write the report {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Decides whether the run may write to `path`; `search`: the run searches (`--search`), which
/// may continue a complete report.
pub fn prepare(path: &Path, force: bool, resume: bool, search: bool) -> Result<Start, OutputError> {
    let exists = path.exists();
    if resume {
        if !exists {
            return Err(OutputError::NothingToResume(path.to_path_buf()));
        }
        let text = fs::read_to_string(path).map_err(|source| OutputError::ResumeUnreadable {
            path: path.to_path_buf(),
            source,
        })?;
        let report = load_report(&text).map_err(|source| OutputError::ResumeUnusable {
            path: path.to_path_buf(),
            source,
        })?;
        return match report.status {
            RunStatus::Partial { .. } => Ok(Start::Resume(Box::new(report))),
            RunStatus::Complete if search => Ok(Start::Extend(Box::new(report))),
            RunStatus::Complete => Err(OutputError::AlreadyComplete(path.to_path_buf())),
        };
    }
    if exists && !force {
        return Err(OutputError::Exists(path.to_path_buf()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(OutputError::NoDirectory(path.to_path_buf()));
        }
    }
    Ok(Start::Fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_overwrite_without_force() {
        let dir = std::env::temp_dir().join(format!("infermeter-out-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("report.json");
        assert!(matches!(
            prepare(&path, false, false, false),
            Ok(Start::Fresh)
        ));
        write_atomic(&path, b"{}").unwrap();
        let err = prepare(&path, false, false, false).unwrap_err().to_string();
        assert!(
            err.contains("report.json") && err.contains("--force"),
            "{err}"
        );
        assert!(matches!(
            prepare(&path, true, false, false),
            Ok(Start::Fresh)
        ));
        assert!(prepare(&path, false, true, false)
            .unwrap_err()
            .to_string()
            .contains("not a usable report"));
        assert_eq!(fs::read(&path).unwrap(), b"{}");
        fs::remove_dir_all(dir).unwrap();
    }
}
