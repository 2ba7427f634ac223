//! infermeter's report model: the versioned benchmark schema and every derived figure.
//!
//! Pure: no I/O, no async, builds for wasm32. The collector and the viewer both compute through
//! this crate, so a number never differs between the terminal and the browser.

pub mod aggregate;
pub mod analysis;
pub mod import;
pub mod index;
pub mod inline;
pub mod json_schema;
pub mod lengths;
pub mod load;
pub mod order;
pub mod presets;
pub mod pretty_json;
pub mod schema;
pub mod stats;
pub mod summary;
pub mod validate;

pub use load::{load_report, LoadError};
pub use schema::*;
pub use stats::{Distribution, Stat};
pub use validate::{validate, Problem};
