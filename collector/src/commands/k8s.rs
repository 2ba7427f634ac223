//! `infermeter k8s-manifest`: the Kubernetes objects of a sharded run, with the start time
//! computed once, here. `shards.yaml`: a ConfigMap holding the start time (and a suite file),
//! a volume for the results, and an Indexed Job whose pod of index I runs
//! `run --shard I/N` (`JOB_COMPLETION_INDEX`). `merge.yaml`, applied once the shards are done:
//! a Job that merges their reports on that volume, and a pod to copy the result from.

mod yaml;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

#[derive(Debug, Clone, clap::Args)]
pub struct K8sArgs {
    /// The container image holding `infermeter` as its entrypoint (deploy/container).
    #[arg(long)]
    pub image: String,
    /// The endpoint every shard measures, as the pods reach it, e.g.
    /// http://vllm.default.svc.cluster.local:8000/v1.
    #[arg(long)]
    pub base_url: String,
    /// A built-in suite's name, or a suite file (put into the ConfigMap).
    #[arg(long)]
    pub suite: String,
    /// Shards (pods), each sending its share of every level.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub shards: u32,
    /// Start the schedule this many seconds from now: time for every pod to be scheduled, pull
    /// the image and connect.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub start_in: u64,
    /// Start the schedule at this RFC 3339 time instead.
    #[arg(long, value_name = "RFC3339", conflicts_with = "start_in")]
    pub start_at: Option<String>,
    /// Name of the objects (and prefix of the Jobs' names).
    #[arg(long, default_value = "infermeter")]
    pub name: String,
    /// Namespace of the objects (default: kubectl's).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Size of the results volume.
    #[arg(long, default_value = "10Gi")]
    pub storage: String,
    /// Storage class of the results volume; it must offer ReadWriteMany, as the shards' pods
    /// may run on different nodes (default: the cluster's default class).
    #[arg(long)]
    pub storage_class: Option<String>,
    /// A Secret whose key `api-key` holds the endpoint's API key (as OPENAI_API_KEY).
    #[arg(long)]
    pub api_key_secret: Option<String>,
    /// Further `run` options for every shard, e.g. --run-arg=--quick (repeatable).
    #[arg(long = "run-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub run_args: Vec<String>,
    /// Folder to write shards.yaml and merge.yaml into.
    #[arg(short, long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

/// Why the manifests could not be written.
#[derive(Debug, thiserror::Error)]
pub enum K8sError {
    #[error("--start-at \"{0}\" is not an RFC 3339 time such as 2026-05-01T12:00:00Z")]
    StartAt(String),
    #[error("cannot read the suite file {path}")]
    Suite {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where the results volume is mounted in every pod.
const RESULTS: &str = "/results";
/// Where the ConfigMap is mounted (a suite file given to k8s-manifest).
const CONFIG: &str = "/config";

/// Writes the manifests; returns what to print (the files and the commands to run).
pub fn write(args: &K8sArgs) -> Result<String, K8sError> {
    let start_at = match &args.start_at {
        Some(t) => chrono::DateTime::parse_from_rfc3339(t)
            .map_err(|_| K8sError::StartAt(t.clone()))?
            .with_timezone(&chrono::Utc),
        None => (SystemTime::now() + Duration::from_secs(args.start_in)).into(),
    };
    let start_at = start_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let manifests = Manifests::new(args, start_at.clone())?;
    let shards = args.out_dir.join("shards.yaml");
    let merge = args.out_dir.join("merge.yaml");
    write_file(&shards, &yaml::stream(&manifests.shards()))?;
    write_file(&merge, &yaml::stream(&manifests.merge()))?;
    let name = &args.name;
    Ok(format!(
        "wrote {} and {} (start at {start_at})\n\
         kubectl apply -f {0}\n\
         kubectl wait --for=condition=complete job/{name}-shards --timeout=24h\n\
         kubectl apply -f {1}\n\
         kubectl wait --for=condition=complete job/{name}-merge --timeout=1h\n\
         kubectl wait --for=condition=ready pod/{name}-results\n\
         kubectl cp {name}-results:{RESULTS}/merged.json merged.json\n\
         kubectl cp {name}-results:{RESULTS}/merged.json.records.jsonl merged.json.records.jsonl",
        shards.display(),
        merge.display(),
    ))
}

fn write_file(path: &Path, text: &str) -> Result<(), K8sError> {
    std::fs::write(path, text).map_err(|source| K8sError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The objects of one run.
struct Manifests<'a> {
    args: &'a K8sArgs,
    start_at: String,
    /// A suite file's text, carried by the ConfigMap.
    suite_file: Option<String>,
}

impl<'a> Manifests<'a> {
    fn new(args: &'a K8sArgs, start_at: String) -> Result<Manifests<'a>, K8sError> {
        let builtin = ["four-scenario", "capacity", "context-sweep", "llama-cpu"];
        let suite_file =
            match builtin.contains(&args.suite.as_str()) {
                true => None,
                false => Some(std::fs::read_to_string(&args.suite).map_err(|source| {
                    K8sError::Suite {
                        path: args.suite.clone(),
                        source,
                    }
                })?),
            };
        Ok(Manifests {
            args,
            start_at,
            suite_file,
        })
    }

    fn metadata(&self, name: &str) -> Value {
        let mut meta = json!({
            "name": name,
            "labels": {
                "app.kubernetes.io/name": "infermeter",
                "app.kubernetes.io/instance": self.args.name,
            },
        });
        if let Some(ns) = &self.args.namespace {
            meta["namespace"] = ns.clone().into();
        }
        meta
    }

    fn named(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.args.name)
    }

    /// The ConfigMap, the results volume and the shards' Indexed Job.
    fn shards(&self) -> Vec<Value> {
        let mut data = json!({ "start-at": self.start_at });
        if let Some(text) = &self.suite_file {
            data["suite.toml"] = text.clone().into();
        }
        let mut claim = json!({
            "accessModes": ["ReadWriteMany"],
            "resources": { "requests": { "storage": self.args.storage } },
        });
        if let Some(class) = &self.args.storage_class {
            claim["storageClassName"] = class.clone().into();
        }
        let n = self.args.shards;
        let job = json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": self.metadata(&self.named("shards")),
            "spec": {
                "completionMode": "Indexed",
                "completions": n,
                "parallelism": n,
                // A shard that fails is not tried again: the schedule it belongs to has begun.
                "backoffLimit": 0,
                "template": {
                    "metadata": { "labels": self.metadata("")["labels"].clone() },
                    "spec": self.pod_spec("shard", self.shard_args(), self.shard_env()),
                },
            },
        });
        vec![
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": self.metadata(&self.args.name),
                "data": data,
            }),
            json!({
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": self.metadata(&self.named("results")),
                "spec": claim,
            }),
            job,
        ]
    }

