//! The viewer as a user without a checkout gets it: `view` and `export` run from a directory
//! outside any checkout serve and inline the copy embedded in the binary (collector/build.rs);
//! a binary built without one says how to get it. Also the generated shell completions.

use std::path::PathBuf;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::*;

fn sample_report() -> PathBuf {
    manifest_dir().join("../data/reports/sample-synthetic.json")
}

/// Whether this build embedded the viewer. `scripts/test.sh` builds the viewer first, so under
/// `CI=true` it must have; a bare `cargo test` before any viewer build checks the other path.
pub(crate) fn embedded() -> bool {
    let out = std::process::Command::new(BIN)
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&out.stdout);
    let embedded = version.contains("viewer built in");
    assert!(
        embedded || version.contains("built without the viewer"),
        "--version says whether the viewer is built in: {version}"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        assert!(
            embedded,
            "under CI=true the collector must embed the viewer built before it"
        );
    }
    embedded
}

/// `infermeter ARGS` run from `dir`, where no checkout is found above.
fn command_in(dir: &std::path::Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env_remove("INFERMETER_DIST")
        .kill_on_drop(true);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn view_serves_the_embedded_viewer_outside_a_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let report = sample_report();
    let mut cmd = command_in(dir.path(), &["view", report.to_str().unwrap()]);
    if !embedded() {
        let out = cmd.output().await.unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("built without the viewer"), "{err}");
        assert!(err.contains("bash scripts/build-viewer.sh"), "{err}");
        return;
    }
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("view prints its URL");
        printed.push(line.clone());
        if let Some(url) = line.strip_prefix("Viewer: ") {
            break url.to_string();
        }
    };
    assert!(
        printed.contains(&"Serving the viewer embedded in this binary".to_string()),
        "{printed:?}"
    );
    let page = reqwest::get(&url).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let wasm = html
        .split(['\'', '"'])
        .find(|s| s.ends_with("_bg.wasm"))
        .unwrap_or_else(|| panic!("the page names its wasm: {html}"));
    let origin = url.split("/?").next().unwrap();
    let client = reqwest::Client::new();
    let wasm = client
        .get(format!("{origin}/{}", wasm.trim_start_matches("./")))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(wasm.status(), 200);
    assert_eq!(wasm.headers()["content-encoding"], "gzip");
    assert_eq!(wasm.headers()["content-type"], "application/wasm");
    let served = reqwest::get(format!("{origin}/data/reports/1-sample-synthetic.json"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(served, std::fs::read_to_string(&report).unwrap());
    child.kill().await.unwrap();
}

#[tokio::test]
async fn export_inlines_the_embedded_viewer_outside_a_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let report = sample_report();
    let out = command_in(
        dir.path(),
        &["export", report.to_str().unwrap(), "-o", "shared.html"],
    )
    .output()
    .await
    .unwrap();
    if !embedded() {
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("built without the viewer"), "{err}");
        return;
    }
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(dir.path().join("shared.html")).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "Wrote shared.html: {:.1} KB",
            html.len() as f64 / 1e3
        )),
        "{stdout}"
    );
    assert!(html.contains("<script type=\"application/json\" id=\"infermeter-report-1\">"));
    assert!(html.contains("id=\"infermeter-wasm\""));
    // Nothing is loaded from another file or the network.
    for reference in [
        "src=",
        "href=\"http",
        "vendor/echarts",
        "from\"./",
        "from './",
    ] {
        assert!(!html.contains(reference), "the page refers to {reference}");
    }
}

#[tokio::test]
async fn export_refuses_to_overwrite_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json");
    std::fs::copy(sample_report(), &report).unwrap();
    let out = infermeter(
        &[
            "export",
            report.to_str().unwrap(),
            "-o",
            report.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert!(!out.status.success());
    assert!(
        text(&out).contains("is one of the reports"),
        "{}",
        text(&out)
    );
    let kept = std::fs::read_to_string(&report).unwrap();
    assert_eq!(kept, std::fs::read_to_string(sample_report()).unwrap());
}

#[tokio::test]
async fn completions_and_the_manual_page_come_from_the_binary() {
    for args in [
        &["completions", "zsh"][..],
        &["completions", "bash"],
        &["man"],
    ] {
        let out = infermeter(args, &[]).await;
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        let script = String::from_utf8_lossy(&out.stdout).replace("\\-", "-");
        for subcommand in ["run", "view", "export", "k8s-manifest", "completions"] {
            assert!(script.contains(subcommand), "{args:?}: no {subcommand}");
        }
        // The developers' commands are `infermeter-dev`'s.
        assert!(!script.contains("bench-timing"), "{args:?}");
    }
}
