//! Capacity analysis per use case: guidance table, threshold sliders, chart, verdict and table.

use infermeter_report::analysis::capacity::LimitKind;
use infermeter_report::analysis::format::with_unit;
use infermeter_report::analysis::use_cases::{targets, CapacityTarget};
use infermeter_report::Limits;
use leptos::prelude::*;

use super::{
    context, read_main_findings, read_sources_in, scoped_view, ChartFrame, Section, CAPACITY,
};
use crate::charts::registry::{capacity_id, capacity_title};
use crate::components::{table_name, HighlightCard, HighlightGrid, TableScroll};
use crate::findings::capacity::{
    caption, card_text, figure_text, latency_limit_text, speed_limit_text, thresholds_text,
    token_profile, use_case_heading,
};
use crate::number::parse_f64;
use crate::state::Scope;
use crate::tables::capacity::{attainment_verdict, table, verdict, CapacityTable};

/// A threshold slider: which limit (its figure gives the display unit), its test-id key, label
/// and range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliderSpec {
    pub kind: LimitKind,
    pub key: &'static str,
    pub label: &'static str,
    /// (min, max, step) in display units.
    pub range: (f64, f64, f64),
}

const SLIDERS: [SliderSpec; 4] = [
    SliderSpec {
        kind: LimitKind::Ttft,
        key: "ttft",
        label: "Max TTFT",
        range: (0.5, 60.0, 0.5),
    },
    SliderSpec {
        kind: LimitKind::Decode,
        key: "speed",
        label: "Min generation speed",
        range: (1.0, 200.0, 1.0),
    },
    SliderSpec {
        kind: LimitKind::Itl,
        key: "itl",
        label: "Max ITL",
        range: (5.0, 300.0, 1.0),
    },
    SliderSpec {
        kind: LimitKind::E2e,
        key: "e2e",
        label: "Max end-to-end latency",
        range: (0.5, 60.0, 0.1),
    },
];

/// The sliders of the limits a use case's preset sets.
pub fn sliders_for(preset: &Limits) -> Vec<SliderSpec> {
    SLIDERS
        .into_iter()
        .filter(|s| s.kind.get(preset).is_some())
        .collect()
}

#[component]
fn Slider(target: CapacityTarget, spec: SliderSpec) -> impl IntoView {
    let ctx = context();
    let id = target.id.clone();
    let preset = target.preset;
    let current = {
        let id = id.clone();
        move || {
            ctx.view
                .with(|v| spec.kind.get(&v.thresholds(&id, preset)))
                .map(|v| spec.kind.metric().to_display(v))
                .unwrap_or(spec.range.0)
        }
    };
    let shown = current.clone();
    let on_input = {
        let id = id.clone();
        move |ev| {
            if let Some(display) = parse_f64(&event_target_value(&ev)) {
                let stored = spec.kind.metric().from_display(display);
                ctx.view
                    .update(|v| v.set_threshold(&id, preset, spec.kind, stored));
            }
        }
    };
    let (min, max, step) = spec.range;
    let input_id = format!("slider-{}-{}", spec.key, id);
    let (for_id, dom_id) = (input_id.clone(), input_id.clone());
    view! {
        <label class="control slider" for=for_id>
            <span>{spec.label}</span>
            <input type="range" id=dom_id data-testid=input_id min=min max=max step=step
                prop:value=move || current().to_string() on:input=on_input />
            <output>{move || with_unit(shown(), spec.kind.metric().unit())}</output>
        </label>
    }
}

