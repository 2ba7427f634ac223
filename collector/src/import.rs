//! `infermeter import FILE|DIR… -o report.json`: other benchmark tools' result files (vLLM
//! bench serve, AIPerf, guidellm, inference-perf) as an infermeter report, read by the report
//! crate's converters exactly as the viewer reads them. A folder stands for the result files in
//! it (an AIPerf artifact folder, an inference-perf report folder), told apart by content; an
//! AIPerf summary takes the `profile_export.jsonl` beside it. `view`, `export` and `summary`
//! read the same inputs through [`is_import`] and [`read_paths`].

use std::path::{Path, PathBuf};

use infermeter_report::import::{self, Format, Input};
use infermeter_report::Report;

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
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} holds no result file of vLLM bench serve, AIPerf, guidellm or inference-perf", .0.display())]
    NothingInFolder(PathBuf),
    #[error(transparent)]
    Format(#[from] import::ImportError),
    #[error("the inputs make {0} reports (different tools, models, or the same load twice); import them one report at a time")]
    Several(usize),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Imports the inputs and writes the report; returns what to print.
pub fn run(args: &ImportArgs) -> Result<String, ImportError> {
    let reports = read_paths(&args.inputs)?;
    let [(names, report)] = reports.as_slice() else {
        return Err(ImportError::Several(reports.len()));
    };
    output::prepare(&args.out, args.force, false)?;
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

/// Whether `path` is for the importers rather than an infermeter report: a folder, or a file
/// whose content is another tool's.
pub fn is_import(path: &Path, text: Option<&str>) -> bool {
    path.is_dir()
        || text
            .and_then(import::detect)
            .is_some_and(|f| f != Format::Infermeter)
}

/// The reports the inputs make, each with the names of the files it was read from.
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<(Vec<String>, Report)>, ImportError> {
    let mut files: Vec<(String, String)> = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = folder_files(path)?;
            if found.is_empty() {
                return Err(ImportError::NothingInFolder(path.clone()));
            }
            files.extend(found);
        } else {
            let text = read(path)?;
            let summary = import::detect(&text) == Some(Format::AiperfSummary);
            files.push((path.display().to_string(), text));
            // An AIPerf summary's records, beside it, unless given too.
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
fn folder_files(dir: &Path) -> Result<Vec<(String, String)>, ImportError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ImportError::Read {
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

fn read(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })
}