    /// `run` for the pod of index `JOB_COMPLETION_INDEX` (Kubernetes expands `$(VAR)` in args
    /// from the container's environment, where the Job controller puts the index).
    fn shard_args(&self) -> Vec<String> {
        let suite = match self.suite_file {
            Some(_) => format!("{CONFIG}/suite.toml"),
            None => self.args.suite.clone(),
        };
        let mut args: Vec<String> = [
            "--log-format",
            "json",
            "run",
            "--base-url",
            &self.args.base_url,
            "--suite",
            &suite,
            "--shard",
            &format!("$(JOB_COMPLETION_INDEX)/{}", self.args.shards),
            "--start-at",
            "$(START_AT)",
            "--out",
            &format!("{RESULTS}/shard-$(JOB_COMPLETION_INDEX).json"),
        ]
        .map(String::from)
        .to_vec();
        args.extend(self.args.run_args.iter().cloned());
        args
    }

    fn shard_env(&self) -> Vec<Value> {
        let mut env = vec![json!({
            "name": "START_AT",
            "valueFrom": { "configMapKeyRef": { "name": self.args.name, "key": "start-at" } },
        })];
        if let Some(secret) = &self.args.api_key_secret {
            env.push(json!({
                "name": "OPENAI_API_KEY",
                "valueFrom": { "secretKeyRef": { "name": secret, "key": "api-key" } },
            }));
        }
        env
    }

    /// A pod of one container running `infermeter ARGS`, with the results volume and the
    /// ConfigMap mounted.
    fn pod_spec(&self, container: &str, args: Vec<String>, env: Vec<Value>) -> Value {
        json!({
            "restartPolicy": "Never",
            // The image's user (deploy/container); the volume is made writable for its group.
            "securityContext": { "runAsNonRoot": true, "runAsUser": 65532, "fsGroup": 65532 },
            "containers": [{
                "name": container,
                "image": self.args.image,
                "args": args,
                "env": env,
                "volumeMounts": [
                    { "name": "results", "mountPath": RESULTS },
                    { "name": "config", "mountPath": CONFIG, "readOnly": true },
                ],
            }],
            "volumes": [
                { "name": "results", "persistentVolumeClaim": { "claimName": self.named("results") } },
                { "name": "config", "configMap": { "name": self.args.name } },
            ],
        })
    }

    /// The merge Job and the pod that keeps the results volume open for `kubectl cp`.
    fn merge(&self) -> Vec<Value> {
        let mut args: Vec<String> = vec!["merge".into()];
        args.extend((0..self.args.shards).map(|i| format!("{RESULTS}/shard-{i}.json")));
        args.extend(["-o", &format!("{RESULTS}/merged.json"), "--force"].map(String::from));
        let mut results = self.pod_spec("results", Vec::new(), Vec::new());
        // The image's shell tools: `sleep` keeps the pod up, `tar` serves `kubectl cp`.
        results["containers"][0]["command"] = json!(["sleep", "infinity"]);
        vec![
            json!({
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": self.metadata(&self.named("merge")),
                "spec": {
                    "backoffLimit": 0,
                    "template": {
                        "metadata": { "labels": self.metadata("")["labels"].clone() },
                        "spec": self.pod_spec("merge", args, Vec::new()),
                    },
                },
            }),
            json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": self.metadata(&self.named("results")),
                "spec": results,
            }),
        ]
    }
}
