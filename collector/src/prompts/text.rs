//! Prompts of an exact token count, unique per request so no prefix cache can help.
//!
//! A prompt is a unique prefix ([`request_prefix`], ending in a newline) followed by filler:
//! natural-looking sentences drawn from a local word list, deterministic for a seed. The filler
//! is aligned to the target by measuring with a [`Tokenizer`] (binary search on its length, then
//! one-token padding) and cached per (target, API, prefix token count). Tokenizers do not merge
//! across the prefix's final newline, so only the short prefix is measured per request and
//! thousands of prompts cost thousands of short counts, not full alignments.
//!
//! Tokenizers, best first:
//! - the model's Hugging Face `tokenizer.json` ([`Tokenizer::from_path`]), local and fast;
//! - the server's `/tokenize` ([`Tokenizer::from_server`]): vLLM's shape (`{"model","prompt"}` or
//!   `{"model","messages"}` -> `{"count"}`, which also counts the chat template), llama.cpp's
//!   (`{"content"}` -> `{"tokens"}`, chats through `/apply-template` first) or TGI's
//!   (`{"inputs"}` -> `[...]`); served at the server root, not under `/v1`;
//! - an estimate of ~4 characters per token ([`Tokenizer::estimate`]), with a warning.
//!
//! What a tokenizer cannot see (a chat template applied by the server, a BOS the local
//! `tokenizer.json` does not add) is learnt from what the server bills for one probe prompt and
//! given to [`PromptBuilder::calibrate`]; [`Tokenizer::needs_calibration`] says when.
//! [`BuiltPrompt::exact`] says whether the count covers everything the server bills.

use infermeter_report::{PromptCounter, PromptTokenizer};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use reqwest::header::{HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};

use crate::http::api::Api;
use crate::http::api_key::ApiKey;
use crate::http::body::{joined, ChatMessage, PromptBody};
use crate::http::scrape::server_root;
use crate::http::server::Server;
use crate::http::transport::error_chain;
use crate::prompts::filler::filler_pieces;

/// Characters per token assumed by the estimate (English prose with common BPE vocabularies).
const CHARS_PER_TOKEN: usize = 4;
/// Pieces appended to reach the last few tokens; each is a single token for most vocabularies.
const PADDING: [&str; 6] = [" so", " it", ".", " a", "\n", " the"];

