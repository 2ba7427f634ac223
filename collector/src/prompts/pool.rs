//! A scenario's prompts when they are not one fixed body: a prompt file's prompts (counted,
//! filtered, in the file's or a seeded order), or prompts cut from a text file (or the filler)
//! to lengths drawn from the scenario's distributions. Built in two steps, both before any
//! request: [`Selection::choose`] counts and checks what each prompt asks (file and line in
//! every error, the model's context included), then, once the run's tokenizer is calibrated,
//! [`Selection::build`] renders each body with a slot for the request's id.
//!
//! Requests take the pool's prompts in turn by their number in the level (request `n`: prompt
//! `n`, round the pool), so a rerun sends the same prompts in the same order, and the shards of
//! a level, whose requests are numbered across shards, send different prompts. With
//! replacement, a seeded draw per number.

use std::path::PathBuf;

use futures::stream::{self, StreamExt};
use infermeter_report::lengths::{shuffle, splitmix};
use infermeter_report::{
    AskedLengths, LengthDistribution, LengthPlan, OutputStop, PromptKind, SampleOrder, Scenario,
};

use crate::http::api::Api;
use crate::http::body::{ChatMessage, PromptBody};
use crate::http::driver::Driver;
use crate::prompts::cut::TextPieces;
use crate::prompts::source::{Answer, EntryPrompt};
use crate::prompts::text::{file_prefix, request_prefix, PromptBuilder, TokenizerError};
use crate::prompts::Prepared;
use crate::suite::ScenarioPrompts;

/// Lengths drawn for a scenario without `count`: at most this many prompts...
const MAX_DRAWS: usize = 1000;
/// ...and at least this many...
const MIN_DRAWS: usize = 16;
/// ...of about this many tokens in all (each is counted a few times while it is cut).
const DRAW_TOKENS: f64 = 1_000_000.0;
/// Prompts a file's counting keeps in flight (a server's `/tokenize` answers them in parallel).
const COUNTS_IN_FLIGHT: usize = 16;
/// Mixed into the seed of output draws, so output and input lengths are drawn apart.
const OUTPUT_SALT: u64 = 0x6F75_7470_7574;

/// Why a scenario's prompts cannot be drawn. Each names the scenario, or the file and line.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("cannot count the prompts of scenario \"{scenario}\"")]
    Tokens {
        scenario: String,
        source: TokenizerError,
    },
    #[error("prompt file {} line {line}: {message}", .path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("prompt file {}: {passed} of the {examined} prompts looked at pass the filters ({filters}), fewer than the {asked} asked (count); widen the filters, lower count, or set replacement = true", .path.display())]
    TooFew {
        path: PathBuf,
        passed: usize,
        examined: usize,
        asked: u32,
        filters: String,
    },
    #[error("scenario \"{scenario}\": {message}")]
    Scenario { scenario: String, message: String },
}

/// What one prompt of the pool is to be.
#[derive(Debug, Clone)]
enum Content {
    /// A prompt of the file, as written.
    Entry(EntryPrompt),
    /// Cut from running text to this many tokens.
    Cut { target: u32 },
}

#[derive(Debug, Clone)]
struct Chosen {
    prompt: Option<u64>,
    content: Content,
    output: u32,
}

/// A scenario's prompts chosen and checked, not yet rendered.
pub struct Selection {
    scenario: String,
    chosen: Vec<Chosen>,
    /// The text cuts are taken from (a text file's, or the filler).
    text: Option<TextPieces>,
    natural: bool,
    replacement: bool,
    seed: u64,
    filtered_out: u64,
}

/// One rendered prompt: its body cut where the id goes, and what it asks.
#[derive(Debug, Clone)]
struct Rendered {
    head: Vec<u8>,
    tail: Vec<u8>,
    asked: AskedLengths,
}

/// A scenario's prompts, ready to stamp and send.
#[derive(Debug)]
pub struct Pool {
    prompts: Vec<Rendered>,
    replacement: bool,
    seed: u64,
    /// Prompts the filters set aside.
    pub filtered_out: u64,
}

