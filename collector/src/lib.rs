//! infermeter collector: drives OpenAI-compatible streaming endpoints through scenario x load
//! sweeps and writes benchmark reports (schema in `infermeter-report`).

// Side channels and helpers (one concern each).
pub mod export;
pub mod power;
pub mod prompt;
pub mod scrape;
pub mod view;
pub mod viewer_files;

// The benchmark run.
pub mod adapters;
pub mod aggregate;
pub mod arrival;
pub mod bench_timing;
pub mod calibrate;
pub mod cli;
pub mod cli_docs;
pub mod driver;
pub mod endpoint;
pub mod output;
pub mod progress;
pub mod prompt_plan;
pub mod records;
pub mod report_files;
pub mod run;
pub mod scheduler;
pub mod suite;
pub mod summary;
pub mod transport;
