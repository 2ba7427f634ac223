//! What if: the simulator fitted to this report (`infermeter fit`) answers beyond the measured
//! levels: more users, other lengths, another GPU kind or count, under the reader's SLO. Every
//! prediction states its held-out error, and a measured level is shown as measured. Reports
//! without a fit get a one-line note.

use infermeter_engine::what_if::most_meeting;
use infermeter_report::analysis::format::{format_grouped, with_unit};
use infermeter_report::analysis::goodput::report_slo;
use infermeter_report::analysis::Metric;
use infermeter_report::{Fit, FitMetric, Limits, LoadMode};
use leptos::prelude::*;

use super::goodput::{Slider, SLIDERS};
use super::{context, scoped_view, ChartBlock, Section, WHAT_IF};
use crate::charts::registry::{WHAT_IF_DECODE, WHAT_IF_ITL, WHAT_IF_THROUGHPUT, WHAT_IF_TTFT};
use crate::charts::what_if::{curve, display, max_load, predicted_label, tables, Question};
use crate::components::{HighlightCard, HighlightGrid, NumberField};
use crate::state::{ReportContext, Scope, ViewState, WhatIfChoice};

/// The main report's fit and the question the view asks of it.
fn asked(ctx: ReportContext, view: &ViewState) -> Option<(Fit, Question)> {
    ctx.reports.with(|r| {
        let report = r.first()?;
        Some((report.fit.clone()?, Question::of(report, view)?))
    })
}

type Asked = Memo<Option<(Fit, Question)>>;

#[component]
pub fn WhatIfSection() -> impl IntoView {
    let ctx = context();
    let fitted = move || {
        ctx.reports
            .with(|r| r.first().is_some_and(|r| r.fit.is_some()))
    };
    view! {
        <Section info=&WHAT_IF>
            <p>"The simulator fitted to this report's levels (infermeter fit) answers what was not measured. Each prediction states its held-out error: the fit's error on each measured level left out of it. A prediction outside what the fit saw (another GPU or GPU count, a context over 4x the longest measured) is an extrapolation: it states the uncalibrated profile's error instead."</p>
            <Show when=fitted fallback=|| view! {
                <p class="muted" data-testid="what-if-off">"This report holds no fit: run infermeter fit on it to predict beyond its measured levels here."</p>
            }>
                <WhatIfBody />
            </Show>
        </Section>
    }
}

#[component]
fn WhatIfBody() -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, Scope::WhatIf);
    let question = Memo::new(move |_| view.with(|v| asked(ctx, v)));
    view! {
        <Controls question />
        <Cards question />
        <ChartBlock chart=&WHAT_IF_TTFT />
        <ChartBlock chart=&WHAT_IF_ITL />
        <ChartBlock chart=&WHAT_IF_DECODE />
        <ChartBlock chart=&WHAT_IF_THROUGHPUT />
    }
}

/// Sets one choice of the question.
fn choose(ctx: ReportContext, f: impl FnOnce(&mut WhatIfChoice)) {
    ctx.view.update(|v| f(&mut v.what_if));
}

