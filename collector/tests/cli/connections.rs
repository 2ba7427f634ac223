//! `--base-url` as users type it: the server's root, its API base or a full endpoint URL.

use infermeter_report::{load_report, Report};

use crate::common::*;

const SUITE: &str = r#"
name = "connections"
warmup = 1
[[scenario]]
id = "short"
name = "Short"
input_tokens = 64
output_tokens = 4
[peak]
levels = [1, 2, 4]
requests_per_slot = 8
min_seconds = 0
"#;

fn read_report(path: &std::path::Path) -> Report {
    load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every way of writing the simulator's address measures it, with the model discovered.
#[tokio::test(flavor = "multi_thread")]
async fn the_root_v1_and_endpoint_urls_all_measure_the_simulator() {
    let sim = start_sim(fast_sim_args()).await;
    let v1 = sim.base_url().trim_end_matches('/').to_string();
    let root = v1.strip_suffix("/v1").unwrap().to_string();
    let dir = out_dir("base-url-forms");
    let suite = small_suite(&dir, &SUITE.replace("[1, 2, 4]", "[2]"));
    for (name, typed, api) in [
        ("root", root.clone(), "chat"),
        ("root-slash", format!("{root}/"), "chat"),
        ("v1", v1.clone(), "chat"),
        ("chat", format!("{v1}/chat/completions"), "chat"),
        ("completions", format!("{v1}/completions"), "completions"),
    ] {
        let report = dir.join(format!("{name}.json"));
        let args = run_args(&typed, suite.to_str().unwrap(), &report, &[]);
        let out = infermeter(&args, &[]).await;
        assert!(out.status.success(), "{typed}: {}", text(&out));
        let report = read_report(&report);
        assert_eq!(
            report.metadata.engine.base_url.as_deref(),
            Some(v1.as_str())
        );
        assert_eq!(report.metadata.engine.api.as_deref(), Some(api), "{typed}");
        assert_eq!(report.metadata.engine.name, "infermeter-sim", "{typed}");
        let level = &report.series[0].levels[0];
        assert!(level.requests.ok > 0, "{typed}");
        assert_eq!(level.requests.total(), level.requests.ok, "{typed}");
        // The endpoint measured, printed once.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let endpoint = format!(
            "endpoint=\"{v1}/{}\"",
            if api == "chat" {
                "chat/completions"
            } else {
                "completions"
            }
        );
        assert_eq!(stderr.matches(&endpoint).count(), 1, "{typed}: {stderr}");
    }
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_path_says_which_urls_it_tried() {
    let sim = start_sim(fast_sim_args()).await;
    let root = sim
        .base_url()
        .trim_end_matches('/')
        .strip_suffix("/v1")
        .unwrap()
        .to_string();
    let dir = out_dir("base-url-unknown");
    let report = dir.join("report.json");
    let typed = format!("{root}/nowhere");
    let out = infermeter(
        &run_args(&typed, "four-scenario", &report, &["--quiet"]),
        &[],
    )
    .await;
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for tried in [
        format!("{typed}/models: HTTP 404"),
        format!("{typed}/v1/models: HTTP 404"),
    ] {
        assert!(stderr.contains(&tried), "{tried} missing: {stderr}");
    }
    assert!(
        stderr.contains("pass --model, or check --base-url"),
        "{stderr}"
    );
    // A full endpoint URL and a different --api contradict each other.
    let chat = format!("{root}/v1/chat/completions");
    let extra = ["--quiet", "--api", "completions"];
    let out = infermeter(&run_args(&chat, "four-scenario", &report, &extra), &[]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("names the chat endpoint, but --api completions"),
        "{stderr}"
    );
    assert!(!report.exists(), "nothing measured, nothing written");
    sim.shutdown().await;
}
