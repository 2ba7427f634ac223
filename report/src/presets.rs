//! Scenario lists, use cases with thresholds, experience bands and the metric glossary from the
//! reference reports, shared by the collector (what to run) and the viewer (what to show).
//! Which modes and levels a suite runs is the collector's business; the shapes live here.

use crate::analysis::metric::Metric;
use crate::schema::Limits;
use crate::schema::{Scenario, SessionShape, ThinkTime};

/// A workload shape with its explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioPreset {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

impl ScenarioPreset {
    pub fn to_scenario(&self) -> Scenario {
        Scenario::single(
            self.id,
            self.name,
            self.description,
            self.input_tokens,
            self.output_tokens,
        )
    }
}

const CHATBOT: &str = "A typical conversational turn: a short context (earlier messages and a new prompt) and a moderate reply. The lightest workload, like most chat applications: prefill is quick, TTFT low, decode at its fastest.";
const RAG_QA: &str = "Retrieval-augmented generation: a question plus several retrieved document chunks in the prompt. Four times the chatbot input means longer prefill and higher TTFT with the same short answer; the everyday pattern of knowledge-base and search-grounded assistants.";
const AGENTIC: &str = "One step of an autonomous agent: the prompt carries a long scratchpad of earlier reasoning, tool outputs and instructions. The long input stresses prefill and KV-cache memory; the output (one action or thought) stays short, but TTFT can climb steeply under concurrency.";
const TOOL_CALLING: &str = "The heaviest shape: a multi-step agent carrying the whole conversation, tool schemas and earlier tool results. At 32K input, prefill dominates, TTFT is highest and the GPU serves the fewest concurrent requests before quality drops.";

const fn preset(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    input_tokens: u32,
    output_tokens: u32,
) -> ScenarioPreset {
    ScenarioPreset {
        id,
        name,
        description,
        input_tokens,
        output_tokens,
    }
}

/// The four-scenario suite: 1K, 4K, 16K and 32K input, 256 output each, so differences come
/// from context length alone.
pub const FOUR_SCENARIOS: [ScenarioPreset; 4] = [
    preset("chatbot", "Chatbot", CHATBOT, 1024, 256),
    preset("rag_qa", "RAG / QA", RAG_QA, 4096, 256),
    preset("agentic", "Agentic", AGENTIC, 16384, 256),
    preset(
        "tool_calling_agentic",
        "Tool Calling Agentic",
        TOOL_CALLING,
        32768,
        256,
    ),
];

/// The capacity variant of the four scenarios, with outputs sized to each workload.
pub const CAPACITY_SCENARIOS: [ScenarioPreset; 4] = [
    preset("chatbot", "Chatbot", CHATBOT, 1024, 128),
    preset("rag_qa", "RAG / QA", RAG_QA, 4096, 512),
    preset("agentic", "Agentic", AGENTIC, 16384, 2048),
    preset(
        "tool_calling_agentic",
        "Tool Calling Agentic",
        TOOL_CALLING,
        32768,
        4096,
    ),
];

const SWEEP: &str = "Context-length sweep: fresh context of this size, 1024 output tokens.";

/// The context sweep (1K to 256K input, 1024 output) plus code completion (1K in, 128 out).
pub const CONTEXT_SWEEP: [ScenarioPreset; 8] = [
    preset(
        "code_completion",
        "Code Completion",
        CODE_COMPLETION,
        1024,
        128,
    ),
    preset("ctx_1k", "1K context", SWEEP, 1024, 1024),
    preset("ctx_8k", "8K context", SWEEP, 8192, 1024),
    preset("ctx_32k", "32K context", SWEEP, 32768, 1024),
    preset("ctx_64k", "64K context", SWEEP, 65536, 1024),
    preset("ctx_96k", "96K context", SWEEP, 98304, 1024),
    preset("ctx_128k", "128K context", SWEEP, 131072, 1024),
    preset("ctx_256k", "256K context", SWEEP, 262144, 1024),
];

const CHAT_SESSION: &str = "A user chatting with an assistant: a shared 1K system prompt, a first message, then turns that each add the previous answer and a new message, with a pause to read between them. Later turns carry the whole conversation, so a prefix cache decides how long their first token takes.";