/// One report's capacity for a use case: the figure, the verdict and the table of levels.
#[component]
fn CapacityVerdict(
    /// The report's label when several are compared.
    label: Option<String>,
    figure: String,
    sentence: String,
    table: CapacityTable,
    /// The same limits on the attainment basis, when the report has per-request figures.
    by_requests: Option<String>,
    /// The figure's test id.
    figure_testid: String,
    table_label: String,
) -> impl IntoView {
    view! {
        <div class="capacity-verdict">
            <p class="capacity-figure" aria-live="polite">
                {label.clone().map(|l| format!("{l}: "))}
                "Capacity limit: " <strong data-testid=figure_testid>{figure}</strong>
            </p>
            <p data-testid="capacity-verdict">{sentence}</p>
            {by_requests.map(|text| view! {
                <p data-testid="capacity-attainment"><strong>"By requests: "</strong>{text}</p>
            })}
            <TableScroll label=table_name(label.as_deref(), &table_label)><table class="data-table" data-testid="capacity-table">
                <thead><tr>
                    <th scope="col">"Metric"</th>
                    {table.headings.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}
                </tr></thead>
                <tbody>
                    {table.rows.into_iter().map(|(metric, cells)| view! {
                        <tr>
                            <th scope="row">{metric}</th>
                            {cells.into_iter().map(|c| view! {
                                <td class:breached=c.breached class:indicative=c.indicative.is_some()
                                    title=c.indicative>{c.text}</td>
                            }).collect_view()}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table></TableScroll>
        </div>
    }
}

#[component]
fn UseCaseBlock(target: CapacityTarget) -> impl IntoView {
    let ctx = context();
    let id = target.id.clone();
    let heading = use_case_heading(&target.name, target.input_tokens);
    let scoped = scoped_view(ctx, Scope::UseCase(&id));
    let verdicts = {
        let target = target.clone();
        move || {
            read_sources_in(ctx, scoped, |sources, view| {
                let comparing = sources.len() > 1;
                sources
                    .iter()
                    .filter_map(|s| {
                        // The use case may be judged on another scenario in a compared report.
                        let t = targets(s.analysis.report())
                            .into_iter()
                            .find(|t| t.id == target.id)?;
                        let cap = verdict(s, &t, view)?;
                        Some((
                            comparing.then(|| s.label.to_string()),
                            figure_text(&cap),
                            cap.verdict_sentence(),
                            attainment_verdict(s, &t, view),
                            table(s, &t, &cap, view),
                        ))
                    })
                    .collect::<Vec<_>>()
            })
        }
    };
    let limits = {
        let (id, preset) = (id.clone(), target.preset);
        move || {
            ctx.view
                .with(|v| thresholds_text(&v.thresholds(&id, preset)))
        }
    };
    let caption_text = {
        let target = target.clone();
        Signal::derive(move || scoped.with(|v| caption(&target, v)))
    };
    let sliders = sliders_for(&target.preset);
    let figure_id = format!("capacity-figure-{id}");
    let table_label = format!("{} capacity at measured levels", target.name);
    view! {
        <article class="use-case" data-testid=format!("use-case-{id}")>
            <h3>{heading}</h3>
            <p>{target.description.clone()}</p>
            {target.caching_note.clone().map(|note| view! {
                <p class="muted" data-testid=format!("caching-note-{id}")><strong>"Note about caching: "</strong>{note}</p>
            })}
            <p><strong data-testid=format!("thresholds-{id}")>{limits}</strong></p>
            <div class="sliders">
                {sliders.into_iter().map(|spec| view! { <Slider target=target.clone() spec /> }).collect_view()}
            </div>
            <ChartFrame id=capacity_id(&target) title=capacity_title(&target) intro=""
                caption=caption_text finding=None />
            {move || verdicts().into_iter().enumerate().map(|(i, (label, figure, sentence, by_requests, table))| {
                let figure_testid = if i == 0 { figure_id.clone() } else { format!("{figure_id}-{}", i + 1) };
                view! {
                    <CapacityVerdict label figure sentence by_requests table figure_testid table_label=table_label.clone() />
                }
            }).collect_view()}
        </article>
    }
}

/// One use case's summary card, as reference 002 opens its capacity analysis with: the capacity
/// under the current limits and the token profile. It reads only that use case's limits.
#[component]
fn CapacityCard(target: CapacityTarget) -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, Scope::UseCase(&target.id));
    let label = capacity_title(&target);
    let profile = token_profile(target.input_tokens, target.output_tokens);
    let testid = format!("capacity-card-{}", target.id);
    let figure = Memo::new(move |_| {
        read_sources_in(ctx, view, |sources, view| {
            Some(card_text(&verdict(sources.first()?, &target, view)?))
        })
    });
    move || {
        figure.get().map(|value| {
            view! { <HighlightCard value label=label.clone() context=profile.clone() testid=testid.clone() /> }
        })
    }
}

/// One use case's row of the guidance table. It reads only that use case's limits, so a slider
/// redraws one row, not the table.
#[component]
fn GuidanceRow(target: CapacityTarget) -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, Scope::UseCase(&target.id));
    let name = target.name.clone();
    let row = Memo::new(move |_| {
        read_sources_in(ctx, view, |sources, view| {
            let main = sources.first()?;
            let limits = view.thresholds(&target.id, target.preset);
            let cap = verdict(main, &target, view)?;
            Some((
                latency_limit_text(&limits),
                speed_limit_text(&limits),
                cap.verdict_sentence(),
            ))
        })
    });
    move || {
        row.get().map(|(ttft, speed, analysis)| {
            view! {
                <tr><th scope="row">{name.clone()}</th><td>{ttft}</td><td>{speed}</td><td>{analysis}</td></tr>
            }
        })
    }
}

