//! The API key: read once from where the run was told (`--api-key-file`, `--api-key-env`, else
//! `OPENAI_API_KEY`), and never printed.

use std::fmt;
use std::path::PathBuf;

use http::header::HeaderValue;

/// Where the API key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The environment variable `var`; `named` when the user named it, so that its absence is
    /// an error rather than a run without a key.
    Env {
        var: String,
        named: bool,
    },
    File(PathBuf),
}

impl Default for KeySource {
    /// `OPENAI_API_KEY`, if set.
    fn default() -> Self {
        KeySource::Env {
            var: "OPENAI_API_KEY".into(),
            named: false,
        }
    }
}

/// Why the key asked for cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read --api-key-file {}", .path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--api-key-file {} is empty", .0.display())]
    EmptyFile(PathBuf),
    #[error("--api-key-env {0}: the environment variable is not set")]
    Env(String),
}

impl KeySource {
    /// The key, or `None` where the default variable is not set.
    pub fn read(&self) -> Result<Option<ApiKey>, KeyError> {
        match self {
            KeySource::File(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| KeyError::File {
                    path: path.clone(),
                    source,
                })?;
                ApiKey::new(text)
                    .map(Some)
                    .ok_or_else(|| KeyError::EmptyFile(path.clone()))
            }
            KeySource::Env { var, named } => match std::env::var(var) {
                Ok(v) => Ok(ApiKey::new(v)),
                Err(_) if *named => Err(KeyError::Env(var.clone())),
                Err(_) => Ok(None),
            },
        }
    }
}

/// An API key that never prints itself.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: String) -> Option<ApiKey> {
        let key = key.trim().to_string();
        (!key.is_empty()).then_some(ApiKey(key))
    }
    /// The key itself, for the prompt tokenizer's own (sensitive-marked) header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Adds the bearer header.
    pub fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        request.bearer_auth(&self.0)
    }

    /// The bearer header value, marked sensitive; `None` when the key holds characters a
    /// header cannot carry.
    pub fn bearer(&self) -> Option<HeaderValue> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.0)).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}
