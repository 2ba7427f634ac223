//! `infermeter summary` and `infermeter validate`: read reports and say what they hold.

mod choice;

use std::path::PathBuf;

use infermeter_report::analysis::configuration::{self, ConfigurationOptions};
use infermeter_report::analysis::format::{format_number, with_unit};
use infermeter_report::analysis::goodput::{report_slo, slo_text, GoodputFindings, DEFAULT_SLO};
use infermeter_report::analysis::labels::report_labels;
use infermeter_report::analysis::sessions::{caching_gains, users_served};
use infermeter_report::analysis::{findings, FindingsOptions};
use infermeter_report::lengths::LevelLengths;
use infermeter_report::summary::{Summary, SummaryReport, SUMMARY_FORMAT};
use infermeter_report::{PromptTokenizer, Report, RunStatus};

use crate::output::report_files;

#[derive(Debug, Clone, clap::Args)]
pub struct SummaryArgs {
    /// Report files, or a sweep's folder (its index.json's reports). Several are compared: "which configuration?" ranks them, and the first
    /// is the main one (its recorded SLO is the default).
    #[arg(required = true, num_args = 1..)]
    pub reports: Vec<PathBuf>,
    /// Machine-readable output: every figure the report page states, as JSON (its shape is
    /// versioned by `format`; JSON Schema in data/schema/summary.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Which figure of each distribution to read, as the viewer's Statistic selector: mean,
    /// p50, p90, p95, p99, p99.9, min or max.
    #[arg(long, default_value = "mean", value_parser = parse_stat)]
    pub stat: infermeter_report::Stat,
    /// TTFT threshold for the max safe queue depth, seconds.
    #[arg(long, default_value_t = infermeter_report::analysis::DEFAULT_TTFT_THRESHOLD_S)]
    pub ttft_threshold: f64,
    /// Electricity price for the energy costs, dollars per kWh.
    #[arg(long, default_value_t = infermeter_report::analysis::cost::DEFAULT_USD_PER_KWH)]
    pub usd_per_kwh: f64,
    /// The SLO to judge goodput by, as `run --slo` takes it (default: the one the run
    /// recorded, else TTFT 5 s and TPOT 50 ms for 95% of requests).
    #[arg(long, value_name = "SPEC", value_parser = crate::suite::spec::parse_slo)]
    pub slo: Option<infermeter_report::Slo>,
    /// GPU rental prices, dollars per GPU-hour by GPU kind, e.g. `H100=2.5,H200=3.4` (default:
    /// the dated on-demand prices the summary states; a kind without one gets no cost).
    #[arg(long, value_name = "KIND=USD,...", value_parser = infermeter_report::analysis::cost::parse_gpu_prices)]
    pub usd_per_gpu_hour: Option<std::collections::BTreeMap<String, f64>>,
    /// Users to serve: the replicas and GPUs each configuration needs for this many.
    #[arg(long, default_value_t = infermeter_report::analysis::configuration::DEFAULT_USERS, value_parser = clap::value_parser!(u32).range(1..))]
    pub users: u32,
    /// Target interactivity, output tokens per second per user: throughput and cost are also
    /// read there on each configuration's curve.
    #[arg(long, value_name = "TOK_S", default_value_t = infermeter_report::analysis::configuration::DEFAULT_INTERACTIVITY, value_parser = parse_speed)]
    pub interactivity: f64,
    /// Measured levels only: each configuration's limit is the highest measured level meeting
    /// the SLO, never read between two levels (no "≈" figure in the ranking).
    #[arg(long)]
    pub measured_only: bool,
}

fn parse_speed(s: &str) -> Result<f64, String> {
    crate::cli::positive(s, "tokens per second")
}

fn parse_stat(s: &str) -> Result<infermeter_report::Stat, String> {
    infermeter_report::Stat::parse(s).ok_or_else(|| {
        let all: Vec<&str> = infermeter_report::Stat::ALL
            .iter()
            .map(|s| s.label())
            .collect();
        format!("\"{s}\" is not a statistic; use one of {}", all.join(", "))
    })
}

#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    pub report: PathBuf,
}

