//! The report a fresh run starts from: what was measured, on what, by whom; no level yet.

use std::collections::BTreeMap;

use infermeter_report::{
    EngineInfo, HardwareInfo, Measurement, Metadata, ModelInfo, Report, RunStatus, Sharding,
    TestParameters, SCHEMA_VERSION,
};
use infermeter_sim::engine::DeploymentCard;

use super::config::About;
use super::RunConfig;
use crate::http::base_url::without_credentials;
use crate::http::server::Server;

/// The report a fresh run starts from: its metadata from the run's settings, the suite and
/// what the server said about itself, and a sharded run's `sharding`.
pub fn new_report(config: &RunConfig, server: &Server, sharding: Option<Sharding>) -> Report {
    let (model, engine, info) = (server.model.as_str(), server.engine, &server.info);
    let (suite, about) = (&config.suite, &config.about);
    let mut labels: BTreeMap<String, String> = about.labels.iter().cloned().collect();
    if let Some(len) = info.max_model_len {
        labels
            .entry("max_model_len".into())
            .or_insert(len.to_string());
    }
    let simulated = engine.is_simulator();
    let card = info.simulated.as_ref();
    Report {
        schema_version: SCHEMA_VERSION.into(),
        metadata: Metadata {
            title: about.title.clone(),
            synthetic: simulated,
            source: simulated.then(|| "infermeter simulator".to_string()),
            model: ModelInfo {
                id: model.into(),
                // "Qwen/Qwen3-..." -> "Qwen"; `owned_by` names the engine ("vllm"), not the maker.
                organization: model.split_once('/').map(|(org, _)| org.to_string()),
                architecture: card.map(|c| c.architecture.clone()),
                total_params_b: card.map(|c| c.total_params_b),
                active_params_b: card.map(|c| c.active_params_b),
                precision: about
                    .precision
                    .clone()
                    .or_else(|| card.map(|c| c.precision.clone())),
            },
            engine: EngineInfo {
                name: engine.display_name().into(),
                version: info.version.clone(),
                flags: Vec::new(),
                api: Some(server.api.label().into()),
                base_url: Some(without_credentials(&server.api_base)),
            },
            hardware: hardware(about, card),
            test: TestParameters {
                suite: Some(suite.name.clone()),
                prompt_caching: Some(suite.prompt_caching),
                kv_cache_dtype: card.map(|c| c.kv_cache_dtype.clone()),
                slo: config.slo,
                search: config.search.clone(),
                ..TestParameters::default()
            },
            started_at: chrono::Utc::now().to_rfc3339(),
            finished_at: None,
            collector_version: env!("CARGO_PKG_VERSION").into(),
            labels,
            configuration: about.configuration.clone(),
            provenance: None,
        },
        status: RunStatus::Partial {
            reason: "run in progress".into(),
        },
        measurement: Measurement {
            steady_state: Some("peak mode: the first wave of N requests (started together) and requests still running when the first slot drains are excluded; throughput counts tokens arriving inside the window".into()),
            connection_reuse: Some(config.server.connection_reuse.label().into()),
            ..Measurement::default()
        },
        scenarios: suite.scenarios.clone(),
        series: Vec::new(),
        records: None,
        warnings: Vec::new(),
        sharding,
        fit: None,
    }
}

/// The GPUs measured: as the options name them, else as the simulator's card says.
fn hardware(about: &About, card: Option<&DeploymentCard>) -> HardwareInfo {
    HardwareInfo {
        gpu_model: about
            .gpu
            .clone()
            .or_else(|| card.map(|c| c.gpu.clone()))
            .unwrap_or_else(|| "unknown (pass --gpu)".into()),
        gpu_count: about
            .gpu_count
            .or_else(|| card.map(|c| c.gpu_count))
            .unwrap_or(1),
        // A datasheet's "80GB" is the simulator's 80 GiB; reports quote the datasheet.
        vram_gb: card.map(|c| c.vram_gib),
        host: None,
    }
}
