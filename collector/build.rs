//! Embeds the built viewer (`dist/`, from `scripts/build-viewer.sh`) in the binary, so that
//! `infermeter view` and `infermeter export` work from any directory with no checkout.
//!
//! The folder is `INFERMETER_VIEWER_DIST` when set (then it must hold a built viewer), else the
//! workspace's `dist/`. Without one, nothing is embedded and the build still succeeds: the
//! collector builds and tests without the wasm toolchain, and the two commands say how to get
//! the viewer. That is why this is a build script and not `include_dir` or `rust-embed`: both
//! fail to compile when the folder is missing (and `rust-embed` reads the disk at run time in
//! debug builds, which would not test what ships). The generated file lists each file with
//! `include_bytes!`, so rustc reads them itself.
//!
//! Cargo reruns this when the folder's files change (`rerun-if-changed` on a folder watches
//! every file in it), or when `INFERMETER_VIEWER_DIST` changes. A missing folder is not watched
//! (cargo would rerun this, and rebuild the crate, on every build): after building the viewer
//! for the first time, a build embeds it once `INFERMETER_VIEWER_DIST` names it, as
//! `scripts/build-wheel.sh` does; in a checkout, `infermeter view` finds `dist/` meanwhile.
//!
//! `INFERMETER_VIEWER_BUILDING` set: the viewer is being built, so this fails instead of
//! reading a half-written folder. `scripts/demo.sh` builds the collector that way (with
//! `--keep-going`) while the viewer builds: every dependency compiles meanwhile, and the build
//! after the viewer's only runs this and compiles the collector's own crate. Not watched (it
//! changes nothing this writes): a run that failed for it is rerun by the next build anyway.

use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

const DIST_ENV: &str = "INFERMETER_VIEWER_DIST";
const BUILDING_ENV: &str = "INFERMETER_VIEWER_BUILDING";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={DIST_ENV}");
    if std::env::var_os(BUILDING_ENV).is_some_and(|v| !v.is_empty()) {
        panic!(
            "{BUILDING_ENV} is set: the viewer is still being built, so the collector waits for \
             it (scripts/demo.sh builds the collector again once the viewer is whole); unset \
             {BUILDING_ENV} to build it now"
        );
    }
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let named = std::env::var_os(DIST_ENV).filter(|d| !d.is_empty());
    let dist = match &named {
        Some(dir) => PathBuf::from(dir),
        None => manifest_dir.join("../dist"),
    };
    let files = if dist.join("index.html").is_file() {
        let dist = dist.canonicalize().unwrap();
        println!("cargo:rerun-if-changed={}", dist.display());
        let mut files = Vec::new();
        collect(&dist, &dist, &mut files);
        files.sort();
        files
    } else if named.is_some() {
        panic!(
            "{DIST_ENV}={} holds no built viewer (no index.html): build it with \
             `bash scripts/build-viewer.sh`, or unset {DIST_ENV} to build without the viewer",
            dist.display()
        );
    } else {
        Vec::new()
    };

    let mut code = String::from(
        "/// The built viewer: (path under dist/, ETag, contents), sorted by path; empty when\n\
         /// the collector was built without it (collector/build.rs).\n\
         pub static FILES: &[(&str, &str, &[u8])] = &[\n",
    );
    for (relative, absolute) in &files {
        let bytes = std::fs::read(absolute).unwrap();
        // A strong validator for revalidation (If-None-Match): length and a hash of the bytes.
        let mut hasher = std::hash::DefaultHasher::new();
        bytes.hash(&mut hasher);
        let etag = format!("\"{:x}-{:016x}\"", bytes.len(), hasher.finish());
        writeln!(
            code,
            "    ({relative:?}, {etag:?}, include_bytes!({:?})),",
            absolute.display().to_string()
        )
        .unwrap();
    }
    code.push_str("];\n");
    // `infermeter --version` says whether this binary can `view` and `export` on its own.
    let version = std::env::var("CARGO_PKG_VERSION").unwrap();
    let long_version = if files.is_empty() {
        format!("{version} (built without the viewer: `view` and `export` need a checkout's dist/)")
    } else {
        format!("{version} (viewer built in: {} files)", files.len())
    };
    println!("cargo:rustc-env=INFERMETER_LONG_VERSION={long_version}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("viewer_files.rs");
    std::fs::write(out, code).unwrap();
}

/// Every file under `dir` as (path relative to `root` with `/`, absolute path). `data/` is left
/// out: it holds the reports bundled for a static deployment, and `view` and `export` bring
/// their own.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let relative = path.strip_prefix(root).unwrap();
        if relative == Path::new("data") {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let relative: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push((relative.join("/"), path));
        }
    }
}
