//! Technical deep dive: queue wait, per-user prefill speed, ITL and scaling efficiency against
//! context length, one line per concurrency.

use infermeter_report::analysis::format::format_number;
use leptos::prelude::*;

use super::findings::{context_phrase, highest, latency_range, scaling_at_max};
use super::{context, read_sources, ChartBlock};
use crate::charts::deep_dive::prefill_peaks;
use crate::charts::plot::Plot;

fn queue_finding(p: &Plot) -> Option<String> {
    let (_, text) = highest(p)?;
    Some(format!(
        "The longest queue wait observed was {text}. Rising queue times signal GPU saturation: requests wait for resources rather than being processed immediately."
    ))
}

fn prefill_finding(p: &Plot) -> Option<String> {
    let (_, text) = highest(p)?;
    Some(format!("The fastest per-user prefill observed was {text}."))
}

fn itl_finding(p: &Plot) -> Option<String> {
    latency_range(p, "inter-token latency")
}

#[component]
pub fn DeepDiveSection() -> impl IntoView {
    let ctx = context();
    let peaks = move || {
        read_sources(ctx, |s, v| {
            s.first()
                .map(|m| prefill_peaks(m, v.stat))
                .unwrap_or_default()
        })
    };
    view! {
        <section id="deep-dive" data-testid="section-deep-dive">
            <h2>"Technical Deep Dive"</h2>
            <p>"Infrastructure-level metrics that explain user-facing performance: queue wait, prefill throughput, token generation latency and scaling efficiency across context lengths. They help diagnose bottlenecks and validate infrastructure decisions."</p>
            <ChartBlock id="deep_dive.queue_wait" title="Queue Wait Times"
                intro="Time a request waits for GPU availability before processing begins, as reported by the server. Queue wait is part of TTFT; breaking it out shows whether latency comes from GPU saturation (high queue wait) or context processing (high prefill time). Queue wait and prefill are measured independently and may not sum exactly to TTFT."
                caption="Queue wait (s) by context length, one line per concurrency level."
                finding=queue_finding />
            <ChartBlock id="deep_dive.prefill" title="Per-User Prefill Speed"
                intro="Rate at which the model processes input context before generating output (input tokens / TTFT). Prefill speed decides the non-queue part of TTFT. A line that peaks before the longest context reflects saturation or engine limits such as chunked prefill."
                caption="Per-user prefill speed (tok/s) by context length, one line per concurrency level."
                finding=prefill_finding />
            {move || {
                let rows = peaks();
                (!rows.is_empty()).then(|| view! {
                    <div class="table-scroll"><table class="data-table" data-testid="prefill-peaks-table">
                        <thead><tr><th scope="col">"Concurrent requests"</th><th scope="col">"Peaks at"</th><th scope="col">"Peak speed"</th></tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| view! {
                                <tr>
                                    <th scope="row">{r.concurrency}</th>
                                    <td>{context_phrase(f64::from(r.input_tokens))}</td>
                                    <td>{format!("{} tok/s", format_number(r.tok_s))}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table></div>
                })
            }}
            <ChartBlock id="deep_dive.itl" title="Inter-Token Latency"
                intro="Time between consecutive tokens during generation; it decides how smooth responses look and diagnoses token-level behaviour."
                caption="Inter-token latency (ms) by context length, one line per concurrency level."
                finding=itl_finding />
            <ChartBlock id="deep_dive.scaling" title="Scaling Efficiency"
                intro="Percentage of ideal linear scaling achieved as concurrency increases. 100% means doubling concurrent requests doubles total throughput with no per-user loss. High efficiency at your target concurrency means headroom; sharply dropping efficiency means diminishing returns."
                caption="Scaling efficiency (%) by context length, one line per concurrency level."
                finding=scaling_at_max />
        </section>
    }
}
