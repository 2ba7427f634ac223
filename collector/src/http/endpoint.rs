//! What the server says about itself: served model, context length, version, engine (and the
//! engine to drive, with llama.cpp's build from its `/props`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::http::adapters::EngineKind;
use crate::http::api_key::ApiKey;
use crate::http::base_url::{without_credentials, BaseUrl};
use crate::http::scrape::{self, server_root};

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
    #[error("cannot discover the model: {}; pass --model, or check --base-url (the server's root, e.g. http://host:8000, or its API base, e.g. http://host:8000/v1)", tried_list(.tried))]
    Models {
        /// Each models URL tried (without credentials) and why it gave no model list.
        tried: Vec<(String, FetchError)>,
    },
    #[error("{url} lists no model; pass --model")]
    NoModel { url: String },
}

fn tried_list(tried: &[(String, FetchError)]) -> String {
    let each: Vec<String> = tried.iter().map(|(url, e)| format!("{url}: {e}")).collect();
    each.join("; ")
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

/// The API base found and what the server said about itself.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The API base whose `/models` answered (the first candidate when none did).
    pub api_base: String,
    /// The server's `/metrics` (or the `metrics_url` given).
    pub metrics_url: String,
    pub info: ServerInfo,
}

/// Asks the server about itself: finds the API base among `base_url`'s candidates (the first
/// whose `/models` lists the served models), then its version and metrics dialect. Only
/// `/models` failing everywhere is an error, and only when the model must be discovered.
/// `metrics_url` overrides `/metrics` at the server's root.
pub async fn discover(
    client: &reqwest::Client,
    base_url: &BaseUrl,
    metrics_url: Option<&str>,
    key: Option<&ApiKey>,
    need_model: bool,
) -> Result<Discovered, DiscoveryError> {
    let mut tried = Vec::new();
    let mut found = None;
    for base in base_url.candidates() {
        let models_url = format!("{base}/models");
        let models = get_text(client, &models_url, key)
            .await
            .and_then(|t| serde_json::from_str::<ModelList>(&t).map_err(FetchError::Json));
        match models {
            Ok(list) => {
                found = Some((base.clone(), list));
                break;
            }
            Err(e) => tried.push((without_credentials(&models_url), e)),
        }
    }
    let mut info = ServerInfo::default();
    let api_base = match found {
        Some((api_base, list)) => {
            if let Some(first) = list.data.into_iter().next() {
                info.model = Some(first.id);
                info.owned_by = first.owned_by;
                info.max_model_len = first.max_model_len;
                info.simulated = first.infermeter_sim;
            }
            api_base
        }
        None if need_model => return Err(DiscoveryError::Models { tried }),
        None => {
            for (url, e) in &tried {
                tracing::debug!("{url}: {e}");
            }
            base_url.candidates()[0].clone()
        }
    };
    if need_model && info.model.is_none() {
        return Err(DiscoveryError::NoModel {
            url: without_credentials(&format!("{api_base}/models")),
        });
    }
    let metrics_url = metrics_url.map_or_else(|| scrape::metrics_url(&api_base), String::from);
    describe(client, &api_base, &metrics_url, key, &mut info).await;
    Ok(Discovered {
        api_base,
        metrics_url,
        info,
    })
}

/// The server's version (`/version`) and engine (from it, `owned_by` and `/metrics`).
async fn describe(
    client: &reqwest::Client,
    api_base: &str,
    metrics_url: &str,
    key: Option<&ApiKey>,
    info: &mut ServerInfo,
) {
    let version_body = get_text(client, &format!("{}/version", server_root(api_base)), key)
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
}

/// The engine to drive: `asked` (`--engine`) unless `auto`, else the one discovery recognised.
/// llama.cpp has no `/version`: its `/props` names the build, which goes into `info.version`,
/// and so the engine too when its `/metrics` is off and `/v1/models` did not say.
pub async fn identify(
    asked: EngineKind,
    info: &mut ServerInfo,
    client: &reqwest::Client,
    base_url: &str,
    key: Option<&ApiKey>,
) -> EngineKind {
    let engine = match asked {
        EngineKind::Auto => info.engine.unwrap_or(EngineKind::Auto),
        chosen => chosen,
    };
    if !matches!(engine, EngineKind::Auto | EngineKind::Llamacpp) || info.version.is_some() {
        return engine;
    }
    match llamacpp_build(client, base_url, key).await {
        Some(build) => {
            info.version = Some(build);
            EngineKind::Llamacpp
        }
        None => engine,
    }
}

/// llama.cpp's `/props`: its build (`build_info`, e.g. "b1-0c1e570"). Only llama.cpp serves
/// this shape, so an answer also identifies the engine.
async fn llamacpp_build(
    client: &reqwest::Client,
    base_url: &str,
    key: Option<&ApiKey>,
) -> Option<String> {
    let mut request = client
        .get(format!("{}/props", server_root(base_url)))
        .timeout(Duration::from_secs(10));
    if let Some(key) = key {
        request = key.authorize(request);
    }
    let response = request.send().await.ok()?.error_for_status().ok()?;
    let props: Value = response.json().await.ok()?;
    props
        .get("build_info")
        .and_then(Value::as_str)
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loopback server answering `/props` as llama.cpp does; returns its base URL.
    async fn props_server() -> String {
        let app = axum::Router::new().route(
            "/props",
            axum::routing::get(|| async {
                axum::Json(serde_json::json!({ "build_info": "b1-0c1e570" }))
            }),
        );
        format!("{}/v1", crate::http::test_server::serve(app).await)
    }

    #[tokio::test]
    async fn props_names_llamacpp_and_its_build_when_nothing_else_did() {
        let base_url = props_server().await;
        let client = reqwest::Client::new();
        let engine = |asked, mut info: ServerInfo| {
            let (client, base_url) = (&client, &base_url);
            async move {
                let engine = identify(asked, &mut info, client, base_url, None).await;
                (engine, info.version)
            }
        };
        assert_eq!(
            engine(EngineKind::Auto, ServerInfo::default()).await,
            (EngineKind::Llamacpp, Some("b1-0c1e570".into()))
        );
        assert_eq!(
            engine(EngineKind::Llamacpp, ServerInfo::default()).await,
            (EngineKind::Llamacpp, Some("b1-0c1e570".into()))
        );
        // Asked for another engine, or one with a /version: /props is not consulted.
        assert_eq!(
            engine(EngineKind::Vllm, ServerInfo::default()).await,
            (EngineKind::Vllm, None)
        );
        let versioned = ServerInfo {
            version: Some("0.8.5".into()),
            engine: Some(EngineKind::Vllm),
            ..ServerInfo::default()
        };
        assert_eq!(
            engine(EngineKind::Auto, versioned).await,
            (EngineKind::Vllm, Some("0.8.5".into()))
        );
    }
}
