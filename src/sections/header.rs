//! Report header (what was measured, on what, how) and the highlight cards.

use infermeter_report::analysis::coverage::{coverage, Span};
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::highlights::{
    highlights, peak_series_scaling, single_user_across_context, throughput_growth, Highlights,
    Located,
};
use infermeter_report::analysis::Metric;
use infermeter_report::{LoadMode, Report, RunStatus};
use leptos::prelude::*;

use super::context;
use super::findings::{context_label, context_phrase, position, with_unit};
use crate::charts::capacity::group_thousands;
use crate::charts::plot::XAxis;
use crate::charts::scale_up::DepthCard;
use crate::components::{HighlightCard, HighlightGrid};

/// "35B MoE, 3B active params, FP8" from whatever the report states.
pub fn architecture(report: &Report) -> Option<String> {
    let m = &report.metadata.model;
    let mut parts = Vec::new();
    match (m.total_params_b, &m.architecture) {
        (Some(p), Some(a)) => parts.push(format!("{}B {a}", format_number(p))),
        (Some(p), None) => parts.push(format!("{}B params", format_number(p))),
        (None, Some(a)) => parts.push(a.clone()),
        (None, None) => {}
    }
    if let (Some(active), Some(total)) = (m.active_params_b, m.total_params_b) {
        if active < total {
            parts.push(format!("{}B active params", format_number(active)));
        }
    }
    parts.extend(m.precision.clone());
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "Yes".into(),
        Some(false) => "No".into(),
        None => "Not stated".into(),
    }
}

/// Whether prompt caching was on; when off, what that means for TTFT, as the reports note it.
fn caching(on: Option<bool>) -> String {
    match on {
        Some(false) => "No: every request's whole context was prefilled, so TTFT figures are worst cases (with caching, chats and agents that grow their context turn by turn prefill only the new tokens)".into(),
        other => yes_no(other),
    }
}

/// (label, value) rows of the header's facts after the model, GPU and scenarios: the model's
/// organization, the GPUs' memory, then the test parameters.
pub fn test_parameters(report: &Report) -> Vec<(&'static str, String)> {
    let md = &report.metadata;
    let t = &md.test;
    let engine = match &md.engine.version {
        Some(v) => format!("{} {v}", md.engine.name),
        None => md.engine.name.clone(),
    };
    let mut rows = Vec::new();
    // Who made the model and how much GPU memory it ran in, as the reports' headers state them.
    if let Some(org) = &md.model.organization {
        rows.push(("Organization", org.clone()));
    }
    if let Some(gb) = md.hardware.vram_gb {
        rows.push(("VRAM", format!("{} GB", format_number(gb))));
    }
    rows.extend([
        ("Engine", engine),
        ("Prompt caching", caching(t.prompt_caching)),
        ("Speculative decoding", yes_no(t.speculative_decoding)),
    ]);
    if let Some(kv) = &t.kv_cache_dtype {
        rows.push(("KV cache", kv.clone()));
    }
    if let Some(suite) = &t.suite {
        rows.push(("Suite", suite.clone()));
    }
    rows.extend(tested_ranges(report));
    rows.push(("Started", readable_time(&md.started_at)));
    rows
}

/// "1–32" or "8" when one value was tested.
fn span_text<T: PartialEq + Copy>(span: Span<T>, show: impl Fn(T) -> String) -> String {
    if span.low == span.high {
        show(span.low)
    } else {
        format!("{}–{}", show(span.low), show(span.high))
    }
}