/// The `chat-sessions` suite's conversation: a shared 1K system prompt, 200-token user turns,
/// 5 turns of 256 output tokens, exponential think time with a 5 s mean.
pub fn chat_session() -> Scenario {
    let shape = SessionShape {
        system_prompt_tokens: 1024,
        first_turn_tokens: 200,
        turn_tokens: 200,
        turns: 5,
        think_time: ThinkTime::Exponential { mean_s: 5.0 },
    };
    Scenario {
        id: "chat_session".into(),
        name: "Chat session".into(),
        description: CHAT_SESSION.into(),
        input_tokens: shape.system_prompt_tokens + shape.first_turn_tokens,
        output_tokens: 256,
        session: Some(shape),
        trace: None,
        prompts: None,
        lengths: None,
        agents: None,
    }
}

/// Finds a scenario preset by id in any list.
pub fn scenario_preset(id: &str) -> Option<&'static ScenarioPreset> {
    FOUR_SCENARIOS
        .iter()
        .chain(&CONTEXT_SWEEP)
        .find(|p| p.id == id)
}

const CODE_COMPLETION: &str = "Inline code suggestions in an editor, like autocomplete. Responsiveness is everything: 128 output tokens match a typical suggestion, and the measure is end-to-end latency rather than TTFT.";

/// A deployment scenario with the thresholds a comfortable user experience needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UseCase {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// What prompt caching would change, for a report measured without it (reference 003).
    pub caching_note: Option<&'static str>,
    /// Id of the [`CONTEXT_SWEEP`] scenario it is judged on.
    pub scenario_id: &'static str,
    pub context_tokens: u32,
    pub output_tokens: u32,
    pub thresholds: Limits,
}

const fn limits(
    max_ttft_s: Option<f64>,
    min_decode_tok_s: Option<f64>,
    max_e2e_s: Option<f64>,
) -> Limits {
    Limits {
        max_ttft_s,
        min_decode_tok_s,
        max_e2e_s,
        ..Limits::NONE
    }
}

/// The five use cases of the reference reports, lightest first.
pub const USE_CASES: [UseCase; 5] = [
    UseCase {
        id: "code_completion",
        name: "Code Completion",
        description: CODE_COMPLETION,
        caching_note: None,
        scenario_id: "code_completion",
        context_tokens: 1024,
        output_tokens: 128,
        thresholds: limits(None, None, Some(2.0)),
    },
    UseCase {
        id: "short_form_chatbot",
        name: "Short-form Chatbot",
        description: "Quick exchanges: support questions, simple Q&A, single-turn requests. 8K holds a few messages and a system prompt. Users are forgiving here: 10 tok/s is enough to read a streamed support answer.",
        caching_note: None,
        scenario_id: "ctx_8k",
        context_tokens: 8192,
        output_tokens: 1024,
        thresholds: limits(Some(10.0), Some(10.0), None),
    },
    UseCase {
        id: "general_chatbot",
        name: "General Chatbot",
        description: "A ChatGPT-style multi-turn assistant; 32K context matches ChatGPT's limit. How many concurrent requests keep it responsive?",
        caching_note: Some("Most chatbot users build context incrementally over a conversation. With prompt caching configured, only the new tokens are prefilled and TTFT drops sharply; these results are the worst case, with all context processed at once."),
        scenario_id: "ctx_32k",
        context_tokens: 32768,
        output_tokens: 1024,
        thresholds: limits(Some(8.0), Some(15.0), None),
    },
    UseCase {
        id: "long_document_processing",
        name: "Long Document Processing",
        description: "Summarising reports, extracting data from contracts, analysing long documents (64K is roughly 125 to 160 pages). Users accept a longer wait for a large input, but generation must keep up with reading.",
        caching_note: None,
        scenario_id: "ctx_64k",
        context_tokens: 65536,
        output_tokens: 1024,
        thresholds: limits(Some(12.0), Some(15.0), None),
    },
    UseCase {
        id: "automated_coding_assistant",
        name: "Automated Coding Assistant",
        description: "Agentic coding: an assistant reads a large part of a codebase (96K is about 8,000 to 9,000 lines) to answer, refactor or implement, chaining many calls.",
        caching_note: Some("Agentic workflows chain many calls (tool use, retrieval, iterative refinement). With prompt caching configured, context persists between requests and only the new tokens are prefilled, cutting the TTFT of each step; these results are the worst case, with all context processed at once."),
        scenario_id: "ctx_96k",
        context_tokens: 98304,
        output_tokens: 1024,
        thresholds: limits(Some(12.0), Some(20.0), None),
    },
];