/// Why a prompt's tokens cannot be counted, or its filler not aligned.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("cannot load tokenizer {}", .path.display())]
    Load {
        path: std::path::PathBuf,
        source: tokenizers::Error,
    },
    #[error("the API key is not a valid header value")]
    ApiKey(#[source] reqwest::header::InvalidHeaderValue),
    #[error("{url} does not count tokens in any known shape ({failures})")]
    NoShape { url: String, failures: String },
    #[error("tokenizer failed")]
    Encode(#[source] tokenizers::Error),
    #[error("this server cannot count chat messages")]
    NoChatCounting,
    #[error("{url} answered without a `prompt`")]
    NoPrompt { url: String },
    #[error(transparent)]
    Request(#[from] reqwest::Error),
    #[error("HTTP {0}")]
    Status(reqwest::StatusCode),
    #[error("unexpected answer (no count or tokens)")]
    NoCount,
    #[error("cannot reach {target} tokens with the filler text")]
    Unreachable { target: u32 },
}

/// What a prompt's length is counted as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Counting {
    /// Everything the server bills when the prompt is sent alone through `api`.
    Sent(Api),
    /// The text alone, as one message among others: no template, no BOS.
    Content,
}

/// Counts tokens the way the served model does.
pub enum Tokenizer {
    HuggingFace(Box<tokenizers::Tokenizer>),
    Server(ServerTokenizer),
    Estimate,
}

/// The server's `/tokenize` endpoint, in the shape it answered to.
pub struct ServerTokenizer {
    client: reqwest::Client,
    url: String,
    model: String,
    shape: TokenizeShape,
    auth: Option<HeaderValue>,
    chat: ChatCounting,
}

/// How the server counts a chat with its template applied.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ChatCounting {
    /// It cannot: only the message text is counted.
    None,
    /// vLLM's `/tokenize` takes `messages`.
    Messages,
    /// llama.cpp renders the chat at this `/apply-template` URL; its `/tokenize` counts the result.
    ApplyTemplate(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenizeShape {
    Vllm,
    LlamaCpp,
    Tgi,
}

impl TokenizeShape {
    fn body(self, model: &str, text: &str) -> Value {
        match self {
            TokenizeShape::Vllm => json!({ "model": model, "prompt": text }),
            // The completion endpoint adds BOS, so count it here too.
            TokenizeShape::LlamaCpp => json!({ "content": text, "add_special": true }),
            TokenizeShape::Tgi => json!({ "inputs": text }),
        }
    }
}

/// The start of every prompt: the request's unique id, then an instruction ending in a newline
/// (no tokenizer merges across it, so the filler after it counts the same for every id).
pub fn request_prefix(unique_id: &str) -> String {
    format!("[{unique_id}] Summarise the notes below in a few sentences.\n")
}

/// The start of a prompt from a prompt file: the request's unique id alone on its line, before
/// the file's text as written.
pub fn file_prefix(unique_id: &str) -> String {
    format!("[{unique_id}]\n")
}

impl Tokenizer {
    /// What the report says counted the prompts: which tokenizer, and whether its counts are
    /// the model's own.
    pub fn counter(&self) -> PromptCounter {
        let tokenizer = match self {
            Tokenizer::HuggingFace(_) => PromptTokenizer::File,
            Tokenizer::Server(_) => PromptTokenizer::Server,
            Tokenizer::Estimate => PromptTokenizer::Estimate,
        };
        PromptCounter {
            tokenizer,
            exact: tokenizer != PromptTokenizer::Estimate,
        }
    }

    /// Loads a Hugging Face `tokenizer.json`, or the one inside a directory.
    pub fn from_path(path: &Path) -> Result<Tokenizer, TokenizerError> {
        let file = if path.is_dir() {
            path.join("tokenizer.json")
        } else {
            path.to_path_buf()
        };
        let tokenizer = tokenizers::Tokenizer::from_file(&file)
            .map_err(|source| TokenizerError::Load { path: file, source })?;
        Ok(Tokenizer::HuggingFace(Box::new(tokenizer)))
    }

    /// Finds which `/tokenize` shape the server speaks (base URL with or without `/v1`).
    pub async fn from_server(
        client: reqwest::Client,
        base_url: &str,
        model: &str,
        api_key: Option<&str>,
    ) -> Result<Tokenizer, TokenizerError> {
        let auth = api_key
            .map(|key| {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                    .map_err(TokenizerError::ApiKey)?;
                value.set_sensitive(true);
                Ok::<_, TokenizerError>(value)
            })
            .transpose()?;
        let root = server_root(base_url);
        let mut server = ServerTokenizer {
            client,
            url: format!("{root}/tokenize"),
            model: model.to_string(),
            shape: TokenizeShape::Vllm,
            auth,
            chat: ChatCounting::None,
        };
        let mut failures = Vec::new();
        for shape in [
            TokenizeShape::Vllm,
            TokenizeShape::LlamaCpp,
            TokenizeShape::Tgi,
        ] {
            server.shape = shape;
            // llama.cpp answers vLLM's shape with `{"tokens":[]}`: an empty count is no answer.
            match server.post(shape.body(model, "hello world")).await {
                Ok(0) => failures.push(format!("{shape:?}: counted 0 tokens in \"hello world\"")),
                Ok(_) => {
                    server.chat = server.chat_counting(root).await;
                    return Ok(Tokenizer::Server(server));
                }
                Err(e) => failures.push(format!("{shape:?}: {}", error_chain(&e))),
            }
        }
        Err(TokenizerError::NoShape {
            url: server.url,
            failures: failures.join("; "),
        })
    }

    /// The last resort: about 4 characters per token. Says so, since prompts will be inexact.
    /// The best tokenizer at hand: `path` (`--tokenizer`), the server's `/tokenize`, else an
    /// estimate.
    pub async fn best(path: Option<&Path>, server: &Server) -> Result<Tokenizer, TokenizerError> {
        if let Some(path) = path {
            return Tokenizer::from_path(path);
        }
        let key = server.key.as_ref().map(ApiKey::expose);
        let found = Tokenizer::from_server(
            server.side_client.clone(),
            &server.api_base,
            &server.model,
            key,
        );
        Ok(found.await.unwrap_or_else(|e| {
            tracing::debug!("no server tokenizer: {}", error_chain(&e));
            Tokenizer::estimate()
        }))
    }

    pub fn estimate() -> Tokenizer {
        tracing::warn!("no tokenizer available (no --tokenizer, no server /tokenize); estimating ~{CHARS_PER_TOKEN} characters per token, so input token counts will be approximate");
        Tokenizer::Estimate
    }

    /// False for the estimate.
    pub fn is_exact(&self) -> bool {
        !matches!(self, Tokenizer::Estimate)
    }

    /// True when this tokenizer may miss tokens the server bills for `api`: a local
    /// `tokenizer.json` knows no chat template and may disagree on BOS; a server tokenizer
    /// misses only a chat template it cannot apply. The estimate is inexact anyway.
    pub fn needs_calibration(&self, api: Api) -> bool {
        match self {
            Tokenizer::HuggingFace(_) => true,
            Tokenizer::Server(s) => api == Api::Chat && s.chat == ChatCounting::None,
            Tokenizer::Estimate => false,
        }
    }

    /// Tokens of `text` as a raw completion prompt (special tokens such as BOS included).
    pub async fn count_text(&self, text: &str) -> Result<u32, TokenizerError> {
        match self {
            Tokenizer::HuggingFace(t) => {
                let encoding = t.encode_fast(text, true).map_err(TokenizerError::Encode)?;
                Ok(encoding.len() as u32)
            }
            Tokenizer::Server(s) => s.post(s.shape.body(&s.model, text)).await,
            Tokenizer::Estimate => Ok(text.chars().count().div_ceil(CHARS_PER_TOKEN) as u32),
        }
    }

    /// Tokens of chat `messages` with the template applied; `None` when this tokenizer cannot
    /// apply the template.
    pub async fn count_chat(
        &self,
        messages: &[ChatMessage],
    ) -> Result<Option<u32>, TokenizerError> {
        match self {
            Tokenizer::Server(s) if s.chat != ChatCounting::None => {
                s.count_messages(messages).await.map(Some)
            }
            _ => Ok(None),
        }
    }
}

impl ServerTokenizer {
    /// Finds how this server counts a chat, if it can; an endpoint that answers but counts
    /// nothing does not count.
    async fn chat_counting(&mut self, root: &str) -> ChatCounting {
        let probe = [ChatMessage::user("hi")];
        self.chat = match self.shape {
            TokenizeShape::Vllm => ChatCounting::Messages,
            TokenizeShape::LlamaCpp => {
                ChatCounting::ApplyTemplate(format!("{root}/apply-template"))
            }
            TokenizeShape::Tgi => return ChatCounting::None,
        };
        match self.count_messages(&probe).await {
            Ok(n) if n > 0 => self.chat.clone(),
            Ok(_) => ChatCounting::None,
            Err(e) => {
                tracing::debug!("{} cannot count chats: {}", self.url, error_chain(&e));
                ChatCounting::None
            }
        }
    }

    async fn count_messages(&self, messages: &[ChatMessage]) -> Result<u32, TokenizerError> {
        match &self.chat {
            ChatCounting::None => Err(TokenizerError::NoChatCounting),
            ChatCounting::Messages => {
                self.post(json!({ "model": self.model, "messages": messages }))
                    .await
            }
            ChatCounting::ApplyTemplate(url) => {
                let rendered = self
                    .send(url, json!({ "messages": messages }))
                    .await?
                    .get("prompt")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| TokenizerError::NoPrompt { url: url.clone() })?;
                // The chat endpoint tokenizes the rendered prompt with BOS and with the
                // template's special tokens as single tokens.
                self.post(
                    json!({ "content": rendered, "add_special": true, "parse_special": true }),
                )
                .await
            }
        }
    }

    /// Posts `body` as JSON to `url` and returns the JSON answer of a successful response.
    async fn send(&self, url: &str, body: Value) -> Result<Value, TokenizerError> {
        let mut request = self.client.post(url).json(&body);
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let response = request.send().await?;
        let status = response.status();
        if !status.is_success() {
            return Err(TokenizerError::Status(status));
        }
        Ok(response.json().await?)
    }

    /// Posts to `/tokenize` and reads the count from any known answer shape.
    async fn post(&self, body: Value) -> Result<u32, TokenizerError> {
        let answer = self.send(&self.url, body).await?;
        let count = match &answer {
            Value::Array(tokens) => Some(tokens.len() as u64),
            Value::Object(o) => o.get("count").and_then(Value::as_u64).or_else(|| {
                o.get("tokens")
                    .and_then(Value::as_array)
                    .map(|t| t.len() as u64)
            }),
            _ => None,
        };
        count.map(|n| n as u32).ok_or(TokenizerError::NoCount)
    }
}

/// A prompt and the input token count the server should report for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltPrompt {
    pub body: PromptBody,
    /// Measured tokens (the target when `exact`).
    pub expected_tokens: u32,
    /// True when a real tokenizer measured exactly the target, template included.
    pub exact: bool,
}

