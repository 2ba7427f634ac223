//! "When to scale up" (burst mode): TTFT, ITL and decode speed against queue depth, and the
//! max safe queue depth per scenario.

use infermeter_report::analysis::Metric;
use leptos::prelude::*;

use super::findings::{best_worst, latency_range, sluggish_verdict, speed_range};
use super::{context, read_sources, ChartBlock};
use crate::charts::fastest::sluggish_itl_s;
use crate::charts::plot::Plot;
use crate::charts::scale_up::depth_cards;
use crate::components::{HighlightCard, HighlightGrid, NumberField};

fn ttft_finding(p: &Plot) -> Option<String> {
    Some(format!(
        "{} TTFT increases with queue depth because new prefills queue behind active decode operations. This is what users experience under production burst load.",
        best_worst(p, "TTFT under queue saturation: best case")?
    ))
}

fn itl_finding(p: &Plot) -> Option<String> {
    let range = latency_range(p, "inter-token latency")?;
    let verdict = sluggish_verdict(p, Metric::Itl.to_display(sluggish_itl_s()))?;
    Some(format!("{range} {verdict}"))
}

fn decode_finding(p: &Plot) -> Option<String> {
    speed_range(p, "Per-user decode speed")
}

#[component]
pub fn ScaleUpSection() -> impl IntoView {
    let ctx = context();
    let limit = move || ctx.view.with(|v| v.queue_ttft_s);
    let cards = move || read_sources(ctx, depth_cards);
    let has_burst = move || !cards().is_empty();
    view! {
        <section id="scale-up" data-testid="section-scale-up">
            <h2>"When to Scale Up"</h2>
            <Show when=has_burst fallback=|| view! {
                <p class="muted" data-testid="burst-missing-note">"This report has no burst measurements (requests sent all at once), so queue behaviour cannot be shown."</p>
            }>
            <p>"What do your users actually experience when requests pile up? Instead of holding a fixed number of requests on the GPU, we send all requests at once, mimicking a burst of simultaneous traffic. New requests must queue behind in-progress work, so TTFT climbs far above peak conditions. Use these numbers for SLA planning and capacity decisions."</p>
            <NumberField label="TTFT limit (s)" testid="queue-ttft-input" min="0.1" step="0.1"
                value=limit accept={|v| v > 0.0}
                set=move |v| ctx.view.update(|s| s.queue_ttft_s = v) />
            <ChartBlock id="scale_up.ttft" title="TTFT vs Queue Depth"
                intro="The most important chart for production planning. TTFT explodes under queue saturation because arriving requests must wait while the GPU finishes earlier prefills and decodes. The dashed line marks the TTFT limit beyond which users perceive the system as slow."
                caption="TTFT (seconds) at each queue depth, measured under simultaneous burst load."
                finding=ttft_finding />
            <ChartBlock id="scale_up.itl" title="Inter-Token Latency vs Queue Depth"
                intro="The streaming smoothness your users experience under queued traffic. Unlike peak conditions where ITL rises steadily with concurrency, queued ITL can plateau when the engine's continuous batching shares the decode pipeline across all active sequences."
                caption="Inter-token latency (ms) at each queue depth. The 70ms threshold marks where streaming turns sluggish: the memory-bandwidth ceiling of large MoE models."
                finding=itl_finding />
            <ChartBlock id="scale_up.decode" title="Per-User Decode Speed vs Queue Depth"
                intro="The per-scenario breakdown of decode speed under queued load. Decode speed (ITL) is usually more robust than TTFT when the system is heavily queued."
                caption="Per-user decode speed (tok/s) at each queue depth. One line per context-length scenario."
                finding=decode_finding />
            <div data-testid="safe-queue-cards">
                <HighlightGrid>
                    {move || cards().into_iter().map(|c| view! {
                        <HighlightCard value=c.value_text() label="Max Safe Queue Depth" context=c.caption()
                            testid="safe-queue-card" />
                    }).collect_view()}
                </HighlightGrid>
            </div>
            </Show>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::scale_up::ttft;
    use crate::charts::test_support::*;
    use crate::state::ViewState;

    /// The sample's burst TTFT, worded as reference 001 words it.
    #[test]
    fn ttft_finding_reads_like_the_reference() {
        let report = sample();
        let p = with_sources(&report, |s| ttft(s, &ViewState::default()));
        assert_eq!(
            ttft_finding(&p).unwrap(),
            "TTFT under queue saturation: best case 0.19 s (Chatbot, 1 user), worst case 86.5 s \
             (Tool Calling Agentic, 256 queue depth). TTFT increases with queue depth because \
             new prefills queue behind active decode operations. This is what users experience \
             under production burst load."
        );
    }
}