/// The use cases, lightest first.
pub fn use_cases() -> Vec<UseCase> {
    USE_CASES.to_vec()
}

/// How a band feels, best first; the viewer maps it to a colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tone {
    Great,
    Good,
    Fair,
    Poor,
    Bad,
}

/// A range of a metric and what it feels like to a user. Bounds in stored units (seconds,
/// tok/s), `lower` inclusive, `upper` exclusive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub lower: f64,
    pub upper: f64,
    /// Short name, e.g. "Responsive".
    pub name: &'static str,
    /// The user experience, e.g. "Feels responsive".
    pub experience: &'static str,
    /// The range as the reports print it, e.g. "500ms–2s".
    pub range: &'static str,
    pub tone: Tone,
}

impl Band {
    pub fn contains(&self, value: f64) -> bool {
        (self.lower..self.upper).contains(&value)
    }
}

const fn band(
    lower: f64,
    upper: f64,
    name: &'static str,
    experience: &'static str,
    range: &'static str,
    tone: Tone,
) -> Band {
    Band {
        lower,
        upper,
        name,
        experience,
        range,
        tone,
    }
}

/// Inter-token latency bands, seconds.
pub const ITL_BANDS: [Band; 4] = [
    band(
        0.0,
        0.010,
        "Excellent",
        "Streaming looks instantaneous",
        "< 10ms",
        Tone::Great,
    ),
    band(
        0.010,
        0.020,
        "Good",
        "Still feels instant",
        "10–20ms",
        Tone::Good,
    ),
    band(
        0.020,
        0.070,
        "Acceptable",
        "Noticeably slower, but acceptable",
        "20–70ms",
        Tone::Fair,
    ),
    band(
        0.070,
        f64::INFINITY,
        "Poor",
        "Sluggish: tokens visibly arrive one by one",
        "≥ 70ms",
        Tone::Bad,
    ),
];

/// ITL under which streaming feels instant (the top of the "Good" band), seconds: the dashed
/// line of the ITL charts and what their sentences measure against.
pub const INSTANT_ITL_S: f64 = ITL_BANDS[1].upper;

/// ITL above which streaming feels sluggish (the bottom of the "Poor" band), seconds.
pub const SLUGGISH_ITL_S: f64 = ITL_BANDS[ITL_BANDS.len() - 1].lower;

/// Per-user generation speed bands, tok/s.
pub const SPEED_BANDS: [Band; 4] = [
    band(
        0.0,
        15.0,
        "Slow",
        "Slow; may fall behind reading speed",
        "< 15 tok/s",
        Tone::Bad,
    ),
    band(
        15.0,
        25.0,
        "Acceptable",
        "Acceptable; keeps up with reading",
        "15–25 tok/s",
        Tone::Fair,
    ),
    band(
        25.0,
        50.0,
        "Fast",
        "Fast; outpaces reading",
        "25–50 tok/s",
        Tone::Good,
    ),
    band(
        50.0,
        f64::INFINITY,
        "Very fast",
        "Very fast; text appears almost at once",
        "> 50 tok/s",
        Tone::Great,
    ),
];

/// Time-to-first-token bands, seconds.
pub const TTFT_BANDS: [Band; 5] = [
    band(0.0, 0.5, "Instant", "Feels instant", "< 500ms", Tone::Great),
    band(
        0.5,
        2.0,
        "Responsive",
        "Feels responsive",
        "500ms–2s",
        Tone::Good,
    ),
    band(
        2.0,
        5.0,
        "Noticeable",
        "Noticeable but still acceptable",
        "2–5s",
        Tone::Fair,
    ),
    band(
        5.0,
        10.0,
        "Slow",
        "Feels slow; usually tolerated at long contexts",
        "5–10s",
        Tone::Poor,
    ),
    band(
        10.0,
        f64::INFINITY,
        "Frustrating",
        "Frustrating; users may retry or give up",
        "> 10s",
        Tone::Bad,
    ),
];

