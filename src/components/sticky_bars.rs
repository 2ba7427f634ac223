//! The bars that stay at the top of the report page while it scrolls: the top bar and, on wide
//! screens, the table of contents under it. Their heights depend on the window's width (the
//! contents wrap to one, two or three rows), so they are measured rather than guessed, into two
//! CSS variables (`keepStickyOffsets` in `public/infermeter-echarts.js`): `--topbar-height`
//! places the contents right under the top bar, and `--sticky-bottom` (where the bars end) is
//! every section's `scroll-margin-top`, so a link to a section scrolls its heading to just below
//! the bars instead of under them.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/public/infermeter-echarts.js")]
extern "C" {
    /// Measures the bars now and whenever they change size; returns the function that stops.
    #[wasm_bindgen(js_name = keepStickyOffsets)]
    fn keep_sticky_offsets(toc: &web_sys::HtmlElement) -> js_sys::Function;
}

/// Measures the top bar and `contents` once the contents are in the document, until the calling
/// component is dropped.
pub fn measure_sticky_bars(contents: NodeRef<leptos::html::Nav>) {
    let stop = StoredValue::new_local(None::<js_sys::Function>);
    Effect::new(move |_| {
        if let Some(toc) = contents.get() {
            stop.set_value(Some(keep_sticky_offsets(&toc)));
        }
    });
    on_cleanup(move || {
        if let Some(Some(stop)) = stop.try_update_value(Option::take) {
            let _ = stop.call0(&JsValue::NULL);
        }
    });
}
