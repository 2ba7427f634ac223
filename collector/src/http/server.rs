//! The measured server, found once before a run: where its API is, what it serves, which
//! engine, and the clients that talk to it ([`Server::find`]).

use std::path::PathBuf;
use std::time::Duration;

use super::adapters::EngineKind;
use super::api::{Api, ConnectionReuse};
use super::api_key::{ApiKey, KeyError, KeySource};
use super::base_url::{BaseUrl, BaseUrlError};
use super::driver::{Driver, DriverConfig, DriverError, ExtraBody};
use super::endpoint::{self, DiscoveryError, ServerInfo};
use super::transport;

/// The endpoint and how to talk to it, as the run was told.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// As typed: the server's root, its API base or a full endpoint URL.
    pub base_url: String,
    /// Discovered from `/v1/models` when `None`.
    pub model: Option<String>,
    /// The API to measure (default: the one a full endpoint URL names, else chat).
    pub api: Option<Api>,
    pub engine: EngineKind,
    pub api_key: KeySource,
    /// A `tokenizer.json` for exact prompt lengths (else the server's `/tokenize`, or an
    /// estimate).
    pub tokenizer: Option<PathBuf>,
    /// Default: `/metrics` next to the base URL.
    pub metrics_url: Option<String>,
    pub connect_timeout: Duration,
    pub first_token_timeout: Duration,
    pub total_timeout: Duration,
    pub connection_reuse: ConnectionReuse,
    /// Fields added to every measured request's body.
    pub extra_body: ExtraBody,
}

/// Why the server could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("cannot build the HTTP client")]
    HttpClient(#[source] reqwest::Error),
    #[error(transparent)]
    BaseUrl(#[from] BaseUrlError),
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
}

/// The server as the run found it: what it serves, which engine, and how to reach it.
pub struct Server {
    /// For everything but the measured requests: discovery, tokenizer, metrics.
    pub side_client: reqwest::Client,
    /// The API base, e.g. `http://host:8000/v1`, whatever form `--base-url` took.
    pub api_base: String,
    pub api: Api,
    pub metrics_url: String,
    pub key: Option<ApiKey>,
    pub info: ServerInfo,
    pub model: String,
    pub engine: EngineKind,
}

impl Server {
    /// Reads the API key and the base URL, and asks the server about itself (where its API
    /// is, model, engine, version).
    pub async fn find(config: &ServerConfig) -> Result<Server, ServerError> {
        let key = config.api_key.read()?;
        let base_url = BaseUrl::parse(&config.base_url)?;
        let api = base_url.api(config.api)?;
        let side_client =
            transport::http_client(config.connect_timeout, 4).map_err(ServerError::HttpClient)?;
        let discovered = endpoint::discover(
            &side_client,
            &base_url,
            config.metrics_url.as_deref(),
            key.as_ref(),
            config.model.is_none(),
        )
        .await?;
        let mut info = discovered.info;
        let model = config
            .model
            .clone()
            .or(info.model.clone())
            .expect("discover insists on a model when none is given");
        let engine = endpoint::identify(
            config.engine,
            &mut info,
            &side_client,
            &discovered.api_base,
            key.as_ref(),
        )
        .await;
        Ok(Server {
            side_client,
            api_base: discovered.api_base,
            api,
            metrics_url: discovered.metrics_url,
            key,
            info,
            model,
            engine,
        })
    }

    /// The measured endpoint's URL, e.g. `http://host:8000/v1/chat/completions`.
    pub fn url(&self) -> String {
        format!("{}/{}", self.api_base, self.api.path())
    }

    /// The driver of the measured requests, its pool sized for the most requests in flight
    /// (`prompt_caching`: the suite's, which engines that can are told).
    pub fn driver(
        &self,
        config: &ServerConfig,
        prompt_caching: bool,
        max_in_flight: usize,
    ) -> Result<Driver, DriverError> {
        Driver::new(DriverConfig {
            base_url: self.api_base.clone(),
            api: self.api,
            model: self.model.clone(),
            engine: self.engine,
            prompt_caching,
            api_key: self.key.clone(),
            connect_timeout: config.connect_timeout,
            first_token_timeout: config.first_token_timeout,
            total_timeout: config.total_timeout,
            max_in_flight,
            connection_reuse: config.connection_reuse,
            extra_body: config.extra_body.clone(),
        })
    }
}