fn band_in(bands: &'static [Band], value: f64) -> &'static Band {
    // Bands cover [0, ∞); a negative or NaN value reads as the first, a huge one as the last.
    bands
        .iter()
        .find(|b| b.contains(value))
        .unwrap_or(if value >= bands[0].lower {
            &bands[bands.len() - 1]
        } else {
            &bands[0]
        })
}

/// The band of an inter-token latency in seconds.
pub fn band_for_itl(itl_s: f64) -> &'static Band {
    band_in(&ITL_BANDS, itl_s)
}

/// The band of a per-user decode speed in tok/s.
pub fn band_for_speed(tok_s: f64) -> &'static Band {
    band_in(&SPEED_BANDS, tok_s)
}

/// The band of a time to first token in seconds.
pub fn band_for_ttft(ttft_s: f64) -> &'static Band {
    band_in(&TTFT_BANDS, ttft_s)
}

/// A term of the metric glossary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlossaryEntry {
    pub term: &'static str,
    /// e.g. "Latency", "Throughput".
    pub category: &'static str,
    pub definition: &'static str,
}

const fn term(
    term: &'static str,
    category: &'static str,
    definition: &'static str,
) -> GlossaryEntry {
    GlossaryEntry {
        term,
        category,
        definition,
    }
}

/// The metric glossary, in reading order.
pub const GLOSSARY: [GlossaryEntry; 10] = [
    term("Context Length", "Input size", "Tokens given as input (prompt plus chat history). Longer context costs more prefill and usually raises TTFT."),
    term("Prefill", "Compute phase", "Prompt processing: the model reads the whole context and builds its KV cache. Its cost grows roughly with context length."),
    term("Decode", "Compute phase", "Generation: the model produces output tokens after the first one. Its speed is reported in tok/s."),
    term(Metric::Ttft.short_label(), "Latency", "Time To First Token: from sending the request to the first streamed token. Mostly prefill plus scheduling and queueing."),
    term("ITL", "Latency", "Inter-Token Latency: the average gap between successive streamed tokens during decode, in ms per token. Lower feels snappier."),
    term("Decode Speed", "Throughput", "Output tokens per second. Per-user is one request's stream; system is the sum over all concurrent streams."),
    term("Per-User vs System", "Interpretation", "Per-user figures are one client's experience (speed, latency); system figures are the server's total capacity across concurrent requests."),
    term("Scaling Efficiency", "Concurrency", "How close throughput comes to perfect scaling as concurrency grows: system throughput / (single-user throughput × concurrency). 100% means no loss."),
    term("E2E Latency", "Latency", "End-to-end time until the request finishes streaming: TTFT plus decode time. What a user feels as the full completion time."),
    term("Batch Size / Concurrency", "Load", "Requests in flight at once. More concurrency usually raises system tok/s and lowers per-user tok/s."),
];

/// The glossary's rule of thumb.
pub const RULE_OF_THUMB: &str = "TTFT is mostly prefill and queueing; ITL is mostly decode smoothness. Per-user metrics describe the experience, system metrics the capacity.";

/// "What good looks like": reference ranges per metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guidance {
    pub metric: &'static str,
    pub text: &'static str,
}

/// Per-user decode speed that is excellent at short context ("What Good Looks Like"): a peak
/// at or above it matches top-tier single-user performance.
pub const EXCELLENT_DECODE_TOK_S: f64 = 150.0;

