//! Error kinds: a typed enum that reads and writes the very strings reports held before it.

use infermeter_report::{ErrorKind, Outcome, RequestCounts, RequestRecord};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Every name the collector wrote when kinds were bare strings, with the kind it reads as.
fn written_names() -> Vec<(&'static str, ErrorKind)> {
    vec![
        ("connect", ErrorKind::Connect),
        ("disconnect", ErrorKind::Disconnect),
        ("http_401", ErrorKind::Http(401)),
        ("http_429", ErrorKind::Http(429)),
        ("http_500", ErrorKind::Http(500)),
        ("http_503", ErrorKind::Http(503)),
        ("timeout_first_token", ErrorKind::TimeoutFirstToken),
        ("timeout_total", ErrorKind::TimeoutTotal),
        ("malformed_sse", ErrorKind::MalformedSse),
        ("error_event", ErrorKind::ErrorEvent),
        ("closed_without_done", ErrorKind::ClosedWithoutDone),
        ("no_output", ErrorKind::NoOutput),
    ]
}

#[test]
fn every_written_name_reads_as_its_kind_and_writes_back_unchanged() {
    for (name, kind) in written_names() {
        let read: ErrorKind = serde_json::from_value(json!(name)).unwrap();
        assert_eq!(read, kind, "{name}");
        assert!(
            !matches!(read, ErrorKind::Other(_)),
            "{name} is a known kind"
        );
        assert_eq!(serde_json::to_value(&read).unwrap(), json!(name));
        assert_eq!(read.to_string(), name);
    }
}

#[test]
fn a_record_line_from_before_the_enum_round_trips_byte_for_byte() {
    let line = r#"{"scenario":"s","mode":"burst","concurrency":3,"trial":0,"index":1,"warmup":false,"in_window":true,"outcome":{"status":"incomplete","kind":"malformed_sse","detail":"expected value"},"scheduled_s":0.0,"sent_s":0.001,"ttft_s":0.2,"e2e_s":0.3}"#;
    let record: RequestRecord = serde_json::from_str(line).unwrap();
    assert_eq!(
        record.outcome,
        Outcome::Incomplete {
            kind: ErrorKind::MalformedSse,
            detail: "expected value".into()
        }
    );
    assert_eq!(serde_json::to_string(&record).unwrap(), line);
}

#[test]
fn error_counts_keep_the_order_and_names_of_strings() {
    let counts = r#"{"ok":1,"incomplete":4,"errored":4,"error_kinds":{"closed_without_done":1,"connect":1,"disconnect":2,"error_event":1,"http_429":1,"http_503":1,"timeout_first_token":1}}"#;
    let read: RequestCounts = serde_json::from_str(counts).unwrap();
    assert_eq!(read.error_kinds[&ErrorKind::Http(429)], 1);
    assert_eq!(read.error_kinds[&ErrorKind::Disconnect], 2);
    // Written in the order of the names, as a map of strings was.
    assert_eq!(serde_json::to_string(&read).unwrap(), counts);
}

#[test]
fn a_kind_from_a_newer_collector_is_kept_as_written() {
    let read: ErrorKind = serde_json::from_value(json!("retried_after_reset")).unwrap();
    assert_eq!(read, ErrorKind::Other("retried_after_reset".into()));
    assert_eq!(
        serde_json::to_value(&read).unwrap(),
        json!("retried_after_reset")
    );
    // Not an HTTP status: kept as written rather than normalised.
    for name in ["http_", "http_42", "http_0429", "http_4299", "http_abc"] {
        assert_eq!(ErrorKind::from_name(name), ErrorKind::Other(name.into()));
    }
}

#[test]
fn the_schema_lists_the_kinds_this_build_writes() {
    let schema: Value = serde_json::from_str(&infermeter_report::json_schema::record_schema())
        .expect("the schema is JSON");
    let kinds = &schema["$defs"]["ErrorKind"]["anyOf"];
    let named = kinds[0]["enum"].as_array().expect("an enum of names");
    for (name, kind) in written_names() {
        match kind {
            ErrorKind::Http(_) => assert_eq!(kinds[1]["pattern"], json!("^http_[0-9]{3}$")),
            _ => assert!(
                named.contains(&json!(name)),
                "{name} missing from {named:?}"
            ),
        }
    }
    assert_eq!(named.len(), 8);
}

proptest! {
    #[test]
    fn any_name_reads_back_to_itself(name in "[a-z_0-9]{0,24}") {
        prop_assert_eq!(ErrorKind::from_name(&name).to_string(), name);
    }

    #[test]
    fn any_status_round_trips(status in 100u16..1000) {
        let kind = ErrorKind::Http(status);
        prop_assert_eq!(ErrorKind::from_name(&kind.to_string()), kind);
    }
}
