//! The `sweep` section of a sweep's index (`infermeter sweep --out-dir DIR` writes
//! `DIR/index.json`): every configuration, where its report and server log are, and how it
//! ended (a failure with its stage, exit status and the log's last lines). The index's
//! `reports` list the configurations that have a report, so `infermeter view DIR` opens them;
//! this section is what `--resume` reads back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::IndexError;
use crate::schema::Parameters;

/// A sweep as it stands: what it runs and each configuration's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sweep {
    pub name: String,
    /// The server's command, as written (`{name}` placeholders unfilled); none when the sweep
    /// measures a server started by other means (`--base-url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<String>,
    /// The measured address, as written.
    pub base_url: String,
    /// The command run before each configuration is measured (`--hook`), as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// The suite asked for (`--suite`), as written; `--resume` refuses another (none in a
    /// sweep written before it was recorded, or without `--suite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// The `infermeter run` options, as written; `--resume` refuses others (none: not
    /// recorded, a sweep written before they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Vec<String>>,
    /// The configurations the last start planned, in order (`configurations` also keeps those
    /// an accepted change dropped); `--resume` refuses another list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Vec<Parameters>>,
    pub configurations: Vec<SweepConfiguration>,
}

/// One configuration of the sweep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepConfiguration {
    pub parameters: Parameters,
    pub state: ConfigurationState,
    /// Its report, relative to the index (written once a level is measured).
    pub report: String,
    /// The server's output (and the hook's), relative to the index; each attempt appends.
    pub log: String,
    /// Why it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The server's process id (the leader of its process group), while it runs and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_pid: Option<u32>,
    /// The port the sweep gave the server (`{port}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Seconds from the server's start (or the hook's end) until it answered the readiness check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_s: Option<f64>,
    /// RFC 3339 times of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

/// Where a configuration stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfigurationState {
    /// Not tried yet.
    #[default]
    Pending,
    /// Being measured (a sweep that was killed leaves this).
    Running,
    /// Measured in full.
    Complete,
    /// Stopped by Ctrl-C or SIGTERM; `--resume` continues it.
    Interrupted,
    /// See `failure`; `--resume` tries it again (continuing its partial report, if any).
    Failed,
}

/// Why a configuration failed, and the end of its log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    pub stage: FailureStage,
    /// In words: "the server exited with status 2 before it was ready".
    pub reason: String,
    /// The server's (or hook's) exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_signal: Option<i32>,
    /// The last lines of its log.
    #[serde(default)]
    pub log_tail: Vec<String>,
}

/// The step a configuration failed in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureStage {
    /// The hook command failed (`--base-url` sweeps).
    Hook,
    /// The server exited before it was ready.
    #[default]
    Start,
    /// The server did not answer the readiness check in time.
    Ready,
    /// The measuring run failed, or the server exited during it.
    Run,
}

impl Sweep {
    /// The `sweep` section of an index's text, if it has one; strict, unlike the reports' list.
    pub fn from_index(text: &str) -> Result<Option<Sweep>, IndexError> {
        let value: Value = serde_json::from_str(text).map_err(IndexError::syntax)?;
        match value.get("sweep") {
            None | Some(Value::Null) => Ok(None),
            Some(sweep) => Sweep::deserialize(sweep)
                .map(Some)
                .map_err(|e| IndexError::Sweep(e.to_string())),
        }
    }

    /// The configuration with these parameters, if the sweep has it.
    pub fn configuration(&self, parameters: &Parameters) -> Option<&SweepConfiguration> {
        self.configurations
            .iter()
            .find(|c| c.parameters == *parameters)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ReportIndex;
    use super::*;

    #[test]
    fn a_sweep_reads_back_and_the_viewer_reads_only_the_list() {
        let sweep = Sweep {
            name: "mns".into(),
            serve: Some("vllm serve m --port {port} --max-num-seqs {mns}".into()),
            base_url: "http://127.0.0.1:{port}".into(),
            suite: Some("quick".into()),
            run: Some(vec!["--quick".into()]),
            planned: Some(vec![[("mns", "64")].into_iter().collect()]),
            hook: None,
            configurations: vec![SweepConfiguration {
                parameters: [("mns", "64")].into_iter().collect(),
                state: ConfigurationState::Failed,
                report: "mns-64.json".into(),
                log: "logs/mns-64.log".into(),
                failure: Some(Failure {
                    stage: FailureStage::Start,
                    reason: "the server exited with status 2 before it was ready".into(),
                    exit_code: Some(2),
                    log_tail: vec!["error: bad flag".into()],
                    ..Failure::default()
                }),
                ..SweepConfiguration::default()
            }],
        };
        let index = ReportIndex {
            reports: Vec::new(),
            sweep: Some(sweep.clone()),
            ..ReportIndex::default()
        };
        let text = index.to_json();
        assert!(text.contains("\"state\": \"failed\""), "{text}");
        assert_eq!(Sweep::from_index(&text).unwrap(), Some(sweep.clone()));
        assert_eq!(ReportIndex::parse(&text).unwrap().sweep, None);
        let p = [("mns", "64")].into_iter().collect();
        assert_eq!(sweep.configuration(&p).unwrap().report, "mns-64.json");
        assert_eq!(Sweep::from_index(r#"{"reports": []}"#).unwrap(), None);
        let bad = Sweep::from_index(r#"{"reports": [], "sweep": {"name": 1}}"#).unwrap_err();
        assert!(matches!(bad, IndexError::Sweep(_)), "{bad:?}");
    }
}