pub const WHAT_GOOD_LOOKS_LIKE: [Guidance; 4] = [
    Guidance {
        metric: "Inter-Token Latency",
        text: "Under 10ms is excellent, under 20ms good, over 70ms poor. Below 20ms streaming feels instantaneous.",
    },
    Guidance {
        metric: "Per-User Decode",
        text: "Over 150 tok/s is excellent at short context, over 80 tok/s good at long context; under 30 tok/s feels slow.",
    },
    Guidance {
        metric: "Scaling Efficiency",
        text: "Over 90% is excellent, over 70% good, under 50% poor. It measures how well throughput grows with concurrency.",
    },
    Guidance {
        metric: Metric::Ttft.short_label(),
        text: "Under 100ms is excellent at short context, under 2s good at 32K, under 20s acceptable at 128K; it grows with context length.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_use_the_reference_boundaries() {
        assert_eq!(band_for_ttft(0.189).name, "Instant");
        assert_eq!(band_for_ttft(0.5).name, "Responsive");
        assert_eq!(band_for_ttft(4.99).name, "Noticeable");
        assert_eq!(band_for_ttft(6.18).name, "Slow");
        assert_eq!(band_for_ttft(109.9).name, "Frustrating");
        assert_eq!(band_for_itl(0.0058).name, "Excellent");
        assert_eq!(band_for_itl(0.0189).name, "Good");
        assert_eq!(band_for_itl(0.0389).name, "Acceptable");
        assert_eq!(band_for_itl(0.0758).name, "Poor");
        assert_eq!(band_for_speed(13.2).name, "Slow");
        assert_eq!(band_for_speed(15.0).name, "Acceptable");
        assert_eq!(band_for_speed(38.8).name, "Fast");
        assert_eq!(band_for_speed(172.5).name, "Very fast");
        // Out-of-range input still lands on a band instead of panicking.
        assert_eq!(band_for_ttft(-1.0).name, "Instant");
        assert_eq!(band_for_ttft(f64::INFINITY).name, "Frustrating");
        assert_eq!(band_for_ttft(f64::NAN).name, "Instant");
    }

    #[test]
    fn bands_tile_from_zero_to_infinity() {
        for bands in [&ITL_BANDS[..], &SPEED_BANDS[..], &TTFT_BANDS[..]] {
            assert_eq!(bands[0].lower, 0.0);
            assert_eq!(bands[bands.len() - 1].upper, f64::INFINITY);
            assert!(bands.windows(2).all(|w| w[0].upper == w[1].lower));
        }
    }

    #[test]
    fn scenario_lists_match_the_reference_shapes() {
        let shape = |list: &[ScenarioPreset]| -> Vec<(u32, u32)> {
            list.iter()
                .map(|p| (p.input_tokens, p.output_tokens))
                .collect()
        };
        assert_eq!(
            shape(&FOUR_SCENARIOS),
            [(1024, 256), (4096, 256), (16384, 256), (32768, 256)]
        );
        assert_eq!(
            shape(&CAPACITY_SCENARIOS),
            [(1024, 128), (4096, 512), (16384, 2048), (32768, 4096)]
        );
        assert_eq!(
            shape(&CONTEXT_SWEEP),
            [
                (1024, 128),
                (1024, 1024),
                (8192, 1024),
                (32768, 1024),
                (65536, 1024),
                (98304, 1024),
                (131072, 1024),
                (262144, 1024)
            ]
        );
        assert_eq!(FOUR_SCENARIOS[1].to_scenario().name, "RAG / QA");
    }

    #[test]
    fn use_cases_point_at_sweep_scenarios_with_their_shape() {
        let cases = use_cases();
        assert_eq!(cases.len(), 5);
        for case in &cases {
            let scenario = scenario_preset(case.scenario_id).expect("scenario exists");
            assert_eq!(
                (scenario.input_tokens, scenario.output_tokens),
                (case.context_tokens, case.output_tokens),
                "{}",
                case.name
            );
            assert!(!case.thresholds.is_empty());
        }
        let general = cases.iter().find(|c| c.id == "general_chatbot").unwrap();
        assert_eq!(general.thresholds.max_ttft_s, Some(8.0));
        assert_eq!(general.thresholds.min_decode_tok_s, Some(15.0));
        assert_eq!(cases[0].thresholds.max_e2e_s, Some(2.0));
        assert_eq!(cases[4].thresholds.min_decode_tok_s, Some(20.0));
    }

    #[test]
    fn glossary_has_the_reference_terms() {
        let terms: Vec<&str> = GLOSSARY.iter().map(|e| e.term).collect();
        assert!(terms.contains(&"Scaling Efficiency"));
        assert!(terms.contains(&"Batch Size / Concurrency"));
        assert_eq!(WHAT_GOOD_LOOKS_LIKE.len(), 4);
        assert!(WHAT_GOOD_LOOKS_LIKE[1]
            .text
            .starts_with(&format!("Over {EXCELLENT_DECODE_TOK_S} tok/s is excellent")));
    }
}
