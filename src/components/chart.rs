//! The one ECharts chart component. It keeps the ECharts instance for the life of the component
//! and applies new options to it (`setOption`) when its `option` signal changes, instead of
//! re-creating the chart; it adds the tooltip pin, PNG and CSV export and the page-load mark.
//!
//! Use from a section:
//! ```ignore
//! <ChartView id="fastest.decode" label="Decode Speed per Scenario"
//!     option=move || plot().to_option() csv=move || plot().to_csv() />
//! ```
//! `id` is stable and unique on the page: it is `data-chart-id`, the embed key (`?chart=ID`) and
//! the export file name.

use crate::charts::option::{ChartOption, LegendEntry};
use leptos::html::Div;
use leptos::prelude::*;
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::after_paint::after_next_paint;
use super::export::{download_text, download_url, file_stem};
use crate::state::ReportContext;
use crate::theme::Theme;
use crate::{js_error, timing};

#[wasm_bindgen]
extern "C" {
    /// An ECharts instance (`echarts.init`), from the vendored bundle's global `echarts`.
    type EchartsInstance;

    #[wasm_bindgen(catch, js_namespace = echarts, js_name = init)]
    fn echarts_init(
        element: &web_sys::HtmlElement,
        theme: &JsValue,
        opts: &JsValue,
    ) -> Result<EchartsInstance, JsValue>;

    #[wasm_bindgen(catch, method, js_name = setOption)]
    fn set_option(this: &EchartsInstance, option: &JsValue, opts: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(method, js_name = getDataURL)]
    fn get_data_url(this: &EchartsInstance, opts: &JsValue) -> String;

    #[wasm_bindgen(method)]
    fn on(this: &EchartsInstance, event: &str, handler: &js_sys::Function);

    #[wasm_bindgen(method, js_name = dispatchAction)]
    fn dispatch_action(this: &EchartsInstance, action: &JsValue);

    #[wasm_bindgen(method)]
    fn resize(this: &EchartsInstance);

    #[wasm_bindgen(method)]
    fn dispose(this: &EchartsInstance);
}

/// The live instance, the option it shows, and the JS callbacks it holds (dropped with it).
struct Live {
    instance: EchartsInstance,
    option: JsValue,
    _on_click: Closure<dyn FnMut(JsValue)>,
    _on_rendered: Closure<dyn FnMut()>,
    /// Stops redrawing the chart at its host's new sizes (`watchSize`).
    unwatch_size: js_sys::Function,
}

/// True once the vendored ECharts bundle has defined `window.echarts`.
fn echarts_loaded() -> bool {
    js_sys::Reflect::has(&js_sys::global(), &JsValue::from_str("echarts")).unwrap_or(false)
}

/// Runs `ready` now if ECharts has loaded, else once it has (index.html loads it beside the
/// app); `failed` gets the reason when it cannot load.
fn when_echarts_ready(ready: impl FnOnce() + 'static, failed: impl FnOnce(String) + 'static) {
    if echarts_loaded() {
        ready();
        return;
    }
    let loaded = echarts_ready();
    wasm_bindgen_futures::spawn_local(async move {
        match wasm_bindgen_futures::JsFuture::from(loaded).await {
            Ok(_) => ready(),
            Err(e) => failed(js_error::message(&e)),
        }
    });
}

