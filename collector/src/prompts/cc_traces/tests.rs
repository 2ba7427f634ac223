use super::*;

/// The repository's small cc-traces trace with subagents (a joined pair, one nested, one in
/// the background).
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc-traces/subagents.json")
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The error of reading `text` as a trace file: its entry and message.
fn refusal(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t.json", text);
    match read(&path, Timing::Trace) {
        Err(CcTraceError::Entry {
            file,
            entry,
            message,
        }) => {
            assert_eq!(file, path);
            (entry, message)
        }
        other => panic!("{other:?}"),
    }
}

/// A trace of `requests` (JSON text).
fn trace(requests: &str) -> String {
    format!(r#"{{"id": "x", "models": [], "block_size": 64, "requests": [{requests}]}}"#)
}

/// An agent's parent, depth, spawn and join points, and calls.
type Shape = (Option<usize>, u32, Option<usize>, Option<usize>, usize);

const CALL: &str = r#"{"t": 0, "type": "n", "in": 100, "out": 5, "hash_ids": [1, 2]}"#;
/// A call a second in, where a subagent spawned then starts.
const CALL1: &str = r#"{"t": 1, "type": "n", "in": 100, "out": 5, "hash_ids": [1, 2]}"#;

#[test]
fn subagents_become_children_spawned_after_the_preceding_call_and_joined_by_the_next() {
    let set = read(&fixture(), Timing::Trace).unwrap();
    assert_eq!(set.block_tokens, 64);
    let [job] = &set.jobs[..] else { panic!() };
    assert_eq!(job.name, "fork-join");
    assert_eq!(job.check(), Ok(()));
    let shape: Vec<Shape> = job
        .agents
        .iter()
        .map(|a| {
            (
                a.parent,
                a.depth,
                a.spawned_after,
                a.joined_by,
                a.calls.len(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (None, 0, None, None, 3),
            // agent_001, joined by the root's call 1 (t 3.5)
            (Some(0), 1, Some(0), Some(1), 2),
            // agent_002 inside it, joined by its call 1
            (Some(1), 2, Some(0), Some(1), 1),
            (Some(0), 1, Some(0), Some(1), 1),
            // async_launched: the root's call 2 does not wait for it
            (Some(0), 1, Some(1), None, 2),
            // no call follows it: the background
            (Some(0), 1, Some(2), None, 1),
        ]
    );
    let root = &job.agents[0];
    assert_eq!(root.calls[1].blocks, [1, 2, 3, 4, 6, 7, 8]);
    assert_eq!(
        (root.calls[1].input_tokens, root.calls[1].output_tokens),
        (424, 12)
    );
    // Root call 1 at 3.5 s waited for agent_001's last reply (2.5 + 0.5 s): 0.5 s.
    assert!((root.calls[1].wait_ms - 500.0).abs() < 1e-6);
    assert_eq!(root.calls[1].offset_ms, Some(3500.0));
    // agent_001's first call came 0.1 s after its spawn at 1.2 s.
    assert!((job.agents[1].calls[0].wait_ms - 100.0).abs() < 1e-6);
    let think = read(&fixture(), Timing::ThinkOnly).unwrap();
    assert!((think.jobs[0].agents[0].calls[1].wait_ms - 300.0).abs() < 1e-6);
}

#[test]
fn a_folder_is_read_file_by_file_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir, "b.json", &trace(CALL).replace("\"x\"", "\"second\""));
    write(&dir, "a.json", &trace(CALL).replace(r#""id": "x", "#, ""));
    write(&dir, "notes.txt", "not a trace");
    let set = read(dir.path(), Timing::Trace).unwrap();
    let names: Vec<&str> = set.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "second"]);
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        read(empty.path(), Timing::Trace),
        Err(CcTraceError::Empty(_))
    ));
}

#[test]
fn a_truncated_file_is_refused_naming_it() {
    let text = trace(CALL);
    let (entry, message) = refusal(&text[..text.len() - 10]);
    assert_eq!(entry, "the file");
    assert!(message.contains("not valid JSON"), "{message}");
}

