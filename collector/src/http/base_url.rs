//! `--base-url` as users type it: the server's root (`http://host:8000`), its OpenAI API base
//! (`…/v1`), or a full endpoint URL (`…/v1/chat/completions`, `…/v1/completions`), as vLLM's
//! `bench serve`, guidellm and AIPerf take it. What it names is an API base, or a short list
//! of likely ones that discovery tries in turn.

use reqwest::Url;

use crate::http::api::Api;

/// Where the OpenAI API may be, read from `--base-url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// API bases to try, likeliest first, without a trailing slash.
    candidates: Vec<String>,
    /// The API a full endpoint URL names.
    api: Option<Api>,
}

/// Why `--base-url` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BaseUrlError {
    #[error("--base-url {url:?} is not an http:// or https:// URL with a host ({reason}); use e.g. http://localhost:8000 or http://localhost:8000/v1")]
    Invalid { url: String, reason: String },
    #[error("--base-url {url} names the {named} endpoint, but --api {asked} was given; drop --api or point --base-url at the server (e.g. {base})")]
    ApiMismatch {
        url: String,
        named: &'static str,
        asked: &'static str,
        base: String,
    },
}

impl BaseUrl {
    /// Reads what the user typed. A full endpoint URL names exactly its base; the root names
    /// `/v1` first and the root itself second; any other path names itself first and its
    /// `/v1` second (a gateway's prefix).
    pub fn parse(typed: &str) -> Result<BaseUrl, BaseUrlError> {
        let invalid = |reason: String| BaseUrlError::Invalid {
            url: without_credentials(typed),
            reason,
        };
        let url = Url::parse(typed.trim()).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(invalid("no http(s) scheme or host".into()));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(
                "a query or fragment cannot be carried to every endpoint".into(),
            ));
        }
        let full = url.as_str().trim_end_matches('/');
        // The path's start in the serialised URL: after `scheme://authority`.
        let path = url.path().trim_end_matches('/');
        let root = &full[..full.len() - path.len()];
        let endpoint = [Api::Chat, Api::Completions]
            .into_iter()
            .find(|api| path.ends_with(&format!("/{}", api.path())));
        let candidates = match endpoint {
            Some(api) => vec![full[..full.len() - api.path().len() - 1].to_string()],
            None if path.is_empty() => vec![format!("{root}/v1"), root.to_string()],
            None if path.ends_with("/v1") => vec![full.to_string()],
            None => vec![full.to_string(), format!("{full}/v1")],
        };
        Ok(BaseUrl {
            candidates,
            api: endpoint,
        })
    }

    /// The API bases to try, likeliest first.
    pub fn candidates(&self) -> &[String] {
        &self.candidates
    }

    /// The API to measure: `--api`, else the one the URL names, else chat; an error when the
    /// two disagree.
    pub fn api(&self, asked: Option<Api>) -> Result<Api, BaseUrlError> {
        match (asked, self.api) {
            (Some(asked), Some(named)) if asked != named => Err(BaseUrlError::ApiMismatch {
                url: without_credentials(&format!("{}/{}", self.candidates[0], named.path())),
                named: named.label(),
                asked: asked.label(),
                base: without_credentials(&self.candidates[0]),
            }),
            (asked, named) => Ok(asked.or(named).unwrap_or(Api::Chat)),
        }
    }
}

/// A URL as it may be printed or written to a report: no user name or password.
pub fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(typed: &str) -> Vec<String> {
        BaseUrl::parse(typed).unwrap().candidates
    }

    #[test]
    fn the_root_v1_and_endpoints_name_their_api_base() {
        let v1 = "http://h:8000/v1";
        assert_eq!(candidates("http://h:8000"), [v1, "http://h:8000"]);
        assert_eq!(candidates("http://h:8000/"), candidates("http://h:8000"));
        assert_eq!(candidates("http://h:8000/v1"), [v1]);
        assert_eq!(candidates("http://h:8000/v1/"), [v1]);
        assert_eq!(candidates("http://h:8000/v1/chat/completions"), [v1]);
        assert_eq!(candidates("http://h:8000/v1/completions/"), [v1]);
        // A gateway's prefix: as typed, then with /v1.
        assert_eq!(
            candidates("https://gw.example/openai"),
            ["https://gw.example/openai", "https://gw.example/openai/v1"]
        );
        // An endpoint names exactly its base, /v1 or not.
        assert_eq!(candidates("http://h/chat/completions"), ["http://h"]);
        // Credentials stay in the URL used; only what is printed drops them.
        assert_eq!(candidates("http://u:p@h/v1"), ["http://u:p@h/v1"]);
    }

    #[test]
    fn an_endpoint_url_sets_the_api_and_refuses_another() {
        let chat = BaseUrl::parse("http://h/v1/chat/completions").unwrap();
        assert_eq!(chat.api(None).unwrap(), Api::Chat);
        let completions = BaseUrl::parse("http://u:secret@h/v1/completions").unwrap();
        assert_eq!(completions.api(None).unwrap(), Api::Completions);
        let refused = completions.api(Some(Api::Chat)).unwrap_err().to_string();
        assert!(
            refused.contains("names the completions endpoint"),
            "{refused}"
        );
        assert!(refused.contains("http://h/v1"), "{refused}");
        assert!(!refused.contains("secret"), "{refused}");
        assert_eq!(
            BaseUrl::parse("http://h").unwrap().api(None).unwrap(),
            Api::Chat
        );
        assert_eq!(
            BaseUrl::parse("http://h")
                .unwrap()
                .api(Some(Api::Completions))
                .unwrap(),
            Api::Completions
        );
    }

    #[test]
    fn what_is_not_a_url_says_so_without_credentials() {
        for typed in [
            "localhost:8000",
            "ftp://h/v1",
            "http://u:secret@h/v1?x=1",
            "nonsense",
        ] {
            let e = BaseUrl::parse(typed).unwrap_err().to_string();
            assert!(
                e.contains("is not an http:// or https:// URL"),
                "{typed}: {e}"
            );
            assert!(!e.contains("secret"), "{e}");
        }
    }

    #[test]
    fn credentials_never_reach_the_report() {
        assert_eq!(
            without_credentials("http://user:pw@host:8000/v1"),
            "http://host:8000/v1"
        );
        assert_eq!(without_credentials("http://host/v1"), "http://host/v1");
    }
}
