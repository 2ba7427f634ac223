//! "Which configuration?": the Pareto chart of every compared report's operating points and
//! the ranking of the configurations by what serving the reader's users under the SLO costs,
//! with the controls both read: the scenario, what the chart plots, the target interactivity,
//! the users, a price per GPU kind and the goodput SLO (one SLO with the Goodput section's).
//! Every figure comes from the report crate (`analysis::configuration`), as `infermeter
//! summary` prints it; a report with no series of two levels gets a note instead.

use infermeter_report::analysis::configuration::frontier::scenarios;
use infermeter_report::analysis::configuration::{
    has_trade_off, price_assumptions, report_prices, Ranked, RankingInputs, ScenarioRanking, APART,
    COLUMNS, NO_TRADE_OFF,
};
use infermeter_report::analysis::cost::PriceAssumption;
use infermeter_report::Report;
use leptos::prelude::*;

use super::goodput::{base_slo, SloControls};
use super::{context, ChartBlock, Section, CHOICE};
use crate::charts::choice::{compared_series, shown_scenario};
use crate::charts::registry::CHOICE_FRONTIER;
use crate::charts::sources;
use crate::components::{NumberField, TableScroll};
use crate::findings::goodput::judged_by;
use crate::number::parse_f64;
use crate::state::{ChoiceView, ReportContext};

/// What the section shows under the current controls: the scenarios offered, the one shown,
/// its ranking and the prices assumed.
#[derive(Debug, Clone, PartialEq)]
struct Decision {
    scenarios: Vec<(String, String)>,
    scenario: Option<String>,
    ranking: Option<ScenarioRanking>,
    prices: Vec<PriceAssumption>,
}

/// The decision under the view's statistic, SLO and controls (recomputed when one changes).
fn decision(ctx: ReportContext) -> Memo<Decision> {
    let inputs = Memo::new(move |_| {
        ctx.view
            .with(|v| (v.stat, v.slo(base_slo(ctx)), v.choice.clone()))
    });
    Memo::new(move |_| {
        let (stat, slo, choice) = inputs.get();
        ctx.reports.with(|reports| {
            ctx.labels.with(|labels| {
                let refs: Vec<&Report> = reports.iter().map(|r| &**r).collect();
                let view = crate::state::ViewState {
                    stat,
                    choice: choice.clone(),
                    ..Default::default()
                };
                let series = compared_series(&sources(reports, labels), &view);
                let scenario = shown_scenario(&series, &choice);
                let prices = report_prices(&refs, &choice.prices);
                let ranking = scenario.as_ref().map(|id| {
                    RankingInputs {
                        reports: &refs,
                        labels,
                        series: &series,
                        prices: &prices,
                        slo: &slo,
                        users: choice.users,
                        interactivity: choice.interactivity,
                        measured_only: choice.measured_only,
                    }
                    .rank(id)
                });
                Decision {
                    scenarios: scenarios(&series),
                    scenario,
                    ranking,
                    prices: price_assumptions(&refs, &choice.prices),
                }
            })
        })
    })
}

#[component]
pub fn ChoiceSection() -> impl IntoView {
    let ctx = context();
    let trade_off = ctx
        .reports
        .with_untracked(|r| has_trade_off(&r.iter().map(|r| &**r).collect::<Vec<_>>()));
    view! {
        <Section info=&CHOICE>
            <p>"Which GPU, how many, which engine setting, for how many users, at what price? Each measured load of each configuration trades the speed every user gets against the output of each GPU; the frontier is where no other choice does better on both. Below it, the configurations ranked by what serving your users under your SLO costs."</p>
            {if trade_off {
                view! { <Choice /> }.into_any()
            } else {
                view! { <p class="muted" data-testid="choice-note">{NO_TRADE_OFF}</p> }.into_any()
            }}
        </Section>
    }
}

#[component]
fn Choice() -> impl IntoView {
    let ctx = context();
    let decision = decision(ctx);
    view! {
        <ChoiceControls decision />
        <ChartBlock chart=&CHOICE_FRONTIER />
        <h3>"Cheapest Meeting the SLO"</h3>
        <SloControls prefix=CHOICE.id />
        <p><strong data-testid="choice-slo">
            {move || judged_by(&ctx.view.with(|v| v.slo(base_slo(ctx))))}
        </strong></p>
        <PriceFields decision />
        <RankingTable decision />
    }
}

