//! One chart's ECharts instance, kept for the life of its component and updated in place
//! (`setOption`) rather than re-created: [`ChartHandle`], with the tooltip pin, the PNG export
//! and the page-load marks. The component around it is [`super::chart::ChartView`].

use leptos::html::Div;
use leptos::prelude::*;
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::after_paint::after_next_paint;
use super::export::download_url;
use crate::charts::option::{ChartOption, LegendEntry};
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
    fn dispose(this: &EchartsInstance);
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
    fn update_chart(
        instance: &EchartsInstance,
        next: &JsValue,
        prev: &JsValue,
    ) -> Result<(), JsValue>;

    /// Redraws `instance` whenever `host` changes size, and keeps whether it is on screen;
    /// returns the function that stops both.
    #[wasm_bindgen(js_name = watchHost)]
    fn watch_host(instance: &EchartsInstance, host: &web_sys::HtmlElement) -> js_sys::Function;

    /// Whether `host` is on (or near) the screen, as last seen (no layout is read).
    #[wasm_bindgen(js_name = onScreen)]
    fn on_screen(host: &web_sys::HtmlElement) -> bool;

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

fn to_js(value: &serde_json::Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// The chart as the object ECharts reads, with the series named in `hidden` drawn empty. It
/// crosses to JS as one JSON string: far less wasm than converting it value by value.
fn chart_to_js(chart: &ChartOption, hidden: &[String]) -> Result<JsValue, String> {
    let json = serde_json::to_string(chart).map_err(|e| e.to_string())?;
    parse_option(&json, &to_js(&json!(hidden))).map_err(|e| js_error::message(&e))
}

/// True once the vendored ECharts bundle has defined `window.echarts`.
fn echarts_loaded() -> bool {
    js_sys::Reflect::has(&js_sys::global(), &JsValue::from_str("echarts")).unwrap_or(false)
}

/// A drawn chart: the instance, the option it shows, and the JS callbacks it holds (dropped
/// with it, which disposes the instance).
struct Live {
    instance: EchartsInstance,
    option: JsValue,
    _on_click: Closure<dyn FnMut(JsValue)>,
    _on_rendered: Closure<dyn FnMut()>,
    /// Stops watching the host's size and place on screen (`watchHost`).
    unwatch_host: js_sys::Function,
}

impl Live {
    /// Creates the instance on `element`, draws `option` and calls `on_click` with the clicked
    /// point (series and data index) when there is one.
    fn create(
        element: &web_sys::HtmlElement,
        option: JsValue,
        on_click: impl FnMut(Option<(f64, f64)>) + 'static,
    ) -> Result<Live, String> {
        let instance = echarts_init(
            element,
            &JsValue::NULL,
            &to_js(&json!({"renderer": "canvas"})),
        )
        .map_err(|e| format!("the chart could not be created: {}", js_error::message(&e)))?;
        let mut on_click = on_click;
        let on_click = Closure::<dyn FnMut(JsValue)>::new(move |params: JsValue| {
            let read = |key: &str| {
                js_sys::Reflect::get(&params, &JsValue::from_str(key))
                    .ok()
                    .and_then(|v| v.as_f64())
            };
            on_click(read("seriesIndex").zip(read("dataIndex")));
        });
        instance.on("click", on_click.as_ref().unchecked_ref());
        let on_rendered =
            Closure::<dyn FnMut()>::new(|| timing::mark_once(timing::FIRST_CHART_DRAWN));
        instance.on("rendered", on_rendered.as_ref().unchecked_ref());
        let drawn = instance.set_option(&option, &JsValue::UNDEFINED);
        let unwatch_host = watch_host(&instance, element);
        let live = Live {
            instance,
            option,
            _on_click: on_click,
            _on_rendered: on_rendered,
            unwatch_host,
        };
        drawn
            .map(|()| live)
            .map_err(|e| format!("the chart could not be drawn: {}", js_error::message(&e)))
    }

    /// Draws `option` in place of the one shown.
    fn update(&mut self, option: JsValue) -> Result<(), String> {
        let applied = update_chart(&self.instance, &option, &self.option);
        self.option = option;
        applied.map_err(|e| format!("the chart could not be drawn: {}", js_error::message(&e)))
    }

    /// Draws again what the chart shows, through the update path.
    fn redraw(&self) {
        let _ = update_chart(&self.instance, &self.option, &self.option);
    }

    /// Pins the tooltip (at the clicked point) so it stays when the mouse leaves, or releases it.
    fn pin(&self, pin: bool, at: Option<(f64, f64)>) {
        let tooltip = if pin {
            json!({"tooltip": {"alwaysShowContent": true, "triggerOn": "click"}})
        } else {
            json!({"tooltip": {"alwaysShowContent": false, "triggerOn": "mousemove|click"}})
        };
        let _ = self
            .instance
            .set_option(&to_js(&tooltip), &to_js(&json!({"lazyUpdate": false})));
        match at {
            Some((series, data)) if pin => self.instance.dispatch_action(&to_js(
                &json!({"type": "showTip", "seriesIndex": series, "dataIndex": data}),
            )),
            _ if !pin => self
                .instance
                .dispatch_action(&to_js(&json!({"type": "hideTip"}))),
            _ => {}
        }
    }

    /// The picture as a PNG data URL at twice the pixels, on `background`.
    fn png_url(&self, background: &str) -> String {
        self.instance.get_data_url(&to_js(
            &json!({"type": "png", "pixelRatio": 2, "backgroundColor": background}),
        ))
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.unwatch_host.call0(&JsValue::NULL);
        self.instance.dispose();
    }
}

/// The ECharts chart of one [`super::chart::ChartView`]: the instance once drawn, the option
/// waiting for it before then, and what the view shows of it (a pinned tooltip, a failure).
/// `Copy`, so the view's callbacks share it.
#[derive(Clone, Copy)]
pub struct ChartHandle {
    host: NodeRef<Div>,
    live: StoredValue<Option<Live>, LocalStorage>,
    /// The option waiting for its chart to be created (after a paint, once ECharts has loaded).
    waiting: StoredValue<Option<JsValue>, LocalStorage>,
    /// The newest option for the drawn chart, applied in a task of its own (see `update_soon`).
    updating: StoredValue<Option<JsValue>, LocalStorage>,
    pub pinned: RwSignal<bool>,
    pub failure: RwSignal<Option<String>>,
    /// Whether this chart warms up the update path (see [`warm_update_soon`]).
    warm_update: bool,
    /// Whether it is created after the next paint (see [`defer_creation`]).
    defer: bool,
}

impl ChartHandle {
    pub fn new(host: NodeRef<Div>, warm_update: bool) -> ChartHandle {
        ChartHandle {
            host,
            live: StoredValue::new_local(None),
            waiting: StoredValue::new_local(None),
            updating: StoredValue::new_local(None),
            pinned: RwSignal::new(false),
            failure: RwSignal::new(None),
            warm_update,
            defer: defer_creation(),
        }
    }

    /// Shows `chart` with the series named in `hidden` drawn empty: on the kept instance, or on
    /// a new one once the host is in the page (tracking it).
    pub fn show(self, chart: &ChartOption, hidden: &[String]) {
        let option = match chart_to_js(chart, hidden) {
            Ok(option) => option,
            Err(e) => {
                self.failure
                    .set(Some(format!("the chart could not be prepared: {e}")));
                return;
            }
        };
        let Some(host) = self.host.get() else {
            return;
        };
        if self.live.with_value(Option::is_none) {
            self.create_soon(option);
        } else if on_screen(&host) && self.updating.with_value(Option::is_none) {
            self.apply(option);
        } else {
            self.update_soon(option);
        }
    }

    /// Draws `option` on the drawn chart now.
    fn apply(self, option: JsValue) {
        let applied = self
            .live
            .try_update_value(|l| l.as_mut().map(|l| l.update(option)));
        match applied.flatten() {
            Some(Ok(())) => {
                self.pinned.try_set(false);
            }
            Some(Err(e)) => {
                self.failure.try_set(Some(e));
            }
            None => {}
        }
    }

    /// Applies `option` to a chart off screen in a task of its own, after the page's other
    /// updates from the same change: a control that re-ranks a table on screen and redraws
    /// charts further down shows the table first (an ECharts update of a compared chart takes
    /// 10-50 ms), and the options of a fast drag coalesce into the newest.
    fn update_soon(self, option: JsValue) {
        let scheduled = self.updating.with_value(Option::is_some);
        self.updating.set_value(Some(option));
        if scheduled {
            return;
        }
        set_timeout(
            move || {
                if let Some(Some(option)) = self.updating.try_update_value(Option::take) {
                    self.apply(option);
                }
            },
            std::time::Duration::ZERO,
        );
    }

    /// Creates the chart from the newest option once ECharts is there: at once for the page's
    /// first chart, after the next paint for the others.
    fn create_soon(self, option: JsValue) {
        let scheduled = self.waiting.with_value(Option::is_some);
        self.waiting.set_value(Some(option));
        if scheduled {
            return;
        }
        let create_waiting = move || {
            when_echarts_ready(
                move || {
                    if let Some(Some(option)) = self.waiting.try_update_value(Option::take) {
                        self.create(option);
                    }
                },
                move |reason| {
                    self.failure
                        .try_set(Some(format!("the chart library did not load: {reason}")));
                },
            )
        };
        if self.defer {
            after_next_paint(create_waiting);
        } else {
            create_waiting();
        }
    }

    fn create(self, option: JsValue) {
        let Some(element) = self.host.get_untracked() else {
            return;
        };
        if !echarts_loaded() {
            self.failure.set(Some(
                "the chart library (vendor/echarts.min.js) loaded but did not start".into(),
            ));
            return;
        }
        timing::mark_once(timing::FIRST_CHART_STARTED);
        match Live::create(&element, option, move |at| {
            self.set_pin(!self.pinned.get_untracked(), at)
        }) {
            Ok(live) => {
                self.live.set_value(Some(live));
                if self.warm_update {
                    warm_update_soon(self);
                }
            }
            Err(e) => self.failure.set(Some(e)),
        }
    }

    fn set_pin(self, pin: bool, at: Option<(f64, f64)>) {
        self.live
            .with_value(|l| l.iter().for_each(|l| l.pin(pin, at)));
        self.pinned.set(pin);
    }

    /// Releases a pinned tooltip.
    pub fn unpin(self) {
        self.set_pin(false, None);
    }

    /// Saves the chart as `file_name` (PNG), with `legend` (the series shown) drawn under it in
    /// `theme`'s colours: the page's legend is HTML, which the canvas leaves out.
    pub fn export_png(self, legend: &[LegendEntry], theme: Theme, file_name: String) {
        let colors = theme.colors();
        let Some(url) = self
            .live
            .with_value(|l| l.as_ref().map(|l| l.png_url(colors.background)))
        else {
            return;
        };
        let entries: Vec<_> = legend
            .iter()
            .map(|e| json!({"name": e.name, "color": e.color, "dash": e.dash.css()}))
            .collect();
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
            let _ = download_url(&url, &file_name);
        });
    }

    /// Disposes the instance (the component is gone).
    pub fn dispose(self) {
        self.live.update_value(|l| *l = None);
    }
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

