//! `infermeter import FILE|DIR… -o report.json`: other benchmark tools' result files (vLLM
//! bench serve, AIPerf, guidellm, inference-perf) as an infermeter report, read by the report
//! crate's converters exactly as the viewer reads them (`output::report_files::read_imports`,
//! which `view`, `export` and `summary` use for the same inputs). A folder stands for the result
//! files in it (an AIPerf artifact folder, an inference-perf report folder), told apart by
//! content; an AIPerf summary takes the `profile_export.jsonl` beside it.

use std::path::PathBuf;

use crate::output::report_files::{read_imports, ReportFileError};
use crate::output::{self, OutputError};

#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// Result files of `vllm bench serve --save-result`, AIPerf (profile_export_aiperf.json,
    /// with profile_export.jsonl), guidellm (benchmarks.json) or inference-perf
    /// (stage_N_lifecycle_metrics.json), or folders holding them. A sweep's files join into one
    /// report, a level each.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// The report to write.
    #[arg(short, long, value_name = "report.json")]
    pub out: PathBuf,
    /// Overwrite an existing report.
    #[arg(long)]
    pub force: bool,
}

/// Why the inputs could not be imported. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Files(#[from] ReportFileError),
    #[error("the inputs make {0} reports (different tools, models, or the same load twice); import them one report at a time")]
    Several(usize),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Imports the inputs and writes the report; returns what to print.
pub fn run(args: &ImportArgs) -> Result<String, ImportError> {
    let reports = read_imports(&args.inputs)?;
    let [(names, report)] = reports.as_slice() else {
        return Err(ImportError::Several(reports.len()));
    };
    output::prepare(&args.out, args.force, false, false)?;
    output::write_report(&args.out, report)?;
    let provenance = report.metadata.provenance.as_ref();
    let levels: usize = report.series.iter().map(|s| s.levels.len()).sum();
    let mut lines = vec![format!(
        "imported {} ({}; {levels} level{}) into {}",
        names.join(", "),
        provenance.map_or("infermeter", |p| p.tool.as_str()),
        if levels == 1 { "" } else { "s" },
        args.out.display()
    )];
    lines.extend(
        provenance
            .into_iter()
            .flat_map(|p| p.absent.values())
            .map(|why| format!("not in the files: {why}")),
    );
    Ok(lines.join("\n"))
}
