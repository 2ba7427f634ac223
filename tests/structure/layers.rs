//! The order of a crate's top-level modules (each a file and its folder): a module imports only
//! modules of its own layer or below.

use crate::imports::Graph;
use crate::sources::{is_comment, File};

/// The collector's layers, top first. The commands (the users' `commands`, the developers'
/// `dev`) read the command line and call the rest, with the options both binaries share
/// (`cli`) below them; a
/// run sweeps levels; a load runs one level; below them what a level is made of: the suite
/// (what is asked: its scenarios name prompt files) beside the prompts (what is sent, planned
/// from the suite), above the HTTP client and the output writers.
pub const COLLECTOR: &[&[&str]] = &[
    &["commands", "dev"],
    &["cli"],
    &["run"],
    &["load"],
    &["suite", "prompts"],
    &["http", "output"],
];

/// The report crate's layers, top first: what is rendered from a report (the summary and its
/// JSON schema), the analysis of a report (the presets name its thresholds), reading other
/// tools' results into a report, reading and checking a report file, the parts a report is
/// assembled from (levels from records, the index of a sweep), prompt and output lengths, and
/// at the bottom the schema, its statistics and the sort they all use.
pub const REPORT: &[&[&str]] = &[
    &["summary", "json_schema"],
    &["analysis", "presets"],
    &["import"],
    &["load"],
    &["validate", "aggregate", "index"],
    &["lengths"],
    &["schema", "stats", "inline", "pretty_json", "order"],
];

/// Imports from a lower layer into a higher one, and top-level modules no layer names.
pub fn violations(files: &[File], graph: &Graph, layers: &[&[&str]]) -> Vec<String> {
    let layer_of = |file: &File| {
        let top = file.module.first()?;
        Some(
            layers
                .iter()
                .position(|layer| layer.contains(&top.as_str())),
        )
    };
    let mut found = Vec::new();
    for (from, file) in files.iter().enumerate() {
        let Some(here) = layer_of(file) else { continue };
        let Some(here) = here else {
            if file.module.len() == 1 {
                found.push(format!("{}: in no layer (add it to the order)", file.path));
            }
            continue;
        };
        for (&to, line) in &graph.edges[from] {
            if let Some(Some(there)) = layer_of(&files[to]) {
                if there < here {
                    found.push(format!(
                        "{}:{line} imports {}, a higher layer",
                        file.path, files[to].path
                    ));
                }
            }
        }
    }
    found
}

/// Where `file`'s code outside its tests names the command line: clap, or the collector's
/// modules that hold the options.
pub fn command_line_uses(file: &File) -> Vec<String> {
    file.lines
        .iter()
        .filter(|(_, line)| !is_comment(line))
        .filter(|(_, line)| {
            [
                "clap",
                "crate::cli",
                "crate::commands",
                "crate::dev",
                "super::cli",
            ]
            .iter()
            .any(|name| line.contains(name))
        })
        .map(|(n, line)| format!("{}:{n}: {}", file.path, line.trim()))
        .collect()
}
