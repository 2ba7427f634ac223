//! One request body per scenario, built once; each request copies it and stamps a unique id at
//! the very start of the prompt, so no prefix cache can help and no request waits on building
//! a long prompt while the clock runs.

use rand::Rng;

use crate::driver::Driver;
use crate::scheduler::Prepared;
use crate::suite::Suite;

/// Stands where the per-request id goes; same width as the id.
const ID_PLACEHOLDER: &str = "QQQQQQQQQQQQQQQQ";

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
    /// Builds the templates for `suite`'s scenarios (once, before the first level).
    pub fn new(driver: &Driver, suite: &Suite) -> PromptPlan {
        let templates = suite
            .scenarios
            .iter()
            .map(|s| {
                let (text, input_tokens) = prompt_text(s.input_tokens);
                let body = driver.body(&format!("{ID_PLACEHOLDER}{text}"), s.output_tokens);
                let id_at = find(&body, ID_PLACEHOLDER.as_bytes())
                    .expect("the placeholder survives JSON encoding");
                Template {
                    body,
                    id_at,
                    input_tokens,
                }
            })
            .collect();
        PromptPlan {
            templates,
            run_nonce: rand::rng().random(),
        }
    }

    /// The body of request `index` of `scenario` (position `scenario_index` in the suite).
    pub fn prepare(&self, scenario_index: usize, index: u64) -> Prepared {
        let t = &self.templates[scenario_index];
        let mut body = t.body.clone();
        let id = format!(
            "{:08x}{:08x}",
            self.run_nonce,
            (index as u32) ^ ((scenario_index as u32) << 24) ^ ((index >> 32) as u32)
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

/// Interim prompt text of about `target` tokens (one short word each), until exact
/// tokenizer-based prompts are wired in.
fn prompt_text(target: u32) -> (String, Option<u32>) {
    // The id, the chat template and the instruction take a few tokens of the budget.
    let words = target.saturating_sub(16) as usize;
    let mut text = String::with_capacity(words * 6 + 64);
    text.push_str(" Continue the list:");
    for i in 0..words {
        text.push(' ');
        text.push_str(["alpha", "beta", "gamma", "delta"][i % 4]);
    }
    (text, None)
}
