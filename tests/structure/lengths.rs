//! Lengths: functions and files outside the tests, measured in lines.

use crate::sources::{without_visibility, File};

/// The most lines a function outside the tests may have.
pub const FUNCTION_LIMIT: usize = 80;
/// The most lines outside its tests a file may have.
pub const FILE_LIMIT: usize = 800;

/// The name a line's function signature declares: `fn`, after any visibility and the
/// qualifiers (`const`, `async`, `unsafe`).
fn function_name(line: &str) -> Option<String> {
    let mut code = without_visibility(line);
    while let Some(rest) = ["const ", "async ", "unsafe "]
        .iter()
        .find_map(|q| code.strip_prefix(q))
    {
        code = rest;
    }
    let name: String = code
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The functions of `file` longer than `limit` lines: (first line, name, length). A function
/// of rustfmt-formatted code ends at the closing brace at its own indentation; a declaration
/// without a body (a trait's, an `extern` block's) at its semicolon.
pub fn long_functions(file: &File, limit: usize) -> Vec<(usize, String, usize)> {
    let lines = &file.lines;
    let mut long = Vec::new();
    for (i, (number, line)) in lines.iter().enumerate() {
        let Some(name) = function_name(line) else {
            continue;
        };
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        // The signature ends at its first line ending in `{` or `;`.
        let Some(open) = (i..lines.len()).find(|&j| {
            let end = lines[j].1.trim_end();
            end.ends_with('{') || end.ends_with(';') || (j == i && end.ends_with('}'))
        }) else {
            continue;
        };
        let close = format!("{indent}}}");
        let end = if lines[open].1.trim_end().ends_with('{') {
            (open + 1..lines.len()).find(|&j| lines[j].1.starts_with(&close))
        } else {
            Some(open)
        };
        let length = end.map_or(0, |end| lines[end].0 - number + 1);
        if length > limit {
            long.push((*number, name, length));
        }
    }
    long
}

/// Functions over the limit in `files`, one line each.
pub fn long_functions_of(files: &[File]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        for (line, name, length) in long_functions(file, FUNCTION_LIMIT) {
            found.push(format!("{}:{line}: {name} is {length} lines", file.path));
        }
    }
    found
}

/// Files over the limit in `files`, one line each.
pub fn long_files_of(files: &[File]) -> Vec<String> {
    files
        .iter()
        .filter(|file| file.lines.len() > FILE_LIMIT)
        .map(|file| {
            format!(
                "{}: {} lines outside its tests",
                file.path,
                file.lines.len()
            )
        })
        .collect()
}
