//! One request body per scenario, built once; each request copies it and stamps a unique id at
//! the very start of the prompt, so no prefix cache can help and no request waits on building
//! a long prompt while the clock runs.

use anyhow::Context;
use rand::Rng;

use crate::cli::Api;
use crate::driver::Driver;
use crate::prompt::{PromptBody, PromptBuilder, Tokenizer};
use crate::scheduler::Prepared;
use crate::suite::Suite;

/// Stands where the per-request id goes. Ids are 16 decimal digits: digit runs of one width
/// tokenize to the same count, so every request keeps the aligned length.
const ID_PLACEHOLDER: &str = "0000000000000000";

/// Prepared bodies for every scenario of a suite.
#[derive(Debug)]
pub struct PromptPlan {
    templates: Vec<Template>,
    /// Distinguishes runs, so a resumed or repeated run does not hit the previous run's cache.
    run_nonce: u32,
}

#[derive(Debug)]
struct Template {
    body: Vec<u8>,
    id_at: usize,
    input_tokens: Option<u32>,
}

impl PromptPlan {
    /// Aligns one prompt per scenario with the best tokenizer available (`--tokenizer`, the
    /// server's `/tokenize`, else an estimate) and renders its request body.
    pub async fn new(
        driver: &Driver,
        suite: &Suite,
        tokenizer: Tokenizer,
        api: Api,
    ) -> anyhow::Result<PromptPlan> {
        let builder = PromptBuilder::new(tokenizer, 0);
        let mut templates = Vec::with_capacity(suite.scenarios.len());
        for s in &suite.scenarios {
            let built = builder
                .build(s.input_tokens, ID_PLACEHOLDER, api)
                .await
                .with_context(|| format!("cannot build the prompt of scenario \"{}\"", s.id))?;
            let text = match &built.body {
                PromptBody::Text(t) => t.clone(),
                PromptBody::Messages(m) => m.iter().map(|m| m.content.as_str()).collect(),
            };
            let body = driver.body(&text, s.output_tokens);
            let marker = format!("[{ID_PLACEHOLDER}]");
            let id_at = find(&body, marker.as_bytes())
                .expect("the id placeholder survives JSON encoding")
                + 1;
            templates.push(Template {
                body,
                id_at,
                input_tokens: Some(built.expected_tokens),
            });
        }
        Ok(PromptPlan {
            templates,
            run_nonce: rand::rng().random_range(0..10_000),
        })
    }

    /// The body of request `index` of the suite's scenario number `scenario`.
    pub fn prepare(&self, scenario: usize, index: u64) -> Prepared {
        let t = &self.templates[scenario];
        let mut body = t.body.clone();
        let id = format!(
            "{:04}{:02}{:010}",
            self.run_nonce,
            scenario % 100,
            index % 10_000_000_000
        );
        body[t.id_at..t.id_at + ID_PLACEHOLDER.len()].copy_from_slice(id.as_bytes());
        Prepared {
            body,
            input_tokens: t.input_tokens,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