#[component]
fn Controls(question: Asked) -> impl IntoView {
    let ctx = context();
    let q = move || question.with(|q| q.as_ref().map(|(_, q)| q.clone()));
    let scenarios = move || {
        question.with(|q| {
            let Some((fit, _)) = q else { return Vec::new() };
            let mut ids: Vec<String> = fit.levels.iter().map(|l| l.scenario.clone()).collect();
            ids.dedup();
            ids
        })
    };
    let load_max = move || q().map_or(1, |q| max_load(q.highest));
    view! {
        <div class="sliders" data-testid="what-if-controls">
            <label class="control"><span>"Scenario"</span>
                <select data-testid="what-if-scenario" on:change=move |ev| {
                    let id = event_target_value(&ev);
                    choose(ctx, |c| *c = WhatIfChoice { scenario: Some(id), gpu: c.gpu.take(), gpus: c.gpus, ..WhatIfChoice::default() });
                }>
                    {move || scenarios().into_iter().map(|id| {
                        let selected = q().is_some_and(|q| q.scenario == id);
                        view! { <option value=id.clone() selected=selected>{id.clone()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label class="control"><span>"Load"</span>
                <select data-testid="what-if-mode" on:change=move |ev| {
                    let mode = if event_target_value(&ev) == "burst" { LoadMode::Burst } else { LoadMode::Peak };
                    choose(ctx, |c| { c.mode = Some(mode); c.load = None; });
                }>
                    <option value="peak" selected=move || q().is_some_and(|q| q.what.mode == LoadMode::Peak)>"Concurrent users"</option>
                    <option value="burst" selected=move || q().is_some_and(|q| q.what.mode == LoadMode::Burst)>"Queue depth (burst)"</option>
                </select>
            </label>
            <label class="control slider" for="what-if-load">
                <span>"Users or queue depth"</span>
                <input type="range" id="what-if-load" data-testid="what-if-load" min="1" max=move || load_max().to_string() step="1"
                    prop:value=move || q().map_or(1, |q| q.load).to_string()
                    on:input=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<u32>() {
                            choose(ctx, |c| c.load = Some(n.max(1)));
                        }
                    } />
                <output>{move || q().map(|q| format!("{} (up to {})", q.load, max_load(q.highest)))}</output>
            </label>
            <NumberField label="Input tokens" testid="what-if-input" min="1" step="1"
                value=move || q().map_or(0.0, |q| f64::from(q.what.input_tokens))
                accept=|v| (1.0..=1e7).contains(&v)
                set=move |v| choose(ctx, |c| c.input_tokens = Some(v.round() as u32)) />
            <NumberField label="Output tokens" testid="what-if-output" min="1" step="1"
                value=move || q().map_or(0.0, |q| f64::from(q.what.output_tokens))
                accept=|v| (1.0..=1e6).contains(&v)
                set=move |v| choose(ctx, |c| c.output_tokens = Some(v.round() as u32)) />
            <Hardware question />
            {SLIDERS[..2].iter().map(|spec| view! { <Slider spec=*spec prefix=WHAT_IF.id /> }).collect_view()}
        </div>
    }
}

/// GPU kind and count: the simulator's tables.
#[component]
fn Hardware(question: Asked) -> impl IntoView {
    let ctx = context();
    let current =
        move || question.with(|q| q.as_ref().map(|(_, q)| (q.what.gpu.clone(), q.what.gpus)));
    let gpus: Vec<(String, String)> = tables()
        .gpu
        .iter()
        .map(|(id, g)| (id.clone(), g.name.clone()))
        .collect();
    view! {
        <label class="control"><span>"GPU"</span>
            <select data-testid="what-if-gpu" on:change=move |ev| {
                let gpu = event_target_value(&ev);
                choose(ctx, |c| c.gpu = Some(gpu));
            }>
                {gpus.into_iter().map(|(id, name)| {
                    let selected = { let id = id.clone(); move || current().is_some_and(|c| c.0 == id) };
                    view! { <option value=id.clone() selected=selected>{name}</option> }
                }).collect_view()}
            </select>
        </label>
        <label class="control"><span>"GPUs"</span>
            <select data-testid="what-if-gpus" on:change=move |ev| {
                if let Ok(n) = event_target_value(&ev).parse::<u32>() {
                    choose(ctx, |c| c.gpus = Some(n));
                }
            }>
                {[1u32, 2, 4, 8].into_iter().map(|n| view! {
                    <option value=n.to_string() selected=move || current().is_some_and(|c| c.1 == n)>{n.to_string()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// One card's text: the figure at the asked load, measured where it was, with the prediction
/// and its held-out error beside it.
fn card(
    fit: &Fit,
    q: &Question,
    metric: FitMetric,
    predicted: Option<f64>,
) -> (String, String, String) {
    let unit = crate::charts::what_if::axis(metric).unit;
    let text = |v: f64| with_unit(v, &unit);
    let measured = q
        .measured(fit)
        .into_iter()
        .find(|l| l.concurrency == q.load)
        .map(|l| crate::charts::what_if::measured_display(metric, l));
    let label = format!(
        "{} at {}",
        metric.label(),
        q.what.mode.question_load(q.load)
    );
    match (measured, predicted) {
        (Some(m), p) => (
            text(m),
            format!("{label}, measured"),
            p.map_or_else(String::new, |p| {
                format!("{} {}", predicted_label(fit, q, metric), text(p))
            }),
        ),
        (None, Some(p)) => (text(p), label, predicted_label(fit, q, metric)),
        (None, None) => (
            "n/a".into(),
            label,
            "the model does not fit these GPUs, or the fit's deployment is not in the simulator's tables".into(),
        ),
    }
}

#[component]
fn Cards(question: Asked) -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, Scope::WhatIf);
    let cards = Memo::new(move |_| {
        question.with(|q| {
            let (fit, q) = q.as_ref()?;
            let at = curve(fit, q)
                .as_ref()
                .and_then(|c| c.iter().find(|(n, _)| *n == q.load).map(|(_, f)| *f));
            let mut cards: Vec<(String, String, String, String)> = FitMetric::ALL
                .into_iter()
                .map(|m| {
                    let (value, label, context) = card(fit, q, m, at.map(|f| display(m, &f)));
                    (value, label, context, format!("what-if-card-{}", m.key()))
                })
                .collect();
            let base = ctx
                .reports
                .with(|r| r.first().map(|r| report_slo(r)))
                .unwrap_or_default();
            let slo = view.with(|v| v.slo(base));
            // The bounds a prediction's means can be judged by (it has no E2E figure).
            let mean_slo = Limits {
                max_ttft_s: slo.limits.max_ttft_s,
                max_tpot_s: slo.limits.max_tpot_s,
                ..Limits::default()
            };
            if let Ok(engine) = q.what.engine(fit, tables()) {
                let highest = max_load(q.highest);
                let most = most_meeting(&q.what, &engine, &mean_slo, highest);
                let value = match most {
                    None => "none".to_string(),
                    Some(n) if n == highest => format!("≥ {}", format_grouped(f64::from(n))),
                    Some(n) => format_grouped(f64::from(n)),
                };
                let bounds = [
                    (Metric::Ttft, slo.limits.max_ttft_s),
                    (Metric::Tpot, slo.limits.max_tpot_s),
                ]
                .into_iter()
                .filter_map(|(m, b)| {
                    Some(format!("mean {} ≤ {}", m.short_label(), m.display_text(b?)))
                })
                .collect::<Vec<_>>()
                .join(", ");
                let label = match q.what.mode {
                    LoadMode::Burst => "Deepest queue meeting the SLO",
                    _ => "Most users meeting the SLO",
                };
                cards.push((
                    value,
                    label.into(),
                    format!(
                        "predicted, {}",
                        if bounds.is_empty() {
                            "no bound set".into()
                        } else {
                            bounds
                        }
                    ),
                    "what-if-card-slo".into(),
                ));
            }
            Some(cards)
        })
    });
    view! {
        <div data-testid="what-if-cards">
            <HighlightGrid>
                {move || cards.get().unwrap_or_default().into_iter().map(|(value, label, context, testid)| view! {
                    <HighlightCard value label context testid />
                }).collect_view()}
            </HighlightGrid>
        </div>
    }
}