/// A filler aligned for one (target, API, prefix token count).
#[derive(Clone)]
struct Aligned {
    filler: Arc<str>,
    tokens: u32,
    exact: bool,
}

/// Builds unique, token-exact prompts; share one per run (it caches the aligned filler).
pub struct PromptBuilder {
    tokenizer: Tokenizer,
    seed: u64,
    /// Keyed by (target tokens, counting, prefix tokens).
    aligned: tokio::sync::Mutex<HashMap<(u32, Counting, u32), Aligned>>,
    /// Tokens of an empty text (a BOS the tokenizer adds), once counted.
    empty_text: tokio::sync::OnceCell<u32>,
    /// Tokens the server bills beyond the tokenizer's count, per API (index [`api_slot`]).
    calibration: [Option<i32>; 2],
}

fn api_slot(api: Api) -> usize {
    usize::from(api == Api::Chat)
}

impl PromptBuilder {
    pub fn new(tokenizer: Tokenizer, seed: u64) -> PromptBuilder {
        PromptBuilder {
            tokenizer,
            seed,
            aligned: Default::default(),
            empty_text: tokio::sync::OnceCell::new(),
            calibration: [None; 2],
        }
    }

    /// Counts `extra_tokens` more for every `api` prompt than the tokenizer does: what the
    /// server billed for a probe minus the tokenizer's count of it. Makes those counts exact.
    pub fn calibrate(&mut self, api: Api, extra_tokens: i32) {
        self.calibration[api_slot(api)] = Some(extra_tokens);
        self.aligned.get_mut().clear();
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// A prompt of `target_tokens` input tokens that starts with `unique_id`.
    pub async fn build(
        &self,
        target_tokens: u32,
        unique_id: &str,
        api: Api,
    ) -> Result<BuiltPrompt, TokenizerError> {
        let (content, aligned) = self
            .aligned_text(target_tokens, unique_id, Counting::Sent(api))
            .await?;
        let body = match api {
            Api::Completions => PromptBody::Text(content),
            Api::Chat => PromptBody::Messages(vec![ChatMessage::user(content)]),
        };
        Ok(BuiltPrompt {
            body,
            expected_tokens: aligned.tokens,
            exact: aligned.exact,
        })
    }

    /// A message's text of `target_tokens` tokens (the text alone, as one message of a chat
    /// counts it besides its template) that starts with `unique_id`; and its count.
    pub async fn build_content(
        &self,
        target_tokens: u32,
        unique_id: &str,
    ) -> Result<(String, u32), TokenizerError> {
        let (content, aligned) = self
            .aligned_text(target_tokens, unique_id, Counting::Content)
            .await?;
        Ok((content, aligned.tokens))
    }

    /// Tokens the server bills for a prompt sent alone through `api` beyond its text (a chat
    /// template, a BOS), as far as this builder can tell.
    pub async fn overhead(&self, api: Api) -> Result<u32, TokenizerError> {
        let sample = request_prefix("overhead");
        let (sent, _) = self.measure(&sample, Counting::Sent(api)).await?;
        let (text, _) = self.measure(&sample, Counting::Content).await?;
        Ok(sent.saturating_sub(text))
    }

    /// `request_prefix(unique_id)` and filler aligned to `target_tokens` under `counting`.
    async fn aligned_text(
        &self,
        target_tokens: u32,
        unique_id: &str,
        counting: Counting,
    ) -> Result<(String, Aligned), TokenizerError> {
        let prefix = request_prefix(unique_id);
        let prefix_tokens = self.tokenizer.count_text(&prefix).await?;
        let key = (target_tokens, counting, prefix_tokens);
        // Held across the alignment so concurrent first builds align once, not once each.
        let mut cache = self.aligned.lock().await;
        let aligned = match cache.get(&key) {
            Some(a) => a.clone(),
            None => {
                let a = self.align(target_tokens, &prefix, counting).await?;
                cache.insert(key, a.clone());
                a
            }
        };
        drop(cache);
        Ok((format!("{prefix}{}", aligned.filler), aligned))
    }

    /// Tokens of `content` under `counting`, and whether that count is exact.
    pub(crate) async fn measure(
        &self,
        content: &str,
        counting: Counting,
    ) -> Result<(u32, bool), TokenizerError> {
        let api = match counting {
            Counting::Sent(api) => api,
            Counting::Content => {
                // A tokenizer that cannot count nothing adds nothing to it.
                let empty = *self
                    .empty_text
                    .get_or_init(|| async { self.tokenizer.count_text("").await.unwrap_or(0) })
                    .await;
                let counted = self.tokenizer.count_text(content).await?;
                return Ok((counted.saturating_sub(empty), self.tokenizer.is_exact()));
            }
        };
        if api == Api::Chat {
            if let Some(n) = self
                .tokenizer
                .count_chat(&[ChatMessage::user(content)])
                .await?
            {
                return Ok((n, true));
            }
        }
        let counted = self.tokenizer.count_text(content).await?;
        let Some(extra) = self.calibration[api_slot(api)] else {
            // Uncalibrated, only a raw completion prompt is fully counted.
            return Ok((
                counted,
                self.tokenizer.is_exact() && api == Api::Completions,
            ));
        };
        let billed = (i64::from(counted) + i64::from(extra)).max(0) as u32;
        Ok((billed, self.tokenizer.is_exact()))
    }

    async fn align(
        &self,
        target: u32,
        prefix: &str,
        counting: Counting,
    ) -> Result<Aligned, TokenizerError> {
        let seed = self.seed ^ u64::from(target).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut pieces = filler_pieces(seed, target as usize + 16);
        let text = |pieces: &[String], k: usize| format!("{prefix}{}", pieces[..k].concat());
        // Grow until the filler reaches the target, then binary-search the longest that fits.
        while self
            .measure(&text(&pieces, pieces.len()), counting)
            .await?
            .0
            < target
        {
            if pieces.len() > 8 * target as usize + 64 {
                return Err(TokenizerError::Unreachable { target });
            }
            pieces = filler_pieces(seed, pieces.len() * 2);
        }
        let (mut lo, mut hi) = (0, pieces.len());
        let (mut tokens, mut exact) = self.measure(&text(&pieces, 0), counting).await?;
        if tokens > target {
            tracing::warn!("the request prefix alone is {tokens} tokens, more than the {target} asked for; sending it alone");
            return Ok(Aligned {
                filler: "".into(),
                tokens,
                exact: false,
            });
        }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let (n, e) = self.measure(&text(&pieces, mid), counting).await?;
            if n <= target {
                (lo, tokens, exact) = (mid, n, e);
            } else {
                hi = mid;
            }
        }
        let filler = pieces[..lo].concat();
        let (filler, tokens, exact) = self
            .top_up(prefix, filler, (tokens, exact), target, counting)
            .await?;
        Ok(Aligned {
            filler: filler.into(),
            tokens,
            exact: exact && tokens == target,
        })
    }

