//! "When am I the fastest?" (peak mode) and the interpolation cursor.

use infermeter_report::LoadMode;
use leptos::prelude::*;

use super::findings::{
    best_worst, extremes, graded, itl_verdict, latency_range, scaling_at_max, speed_range_between,
    speed_spread, with_unit,
};
use super::{context, read_sources, ChartBlock};
use crate::charts::fastest::{decode, instant_itl_s, itl, ttft};
use crate::charts::plot::Plot;
use crate::charts::{throughput, Source};
use crate::state::ViewState;
use infermeter_report::analysis::Metric;
use infermeter_report::presets::{band_for_speed, band_for_ttft, EXCELLENT_DECODE_TOK_S};

/// Lowest and highest peak concurrency measured in any loaded report: the cursor's range.
pub fn cursor_domain(sources: &[Source]) -> Option<(u32, u32)> {
    let levels = sources.iter().flat_map(|s| {
        s.analysis
            .report()
            .series
            .iter()
            .filter(|x| x.mode == LoadMode::Peak)
            .flat_map(|x| x.levels.iter().map(|l| l.concurrency))
    });
    levels.fold(None, |acc, c| match acc {
        None => Some((c, c)),
        Some((lo, hi)) => Some((lo.min(c), hi.max(c))),
    })
}

/// One row of the cursor table: a series and its estimate per metric ("—" outside its range).
#[derive(Debug, Clone, PartialEq)]
pub struct CursorRow {
    pub series: String,
    /// (value with unit, measured?) per column of [`CURSOR_COLUMNS`].
    pub cells: Vec<Option<(String, bool)>>,
}

pub const CURSOR_COLUMNS: [&str; 3] = ["Decode speed", "Inter-token latency", "System throughput"];