/// The load levels and token lengths tested, as the reports' test parameters state them:
/// "1–32 concurrent requests (peak); queue depth 1–256 (burst)", "1K–32K input tokens, 128–1,024
/// output tokens per request".
fn tested_ranges(report: &Report) -> Vec<(&'static str, String)> {
    let c = coverage(report);
    let count = |n: u32| n.to_string();
    let load: Vec<String> = [
        c.concurrency.map(|s| {
            let noun = if s.high == 1 { "request" } else { "requests" };
            format!("{} concurrent {noun} (peak)", span_text(s, count))
        }),
        c.queue_depth
            .map(|s| format!("queue depth {} (burst)", span_text(s, count))),
        c.request_rate
            .map(|s| format!("{} requests/s (rate)", span_text(s, format_number))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut rows = Vec::new();
    if !load.is_empty() {
        rows.push(("Load tested", load.join("; ")));
    }
    if let (Some(input), Some(output)) = (c.input_tokens, c.output_tokens) {
        let tokens = |n: u32| context_label(f64::from(n));
        rows.push((
            "Context lengths",
            format!(
                "{} input tokens, {} output tokens per request",
                span_text(input, tokens),
                span_text(output, group_thousands)
            ),
        ));
    }
    rows
}

/// "2026-11-23T07:25:51.519956458+00:00" as "2026-11-23 07:25:51 UTC": to the second, with a
/// non-UTC offset kept as written. Text of another shape is shown as it is.
pub fn readable_time(rfc3339: &str) -> String {
    let shape_ok = |date: &str, time: &str| {
        date.len() == 10
            && time.len() == 8
            && date.chars().all(|c| c.is_ascii_digit() || c == '-')
            && time.chars().all(|c| c.is_ascii_digit() || c == ':')
    };
    let Some((date, rest)) = rfc3339.split_once(['T', 't', ' ']) else {
        return rfc3339.to_string();
    };
    let Some((time, tail)) = rest.split_at_checked(8) else {
        return rfc3339.to_string();
    };
    if !shape_ok(date, time) {
        return rfc3339.to_string();
    }
    let zone = tail.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    match zone {
        "Z" | "z" | "+00:00" | "-00:00" => format!("{date} {time} UTC"),
        "" => format!("{date} {time}"),
        offset => format!("{date} {time} {offset}"),
    }
}

/// Text of one highlight card.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    pub testid: &'static str,
    pub label: &'static str,
    pub value: String,
    pub context: String,
}

fn scenario_name(report: &Report, id: &str) -> String {
    report
        .scenarios
        .iter()
        .find(|s| s.id == id)
        .map_or_else(|| id.to_string(), |s| s.name.clone())
}

fn located(report: &Report, l: &Located) -> String {
    let axis = match l.mode {
        infermeter_report::LoadMode::Burst => XAxis::QueueDepth,
        _ => XAxis::ConcurrentUsers,
    };
    format!(
        "{} at {}",
        scenario_name(report, &l.scenario),
        position(axis, f64::from(l.concurrency))
    )
}

/// A card's value and context when the report has no figure for it.
fn na() -> (String, String) {
    ("n/a".to_string(), "not measured".to_string())
}

/// The deepest queue any scenario's burst runs keep within the TTFT limit.
fn safe_queue_card(report: &Report, h: &Highlights) -> Card {
    let safest = h
        .max_safe_queue_depth
        .iter()
        .filter_map(|(id, d)| d.map(|d| (id, d)))
        .max_by_key(|(_, d)| d.depth);
    let (value, context) = match safest {
        // Worded as the queue-depth cards of "When to Scale Up" word it.
        Some((id, d)) => {
            let card = DepthCard {
                name: scenario_name(report, id),
                depth: Some(d),
                ttft_limit_s: h.ttft_threshold_s,
            };
            (card.value_text(), card.caption())
        }
        None if h.max_safe_queue_depth.values().any(Option::is_none) => (
            "none".into(),
            format!(
                "TTFT above {} s at every queue depth",
                format_number(h.ttft_threshold_s)
            ),
        ),
        None => na(),
    };
    Card {
        testid: "highlight-safe-queue",
        label: "Max Safe Queue",
        value,
        context,
    }
}

/// The peak-throughput scenario's scaling efficiency at its highest level.
fn scaling_card(report: &Report) -> Card {
    let (value, context) = peak_series_scaling(report).map_or_else(na, |(scenario, c, e)| {
        (
            format!(
                "{}%",
                format_number(Metric::ScalingEfficiency.to_display(e))
            ),
            format!(
                "{} at {}, vs ideal linear scaling",
                scenario_name(report, scenario),
                position(XAxis::ConcurrentUsers, f64::from(c))
            ),
        )
    });
    Card {
        testid: "highlight-scaling",
        label: "Scaling Efficiency",
        value,
        context,
    }
}

/// The five highlight cards of the reports' header block.
pub fn cards(report: &Report, h: &Highlights) -> Vec<Card> {
    let value = |l: &Option<Located>, unit: &str| {
        l.as_ref().map_or_else(na, |l| {
            (
                format!("{} {unit}", format_number(l.value)),
                located(report, l),
            )
        })
    };
    let (decode, decode_at) = value(&h.peak_decode, "tok/s");
    let (tput, tput_at) = value(&h.max_system_tput, "tok/s");
    let (ttft, ttft_at) = value(&h.best_ttft, "s");
    // Without burst runs there is no queue depth to report (not a failed one): the reports
    // show the scaling efficiency of the peak-throughput scenario at its top level instead.
    let has_burst = report.series.iter().any(|s| s.mode == LoadMode::Burst);
    let fourth = if has_burst {
        safe_queue_card(report, h)
    } else {
        scaling_card(report)
    };
    let (success, success_of) = match h.success_rate {
        Some(r) => (
            format!("{:.1}%", r * 100.0),
            format!("across {} requests", h.requests_total),
        ),
        None => na(),
    };
    vec![
        Card {
            testid: "highlight-peak-decode",
            label: "Peak Decode Speed",
            value: decode,
            context: decode_at,
        },
        Card {
            testid: "highlight-max-throughput",
            label: "Max System Throughput",
            value: tput,
            context: tput_at,
        },
        Card {
            testid: "highlight-best-ttft",
            label: "Best TTFT",
            value: ttft,
            context: ttft_at,
        },
        fourth,
        Card {
            testid: "highlight-success-rate",
            label: "Success Rate",
            value: success,
            context: success_of,
        },
    ]
}

/// The key findings the highlight cards do not state, as reference 003 lists them: single-user
/// TTFT and generation speed from the shortest to the longest context, and how much system
/// throughput grows with concurrency. (label, text) rows; those the report lacks are left out.
pub fn key_findings(report: &Report) -> Vec<(&'static str, String)> {
    let span = |metric: Metric| {
        let s = single_user_across_context(report, metric)?;
        let at = |(tokens, value): (u32, f64)| {
            format!(
                "{} ({})",
                with_unit(metric.to_display(value), metric.unit()),
                context_phrase(f64::from(tokens))
            )
        };
        Some(if s.shortest.0 == s.longest.0 {
            at(s.shortest)
        } else {
            format!("{} → {}", at(s.shortest), at(s.longest))
        })
    };
    let growth = throughput_growth(report).map(|g| {
        format!(
            "{:.1}× from {} to {} concurrent requests ({})",
            g.factor,
            g.from,
            g.to,
            scenario_name(report, &g.scenario)
        )
    });
    [
        ("TTFT, single request", span(Metric::Ttft)),
        ("Generation speed, single request", span(Metric::DecodeTokS)),
        ("Throughput scaling", growth),
    ]
    .into_iter()
    .filter_map(|(label, text)| Some((label, text?)))
    .collect()
}

#[component]
pub fn HeaderSection() -> impl IntoView {
    let ctx = context();
    view! {
        <section class="report-header" data-testid="section-header">
            <p class="eyebrow">"Inference Benchmark"</p>
            {move || ctx.reports.with(|reports| reports.iter().enumerate().map(|(i, report)| {
                let heading = report.display_title();
                let synthetic = report.metadata.synthetic.then(|| {
                    let source = report.metadata.source.clone().unwrap_or_default();
                    view! {
                        <p class="synthetic-note">
                            <span class="badge badge-synthetic" data-testid="synthetic-badge">"Synthetic"</span>
                            " Not measured on real hardware. " {source}
                        </p>
                    }
                });
                let partial = match &report.status {
                    RunStatus::Partial { reason } => Some(view! {
                        <p class="warning" data-testid="partial-note">
                            "Partial run: only the levels shown were measured (" {reason.clone()} ")."
                        </p>
                    }),
                    RunStatus::Complete => None,
                };
                let warnings = report.warnings.clone();
                let params = test_parameters(report);
                view! {
                    <div class="report-identity">
                        {if i == 0 {
                            view! {
                                <h1 data-testid="report-title">{heading}</h1>
                                <p class="lede">"How many concurrent users this configuration can serve at each context length before performance degrades, and how fast it feels to each of them."</p>
                            }.into_any()
                        } else {
                            view! { <h2>"Compared with: " {heading}</h2> }.into_any()
                        }}
                        {synthetic}
                        {partial}
                        <dl class="facts">
                            <dt>"Model"</dt><dd data-testid="model">{report.metadata.model.id.clone()}</dd>
                            <dt>"GPU"</dt><dd data-testid="gpu">{report.metadata.hardware.gpu_label()}</dd>
                            {architecture(report).map(|a| view! { <dt>"Architecture"</dt><dd>{a}</dd> })}
                            <dt>"Scenarios"</dt>
                            <dd>{report.scenarios.iter().map(|s| s.name.clone()).collect::<Vec<_>>().join(", ")}</dd>
                            {params.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                        </dl>
                        {report.metadata.test.notes.clone().map(|n| view! { <p class="notes">{n}</p> })}
                        {(!warnings.is_empty()).then(|| view! { <RunWarnings warnings /> })}
                    </div>
                }
            }).collect_view())}
        </section>
    }
}

/// Warnings the run recorded (late requests, wrong token counts…). A few are listed as they
/// are; a long list folds under its count, so it does not push the report below the fold.
#[component]
fn RunWarnings(warnings: Vec<String>) -> impl IntoView {
    let open = warnings.len() <= FOLD_WARNINGS_ABOVE;
    let summary = match warnings.len() {
        1 => "1 warning from the run".to_string(),
        n => format!("{n} warnings from the run"),
    };
    view! {
        <details class="warnings" data-testid="report-warnings" open=open>
            <summary>{summary}</summary>
            <ul>{warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
        </details>
    }
}

/// More warnings than this start folded.
const FOLD_WARNINGS_ABOVE: usize = 3;

#[component]
pub fn HighlightsSection() -> impl IntoView {
    let ctx = context();
    let figures = Memo::new(move |_| {
        let ttft = ctx.view.with(|v| v.queue_ttft_s);
        ctx.reports.with(|r| {
            r.first()
                .map(|report| {
                    let h = highlights(report, ttft);
                    (cards(report, &h), key_findings(report))
                })
                .unwrap_or_default()
        })
    });
    view! {
        <section class="highlights" data-testid="section-highlights">
            <h2 class="visually-hidden">"Highlights"</h2>
            <HighlightGrid>
                {move || figures.get().0.into_iter().map(|c| view! {
                    <HighlightCard value=c.value label=c.label context=c.context testid=c.testid />
                }).collect_view()}
            </HighlightGrid>
            <table class="data-table key-findings" data-testid="key-findings">
                <caption>"Key findings"</caption>
                <tbody>
                    {move || figures.get().1.into_iter().map(|(label, text)| view! {
                        <tr><th scope="row">{label}</th><td>{text}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p class="muted">"\u{201c}Concurrent requests\u{201d} throughout are requests in flight at once. In applications where people pause between messages (chat, coding assistants), each request slot typically serves 4–5 active users."</p>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::sample;

    #[test]
    fn start_times_read_to_the_second_with_their_zone() {
        assert_eq!(
            readable_time("2026-11-23T07:25:51.519956458+00:00"),
            "2026-11-23 07:25:51 UTC"
        );
        assert_eq!(
            readable_time("2026-11-23T07:25:51Z"),
            "2026-11-23 07:25:51 UTC"
        );
        assert_eq!(
            readable_time("2026-11-23T09:25:51.5+02:00"),
            "2026-11-23 09:25:51 +02:00"
        );
        assert_eq!(readable_time("2026-11-23T07:25:51"), "2026-11-23 07:25:51");
        for odd in [
            "yesterday",
            "",
            "2026-11-23",
            "2026-11-23T7:25",
            "ünïcode-é-Tß",
        ] {
            assert_eq!(readable_time(odd), odd);
        }
    }

    #[test]
    fn cards_read_the_highlights() {
        let report = sample();
        let h = highlights(&report, 3.0);
        let cards = cards(&report, &h);
        assert_eq!(cards.len(), 5);
        let peak = h.peak_decode.as_ref().unwrap();
        assert_eq!(
            cards[0].value,
            format!("{} tok/s", format_number(peak.value))
        );
        assert!(
            cards[0].context.contains("single user"),
            "{}",
            cards[0].context
        );
        assert!(
            cards[3].context.ends_with("TTFT ≤ 3 s"),
            "{}",
            cards[3].context
        );
        assert!(cards[4].value.ends_with('%'));
        // A limit no tested depth reaches: the deepest tested is a lower bound.
        let loose = highlights(&report, 1e6);
        assert!(super::cards(&report, &loose)[3].value.starts_with("≥ "));
    }

    /// A report without burst runs has no queue depth, which is not a failed one: the card
    /// gives the peak-throughput scenario's scaling efficiency at its top level instead.
    #[test]
    fn without_burst_runs_the_fourth_card_is_scaling_efficiency() {
        let mut report = sample();
        report.series.retain(|s| s.mode != LoadMode::Burst);
        let card = &cards(&report, &highlights(&report, 3.0))[3];
        assert_eq!(
            (card.label, card.value.as_str(), card.context.as_str()),
            (
                "Scaling Efficiency",
                "40.9%",
                "Chatbot at 32 concurrent, vs ideal linear scaling"
            )
        );
    }

    /// The Step-3.7-Flash run's key findings, as reference 003 states its own.
    #[test]
    fn key_findings_span_contexts_and_concurrency() {
        let report: Report = serde_json::from_str(include_str!(
            "../../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
        ))
        .unwrap();
        let rows = key_findings(&report);
        assert_eq!(
            rows,
            [
                (
                    "TTFT, single request",
                    "0.353 s (1K context) → 35.3 s (96K context)".to_string()
                ),
                (
                    "Generation speed, single request",
                    "95 tok/s (1K context) → 88 tok/s (96K context)".to_string()
                ),
                (
                    "Throughput scaling",
                    "2.6× from 1 to 5 concurrent requests (Code Completion (1K))".to_string()
                ),
            ]
        );
        // One scenario: no arrow; one level: no growth.
        let mut single = sample();
        single.scenarios.truncate(1);
        let kept = single.scenarios[0].id.clone();
        single.series.retain(|s| s.scenario == kept);
        for s in &mut single.series {
            s.levels.truncate(1);
        }
        let rows = key_findings(&single);
        assert_eq!(rows.len(), 2);
        assert!(!rows[0].1.contains('→'), "{rows:?}");
    }

    #[test]
    fn header_facts() {
        let report = sample();
        assert_eq!(
            architecture(&report).unwrap(),
            "35B MoE, 3B active params, FP8"
        );
        let params = test_parameters(&report);
        let caching = params.iter().find(|p| p.0 == "Prompt caching").unwrap();
        assert!(
            caching.1.starts_with("No: ") && caching.1.contains("worst cases"),
            "{caching:?}"
        );
        let mut stated = report.clone();
        stated.metadata.model.organization = Some("stepfun-ai".into());
        stated.metadata.hardware.vram_gb = Some(191.25);
        let params = test_parameters(&stated);
        assert_eq!(
            params[..2],
            [
                ("Organization", "stepfun-ai".to_string()),
                ("VRAM", "191.2 GB".to_string())
            ]
        );
        assert!(params.contains(&("Speculative decoding", "No".to_string())));
        // What was tested, as the reports' test parameters state it.
        assert!(params.contains(&(
            "Load tested",
            "1–32 concurrent requests (peak); queue depth 1–256 (burst)".to_string()
        )));
        assert!(params.contains(&(
            "Context lengths",
            "1K–32K input tokens, 256 output tokens per request".to_string()
        )));
        let step: Report = serde_json::from_str(include_str!(
            "../../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
        ))
        .unwrap();
        assert!(test_parameters(&step).contains(&(
            "Context lengths",
            "1K–96K input tokens, 128–1,024 output tokens per request".to_string()
        )));
        let mut peak_only = report.clone();
        peak_only.series.retain(|s| s.mode == LoadMode::Peak);
        for s in &mut peak_only.series {
            s.levels.truncate(1);
        }
        let params = test_parameters(&peak_only);
        assert!(params.contains(&("Load tested", "1 concurrent request (peak)".to_string())));
        let mut untitled = report.clone();
        untitled.metadata.title = None;
        assert_eq!(
            untitled.display_title(),
            "Qwen/Qwen3.5-35B-A3B-FP8 on 1x NVIDIA H100 80GB HBM3"
        );
    }
}
