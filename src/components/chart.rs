//! The one chart component: a figure with the chart's toolbar (PNG, CSV, Embed, unpin), its
//! canvas and legend. The ECharts instance behind it is a [`ChartHandle`], kept for the life of
//! the component and given each new option (`setOption`) rather than re-created.
//!
//! Use from a section:
//! ```ignore
//! <ChartView id=chart.id label=chart.title
//!     option=move || plot().to_option() csv=move || plot().to_csv() />
//! ```
//! `id` is stable and unique on the page: it is `data-chart-id`, the embed key (`?chart=ID`) and
//! the export file name.

use leptos::html::Div;
use leptos::prelude::*;

use super::echarts::ChartHandle;
use super::export::{download_text, file_stem};
use crate::charts::option::{ChartOption, LegendEntry};
use crate::state::ReportContext;
use crate::theme::Theme;

/// One chart: a container with `data-testid="chart"` and `data-chart-id`, export buttons, and the
/// ECharts canvas. Click a data point to pin its tooltip; click again to release it.
#[component]
pub fn ChartView(
    /// Stable id, unique on the page: `data-chart-id`, embed key and export file name.
    #[prop(into)]
    id: String,
    /// What the chart shows, for screen readers and the export buttons' labels.
    #[prop(into)]
    label: String,
    /// Builds the chart; re-run (and applied to the kept instance) when the signals it reads change.
    option: impl Fn() -> ChartOption + 'static,
    /// The chart's data as CSV, built on demand for the CSV button.
    csv: impl Fn() -> String + 'static,
    /// Canvas height in CSS pixels.
    #[prop(default = 360)]
    height: u32,
    /// Whether this chart, if it is the first of the page to ask, warms up the update path: set
    /// on charts that controls redraw.
    #[prop(default = false)]
    warm_update: bool,
    /// Whether the toolbar offers this chart alone (the embed route).
    #[prop(default = false)]
    embed_button: bool,
) -> impl IntoView {
    let host = NodeRef::<Div>::new();
    let chart = ChartHandle::new(host, warm_update);
    // The chart's legend entries (set when an option is drawn), and those the reader switched
    // off, by series name.
    let legend = RwSignal::new(Vec::<LegendEntry>::new());
    let hidden = RwSignal::new(Vec::<String>::new());

    Effect::new(move |_| {
        // The option reads the theme (its colours) itself.
        let option = option();
        if legend.with_untracked(|l| *l != option.legend) {
            legend.set(option.legend.clone());
        }
        hidden.with(|h| chart.show(&option, h));
    });
    on_cleanup(move || chart.dispose());

    view! {
        <figure class="chart" data-testid="chart" data-chart-id=id.clone()
            data-pinned=move || chart.pinned.get().to_string()>
            <ChartTools id=id.clone() label=label.clone() chart legend hidden csv embed_button />
            <div class="chart-canvas" node_ref=host role="img" aria-label=label.clone()
                style=format!("height: {height}px")></div>
            <ChartLegend entries=legend hidden />
            {move || chart.failure.get().map(|message| view! {
                <p class="chart-failure" role="alert">{message}</p>
            })}
        </figure>
    }
}

/// The toolbar: "Unpin tooltip" while a tooltip is pinned, the PNG of the series shown, the
/// CSV of the data, and (where asked) the chart alone.
#[component]
fn ChartTools(
    id: String,
    label: String,
    chart: ChartHandle,
    legend: RwSignal<Vec<LegendEntry>>,
    hidden: RwSignal<Vec<String>>,
    csv: impl Fn() -> String + 'static,
    embed_button: bool,
) -> impl IntoView {
    let theme = use_context::<ReportContext>()
        // A memo: read by the PNG export for its background and legend colours.
        .map(|ctx| Memo::new(move |_| ctx.view.with(|v| v.theme)).into())
        .unwrap_or_else(|| Signal::stored(Theme::Light));

    let stem = file_stem(&id);
    let (png_name, csv_name) = (format!("{stem}.png"), format!("{stem}.csv"));
    let export_png = move |_| {
        let shown: Vec<LegendEntry> = legend.with_untracked(|l| {
            hidden.with_untracked(|h| l.iter().filter(|e| !h.contains(&e.name)).cloned().collect())
        });
        chart.export_png(&shown, theme.get_untracked(), png_name.clone());
    };
    let export_csv = move |_| {
        let _ = download_text(&untrack(&csv), "text/csv;charset=utf-8", &csv_name);
    };
    view! {
        <div class="chart-tools" role="toolbar" aria-label=format!("{label}: export")>
            <Show when=move || chart.pinned.get()>
                <button type="button" class="chart-tool" on:click=move |_| chart.unpin()
                    data-testid="chart-unpin">"Unpin tooltip"</button>
            </Show>
            <button type="button" class="chart-tool" data-testid="export-png"
                aria-label=format!("Download {label} as PNG") on:click=export_png>"PNG"</button>
            <button type="button" class="chart-tool" data-testid="export-csv"
                aria-label=format!("Download the data of {label} as CSV") on:click=export_csv>"CSV"</button>
            {embed_button.then(|| {
                view! {
                    <button type="button" class="chart-tool" data-testid="embed-button"
                        title="Open this chart alone: its address embeds in an iframe"
                        on:click=move |_| open_alone(&id)>"Embed"</button>
                }
            })}
        </div>
    }
}

/// The legend: a toggle button per series (pressed = shown), in the series' colour.
#[component]
fn ChartLegend(
    entries: RwSignal<Vec<LegendEntry>>,
    hidden: RwSignal<Vec<String>>,
) -> impl IntoView {
    let toggle = move |name: String| {
        hidden.update(|h| match h.iter().position(|n| *n == name) {
            Some(i) => {
                h.remove(i);
            }
            None => h.push(name),
        })
    };
    view! {
        <ul class="chart-legend" data-testid="chart-legend" aria-label="Series (press to show or hide)">
            {move || entries.get().into_iter().map(|entry| {
                let shown = {
                    let name = entry.name.clone();
                    move || hidden.with(|h| !h.contains(&name))
                };
                let name = entry.name.clone();
                let swatch = format!(
                    "border-top: 3px {} {}",
                    entry.dash.css(),
                    entry.color
                );
                view! {
                    <li>
                        <button type="button" class="legend-item" data-testid="legend-item"
                            aria-pressed=move || shown().to_string()
                            on:click=move |_| toggle(name.clone())>
                            <span class="legend-swatch" style=swatch aria-hidden="true"></span>
                            {entry.name}
                        </button>
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

/// Opens the embed route of chart `id` with the view as it is: the app mirrors the view into
/// the address (src/address_bar.rs), so the chart keeps the reader's limits and statistic.
/// Read at the click, not kept in a link per chart, which re-rendered with every change.
fn open_alone(id: &str) {
    crate::address_bar::flush();
    let location = window().location();
    let search = location.search().unwrap_or_default();
    let id: String = form_urlencoded::byte_serialize(id.as_bytes()).collect();
    let _ = location.set_search(&format!("{search}&chart={id}"));
}
