//! Integration tests of the report crate against the files in `data/`.

mod data_files;
mod load;
mod schema_files;

use std::path::PathBuf;

/// The repository's `data/` folder.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data")
}
