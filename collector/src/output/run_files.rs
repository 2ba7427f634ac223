//! Where a run writes: its report, rewritten whole after every level, and its records,
//! appended one by one as requests finish.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use infermeter_report::{Report, RequestRecord};

use super::records::{self, RecordWriter, RecordsError};
use super::{write_report, OutputError};

/// A run's report and records files.
pub struct RunFiles {
    report: PathBuf,
    records: RecordWriter,
    /// Records in the records file, those of a resumed run's earlier attempts included.
    count: AtomicU64,
}

impl RunFiles {
    /// Opens the records file beside `report`: continued when resuming (its records counted),
    /// else new.
    pub fn open(report: PathBuf, resume: bool) -> Result<RunFiles, RecordsError> {
        let records_path = records::records_path(&report);
        let count = if resume {
            records::read_records(&records_path).map_or(0, |r| r.len() as u64)
        } else {
            0
        };
        Ok(RunFiles {
            records: RecordWriter::open(&records_path, resume)?,
            report,
            count: AtomicU64::new(count),
        })
    }

    /// Appends a record; a failure is logged, and the run goes on.
    pub fn write_record(&self, r: &RequestRecord) {
        if let Err(e) = self.records.write(r) {
            tracing::error!("cannot append to {}: {e}", self.records.path().display());
        }
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Writes the report as it stands, with the records file's name and count.
    pub fn write_report(&self, report: &mut Report) -> Result<(), OutputError> {
        let _ = self.records.sync();
        report.records = Some(records::link(
            self.records.path(),
            self.count.load(Ordering::Relaxed),
        ));
        write_report(&self.report, report)
    }

    pub fn report_path(&self) -> &std::path::Path {
        &self.report
    }

    pub fn records_path(&self) -> &std::path::Path {
        self.records.path()
    }
}
