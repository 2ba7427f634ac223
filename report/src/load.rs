//! Reading a report from JSON text: version check, parse, and sanity validation, with errors that
//! say what is wrong and where.

use thiserror::Error;

use crate::schema::{Report, SCHEMA_VERSION};
use crate::validate::{validate, Problem};

/// Why a report could not be loaded.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LoadError {
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("this is not an infermeter report: {0}")]
    NotAReport(String),
    #[error("report format {found} is newer than this reader supports ({supported}); update infermeter to read it")]
    NewerMajorVersion { found: String, supported: String },
    #[error("schema_version \"{0}\" is not a semantic version such as \"1.0.0\"")]
    BadVersion(String),
    #[error("does not match the report format at line {line}, column {column}: {message}")]
    Shape {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the report is inconsistent: {}", .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Problem>),
}

/// Parses `major.minor.patch`.
pub fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let mut parts = v.trim().split('.').map(|p| p.parse::<u64>().ok());
    let version = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(version)
}

/// Parses and validates report JSON. Older minor versions of the same major load; newer majors
/// are refused before any other check so the message is about the version, not a field.
pub fn load_report(text: &str) -> Result<Report, LoadError> {
    // A well-formed report, the common case, is parsed once, straight into its types (a JSON
    // tree first would double the viewer's parse time); a file that does not parse is read
    // again by `diagnose`, which names the problem in the order syntax, version, shape.
    let report: Report = serde_json::from_str(text).map_err(|e| diagnose(text, e))?;
    check_version(&report.schema_version)?;
    let problems = validate(&report);
    if problems.is_empty() {
        Ok(report)
    } else {
        Err(LoadError::Invalid(problems))
    }
}

/// Why `text` does not parse as a report, given the error of parsing it as one.
fn diagnose(text: &str, shape: serde_json::Error) -> LoadError {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => {
            return LoadError::Syntax {
                line: e.line(),
                column: e.column(),
                message: without_position(&e),
            }
        }
    };
    let version = match value.get("schema_version") {
        Some(serde_json::Value::String(v)) => v,
        Some(other) => return LoadError::BadVersion(other.to_string()),
        None => {
            return LoadError::NotAReport(
                "it has no \"schema_version\" field at the top level".into(),
            )
        }
    };
    if let Err(e) = check_version(version) {
        return e;
    }
    // From parsing the text (not the Value), so it carries a line and column.
    LoadError::Shape {
        line: shape.line(),
        column: shape.column(),
        message: without_position(&shape),
    }
}

/// serde_json's message without the " at line L column C" it ends with: the error says where
/// once, in its own words.
pub(crate) fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&position) {
        Some(rest) => rest.to_string(),
        None => message,
    }
}

/// Refuses a version this reader cannot read: not semver, a newer major, or an older one.
fn check_version(version: &str) -> Result<(), LoadError> {
    let (major, _, _) =
        parse_version(version).ok_or_else(|| LoadError::BadVersion(version.to_string()))?;
    let (supported_major, _, _) = parse_version(SCHEMA_VERSION).expect("own version parses");
    if major > supported_major {
        return Err(LoadError::NewerMajorVersion {
            found: version.to_string(),
            supported: SCHEMA_VERSION.into(),
        });
    }
    if major < supported_major {
        return Err(LoadError::NotAReport(format!(
            "format {version} predates {SCHEMA_VERSION} and cannot be read"
        )));
    }
    Ok(())
}
