//! "When am I the fastest?" (peak mode) and the interpolation cursor.

use infermeter_report::analysis::coverage::concurrency_domain;
use leptos::prelude::*;

use super::{context, read_sources, ChartBlock, Section, FASTEST};
use crate::charts::registry::{
    FASTEST_DECODE, FASTEST_DECODE_RANGE, FASTEST_ITL, FASTEST_SCALING, FASTEST_TTFT_RANGE,
};
use crate::tables::cursor::{cursor_rows, CURSOR_COLUMNS};

#[component]
pub fn CursorPanel() -> impl IntoView {
    let ctx = context();
    let domain = move || {
        ctx.reports
            .with(|r| concurrency_domain(r.iter().map(|r| &**r)))
    };
    let rows = move || read_sources(ctx, cursor_rows);
    let at = move || ctx.view.with(|v| v.at);
    let set_at = move |value: String| {
        let parsed = value.parse::<u32>().ok();
        ctx.view.update(|v| v.at = parsed.filter(|n| *n > 0));
    };
    view! {
        {move || domain().map(|span| { let (lo, hi) = (span.low, span.high); view! {
            <div class="cursor-panel" data-testid="cursor-panel">
                <label class="control">
                    <span>"Concurrency cursor"</span>
                    <input type="range" data-testid="cursor" min=lo max=hi step="1"
                        aria-valuetext=move || at().map_or("off".to_string(), |n| format!("{n} concurrent users"))
                        prop:value=move || at().unwrap_or(lo).to_string()
                        on:input=move |ev| set_at(event_target_value(&ev)) />
                    <output data-testid="cursor-value">
                        {move || at().map_or("off".to_string(), |n| format!("{n} users"))}
                    </output>
                </label>
                <button type="button" data-testid="cursor-clear" on:click=move |_| ctx.view.update(|v| v.at = None)>
                    "Clear"
                </button>
                <p class="muted">
                    "Move the cursor to estimate any concurrency between measured levels. Values between levels are "
                    <em>"interpolated"</em>" (monotone curve through the measured points), never extrapolated beyond them."
                </p>
                <Show when=move || at().is_some()>
                    <table class="cursor-table" data-testid="cursor-table">
                        <thead><tr>
                            <th scope="col">"Series"</th>
                            {CURSOR_COLUMNS.iter().map(|c| view! { <th scope="col">{*c}</th> }).collect_view()}
                        </tr></thead>
                        <tbody>
                            {move || rows().into_iter().map(|row| view! {
                                <tr>
                                    <th scope="row">{row.series}</th>
                                    {row.cells.into_iter().map(|cell| match cell {
                                        Some((value, measured)) => {
                                            let kind = if measured { "measured" } else { "interpolated" };
                                            view! {
                                                <td data-kind=kind>{value}" "
                                                    <span class=format!("tag tag-{kind}") data-testid="cursor-kind">{kind}</span>
                                                </td>
                                            }.into_any()
                                        }
                                        None => view! { <td class="muted">"outside measured range"</td> }.into_any(),
                                    }).collect_view()}
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </Show>
            </div>
        }})}
    }
}

#[component]
pub fn FastestSection() -> impl IntoView {
    view! {
        <Section info=&FASTEST>
            <p>"How fast is this model when the GPU is fully dedicated to my requests? We run exactly N requests simultaneously with no queuing: every request gets immediate GPU attention. This isolates the hardware's raw capability from any scheduling overhead, giving you the best-case per-user experience at each concurrency level."</p>
            <CursorPanel />
            <ChartBlock chart=&FASTEST_DECODE />
            <ChartBlock chart=&FASTEST_ITL />
            <ChartBlock chart=&FASTEST_SCALING />
            <ChartBlock chart=&FASTEST_DECODE_RANGE />
            <ChartBlock chart=&FASTEST_TTFT_RANGE />
        </Section>
    }
}
