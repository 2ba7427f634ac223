//! Engine differences in one place: how to detect an engine and which extra request fields it
//! takes (exact output length, per-chunk token counts, no prompt cache).

use serde_json::{Map, Value};

use crate::http::scrape::Dialect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Auto,
    Vllm,
    Sglang,
    Tgi,
    Llamacpp,
    Trtllm,
    Ollama,
    /// `transformers`' continuous batching behind engines/transformers/serve.py.
    Transformers,
    Sim,
}

impl EngineKind {
    pub const ALL: [EngineKind; 9] = [
        EngineKind::Auto,
        EngineKind::Vllm,
        EngineKind::Sglang,
        EngineKind::Tgi,
        EngineKind::Llamacpp,
        EngineKind::Trtllm,
        EngineKind::Ollama,
        EngineKind::Transformers,
        EngineKind::Sim,
    ];

    /// The name `--engine` takes.
    pub fn label(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Vllm => "vllm",
            EngineKind::Sglang => "sglang",
            EngineKind::Tgi => "tgi",
            EngineKind::Llamacpp => "llamacpp",
            EngineKind::Trtllm => "trtllm",
            EngineKind::Ollama => "ollama",
            EngineKind::Transformers => "transformers",
            EngineKind::Sim => "sim",
        }
    }

    /// What the choice means, for `--help`, where the name does not say it.
    pub fn help(self) -> Option<&'static str> {
        (self == EngineKind::Transformers)
            .then_some("transformers' continuous batching behind engines/transformers/serve.py")
    }

    /// Display name written to `metadata.engine.name`.
    pub fn display_name(self) -> &'static str {
        match self {
            EngineKind::Auto => "unknown",
            EngineKind::Vllm => "vLLM",
            EngineKind::Sglang => "SGLang",
            EngineKind::Tgi => "TGI",
            EngineKind::Llamacpp => "llama.cpp",
            EngineKind::Trtllm => "TensorRT-LLM",
            EngineKind::Ollama => "Ollama",
            EngineKind::Transformers => "transformers",
            EngineKind::Sim => "infermeter-sim",
        }
    }

    /// Adds the fields that force a fixed output length, where the engine accepts them.
    /// Engines that reject unknown fields (Ollama, TGI) only get `max_tokens`.
    pub fn fixed_length_fields(self, body: &mut Map<String, Value>, output_tokens: u32) {
        match self {
            EngineKind::Vllm
            | EngineKind::Sglang
            | EngineKind::Trtllm
            | EngineKind::Sim
            | EngineKind::Transformers
            | EngineKind::Auto => {
                body.insert("ignore_eos".into(), Value::Bool(true));
                body.insert("min_tokens".into(), output_tokens.into());
            }
            // llama.cpp has no `min_tokens` (it drops unknown fields): `ignore_eos` with the
            // `max_tokens` every body carries gives the exact length.
            EngineKind::Llamacpp => {
                body.insert("ignore_eos".into(), Value::Bool(true));
            }
            EngineKind::Tgi | EngineKind::Ollama => {}
        }
    }

    /// Adds every extra field the engine takes: exact output length (unless the output is left
    /// to stop `natural`ly), running token counts on each chunk, and (in a no-cache suite) no
    /// prompt cache.
    pub fn request_extras(
        self,
        body: &mut Map<String, Value>,
        output_tokens: u32,
        prompt_caching: bool,
        natural: bool,
    ) {
        if !natural {
            self.fixed_length_fields(body, output_tokens);
        }
        if self == EngineKind::Llamacpp {
            // Every content chunk then carries `timings.predicted_n`, the running token count:
            // llama.cpp's `continuous_usage_stats`. A chunk can hold 0 or 2 tokens.
            body.insert("timings_per_token".into(), Value::Bool(true));
            if !prompt_caching {
                // The unique prompt prefix already defeats the cache but for the template's
                // first tokens; this makes `cache_n` 0 so every prompt token is computed.
                body.insert("cache_prompt".into(), Value::Bool(false));
            }
        }
    }

    /// True for the infermeter simulator, whose reports are marked synthetic.
    pub fn is_simulator(self) -> bool {
        self == EngineKind::Sim
    }

    /// Whether the engine streams `usage` on every chunk when asked (`continuous_usage_stats`).
    pub fn wants_continuous_usage(self) -> bool {
        matches!(self, EngineKind::Vllm | EngineKind::Sim | EngineKind::Auto)
    }

    /// Detects the engine from the `/version` body and the metric family of `/metrics`.
    /// The version body goes first: the simulator speaks vLLM's metric dialect.
    pub fn detect(dialect: Option<Dialect>, version_body: Option<&str>) -> EngineKind {
        let lower = version_body
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        for (word, kind) in [
            ("infermeter", EngineKind::Sim),
            ("sglang", EngineKind::Sglang),
            ("ollama", EngineKind::Ollama),
            // engines/transformers/serve.py's `/version`: {"name": "transformers", ...}.
            ("\"transformers\"", EngineKind::Transformers),
            ("tensorrt", EngineKind::Trtllm),
            // llama.cpp's `/v1/models` says `"owned_by": "llamacpp"`.
            ("llamacpp", EngineKind::Llamacpp),
            ("llama.cpp", EngineKind::Llamacpp),
        ] {
            if lower.contains(word) {
                return kind;
            }
        }
        match dialect {
            Some(Dialect::Vllm) => EngineKind::Vllm,
            Some(Dialect::Sglang) => EngineKind::Sglang,
            Some(Dialect::Tgi) => EngineKind::Tgi,
            Some(Dialect::LlamaCpp) => EngineKind::Llamacpp,
            // vLLM's /version is just {"version": "0.x.y"}.
            None if lower.contains("\"version\"") => EngineKind::Vllm,
            None => EngineKind::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_engines() {
        assert_eq!(
            EngineKind::detect(Some(Dialect::Sglang), None),
            EngineKind::Sglang
        );
        assert_eq!(EngineKind::detect(None, None), EngineKind::Auto);
        assert_eq!(
            EngineKind::detect(None, Some(r#"{"version":"0.8.5"}"#)),
            EngineKind::Vllm
        );
        assert_eq!(
            EngineKind::detect(Some(Dialect::Vllm), Some(r#"{"name":"infermeter-sim"}"#)),
            EngineKind::Sim
        );
        assert_eq!(
            EngineKind::detect(None, Some("ollama 0.5")),
            EngineKind::Ollama
        );
        assert_eq!(
            EngineKind::detect(None, Some(" llamacpp")),
            EngineKind::Llamacpp
        );
        assert_eq!(
            EngineKind::detect(Some(Dialect::LlamaCpp), None),
            EngineKind::Llamacpp
        );
        assert_eq!(
            EngineKind::detect(
                None,
                Some(r#"{"name": "transformers", "version": "5.17.0"}"#)
            ),
            EngineKind::Transformers
        );
    }

    #[test]
    fn fixed_length_fields_per_engine() {
        let mut body = Map::new();
        EngineKind::Vllm.fixed_length_fields(&mut body, 256);
        assert_eq!(body["ignore_eos"], Value::Bool(true));
        assert_eq!(body["min_tokens"], Value::from(256));
        let mut body = Map::new();
        EngineKind::Ollama.fixed_length_fields(&mut body, 256);
        assert!(body.is_empty());
    }

    #[test]
    fn llamacpp_extras() {
        let mut body = Map::new();
        EngineKind::Llamacpp.request_extras(&mut body, 32, false, false);
        assert_eq!(body["ignore_eos"], Value::Bool(true));
        assert_eq!(body["timings_per_token"], Value::Bool(true));
        assert_eq!(body["cache_prompt"], Value::Bool(false));
        assert!(!body.contains_key("min_tokens"));
        let mut body = Map::new();
        EngineKind::Llamacpp.request_extras(&mut body, 32, true, false);
        assert!(!body.contains_key("cache_prompt"));
        let mut body = Map::new();
        EngineKind::Vllm.request_extras(&mut body, 32, false, false);
        assert!(!body.contains_key("cache_prompt") && !body.contains_key("timings_per_token"));
        // A natural stop: the engine ends the answer where the model does, max_tokens a cap.
        for engine in [EngineKind::Vllm, EngineKind::Llamacpp, EngineKind::Sim] {
            let mut body = Map::new();
            engine.request_extras(&mut body, 32, false, true);
            assert!(!body.contains_key("ignore_eos") && !body.contains_key("min_tokens"));
        }
    }
}
