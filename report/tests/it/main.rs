//! Integration tests of the report crate against the files in `data/`.

mod data_files;
mod decisions;
mod error_kinds;
mod imports;
mod load;
mod schema_files;

use std::path::PathBuf;

/// The repository's `data/` folder, found at run time: a build cache shared by checkouts can
/// hold this binary built in another one, and cargo does not rebuild it for a path change alone.
pub fn data_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
        .join("../data")
}
