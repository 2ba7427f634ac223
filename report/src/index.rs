//! `data/index.json`: the list of reports the viewer's landing page offers, and the comparisons
//! of them it opens in one go. One type reads it
//! (the viewer, the bundled data's tests) and writes it (`infermeter view`), so the file means
//! the same everywhere.
//!
//! As written: `{"reports": [{"path": …, "title": …, "synthetic": …}, …]}`, paths relative to
//! the index file. As read, leniently (an index written by hand or another tool): a bare list
//! instead of the object, an entry that is only a path, `url` or `file` for `path`, and
//! `description`, `model`, `gpu`, `engine` and `note` shown beside the title; an entry without
//! a path is skipped, and so is a comparison without a title or paths.
//! [`ReportIndex::check_paths`] holds a published index to stricter paths.
//!
//! A sweep's index (`infermeter sweep`) also has a `sweep` section ([`Sweep`]): every
//! configuration with its state. [`ReportIndex::parse`] reads the list and the comparisons, as
//! the viewer needs; [`Sweep::from_index`] reads the section.

mod sweep;

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::schema::Report;
pub use sweep::*;

/// The reports published next to the viewer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportIndex {
    pub reports: Vec<IndexEntry>,
    /// Reports opened together, compared (the landing page links each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<ComparisonEntry>,
    /// The sweep that measured the reports, in a sweep's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
}

/// One report of the list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexEntry {
    /// Relative to the index file, e.g. "reports/sample-synthetic.json" (or a URL).
    pub path: String,
    /// Default: the path's file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// True when the report was not measured on real hardware.
    #[serde(default)]
    pub synthetic: bool,
    /// What a reader of the file should know, e.g. why it cannot be measured again here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Reports the landing page opens compared: the first is the main one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("has no \"reports\" list")]
    NoList,
    #[error("is neither a list of reports nor an object with \"reports\"")]
    NotAnIndex,
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
    #[error("its \"sweep\" section is not a sweep's: {0}")]
    Sweep(String),
}

impl IndexError {
    fn syntax(e: serde_json::Error) -> IndexError {
        IndexError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }
    }
}

impl ReportIndex {
    /// Reads an index's list, leniently (see the module doc); a sweep section is left out.
    pub fn parse(text: &str) -> Result<ReportIndex, IndexError> {
        let value: Value = serde_json::from_str(text).map_err(IndexError::syntax)?;
        let list = match &value {
            Value::Array(list) => list,
            Value::Object(o) => o
                .get("reports")
                .and_then(Value::as_array)
                .ok_or(IndexError::NoList)?,
            _ => return Err(IndexError::NotAnIndex),
        };
        let comparisons = value
            .get("comparisons")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(ComparisonEntry::read)
            .collect();
        Ok(ReportIndex {
            reports: list.iter().filter_map(IndexEntry::read).collect(),
            comparisons,
            sweep: None,
        })
    }

    /// Checks each path is relative, stays inside the data folder and appears once, and each
    /// comparison names two or more of the reports listed, as a published index's must.
    pub fn check_paths(&self) -> Result<(), IndexError> {
        let mut seen = BTreeSet::new();
        for (position, entry) in self.reports.iter().enumerate() {
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
        for (position, comparison) in self.comparisons.iter().enumerate() {
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
        Ok(())
    }

    /// The index as written: pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an index serialises")
    }
}

impl IndexEntry {
    /// The entry of `report`, found at `path`: its title, model, GPU and engine.
    pub fn of_report(path: String, report: &Report) -> IndexEntry {
        let meta = &report.metadata;
        IndexEntry {
            path,
            title: Some(report.display_title()),
            description: None,
            model: Some(meta.model.id.clone()),
            gpu: Some(meta.hardware.gpu_label()),
            engine: Some(meta.engine.name.clone()),
            note: None,
            synthetic: meta.synthetic,
        }
    }

