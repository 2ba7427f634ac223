//! "When to scale up" (burst mode): TTFT, ITL and decode speed against queue depth, and the
//! max safe queue depth per scenario.

use infermeter_report::analysis::findings::headline::depth_caption;
use leptos::prelude::*;

use super::{context, ChartBlock, Section, SCALE_UP};
use crate::charts::labelled;
use crate::charts::registry::{BURST_DECODE, BURST_ITL, BURST_TTFT};
use crate::components::{HighlightCard, HighlightGrid, NumberField};

/// (value, caption) of every scenario's safe-queue card, of every report shown: their
/// captions name the report when several are.
fn depth_cards(ctx: super::ReportContext) -> Vec<(String, String)> {
    ctx.findings.with(|all| {
        ctx.labels.with(|labels| {
            let comparing = all.len() > 1;
            all.iter()
                .zip(labels)
                .flat_map(|(f, label)| {
                    f.burst.safe_depths.iter().map(move |d| {
                        let name = labelled(label, &d.scenario_name, comparing);
                        (d.value_text(), depth_caption(&name, f.options.queue_ttft_s))
                    })
                })
                .collect()
        })
    })
}

#[component]
pub fn ScaleUpSection() -> impl IntoView {
    let ctx = context();
    let limit = move || ctx.view.with(|v| v.queue_ttft_s);
    let cards = move || depth_cards(ctx);
    let has_burst = move || !cards().is_empty();
    view! {
        <Section info=&SCALE_UP>
            <Show when=has_burst fallback=|| view! {
                <p class="muted" data-testid="burst-missing-note">"This report has no burst measurements (requests sent all at once), so queue behaviour cannot be shown."</p>
            }>
            <p>"What do your users actually experience when requests pile up? Instead of holding a fixed number of requests on the GPU, we send all requests at once, mimicking a burst of simultaneous traffic. New requests must queue behind in-progress work, so TTFT climbs far above peak conditions. Use these numbers for SLA planning and capacity decisions."</p>
            <NumberField label="TTFT limit (s)" testid="queue-ttft-input" min="0.1" step="0.1"
                value=limit accept={|v| v > 0.0}
                set=move |v| ctx.view.update(|s| s.queue_ttft_s = v) />
            <ChartBlock chart=&BURST_TTFT />
            <ChartBlock chart=&BURST_ITL />
            <ChartBlock chart=&BURST_DECODE />
            <div data-testid="safe-queue-cards">
                <HighlightGrid>
                    {move || cards().into_iter().map(|(value, caption)| view! {
                        <HighlightCard value label="Max Safe Queue Depth" context=caption
                            testid="safe-queue-card" />
                    }).collect_view()}
                </HighlightGrid>
            </div>
            </Show>
        </Section>
    }
}
