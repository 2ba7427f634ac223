//! Power and efficiency: power draw, tokens per joule and energy cost at an editable $/kWh.
//! Hidden, with a note saying why, when the report recorded no power.

use infermeter_report::analysis::format::format_number;
use leptos::prelude::*;

use super::findings::highest;
use super::{context, read_sources, ChartBlock};
use crate::charts::plot::Plot;
use crate::charts::power::{draw, has_power, levels};
use crate::charts::Source;
use crate::components::{NumberField, TableScroll};
use crate::state::ViewState;

/// "The highest power draw observed was 466 W (Chatbot, 5 concurrent), costing approximately
/// $0.0466/hour at $0.10/kWh."
pub fn power_finding(sources: &[Source], view: &ViewState) -> Option<String> {
    let (high, text) = highest(&draw(sources, view))?;
    let per_hour =
        infermeter_report::analysis::cost::cost_per_hour_from_power(high.value, view.usd_per_kwh);
    Some(format!(
        "The highest power draw observed was {text}, costing approximately ${}/hour in electricity at ${}/kWh. Budget for peak draw when planning power and cooling: higher concurrency or sustained load beyond the tested conditions may draw more.",
        format_number(per_hour),
        format_number(view.usd_per_kwh)
    ))
}

fn efficiency_finding(p: &Plot) -> Option<String> {
    let (_, text) = highest(p)?;
    Some(format!("The most energy-efficient point was {text}."))
}

fn cost_finding(p: &Plot) -> Option<String> {
    let (low, _) = super::findings::extremes(p)?;
    Some(format!(
        "The cheapest energy per million output tokens was ${} ({}, {}).",
        format_number(low.value),
        low.series,
        super::findings::position(p.x, low.x)
    ))
}

fn no_finding(_: &Plot) -> Option<String> {
    None
}

#[component]
pub fn PowerSection() -> impl IntoView {
    let ctx = context();
    let available = move || read_sources(ctx, |s, _| s.iter().any(has_power));
    let finding = move || read_sources(ctx, power_finding);
    let kwh = move || ctx.view.with(|v| v.usd_per_kwh);
    let cost_rows = move || {
        read_sources(ctx, |sources, view| {
            let Some(main) = sources.first() else {
                return Vec::new();
            };
            main.analysis
                .report()
                .scenarios
                .iter()
                .flat_map(|s| {
                    levels(main, &s.id, view.stat).into_iter().map(|l| {
                        (
                            s.name.clone(),
                            l.concurrency,
                            l.watts,
                            l.cost_per_hour(view.usd_per_kwh),
                        )
                    })
                })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <section id="power" data-testid="section-power">
            <h2>"Power & Efficiency"</h2>
            <Show when=available fallback=|| view! {
                <p class="muted" data-testid="power-missing-note">
                    "This report has no GPU power data: the collector found no GPU power source (NVML, nvidia-smi or a DCGM exporter) while measuring, so power draw, energy efficiency and energy cost cannot be shown."
                </p>
            }>
                <p>"GPU power draw under varying load, for operating-cost estimates, cooling and power budgeting."</p>
                <NumberField label="Electricity price ($/kWh)" testid="kwh-input" min="0" step="0.01"
                    value=kwh accept={|v| v >= 0.0}
                    set=move |v| ctx.view.update(|s| s.usd_per_kwh = v) />
                <ChartBlock id="power.draw" title="Power Consumption"
                    intro="Mean GPU power draw (all GPUs) at each concurrency level, per scenario."
                    caption="GPU power draw (W) at each concurrency level."
                    finding=no_finding />
                <p class="finding" data-testid="power-finding">{finding}</p>
                <TableScroll label="Power and cost per hour"><table class="data-table" data-testid="power-cost-table">
                    <thead><tr>
                        <th scope="col">"Scenario"</th><th scope="col">"Concurrency"</th>
                        <th scope="col">"Power (W)"</th><th scope="col">"Cost per hour"</th>
                    </tr></thead>
                    <tbody>
                        {move || cost_rows().into_iter().map(|(name, c, w, per_hour)| view! {
                            <tr><th scope="row">{name}</th><td>{c}</td><td>{format_number(w)}</td>
                                <td>{format!("${}", format_number(per_hour))}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table></TableScroll>
                <ChartBlock id="power.tokens_per_joule" title="Energy Efficiency"
                    intro="Output tokens generated per joule of GPU energy: higher means more work for the same power bill."
                    caption="Output tokens per joule at each concurrency level."
                    finding=efficiency_finding />
                <ChartBlock id="power.cost" title="Energy Cost per Million Tokens"
                    intro="Electricity cost of a million output tokens at the price above (GPU power only; excludes host, cooling and hardware)."
                    caption="Energy cost ($ per million output tokens) at each concurrency level."
                    finding=cost_finding />
            </Show>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::LoadMode;

    #[test]
    fn power_sentence_uses_the_price() {
        let report = sample();
        let view = ViewState {
            usd_per_kwh: 0.25,
            ..ViewState::default()
        };
        let text = with_sources(&report, |s| power_finding(s, &view)).unwrap();
        // The highest mean draw of the peak-mode levels, in kW, times the price.
        let watts = report
            .series
            .iter()
            .filter(|s| s.mode == LoadMode::Peak)
            .flat_map(|s| &s.levels)
            .filter_map(|l| l.power.as_ref().map(|p| p.mean_w))
            .fold(f64::NAN, f64::max);
        let per_hour = format_number(watts / 1000.0 * 0.25);
        assert!(
            text.contains(&format!("${per_hour}/hour in electricity at $0.25/kWh")),
            "{text} (expected ${per_hour}/hour)"
        );
    }
}