#[test]
fn a_file_of_another_format_is_refused() {
    let (entry, message) = refusal(r#"{"timestamp": 0, "input_length": 5}"#);
    assert_eq!(entry, "the trace");
    assert!(message.contains("no `requests`"), "{message}");
    let (_, message) = refusal("[1, 2]");
    assert!(message.contains("not a JSON object"), "{message}");
    let (_, message) = refusal(&trace(CALL).replace("64", "16"));
    assert!(message.contains("`block_size` is 16"), "{message}");
    let (_, message) =
        refusal(&trace(CALL).replace(r#""id""#, r#""hash_id_scope": "global", "id""#));
    assert!(message.contains("global"), "{message}");
}

#[test]
fn a_nested_entry_that_is_wrong_is_named_by_its_path() {
    let nested = |inner: &str| {
        trace(&format!(
            r#"{CALL}, {{"t": 1, "type": "subagent", "status": "completed", "requests": [{CALL1}, {inner}]}}"#
        ))
    };
    let (entry, message) = refusal(&nested(r#"{"t": 2, "type": "n", "out": 5}"#));
    assert_eq!(entry, "requests[1].requests[1]");
    assert!(message.contains("no `in`"), "{message}");
    let (entry, message) = refusal(&nested(r#"{"t": 2, "type": "x", "in": 1, "out": 1}"#));
    assert_eq!(entry, "requests[1].requests[1]");
    assert!(
        message.contains("not \"n\", \"s\" or \"subagent\""),
        "{message}"
    );
    let (_, message) = refusal(&nested(
        r#"{"t": 2, "type": "n", "in": 9, "out": 1, "hash_ids": [1, -2]}"#,
    ));
    assert!(message.contains("`hash_ids`"), "{message}");
    let (_, message) = refusal(&nested(r#"{"t": 2, "type": "n", "in": "9", "out": 1}"#));
    assert!(message.contains("`in` is \"9\""), "{message}");
    let (_, message) = refusal(&nested(r#"{"t": -1, "type": "n", "in": 9, "out": 1}"#));
    assert!(message.contains("`t` is -1"), "{message}");
    let (entry, message) = refusal(&nested(r#"{"t": 0.5, "type": "n", "in": 9, "out": 1}"#));
    assert_eq!(entry, "requests[1].requests[1]");
    assert!(message.contains("comes before"), "{message}");
    let (_, message) = refusal(&nested(
        r#"{"t": 2, "type": "n", "in": 9, "out": 1, "api_time": "slow"}"#,
    ));
    assert!(message.contains("`api_time`"), "{message}");
}

#[test]
fn empty_and_callless_agents_are_refused() {
    let (entry, message) = refusal(&trace(""));
    assert_eq!(
        (entry.as_str(), message.as_str()),
        ("requests", "holds no request")
    );
    let (entry, _) = refusal(&trace(&format!(
        r#"{CALL}, {{"t": 1, "type": "subagent", "requests": []}}"#
    )));
    assert_eq!(entry, "requests[1].requests");
    let (entry, message) = refusal(&trace(&format!(
        r#"{CALL}, {{"t": 1, "type": "subagent"}}"#
    )));
    assert_eq!(entry, "requests[1]");
    assert!(message.contains("without `requests`"), "{message}");
    let (entry, message) = refusal(&trace(&format!(
        r#"{{"t": 0, "type": "subagent", "requests": [{CALL1}]}}"#
    )));
    assert_eq!(entry, "requests");
    assert!(message.contains("no call"), "{message}");
}

#[test]
fn the_error_names_the_file_the_entry_and_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "bad.json", &trace(r#"{"t": 0, "in": 1, "out": 1}"#));
    let text = read(&path, Timing::Trace).unwrap_err().to_string();
    assert!(text.contains("bad.json"), "{text}");
    assert!(text.contains("requests[0]: has no `type`"), "{text}");
    assert!(
        text.contains("a cc-traces trace is one JSON object"),
        "{text}"
    );
}
