//! The collector's layers (docs/architecture.md), checked on its sources: only `cli.rs`,
//! `commands/` and `dev/` know the command line, and no function outside the tests grows past
//! 80 lines.

use std::path::{Path, PathBuf};

use crate::common::manifest_dir;

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

fn src() -> PathBuf {
    manifest_dir().join("src")
}

/// A layer's files: the module file (`load.rs`) and its folder (`load/`).
fn layer(name: &str) -> Vec<PathBuf> {
    let mut files = rust_files(&src().join(name));
    files.push(src().join(format!("{name}.rs")));
    files
}

/// Where `text` names the command line: clap, or the modules that hold the options.
fn command_line_uses(text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
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
        .map(|(n, line)| format!("{}: {}", n + 1, line.trim()))
        .collect()
}

#[test]
fn only_the_command_line_layer_knows_the_command_line() {
    let mut found = Vec::new();
    for name in ["http", "load", "prompts", "output", "run", "suite"] {
        for file in layer(name) {
            let text = std::fs::read_to_string(&file).unwrap();
            for hit in command_line_uses(&text) {
                found.push(format!("{}:{hit}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "modules below the command line import it (move the option into commands/ and pass a plain value):\n{}",
        found.join("\n")
    );
    // The check itself finds what it looks for.
    let commands = std::fs::read_to_string(src().join("commands/run.rs")).unwrap();
    assert!(!command_line_uses(&commands).is_empty());
}

/// Functions of `text` (rustfmt-formatted) longer than `limit` lines, outside its test module:
/// (first line, name, length).
fn long_functions(text: &str, limit: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let tests_start = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod tests"))
        .unwrap_or(lines.len());
    let mut long = Vec::new();
    for (i, line) in lines[..tests_start].iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let signature = [
            "fn ",
            "pub fn ",
            "async fn ",
            "pub async fn ",
            "pub(crate) fn ",
        ]
        .iter()
        .find_map(|start| code.strip_prefix(start));
        let Some(signature) = signature else { continue };
        let name: String = signature
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // A declaration without a body (a trait's) ends at its semicolon.
        let end = (i..lines.len())
            .find(|&j| lines[j] == format!("{indent}}}") || (j == i && code.ends_with(';')));
        let length = end.map_or(0, |end| end - i + 1);
        if length > limit {
            long.push((i + 1, name, length));
        }
    }
    long
}

#[test]
fn no_function_outside_the_tests_is_over_80_lines() {
    let mut found = Vec::new();
    for file in rust_files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, name, length) in long_functions(&text, 80) {
            found.push(format!(
                "{}:{line}: {name} is {length} lines",
                file.display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "functions over 80 lines (split them, or make them a type with methods):\n{}",
        found.join("\n")
    );
    // The check itself measures.
    let body = "    let x = 1;\n".repeat(81);
    let long = format!("fn big() {{\n{body}}}\n\nfn small() {{\n}}\n");
    assert_eq!(long_functions(&long, 80), [(1, "big".to_string(), 83)]);
}
