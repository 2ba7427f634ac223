//! Technical deep dive: system throughput, generation speed, TTFT, queue wait, per-user prefill
//! speed, ITL and scaling efficiency against context length, one line per concurrency. In a
//! comparison the charts draw one report at a time, the others a click away ([`ReportPick`]).

use leptos::prelude::*;

use super::{context, read_main_findings, ChartBlock, Section, DEEP_DIVE};
use crate::charts::registry::{
    CONTEXT_DECODE, CONTEXT_ITL, CONTEXT_PREFILL, CONTEXT_QUEUE_WAIT, CONTEXT_SCALING,
    CONTEXT_THROUGHPUT, CONTEXT_TTFT, LENGTHS_E2E, LENGTHS_HISTOGRAM, LENGTHS_TTFT,
};
use crate::components::TableScroll;
use crate::state::DeepDivePick;
use infermeter_report::analysis::Metric;
use infermeter_report::lengths::LevelLengths;

/// Where per-user prefill speed peaks at each concurrency (reference 003's table), of the main
/// report.
#[component]
fn PrefillPeaks() -> impl IntoView {
    let ctx = context();
    let rows = move || {
        read_main_findings(ctx, |f| {
            f.context
                .prefill_peaks
                .iter()
                .map(|p| {
                    (
                        p.concurrency,
                        p.at.context_phrase(),
                        p.at.value_text(Metric::PrefillTokS),
                    )
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    };
    move || {
        let rows = rows();
        (!rows.is_empty()).then(|| view! {
            <TableScroll label="Prefill speed peaks"><table class="data-table" data-testid="prefill-peaks-table">
                <thead><tr><th scope="col">"Concurrent requests"</th><th scope="col">"Peaks at"</th><th scope="col">"Peak speed"</th></tr></thead>
                <tbody>
                    {rows.into_iter().map(|(concurrency, at, speed)| view! {
                        <tr><th scope="row">{concurrency}</th><td>{at}</td><td>{speed}</td></tr>
                    }).collect_view()}
                </tbody>
            </table></TableScroll>
        })
    }
}

/// In a comparison, which reports the section's charts draw: a button per report (the main one
/// pressed at first) and one for all of them together. Nothing for a single report.
#[component]
fn ReportPick() -> impl IntoView {
    let ctx = context();
    let labels = ctx.labels.get_untracked();
    let count = labels.len();
    let picked = Memo::new(move |_| ctx.view.with(|v| v.deep_dive.normalized(count)));
    let choices = labels
        .into_iter()
        .enumerate()
        .map(|(i, label)| (DeepDivePick::of(i), label))
        .chain([(DeepDivePick::All, "All together".to_string())]);
    (count > 1).then(|| {
        view! {
            <div class="report-pick" role="group" data-testid="deep-dive-pick"
                aria-label="Reports the charts of this section draw">
                <span class="muted">"Charts of "</span>
                {choices.map(|(pick, label)| view! {
                    <button type="button" data-testid="deep-dive-report"
                        aria-pressed=move || (picked.get() == pick).to_string()
                        on:click=move |_| ctx.view.update(|v| v.deep_dive = pick)>{label}</button>
                }).collect_view()}
            </div>
        }
    })
}

#[component]
pub fn DeepDiveSection() -> impl IntoView {
    let ctx = context();
    // Reference 003's worked example, for a report measured without prompt caching.
    let uncached = move || {
        ctx.reports.with(|r| {
            r.first()
                .is_some_and(|r| r.metadata.test.prompt_caching != Some(true))
        })
    };
    // Requests of varied lengths (a prompt file, drawn lengths): each request's latency by its
    // own length. A report of fixed lengths shows none of it.
    let varied = move || {
        ctx.reports
            .with(|r| r.iter().any(|r| LevelLengths::exist_in(r)))
    };
    view! {
        <Section info=&DEEP_DIVE>
            <p>"How context length shapes performance, one line per concurrency level: system throughput, each user's generation speed and time to first token, then the infrastructure-level metrics that explain them (queue wait, prefill throughput, token generation latency and scaling efficiency). They help diagnose bottlenecks and validate infrastructure decisions."</p>
            <ReportPick />
            <ChartBlock chart=&CONTEXT_THROUGHPUT />
            <ChartBlock chart=&CONTEXT_DECODE />
            <ChartBlock chart=&CONTEXT_TTFT />
            <Show when=uncached>
                <p class="muted" data-testid="caching-example"><strong>"Important note about caching. "</strong>"These runs prefilled every context in full, with no prompt caching, so TTFT is a worst case. With caching, only new tokens need processing: a 64K conversation that adds 1K of new context would see a TTFT close to the 1K results, not the 64K ones. For chatbots, coding assistants and multi-turn agents, which build context turn by turn, TTFT with caching would be far lower than these results."</p>
            </Show>
            <ChartBlock chart=&CONTEXT_QUEUE_WAIT />
            <ChartBlock chart=&CONTEXT_PREFILL />
            <PrefillPeaks />
            <ChartBlock chart=&CONTEXT_ITL />
            <ChartBlock chart=&CONTEXT_SCALING />
            <Show when=varied>
                <ChartBlock chart=&LENGTHS_TTFT />
                <ChartBlock chart=&LENGTHS_E2E />
                <ChartBlock chart=&LENGTHS_HISTOGRAM />
            </Show>
        </Section>
    }
}
