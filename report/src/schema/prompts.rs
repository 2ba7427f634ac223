//! What a scenario's prompts are made of when they are not generated filler of one fixed length
//! (since 1.3.0): a prompt file (ShareGPT conversations, JSONL prompts or chats, or plain text
//! cut to length), and the distributions each request's input and output lengths are drawn
//! from; and what one request was asked. Plain data, like the rest of the schema: the draws
//! themselves are [`crate::lengths`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a scenario's requests get their lengths: a distribution each for input and output, and
/// whether the output is held to its drawn length. `Scenario::input_tokens` and
/// `output_tokens` are then the means of what the run asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LengthPlan {
    /// Input tokens per request.
    pub input: LengthDistribution,
    /// Output tokens per request: exactly these when `output_stop` is `enforced`, at most these
    /// (`max_tokens`) when `natural`.
    pub output: LengthDistribution,
    pub output_stop: OutputStop,
    /// Seed of the draws: the same seed draws the same lengths in the same order.
    #[serde(default)]
    pub seed: u64,
}

/// A distribution of token counts. Draws are whole tokens, at least 1, and clipped to `min` and
/// `max` where a distribution has them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "distribution", rename_all = "snake_case", deny_unknown_fields)]
pub enum LengthDistribution {
    /// Always `tokens`.
    Fixed { tokens: u32 },
    /// Every count from `min` to `max` (both included) equally likely.
    Uniform { min: u32, max: u32 },
    /// Normal with `mean` and `stddev`, clipped to `min` (default 1) and `max` (default: none).
    Normal {
        mean: f64,
        stddev: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
    },
    /// Lognormal with this `mean` and `stddev` of the counts themselves (not of their
    /// logarithms): a long tail of long requests. Clipped as `normal` is.
    Lognormal {
        mean: f64,
        stddev: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
    },
    /// As the prompt file says: each prompt's own length (input), each recorded answer's or
    /// line's `output_tokens` (output).
    Dataset,
}

/// Whether a request's output is held to the length asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputStop {
    /// Exactly the length asked: `max_tokens`, with `ignore_eos` (and `min_tokens`) where the
    /// engine takes them.
    #[default]
    Enforced,
    /// The model stops when it emits its end of sequence; the length asked is `max_tokens`, a
    /// cap. Records hold the lengths the model chose.
    Natural,
}

impl OutputStop {
    pub fn label(self) -> &'static str {
        match self {
            OutputStop::Enforced => "enforced",
            OutputStop::Natural => "natural",
        }
    }
}

/// Where a scenario's prompts came from (since 1.3.0), when not generated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PromptSource {
    pub kind: PromptKind,
    /// The file's name, without its folder.
    pub file: String,
    /// SHA-256 of the file's bytes, hex: which version of a dataset was sent.
    pub sha256: String,
    /// Prompts the file holds: ShareGPT conversations with a human turn, JSONL lines; for a
    /// text file, the prompts cut from it.
    pub available: u64,
    /// Prompts the run sends: those drawn that passed the filters. Requests take them in turn
    /// (`order`), starting again from the first when a level sends more.
    pub used: u64,
    /// Prompts looked at and set aside by the filters.
    #[serde(default)]
    pub filtered_out: u64,
    #[serde(default, skip_serializing_if = "LengthFilters::is_empty")]
    pub filters: LengthFilters,
    pub order: SampleOrder,
    /// Whether a level may send one prompt more than once before every prompt was sent (a
    /// seeded draw per request); without, request `n` of a level sends the `n`th prompt, so
    /// shards of a level send different prompts.
    #[serde(default)]
    pub replacement: bool,
    /// Seed of the shuffle and of draws with replacement.
    #[serde(default)]
    pub seed: u64,
    /// Users and sessions modes: each session is one of the file's conversations, turn for
    /// turn, with its recorded answers' lengths as output targets.
    #[serde(default, skip_serializing_if = "is_false")]
    pub conversations: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What kind of prompt file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// A JSON array of `{"conversations": [{"from": "human", "value": …}, {"from": "gpt", …}]}`:
    /// the first human turn is the prompt, the answer after it the output's length.
    Sharegpt,
    /// One JSON object per line: `prompt` (a completion's text) or `messages` (a chat), with an
    /// optional `output_tokens`.
    Jsonl,
    /// Plain text, cut into prompts of the lengths asked.
    Text,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::Sharegpt => "ShareGPT",
            PromptKind::Jsonl => "JSONL",
            PromptKind::Text => "text",
        }
    }
}

