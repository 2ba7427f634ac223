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

/// Why the server's `/v1/models` gave no model.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("cannot discover the model from {url}: {cause}; pass --model")]
    Models { url: String, cause: FetchError },
    #[error("{url} lists no model; pass --model")]
    NoModel { url: String },
}

/// Why one of the server's self-descriptions could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Without the URL, which the message around it names.
    #[error("{0}")]
    Http(reqwest::Error),
    #[error("HTTP {0}")]
    Status(reqwest::StatusCode),
    #[error("{0}")]
    Json(serde_json::Error),
}

async fn get_text(
    client: &reqwest::Client,
    url: &str,
    key: Option<&ApiKey>,
) -> Result<String, FetchError> {
    let mut req = client.get(url).timeout(Duration::from_secs(10));
    if let Some(key) = key {
        req = key.authorize(req);
    }
    let http = |e: reqwest::Error| FetchError::Http(e.without_url());
    let resp = req.send().await.map_err(http)?;
    let status = resp.status();
    let text = resp.text().await.map_err(http)?;
    if status.is_success() {
        Ok(text)
    } else {
        Err(FetchError::Status(status))
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
) -> Result<ServerInfo, DiscoveryError> {
    let models_url = format!("{}/models", base_url.trim_end_matches('/'));
    let models = get_text(client, &models_url, key)
        .await
        .and_then(|t| serde_json::from_str::<ModelList>(&t).map_err(FetchError::Json));
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
        Err(cause) if need_model => {
            return Err(DiscoveryError::Models {
                url: models_url,
                cause,
            })
        }
        Err(e) => tracing::debug!("{models_url}: {e}"),
    }
    if need_model && info.model.is_none() {
        return Err(DiscoveryError::NoModel { url: models_url });
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
