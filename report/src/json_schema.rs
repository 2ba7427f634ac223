//! JSON Schemas of the report and record formats and of `infermeter summary --json`,
//! generated from the types. The committed copies in `data/schema/` are written by
//! `cargo run -p infermeter-report --example write_schema` and checked by a test.

use crate::schema::{Report, RequestRecord};
use crate::summary::Summary;

/// Pretty JSON Schema of [`Report`], with a trailing newline (as committed).
pub fn report_schema() -> String {
    pretty(schemars::schema_for!(Report))
}

/// Pretty JSON Schema of one [`RequestRecord`] (a line of the JSONL records file).
pub fn record_schema() -> String {
    pretty(schemars::schema_for!(RequestRecord))
}

/// Pretty JSON Schema of what `infermeter summary --json` prints.
pub fn summary_schema() -> String {
    pretty(schemars::schema_for!(Summary))
}

fn pretty(schema: schemars::Schema) -> String {
    serde_json::to_string_pretty(&schema).expect("a schema serialises") + "\n"
}