/// The scenario's lengths as a plan: its own, or its fixed ones.
pub fn plan_of(scenario: &Scenario) -> LengthPlan {
    scenario.lengths.clone().unwrap_or(LengthPlan {
        input: LengthDistribution::Fixed {
            tokens: scenario.input_tokens,
        },
        output: LengthDistribution::Fixed {
            tokens: scenario.output_tokens,
        },
        output_stop: OutputStop::Enforced,
        seed: 0,
    })
}

/// Whether a scenario needs a pool: a prompt file, or lengths that are not one fixed pair.
pub fn needs_pool(scenario: &Scenario, source: Option<&ScenarioPrompts>) -> bool {
    source.is_some() || scenario.lengths.is_some()
}

impl Selection {
    /// Counts and checks the prompts scenario `scenario` sends (`source`: its prompt file),
    /// each within the model's context `context` where known.
    pub async fn choose(
        builder: &PromptBuilder,
        scenario: &Scenario,
        source: Option<&ScenarioPrompts>,
        context: Option<u64>,
    ) -> Result<Selection, PoolError> {
        let plan = plan_of(scenario);
        let mut selection = Selection {
            scenario: scenario.id.clone(),
            chosen: Vec::new(),
            text: None,
            natural: plan.output_stop == OutputStop::Natural,
            replacement: source.is_some_and(|s| s.spec.replacement),
            seed: source.map_or(plan.seed, |s| s.spec.seed),
            filtered_out: source.map_or(0, |s| s.file.skipped),
        };
        match source {
            Some(s) if s.file.kind != PromptKind::Text => {
                selection.choose_entries(builder, s, &plan, context).await?
            }
            _ => selection.choose_cuts(source, &plan, context)?,
        }
        Ok(selection)
    }

    /// A file's prompts in the order asked, counted and filtered until `count` pass.
    async fn choose_entries(
        &mut self,
        builder: &PromptBuilder,
        source: &ScenarioPrompts,
        plan: &LengthPlan,
        context: Option<u64>,
    ) -> Result<(), PoolError> {
        let (spec, file) = (&source.spec, &source.file);
        let mut order: Vec<usize> = (0..file.entries.len()).collect();
        if spec.order == SampleOrder::Shuffle {
            shuffle(&mut order, spec.seed);
        }
        let wanted = spec.count.map(|c| c as usize);
        let drawn = plan.output.draw(
            wanted.unwrap_or(order.len()).max(1),
            plan.seed ^ OUTPUT_SALT,
        );
        let filters = spec.filters();
        let counted = stream::iter(order.iter().copied())
            .map(|i| async move { (i, entry_lengths(builder, &file.entries[i]).await) })
            .buffered(COUNTS_IN_FLIGHT);
        futures::pin_mut!(counted);
        let mut examined = 0;
        while let Some((i, lengths)) = counted.next().await {
            if wanted.is_some_and(|w| self.chosen.len() >= w) {
                break;
            }
            examined += 1;
            let entry = &file.entries[i];
            let (input, answer) = lengths.map_err(|source| PoolError::Tokens {
                scenario: self.scenario.clone(),
                source,
            })?;
            let output = match &drawn {
                Some(drawn) => Some(drawn[self.chosen.len() % drawn.len()]),
                None if answer.is_none() && file.kind == PromptKind::Jsonl => {
                    return Err(line_error(source, entry.line, "has no output_tokens, and the scenario takes its output lengths from the file: give output_tokens on every line, or output_tokens in the scenario"));
                }
                None => answer,
            };
            // The output filters judge the file's answers, not lengths drawn apart from it.
            let judged = if drawn.is_some() { None } else { output };
            let (Some(output), true) = (output, filters.pass(input, judged)) else {
                self.filtered_out += 1;
                continue;
            };
            if let Some(context) = context.filter(|&c| u64::from(input) + u64::from(output) > c) {
                let message = format!("the prompt is {input} tokens and asks up to {output} output tokens, more than the model's context of {context} tokens together; set max_input (and max_output) in the scenario's prompts to leave such prompts out");
                return Err(line_error(source, entry.line, &message));
            }
            self.chosen.push(Chosen {
                prompt: Some(i as u64),
                content: Content::Entry(entry.prompt.clone()),
                output,
            });
        }
        let passed = self.chosen.len();
        let short = wanted.is_some_and(|w| passed < w) && !spec.replacement;
        if passed == 0 || short {
            return Err(PoolError::TooFew {
                path: file.path.clone(),
                passed,
                examined,
                asked: spec.count.unwrap_or(1),
                filters: filters.text(),
            });
        }
        Ok(())
    }