/// Updates the section's controls, leaving a value the address does not need out of it.
fn set_choice(ctx: ReportContext, f: impl FnOnce(&mut ChoiceView)) {
    ctx.view.update(|v| f(&mut v.choice));
}

#[component]
fn ChoiceControls(decision: Memo<Decision>) -> impl IntoView {
    use infermeter_report::analysis::configuration::Figure;
    let ctx = context();
    let choice = move || ctx.view.with(|v| v.choice.clone());
    let figure_select = |testid: &'static str,
                         label: &'static str,
                         among: &'static [Figure],
                         x: bool| {
        let current = move || {
            let c = choice();
            if x {
                c.x
            } else {
                c.y
            }
        };
        view! {
            <label class="control">
                <span>{label}</span>
                <select data-testid=testid on:change=move |ev| {
                    if let Some(f) = Figure::parse(&event_target_value(&ev)) {
                        set_choice(ctx, |c| if x { c.x = f } else { c.y = f });
                    }
                }>
                    {among.iter().map(|&f| view! {
                        <option value=f.key() selected=move || current() == f>{f.label()}</option>
                    }).collect_view()}
                </select>
            </label>
        }
    };
    view! {
        <div class="sliders" data-testid="choice-controls">
            <label class="control">
                <span>"Scenario"</span>
                <select data-testid="choice-scenario" on:change=move |ev| {
                    let id = event_target_value(&ev);
                    let first = decision.with_untracked(|d| d.scenarios.first().map(|(s, _)| s.clone()));
                    set_choice(ctx, |c| c.scenario = (Some(&id) != first.as_ref()).then_some(id));
                }>
                    {move || decision.with(|d| d.scenarios.iter().map(|(id, name)| {
                        let selected = d.scenario.as_ref() == Some(id);
                        view! { <option value=id.clone() selected=selected>{name.clone()}</option> }
                    }).collect_view())}
                </select>
            </label>
            {figure_select("choice-y", "Up", &Figure::Y, false)}
            {figure_select("choice-x", "Across", &Figure::X, true)}
            <InteractivitySlider />
            <NumberField label="Users to serve" testid="choice-users" min="1" step="1"
                value=move || f64::from(ctx.view.with(|v| v.choice.users))
                accept={|v| v >= 1.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX)}
                set=move |v| set_choice(ctx, |c| c.users = v as u32) />
            <label class="control">
                <input type="checkbox" data-testid="choice-measured-only"
                    prop:checked=move || ctx.view.with(|v| v.choice.measured_only)
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        set_choice(ctx, |c| c.measured_only = on);
                    } />
                <span>"Measured levels only (no figure read between levels)"</span>
            </label>
        </div>
    }
}

/// The target interactivity, 1 to 300 tok/s per user.
#[component]
fn InteractivitySlider() -> impl IntoView {
    use infermeter_report::analysis::configuration::Figure;
    let ctx = context();
    let current = move || ctx.view.with(|v| v.choice.interactivity);
    view! {
        <label class="control slider" for="choice-interactivity">
            <span>"Target interactivity"</span>
            <input type="range" id="choice-interactivity" data-testid="choice-interactivity"
                min="1" max="300" step="1"
                aria-valuetext=move || Figure::Interactivity.text(current())
                prop:value=move || current().to_string()
                on:input=move |ev| {
                    if let Some(v) = parse_f64(&event_target_value(&ev)) {
                        if v > 0.0 {
                            set_choice(ctx, |c| c.interactivity = v);
                        }
                    }
                } />
            <output>{move || Figure::Interactivity.text(current())}</output>
        </label>
    }
}

