//! `infermeter sim`: the simulated inference engine's options, made into the simulator's plain
//! [`SimConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;

use infermeter_sim::{SimConfig, DEFAULT_GPU, DEFAULT_MAX_NUM_SEQS, DEFAULT_MODEL};

/// Options of `infermeter sim`. `Debug` is written by hand so the API key never reaches a log.
#[derive(clap::Args, Clone)]
pub struct SimArgs {
    /// Address to serve on (use 127.0.0.1:0 for any free port).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub listen: SocketAddr,
    /// Model profile id (see engine/profiles.toml), e.g. qwen3-coder-30b-a3b, llama-3.1-8b.
    #[arg(long, default_value = DEFAULT_MODEL)]
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
        self.config().fmt(f)
    }
}

impl SimArgs {
    /// The simulator these options describe.
    pub fn config(&self) -> SimConfig {
        SimConfig {
            listen: self.listen,
            model: self.model.clone(),
            gpu: self.gpu.clone(),
            gpus: self.gpus,
            api_key: self.api_key.clone(),
            profiles: self.profiles.clone(),
            max_num_seqs: self.max_num_seqs,
            max_num_batched_tokens: self.max_num_batched_tokens,
            prefix_cache: self.prefix_cache,
            cuda_graph_max_batch: self.cuda_graph_max_batch,
            eager_step_overhead_ms: self.eager_step_overhead_ms,
            emit_timestamps: self.emit_timestamps,
            reasoning_tokens: self.reasoning_tokens,
            time_scale: self.time_scale,
            faults: self.faults.clone(),
            seed: self.seed,
            fit: self.fit.clone(),
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

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    fn parse(extra: &[&str]) -> Result<SimConfig, clap::Error> {
        let argv = ["sim"].iter().chain(extra);
        Cli::try_parse_from(argv).map(|c| c.sim.config())
    }

    /// No option given is the simulator's own default, field by field.
    #[test]
    fn the_options_defaults_are_the_simulators() {
        Cli::command().debug_assert();
        let parsed = parse(&[]).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{:?}", SimConfig::default()));
        assert!(parse(&["--time-scale", "0"]).is_err());
        let p = parse(&["--gpu", "h200", "--gpus", "2", "--faults", "reset=0.1"]).unwrap();
        assert_eq!(
            (p.gpu.as_str(), p.gpus, p.faults.as_deref()),
            ("h200", 2, Some("reset=0.1"))
        );
    }

    /// `--fit` names the model: `--model` beside it is refused.
    #[test]
    fn a_fit_and_a_model_conflict() {
        let fit = "../data/reports/llama-cpu-tiny-llama.json";
        assert!(parse(&["--fit", fit]).is_ok());
        assert!(parse(&["--fit", fit, "--model", "llama-3.1-8b"]).is_err());
    }

    #[test]
    fn the_api_key_stays_out_of_debug() {
        let p = parse(&["--api-key", "sekrit"]).unwrap();
        assert!(!format!("{p:?}").contains("sekrit"));
    }
}