    /// Tops up `prefix` and `text` (counted as `counted`) to `target` tokens with pieces that
    /// each add exactly what is missing; the text, its count and whether that is exact.
    pub(crate) async fn top_up(
        &self,
        prefix: &str,
        mut text: String,
        counted: (u32, bool),
        target: u32,
        counting: Counting,
    ) -> Result<(String, u32, bool), TokenizerError> {
        let (mut tokens, mut exact) = counted;
        'pad: while tokens < target {
            for pad in PADDING {
                let candidate = format!("{text}{pad}");
                let (n, e) = self
                    .measure(&format!("{prefix}{candidate}"), counting)
                    .await?;
                if n > tokens && n <= target {
                    (text, tokens, exact) = (candidate, n, e);
                    continue 'pad;
                }
            }
            break;
        }
        Ok((text, tokens, exact))
    }

    /// Tokens the server bills for `body` sent through `api` (its template, a BOS, as
    /// calibrated), and whether that count is exact. A chat of several messages is exact
    /// only where the tokenizer applies the template itself.
    pub async fn count_body(
        &self,
        body: &PromptBody,
        api: Api,
    ) -> Result<(u32, bool), TokenizerError> {
        match (body, api) {
            (PromptBody::Text(t), api) => self.measure(t, Counting::Sent(api)).await,
            (PromptBody::Messages(m), Api::Completions) => {
                self.measure(&joined(m), Counting::Sent(Api::Completions))
                    .await
            }
            (PromptBody::Messages(m), Api::Chat) => {
                if let Some(n) = self.tokenizer.count_chat(m).await? {
                    return Ok((n, true));
                }
                // The message texts, and what the server adds around one message.
                let mut total = 0;
                for message in m {
                    total += self.measure(&message.content, Counting::Content).await?.0;
                }
                let extra = self.calibration[api_slot(Api::Chat)];
                let exact = m.len() == 1 && extra.is_some() && self.tokenizer.is_exact();
                let billed = (i64::from(total) + i64::from(extra.unwrap_or(0))).max(0) as u32;
                Ok((billed, exact))
            }
        }
    }

    /// Tokens of `text` alone, as one message among others counts it (no template, no BOS):
    /// what a prompt file's length filters count.
    pub async fn count_content(&self, text: &str) -> Result<u32, TokenizerError> {
        Ok(self.measure(text, Counting::Content).await?.0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};

    /// #43 item 9: an estimate is said to be one, not exact.
    #[test]
    fn an_estimate_counts_prompts_inexactly() {
        let counter = Tokenizer::Estimate.counter();
        assert_eq!(
            (counter.tokenizer, counter.exact),
            (PromptTokenizer::Estimate, false)
        );
        assert_eq!(
            PromptTokenizer::describe(&counter),
            "an estimate from the text's length (not exact)"
        );
    }
    use tokenizers::models::{ModelWrapper, TrainerWrapper};
    use tokenizers::pre_tokenizers::byte_level::ByteLevel;
    use tokenizers::processors::template::TemplateProcessing;
    use tokenizers::{
        AddedToken, DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper,
        TokenizerBuilder,
    };

    /// Trains a small byte-level BPE (GPT-2 style, with a `<s>` BOS like Llama's) on the filler
    /// vocabulary and numbers (so digit runs merge by value) and saves it as `tokenizer.json`.
    pub(crate) fn train_tokenizer(dir: &Path) {
        let mut tokenizer = TokenizerBuilder::<
            ModelWrapper,
            NormalizerWrapper,
            PreTokenizerWrapper,
            PostProcessorWrapper,
            DecoderWrapper,
        >::new()
        .with_model(BPE::default().into())
        .with_pre_tokenizer(Some(ByteLevel::default().into()))
        .with_decoder(Some(ByteLevel::default().into()))
        .with_post_processor(Some(
            TemplateProcessing::builder()
                .try_single("<s> $A")
                .unwrap()
                .special_tokens(vec![("<s>", 0)])
                .build()
                .unwrap()
                .into(),
        ))
        .build()
        .unwrap();
        let mut trainer: TrainerWrapper = BpeTrainerBuilder::new()
            .vocab_size(600)
            .min_frequency(2)
            .show_progress(false)
            .special_tokens(vec![AddedToken::from("<s>", true)])
            .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
            .build()
            .into();
        let corpus: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "{} {} {}",
                    filler_pieces(i, 40).concat(),
                    i * 37,
                    i % 13 * 1001
                )
            })
            .collect();
        tokenizer.train(&mut trainer, corpus.iter()).unwrap();
        let tokenizer: tokenizers::Tokenizer = tokenizer.into();
        tokenizer.save(dir.join("tokenizer.json"), false).unwrap();
    }

    fn hf_tokenizer() -> (tempfile::TempDir, Tokenizer) {
        let dir = tempfile::tempdir().unwrap();
        train_tokenizer(dir.path());
        let tokenizer = Tokenizer::from_path(dir.path()).unwrap();
        (dir, tokenizer)
    }

    fn content(p: &BuiltPrompt) -> &str {
        match &p.body {
            PromptBody::Text(t) => t,
            PromptBody::Messages(m) => &m[0].content,
        }
    }

    #[tokio::test]
    async fn completion_prompts_are_exact_and_unique() {
        let (_dir, tokenizer) = hf_tokenizer();
        let builder = PromptBuilder::new(tokenizer, 7);
        for target in [64, 257, 1024] {
            let mut seen = std::collections::HashSet::new();
            for i in [0, 7, 42, 999, 123_456, 77_777_777] {
                let id = format!("req-{i}");
                let p = builder.build(target, &id, Api::Completions).await.unwrap();
                let text = content(&p);
                assert!(text.starts_with(&format!("[{id}]")), "{text}");
                // The trained vocabulary merges bytes: well over two per token on long prose.
                if target >= 1024 {
                    assert!(text.len() > 2 * target as usize, "{} bytes", text.len());
                }
                assert!(p.exact);
                assert_eq!(p.expected_tokens, target);
                // Counted afresh, independently of the cache.
                assert_eq!(builder.tokenizer.count_text(text).await.unwrap(), target);
                assert!(seen.insert(text.to_string()));
            }
        }
    }

    #[tokio::test]
    async fn filler_is_cached_per_target() {
        let (_dir, tokenizer) = hf_tokenizer();
        let builder = PromptBuilder::new(tokenizer, 1);
        let a = builder.build(300, "a1", Api::Completions).await.unwrap();
        let b = builder.build(300, "b2", Api::Completions).await.unwrap();
        assert_eq!(content(&a)[4..], content(&b)[4..]);
        assert_eq!(builder.aligned.lock().await.len(), 1);
        let c = builder.build(301, "c3", Api::Completions).await.unwrap();
        assert_eq!(c.expected_tokens, 301);
        assert_eq!(builder.aligned.lock().await.len(), 2);
    }

    #[tokio::test]
    async fn chat_without_template_counting_is_marked_inexact() {
        let (_dir, tokenizer) = hf_tokenizer();
        let builder = PromptBuilder::new(tokenizer, 3);
        let p = builder.build(200, "r1", Api::Chat).await.unwrap();
        assert!(matches!(&p.body, PromptBody::Messages(m) if m[0].role == "user"));
        assert!(!p.exact);
        assert_eq!(p.expected_tokens, 200);
    }

    #[tokio::test]
    async fn estimate_is_never_exact() {
        let builder = PromptBuilder::new(Tokenizer::Estimate, 3);
        let p = builder.build(100, "r1", Api::Completions).await.unwrap();
        assert!(!p.exact);
        assert_eq!(p.expected_tokens, 100);
        assert_eq!(content(&p).chars().count().div_ceil(4), 100);
    }

    #[tokio::test]
    async fn tiny_target_smaller_than_the_prefix_is_flagged() {
        let (_dir, tokenizer) = hf_tokenizer();
        let builder = PromptBuilder::new(tokenizer, 3);
        let p = builder.build(2, "r1", Api::Completions).await.unwrap();
        assert!(!p.exact);
        assert!(p.expected_tokens > 2);
    }

    #[test]
    fn filler_reads_as_prose_and_is_deterministic() {
        let text = filler_pieces(5, 200).concat();
        assert_eq!(text, filler_pieces(5, 200).concat());
        assert_ne!(text, filler_pieces(6, 200).concat());
        assert!(text.chars().next().unwrap().is_ascii_uppercase());
        assert!(text.contains(". "));
        assert!(!text.contains("  "));
    }

    fn chat_template(messages: &Value) -> String {
        format!(
            "<|user|>\n{}\n<|assistant|>\n",
            messages[0]["content"].as_str().unwrap()
        )
    }

    /// A loopback server with vLLM's `/tokenize` (or llama.cpp's, with `/apply-template` when
    /// `apply_template`), counting with the real test tokenizer and a fixed chat template.
    async fn tokenize_server(tokenizer_dir: &Path, llamacpp: bool, apply_template: bool) -> String {
        use axum::routing::post;
        use axum::Json;
        let tok = Arc::new(
            tokenizers::Tokenizer::from_file(tokenizer_dir.join("tokenizer.json")).unwrap(),
        );
        let count = move |text: &str| tok.encode(text, true).unwrap().len();
        let mut app = axum::Router::new();
        if apply_template {
            app = app.route(
                "/apply-template",
                post(|Json(body): Json<Value>| async move {
                    Json(json!({ "prompt": chat_template(&body["messages"]) }))
                }),
            );
        }
        let app = app.route(
            "/tokenize",
            post(move |Json(body): Json<Value>| async move {
                if llamacpp {
                    // Like llama.cpp: any body is fine, and no `content` counts as nothing.
                    let n = body["content"].as_str().map_or(0, &count);
                    return Ok(Json(json!({ "tokens": vec![1; n] })));
                }
                if body.get("model").is_none() {
                    return Err(axum::http::StatusCode::UNPROCESSABLE_ENTITY);
                }
                let text = match (body["prompt"].as_str(), body["messages"].as_array()) {
                    (Some(p), _) => p.to_string(),
                    (None, Some(_)) => chat_template(&body["messages"]),
                    _ => return Err(axum::http::StatusCode::BAD_REQUEST),
                };
                Ok(Json(
                    json!({ "count": count(&text), "max_model_len": 32768 }),
                ))
            }),
        );
        format!("{}/v1", crate::http::test_server::serve(app).await)
    }

    #[tokio::test]
    async fn server_tokenizer_vllm_shape_makes_exact_chat_prompts() {
        let dir = tempfile::tempdir().unwrap();
        train_tokenizer(dir.path());
        let url = tokenize_server(dir.path(), false, false).await;
        let tokenizer = Tokenizer::from_server(reqwest::Client::new(), &url, "m", Some("k"))
            .await
            .unwrap();
        assert!(
            matches!(&tokenizer, Tokenizer::Server(s) if s.shape == TokenizeShape::Vllm && s.chat == ChatCounting::Messages)
        );
        let builder = PromptBuilder::new(tokenizer, 9);
        let p = builder.build(500, "chat-1", Api::Chat).await.unwrap();
        assert!(p.exact);
        assert_eq!(p.expected_tokens, 500);
        let PromptBody::Messages(m) = &p.body else {
            panic!("chat body")
        };
        // Counted apart from the builder's own path: the test tokenizer on the templated chat.
        let local = Tokenizer::from_path(dir.path()).unwrap();
        let rendered = chat_template(&json!(m));
        assert_eq!(local.count_text(&rendered).await.unwrap(), 500);
    }

    /// llama.cpp answers vLLM's `/tokenize` shape with no tokens; that must not pass for it.
    #[tokio::test]
    async fn server_tokenizer_llamacpp_shape() {
        let dir = tempfile::tempdir().unwrap();
        train_tokenizer(dir.path());
        let url = tokenize_server(dir.path(), true, false).await;
        let tokenizer = Tokenizer::from_server(reqwest::Client::new(), &url, "m", None)
            .await
            .unwrap();
        assert!(
            matches!(&tokenizer, Tokenizer::Server(s) if s.shape == TokenizeShape::LlamaCpp && s.chat == ChatCounting::None)
        );
        assert!(tokenizer.needs_calibration(Api::Chat));
        assert!(!tokenizer.needs_calibration(Api::Completions));
        let builder = PromptBuilder::new(tokenizer, 9);
        let p = builder.build(150, "x", Api::Completions).await.unwrap();
        assert!(p.exact);
        assert_eq!(p.expected_tokens, 150);
    }

    #[tokio::test]
    async fn server_tokenizer_llamacpp_counts_chats_through_apply_template() {
        let dir = tempfile::tempdir().unwrap();
        train_tokenizer(dir.path());
        let url = tokenize_server(dir.path(), true, true).await;
        let tokenizer = Tokenizer::from_server(reqwest::Client::new(), &url, "m", None)
            .await
            .unwrap();
        assert!(
            matches!(&tokenizer, Tokenizer::Server(s) if matches!(&s.chat, ChatCounting::ApplyTemplate(u) if u.ends_with("/apply-template")))
        );
        assert!(!tokenizer.needs_calibration(Api::Chat));
        let builder = PromptBuilder::new(tokenizer, 9);
        let p = builder.build(300, "chat-2", Api::Chat).await.unwrap();
        assert!(p.exact);
        let PromptBody::Messages(m) = &p.body else {
            panic!("chat body")
        };
        let local = Tokenizer::from_path(dir.path()).unwrap();
        let rendered = chat_template(&json!(m));
        assert_eq!(local.count_text(&rendered).await.unwrap(), 300);
    }

    #[tokio::test]
    async fn calibration_makes_chat_counts_exact() {
        let (_dir, tokenizer) = hf_tokenizer();
        let mut builder = PromptBuilder::new(tokenizer, 3);
        let before = builder.build(200, "r1", Api::Chat).await.unwrap();
        assert!(!before.exact);
        // As if the server had billed 7 template tokens more than the message text.
        builder.calibrate(Api::Chat, 7);
        let after = builder.build(200, "r1", Api::Chat).await.unwrap();
        assert!(after.exact);
        assert_eq!(after.expected_tokens, 200);
        let text = content(&after);
        assert_eq!(builder.tokenizer.count_text(text).await.unwrap(), 193);
        // Completions are calibrated apart.
        let raw = builder.build(200, "r1", Api::Completions).await.unwrap();
        assert_eq!(
            builder.tokenizer.count_text(content(&raw)).await.unwrap(),
            200
        );
    }

    /// Against the real simulator: its `/tokenize` counts chat messages, and the chat prompt we
    /// build is billed at exactly the target by its completion endpoint.
    #[tokio::test]
    async fn simulator_bills_exactly_the_built_chat_prompt() {
        let sim = infermeter_sim::start(infermeter_sim::SimConfig::loopback())
            .await
            .unwrap();
        let (base, model) = (sim.base_url(), sim.model_name().to_string());
        let client = reqwest::Client::new();
        let tokenizer = Tokenizer::from_server(client.clone(), &base, &model, None)
            .await
            .unwrap();
        let builder = PromptBuilder::new(tokenizer, 11);
        for (id, target) in [("sim-1", 300), ("sim-22", 1000)] {
            let p = builder.build(target, id, Api::Chat).await.unwrap();
            assert!(p.exact);
            let PromptBody::Messages(messages) = &p.body else {
                panic!("chat body")
            };
            let answer: Value = client
                .post(format!("{base}/chat/completions"))
                .json(&json!({"model": model, "messages": messages, "max_tokens": 1}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(answer["usage"]["prompt_tokens"], target, "{answer}");
        }
    }

    #[tokio::test]
    async fn server_without_tokenize_is_a_clear_error() {
        let url = crate::http::test_server::serve(axum::Router::new()).await;
        let err = Tokenizer::from_server(reqwest::Client::new(), &url, "m", None)
            .await
            .err()
            .expect("error")
            .to_string();
        assert!(err.contains("/tokenize does not count tokens"), "{err}");
    }
}
