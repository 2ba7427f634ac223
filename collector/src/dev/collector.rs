//! The collector the self-benchmarks measure: the `infermeter` binary beside this one (cargo
//! builds both into the same folder), run in a child process as a user runs it.

use std::path::PathBuf;

/// The `infermeter` next to the running `infermeter-dev`, else the one on the `PATH`.
pub fn binary() -> PathBuf {
    let name = format!("infermeter{}", std::env::consts::EXE_SUFFIX);
    match std::env::current_exe() {
        Ok(this) => this.with_file_name(name),
        Err(_) => PathBuf::from(name),
    }
}
