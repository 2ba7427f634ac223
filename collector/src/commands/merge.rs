//! `infermeter merge SHARD.json… -o report.json`: one report from the shards of a sharded run
//! (`run --shard I/N`). Every level is rebuilt from all shards' records through the report
//! crate's aggregation, as a single run's would be; the records of every shard are written too,
//! as one JSONL file beside the merged report, so nothing measured is lost.

mod check;
mod rebuild;

use std::path::{Path, PathBuf};

use infermeter_report::{Report, RequestRecord};

use crate::output::records::{self, RecordsError};
use crate::output::{self, OutputError};
pub use check::MergeMismatch;

#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The shards' reports (`run --shard I/N --out …`), each with its records file beside it.
    #[arg(required = true, value_name = "SHARD.json")]
    pub shards: Vec<PathBuf>,
    /// The merged report; its records go to `<out>.records.jsonl`.
    #[arg(short, long, value_name = "report.json")]
    pub out: PathBuf,
    /// Overwrite an existing merged report.
    #[arg(long)]
    pub force: bool,
}

/// Why the shards could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The message names the file.
    #[error("{0}")]
    Unreadable(String),
    #[error("{}: the report names no records file, and merge rebuilds every level from the records; rerun the shard, or give the report its `records` link", .0.display())]
    NoRecords(PathBuf),
    #[error("cannot read the records of shard report {}; copy its records file beside it", .report.display())]
    Records {
        report: PathBuf,
        source: RecordsError,
    },
    #[error(transparent)]
    Mismatch(#[from] MergeMismatch),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("cannot write the merged records")]
    WriteRecords(#[source] RecordsError),
}

/// One shard's report and records, as read.
pub struct Shard {
    /// The report file, as given.
    pub file: PathBuf,
    pub report: Report,
    pub records: Vec<RequestRecord>,
}

impl Shard {
    fn read(file: &Path) -> Result<Shard, MergeError> {
        let report =
            crate::output::report_files::read_report(file).map_err(MergeError::Unreadable)?;
        let link = report
            .records
            .as_ref()
            .ok_or_else(|| MergeError::NoRecords(file.to_path_buf()))?;
        let path = file.with_file_name(&link.path);
        let records = records::read_records(&path).map_err(|source| MergeError::Records {
            report: file.to_path_buf(),
            source,
        })?;
        Ok(Shard {
            file: file.to_path_buf(),
            report,
            records,
        })
    }

    /// How messages name the shard's file.
    fn name(&self) -> String {
        self.file.display().to_string()
    }
}

/// Merges the shards and writes the merged report and records; returns what to print.
pub fn merge(args: &MergeArgs) -> Result<String, MergeError> {
    let mut shards = args
        .shards
        .iter()
        .map(|f| Shard::read(f))
        .collect::<Result<Vec<_>, _>>()?;
    check::check(&mut shards)?;
    // Before any work: refuse to overwrite without --force.
    output::prepare(&args.out, args.force, false, false)?;
    let (mut report, merged_records) = rebuild::rebuild(&shards);
    let records_path = records::records_path(&args.out);
    records::rewrite_records(&records_path, &merged_records).map_err(MergeError::WriteRecords)?;
    report.records = Some(records::link(&records_path, merged_records.len() as u64));
    output::write_report(&args.out, &report)?;
    let mut lines = vec![format!(
        "merged {} shards ({} records) into {} and {}",
        shards.len(),
        merged_records.len(),
        args.out.display(),
        records_path.display()
    )];
    lines.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    Ok(lines.join("\n"))
}