    /// Lengths drawn from the scenario's distributions, each prompt to be cut from the text
    /// file (or the filler) to its length.
    fn choose_cuts(
        &mut self,
        source: Option<&ScenarioPrompts>,
        plan: &LengthPlan,
        context: Option<u64>,
    ) -> Result<(), PoolError> {
        let mean = plan.input.moments().map_or(1.0, |(m, _)| m.max(1.0));
        let k = source.and_then(|s| s.spec.count).map_or_else(
            || ((DRAW_TOKENS / mean) as usize).clamp(MIN_DRAWS, MAX_DRAWS),
            |c| c.max(1) as usize,
        );
        let inputs = plan.input.draw(k, plan.seed);
        let outputs = plan.output.draw(k, plan.seed ^ OUTPUT_SALT);
        let (Some(inputs), Some(outputs)) = (inputs, outputs) else {
            return Err(self.invalid(
                "lengths \"as the dataset says\" need a ShareGPT or JSONL prompt file".into(),
            ));
        };
        let longest = inputs
            .iter()
            .zip(&outputs)
            .map(|(i, o)| u64::from(*i) + u64::from(*o))
            .max();
        if let (Some(longest), Some(context)) = (longest, context) {
            if longest > context {
                return Err(self.invalid(format!("its lengths reach {longest} tokens of input and output together, more than the model's context of {context} tokens; lower the input or output lengths (or their max)")));
            }
        }
        let max_input = inputs.iter().copied().max().unwrap_or(1) as usize;
        self.text = Some(match source.and_then(|s| s.file.text.as_deref()) {
            Some(text) => TextPieces::of_text(text),
            None => TextPieces::filler(plan.seed, 2 * max_input + 64),
        });
        let from_file = source.is_some();
        self.chosen = inputs
            .into_iter()
            .zip(outputs)
            .enumerate()
            .map(|(i, (target, output))| Chosen {
                prompt: from_file.then_some(i as u64),
                content: Content::Cut { target },
                output,
            })
            .collect();
        Ok(())
    }

    fn invalid(&self, message: String) -> PoolError {
        PoolError::Scenario {
            scenario: self.scenario.clone(),
            message,
        }
    }

    /// Renders every chosen prompt through `driver` for `api`, with `placeholder` where each
    /// request's id goes, counted by the (calibrated) `builder`.
    pub async fn build(
        self,
        builder: &PromptBuilder,
        driver: &Driver,
        api: Api,
        placeholder: &str,
    ) -> Result<Pool, PoolError> {
        let tokens = |source| PoolError::Tokens {
            scenario: self.scenario.clone(),
            source,
        };
        let mut prompts = Vec::with_capacity(self.chosen.len());
        let mut start = 0;
        for chosen in &self.chosen {
            let (body, input) = match &chosen.content {
                Content::Entry(prompt) => {
                    let body = stamped(prompt, &file_prefix(placeholder));
                    let (n, _) = builder.count_body(&body, api).await.map_err(tokens)?;
                    (body, n)
                }
                Content::Cut { target } => {
                    let text = self.text.as_ref().expect("cuts have their text");
                    let prefix = request_prefix(placeholder);
                    let cut = builder
                        .cut(text, start, &prefix, *target, api)
                        .await
                        .map_err(tokens)?;
                    start = (start + cut.pieces) % text.len().max(1);
                    (PromptBody::Text(cut.text), cut.tokens)
                }
            };
            let bytes = driver.prompt_body(&body, chosen.output, self.natural);
            let (head, tail) = split_at_id(bytes, placeholder);
            prompts.push(Rendered {
                head,
                tail,
                asked: AskedLengths {
                    input_tokens: input,
                    output_tokens: chosen.output,
                    natural: self.natural,
                    prompt: chosen.prompt,
                },
            });
        }
        Ok(Pool {
            prompts,
            replacement: self.replacement,
            seed: self.seed,
            filtered_out: self.filtered_out,
        })
    }
}

