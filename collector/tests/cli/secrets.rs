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
    let sim = start_sim(infermeter_sim::SimArgs {
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
    assert!(records
        .iter()
        .all(|r| r.outcome == infermeter_report::Outcome::Ok));
    assert_no_key_in(&dir, &out, KEY);

    // A wrong key from a file: requests fail with 401, and that key does not leak either.
    let wrong = "sk-wrong-key-7a7a7a";
    let key_file = dir.join("key.txt");
    std::fs::write(&key_file, format!("{wrong}\n")).unwrap();
    let report2 = dir.join("report2.json");
    let extra = [
        "--model",
        "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "--api-key-file",
        key_file.to_str().unwrap(),
    ];
    let args = run_args(&sim.base_url(), suite.to_str().unwrap(), &report2, &extra);
    let out = infermeter(&args, &[("INFERMETER_LOG", "debug")]).await;
    assert!(out.status.success(), "{}", text(&out));
    std::fs::remove_file(&key_file).unwrap();
    let records = read_records(&report2);
    assert!(
        records.iter().all(|r| matches!(
            &r.outcome,
            infermeter_report::Outcome::Errored { kind, .. } if kind == "http_401"
        )),
        "{records:?}"
    );
    assert_no_key_in(&dir, &out, wrong);
    sim.shutdown().await;
}
