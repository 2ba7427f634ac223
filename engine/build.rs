//! Turns `profiles.toml` into JSON for the crate to embed, so reading the tables at run time
//! needs only `serde_json` (no TOML parser in the viewer's wasm). A malformed file fails the
//! build with its parse error.

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=profiles.toml");
    let text = std::fs::read_to_string("profiles.toml").expect("engine/profiles.toml is readable");
    let table: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("engine/profiles.toml: {e}"));
    let json = serde_json::to_string(&table).expect("TOML values serialise as JSON");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("profiles.json"), json).expect("OUT_DIR is writable");
}
