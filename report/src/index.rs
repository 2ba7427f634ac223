//! `data/index.json`: the list of reports the viewer offers, and the comparisons of them it
//! opens in one go.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The reports published next to the viewer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportIndex {
    pub reports: Vec<IndexEntry>,
    /// Reports opened together, compared (the landing page links each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<ComparisonEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexEntry {
    /// Path relative to the index file, e.g. "reports/sample-synthetic.json".
    pub path: String,
    pub title: String,
    /// True when the report was not measured on real hardware.
    #[serde(default)]
    pub synthetic: bool,
    /// What a reader of the file should know, e.g. why it cannot be measured again here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Reports the landing page opens compared: the first is the main one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComparisonEntry {
    pub title: String,
    /// Paths of listed reports, two or more.
    pub paths: Vec<String>,
    #[serde(default)]
    pub synthetic: bool,
}

/// Why an index could not be read.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IndexError {
    #[error("index is not valid: line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("reports[{position}].path \"{path}\": {message}")]
    BadPath {
        position: usize,
        path: String,
        message: &'static str,
    },
    #[error("comparisons[{position}] \"{title}\": {message}")]
    BadComparison {
        position: usize,
        title: String,
        message: String,
    },
}

impl ReportIndex {
    /// Parses the index and checks each path is relative, stays inside the data folder and
    /// appears once.
    pub fn parse(text: &str) -> Result<ReportIndex, IndexError> {
        let index: ReportIndex = serde_json::from_str(text).map_err(|e| IndexError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let mut seen = BTreeSet::new();
        for (position, entry) in index.reports.iter().enumerate() {
            let bad = |message| IndexError::BadPath {
                position,
                path: entry.path.clone(),
                message,
            };
            if entry.path.trim().is_empty() {
                return Err(bad("is empty"));
            }
            if entry.path.starts_with('/') || entry.path.contains("://") {
                return Err(bad("must be relative to the index file"));
            }
            if entry.path.split('/').any(|part| part == "..") {
                return Err(bad("must not leave the data folder"));
            }
            if !seen.insert(entry.path.as_str()) {
                return Err(bad("is listed twice"));
            }
        }
        for (position, comparison) in index.comparisons.iter().enumerate() {
            let bad = |message: String| IndexError::BadComparison {
                position,
                title: comparison.title.clone(),
                message,
            };
            if comparison.paths.len() < 2 {
                return Err(bad("compares fewer than two reports".into()));
            }
            if let Some(unlisted) = comparison.paths.iter().find(|p| !seen.contains(p.as_str())) {
                return Err(bad(format!(
                    "names \"{unlisted}\", which is not among the reports listed"
                )));
            }
        }
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_valid_index() {
        let index = ReportIndex::parse(
            r#"{"reports":[{"path":"reports/a.json","title":"A","synthetic":true},{"path":"b.json","title":"B"}]}"#,
        )
        .unwrap();
        assert_eq!(index.reports.len(), 2);
        assert!(index.reports[0].synthetic);
        assert!(!index.reports[1].synthetic);
    }

    #[test]
    fn refuses_paths_that_escape_or_repeat() {
        let entry = |p: &str| format!(r#"{{"path":"{p}","title":"t"}}"#);
        for (paths, expected) in [
            (
                vec![entry("../secret.json")],
                "must not leave the data folder",
            ),
            (
                vec![entry("/etc/passwd")],
                "must be relative to the index file",
            ),
            (vec![entry("a.json"), entry("a.json")], "is listed twice"),
            (vec![entry(" ")], "is empty"),
        ] {
            let text = format!(r#"{{"reports":[{}]}}"#, paths.join(","));
            let err = ReportIndex::parse(&text).unwrap_err();
            assert!(err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn comparisons_name_listed_reports() {
        let reports = r#""reports":[{"path":"a.json","title":"A"},{"path":"b.json","title":"B","note":"why"}]"#;
        let ok = ReportIndex::parse(&format!(
            r#"{{{reports},"comparisons":[{{"title":"A vs B","paths":["a.json","b.json"]}}]}}"#
        ))
        .unwrap();
        assert_eq!(ok.comparisons[0].paths, ["a.json", "b.json"]);
        assert_eq!(ok.reports[1].note.as_deref(), Some("why"));
        for (paths, expected) in [
            (r#"["a.json"]"#, "fewer than two"),
            (r#"["a.json","c.json"]"#, "\"c.json\", which is not among"),
        ] {
            let text = format!(r#"{{{reports},"comparisons":[{{"title":"T","paths":{paths}}}]}}"#);
            let err = ReportIndex::parse(&text).unwrap_err();
            assert!(err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let err = ReportIndex::parse("{\n \"reports\": [\n").unwrap_err();
        assert!(matches!(err, IndexError::Syntax { line: 3, .. }), "{err:?}");
    }
}
