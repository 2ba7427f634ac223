//! Per-request records as JSON Lines, written the moment each request completes so nothing
//! measured is lost if the run dies.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use infermeter_report::{RecordsLink, RequestRecord};

/// Why a records file cannot be read or written; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error("cannot open {}", .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} line {line}", .path.display())]
    BadLine {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot rewrite {}", .path.display())]
    Rewrite {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Appends records, one line and one `write` call each (no user-space buffer to lose).
#[derive(Debug)]
pub struct RecordWriter {
    path: PathBuf,
    file: Mutex<File>,
}

/// How a report names its records file (beside it) and their count.
pub fn link(records: &Path, count: u64) -> RecordsLink {
    RecordsLink {
        path: records
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        count,
    }
}

/// The records file that belongs to a report: `<report>.records.jsonl`.
pub fn records_path(report: &Path) -> PathBuf {
    let mut name = report.file_name().unwrap_or_default().to_os_string();
    name.push(".records.jsonl");
    report.with_file_name(name)
}

impl RecordWriter {
    /// Creates (truncates) or, with `append`, continues the file.
    pub fn open(path: &Path, append: bool) -> Result<RecordWriter, RecordsError> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)
            .map_err(|source| RecordsError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(RecordWriter {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&self, record: &RequestRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(&line)
    }

    pub fn sync(&self) -> std::io::Result<()> {
        self.file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .sync_all()
    }
}

/// Reads a records file. A torn last line (the process died mid-write) is skipped; any other
/// bad line is an error naming its line number.
pub fn read_records(path: &Path) -> Result<Vec<RequestRecord>, RecordsError> {
    let file = File::open(path).map_err(|source| RecordsError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|source| RecordsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let last = lines.len();
    let mut records = Vec::with_capacity(last);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(r) => records.push(r),
            Err(_) if i + 1 == last => {}
            Err(source) => {
                return Err(RecordsError::BadLine {
                    path: path.to_path_buf(),
                    line: i + 1,
                    source,
                })
            }
        }
    }
    Ok(records)
}

/// Where `--resume` sets aside the records of the level it measures again, beside the records
/// file: `<report>.records.interrupted.jsonl`.
pub fn interrupted_path(records: &Path) -> PathBuf {
    let name = records.file_name().unwrap_or_default().to_string_lossy();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    records.with_file_name(format!("{stem}.interrupted.jsonl"))
}

/// Appends `records` to the file at `path` (created if missing) and syncs it.
pub fn append_records(path: &Path, records: &[RequestRecord]) -> Result<(), RecordsError> {
    let writer = RecordWriter::open(path, true)?;
    records
        .iter()
        .try_for_each(|r| writer.write(r))
        .and_then(|()| writer.sync())
        .map_err(|source| RecordsError::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// Rewrites a records file keeping only `keep` (used by `--resume` to drop an unfinished level).
pub fn rewrite_records(path: &Path, keep: &[RequestRecord]) -> Result<(), RecordsError> {
    let rewrite = || {
        let mut text = Vec::new();
        for r in keep {
            serde_json::to_writer(&mut text, r).map_err(std::io::Error::other)?;
            text.push(b'\n');
        }
        crate::output::write_atomic(path, &text)
    };
    rewrite().map_err(|source| RecordsError::Rewrite {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use infermeter_report::LoadMode;

    fn record(index: u64) -> RequestRecord {
        RequestRecord {
            ttft_s: Some(0.1),
            e2e_s: Some(1.0),
            input_tokens: Some(10),
            output_tokens: Some(5),
            ..RequestRecord::ok("chatbot", LoadMode::Peak, index)
        }
    }

    #[test]
    fn round_trip_and_torn_last_line() {
        let dir = std::env::temp_dir().join(format!("infermeter-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
        let w = RecordWriter::open(&path, false).unwrap();
        w.write(&record(0)).unwrap();
        w.write(&record(1)).unwrap();
        drop(w);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"scenario\":")
            .unwrap();
        let back = read_records(&path).unwrap();
        assert_eq!(back, vec![record(0), record(1)]);
        rewrite_records(&path, &back[..1]).unwrap();
        assert_eq!(read_records(&path).unwrap(), vec![record(0)]);
        assert_eq!(
            records_path(Path::new("/x/out.json")),
            Path::new("/x/out.json.records.jsonl")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
