//! `data/index.json`: the list of reports the viewer's landing page offers. One type reads it
//! (the viewer, the bundled data's tests) and writes it (`infermeter view`), so the file means
//! the same everywhere.
//!
//! As written: `{"reports": [{"path": …, "title": …, "synthetic": …}, …]}`, paths relative to
//! the index file. As read, leniently (an index written by hand or another tool): a bare list
//! instead of the object, an entry that is only a path, `url` or `file` for `path`, and
//! `description`, `model`, `gpu` and `engine` shown beside the title; an entry without a path
//! is skipped. [`ReportIndex::check_paths`] holds a published index to stricter paths.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// The reports published next to the viewer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportIndex {
    pub reports: Vec<IndexEntry>,
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
}

impl ReportIndex {
    /// Reads an index, leniently (see the module doc).
    pub fn parse(text: &str) -> Result<ReportIndex, IndexError> {
        let value: Value = serde_json::from_str(text).map_err(|e| IndexError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let list = match &value {
            Value::Array(list) => list,
            Value::Object(o) => o
                .get("reports")
                .and_then(Value::as_array)
                .ok_or(IndexError::NoList)?,
            _ => return Err(IndexError::NotAnIndex),
        };
        Ok(ReportIndex {
            reports: list.iter().filter_map(IndexEntry::read).collect(),
        })
    }

    /// Checks each path is relative, stays inside the data folder and appears once, as a
    /// published index's must.
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
        Ok(())
    }

    /// The index as written: pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an index serialises")
    }
}

impl IndexEntry {
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

    /// What the index says about the report besides its title: "A run · Model · H100 · vLLM".
    pub fn detail(&self) -> Option<String> {
        let parts: Vec<&str> = [&self.description, &self.model, &self.gpu, &self.engine]
            .into_iter()
            .filter_map(|p| p.as_deref())
            .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
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
}