    /// One entry as read: a path alone, or an object with a `path` (or `url`, `file`).
    fn read(entry: &Value) -> Option<IndexEntry> {
        if let Value::String(path) = entry {
            return Some(IndexEntry {
                path: path.clone(),
                ..IndexEntry::default()
            });
        }
        let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
        let path = text("path")
            .or_else(|| text("url"))
            .or_else(|| text("file"))?;
        Some(IndexEntry {
            path,
            title: text("title"),
            description: text("description"),
            model: text("model"),
            gpu: text("gpu"),
            engine: text("engine"),
            note: text("note"),
            synthetic: entry
                .get("synthetic")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// The title, else the path's file name.
    pub fn title(&self) -> &str {
        match &self.title {
            Some(title) => title,
            None => self.path.rsplit('/').next().unwrap_or(&self.path),
        }
    }

    /// What the index says about the report besides its title: "A run · Model · H100 · vLLM",
    /// then its note.
    pub fn detail(&self) -> Option<String> {
        let parts: Vec<&str> = [
            &self.description,
            &self.model,
            &self.gpu,
            &self.engine,
            &self.note,
        ]
        .into_iter()
        .filter_map(|p| p.as_deref())
        .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

impl ComparisonEntry {
    /// One comparison as read: a title and its paths (strings), else nothing.
    fn read(entry: &Value) -> Option<ComparisonEntry> {
        Some(ComparisonEntry {
            title: entry.get("title")?.as_str()?.to_string(),
            paths: entry
                .get("paths")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            synthetic: entry
                .get("synthetic")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_objects_and_bare_paths() {
        let index = ReportIndex::parse(
            r#"{"reports": [
                {"path": "reports/a.json", "title": "A", "model": "M", "gpu": "H100", "synthetic": true},
                "reports/b.json",
                {"title": "no path"},
                {"url": "https://example.org/c.json"}
            ]}"#,
        )
        .unwrap();
        let e = &index.reports;
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].path.as_str(), e[0].title()), ("reports/a.json", "A"));
        assert_eq!(e[0].detail().as_deref(), Some("M · H100"));
        assert!(e[0].synthetic && !e[1].synthetic);
        assert_eq!(e[1].title(), "b.json");
        assert_eq!(e[2].path, "https://example.org/c.json");
        assert_eq!(ReportIndex::parse("[]").unwrap(), ReportIndex::default());
        let err = ReportIndex::parse("{\n \"reports\": [\n").unwrap_err();
        assert!(matches!(err, IndexError::Syntax { line: 3, .. }), "{err:?}");
        assert_eq!(ReportIndex::parse("3"), Err(IndexError::NotAnIndex));
        assert_eq!(ReportIndex::parse("{}"), Err(IndexError::NoList));
    }

    #[test]
    fn what_is_written_reads_back() {
        let index = ReportIndex {
            reports: vec![IndexEntry {
                path: "reports/1-a.json".into(),
                title: Some("A \"run\"".into()),
                engine: Some("vLLM".into()),
                synthetic: true,
                ..IndexEntry::default()
            }],
            comparisons: vec![ComparisonEntry {
                title: "A vs B".into(),
                paths: vec!["reports/1-a.json".into(), "reports/2-b.json".into()],
                synthetic: false,
            }],
            sweep: None,
        };
        assert_eq!(ReportIndex::parse(&index.to_json()).unwrap(), index);
        // Unset fields are left out.
        assert!(!index.to_json().contains("model"));
    }

    #[test]
    fn published_paths_may_not_escape_or_repeat() {
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
            let err = ReportIndex::parse(&text)
                .unwrap()
                .check_paths()
                .unwrap_err();
            assert!(err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn comparisons_name_listed_reports() {
        let reports = r#""reports":[{"path":"a.json","title":"A"},{"path":"b.json","title":"B","note":"why"}]"#;
        let ok = ReportIndex::parse(&format!(
            r#"{{{reports},"comparisons":[{{"title":"A vs B","paths":["a.json","b.json"]}},{{"title":"no paths"}}]}}"#
        ))
        .unwrap();
        assert_eq!(ok.comparisons.len(), 1);
        assert_eq!(ok.comparisons[0].paths, ["a.json", "b.json"]);
        assert_eq!(ok.reports[1].note.as_deref(), Some("why"));
        assert_eq!(ok.reports[1].detail().as_deref(), Some("why"));
        ok.check_paths().unwrap();
        for (paths, expected) in [
            (r#"["a.json"]"#, "fewer than two"),
            (r#"["a.json","c.json"]"#, "\"c.json\", which is not among"),
        ] {
            let text = format!(r#"{{{reports},"comparisons":[{{"title":"T","paths":{paths}}}]}}"#);
            let err = ReportIndex::parse(&text)
                .unwrap()
                .check_paths()
                .unwrap_err();
            assert!(err.to_string().contains(expected), "{err}");
        }
    }
}
