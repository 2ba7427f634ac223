//! System throughput: chart, table (single user, mid, max concurrency) and tokens per hour.

use infermeter_report::analysis::format::{format_grouped, format_number};
use leptos::prelude::*;

use super::{context, ChartBlock, Section, THROUGHPUT};
use crate::charts::registry::SYSTEM_THROUGHPUT;
use crate::components::{table_name, TableScroll};
use crate::findings::throughput::{condition, summary};
use crate::findings::Findings;

/// One report's tables and sentence.
#[component]
fn ThroughputTables(findings: Findings, label: Option<String>) -> impl IntoView {
    let t = &findings.throughput;
    let name = table_name(label.as_deref(), "System throughput");
    let scenarios_name = table_name(label.as_deref(), "Throughput by scenario");
    let rows: Vec<[String; 4]> = t
        .table
        .iter()
        .map(|r| {
            [
                condition(r),
                format_number(r.system_tok_s),
                r.per_user_tok_s.map_or("—".to_string(), format_number),
                format_grouped(r.tokens_per_hour),
            ]
        })
        .collect();
    let scenarios: Vec<[String; 4]> = t
        .by_scenario
        .iter()
        .map(|top| {
            [
                top.at.scenario_name.clone(),
                top.at.concurrency.to_string(),
                format_number(top.at.value),
                format_grouped(top.tokens_per_hour),
            ]
        })
        .collect();
    let by_scenario = (scenarios.len() > 1).then(|| {
        let caption = label.as_ref().map(|l| format!(" ({l})"));
        view! {
            <TableScroll label=scenarios_name><table class="data-table" data-testid="throughput-by-scenario">
                <caption>"Each scenario at its highest measured concurrency" {caption}</caption>
                <thead><tr>
                    <th scope="col">"Scenario"</th>
                    <th scope="col">"Concurrent requests"</th>
                    <th scope="col">"System Throughput (tok/s)"</th>
                    <th scope="col">"Tokens/Hour"</th>
                </tr></thead>
                <tbody>{scenarios.into_iter().map(table_row).collect_view()}</tbody>
            </table></TableScroll>
        }
    });
    let summary = summary(&findings);
    view! {
        <TableScroll label=name><table class="data-table" data-testid="throughput-table">
            {label.map(|l| view! { <caption>{l}</caption> })}
            <thead><tr>
                <th scope="col">"Condition"</th>
                <th scope="col">"Peak System Throughput (tok/s)"</th>
                <th scope="col">"Peak Per-User (tok/s)"</th>
                <th scope="col">"Tokens/Hour"</th>
            </tr></thead>
            <tbody>{rows.into_iter().map(table_row).collect_view()}</tbody>
        </table></TableScroll>
        {summary.map(|text| view! { <p class="finding" data-testid="throughput-summary">{text}</p> })}
        {by_scenario}
    }
}

/// A row: its heading cell, then three figures.
fn table_row([heading, a, b, c]: [String; 4]) -> impl IntoView {
    view! { <tr><th scope="row">{heading}</th><td>{a}</td><td>{b}</td><td>{c}</td></tr> }
}

#[component]
pub fn ThroughputSection() -> impl IntoView {
    let ctx = context();
    let tables = move || {
        ctx.findings.with(|all| {
            ctx.labels.with(|labels| {
                let comparing = all.len() > 1;
                all.iter()
                    .zip(labels)
                    .map(|(f, l)| (f.clone(), comparing.then(|| l.clone())))
                    .collect::<Vec<_>>()
            })
        })
    };
    view! {
        <Section info=&THROUGHPUT>
            <ChartBlock chart=&SYSTEM_THROUGHPUT />
            {move || tables().into_iter().map(|(findings, label)| view! {
                <ThroughputTables findings label />
            }).collect_view()}
        </Section>
    }
}
