//! Splits the viewer's wasm, as cargo linked it (with `--emit-relocs`), at the functions marked
//! `#[lazy]` (Leptos' wrapper of `wasm_split_helpers`): the main module keeps what the first
//! screen runs, each lazy function's code moves into a module of its own that the page fetches
//! the first time it is called. Writes into OUT_DIR the main module (`main.wasm`, for
//! wasm-bindgen), the split modules (`split_*.wasm`, `chunk_*.wasm`) and `__wasm_split.js`,
//! which loads them and imports `initSync` from `./<js-name>.js`, the wasm-bindgen loader.
//!
//!   infermeter-wasm-split CARGO_WASM OUT_DIR JS_NAME
//!
//! A tool of its own (not a step of the JS build) because the splitting is a Rust library,
//! `wasm_split_cli_support`, the one cargo-leptos runs; run by scripts/assemble-viewer.mjs.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir, js_name] = args.as_slice() else {
        eprintln!("usage: infermeter-wasm-split CARGO_WASM OUT_DIR JS_NAME");
        return ExitCode::from(2);
    };
    match split(Path::new(input), Path::new(out_dir), js_name) {
        Ok(modules) => {
            eprintln!(
                "[wasm-split] {input}: the main module and {modules} split modules in {out_dir}"
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!(
                "infermeter-wasm-split: cannot split {input} into {out_dir}: {error:#} \
                 (was it linked with -Clink-args=--emit-relocs, as scripts/build-viewer.sh does?)"
            );
            ExitCode::FAILURE
        }
    }
}

fn split(input: &Path, out_dir: &Path, js_name: &str) -> Result<usize, String> {
    let wasm = std::fs::read(input).map_err(|e| format!("cannot read it: {e}"))?;
    let main_out = out_dir.join("main.wasm");
    let main_module = format!("./{js_name}.js");
    let mut options = wasm_split_cli_support::Options::new(&wasm);
    options.output_dir = out_dir;
    options.main_out_path = &main_out;
    options.main_module = &main_module;
    let split = wasm_split_cli_support::transform(options).map_err(|e| format!("{e:#}"))?;
    Ok(split.split_modules.len())
}
