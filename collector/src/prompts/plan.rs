//! One request body per scenario, built once; each request copies it and stamps a unique id at
//! the very start of the prompt, so no prefix cache can help and no request waits on building
//! a long prompt while the clock runs.
//!
//! The id must not change the prompt's token count. Plain digits do not guarantee that: a
//! byte-level BPE (GPT-2 style) merges digit runs by their values. So the plan picks, with the
//! run's tokenizer, the first id spelling whose count it verified constant over every all-equal
//! id and a sample of mixed ones. When the tokenizer may miss tokens the server bills (a chat
//! template, a BOS), one probe request before the run measures the difference.

use crate::http::api::Api;
use crate::http::body::PromptBody;
use crate::http::driver::Driver;
use crate::prompts::filler::WORDS;
use crate::prompts::pool::{needs_pool, split_at_id, Pool, PoolError, Selection};
use crate::prompts::text::{file_prefix, request_prefix, PromptBuilder, Tokenizer, TokenizerError};
use crate::prompts::Prepared;
use crate::suite::Suite;

/// Why the run's request bodies cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot count the tokens of a request id")]
    IdTokens(#[source] TokenizerError),
    #[error("cannot build the prompt of scenario \"{scenario}\"")]
    Scenario {
        scenario: String,
        source: TokenizerError,
    },
    #[error("cannot build the calibration prompt")]
    CalibrationPrompt(#[source] TokenizerError),
    #[error("absurd calibration difference")]
    CalibrationDifference(#[source] std::num::TryFromIntError),
    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// Requests of one level run told apart in a prompt's id (the rest of its 10 digits number the
/// level runs).
pub const LEVEL_REQUESTS: u64 = 10_000_000;

/// Digits in a request id: run nonce (4), scenario (2), request index (10).
const ID_DIGITS: usize = 16;
/// Mixed ids checked besides the ten all-equal ones.
const ID_SAMPLES: u64 = 24;

/// How an id's decimal digits are written into the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IdSpelling {
    symbols: [&'static str; 10],
    separator: &'static str,
}

/// Tried in order, then words picked for the tokenizer ([`IdSpelling::from_words`]); the first
/// whose token count does not depend on the id is used.
const ID_SPELLINGS: [IdSpelling; 2] = [
    // Compact, and constant for per-digit (Llama 2) or digit-group (Llama 3) vocabularies.
    IdSpelling {
        symbols: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
        separator: "",
    },
    // One pre-token per digit for GPT-2-style pre-tokenizers.
    IdSpelling {
        symbols: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
        separator: " ",
    },
];

/// Filler words considered for [`IdSpelling::from_words`].
const ID_WORD_POOL: usize = 48;

impl IdSpelling {
    fn render(&self, digits: &str) -> String {
        let symbols: Vec<&str> = digits
            .bytes()
            .map(|d| self.symbols[usize::from(d - b'0')])
            .collect();
        symbols.join(self.separator)
    }

    /// True when every id spelt this way gives each prefix (a generated prompt's, a prompt
    /// file's) the same token count.
    async fn is_constant(&self, tokenizer: &Tokenizer) -> Result<bool, TokenizerError> {
        let count = |digits: String| {
            let id = self.render(&digits);
            async move {
                let generated = tokenizer.count_text(&request_prefix(&id)).await?;
                let file = tokenizer.count_text(&file_prefix(&id)).await?;
                Ok::<_, TokenizerError>((generated, file))
            }
        };
        let base = count("0".repeat(ID_DIGITS)).await?;
        let all_equal = (1..=9).map(|d| d.to_string().repeat(ID_DIGITS));
        let mixed = (0..ID_SAMPLES).map(|i| {
            let n = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7);
            format!(
                "{:0width$}",
                n % 10u64.pow(ID_DIGITS as u32),
                width = ID_DIGITS
            )
        });
        for digits in all_equal.chain(mixed) {
            if count(digits).await? != base {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Ten words that each give a run of themselves the same (smallest) token count: one
    /// pre-token per word then makes every id of them count the same.
    async fn from_words(tokenizer: &Tokenizer) -> Result<Option<IdSpelling>, TokenizerError> {
        let mut by_count = std::collections::BTreeMap::<u32, Vec<&'static str>>::new();
        for &word in &WORDS[..ID_WORD_POOL] {
            let run = vec![word; ID_DIGITS].join(" ");
            let n = tokenizer.count_text(&request_prefix(&run)).await?;
            by_count.entry(n).or_default().push(word);
        }
        Ok(by_count.into_values().find_map(|words| {
            let symbols = words.get(..10)?.try_into().ok()?;
            Some(IdSpelling {
                symbols,
                separator: " ",
            })
        }))
    }

    async fn choose(tokenizer: &Tokenizer) -> Result<IdSpelling, TokenizerError> {
        let words = IdSpelling::from_words(tokenizer).await?;
        for spelling in ID_SPELLINGS.into_iter().chain(words) {
            if spelling.is_constant(tokenizer).await? {
                tracing::debug!(?spelling, "request ids spelt with a constant token count");
                return Ok(spelling);
            }
        }
        tracing::warn!("no request id spelling tokenizes to a constant length; input token counts may be off by a few tokens");
        Ok(ID_SPELLINGS[0])
    }
}

/// Prepared bodies for every scenario of a suite, and what builds the texts of sessions and
/// traces with the same tokenizer and ids.
pub struct PromptPlan {
    /// By scenario: its one body (none where it has a pool).
    templates: Vec<Option<Template>>,
    /// By scenario: its prompt file's prompts or its drawn lengths' (none: one template).
    pools: Vec<Option<Pool>>,
    ids: RequestIds,
    builder: PromptBuilder,
    api: Api,
}

/// Spells the ids stamped into prompts: the run's nonce, the scenario and a number, with a
/// constant token count.
#[derive(Debug, Clone, Copy)]
pub struct RequestIds {
    spelling: IdSpelling,
    /// Distinguishes runs, so a resumed or repeated run does not hit the previous run's cache.
    run_nonce: u32,
}

impl RequestIds {
    /// The id of `rest` (up to 10 digits) in scenario `scenario` of this run: unique in the
    /// run for a unique `rest`.
    pub fn id(&self, scenario: usize, rest: u64) -> String {
        let digits = format!(
            "{:04}{:02}{:010}",
            self.run_nonce,
            scenario % 100,
            rest % 10_000_000_000
        );
        self.spelling.render(&digits)
    }
}

/// A message's text cut where its id goes: every id spelt by the plan has the same token
/// count, so each stamped text has `tokens` tokens.
#[derive(Debug, Clone)]
pub struct ContentTemplate {
    head: String,
    tail: String,
    pub tokens: u32,
}

impl ContentTemplate {
    /// The text with `id` in its place.
    pub fn stamp(&self, id: &str) -> String {
        format!("{}{id}{}", self.head, self.tail)
    }
}

/// A request body cut where the id goes.
#[derive(Debug)]
struct Template {
    head: Vec<u8>,
    tail: Vec<u8>,
    input_tokens: Option<u32>,
}

impl PromptPlan {
    /// Aligns one prompt per scenario with the run's tokenizer and renders its request body
    /// (a scenario with a prompt file or drawn lengths: its prompts, each checked to fit the
    /// model's `context` where known, before the calibration probe, the first request sent);
    /// every id the plan spells carries `run_nonce` (below 10,000).
    pub async fn new(
        driver: &Driver,
        suite: &Suite,
        tokenizer: Tokenizer,
        api: Api,
        run_nonce: u32,
        context: Option<u64>,
    ) -> Result<PromptPlan, PromptError> {
        let spelling = IdSpelling::choose(&tokenizer)
            .await
            .map_err(PromptError::IdTokens)?;
        let placeholder = spelling.render(&"0".repeat(ID_DIGITS));
        let mut builder = PromptBuilder::new(tokenizer, 0);
        let selections = select(&builder, suite, context).await?;
        if builder.tokenizer().needs_calibration(api) {
            // The shortest generated prompt; a suite of prompt files probes with 64 tokens.
            let lengths = suite.scenarios.iter().map(|s| s.input_tokens);
            let shortest = lengths.filter(|&n| n > 0).min().unwrap_or(64);
            let probe_id = spelling.render(&"9".repeat(ID_DIGITS));
            calibrate(&mut builder, driver, api, shortest, &probe_id).await?;
        }
        let mut templates = Vec::with_capacity(suite.scenarios.len());
        let mut pools = Vec::with_capacity(suite.scenarios.len());
        for (s, selection) in suite.scenarios.iter().zip(selections) {
            if let Some(selection) = selection {
                pools.push(Some(
                    selection.build(&builder, driver, api, &placeholder).await?,
                ));
                templates.push(None);
                continue;
            }
            let built = builder
                .build(s.input_tokens, &placeholder, api)
                .await
                .map_err(|source| PromptError::Scenario {
                    scenario: s.id.clone(),
                    source,
                })?;
            let body = driver.body(&content(&built.body), s.output_tokens);
            let (head, tail) = split_at_id(body, &placeholder);
            pools.push(None);
            templates.push(Some(Template {
                head,
                tail,
                input_tokens: Some(built.expected_tokens),
            }));
        }
        Ok(PromptPlan {
            templates,
            pools,
            ids: RequestIds {
                spelling,
                run_nonce: run_nonce % 10_000,
            },
            builder,
            api,
        })
    }

    /// A message text of `tokens` tokens (the text alone, as a chat counts one message
    /// besides its template) with an id slot at its start; see [`PromptPlan::id`].
    pub async fn content_template(&self, tokens: u32) -> Result<ContentTemplate, TokenizerError> {
        let placeholder = self.ids.spelling.render(&"0".repeat(ID_DIGITS));
        let (content, tokens) = self.builder.build_content(tokens, &placeholder).await?;
        let at = content
            .find(&placeholder)
            .expect("the content starts with its id");
        Ok(ContentTemplate {
            head: content[..at].to_string(),
            tail: content[at + placeholder.len()..].to_string(),
            tokens,
        })
    }

    /// How this run's ids are spelt.
    pub fn ids(&self) -> RequestIds {
        self.ids
    }

    /// The tokenizer the plan counts with.
    pub fn tokenizer(&self) -> &Tokenizer {
        self.builder.tokenizer()
    }

    /// Tokens the server adds to a prompt's text (template, BOS) for the run's API.
    pub async fn overhead(&self) -> Result<u32, TokenizerError> {
        self.builder.overhead(self.api).await
    }

    /// The body of request `number` of level run `serial` (unique in the run) of the suite's
    /// scenario number `scenario`: its id carries both, and a pool's prompt is the pool's
    /// `number`th, so every level sends the same prompts in the same order.
    pub fn prepare(&self, scenario: usize, serial: u64, number: u64) -> Prepared {
        let id = self.ids.id(
            scenario,
            serial % 1_000 * LEVEL_REQUESTS + number % LEVEL_REQUESTS,
        );
        let Some(t) = &self.templates[scenario] else {
            let pool = self.pools[scenario]
                .as_ref()
                .expect("a scenario without a body has a pool");
            return pool.prepare(number, &id);
        };
        let mut body = Vec::with_capacity(t.head.len() + id.len() + t.tail.len());
        body.extend_from_slice(&t.head);
        body.extend_from_slice(id.as_bytes());
        body.extend_from_slice(&t.tail);
        Prepared::single(body, t.input_tokens)
    }

    /// The prompts of scenario `scenario`, where it draws them from a file or cuts them to
    /// drawn lengths.
    pub fn pool(&self, scenario: usize) -> Option<&Pool> {
        self.pools.get(scenario)?.as_ref()
    }
}

/// Every scenario's prompts chosen and checked (none for a scenario of one generated body),
/// before anything is sent.
async fn select(
    builder: &PromptBuilder,
    suite: &Suite,
    context: Option<u64>,
) -> Result<Vec<Option<Selection>>, PromptError> {
    let mut selections = Vec::with_capacity(suite.scenarios.len());
    for (i, s) in suite.scenarios.iter().enumerate() {
        let source = suite.source(i);
        let single = s.is_single();
        selections.push(match single && needs_pool(s, source) {
            true => Some(Selection::choose(builder, s, source, context).await?),
            false => None,
        });
    }
    Ok(selections)
}

/// Sends one prompt of `target` tokens (one output token, outside any measurement) and teaches
/// `builder` how many tokens the server bills beyond the tokenizer's count. A server that does
/// not report usage leaves the counts as they were, with a warning.
async fn calibrate(
    builder: &mut PromptBuilder,
    driver: &Driver,
    api: Api,
    target: u32,
    probe_id: &str,
) -> Result<(), PromptError> {
    let probe = builder
        .build(target, probe_id, api)
        .await
        .map_err(PromptError::CalibrationPrompt)?;
    let exchange = driver.send(driver.body(&content(&probe.body), 1)).await;
    let Some(billed) = exchange.prompt_tokens else {
        tracing::warn!(
            outcome = ?exchange.outcome,
            "the calibration request got no usage.prompt_tokens; {} input token counts may miss a few tokens the server adds",
            api.label()
        );
        return Ok(());
    };
    let extra = i64::from(billed) - i64::from(probe.expected_tokens);
    let extra = i32::try_from(extra).map_err(PromptError::CalibrationDifference)?;
    tracing::info!(
        billed,
        counted = probe.expected_tokens,
        "calibrated {} prompts: the server bills {extra} tokens more than the tokenizer counts (chat template, special tokens)",
        api.label()
    );
    builder.calibrate(api, extra);
    Ok(())
}

/// The text the tokenizer counted: the completion prompt, or the chat messages' contents.
fn content(body: &PromptBody) -> String {
    match body {
        PromptBody::Text(t) => t.clone(),
        PromptBody::Messages(m) => m.iter().map(|m| m.content.as_str()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::Value;

    use super::*;
    use crate::http::adapters::EngineKind;
    use crate::http::driver::DriverConfig;
    use crate::http::transport::http_client;
    use crate::prompts::text::tests::train_tokenizer;

    fn digits(rng: &mut u64) -> String {
        *rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        format!("{:016}", (*rng >> 8) % 10u64.pow(16))
    }

    /// A byte-level BPE that merged numbers: plain digit ids change the count, so another
    /// spelling is chosen, and it holds on ids the check never saw.
    #[tokio::test]
    async fn id_spelling_is_constant_where_digits_are_not() {
        let dir = tempfile::tempdir().unwrap();
        train_tokenizer(dir.path());
        let tokenizer = Tokenizer::from_path(dir.path()).unwrap();
        assert!(!ID_SPELLINGS[0].is_constant(&tokenizer).await.unwrap());
        let chosen = IdSpelling::choose(&tokenizer).await.unwrap();
        assert_ne!(chosen, ID_SPELLINGS[0]);
        let prefix = |d: &str| request_prefix(&chosen.render(d));
        let base = tokenizer.count_text(&prefix(&"0".repeat(ID_DIGITS))).await;
        let mut rng = 99;
        for _ in 0..300 {
            let n = tokenizer.count_text(&prefix(&digits(&mut rng))).await;
            assert_eq!(n.unwrap(), *base.as_ref().unwrap());
        }
    }

    /// Against the real simulator: every prepared body, ids stamped, is billed at the target.
    #[tokio::test]
    async fn simulator_bills_every_prepared_body_at_the_target() {
        let sim = infermeter_sim::start(infermeter_sim::SimConfig::loopback())
            .await
            .unwrap();
        let (base_url, model) = (sim.base_url(), sim.model_name().to_string());
        let client = http_client(Duration::from_secs(5), 4).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let suite_path = dir.path().join("suite.toml");
        std::fs::write(
            &suite_path,
            "name = 'plan'\n\
             [[scenario]]\nid = 'a'\nname = 'A'\ninput_tokens = 64\noutput_tokens = 2\n\
             [[scenario]]\nid = 'b'\nname = 'B'\ninput_tokens = 700\noutput_tokens = 2\n\
             [burst]\nlevels = [1]\n",
        )
        .unwrap();
        let suite = Suite::load(suite_path.to_str().unwrap()).unwrap();
        for api in [Api::Chat, Api::Completions] {
            let driver = Driver::new(DriverConfig {
                base_url: base_url.clone(),
                api,
                model: model.clone(),
                engine: EngineKind::Sim,
                prompt_caching: false,
                api_key: None,
                connect_timeout: Duration::from_secs(5),
                first_token_timeout: Duration::from_secs(30),
                total_timeout: Duration::from_secs(60),
                max_in_flight: 4,
                connection_reuse: crate::http::api::ConnectionReuse::Pooled,
                extra_body: Default::default(),
            })
            .unwrap();
            let tokenizer = Tokenizer::from_server(client.clone(), &base_url, &model, None)
                .await
                .unwrap();
            let plan = PromptPlan::new(&driver, &suite, tokenizer, api, 42, None)
                .await
                .unwrap();
            for (scenario, target) in [(0, 64), (1, 700)] {
                let mut bodies = std::collections::HashSet::new();
                for index in [0, 1, 9, 12_345, 9_876_543_210] {
                    let prepared = plan.prepare(scenario, 0, index);
                    assert_eq!(prepared.input_tokens, Some(target));
                    let body: Value = serde_json::from_slice(&prepared.body).unwrap();
                    assert!(bodies.insert(body.to_string()), "unique");
                    let billed = driver.send(prepared.body).await.prompt_tokens;
                    assert_eq!(billed, Some(target), "{api:?} {body}");
                }
            }
        }
    }
}