/// Token lengths a prompt must have to be sent (as vLLM's ShareGPT sampling filters): input
/// counted as the prompt's text without a chat template, output as the recorded answer (or
/// `output_tokens`). Bounds are inclusive; absent, unbounded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LengthFilters {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_input: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_output: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u32>,
}

impl LengthFilters {
    pub fn is_empty(&self) -> bool {
        *self == LengthFilters::default()
    }

    /// Whether a prompt of `input` tokens with an answer of `output` tokens (where known) passes.
    pub fn pass(&self, input: u32, output: Option<u32>) -> bool {
        let within = |v: u32, lo: Option<u32>, hi: Option<u32>| {
            lo.is_none_or(|lo| v >= lo) && hi.is_none_or(|hi| v <= hi)
        };
        within(input, self.min_input, self.max_input)
            && output.is_none_or(|o| within(o, self.min_output, self.max_output))
    }

    /// "input 4–1024, output ≥ 4" ("none" without bounds).
    pub fn text(&self) -> String {
        let bound = |name: &str, lo: Option<u32>, hi: Option<u32>| match (lo, hi) {
            (Some(lo), Some(hi)) => Some(format!("{name} {lo}–{hi}")),
            (Some(lo), None) => Some(format!("{name} ≥ {lo}")),
            (None, Some(hi)) => Some(format!("{name} ≤ {hi}")),
            (None, None) => None,
        };
        let parts: Vec<String> = [
            bound("input", self.min_input, self.max_input),
            bound("output", self.min_output, self.max_output),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The order requests take a file's prompts in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SampleOrder {
    /// The file's order.
    #[default]
    InOrder,
    /// A seeded shuffle: the same seed, the same order.
    Shuffle,
}

/// What one request was asked (since 1.3.0; set for scenarios with a prompt file or drawn
/// lengths): its record's `input_tokens` and `output_tokens` are what the server reports it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AskedLengths {
    /// The prompt's tokens as the collector counted them, its id and the chat template
    /// included: what the server should bill.
    pub input_tokens: u32,
    /// Output tokens asked: exactly these (enforced), or at most (`natural`).
    pub output_tokens: u32,
    /// The model stopped the output where it chose (`max_tokens` a cap only).
    #[serde(default, skip_serializing_if = "is_false")]
    pub natural: bool,
    /// The prompt's place in its file, from 0: its conversation (ShareGPT), its line among the
    /// prompt lines (JSONL) or its cut (text). None for generated filler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<u64>,
}

/// The tokenizer that counted the prompts' tokens and built prompts of the lengths asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PromptCounter {
    pub tokenizer: PromptTokenizer,
    /// Whether its counts are the model's own: a tokenizer file or the server's `/tokenize`
    /// are; an estimate is not.
    pub exact: bool,
}

/// Which tokenizer counted the prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptTokenizer {
    /// The model's tokenizer file (`--tokenizer`).
    File,
    /// The server's `/tokenize` endpoint.
    Server,
    /// An estimate from the text's length: neither was at hand.
    Estimate,
}

impl PromptTokenizer {
    /// In words, for the page and `summary`: "the model's tokenizer file (exact)".
    pub fn describe(counter: &PromptCounter) -> String {
        let what = match counter.tokenizer {
            PromptTokenizer::File => "the model's tokenizer file",
            PromptTokenizer::Server => "the server's /tokenize",
            PromptTokenizer::Estimate => "an estimate from the text's length",
        };
        let exact = if counter.exact { "exact" } else { "not exact" };
        format!("{what} ({exact})")
    }
}
