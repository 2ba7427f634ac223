//! infermeter-sim: an OpenAI-compatible server that behaves like a GPU inference engine.
//!
//! - [`engine`]: the pure model (the `infermeter-engine` crate: continuous batching over a paged
//!   KV cache, roofline step times) and [`engine::simulate`], which runs a workload on a virtual
//!   clock.
//! - [`profiles`]: GPUs and models from `engine/profiles.toml`, with a user's file merged over.
//! - [`server`]: the HTTP API (vLLM's shapes), driven in real time by the same engine.
//! - [`faults`]: injected failures for testing clients (`--faults`).
//! - [`calibration`]: the published reference figures and what the model gives for them.

pub mod calibration;
pub mod faults;
mod metrics;
pub mod profiles;
pub mod request_log;
pub mod rng;
mod scheduler;
pub mod server;
pub mod threaded;
pub mod tokenizer;

use std::net::SocketAddr;
use std::path::PathBuf;

pub use calibration::{calibration_table, CalibrationRow};
pub use infermeter_engine as engine;
pub use server::{run, start, RunningSim};
pub use threaded::ThreadedSim;

/// What the simulator serves and how: a deployment (a profile, or a fitted report) and its
/// limits, the address, faults and timing. Plain values; `infermeter sim` builds one from its
/// options, tests and the self-benchmarks build one directly. `Debug` is written by hand so the
/// API key never reaches a log.
#[derive(Clone)]
pub struct SimConfig {
    /// Address to serve on (127.0.0.1:0 for any free port).
    pub listen: SocketAddr,
    /// Model profile id (see engine/profiles.toml).
    pub model: String,
    /// GPU profile id.
    pub gpu: String,
    /// Number of GPUs (tensor parallel).
    pub gpus: u32,
    /// Require `Authorization: Bearer KEY` on /v1 and tokenizer routes.
    pub api_key: Option<String>,
    /// Extra profiles TOML merged over the built-in ones.
    pub profiles: Option<PathBuf>,
    /// Most sequences in one batch (vLLM --max-num-seqs).
    pub max_num_seqs: u32,
    /// Most tokens in one step; `None`: the deployment's (the profile's, else 8192).
    pub max_num_batched_tokens: Option<u32>,
    /// Reuse KV blocks of identical prompt prefixes.
    pub prefix_cache: bool,
    /// Largest batch run through captured CUDA graphs; `None`: the profile's, else no limit.
    pub cuda_graph_max_batch: Option<u32>,
    /// Extra kernel-launch time of an eager step, ms; `None`: the profile's, else 0.
    pub eager_step_overhead_ms: Option<f64>,
    /// Add the server's send time (`infermeter_ts`) to every streamed chunk.
    pub emit_timestamps: bool,
    /// Reasoning tokens (`reasoning_content`) streamed before each chat answer.
    pub reasoning_tokens: u32,
    /// Every simulated duration multiplied by this (positive; 0.1 serves ten times faster).
    pub time_scale: f64,
    /// Injected faults, e.g. `status429=0.05,reset=0.01` (see [`faults`]).
    pub faults: Option<String>,
    /// Seed for EOS draws and faults.
    pub seed: u64,
    /// Serve the engine fitted to this report; a GPU or GPU count other than the defaults
    /// scales it to those.
    pub fit: Option<PathBuf>,
}

impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimConfig")
            .field("listen", &self.listen)
            .field("model", &self.model)
            .field("gpu", &self.gpu)
            .field("gpus", &self.gpus)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("profiles", &self.profiles)
            .field("max_num_seqs", &self.max_num_seqs)
            .field("max_num_batched_tokens", &self.max_num_batched_tokens)
            .field("prefix_cache", &self.prefix_cache)
            .field("cuda_graph_max_batch", &self.cuda_graph_max_batch)
            .field("eager_step_overhead_ms", &self.eager_step_overhead_ms)
            .field("emit_timestamps", &self.emit_timestamps)
            .field("reasoning_tokens", &self.reasoning_tokens)
            .field("time_scale", &self.time_scale)
            .field("faults", &self.faults)
            .field("seed", &self.seed)
            .field("fit", &self.fit)
            .finish()
    }
}

impl SimConfig {
    /// The defaults on a free loopback port: what an in-process test or tool wants.
    pub fn loopback() -> SimConfig {
        SimConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..SimConfig::default()
        }
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8000)),
            model: DEFAULT_MODEL.into(),
            gpu: DEFAULT_GPU.into(),
            gpus: 1,
            api_key: None,
            profiles: None,
            max_num_seqs: DEFAULT_MAX_NUM_SEQS,
            max_num_batched_tokens: None,
            prefix_cache: false,
            cuda_graph_max_batch: None,
            eager_step_overhead_ms: None,
            emit_timestamps: false,
            reasoning_tokens: 0,
            time_scale: 1.0,
            faults: None,
            seed: 0,
            fit: None,
        }
    }
}

/// The model served when none is named.
pub const DEFAULT_MODEL: &str = "qwen3-coder-30b-a3b";
/// The GPU served when none is named.
pub const DEFAULT_GPU: &str = "h100-pcie";
/// The batch limit when none is given.
pub const DEFAULT_MAX_NUM_SEQS: u32 = 256;

