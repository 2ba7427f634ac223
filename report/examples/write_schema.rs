//! Writes `data/schema/report.schema.json`, `record.schema.json` and `summary.schema.json`
//! from the types.
//! Run: `cargo run -p infermeter-report --example write_schema`.

use std::path::Path;

use infermeter_report::json_schema::{record_schema, report_schema, summary_schema};

fn main() {
    let dir =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("run with cargo run --example"))
            .parent()
            .expect("the crate sits in the workspace")
            .join("data/schema");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    for (file, schema) in [
        ("report.schema.json", report_schema()),
        ("record.schema.json", record_schema()),
        ("summary.schema.json", summary_schema()),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, schema).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
}
