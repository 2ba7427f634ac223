//! Goodput under an SLO: sliders for its bounds and target, the highest load meeting it per
//! scenario, and its charts, all recomputed from each level's per-request columns as a slider
//! moves. A report without those columns gets a note saying why.

use infermeter_report::analysis::capacity::LimitKind;
use infermeter_report::analysis::format::with_unit;
use infermeter_report::analysis::goodput::{report_slo, GoodputFindings};
use infermeter_report::Slo;
use leptos::prelude::*;

use super::{context, read_sources_in, scoped_view, ChartBlock, Section, GOODPUT};
use crate::charts::goodput::{per_source, shown_mode, slo};
use crate::charts::labelled;
use crate::charts::registry::{GOODPUT_ATTAINMENT, GOODPUT_RATE};
use crate::components::{HighlightCard, HighlightGrid};
use crate::findings::goodput::{card, judged_by};
use crate::number::parse_f64;
use crate::state::{ReportContext, Scope};

/// A slider of one bound (its figure gives the display unit), its label and range. Its
/// rightmost position, one step past `max`, switches the bound off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BoundSlider {
    pub(crate) bound: LimitKind,
    pub(crate) label: &'static str,
    /// (min, max, step) in display units.
    pub(crate) range: (f64, f64, f64),
}

pub(crate) const SLIDERS: [BoundSlider; 3] = [
    BoundSlider {
        bound: LimitKind::Ttft,
        label: "Max TTFT",
        range: (0.1, 30.0, 0.1),
    },
    BoundSlider {
        bound: LimitKind::Tpot,
        label: "Max time per output token",
        range: (1.0, 200.0, 1.0),
    },
    BoundSlider {
        bound: LimitKind::E2e,
        label: "Max end-to-end latency",
        range: (1.0, 300.0, 1.0),
    },
];

/// The attainment targets offered (and the report's own when it is another).
const TARGETS: [f64; 3] = [0.9, 0.95, 0.99];

impl BoundSlider {
    /// The position that means "no limit".
    fn off(&self) -> f64 {
        self.range.1 + self.range.2
    }

    /// The slider position of a bound (seconds, `None`: off).
    fn position(&self, value: Option<f64>) -> f64 {
        value.map_or(self.off(), |v| {
            self.bound
                .metric()
                .to_display(v)
                .clamp(self.range.0, self.range.1)
        })
    }

    /// The bound a slider position sets (seconds).
    fn value(&self, position: f64) -> Option<f64> {
        (position <= self.range.1).then_some(self.bound.metric().from_display(position))
    }

    /// "5 s", "50 ms · 20 tok/s", "no limit".
    fn text(&self, value: Option<f64>) -> String {
        let Some(v) = value else {
            return "no limit".into();
        };
        let shown = self.bound.metric().display_text(v);
        match self.bound {
            LimitKind::Tpot if v > 0.0 => format!("{shown} · {}", with_unit(1.0 / v, "tok/s")),
            _ => shown,
        }
    }
}

/// The main report's own SLO: where the sliders start.
pub(crate) fn base_slo(ctx: ReportContext) -> Slo {
    ctx.reports
        .with(|r| r.first().map(|r| report_slo(r)))
        .unwrap_or(infermeter_report::analysis::goodput::DEFAULT_SLO)
}

/// The SLO's sliders and target: one SLO, set here or in another section that judges by it
/// ("Which configuration?"); `prefix` keeps each copy's element ids apart.
#[component]
pub(crate) fn SloControls(prefix: &'static str) -> impl IntoView {
    view! {
        <div class="sliders" data-testid=format!("{prefix}-controls")>
            {SLIDERS.into_iter().map(|spec| view! { <Slider spec prefix /> }).collect_view()}
            <TargetSelect prefix />
        </div>
        <p class="muted">"A slider at its rightmost position removes that bound."</p>
    }
}

/// `base`: the SLO the slider starts from, where it is not the report's own (the Agents
/// section's job bound, whose default the report need not state).
#[component]
pub(crate) fn Slider(
    spec: BoundSlider,
    prefix: &'static str,
    #[prop(optional)] base: Option<Slo>,
) -> impl IntoView {
    let ctx = context();
    let base = base.unwrap_or_else(|| base_slo(ctx));
    let current = move || ctx.view.with(|v| spec.bound.get(&v.slo(base).limits));
    let on_input = move |ev| {
        if let Some(position) = parse_f64(&event_target_value(&ev)) {
            ctx.view
                .update(|v| v.slo.set_bound(&base, spec.bound, spec.value(position)));
        }
    };
    let (min, _, step) = spec.range;
    let id = format!("{prefix}-slider-{}", spec.bound.key());
    let (for_id, dom_id) = (id.clone(), id.clone());
    view! {
        <label class="control slider" for=for_id>
            <span>{spec.label}</span>
            <input type="range" id=dom_id data-testid=id min=min max=spec.off() step=step
                aria-valuetext=move || spec.text(current())
                prop:value=move || spec.position(current()).to_string() on:input=on_input />
            <output>{move || spec.text(current())}</output>
        </label>
    }
}