impl SimConfig {
    /// The deployment these options describe.
    pub fn profile(&self) -> Result<engine::Profile, SimError> {
        let set = profiles::load(self.profiles.as_deref())?;
        let mut p = match &self.fit {
            Some(path) => self.fitted(path, &set)?,
            None => {
                let mut p = set.resolve(&self.model, &self.gpu, Some(self.gpus))?;
                p.max_num_seqs = self.max_num_seqs.max(1);
                p
            }
        };
        if let Some(n) = self.max_num_batched_tokens {
            p.max_num_batched_tokens = n.max(1);
        }
        p.prefix_cache = self.prefix_cache;
        if let Some(n) = self.cuda_graph_max_batch {
            p.cuda_graph_max_batch = n;
        }
        if let Some(ms) = self.eager_step_overhead_ms {
            p.eager_step_overhead = ms.max(0.0) * 1e-3;
        }
        Ok(p)
    }

    /// The engine fitted to the report at `path`, on the fit's deployment or, when --gpu or
    /// --gpus were moved off their defaults, scaled to those; --max-num-seqs likewise.
    fn fitted(
        &self,
        path: &std::path::Path,
        set: &profiles::ProfileSet,
    ) -> Result<engine::Profile, SimError> {
        let fail = |message: String| SimError::Fit {
            path: path.display().to_string(),
            message,
        };
        let text =
            std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        let report = infermeter_report::load_report(&text).map_err(|e| fail(e.to_string()))?;
        let fit = report.fit.ok_or_else(|| {
            fail(format!(
                "it holds no fit; run `infermeter fit {}` first",
                path.display()
            ))
        })?;
        let moved = self.gpu != DEFAULT_GPU || self.gpus != 1;
        let serving = &report.metadata.engine.name;
        let mut p = if moved {
            engine::fit::scaled_profile(&fit, serving, set, &self.gpu, self.gpus)
        } else {
            engine::fit::fitted_profile(&fit, serving, set)
        }
        .map_err(|e| fail(e.to_string()))?;
        if self.max_num_seqs != DEFAULT_MAX_NUM_SEQS {
            p.max_num_seqs = self.max_num_seqs.max(1);
        }
        Ok(p)
    }
}

/// Everything that can stop the simulator from starting.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Profile(#[from] engine::ProfileError),
    #[error("--fit {path}: {message}")]
    Fit { path: String, message: String },
    #[error("invalid --faults spec: {0}")]
    Faults(String),
    #[error("address {addr} is already in use; pick another port or use --listen 127.0.0.1:0 for any free port")]
    PortInUse { addr: SocketAddr },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start the simulator's async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("cannot watch for Ctrl-C or SIGTERM")]
    Signal(#[source] std::io::Error),
    #[error("the simulator thread panicked")]
    Panicked,
    #[error("the simulator stopped early")]
    StoppedEarly,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_deployment_takes_its_token_budget_from_the_profiles() {
        let p = SimConfig::default().profile().unwrap();
        assert_eq!(
            (p.model_id.as_str(), p.gpu_id.as_str()),
            (DEFAULT_MODEL, DEFAULT_GPU)
        );
        assert_eq!(p.max_num_seqs, DEFAULT_MAX_NUM_SEQS);
        assert_eq!(
            p.max_num_batched_tokens,
            profiles::DEFAULT_MAX_NUM_BATCHED_TOKENS
        );
        let graphs = SimConfig {
            gpu: "h200".into(),
            gpus: 2,
            cuda_graph_max_batch: Some(16),
            ..SimConfig::default()
        };
        assert_eq!(graphs.profile().unwrap().cuda_graph_max_batch, 16);
    }

    /// A fitted report is served as fitted; other hardware scales it; a report without a fit
    /// says how to make one.
    #[test]
    fn a_fitted_report_is_served_as_fitted() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/reports");
        let fitted = |gpu: &str| SimConfig {
            fit: Some(data.join("llama-cpu-tiny-llama.json")),
            gpu: gpu.into(),
            ..SimConfig::default()
        };
        let p = fitted(DEFAULT_GPU).profile().unwrap();
        assert_eq!(
            (p.model_id.as_str(), p.gpu_id.as_str()),
            ("tiny-llama", "cpu")
        );
        assert_eq!((p.max_num_seqs, p.max_num_batched_tokens), (4, 2048));
        let on_h100 = fitted("h100-sxm").profile().unwrap();
        assert!(on_h100.mem_bw > 50.0 * p.mem_bw);
        assert_eq!(on_h100.step_overhead, p.step_overhead);
        let unfitted = SimConfig {
            fit: Some(data.join("sample-synthetic.json")),
            ..SimConfig::default()
        };
        let err = unfitted.profile().unwrap_err().to_string();
        assert!(err.contains("holds no fit; run `infermeter fit"), "{err}");
    }

    #[test]
    fn token_budget_comes_from_the_deployment_unless_the_config_sets_it() {
        let budget = |max_num_batched_tokens| {
            let config = SimConfig {
                model: "qwen3.5-35b-a3b-fp8".into(),
                gpu: "h100-sxm".into(),
                max_num_batched_tokens,
                ..SimConfig::default()
            };
            config.profile().unwrap().max_num_batched_tokens
        };
        assert_eq!(budget(None), 3072, "the [[tuning]] row's value");
        assert_eq!(budget(Some(8192)), 8192);
    }
}
