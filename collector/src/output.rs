//! What a run leaves behind and shows: the report file (`report`), the per-request records
//! (`records`), the progress on the terminal (`progress`), and the files `view` and `export`
//! read (`report_files`, `viewer_files`).

pub mod progress;
pub mod records;
mod report;
pub mod report_files;
pub mod run_files;
pub mod viewer_files;

pub use report::*;