#[component]
fn TargetSelect(prefix: &'static str) -> impl IntoView {
    let ctx = context();
    let base = base_slo(ctx);
    let current = move || ctx.view.with(|v| v.slo(base).target);
    let mut offered: Vec<f64> = TARGETS.to_vec();
    if !offered.contains(&base.target) {
        offered.push(base.target);
        offered.sort_unstable_by(f64::total_cmp);
    }
    view! {
        <label class="control">
            <span>"Target"</span>
            <select data-testid=format!("{prefix}-target")
                on:change=move |ev| {
                    if let Some(t) = parse_f64(&event_target_value(&ev)) {
                        ctx.view.update(|v| v.slo.set_target(&base, t));
                    }
                }>
                {offered.into_iter().map(|t| view! {
                    <option value=t.to_string() selected=move || current() == t>
                        {format!("{} of requests", with_unit(t * 100.0, "%"))}
                    </option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// The cards of every report shown: the highest load meeting the SLO per scenario.
fn cards(all: &[GoodputFindings], labels: &[String]) -> Vec<(String, String, String, String)> {
    let mode = shown_mode(all);
    let comparing = all.len() > 1;
    all.iter()
        .zip(labels)
        .enumerate()
        .flat_map(|(i, (g, label))| {
            g.series.iter().filter(|s| s.mode == mode).map(move |s| {
                let (value, name, context) = card(s);
                let testid = match i {
                    0 => format!("goodput-card-{}", s.scenario),
                    _ => format!("goodput-card-{}-{}", s.scenario, i + 1),
                };
                (value, labelled(label, &name, comparing), context, testid)
            })
        })
        .collect()
}

#[component]
pub fn GoodputSection() -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, Scope::Goodput);
    let goodput = Memo::new(move |_| {
        read_sources_in(ctx, view, |sources, view| {
            let slo = slo(sources, view)?;
            Some((slo, per_source(sources, &slo)))
        })
    });
    let has_any = move || {
        goodput.with(|g| {
            g.as_ref()
                .is_some_and(|(_, all)| all.iter().any(|f| !f.series.is_empty()))
        })
    };
    let absent = move || {
        let comparing = ctx.labels.with(|l| l.len() > 1);
        goodput.with(|g| {
            ctx.labels.with(|labels| {
                g.iter()
                    .flat_map(|(_, all)| all.iter().zip(labels))
                    .filter_map(|(f, label)| {
                        let why = f.absent.as_deref()?;
                        Some(if comparing {
                            format!("{label}: {why}")
                        } else {
                            why.to_string()
                        })
                    })
                    .collect::<Vec<_>>()
            })
        })
    };
    view! {
        <Section info=&GOODPUT>
            <p>"Teams that sign service levels ask more than a mean: at how many concurrent users do 95% of requests get their first token within 5 s and stream at least 20 tokens per second? Goodput counts the requests that met every bound at once, from each request's own figures. Move the bounds and the target: every figure below is recomputed from the measured requests."</p>
            {move || absent().into_iter().map(|why| view! {
                <p class="muted" data-testid="goodput-absent">{why}</p>
            }).collect_view()}
            <Show when=has_any>
                <SloControls prefix=GOODPUT.id />
                <p><strong data-testid="goodput-slo">
                    {move || goodput.with(|g| g.as_ref().map(|(slo, _)| judged_by(slo)))}
                </strong></p>
                <HighlightGrid>
                    {move || {
                        let all = goodput.with(|g| g.as_ref().map(|(_, all)| all.clone()).unwrap_or_default());
                        ctx.labels.with(|labels| cards(&all, labels)).into_iter().map(|(value, label, context, testid)| view! {
                            <HighlightCard value label context testid />
                        }).collect_view()
                    }}
                </HighlightGrid>
                <ChartBlock chart=&GOODPUT_ATTAINMENT />
                <ChartBlock chart=&GOODPUT_RATE />
            </Show>
        </Section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slider_past_its_range_switches_the_bound_off() {
        let tpot = SLIDERS[1];
        assert_eq!(tpot.value(50.0), Some(0.05));
        assert_eq!(tpot.value(tpot.off()), None);
        assert_eq!(tpot.position(Some(0.05)), 50.0);
        assert_eq!(tpot.position(None), tpot.off());
        assert_eq!(tpot.text(Some(0.05)), "50 ms · 20 tok/s");
        assert_eq!(tpot.text(None), "no limit");
        for s in SLIDERS {
            assert!(s.range.0 < s.range.1 && s.range.2 > 0.0);
        }
    }
}
