//! The committed JSON Schemas match the types.

use infermeter_report::json_schema::{record_schema, report_schema, summary_schema};

fn assert_current(file: &str, generated: String) {
    let path = super::data_dir().join("schema").join(file);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "data/schema/{file} is out of date with the types: run `cargo run -p infermeter-report --example write_schema`"
    );
}

#[test]
fn committed_schemas_are_current() {
    assert_current("report.schema.json", report_schema());
    assert_current("record.schema.json", record_schema());
    assert_current("summary.schema.json", summary_schema());
}
