//! Other benchmark tools' result files, read as reports: vLLM's `bench serve --save-result`
//! JSON, AIPerf's `profile_export_aiperf.json` (with the `profile_export.jsonl` records beside
//! it), guidellm's `benchmarks.json` and inference-perf's per-stage lifecycle reports. Pure, so
//! the viewer reads the files as they are, in the browser, and `infermeter import` writes the
//! same report.
//!
//! The format is told from the content, never the file name. Each figure is the tool's own (its
//! TTFT median is the report's TTFT median, to the digit); a figure the file lacks stays absent
//! and [`Provenance::absent`] says why, and where the tool defines a metric differently from
//! infermeter, the report's `measurement.pooling` says how.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::aggregate::open_loop_concurrency;
use crate::load::{load_report, LoadError};
use crate::schema::{
    Arrivals, EngineInfo, HardwareInfo, Level, LoadMode, Measurement, Metadata, ModelInfo,
    Provenance, Report, RunStatus, Scenario, Series, TokenSource, SCHEMA_VERSION,
};

mod aiperf;
mod guidellm;
mod inference_perf;
mod json;
mod level;
mod vllm;

/// The keys of [`Provenance::absent`]: what a tool's files lack.
pub mod absent {
    /// Per-request figures, so goodput.
    pub const PER_REQUEST: &str = "per_request";
    pub const POWER: &str = "power";
    /// A pooled per-token ITL.
    pub const ITL: &str = "itl";
    /// Stream gaps per request, so stalls and jitter.
    pub const STALLS: &str = "stalls";
    pub const MODEL: &str = "model";
    /// Requests in flight at a rate.
    pub const CONCURRENCY: &str = "concurrency";
    /// The server's own token counts (`usage`): the file has only a client tokenizer's.
    pub const SERVER_TOKENS: &str = "server_tokens";
}

/// One input: a file's name (for messages) and its text.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// The kinds of file read, told from their content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// infermeter's own report.
    Infermeter,
    /// `vllm bench serve --save-result` JSON.
    Vllm,
    /// AIPerf's `profile_export_aiperf.json`.
    AiperfSummary,
    /// AIPerf's per-request `profile_export.jsonl`.
    AiperfRecords,
    /// guidellm's `benchmarks.json`.
    Guidellm,
    /// inference-perf's `stage_N_lifecycle_metrics.json` (or its summary of every stage).
    InferencePerf,
}

impl Format {
    /// The format in words, as messages and the page name it.
    pub fn label(self) -> &'static str {
        match self {
            Format::Infermeter => "infermeter report",
            Format::Vllm => "vLLM bench serve result",
            Format::AiperfSummary => "AIPerf summary (profile_export_aiperf.json)",
            Format::AiperfRecords => "AIPerf records (profile_export.jsonl)",
            Format::Guidellm => "guidellm benchmarks.json",
            Format::InferencePerf => "inference-perf lifecycle metrics report",
        }
    }
}

/// The versions each reader was tested on, as the README and error messages state them.
pub const TESTED: [(&str, &str); 4] = [
    ("vLLM bench serve", vllm::TESTED),
    ("AIPerf", aiperf::TESTED),
    ("guidellm", guidellm::TESTED),
    ("inference-perf", inference_perf::TESTED),
];

/// Why a file could not be read: which file, the format it was taken for, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    pub file: String,
    /// The format detected, with its version when the file states one; `None` when the file
    /// is none of the formats read.
    pub format: Option<String>,
    pub message: String,
}

