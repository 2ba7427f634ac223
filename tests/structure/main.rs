//! The workspace's structure, checked on the sources of every crate (collector, report, sim,
//! engine, viewer): no two files import each other in a loop, each crate's top-level modules
//! keep their order (layers.rs), only the collector's command-line layer knows the command line,
//! and no function or file outside the tests outgrows its limit (80 and 800 lines).

mod imports;
mod layers;
mod lengths;
mod sources;

use sources::{crate_files, workspace_crates, File};

fn crate_named(name: &str) -> Vec<File> {
    workspace_crates()
        .into_iter()
        .find(|(crate_name, _)| *crate_name == name)
        .map(|(_, files)| files)
        .unwrap()
}

fn fail_on(found: Vec<String>, what: &str) {
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
}

#[test]
fn no_files_import_each_other_in_a_loop() {
    let mut found = Vec::new();
    for (name, files) in workspace_crates() {
        let graph = imports::graph(&files);
        found.extend(
            imports::describe_loops(&graph)
                .into_iter()
                .map(|described| format!("{name}: {described}")),
        );
    }
    fail_on(
        found,
        "files that import each other in a loop (move what both need below both)",
    );
}

/// A small crate in memory, from (path, text) pairs.
fn synthetic(files: &[(&str, &str)]) -> Vec<File> {
    let read = |path: &str| {
        files
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, text)| text.to_string())
    };
    crate_files("src", &read)
}

#[test]
fn the_loop_check_finds_a_planted_loop_and_names_it() {
    let base = [
        ("src/lib.rs", "mod a;\npub mod b;\nmod c;\n"),
        // A module file re-exporting its part, which uses the module: no loop.
        ("src/a.rs", "mod part;\npub use part::Part;\npub struct A;\n"),
        ("src/a/part.rs", "use super::A;\npub struct Part;\n"),
        ("src/b.rs", "use crate::a::Part;\npub struct B;\n"),
        // The test module may import anything.
        (
            "src/c.rs",
            "pub fn c() {\n    crate::b::f();\n}\n\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
        ),
    ];
    let clean = imports::graph(&synthetic(&base));
    assert_eq!(imports::describe_loops(&clean), Vec::<String>::new());
    // b.rs → a/part.rs (through a.rs's re-export) and c.rs → b.rs are there.
    assert!(clean.edges[3].contains_key(&2));
    assert!(clean.edges[4].contains_key(&3));
    // Plant one: a/part.rs names c.rs inline, and c.rs imports b.rs, which imports a/part.rs.
    let mut planted = base;
    planted[2].1 = "use super::A;\npub struct Part;\nfn f() {\n    super::super::c::c();\n}\n";
    let looped = imports::graph(&synthetic(&planted));
    assert_eq!(
        imports::describe_loops(&looped),
        [
            "3 files import each other: src/a/part.rs:4 → src/c.rs:2 → src/b.rs:1 → src/a/part.rs \
          (all: src/a/part.rs, src/b.rs, src/c.rs)"
        ]
    );
}

#[test]
fn each_crates_modules_keep_their_layers() {
    let mut found = Vec::new();
    for (name, layers) in [("collector", layers::COLLECTOR), ("report", layers::REPORT)] {
        let files = crate_named(name);
        let graph = imports::graph(&files);
        found.extend(layers::violations(&files, &graph, layers));
    }
    fail_on(
        found,
        "modules importing a higher layer (move what they need down, or the layer order in tests/structure/layers.rs if it is wrong)",
    );
    // The check itself finds what it looks for: the collector upside down.
    let files = crate_named("collector");
    let graph = imports::graph(&files);
    let upside_down: Vec<&[&str]> = layers::COLLECTOR.iter().rev().copied().collect();
    assert!(!layers::violations(&files, &graph, &upside_down).is_empty());
}

#[test]
fn only_the_command_line_layer_knows_the_command_line() {
    let files = crate_named("collector");
    let below = ["http", "load", "prompts", "output", "run", "suite"];
    let found: Vec<String> = files
        .iter()
        .filter(|f| {
            f.module
                .first()
                .is_some_and(|m| below.contains(&m.as_str()))
        })
        .flat_map(layers::command_line_uses)
        .collect();
    fail_on(
        found,
        "modules below the command line import it (move the option into commands/ and pass a plain value)",
    );
    // The check itself finds what it looks for.
    let commands = files
        .iter()
        .find(|f| f.path == "collector/src/commands/run.rs")
        .unwrap();
    assert!(!layers::command_line_uses(commands).is_empty());
}

#[test]
fn no_function_outside_the_tests_is_over_80_lines() {
    let found = workspace_crates()
        .iter()
        .flat_map(|(_, files)| lengths::long_functions_of(files))
        .collect();
    fail_on(
        found,
        "functions over 80 lines (split them, or make them a type with methods)",
    );
    // The check itself measures, and leaves the tests out.
    let body = "    let x = 1;\n".repeat(81);
    let text = format!(
        "pub(crate) async fn big() {{\n{body}}}\n\nfn small() {{\n}}\n\n#[cfg(test)]\nmod tests {{\n    fn big_test() {{\n{body}    }}\n}}\n"
    );
    let file = &synthetic(&[("src/lib.rs", &text)])[0];
    assert_eq!(
        lengths::long_functions(file, 80),
        [(1, "big".to_string(), 83)]
    );
}

#[test]
fn no_file_outside_the_tests_is_over_800_lines() {
    let found = workspace_crates()
        .iter()
        .flat_map(|(_, files)| lengths::long_files_of(files))
        .collect();
    fail_on(
        found,
        "files over 800 lines outside their tests (split them along their concerns)",
    );
    let text = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        "const X: u8 = 1;\n".repeat(800),
        "    const Y: u8 = 1;\n".repeat(10)
    );
    assert!(lengths::long_files_of(&synthetic(&[("src/lib.rs", &text)])).is_empty());
    let text = "const X: u8 = 1;\n".repeat(801);
    assert_eq!(
        lengths::long_files_of(&synthetic(&[("src/lib.rs", &text)])),
        ["src/lib.rs: 801 lines outside its tests"]
    );
}
