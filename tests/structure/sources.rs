//! The workspace's Rust sources as the structure checks read them: each crate's module tree,
//! walked from its root file through its `mod x;` declarations, and each file's lines outside
//! its tests (`#[cfg(test)]` items and the files of `#[cfg(test)] mod x;` are test code).

use std::path::PathBuf;

/// The crates checked, by name and source folder (relative to the workspace root).
pub const CRATES: [(&str, &str); 5] = [
    ("collector", "collector/src"),
    ("report", "report/src"),
    ("sim", "sim/src"),
    ("engine", "engine/src"),
    ("viewer", "src"),
];

pub fn workspace() -> PathBuf {
    // Read at run time: a build cache shared by checkouts can hold this binary built in
    // another one, and cargo does not rebuild it for a path change alone.
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
}

/// One source file of a crate.
pub struct File {
    /// Its path, `collector/src/http/driver.rs`.
    pub path: String,
    /// Its module in the crate, `["http", "driver"]`; empty for the crate's root.
    pub module: Vec<String>,
    /// Its lines outside the tests, with their 1-based numbers in the file.
    pub lines: Vec<(usize, String)>,
}

/// A crate's files, its root first, read through `read` (a path to its text, `None` when
/// absent): the files on disk, or a synthetic set in the checks' own tests.
pub fn crate_files(src: &str, read: &dyn Fn(&str) -> Option<String>) -> Vec<File> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| format!("{src}/{name}"))
        .find(|path| read(path).is_some())
        .unwrap_or_else(|| panic!("{src}: no lib.rs or main.rs"));
    let mut files = Vec::new();
    walk(&root, src, Vec::new(), read, &mut files);
    files
}

/// Every file of a checked crate of the workspace, by crate name.
pub fn workspace_crates() -> Vec<(&'static str, Vec<File>)> {
    let root = workspace();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).ok();
    CRATES
        .iter()
        .map(|(name, src)| (*name, crate_files(src, &read)))
        .collect()
}

/// Reads `path`, then the files of the modules it declares, whose files lie in `children`.
fn walk(
    path: &str,
    children: &str,
    module: Vec<String>,
    read: &dyn Fn(&str) -> Option<String>,
    files: &mut Vec<File>,
) {
    let text = read(path).unwrap_or_else(|| panic!("{path}: unreadable"));
    let lines = non_test_lines(&text);
    let declared: Vec<String> = lines
        .iter()
        .filter_map(|(_, l)| declared_module(l))
        .collect();
    files.push(File {
        path: path.to_string(),
        module: module.clone(),
        lines,
    });
    for name in declared {
        let dir = format!("{children}/{name}");
        let file = [format!("{dir}.rs"), format!("{dir}/mod.rs")]
            .into_iter()
            .find(|candidate| read(candidate).is_some())
            .unwrap_or_else(|| panic!("{path}: no file for `mod {name};`"));
        let mut inner = module.clone();
        inner.push(name);
        walk(&file, &dir, inner, read, files);
    }
}

/// `line` without its visibility (`pub `, `pub(crate) `, `pub(in x) `).
pub fn without_visibility(line: &str) -> &str {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("pub(") {
        return rest
            .split_once(')')
            .map_or(line, |(_, rest)| rest.trim_start());
    }
    line.strip_prefix("pub ").unwrap_or(line)
}

/// The module a `mod x;` line declares (not an inline `mod x { … }`, whose items are the file's).
fn declared_module(line: &str) -> Option<String> {
    let name = without_visibility(line)
        .strip_prefix("mod ")?
        .strip_suffix(';')?;
    Some(name.trim().to_string())
}

pub fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with("//")
}

/// The lines of `text` (rustfmt-formatted) outside its `#[cfg(test)]` items, numbered from 1.
/// An item ends at its first line ending in `;` (a declaration) or at the closing brace at its
/// own indentation.
pub fn non_test_lines(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            kept.push((i + 1, lines[i].to_string()));
            i += 1;
            continue;
        }
        // Skip the attribute, the item's other attributes, then the item.
        i += 1;
        while i < lines.len() && lines[i].trim_start().starts_with("#[") {
            i += 1;
        }
        let Some(item) = lines.get(i) else { break };
        let indent = &item[..item.len() - item.trim_start().len()];
        if item.trim_end().ends_with(';') || item.trim_end().ends_with('}') {
            i += 1;
            continue;
        }
        let close = format!("{indent}}}");
        while i < lines.len() && !lines[i].starts_with(&close) {
            i += 1;
        }
        i += 1;
    }
    kept
}
