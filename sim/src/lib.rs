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

/// Options of `infermeter sim`. `Debug` is written by hand so the API key never reaches a log.
#[derive(clap::Args, Clone)]
pub struct SimArgs {
    /// Address to serve on (use 127.0.0.1:0 for any free port).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub listen: SocketAddr,
    /// Model profile id (see engine/profiles.toml), e.g. qwen3-coder-30b-a3b, llama-3.1-8b.
    #[arg(long, default_value = "qwen3-coder-30b-a3b")]
    pub model: String,
    /// GPU profile id, e.g. h100-pcie, h100-sxm, h200, b200, a100-80gb, l40s, rtx-pro-6000.
    #[arg(long, default_value = DEFAULT_GPU)]
    pub gpu: String,
    /// Number of GPUs (tensor parallel).
    #[arg(long, default_value_t = 1)]
    pub gpus: u32,
    /// Require `Authorization: Bearer KEY` on /v1 and tokenizer routes.
    #[arg(long, env = "INFERMETER_SIM_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Extra profiles TOML merged over the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// Most sequences in one batch (vLLM --max-num-seqs).
    #[arg(long, default_value_t = DEFAULT_MAX_NUM_SEQS)]
    pub max_num_seqs: u32,
    /// Most tokens in one step (vLLM --max-num-batched-tokens); without it, the deployment's
    /// (the profile's `max_num_batched_tokens`, else 8192).
    #[arg(long, value_name = "N")]
    pub max_num_batched_tokens: Option<u32>,
    /// Reuse KV blocks of identical prompt prefixes (vLLM --enable-prefix-caching).
    #[arg(long)]
    pub prefix_cache: bool,
    /// Largest batch (sequences per step) run through captured CUDA graphs; bigger steps run
    /// eagerly (default: the profile's `cuda_graph_max_batch`, else no limit).
    #[arg(long, value_name = "N")]
    pub cuda_graph_max_batch: Option<u32>,
    /// Extra kernel-launch time of an eager step, ms (default: the profile's, else 0).
    #[arg(long, value_name = "MS")]
    pub eager_step_overhead_ms: Option<f64>,
    /// Add the server's send time (`infermeter_ts`) to every streamed chunk.
    #[arg(long)]
    pub emit_timestamps: bool,
    /// Stream this many reasoning tokens (`reasoning_content`) before each chat answer, as a
    /// reasoning model does (counted in the output; at least one answer token remains).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub reasoning_tokens: u32,
    /// Multiply every simulated duration (steps, front end) by F: 0.1 serves ten times faster
    /// than the modelled hardware, for quick tests; the figures measured are then in that time.
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,
    /// Injected faults, e.g. `status429=0.05,reset=0.01` or `schedule=ok,429,reset,stall:2`.
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Seed for EOS draws and faults.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Serve the engine fitted to REPORT (`infermeter fit REPORT`): its model, GPU, limits and
    /// coefficients. --gpu or --gpus other than their defaults ask what if it ran on those
    /// instead (its rates scaled by the datasheets).
    #[arg(long, value_name = "REPORT", conflicts_with = "model")]
    pub fit: Option<PathBuf>,
}

impl std::fmt::Debug for SimArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimArgs")
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

impl SimArgs {
    /// The defaults on a free loopback port: what an in-process test or tool wants.
    pub fn loopback() -> SimArgs {
        SimArgs {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..SimArgs::default()
        }
    }
}

impl Default for SimArgs {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8000)),
            model: "qwen3-coder-30b-a3b".into(),
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

fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!(
            "\"{s}\" is not a positive number; e.g. 0.1 runs ten times faster"
        )),
    }
}

/// The GPU `--gpu` names when not given.
pub const DEFAULT_GPU: &str = "h100-pcie";
/// `--max-num-seqs` when not given.
const DEFAULT_MAX_NUM_SEQS: u32 = 256;