#[wasm_bindgen(module = "/public/infermeter-echarts.js")]
extern "C" {
    /// The option object ECharts reads, from the chart's JSON with its named formatters
    /// replaced by their functions and the app's tooltip defaults added.
    #[wasm_bindgen(catch, js_name = parseOption)]
    fn parse_option(json: &str, hidden: &JsValue) -> Result<JsValue, JsValue>;

    /// Applies `next` to a chart drawn from `prev`: series merged when that yields exactly
    /// `next`, else replaced (their count may change); the rest merged, since replacing the axes
    /// too would detach the tooltip's axis pointer.
    #[wasm_bindgen(catch, js_name = updateChart)]
    fn update(instance: &EchartsInstance, next: &JsValue, prev: &JsValue) -> Result<(), JsValue>;

    /// Redraws `instance` whenever `host` changes size; returns the function that stops it.
    #[wasm_bindgen(js_name = watchSize)]
    fn watch_size(instance: &EchartsInstance, host: &web_sys::HtmlElement) -> js_sys::Function;

    /// Runs `f` (called once) when the browser is next idle, or soon where it cannot say.
    #[wasm_bindgen(js_name = whenIdle)]
    fn when_idle(f: &JsValue);

    /// Settles once the ECharts bundle has run; rejects with the reason it did not load.
    #[wasm_bindgen(js_name = echartsReady)]
    fn echarts_ready() -> js_sys::Promise;

    /// The PNG `url` with the legend `entries` drawn under it (a promise of the new data URL).
    #[wasm_bindgen(js_name = withLegend)]
    fn with_legend(url: &str, entries: &JsValue, text: &str, background: &str) -> js_sys::Promise;
}

/// The chart as the object ECharts reads, with the series named in `hidden` drawn empty. It
/// crosses to JS as one JSON string: far less wasm than converting it value by value.
fn chart_to_js(chart: &ChartOption, hidden: &[String]) -> Result<JsValue, String> {
    let json = serde_json::to_string(chart).map_err(|e| e.to_string())?;
    parse_option(&json, &to_js(&json!(hidden))).map_err(|e| js_error::message(&e))
}

