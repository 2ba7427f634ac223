//! Power and efficiency: power draw, tokens per joule and energy cost at an editable $/kWh.
//! Hidden, with a note saying why, when the report recorded no power.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;
use leptos::prelude::*;

use super::{context, read_main_findings, ChartBlock, Section, POWER};
use crate::charts::registry::{ENERGY_COST, ENERGY_EFFICIENCY, POWER_DRAW};
use crate::components::{NumberField, TableScroll};

/// The main report's levels with power: (scenario, concurrency, draw, cost per hour).
#[component]
fn PowerCostTable() -> impl IntoView {
    let ctx = context();
    let rows = move || {
        read_main_findings(ctx, |f| {
            f.power
                .levels
                .iter()
                .map(|l| {
                    (
                        l.draw.scenario_name.clone(),
                        l.draw.concurrency,
                        format_number(l.draw.value),
                        format!("${}", format_number(l.cost_per_hour)),
                    )
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    };
    view! {
        <TableScroll label="Power and cost per hour"><table class="data-table" data-testid="power-cost-table">
            <thead><tr>
                <th scope="col">"Scenario"</th><th scope="col">"Concurrency"</th>
                <th scope="col">{format!("Power ({})", Metric::PowerW.unit())}</th><th scope="col">"Cost per hour"</th>
            </tr></thead>
            <tbody>
                {move || rows().into_iter().map(|(name, c, watts, per_hour)| view! {
                    <tr><th scope="row">{name}</th><td>{c}</td><td>{watts}</td><td>{per_hour}</td></tr>
                }).collect_view()}
            </tbody>
        </table></TableScroll>
    }
}

#[component]
pub fn PowerSection() -> impl IntoView {
    let ctx = context();
    let available = move || {
        ctx.findings
            .with(|all| all.iter().any(|f| !f.power.levels.is_empty()))
    };
    let kwh = move || ctx.view.with(|v| v.usd_per_kwh);
    view! {
        <Section info=&POWER>
            <Show when=available fallback=move || view! {
                <p class="muted" data-testid="power-missing-note">
                    {match super::imported_absence(ctx, infermeter_report::import::absent::POWER) {
                        Some(why) => format!("{why}, so power draw, energy efficiency and energy cost cannot be shown."),
                        None => "This report has no GPU power data: the collector found no GPU power source (NVML, nvidia-smi or a DCGM exporter) while measuring, so power draw, energy efficiency and energy cost cannot be shown.".into(),
                    }}
                </p>
            }>
                <p>"GPU power draw under varying load, for operating-cost estimates, cooling and power budgeting."</p>
                <NumberField label="Electricity price ($/kWh)" testid="kwh-input" min="0" step="0.01"
                    value=kwh accept={|v| v >= 0.0}
                    set=move |v| ctx.view.update(|s| s.usd_per_kwh = v) />
                <ChartBlock chart=&POWER_DRAW />
                <PowerCostTable />
                <ChartBlock chart=&ENERGY_EFFICIENCY />
                <ChartBlock chart=&ENERGY_COST />
            </Show>
        </Section>
    }
}