impl SimArgs {
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
        let mut p = if moved {
            engine::fit::scaled_profile(&fit, set, &self.gpu, self.gpus)
        } else {
            engine::fit::fitted_profile(&fit, set)
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
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    #[test]
    fn cli_defaults_match_default_impl() {
        Cli::command().debug_assert();
        let parsed = Cli::try_parse_from(["sim"]).unwrap().sim;
        let d = SimArgs::default();
        assert_eq!(parsed.listen, d.listen);
        assert_eq!(
            (parsed.model, parsed.gpu, parsed.gpus),
            (d.model, d.gpu, d.gpus)
        );
        assert_eq!(
            (parsed.max_num_seqs, parsed.max_num_batched_tokens),
            (256, None)
        );
        assert_eq!(
            SimArgs::default().profile().unwrap().max_num_batched_tokens,
            profiles::DEFAULT_MAX_NUM_BATCHED_TOKENS
        );
        assert!(!parsed.prefix_cache && !parsed.emit_timestamps);
        assert_eq!((parsed.reasoning_tokens, parsed.time_scale), (0, 1.0));
        assert!(Cli::try_parse_from(["sim", "--time-scale", "0"]).is_err());
        assert_eq!(parsed.cuda_graph_max_batch, None);
        let p = Cli::try_parse_from([
            "sim",
            "--gpu",
            "h200",
            "--gpus",
            "2",
            "--faults",
            "reset=0.1",
            "--cuda-graph-max-batch",
            "16",
        ])
        .unwrap()
        .sim;
        assert_eq!(
            (p.gpu.as_str(), p.gpus, p.faults.as_deref()),
            ("h200", 2, Some("reset=0.1"))
        );
        assert_eq!(p.profile().unwrap().cuda_graph_max_batch, 16);
    }

    /// `--fit REPORT` serves the fit's deployment and limits; other hardware scales it; a
    /// report without a fit says how to make one.
    #[test]
    fn a_fitted_report_is_served_as_fitted() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/reports");
        let args = |extra: &[&str]| {
            let fit = data.join("llama-cpu-tiny-llama.json");
            let argv = ["sim", "--fit", fit.to_str().unwrap()];
            Cli::try_parse_from(argv.iter().chain(extra)).map(|c| c.sim)
        };
        let p = args(&[]).unwrap().profile().unwrap();
        assert_eq!(
            (p.model_id.as_str(), p.gpu_id.as_str()),
            ("tiny-llama", "cpu")
        );
        assert_eq!((p.max_num_seqs, p.max_num_batched_tokens), (4, 2048));
        let on_h100 = args(&["--gpu", "h100-sxm"]).unwrap().profile().unwrap();
        assert!(on_h100.mem_bw > 50.0 * p.mem_bw);
        assert_eq!(on_h100.step_overhead, p.step_overhead);
        assert!(
            args(&["--model", "llama-3.1-8b"]).is_err(),
            "--fit names the model"
        );
        let unfitted = SimArgs {
            fit: Some(data.join("sample-synthetic.json")),
            ..SimArgs::default()
        };
        let err = unfitted.profile().unwrap_err().to_string();
        assert!(err.contains("holds no fit; run `infermeter fit"), "{err}");
    }

    #[test]
    fn token_budget_comes_from_the_deployment_unless_the_flag_sets_it() {
        let budget = |extra: &[&str]| {
            let args = ["sim", "--model", "qwen3.5-35b-a3b-fp8", "--gpu", "h100-sxm"];
            let argv: Vec<&str> = args.iter().chain(extra).copied().collect();
            let sim = Cli::try_parse_from(argv).unwrap().sim;
            sim.profile().unwrap().max_num_batched_tokens
        };
        assert_eq!(budget(&[]), 3072, "the [[tuning]] row's value");
        assert_eq!(budget(&["--max-num-batched-tokens", "8192"]), 8192);
    }
}
