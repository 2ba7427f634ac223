//! What the server says about itself: served model, context length, version, engine.

use std::time::Duration;

use serde::Deserialize;

use crate::adapters::EngineKind;
use crate::driver::ApiKey;
use crate::scrape::{self, server_root};

/// Facts discovered from `/v1/models`, `/version` and `/metrics`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerInfo {
    pub model: Option<String>,
    pub owned_by: Option<String>,
    pub max_model_len: Option<u64>,
    pub version: Option<String>,
    pub engine: Option<EngineKind>,
    /// The simulator's description of what it simulates (GPU, precision, parameters).
    pub simulated: Option<infermeter_sim::engine::DeploymentCard>,
}

#[derive(Debug, Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Debug, Deserialize)]
struct ModelEntry {
    id: String,
    owned_by: Option<String>,
    max_model_len: Option<u64>,
    infermeter_sim: Option<infermeter_sim::engine::DeploymentCard>,
}

async fn get_text(
    client: &reqwest::Client,
    url: &str,
    key: Option<&ApiKey>,
) -> Result<String, String> {
    let mut req = client.get(url).timeout(Duration::from_secs(10));
    if let Some(key) = key {
        req = key.authorize(req);
    }
    let resp = req.send().await.map_err(|e| e.without_url().to_string())?;
    let status = resp.status();
    let text = resp.text().await.map_err(|e| e.without_url().to_string())?;
    if status.is_success() {
        Ok(text)
    } else {
        Err(format!("HTTP {status}"))
    }
}

/// Asks the server about itself. Only `/v1/models` failing is an error, and only when the
/// model must be discovered.
pub async fn discover(
    client: &reqwest::Client,
    base_url: &str,
    metrics_url: &str,
    key: Option<&ApiKey>,
    need_model: bool,
) -> Result<ServerInfo, String> {
    let models_url = format!("{}/models", base_url.trim_end_matches('/'));
    let models = get_text(client, &models_url, key)
        .await
        .and_then(|t| serde_json::from_str::<ModelList>(&t).map_err(|e| e.to_string()));
    let mut info = ServerInfo::default();
    match models {
        Ok(list) => {
            if let Some(first) = list.data.into_iter().next() {
                info.model = Some(first.id);
                info.owned_by = first.owned_by;
                info.max_model_len = first.max_model_len;
                info.simulated = first.infermeter_sim;
            }
        }
        Err(e) if need_model => {
            return Err(format!(
                "cannot discover the model from {models_url}: {e}; pass --model"
            ))
        }
        Err(e) => tracing::debug!("{models_url}: {e}"),
    }
    if need_model && info.model.is_none() {
        return Err(format!("{models_url} lists no model; pass --model"));
    }
    let version_body = get_text(client, &format!("{}/version", server_root(base_url)), key)
        .await
        .ok();
    info.version = version_body.as_deref().and_then(|body| {
        serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.get("version").and_then(|v| v.as_str().map(String::from)))
    });
    let dialect = get_text(client, metrics_url, key)
        .await
        .ok()
        .and_then(|text| scrape::detect(&text));
    // `owned_by` names some engines (the simulator says "infermeter-sim").
    let identity = format!(
        "{} {}",
        version_body.as_deref().unwrap_or_default(),
        info.owned_by.as_deref().unwrap_or_default()
    );
    let engine = EngineKind::detect(dialect, Some(&identity));
    info.engine = (engine != EngineKind::Auto).then_some(engine);
    Ok(info)
}
