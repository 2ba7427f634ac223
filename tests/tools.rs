//! The tool versions that must agree are pinned once, in the root Cargo.toml
//! (`[workspace.metadata.tools]`); scripts/setup-build.sh and scripts/setup.sh install those.
//! These tests fail when Trunk.toml, Cargo.lock or tools/package.json drift from them, which
//! would otherwise surface as a blank page (wasm-bindgen schema mismatch) or a build that tries
//! to download tools; and when the viewer's build needs an npm tool that scripts/demo.sh does
//! not install.

use std::path::Path;

fn read(name: &str) -> String {
    // Read at run time: a build cache shared by checkouts can hold this binary built in
    // another one, and cargo does not rebuild it for a path change alone.
    let path =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Value of `key = "..."` in the given TOML section (first match).
fn toml_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut in_section = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == format!("[{section}]");
            continue;
        }
        if in_section {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim() == key {
                    return Some(v.trim().trim_matches('"').to_string());
                }
            }
        }
    }
    None
}

fn pinned(key: &str) -> String {
    toml_value(&read("Cargo.toml"), "workspace.metadata.tools", key)
        .unwrap_or_else(|| panic!("[workspace.metadata.tools] {key} missing from Cargo.toml"))
}

#[test]
fn trunk_toml_uses_the_pinned_wasm_bindgen_and_wasm_opt() {
    let trunk = read("Trunk.toml");
    assert_eq!(
        toml_value(&trunk, "tools", "wasm_bindgen").as_deref(),
        Some(pinned("wasm-bindgen").as_str()),
        "Trunk.toml [tools] wasm_bindgen must equal Cargo.toml's pinned wasm-bindgen"
    );
    assert_eq!(
        toml_value(&trunk, "tools", "wasm_opt"),
        Some(format!("version_{}", pinned("binaryen"))),
        "Trunk.toml [tools] wasm_opt must equal version_<pinned binaryen>"
    );
}

#[test]
fn cargo_lock_resolves_the_pinned_wasm_bindgen() {
    let lock = read("Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|block| block.contains("\nname = \"wasm-bindgen\"\n"))
        .and_then(|block| block.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_string())
        .expect("wasm-bindgen in Cargo.lock");
    assert_eq!(
        version,
        pinned("wasm-bindgen"),
        "wasm-bindgen crate and CLI must match"
    );
}

#[test]
fn npm_tools_pin_the_same_binaryen() {
    let package = read("tools/package.json");
    assert!(
        package.contains(&format!("\"binaryen\": \"{}.", pinned("binaryen"))),
        "tools/package.json binaryen must match Cargo.toml's pinned binaryen"
    );
}

/// scripts/demo.sh installs only the `dependencies` of tools/package.json (scripts/setup-build.sh
/// runs `npm install --omit=dev`; the tests' tools are devDependencies): every npm module the
/// viewer's build checks for, and binaryen (its wasm-opt), must be among them.
#[test]
fn the_viewer_build_needs_only_the_npm_dependencies() {
    let package: serde_json::Value =
        serde_json::from_str(&read("tools/package.json")).expect("tools/package.json is JSON");
    let dependencies = package["dependencies"]
        .as_object()
        .expect("tools/package.json has dependencies");
    let build = read("scripts/build-viewer.sh");
    let modules = build
        .lines()
        .find_map(|l| l.strip_prefix("for module in "))
        .and_then(|l| l.split_once(';'))
        .map(|(list, _)| list.split_whitespace().collect::<Vec<_>>())
        .expect("scripts/build-viewer.sh checks its npm modules with `for module in ...;`");
    assert!(!modules.is_empty());
    for module in modules.into_iter().chain(["binaryen"]) {
        assert!(
            dependencies.contains_key(module),
            "tools/package.json: {module} builds the viewer, so it must be in dependencies \
             (scripts/demo.sh does not install devDependencies)"
        );
    }
}
