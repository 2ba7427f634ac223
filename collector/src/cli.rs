//! The command line's shared pieces, below the commands of both binaries (`commands/` for
//! `infermeter`, `dev/` for `infermeter-dev`): the global options and the value parsers their
//! options use. Parsing only; it knows no command.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::ValueEnum;

/// The options both binaries take before their subcommand: how much to log, and how.
#[derive(Debug, clap::Args)]
pub struct Globals {
    /// No progress bars; only warnings and errors are logged.
    #[arg(long, global = true)]
    pub quiet: bool,
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl Globals {
    /// Progress bars only for a person reading text logs.
    pub fn show_progress(&self) -> bool {
        !self.quiet && self.log_format == LogFormat::Text
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// A command's exit code from whether what it checked passed (`validate`, `calibrate`, …).
pub fn exit_code(passed: bool) -> std::process::ExitCode {
    if passed {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// A positive, finite number of `unit`: the parser behind the options that take a duration or
/// a speed.
pub fn positive(text: &str, unit: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("\"{text}\" is not a positive number of {unit}")),
    }
}

/// A value parser for one of `all`, spelt as `name` gives (and explained by `help`, in
/// `--help`): the enums below the command line name their own values, so the options that
/// take them (`--modes`, `--api`, `--engine`, `--connection-reuse`) derive from them.
pub fn choice<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    help: fn(T) -> Option<&'static str>,
) -> impl TypedValueParser<Value = T> {
    let values = all.iter().map(move |&v| {
        let value = PossibleValue::new(name(v));
        match help(v) {
            Some(text) => value.help(text),
            None => value,
        }
    });
    PossibleValuesParser::new(values).map(move |text: String| {
        *all.iter()
            .find(|&&v| name(v) == text)
            .expect("clap admits only the possible values")
    })
}
