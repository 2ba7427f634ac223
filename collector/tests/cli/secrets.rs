//! Acceptance 5: the API key reaches the server and nothing else.

use crate::common::*;

const KEY: &str = "sk-infermeter-TEST-5f1c9e";

const SUITE: &str = r#"
name = "secrets"
warmup = 1
[[scenario]]
id = "short"
name = "Short"
input_tokens = 64
output_tokens = 8
[burst]
levels = [2]
"#;

fn assert_no_key_in(dir: &std::path::Path, out: &std::process::Output, secret: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} contains the key",
            path.display()
        );
    }
    assert!(
        !text(out).contains(secret),
        "the key leaked to stdout/stderr"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn api_key_never_appears_in_outputs_or_logs() {
    let sim = start_sim(infermeter_sim::SimConfig {
        api_key: Some(KEY.into()),
        ..fast_sim_args()
    })
    .await;
    let dir = out_dir("secrets");
    let suite = small_suite(&dir, SUITE);
    let report = dir.join("report.json");
    let args = run_args(
        &sim.base_url(),
        suite.to_str().unwrap(),
        &report,
        &["--log-format", "json"],
    );
    let out = infermeter(
        &args,
        &[("OPENAI_API_KEY", KEY), ("INFERMETER_LOG", "debug")],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let records = read_records(&report);
    // One warmup request and a burst of two, all answered.
    assert_eq!(records.len(), 3, "{records:?}");
    assert!(records
        .iter()
        .all(|r| r.outcome == infermeter_report::Outcome::Ok));
    assert_no_key_in(&dir, &out, KEY);

    // A key from a file: the right one is accepted, a wrong one gets 401 (so the file's key is
    // what was sent, not none), and neither leaks.
    let wrong = "sk-wrong-key-7a7a7a";
    for (n, (key, accepted)) in [(KEY, true), (wrong, false)].into_iter().enumerate() {
        let key_file = dir.join("key.txt");
        std::fs::write(&key_file, format!("{key}\n")).unwrap();
        let report = dir.join(format!("report-key-file-{n}.json"));
        let extra = [
            "--model",
            "Qwen/Qwen3-Coder-30B-A3B-Instruct",
            "--api-key-file",
            key_file.to_str().unwrap(),
        ];
        let args = run_args(&sim.base_url(), suite.to_str().unwrap(), &report, &extra);
        let out = infermeter(&args, &[("INFERMETER_LOG", "debug")]).await;
        assert!(out.status.success(), "{}", text(&out));
        std::fs::remove_file(&key_file).unwrap();
        let records = read_records(&report);
        assert_eq!(records.len(), 3, "{records:?}");
        assert!(
            records.iter().all(|r| match &r.outcome {
                infermeter_report::Outcome::Ok => accepted,
                infermeter_report::Outcome::Errored { kind, .. } => {
                    !accepted && *kind == infermeter_report::ErrorKind::Http(401)
                }
                _ => false,
            }),
            "key accepted: {accepted}; {records:?}"
        );
        assert_no_key_in(&dir, &out, key);
    }
    sim.shutdown().await;
}
