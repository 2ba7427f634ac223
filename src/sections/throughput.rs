//! System throughput: chart, table (single user, mid, max concurrency) and tokens per hour.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::scaling::tokens_per_hour;
use leptos::prelude::*;

use super::findings::peak_throughput;
use super::{context, read_sources, ChartBlock};
use crate::charts::capacity::group_thousands;
use crate::charts::throughput::{by_scenario, summary, table};
use crate::components::{table_name, TableScroll};

#[component]
pub fn ThroughputSection() -> impl IntoView {
    let ctx = context();
    let tables = move || {
        read_sources(ctx, |sources, view| {
            sources
                .iter()
                .map(|s| {
                    let rows = table(s, view.stat);
                    let summary = summary(s, &rows, view.stat);
                    (
                        s.label.to_string(),
                        rows,
                        summary,
                        by_scenario(s, view.stat),
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    let comparing = move || ctx.reports.with(|r| r.len() > 1);
    view! {
        <section id="throughput" data-testid="section-throughput">
            <h2>"System Throughput"</h2>
            <ChartBlock id="throughput.system" title="System Throughput"
                intro="Aggregate token generation across all concurrent requests. Measures output tokens only; prompt tokens processed during prefill are excluded. Higher concurrency raises total throughput as the GPU processes more requests in parallel, even though per-user speed decreases. This is the figure for batch workloads such as document processing, synthetic data generation or offline analysis."
                caption="Aggregate system decode throughput (tok/s) at each concurrency level, one line per scenario."
                finding=peak_throughput />
            {move || tables().into_iter().map(|(label, rows, summary, scenarios)| {
                let scenarios_label = label.clone();
                let report = comparing().then_some(label.as_str());
                let name = table_name(report, "System throughput");
                let scenarios_name = table_name(report, "Throughput by scenario");
                view! {
                <TableScroll label=name><table class="data-table" data-testid="throughput-table">
                    {comparing().then(|| view! { <caption>{label}</caption> })}
                    <thead><tr>
                        <th scope="col">"Condition"</th>
                        <th scope="col">"Peak System Throughput (tok/s)"</th>
                        <th scope="col">"Peak Per-User (tok/s)"</th>
                        <th scope="col">"Tokens/Hour"</th>
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| view! {
                            <tr>
                                <th scope="row">{r.condition}</th>
                                <td>{format_number(r.system_tok_s)}</td>
                                <td>{r.per_user_tok_s.map_or("—".to_string(), format_number)}</td>
                                <td>{group_thousands(r.tokens_per_hour.round() as u32)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table></TableScroll>
                {summary.map(|text| view! { <p class="finding" data-testid="throughput-summary">{text}</p> })}
                {(scenarios.len() > 1).then(|| view! {
                    <TableScroll label=scenarios_name><table class="data-table" data-testid="throughput-by-scenario">
                        <caption>"Each scenario at its highest measured concurrency" {comparing().then(|| format!(" ({})", scenarios_label))}</caption>
                        <thead><tr>
                            <th scope="col">"Scenario"</th>
                            <th scope="col">"Concurrent requests"</th>
                            <th scope="col">"System Throughput (tok/s)"</th>
                            <th scope="col">"Tokens/Hour"</th>
                        </tr></thead>
                        <tbody>
                            {scenarios.into_iter().map(|r| view! {
                                <tr>
                                    <th scope="row">{r.scenario}</th>
                                    <td>{r.concurrency}</td>
                                    <td>{format_number(r.system_tok_s)}</td>
                                    <td>{group_thousands(tokens_per_hour(r.system_tok_s).round() as u32)}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table></TableScroll>
                })}
            }}).collect_view()}
        </section>
    }
}