/// `infermeter summary`: prints the reports' summary.
pub fn print(args: &SummaryArgs) -> anyhow::Result<()> {
    // A sweep's folder (its index.json) stands for the reports it lists.
    let paths = report_files::report_paths(&args.reports)?;
    let reports = paths
        .iter()
        .map(|path| report_files::read_report(path))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    println!("{}", summaries(&reports, &paths, args));
    Ok(())
}

/// `infermeter validate`: says whether the report is valid, and why not; whether it is.
pub fn validate(args: &ValidateArgs) -> bool {
    match report_files::read_report(&args.report) {
        Ok(report) => {
            println!(
                "{} is a valid report (schema {}, {} series)",
                args.report.display(),
                report.schema_version,
                report.series.len()
            );
            true
        }
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}

/// The summary of the reports given: each one's findings, then which configuration serves
/// the users under the SLO for the least money across them ([`choice`]); or,
/// with `--json`, every figure as the report crate's [`Summary`] (versioned by its `format`).
fn summaries(reports: &[Report], paths: &[PathBuf], args: &SummaryArgs) -> String {
    let labels = report_labels(reports);
    let main_slo = reports.first().map_or(DEFAULT_SLO, report_slo);
    let mut choice = ConfigurationOptions::new(args.slo.unwrap_or(main_slo));
    choice.stat = args.stat;
    choice.prices = args.usd_per_gpu_hour.clone().unwrap_or_default();
    choice.users = args.users;
    choice.interactivity = args.interactivity;
    choice.measured_only = args.measured_only;
    let configuration = configuration::findings(reports, &labels, &choice);
    if args.json {
        let summary = Summary {
            format: SUMMARY_FORMAT.into(),
            reports: reports
                .iter()
                .zip(paths)
                .zip(&labels)
                .map(|((report, file), label)| SummaryReport {
                    file: file.display().to_string(),
                    label: label.clone(),
                    findings: findings(report, &options(report, args)),
                })
                .collect(),
            configuration,
        };
        return serde_json::to_string_pretty(&summary).expect("a summary serialises");
    }
    let mut blocks: Vec<String> = reports.iter().map(|r| summary(r, args)).collect();
    blocks.push(choice::lines(&configuration).join("\n"));
    blocks.join("\n\n")
}

/// What one report's findings are computed under: the flags, and its own recorded SLO unless
/// `--slo` sets one.
fn options(report: &Report, args: &SummaryArgs) -> FindingsOptions {
    FindingsOptions {
        stat: args.stat,
        queue_ttft_s: args.ttft_threshold,
        usd_per_kwh: args.usd_per_kwh,
        slo: Some(args.slo.unwrap_or_else(|| report_slo(report))),
    }
}

/// One report's findings as the report page states them (its highlight cards, key findings and
/// safe queue depths, goodput under the SLO), as text. Figures are written by the report
/// crate's formatter, so "6.18 s" on the page is "6.18 s" here.
fn summary(report: &Report, args: &SummaryArgs) -> String {
    let options = options(report, args);
    let f = findings(report, &options);
    let mut lines = vec![format!(
        "{} ({})",
        report.display_title(),
        report.metadata.engine.name
    )];
    if let RunStatus::Partial { reason } = &report.status {
        lines.push(format!("PARTIAL RUN: {reason}"));
    }
    lines.push(labelled("Statistic", args.stat.label()));
    let row =
        |label: &str, value: &str, context: &str| labelled(label, &format!("{value}  ({context})"));
    for card in f.cards() {
        // A percentile on few samples says so beside where it was measured.
        let context = match card.indicative_note(args.stat) {
            Some(note) => format!("{}; {note}", card.context),
            None => card.context.clone(),
        };
        lines.push(row(card.label, &card.value, &context));
    }
    let power = f.power.key_lines(options.usd_per_kwh);
    for (label, text) in f.key_findings().into_iter().chain(power) {
        lines.push(labelled(label, &text));
    }
    for depth in &f.burst.safe_depths {
        lines.push(row(
            "Max safe queue depth",
            &depth.value_text(),
            &depth.caption(options.queue_ttft_s),
        ));
    }
    // Session labels name use cases and can be long: labelled() keeps a space before the figure.
    for (label, text) in f.sessions.lines() {
        lines.push(labelled(&label, &text));
    }
    for (label, text) in f.agents.iter().flat_map(|a| a.lines()) {
        lines.push(labelled(&label, &text));
    }
    let served = users_served(report, args.stat, &|_, preset| preset);
    for gain in caching_gains(&served) {
        lines.push(labelled("Caching adds", &gain.sentence()));
    }
    if let Some(goodput) = &f.goodput {
        lines.extend(goodput_lines(goodput));
    }
    lines.extend(length_lines(report));
    for w in &report.warnings {
        lines.push(format!("warning: {w}"));
    }
    lines.join("\n")
}

/// Each scenario's prompt file and length distributions, then the lengths each of its levels
/// realised (mean and p5–p95), for the scenarios whose requests were asked lengths of their own.
fn length_lines(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    // #43 item 9: whether the prompts' token counts are the model's own or an estimate.
    if let Some(counter) = &report.measurement.prompt_tokens {
        lines.push(labelled(
            "Prompt tokens counted by",
            &PromptTokenizer::describe(counter),
        ));
    }
    for s in &report.scenarios {
        if let Some(source) = &s.prompts {
            lines.push(labelled(&format!("Prompts {}", s.name), &source.text()));
        }
        if let Some(plan) = &s.lengths {
            lines.push(labelled(&format!("Lengths asked {}", s.name), &plan.text()));
        }
        for series in report.series.iter().filter(|x| x.scenario == s.id) {
            for level in &series.levels {
                let Some(lengths) = LevelLengths::of(level) else {
                    continue;
                };
                let load = series.mode.describe_level(level);
                lines.push(labelled(
                    &format!("Lengths {}", s.name),
                    &format!("{} {load}: {}", series.mode.label(), lengths.text()),
                ));
            }
        }
    }
    lines
}

/// One line of the summary: the label in a column of its own, at least one space wide of the
/// text (a long scenario name pushes its text right rather than running into it).
fn labelled(label: &str, text: &str) -> String {
    format!("{label:<33} {text}")
}

/// Goodput as the viewer's section states it: the SLO, then per series the highest load that
/// meets it and each level's attainment (with its 95% interval) and goodput.
fn goodput_lines(goodput: &GoodputFindings) -> Vec<String> {
    let mut lines = vec![labelled("Goodput SLO", &slo_text(&goodput.slo))];
    if let Some(why) = &goodput.absent {
        lines.push(labelled("Goodput", &format!("not available: {why}")));
    }
    let percent = |share: f64| with_unit(share * 100.0, "%");
    for series in &goodput.series {
        let load = &series.max_load;
        lines.push(labelled(
            &format!(
                "{} ({}) max load",
                series.scenario_name,
                series.mode.label()
            ),
            &format!(
                "{} {}  ({})",
                load.value_text(),
                series.mode.unit(2.0),
                load.note()
            ),
        ));
        for level in &series.levels {
            let a = &level.attainment;
            let rate = |v: Option<f64>, unit: &str| v.map_or("—".into(), |v| with_unit(v, unit));
            let smoothness = level.smoothness.map_or(String::new(), |s| {
                let jitter = s.jitter_p50.map_or(String::new(), |j| {
                    format!(", jitter p50 {}×", format_number(j))
                });
                let requests = if s.stalled_requests == 1 {
                    "request"
                } else {
                    "requests"
                };
                format!(
                    "  stalls {} in {} {requests}{jitter}",
                    s.stalls, s.stalled_requests
                )
            });
            lines.push(format!(
                "  @{:<8}{} of {} met (95% CI {}–{})  goodput {}, {}{smoothness}{}",
                format_number(level.load),
                percent(a.fraction),
                a.total,
                percent(a.interval.low),
                percent(a.interval.high),
                rate(a.goodput_req_s, "req/s"),
                rate(a.goodput_tok_s, "tok/s"),
                if level.saturation.is_some() {
                    "  (over-saturated: TTFT grew over the level)"
                } else {
                    ""
                }
            ));
        }
    }
    lines
}
