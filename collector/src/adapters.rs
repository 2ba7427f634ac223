//! Engine differences in one place: how to detect an engine and which extra request fields it
//! takes to produce exactly `max_tokens` output tokens.

use clap::ValueEnum;
use serde_json::{Map, Value};

use crate::scrape::Dialect;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineKind {
    Auto,
    Vllm,
    Sglang,
    Tgi,
    Llamacpp,
    Trtllm,
    Ollama,
    Sim,
}

impl EngineKind {
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
            | EngineKind::Auto => {
                body.insert("ignore_eos".into(), Value::Bool(true));
                body.insert("min_tokens".into(), output_tokens.into());
            }
            EngineKind::Llamacpp => {
                body.insert("ignore_eos".into(), Value::Bool(true));
                body.insert("n_predict".into(), output_tokens.into());
            }
            EngineKind::Tgi | EngineKind::Ollama => {}
        }
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
            ("tensorrt", EngineKind::Trtllm),
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
}