#[component]
pub fn CapacitySection() -> impl IntoView {
    let ctx = context();
    // The use cases come from the main report; the view only changes limits, not the list.
    let all =
        Memo::new(move |_| read_main_findings(ctx, |f| f.use_cases.clone()).unwrap_or_default());
    view! {
        <Section info=&CAPACITY>
            <p>"The table maps this configuration's performance to common deployment scenarios. Capacity limits are where TTFT or generation speed falls below accepted thresholds for a comfortable user experience. Detailed charts and analysis for each use case follow in the capacity analysis below."</p>
            <TableScroll label="Use case guidance"><table class="data-table" data-testid="guidance-table">
                <thead><tr>
                    <th scope="col">"Use case"</th><th scope="col">"TTFT threshold"</th>
                    <th scope="col">"Speed threshold"</th><th scope="col">"Analysis"</th>
                </tr></thead>
                <tbody>
                    {move || all.get().into_iter().map(|target| view! { <GuidanceRow target /> }).collect_view()}
                </tbody>
            </table></TableScroll>
            <p class="muted">"The limits shown are conservative. Beyond these points the system keeps working with slower responses that may still suit your use case."</p>
            <h2>"Capacity Analysis"</h2>
            <p>"How many concurrent requests can this configuration handle for different workloads? Each chart shows performance as concurrency increases for one workload. Dashed lines are quality thresholds; move the sliders to try your own. The capacity limit is the tested or estimated point where the first threshold is reached."</p>
            <HighlightGrid>
                {move || all.get().into_iter().map(|target| view! { <CapacityCard target /> }).collect_view()}
            </HighlightGrid>
            {move || all.get().into_iter().map(|target| view! { <UseCaseBlock target /> }).collect_view()}
        </Section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliders_follow_the_preset_limits() {
        let chat = Limits {
            max_ttft_s: Some(10.0),
            min_decode_tok_s: Some(10.0),
            ..Limits::default()
        };
        let keys: Vec<&str> = sliders_for(&chat).iter().map(|s| s.key).collect();
        assert_eq!(keys, ["ttft", "speed"]);
        let code = Limits {
            max_e2e_s: Some(2.0),
            ..Limits::default()
        };
        assert_eq!(sliders_for(&code)[0].key, "e2e");
        for s in SLIDERS {
            assert!(s.range.0 < s.range.1 && s.range.2 > 0.0);
        }
    }
}
