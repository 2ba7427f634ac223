//! All measurements: every level of every run as one table per report, with its CSV. Folded
//! until opened, so a report of many levels costs nothing on load.

use leptos::prelude::*;

use super::{context, read_sources, Section, MEASUREMENTS};
use crate::components::export::{download_text, file_stem};
use crate::components::{table_name, TableScroll};
use crate::tables::measurements::{measurements, to_csv};

#[component]
pub fn MeasurementsSection() -> impl IntoView {
    let ctx = context();
    let open = RwSignal::new(false);
    let levels = move || {
        ctx.reports.with(|reports| {
            reports
                .iter()
                .flat_map(|r| &r.series)
                .map(|s| s.levels.len())
                .sum::<usize>()
        })
    };
    let tables = move || {
        read_sources(ctx, |sources, view| {
            sources
                .iter()
                .map(|s| {
                    let table = measurements(s, view.stat);
                    let csv = to_csv(&table, view.stat);
                    (s.label.to_string(), table, csv)
                })
                .collect::<Vec<_>>()
        })
    };
    let stat = move || ctx.view.with(|v| v.stat.label());
    let comparing = move || ctx.reports.with(|r| r.len() > 1);
    view! {
        <Section info=&MEASUREMENTS>
            <p>"Every level of every run as measured: requests completed of those sent, completed requests per second, and each latency and speed at the statistic chosen at the top of the page (now " {stat} "). A figure underlined with dots is only indicative: a percentile with fewer than 10 samples beyond it (p99 of fewer than 1,000 requests), which moves a lot from run to run. The CSV holds the same figures unrounded."</p>
            <details class="collapsible" data-testid="measurements-fold"
                on:toggle=move |ev| open.set(event_target::<web_sys::HtmlDetailsElement>(&ev).open())>
                <summary>{move || format!("Show all {} measured levels", levels())}</summary>
                {move || open.get().then(|| tables().into_iter().map(|(label, table, csv)| {
                        let file = format!("measurements-{}.csv", file_stem(&label));
                        let name = table_name(comparing().then_some(label.as_str()), "All measurements");
                        view! {
                            <div class="chart-tools">
                                <button type="button" class="chart-tool" data-testid="measurements-csv"
                                    aria-label=format!("Download {name} as CSV")
                                    on:click=move |_| { let _ = download_text(&csv, "text/csv;charset=utf-8", &file); }>"CSV"</button>
                            </div>
                            <TableScroll label=name.clone()><table class="data-table measurements" data-testid="measurements-table">
                                <caption>{name.clone()}</caption>
                                <thead><tr>
                                    {table.headings().into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}
                                </tr></thead>
                                <tbody>
                                    {table.rows.iter().map(|r| {
                                        let mut cells = table.row_cells(r).into_iter().zip(table.row_notes(r));
                                        view! {
                                            <tr class:breached=r.ok < r.total>
                                                <th scope="row">{cells.next().map(|(c, _)| c)}</th>
                                                {cells.map(|(c, note)| view! {
                                                    <td class:indicative=note.is_some() title=note>{c}</td>
                                                }).collect_view()}
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table></TableScroll>
                        }
                    }).collect_view())}
            </details>
        </Section>
    }
}