impl ImportError {
    /// The message without the file name: "AIPerf summary …: has no `request_count`".
    pub fn detail(&self) -> String {
        match &self.format {
            Some(format) => format!("{format}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.detail())
    }
}

impl std::error::Error for ImportError {}

/// The format of `text`, from its content: its keys, or for text that does not parse (a
/// truncated file), the keys that only that format writes near its start. An infermeter report
/// is known by its first key without parsing the whole text, so opening one costs no second
/// parse.
pub fn detect(text: &str) -> Option<Format> {
    let start = head(text, 512);
    if start.contains("\"schema_version\"") && !start.contains("\"aiperf_version\"") {
        return Some(Format::Infermeter);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => detect_value(&value),
        Err(_) => {
            let first_line = text.lines().next().unwrap_or("");
            if let Ok(value) = serde_json::from_str::<Value>(first_line) {
                if aiperf::is_record(&value) {
                    return Some(Format::AiperfRecords);
                }
            }
            sniff(text)
        }
    }
}

fn detect_value(value: &Value) -> Option<Format> {
    let object = value.as_object()?;
    let has = |key: &str| object.contains_key(key);
    if has("series") && has("scenarios") && has("schema_version") {
        Some(Format::Infermeter)
    } else if has("aiperf_version") || (has("input_config") && has("request_count")) {
        Some(Format::AiperfSummary)
    } else if has("benchmarks") && value.pointer("/metadata/guidellm_version").is_some() {
        Some(Format::Guidellm)
    } else if has("load_summary") && has("successes") {
        Some(Format::InferencePerf)
    } else if has("completed") && has("duration") && (has("backend") || has("endpoint_type")) {
        Some(Format::Vllm)
    } else if aiperf::is_record(value) {
        Some(Format::AiperfRecords)
    } else {
        None
    }
}

/// The first `bytes` of `text` (less, to end on a character).
fn head(text: &str, bytes: usize) -> &str {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Keys that name the format of a file that does not parse.
fn sniff(text: &str) -> Option<Format> {
    let head = head(text, 64 * 1024);
    [
        ("\"aiperf_version\"", Format::AiperfSummary),
        ("\"guidellm_version\"", Format::Guidellm),
        ("\"load_summary\"", Format::InferencePerf),
        ("\"endpoint_type\"", Format::Vllm),
        ("\"schema_version\"", Format::Infermeter),
    ]
    .into_iter()
    .find(|(key, _)| head.contains(key))
    .map(|(_, format)| format)
}

/// Reads every input into reports: an infermeter report is one report; other tools' files of
/// one tool and model join into one report, a level each (a vLLM sweep's files, AIPerf runs at
/// several concurrencies, inference-perf's stages), and an AIPerf summary takes the records
/// file given with it. A level measured twice starts a second report, so two runs of the same
/// load compare side by side.
pub fn read(inputs: &[Input<'_>]) -> Result<Vec<Report>, ImportError> {
    let mut reports: Vec<(usize, Report)> = Vec::new();
    let mut runs: Vec<(usize, Run)> = Vec::new();
    let records = aiperf::Records::find(inputs)?;
    for (position, input) in inputs.iter().enumerate() {
        let format = detect(input.text);
        let failed = |format: Option<String>, message: String| ImportError {
            file: input.name.to_string(),
            format,
            message,
        };
        match format {
            Some(Format::Infermeter) | None => {
                let report = load_report(input.text).map_err(|e| {
                    let message = match e {
                        LoadError::NotAReport(_) if format.is_none() => {
                            format!("{e}, nor a result file of {OTHER_TOOLS}")
                        }
                        e => e.to_string(),
                    };
                    failed(None, message)
                })?;
                reports.push((position, report));
            }
            Some(Format::AiperfRecords) => {} // read with its summary
            Some(format) => {
                let value: Value = serde_json::from_str(input.text).map_err(|e| {
                    failed(
                        Some(format.label().to_string()),
                        format!(
                            "not valid JSON at line {}, column {} ({}); the file may be cut short",
                            e.line(),
                            e.column(),
                            crate::load::without_position(&e)
                        ),
                    )
                })?;
                let run = match format {
                    Format::Vllm => vllm::read(&value),
                    Format::AiperfSummary => aiperf::read(&value, &records, position),
                    Format::Guidellm => guidellm::read(&value),
                    Format::InferencePerf => inference_perf::read(&value),
                    Format::Infermeter | Format::AiperfRecords => unreachable!("handled above"),
                }
                .map_err(|e| failed(Some(e.format), e.message))?;
                for mut run in run {
                    run.provenance.files.insert(0, input.name.to_string());
                    if let Some(records) = records.name_for(position) {
                        run.provenance.files.push(records.to_string());
                    }
                    runs.push((position, run));
                }
            }
        }
    }
    if let Some(orphan) = records.unused() {
        return Err(ImportError {
            file: orphan.to_string(),
            format: Some(Format::AiperfRecords.label().into()),
            message: "records without their summary: open profile_export_aiperf.json with it"
                .into(),
        });
    }
    reports.extend(assemble(runs));
    // In the order of the inputs each report starts at (one report per position).
    let mut ordered: Vec<Option<Report>> = inputs.iter().map(|_| None).collect();
    for (position, report) in reports {
        ordered[position] = Some(report);
    }
    Ok(ordered.into_iter().flatten().collect())
}

/// The tools whose files are read, as messages name them.
const OTHER_TOOLS: &str = "vLLM bench serve, AIPerf, guidellm or inference-perf";

/// Why a file of a known format cannot be read: the format as detected (with the version the
/// file states) and what is wrong.
#[derive(Debug)]
pub(crate) struct FormatError {
    pub format: String,
    pub message: String,
}

impl FormatError {
    pub(crate) fn new(format: impl Into<String>, message: impl Into<String>) -> FormatError {
        FormatError {
            format: format.into(),
            message: message.into(),
        }
    }
}

/// What one tool run holds (a file, or a summary with its records): levels of one workload on
/// one model, and how the tool measured them.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub provenance: Provenance,
    pub model: String,
    pub engine: EngineInfo,
    pub gpu: Option<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub measurement: Measurement,
    /// Mean input and output tokens per request, for the scenario's shape.
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub levels: Vec<RunLevel>,
}

impl Run {
    /// What every reader starts from: `tool`'s run of `model` as a file that records no engine,
    /// GPU, start time, labels or workload shape; each reader then sets what its file holds.
    pub(crate) fn of(
        tool: &str,
        model: String,
        measurement: Measurement,
        absent: BTreeMap<String, String>,
    ) -> Run {
        Run {
            provenance: Provenance {
                tool: tool.into(),
                version: None,
                format: None,
                command: None,
                files: Vec::new(),
                absent,
            },
            model,
            engine: EngineInfo {
                name: NOT_RECORDED.into(),
                ..EngineInfo::default()
            },
            gpu: None,
            started_at: NOT_RECORDED.into(),
            finished_at: None,
            labels: BTreeMap::new(),
            measurement,
            input_tokens: 1.0,
            output_tokens: 1.0,
            levels: Vec::new(),
        }
    }
}

/// One measured level of a run, with how its load was applied.
#[derive(Debug, Clone)]
pub(crate) struct RunLevel {
    pub mode: LoadMode,
    pub arrivals: Option<Arrivals>,
    /// What orders the series: concurrency, or the rate of a rate level.
    pub load: f64,
    pub level: Level,
}

/// The API a tool's endpoint setting names: "chat" for a chat-completions route or type, else
/// "completions".
pub(crate) fn api_of(endpoint: &str) -> String {
    if endpoint.contains("chat") {
        "chat"
    } else {
        "completions"
    }
    .into()
}

/// A reader's one run, or its message under the format it read the file as.
pub(crate) fn single(
    run: Result<Run, String>,
    format: impl Into<String>,
) -> Result<Vec<Run>, FormatError> {
    run.map(|run| vec![run])
        .map_err(|message| FormatError::new(format, message))
}

/// How a tool measured: where its output token counts come from, when its TTFT ends, and per
/// metric how it pools samples (its definitions, where they differ from infermeter's).
pub(crate) fn measurement(
    source: TokenSource,
    ttft_definition: &str,
    pooling: &[(&str, &str)],
) -> Measurement {
    Measurement {
        output_token_source: source,
        ttft_definition: ttft_definition.into(),
        pooling: text_map(&mut pooling.iter().copied()),
        steady_state: None,
        connection_reuse: None,
        prompt_tokens: None,
    }
}

/// [`Provenance::absent`] from (key, why) pairs, those that apply.
pub(crate) fn absent_notes(notes: &[Option<(&str, &str)>]) -> BTreeMap<String, String> {
    text_map(&mut notes.iter().flatten().copied())
}

/// Text pairs as a map, inserted one by one ([`crate::order::btree_map`]: `collect` into a map
/// sorts first, and each sort it instantiates weighs kilobytes in the viewer's wasm).
pub(crate) fn text_map<'a>(
    pairs: &mut dyn Iterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, String> {
    crate::order::btree_map(pairs.map(|(k, v)| (k.to_string(), v.to_string())))
}

/// Runs of one tool and model into reports: levels join a report until one repeats a load
/// already in it.
fn assemble(runs: Vec<(usize, Run)>) -> Vec<(usize, Report)> {
    let mut groups: Vec<(usize, Run)> = Vec::new();
    for (position, run) in runs {
        let joins = groups.iter_mut().find(|(_, g)| {
            g.provenance.tool == run.provenance.tool
                && g.model == run.model
                && !run.levels.iter().any(|l| {
                    g.levels
                        .iter()
                        .any(|m| m.mode == l.mode && m.load == l.load)
                })
        });
        match joins {
            Some((_, group)) => {
                group.levels.extend(run.levels);
                group.provenance.files.extend(run.provenance.files);
                group.provenance.absent.extend(run.provenance.absent);
                if group.provenance.command != run.provenance.command {
                    group.provenance.command = None;
                }
            }
            None => groups.push((position, run)),
        }
    }
    groups
        .into_iter()
        .map(|(position, run)| (position, report_of(run)))
        .collect()
}

const SCENARIO_ID: &str = "imported";

/// What a run's files do not name: its model, engine or start time.
pub(crate) const NOT_RECORDED: &str = "not recorded";

/// A run's levels as series, one per mode and arrival process, each in order of load.
fn series_of(levels: Vec<RunLevel>) -> Vec<Series> {
    // Each series' levels in order of load, placed one by one (no sort to instantiate).
    let mut ordered: Vec<RunLevel> = Vec::with_capacity(levels.len());
    for level in levels {
        let at = ordered
            .iter()
            .position(|l| (l.mode, l.load) > (level.mode, level.load))
            .unwrap_or(ordered.len());
        ordered.insert(at, level);
    }
    let mut series: Vec<Series> = Vec::new();
    for RunLevel {
        mode,
        arrivals,
        mut level,
        ..
    } in ordered
    {
        let at = series
            .iter()
            .position(|s| s.mode == mode && s.arrivals == arrivals)
            .unwrap_or_else(|| {
                series.push(Series {
                    scenario: SCENARIO_ID.into(),
                    mode,
                    arrivals,
                    levels: Vec::new(),
                    cache: None,
                });
                series.len() - 1
            });
        let levels = &mut series[at].levels;
        if mode == LoadMode::Rate {
            level.concurrency =
                open_loop_concurrency(level.concurrency, levels.last().map(|l| l.concurrency));
        }
        levels.push(level);
    }
    series
}

/// The one scenario of an imported run: the workload `tool` ran, by its average token counts.
fn scenario_of(tool: &str, input_tokens: f64, output_tokens: f64) -> Scenario {
    let (input, output) = (
        input_tokens.round().max(1.0) as u32,
        output_tokens.round().max(1.0) as u32,
    );
    Scenario::single(
        SCENARIO_ID,
        format!("{input} in / {output} out"),
        format!(
            "The workload {tool} ran: {input} input and {output} output tokens per request on average."
        ),
        input,
        output,
    )
}

fn report_of(run: Run) -> Report {
    let tool = run.provenance.tool.clone();
    let scenario = scenario_of(&tool, run.input_tokens, run.output_tokens);
    Report {
        schema_version: SCHEMA_VERSION.into(),
        metadata: Metadata {
            title: Some(match run.model.as_str() {
                NOT_RECORDED => format!("Results measured by {tool} (model not recorded)"),
                model => format!("{model} measured by {tool}"),
            }),
            synthetic: false,
            source: None,
            model: ModelInfo {
                id: run.model,
                ..ModelInfo::default()
            },
            engine: run.engine,
            hardware: HardwareInfo {
                gpu_model: run.gpu.unwrap_or_else(|| "GPU not recorded".into()),
                gpu_count: 0,
                ..HardwareInfo::default()
            },
            test: Default::default(),
            started_at: run.started_at,
            finished_at: run.finished_at,
            collector_version: env!("CARGO_PKG_VERSION").into(),
            labels: run.labels,
            configuration: None,
            provenance: Some(run.provenance),
        },
        status: RunStatus::Complete,
        measurement: run.measurement,
        scenarios: vec![scenario],
        series: series_of(run.levels),
        records: None,
        warnings: Vec::new(),
        sharding: None,
        fit: None,
    }
}
