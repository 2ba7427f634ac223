//! Report header (what was measured, on what, how) and the highlight cards.

use infermeter_report::analysis::workloads::workloads_text;
use infermeter_report::{Provenance, RunStatus};
use leptos::prelude::*;

use super::{context, read_main_findings};
use crate::components::{HighlightCard, HighlightGrid};
use crate::facts::{architecture, test_parameters};

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
                            {workloads_text(report).map(|w| view! { <dt>"Workloads"</dt><dd data-testid="workloads">{w}</dd> })}
                            {params.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                        </dl>
                        {report.metadata.test.notes.clone().map(|n| view! { <p class="notes">{n}</p> })}
                        {report.metadata.provenance.as_ref().map(|p| view! { <ImportNotes provenance=p.clone() /> })}
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

/// What an imported report's files did not hold, so which parts of the page stay empty.
#[component]
fn ImportNotes(provenance: Provenance) -> impl IntoView {
    view! {
        <div class="import-notes" data-testid="import-notes">
            <p>"Imported from " {provenance.tool.clone()} "'s result files: every figure is the tool's own, by its definitions (see Methodology). What the files do not hold stays empty:"</p>
            <ul>{provenance.absent.into_values().map(|why| view! { <li data-testid="absent-note">{why}</li> }).collect_view()}</ul>
        </div>
    }
}

/// More warnings than this start folded.
const FOLD_WARNINGS_ABOVE: usize = 3;

#[component]
pub fn HighlightsSection() -> impl IntoView {
    let ctx = context();
    let figures = Memo::new(move |_| {
        read_main_findings(ctx, |f| {
            let cards: Vec<_> = f
                .cards()
                .into_iter()
                .map(|c| {
                    let note = c.indicative_note(f.options.stat);
                    (c, note)
                })
                .collect();
            (cards, f.key_findings())
        })
        .unwrap_or_default()
    });
    view! {
        <section class="highlights" data-testid="section-highlights">
            <h2 class="visually-hidden">"Highlights"</h2>
            <HighlightGrid>
                {move || figures.get().0.into_iter().map(|(c, note)| view! {
                    <HighlightCard value=c.value label=c.label context=c.context testid=format!("highlight-{}", c.id) note />
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
            <p class="muted" data-testid="slots-note">{move || slots_note(super::users::has_sessions(ctx))}</p>
        </section>
    }
}

/// What "concurrent requests" means here. How many people a request slot serves is not stated
/// unless the report measured it: a report with sessions counts its users.
fn slots_note(measured_users: bool) -> &'static str {
    if measured_users {
        "\u{201c}Concurrent requests\u{201d} are requests in flight at once. This report also ran users, each sending turns with think time between them: the Users, Sessions and Caching section counts those users directly."
    } else {
        "\u{201c}Concurrent requests\u{201d} throughout are requests in flight at once. People who pause between messages hold a slot only while their request runs; how many such users a slot serves is measured by a users run (a suite's [users] levels), not assumed here."
    }
}
