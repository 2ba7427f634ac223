//! `infermeter k8s-manifest`: the manifests in deploy/kubernetes are its output (kept current
//! here), and they validate against the Kubernetes schemas with `kubernetes-validate` (PyPI,
//! installed by scripts/setup.sh; its schemas ship inside the package, so it needs no network).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The arguments deploy/kubernetes was written with (README there).
const EXAMPLE: [&str; 10] = [
    "--image",
    "infermeter:0.1.0",
    "--base-url",
    "http://vllm.default.svc.cluster.local:8000/v1",
    "--suite",
    "four-scenario",
    "--shards",
    "4",
    "--start-at",
    "2030-01-01T00:00:00Z",
];

/// Kubernetes versions checked: the oldest whose Jobs set JOB_COMPLETION_INDEX for certain,
/// and the newest the package knows.
const VERSIONS: [&str; 2] = ["1.27.0", "1.37.0"];

async fn manifest(dir: &Path, extra: &[&str]) {
    let mut args = vec!["k8s-manifest", "-o", dir.to_str().unwrap()];
    args.extend(extra);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("kubectl cp"), "{}", text(&out));
}

/// The `kubernetes-validate` of scripts/setup.sh, or why there is none.
fn validator() -> Result<PathBuf, String> {
    let cache = std::env::var_os("INFERMETER_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/infermeter")))
        .ok_or("neither INFERMETER_CACHE nor HOME is set")?;
    let bin = cache.join("venv-kubernetes-validate/bin/kubernetes-validate");
    match bin.exists() {
        true => Ok(bin),
        false => Err(format!(
            "{} is missing; run scripts/setup.sh",
            bin.display()
        )),
    }
}

/// `kubernetes-validate --strict` of `files` against each version: (passed, its output).
fn validate(bin: &Path, files: &[PathBuf]) -> (bool, String) {
    let mut all = true;
    let mut text = String::new();
    for version in VERSIONS {
        let out = Command::new(bin)
            .args(["--strict", "-k", version])
            .args(files)
            .output()
            .expect("kubernetes-validate runs");
        all &= out.status.success();
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    (all, text)
}

#[tokio::test(flavor = "multi_thread")]
async fn manifests_are_current_and_valid() {
    let dir = out_dir("k8s");
    let example = dir.join("example");
    std::fs::create_dir_all(&example).unwrap();
    manifest(&example, &EXAMPLE).await;
    let shipped = manifest_dir().join("../deploy/kubernetes");
    for file in ["shards.yaml", "merge.yaml"] {
        let fresh = std::fs::read_to_string(example.join(file)).unwrap();
        let kept = std::fs::read_to_string(shipped.join(file)).unwrap_or_default();
        assert!(
            fresh == kept,
            "deploy/kubernetes/{file} is stale: write it again with `infermeter k8s-manifest -o deploy/kubernetes {}`",
            EXAMPLE.join(" ")
        );
    }

    // Every option in play: a suite file travels in the ConfigMap.
    let custom = dir.join("custom");
    std::fs::create_dir_all(&custom).unwrap();
    let suite = small_suite(&dir, "name = \"mine\"\n[[scenario]]\nid = \"a\"\n");
    let extra = [
        "--image",
        "registry.example/infermeter:1",
        "--base-url",
        "http://engine:8000/v1",
        "--suite",
        suite.to_str().unwrap(),
        "--shards",
        "3",
        "--name",
        "bench-a",
        "--namespace",
        "load",
        "--storage-class",
        "nfs",
        "--api-key-secret",
        "engine-key",
        "--run-arg=--quick",
    ];
    manifest(&custom, &extra).await;
    let shards = std::fs::read_to_string(custom.join("shards.yaml")).unwrap();
    for expected in [
        "completionMode: \"Indexed\"",
        "completions: 3",
        "parallelism: 3",
        "\"$(JOB_COMPLETION_INDEX)/3\"",
        "\"/config/suite.toml\"",
        "  suite.toml: |\n    name = \"mine\"\n",
        "namespace: \"load\"",
        "storageClassName: \"nfs\"",
        "name: \"engine-key\"",
        "\"--quick\"",
    ] {
        assert!(shards.contains(expected), "{expected:?} not in:\n{shards}");
    }
    let merge = std::fs::read_to_string(custom.join("merge.yaml")).unwrap();
    assert!(merge.contains("\"/results/shard-2.json\""), "{merge}");
    assert!(!merge.contains("shard-3.json"), "{merge}");

    let bin = match validator() {
        Ok(bin) => bin,
        Err(why) => return skip_unless_ci("kubernetes-validate", &why),
    };
    let files: Vec<PathBuf> = [&example, &custom]
        .iter()
        .flat_map(|d| [d.join("shards.yaml"), d.join("merge.yaml")])
        .collect();
    let (valid, output) = validate(&bin, &files);
    assert!(valid, "{output}");
    // Five objects in each of two folders, checked against both versions.
    assert_eq!(
        output.matches(" passed for resource ").count(),
        20,
        "{output}"
    );
    // The validator does reject a Job spec Kubernetes would refuse.
    let broken = dir.join("broken.yaml");
    std::fs::write(
        &broken,
        shards.replace("completionMode:", "completionModes:"),
    )
    .unwrap();
    let (valid, output) = validate(&bin, &[broken]);
    assert!(!valid && output.contains("completionModes"), "{output}");
}