thread_local! {
    static CHARTS_CREATED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    static UPDATE_WARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Drawn charts that can warm the update path, until one has.
    static WARM_UP: std::cell::RefCell<Vec<ChartHandle>> = const { std::cell::RefCell::new(Vec::new()) };
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

/// Redraws one drawn chart (an update with the option it shows) once per page life, when the
/// browser is next idle (`whenIdle`). The first update of any chart otherwise also pays for
/// compiling ECharts' update path (the first slider moves took 14-22 ms, the later ones 5-8 ms);
/// the compiled code serves every chart after. The chart is any of those offered that is still
/// drawn then: a page built again (the compared reports read) disposes the first ones. Marks
/// `infermeter:update-warmed` when done.
fn warm_update_soon(chart: ChartHandle) {
    if UPDATE_WARMED.with(std::cell::Cell::get) {
        return;
    }
    let first = WARM_UP.with(|w| {
        let mut w = w.borrow_mut();
        w.push(chart);
        w.len() == 1
    });
    if first {
        when_idle(&Closure::once_into_js(warm_update));
    }
}

fn warm_update() {
    let charts = WARM_UP.with(|w| std::mem::take(&mut *w.borrow_mut()));
    // A redraw would drop a pinned tooltip.
    let drawn = charts.into_iter().find(|c| {
        c.pinned.try_get_untracked() == Some(false)
            && c.live.try_with_value(Option::is_some) == Some(true)
    });
    // With none drawn now, the next chart offered schedules it again.
    if let Some(chart) = drawn {
        UPDATE_WARMED.with(|w| w.set(true));
        chart.live.with_value(|l| l.iter().for_each(Live::redraw));
        timing::mark_once(timing::UPDATE_WARMED);
    }
}