/// A file's prompt with `prefix` (the request's id) at the start of its first text.
fn stamped(prompt: &EntryPrompt, prefix: &str) -> PromptBody {
    match prompt {
        EntryPrompt::Text(text) => PromptBody::Text(format!("{prefix}{text}")),
        EntryPrompt::Messages(messages) => {
            let mut messages = messages.clone();
            if let Some(first) = messages.first_mut() {
                first.content = format!("{prefix}{}", first.content);
            }
            PromptBody::Messages(messages)
        }
    }
}

/// A file entry's input tokens (its texts, as the filters count them) and its answer's tokens.
async fn entry_lengths(
    builder: &PromptBuilder,
    entry: &crate::prompts::source::Entry,
) -> Result<(u32, Option<u32>), TokenizerError> {
    let input = match &entry.prompt {
        EntryPrompt::Text(text) => builder.count_content(text).await?,
        EntryPrompt::Messages(messages) => {
            let mut total = 0;
            for ChatMessage { content, .. } in messages {
                total += builder.count_content(content).await?;
            }
            total
        }
    };
    let answer = match &entry.answer {
        Some(Answer::Tokens(n)) => Some(*n),
        Some(Answer::Text(text)) => Some(builder.count_content(text).await?.max(1)),
        None => None,
    };
    Ok((input, answer))
}

fn line_error(source: &ScenarioPrompts, line: usize, message: &str) -> PoolError {
    PoolError::Line {
        path: source.file.path.clone(),
        line,
        message: message.to_string(),
    }
}

impl Pool {
    /// Prompts the run sends.
    pub fn count(&self) -> usize {
        self.prompts.len()
    }

    /// Request `number`'s prompt with `id` stamped in.
    pub fn prepare(&self, number: u64, id: &str) -> Prepared {
        let n = self.prompts.len() as u64;
        let at = if self.replacement {
            let mut state = self.seed ^ number.wrapping_mul(0xD1B5_4A32_D192_ED03);
            splitmix(&mut state) % n
        } else {
            number % n
        };
        let p = &self.prompts[at as usize];
        let mut body = Vec::with_capacity(p.head.len() + id.len() + p.tail.len());
        body.extend_from_slice(&p.head);
        body.extend_from_slice(id.as_bytes());
        body.extend_from_slice(&p.tail);
        Prepared {
            body,
            input_tokens: Some(p.asked.input_tokens),
            session: None,
            asked: Some(p.asked),
        }
    }

    /// The mean input and output tokens the pool asks, whole: the scenario's lengths in the
    /// report.
    pub fn means(&self) -> (u32, u32) {
        let n = self.prompts.len().max(1) as f64;
        let mean = |f: fn(&AskedLengths) -> u32| {
            (self
                .prompts
                .iter()
                .map(|p| f64::from(f(&p.asked)))
                .sum::<f64>()
                / n)
                .round() as u32
        };
        (mean(|a| a.input_tokens), mean(|a| a.output_tokens))
    }
}

/// A rendered body cut where the id `placeholder` stands (inside its brackets): the bytes
/// before it and after.
pub(crate) fn split_at_id(body: Vec<u8>, placeholder: &str) -> (Vec<u8>, Vec<u8>) {
    let marker = format!("[{placeholder}]");
    let id_at =
        find(&body, marker.as_bytes()).expect("the id placeholder survives JSON encoding") + 1;
    let tail = body[id_at + placeholder.len()..].to_vec();
    let mut head = body;
    head.truncate(id_at);
    (head, tail)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
