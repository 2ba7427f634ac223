//! Technical deep dive: system throughput, generation speed, TTFT, queue wait, per-user prefill
//! speed, ITL and scaling efficiency against context length, one line per concurrency.

use infermeter_report::analysis::format::format_number;
use leptos::prelude::*;

use super::fastest::{decode_finding, itl_finding, ttft_range_finding};
use super::findings::{context_phrase, highest, position, scaling_at_max, with_unit};
use super::{context, read_sources, ChartBlock};
use crate::charts::deep_dive::prefill_peaks;
use crate::charts::plot::{Line, Plot};
use crate::components::TableScroll;

/// "At 5 concurrent, system throughput goes from 194.4 tok/s at 1K context to 16.2 tok/s at
/// 96K context.": along the main report's line of the highest concurrency; then where adding
/// requests stops raising throughput, as reference 003 reads its chart.
fn throughput_finding(p: &Plot) -> Option<String> {
    let lines: Vec<&Line> = p.lines.iter().filter(|l| l.report == 0).collect();
    let (lowest, top) = (*lines.first()?, *lines.last()?);
    let (&(x0, first), &(x1, last)) = (top.points.first()?, top.points.last()?);
    let unit = &p.y.first()?.unit;
    if x0 == x1 {
        return None;
    }
    let mut text = format!(
        "At {}, system throughput goes from {} at {} to {} at {}.",
        top.name,
        with_unit(first, unit),
        position(p.x, x0),
        with_unit(last, unit),
        position(p.x, x1)
    );
    // The longest contexts at which the top concurrency gives no more than the lowest.
    let no_gain = top
        .points
        .iter()
        .rev()
        .map_while(|&(x, v)| {
            let at_lowest = lowest.points.iter().find(|q| q.0 == x)?.1;
            (v <= at_lowest).then_some((x, v, at_lowest))
        })
        .last();
    if let Some((x, v, at_lowest)) = no_gain.filter(|_| lines.len() > 1) {
        let versus = format!(
            "total throughput at {} is no higher than at {}",
            top.name, lowest.name
        );
        text.push(' ');
        text.push_str(&if x == x0 {
            format!("At every context length, {versus}: batching does not pay off here.")
        } else {
            format!(
                "From {} up, {versus} ({} vs {} {unit} at {}): batching stops paying off there.",
                position(p.x, x),
                format_number(v),
                format_number(at_lowest),
                position(p.x, x)
            )
        });
    }
    Some(text)
}

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
    // Reference 003's worked example, for a report measured without prompt caching.
    let uncached = move || {
        ctx.reports.with(|r| {
            r.first()
                .is_some_and(|r| r.metadata.test.prompt_caching != Some(true))
        })
    };
    view! {
        <section id="deep-dive" data-testid="section-deep-dive">
            <h2>"Technical Deep Dive"</h2>
            <p>"How context length shapes performance, one line per concurrency level: system throughput, each user's generation speed and time to first token, then the infrastructure-level metrics that explain them (queue wait, prefill throughput, token generation latency and scaling efficiency). They help diagnose bottlenecks and validate infrastructure decisions."</p>
            <ChartBlock id="deep_dive.throughput" title="System Throughput by Context Length"
                intro="Aggregate output tokens per second across all concurrent requests, at each context length. Longer contexts leave less of the GPU for decoding, so total throughput falls as context grows."
                caption="System throughput (tok/s) by context length, one line per concurrency level."
                finding=throughput_finding />
            <ChartBlock id="deep_dive.decode" title="Per-User Generation Speed by Context Length"
                intro="The speed at which text streams into each user's response, at each context length. As concurrency increases, per-user speed decreases since GPU resources are shared across requests."
                caption="Per-user generation speed (tok/s) by context length, one line per concurrency level."
                finding=decode_finding />
            <ChartBlock id="deep_dive.ttft" title="Time to First Token by Context Length"
                intro="The primary metric for perceived responsiveness: time from request submission to the first response token, queue wait (grows with concurrency) plus prefill (grows with context length). At low concurrency prefill dominates; under load, queue wait takes over."
                caption="TTFT (s) by context length, one line per concurrency level."
                finding=ttft_range_finding />
            <Show when=uncached>
                <p class="muted" data-testid="caching-example"><strong>"Important note about caching. "</strong>"These runs prefilled every context in full, with no prompt caching, so TTFT is a worst case. With caching, only new tokens need processing: a 64K conversation that adds 1K of new context would see a TTFT close to the 1K results, not the 64K ones. For chatbots, coding assistants and multi-turn agents, which build context turn by turn, TTFT with caching would be far lower than these results."</p>
            </Show>
            <ChartBlock id="deep_dive.queue_wait" title="Queue Wait Times"
                intro="Time a request waits for GPU availability before processing begins, as reported by the server. Queue wait is part of TTFT; breaking it out shows whether latency comes from GPU saturation (high queue wait) or context processing (high prefill time). Queue wait and prefill are measured independently and may not sum exactly to TTFT: under heavy load, chunked prefill and preemptions can make them overlap, so queue wait plus prefill can exceed TTFT. Use queue wait for capacity planning and finding bottlenecks, and TTFT for what users actually wait before streaming begins."
                caption="Queue wait (s) by context length, one line per concurrency level."
                finding=queue_finding />
            <ChartBlock id="deep_dive.prefill" title="Per-User Prefill Speed"
                intro="Rate at which the model processes input context before generating output (input tokens / TTFT). Prefill speed decides the non-queue part of TTFT. A line that peaks before the longest context reflects saturation or engine limits such as chunked prefill."
                caption="Per-user prefill speed (tok/s) by context length, one line per concurrency level."
                finding=prefill_finding />
            {move || {
                let rows = peaks();
                (!rows.is_empty()).then(|| view! {
                    <TableScroll label="Prefill speed peaks"><table class="data-table" data-testid="prefill-peaks-table">
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
                    </table></TableScroll>
                })
            }}
            <ChartBlock id="deep_dive.itl" title="Inter-Token Latency"
                intro="Time between consecutive tokens during generation; it decides how smooth responses look and diagnoses token-level behaviour."
                caption="Inter-token latency (ms) by context length, one line per concurrency level. Lower is better: under 20ms feels instantaneous."
                finding=itl_finding />
            <ChartBlock id="deep_dive.scaling" title="Scaling Efficiency"
                intro="Percentage of ideal linear scaling achieved as concurrency increases. 100% means doubling concurrent requests doubles total throughput with no per-user loss. High efficiency at your target concurrency means headroom; sharply dropping efficiency means diminishing returns."
                caption="Scaling efficiency (%) by context length, one line per concurrency level."
                finding=scaling_at_max />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::deep_dive::{decode, throughput, ttft};
    use crate::charts::test_support::with_sources;
    use crate::state::ViewState;

    /// The Step-3.7-Flash run by context, worded as reference 003 reads its own charts.
    #[test]
    fn context_findings_read_the_step_run() {
        let report: infermeter_report::Report = serde_json::from_str(include_str!(
            "../../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
        ))
        .unwrap();
        let view = ViewState::default();
        let p = with_sources(&report, |s| throughput(s, &view));
        assert_eq!(
            throughput_finding(&p).unwrap(),
            "At 5 concurrent, system throughput goes from 194.4 tok/s at 1K context to 16.2 \
             tok/s at 96K context. From 64K context up, total throughput at 5 concurrent is no \
             higher than at 1 concurrent (25.1 vs 28.8 tok/s at 64K context): batching stops \
             paying off there."
        );
        let mut flat = p.clone();
        let top = flat.lines.last_mut().unwrap();
        top.points.iter_mut().for_each(|q| q.1 = 1.0);
        assert!(throughput_finding(&flat).unwrap().ends_with(
            "At every context length, total throughput at 5 concurrent is no higher than at 1 \
             concurrent: batching does not pay off here."
        ));
        // The sample's batching pays off at every context: no such sentence.
        let sample = crate::charts::test_support::sample();
        let p = with_sources(&sample, |s| throughput(s, &view));
        assert!(!throughput_finding(&p).unwrap().contains("batching"));
        let p = with_sources(&report, |s| decode(s, &view));
        assert_eq!(
            decode_finding(&p).unwrap(),
            "Per-user decode speed ranges from 95 tok/s (1 concurrent, 1K context) down to 6.8 \
             tok/s (5 concurrent, 96K context). By the How Fast Is This? scale, that is very fast \
             at best and slow at worst."
        );
        let p = with_sources(&report, |s| ttft(s, &view));
        assert_eq!(
            ttft_range_finding(&p).unwrap(),
            "Best TTFT is 0.353 s (1 concurrent, 1K context), worst case 40 s (5 concurrent, 96K \
             context). By the How Responsive Is This? scale, that is instant at best and \
             frustrating at worst. Industry references: ~50 ms at 1K context, ~2 s at 32K, ~18 s \
             at 128K on top hardware."
        );
    }
}
