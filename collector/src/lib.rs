//! infermeter collector: drives OpenAI-compatible streaming endpoints through scenario x load
//! sweeps and writes benchmark reports (schema in `infermeter-report`).

// Side channels and helpers (one concern each).
pub mod power;
pub mod prompt;
pub mod scrape;
pub mod view;