/// Estimates at the cursor from the same plots the charts draw (monotone interpolation between
/// measured levels, never beyond them).
pub fn cursor_rows(sources: &[Source], view: &ViewState) -> Vec<CursorRow> {
    let plots: [Plot; 3] = [
        decode(sources, view),
        itl(sources, view),
        throughput::system(sources, view),
    ];
    let mut rows: Vec<CursorRow> = Vec::new();
    for (column, plot) in plots.iter().enumerate() {
        let unit = plot.y[0].unit.clone();
        for (line, estimate) in plot.cursor_estimates() {
            let row = match rows.iter_mut().find(|r| r.series == line.name) {
                Some(row) => row,
                None => {
                    rows.push(CursorRow {
                        series: line.name.clone(),
                        cells: vec![None; CURSOR_COLUMNS.len()],
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            row.cells[column] = estimate.map(|e| (with_unit(e.value, &unit), e.measured));
        }
    }
    rows
}

/// The decode-speed range graded on How Fast Is This?; also read by the deep dive's chart by
/// context length.
pub(crate) fn decode_finding(p: &Plot) -> Option<String> {
    let (slowest, fastest) = extremes(p)?;
    let range = speed_range_between(p, "Per-user decode speed", &slowest, &fastest);
    let top_tier = if fastest.value >= EXCELLENT_DECODE_TOK_S {
        " Peak speed is excellent, matching top-tier single-user performance."
    } else {
        ""
    };
    Some(format!(
        "{range} {}{top_tier}",
        graded(
            "How Fast Is This?",
            band_for_speed(fastest.value),
            band_for_speed(slowest.value)
        )
    ))
}

pub(crate) fn itl_finding(p: &Plot) -> Option<String> {
    let range = latency_range(p, "inter-token latency")?;
    let verdict = itl_verdict(p, Metric::Itl.to_display(instant_itl_s()))?;
    Some(format!(
        "{range} {verdict} For reference, top-tier H200 SXM setups achieve 4–8 ms at short contexts."
    ))
}

#[component]
pub fn CursorPanel() -> impl IntoView {
    let ctx = context();
    let domain = move || read_sources(ctx, |s, _| cursor_domain(s));
    let rows = move || read_sources(ctx, cursor_rows);
    let at = move || ctx.view.with(|v| v.at);
    let set_at = move |value: String| {
        let parsed = value.parse::<u32>().ok();
        ctx.view.update(|v| v.at = parsed.filter(|n| *n > 0));
    };
    view! {
        {move || domain().map(|(lo, hi)| view! {
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
        })}
    }
}

#[component]
pub fn FastestSection() -> impl IntoView {
    view! {
        <section id="fastest" data-testid="section-fastest">
            <h2>"When Am I the Fastest?"</h2>
            <p>"How fast is this model when the GPU is fully dedicated to my requests? We run exactly N requests simultaneously with no queuing: every request gets immediate GPU attention. This isolates the hardware's raw capability from any scheduling overhead, giving you the best-case per-user experience at each concurrency level."</p>
            <CursorPanel />
            <ChartBlock id="fastest.decode" title="Decode Speed per Scenario"
                intro="How many tokens per second each user receives as more users share the GPU. A single user gets the fastest decode, and speed drops as concurrency grows because the GPU's memory bandwidth is split among them."
                caption="Per-user decode speed (tok/s) at each concurrent-user level. One line per context-length scenario."
                finding=decode_finding />
            <ChartBlock id="fastest.itl" title="Inter-Token Latency per Scenario"
                intro="The delay between consecutive tokens arriving in the stream: this is what decides whether the output feels fluid or choppy. Under ~20ms feels instant, 20–70ms feels noticeably slower but acceptable, and above 70ms feels sluggish."
                caption="Inter-token latency (ms) at each concurrent-user level. The 20ms threshold marks the boundary of perceptually instant streaming."
                finding=itl_finding />
            <ChartBlock id="fastest.scaling" title="Scaling Efficiency"
                intro="The GPU utilization trade-off. At 100% efficiency, doubling concurrency would double total throughput (every user gets the same speed as a single user). In practice, efficiency drops because memory bandwidth is shared."
                caption="Scaling efficiency (%) at each concurrent-user level relative to ideal linear scaling."
                finding=scaling_at_max />
            <ChartBlock id="fastest.decode_range" title="Per-User Throughput Range"
                intro="The band between best-case (short context) and worst-case (long context) per-user decode speed. A narrow band means context length doesn't matter much: users get a consistent experience."
                caption="Per-user decode speed range across scenarios at each concurrent-user level."
                finding=speed_spread finding_from=decode />
            <ChartBlock id="fastest.ttft_range" title="TTFT Range"
                intro="How long users wait before the first token appears. TTFT is dominated by the prefill phase: longer contexts mean longer prefill times, especially under concurrency."
                caption="TTFT range across scenarios at each concurrent-user level."
                finding=ttft_range_finding finding_from=ttft />
        </section>
    }
}

/// The TTFT range's sentence: best and worst with where (scenario under the band chart,
/// concurrency and context in the deep dive), graded, with the industry references the reports
/// give.
pub(crate) fn ttft_range_finding(p: &Plot) -> Option<String> {
    let (best, worst) = extremes(p)?;
    Some(format!(
        "{} {} Industry references: ~50 ms at 1K context, ~2 s at 32K, ~18 s at 128K on top hardware.",
        best_worst(p, "Best TTFT is")?,
        graded(
            "How Responsive Is This?",
            band_for_ttft(best.value),
            band_for_ttft(worst.value)
        )
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn cursor_rows_mark_measured_and_interpolated_values() {
        let report = sample();
        let levels = peak_levels(&report);
        let domain = with_sources(&report, cursor_domain).unwrap();
        assert_eq!(domain, (levels[0], *levels.last().unwrap()));
        let measured = ViewState {
            at: Some(levels[1]),
            ..ViewState::default()
        };
        let rows = with_sources(&report, |s| cursor_rows(s, &measured));
        assert_eq!(rows.len(), peak_scenarios(&report));
        assert!(rows
            .iter()
            .flat_map(|r| &r.cells)
            .all(|c| c.as_ref().is_some_and(|c| c.1)));
        let between = ViewState {
            at: Some(levels[2] + 1),
            ..ViewState::default()
        };
        let rows = with_sources(&report, |s| cursor_rows(s, &between));
        assert!(rows
            .iter()
            .flat_map(|r| &r.cells)
            .all(|c| c.as_ref().is_some_and(|c| !c.1)));
        let beyond = ViewState {
            at: Some(domain.1 + 5),
            ..ViewState::default()
        };
        let rows = with_sources(&report, |s| cursor_rows(s, &beyond));
        assert!(rows.iter().flat_map(|r| &r.cells).all(Option::is_none));
    }

    #[test]
    fn findings_from_the_sample() {
        let report = sample();
        let p = with_sources(&report, |s| decode(s, &ViewState::default()));
        let text = decode_finding(&p).unwrap();
        assert!(
            text.starts_with("Per-user decode speed ranges from "),
            "{text}"
        );
        assert!(text.contains("single user"), "{text}");
        // 172.5 tok/s at best (> 50: very fast; ≥ 150: top tier), 13.2 at worst (< 15: slow).
        assert!(
            text.ends_with(
                "By the How Fast Is This? scale, that is very fast at best and slow at worst. \
                 Peak speed is excellent, matching top-tier single-user performance."
            ),
            "{text}"
        );
        assert_eq!(
            speed_spread(&p).unwrap(),
            "Peak per-user decode speed is 172.5 tok/s (Chatbot, single user). At 32 concurrent, \
             per-user speed ranges from 13.2 to 70.6 tok/s across scenarios: the band shows how \
             much each user's speed drops under load."
        );
        // Compared with a faster report, the sentence still reads the main one: its figures
        // name no report.
        let mut faster = report.clone();
        for level in faster.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
            if let Some(d) = level.metrics.decode_tok_s.as_mut() {
                d.mean *= 2.0;
            }
        }
        let both = with_all_sources(&[report.clone(), faster], |s| {
            decode(s, &ViewState::default())
        });
        let text = speed_spread(&both).unwrap();
        assert!(
            text.starts_with("Peak per-user decode speed is 172.5 tok/s (")
                && text.contains("At 32 concurrent, per-user speed ranges from 13.2 to 70.6 tok/s"),
            "{text}"
        );
        // Tool Calling Agentic (32K) scales far worse than Chatbot (1K): the reference's cause.
        let p = with_sources(&report, |s| {
            crate::charts::fastest::scaling(s, &ViewState::default())
        });
        assert_eq!(
            scaling_at_max(&p).unwrap(),
            "At 32 concurrent, scaling efficiency ranges from 40.9% (Chatbot) to 8% (Tool \
             Calling Agentic). Scaling drops at longer contexts: GPU memory bandwidth is the \
             likely bottleneck. Above 90% is excellent; below 50% means the requests contend \
             heavily for the GPU."
        );
        // By context, the lines are concurrencies: nothing to compare.
        let p = with_sources(&report, |s| {
            crate::charts::deep_dive::scaling(s, &ViewState::default())
        });
        assert!(!scaling_at_max(&p).unwrap().contains("longer contexts"));
        let p = with_sources(&report, |s| itl(s, &ViewState::default()));
        let text = itl_finding(&p).unwrap();
        assert!(text.contains("20 ms"), "{text}");
        assert!(
            text.ends_with("achieve 4–8 ms at short contexts."),
            "{text}"
        );
        let p = with_sources(&report, |s| ttft(s, &ViewState::default()));
        let text = ttft_range_finding(&p).unwrap();
        // 0.189 s at best (< 0.5 s: instant), 6.18 s at worst (5–10 s: slow).
        assert_eq!(
            text,
            "Best TTFT is 0.189 s (Chatbot, single user), worst case 6.18 s (Tool Calling \
             Agentic, 32 concurrent). By the How Responsive Is This? scale, that is instant at \
             best and slow at worst. Industry references: ~50 ms at 1K context, ~2 s at 32K, \
             ~18 s at 128K on top hardware."
        );
    }
}