/// A GPU-hour price per GPU kind compared, and what each is costed at (an assumption).
#[component]
fn PriceFields(decision: Memo<Decision>) -> impl IntoView {
    let ctx = context();
    let kinds = decision.with_untracked(|d| {
        d.prices
            .iter()
            .map(|p| (p.kind.clone(), p.usd_per_gpu_hour))
            .collect::<Vec<_>>()
    });
    view! {
        <div class="sliders" data-testid="choice-prices">
            {kinds.into_iter().map(|(kind, default)| {
                let testid = format!("choice-price-{}", kind.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
                let (read, write) = (kind.clone(), kind.clone());
                view! {
                    <NumberField label=format!("{kind} $ per GPU-hour") testid min="0" step="0.01"
                        value=move || ctx.view.with(|v| v.choice.prices.get(&read).copied())
                            .or(default).unwrap_or(f64::NAN)
                        accept={|v| v >= 0.0}
                        set=move |v| set_choice(ctx, |c| {
                            if Some(v) == default {
                                c.prices.remove(&write);
                            } else {
                                c.prices.insert(write.clone(), v);
                            }
                        }) />
                }
            }).collect_view()}
        </div>
        <ul class="muted" data-testid="choice-assumptions">
            {move || decision.with(|d| d.prices.iter().map(|p| view! { <li>{p.text()}</li> }).collect_view())}
        </ul>
    }
}

/// "Cheapest meeting the SLO": the shown scenario's configurations measured to their limit,
/// cheapest first; those listed apart (no limit found, or none met); and what the data supports
/// beside the ranking.
#[component]
fn RankingTable(decision: Memo<Decision>) -> impl IntoView {
    let cells = |rows: Vec<&Ranked>| rows.into_iter().map(Ranked::cells).collect::<Vec<_>>();
    let ranked = move || {
        decision.with(|d| {
            d.ranking
                .as_ref()
                .map(|r| cells(r.ranked()))
                .unwrap_or_default()
        })
    };
    let apart = move || {
        decision.with(|d| {
            d.ranking
                .as_ref()
                .map(|r| cells(r.apart()))
                .unwrap_or_default()
        })
    };
    let has_apart = Memo::new(move |_| {
        decision.with(|d| d.ranking.as_ref().is_some_and(|r| !r.apart().is_empty()))
    });
    let verdict = move || {
        decision.with(|d| {
            d.ranking
                .as_ref()
                .map(|r| r.verdict.clone())
                .unwrap_or_default()
        })
    };
    let users = move || {
        decision.with(|d| {
            d.ranking
                .as_ref()
                .and_then(|r| r.rows.iter().find_map(|row| row.replicas))
                .map(|r| r.users)
        })
    };
    view! {
        <p class="muted">
            {move || users().map(|n| format!("Replicas, GPUs and $ per hour serve {n} users; "))}
            "throughput and cost are at the highest load meeting the SLO, and at the target interactivity on each configuration's curve. Only configurations measured to their limit are ranked. GPU rental only."
        </p>
        <RowsTable label="Cheapest meeting the SLO" testid="choice-ranking" rows=Signal::derive(ranked) />
        // Built again only when the list apart appears or empties, not on every slider move.
        {move || has_apart.get().then(|| view! {
            <h4>{APART}</h4>
            <RowsTable label=APART testid="choice-apart" rows=Signal::derive(apart) />
        })}
        <ul data-testid="choice-verdict">
            {move || verdict().into_iter().map(|s| view! { <li>{s}</li> }).collect_view()}
        </ul>
    }
}

/// Ranking rows under the column headings, the configuration as each row's header.
#[component]
fn RowsTable(
    label: &'static str,
    testid: &'static str,
    rows: Signal<Vec<[String; 12]>>,
) -> impl IntoView {
    view! {
        <TableScroll label=label><table class="data-table ranking" data-testid=testid>
            <thead><tr>
                {COLUMNS.iter().map(|c| view! { <th scope="col">{*c}</th> }).collect_view()}
            </tr></thead>
            <tbody>
                {move || rows.get().into_iter().map(|cells| view! {
                    <tr data-testid="choice-row">
                        {cells.into_iter().enumerate().map(|(i, cell)| if i == 1 {
                            view! { <th scope="row">{cell}</th> }.into_any()
                        } else {
                            view! { <td>{cell}</td> }.into_any()
                        }).collect_view()}
                    </tr>
                }).collect_view()}
            </tbody>
        </table></TableScroll>
    }
}