fn to_js(value: &serde_json::Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

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
    /// Whether this chart, if it is the first of the page to ask, warms up the update path (see
    /// [`warm_update_once`]): set on charts that controls redraw.
    #[prop(default = false)]
    warm_update: bool,
    /// Whether the toolbar offers this chart alone (the embed route).
    #[prop(default = false)]
    embed_button: bool,
) -> impl IntoView {
    let host = NodeRef::<Div>::new();
    // The chart's legend entries (set when an option is drawn), and those the reader switched
    // off, by series name.
    let legend = RwSignal::new(Vec::<LegendEntry>::new());
    let hidden = RwSignal::new(Vec::<String>::new());
    let live: StoredValue<Option<Live>, LocalStorage> = StoredValue::new_local(None);
    let pinned = RwSignal::new(false);
    let failure = RwSignal::new(None::<String>);
    let theme = use_context::<ReportContext>()
        // A memo: read by the PNG export for its background and legend colours.
        .map(|ctx| Memo::new(move |_| ctx.view.with(|v| v.theme)).into())
        .unwrap_or_else(|| Signal::stored(Theme::Light));

    let set_pin = move |instance: &EchartsInstance, pin: bool, at: Option<(f64, f64)>| {
        let tooltip = if pin {
            json!({"tooltip": {"alwaysShowContent": true, "triggerOn": "click"}})
        } else {
            json!({"tooltip": {"alwaysShowContent": false, "triggerOn": "mousemove|click"}})
        };
        let _ = instance.set_option(&to_js(&tooltip), &to_js(&json!({"lazyUpdate": false})));
        match at {
            Some((series, data)) if pin => instance.dispatch_action(&to_js(
                &json!({"type": "showTip", "seriesIndex": series, "dataIndex": data}),
            )),
            _ if !pin => instance.dispatch_action(&to_js(&json!({"type": "hideTip"}))),
            _ => {}
        }
        pinned.set(pin);
    };

    // Creates the ECharts instance on the host element and draws `option` on it.
    let create = move |option: JsValue| {
        let Some(element) = host.get_untracked() else {
            return;
        };
        if !echarts_loaded() {
            failure.set(Some(
                "the chart library (vendor/echarts.min.js) loaded but did not start".into(),
            ));
            return;
        }
        timing::mark_once(timing::FIRST_CHART_STARTED);
        let element: &web_sys::HtmlElement = element.as_ref();
        let instance = match echarts_init(
            element,
            &JsValue::NULL,
            &to_js(&json!({"renderer": "canvas"})),
        ) {
            Ok(instance) => instance,
            Err(e) => {
                failure.set(Some(format!(
                    "the chart could not be created: {}",
                    js_error::message(&e)
                )));
                return;
            }
        };
        let on_click = Closure::<dyn FnMut(JsValue)>::new(move |params: JsValue| {
            let read = |key: &str| {
                js_sys::Reflect::get(&params, &JsValue::from_str(key))
                    .ok()
                    .and_then(|v| v.as_f64())
            };
            let at = read("seriesIndex").zip(read("dataIndex"));
            let pin = !pinned.get_untracked();
            live.with_value(|l| {
                if let Some(l) = l {
                    set_pin(&l.instance, pin, at);
                }
            });
        });
        instance.on("click", on_click.as_ref().unchecked_ref());
        let on_rendered =
            Closure::<dyn FnMut()>::new(|| timing::mark_once(timing::FIRST_CHART_DRAWN));
        instance.on("rendered", on_rendered.as_ref().unchecked_ref());
        if let Err(e) = instance.set_option(&option, &JsValue::UNDEFINED) {
            failure.set(Some(format!(
                "the chart could not be drawn: {}",
                js_error::message(&e)
            )));
        } else if warm_update {
            warm_update_once(move || {
                // Redraws what the chart shows (unless a tooltip is pinned: that would drop it).
                if pinned.get_untracked() {
                    return;
                }
                live.with_value(|l| {
                    if let Some(l) = l {
                        let _ = update(&l.instance, &l.option, &l.option);
                    }
                });
            });
        }
        let unwatch_size = watch_size(&instance, element);
        live.set_value(Some(Live {
            instance,
            option,
            _on_click: on_click,
            _on_rendered: on_rendered,
            unwatch_size,
        }));
    };
    // The option waiting for its chart to be created (see `defer_creation`, `when_echarts_ready`).
    let waiting: StoredValue<Option<JsValue>, LocalStorage> = StoredValue::new_local(None);
    let defer = defer_creation();

    Effect::new(move |_| {
        // The option reads the theme (its colours) itself.
        let chart = option();
        if legend.with_untracked(|l| *l != chart.legend) {
            legend.set(chart.legend.clone());
        }
        let option = match hidden.with(|h| chart_to_js(&chart, h)) {
            Ok(option) => option,
            Err(e) => {
                failure.set(Some(format!("the chart could not be prepared: {e}")));
                return;
            }
        };
        if host.get().is_none() {
            return;
        }
        let applied = live.try_update_value(|l| {
            l.as_mut().map(|l| {
                let applied = update(&l.instance, &option, &l.option);
                l.option = option.clone();
                applied
            })
        });
        match applied.flatten() {
            Some(Ok(())) => pinned.set(false),
            Some(Err(e)) => failure.set(Some(format!(
                "the chart could not be drawn: {}",
                js_error::message(&e)
            ))),
            None => {
                let scheduled = waiting.with_value(Option::is_some);
                waiting.set_value(Some(option));
                if scheduled {
                    return;
                }
                // Created from the newest option once ECharts is there (at once when it is).
                let create_waiting = move || {
                    when_echarts_ready(
                        move || {
                            if let Some(Some(option)) = waiting.try_update_value(Option::take) {
                                create(option);
                            }
                        },
                        move |reason| {
                            failure
                                .try_set(Some(format!("the chart library did not load: {reason}")));
                        },
                    )
                };
                if defer {
                    after_next_paint(create_waiting);
                } else {
                    create_waiting();
                }
            }
        }
    });

    on_cleanup(move || {
        live.update_value(|l| {
            if let Some(l) = l.take() {
                let _ = l.unwatch_size.call0(&JsValue::NULL);
                l.instance.dispose();
            }
        });
    });

    let stem = file_stem(&id);
    let png_name = format!("{stem}.png");
    let csv_name = format!("{stem}.csv");
    let export_png = move |_| {
        let colors = theme.get_untracked().colors();
        let url = live.with_value(|l| {
            l.as_ref().map(|l| {
                l.instance.get_data_url(&to_js(
                    &json!({"type": "png", "pixelRatio": 2, "backgroundColor": colors.background}),
                ))
            })
        });
        let Some(url) = url else { return };
        // The legend is HTML beside the canvas: draw it into the picture too.
        let entries: Vec<_> = legend.with_untracked(|l| {
            hidden.with_untracked(|h| {
                l.iter()
                    .filter(|e| !h.contains(&e.name))
                    .map(|e| json!({"name": e.name, "color": e.color, "dash": e.dash.css()}))
                    .collect()
            })
        });
        let png_name = png_name.clone();
        let composed = with_legend(
            &url,
            &to_js(&json!(entries)),
            colors.text,
            colors.background,
        );
        wasm_bindgen_futures::spawn_local(async move {
            let url = wasm_bindgen_futures::JsFuture::from(composed)
                .await
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or(url);
            let _ = download_url(&url, &png_name);
        });
    };
    let export_csv = move |_| {
        let csv = untrack(&csv);
        let _ = download_text(&csv, "text/csv;charset=utf-8", &csv_name);
    };
    let unpin = move |_| {
        live.with_value(|l| {
            if let Some(l) = l {
                set_pin(&l.instance, false, None);
            }
        })
    };

    view! {
        <figure class="chart" data-testid="chart" data-chart-id=id.clone()
            data-pinned=move || pinned.get().to_string()>
            <div class="chart-tools" role="toolbar" aria-label=format!("{label}: export")>
                <Show when=move || pinned.get()>
                    <button type="button" class="chart-tool" on:click=unpin
                        data-testid="chart-unpin">"Unpin tooltip"</button>
                </Show>
                <button type="button" class="chart-tool" data-testid="export-png"
                    aria-label=format!("Download {label} as PNG") on:click=export_png>"PNG"</button>
                <button type="button" class="chart-tool" data-testid="export-csv"
                    aria-label=format!("Download the data of {label} as CSV") on:click=export_csv>"CSV"</button>
                {embed_button.then(|| {
                    let id = id.clone();
                    view! {
                        <button type="button" class="chart-tool" data-testid="embed-button"
                            title="Open this chart alone: its address embeds in an iframe"
                            on:click=move |_| open_alone(&id)>"Embed"</button>
                    }
                })}
            </div>
            <div class="chart-canvas" node_ref=host role="img" aria-label=label.clone()
                style=format!("height: {height}px")></div>
            <ChartLegend entries=legend hidden />
            {move || failure.get().map(|message| view! {
                <p class="chart-failure" role="alert">{message}</p>
            })}
        </figure>
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

thread_local! {
    static CHARTS_CREATED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether this chart waits for the next paint before it is created: all but the first of the
/// page, so the first chart is drawn, and the page around it shown, without waiting for the (up
/// to a few dozen) others.
fn defer_creation() -> bool {
    CHARTS_CREATED.with(|n| {
        n.set(n.get() + 1);
        n.get() > 1
    })
}

thread_local! {
    static UPDATE_WARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `redraw` (an update of a drawn chart with the option it shows) once per page life, when
/// the browser is next idle (`whenIdle`). The first update of any chart otherwise also pays for
/// compiling ECharts' update path (the first slider moves took 14-22 ms, the later ones 5-8 ms);
/// the compiled code serves every chart after. Marks `infermeter:update-warmed` when done.
fn warm_update_once(redraw: impl FnOnce() + 'static) {
    if UPDATE_WARMED.with(|w| w.replace(true)) {
        return;
    }
    when_idle(&Closure::once_into_js(move || {
        redraw();
        timing::mark_once(timing::UPDATE_WARMED);
    }));
}
