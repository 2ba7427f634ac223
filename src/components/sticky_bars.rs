//! The bars that stay at the top of the report page while it scrolls: the top bar and, on wide
//! screens, the table of contents under it. Their heights depend on the window's width (the
//! contents wrap to one, two or three rows), so they are measured rather than guessed, and kept
//! in two CSS variables on the root element (`style/main.css` reads them):
//! `--topbar-height` places the contents right under the top bar, and `--sticky-bottom` (where
//! the bars end) is every section's `scroll-margin-top`, so a link to a section scrolls its
//! heading to just below the bars instead of under them.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Measures the top bar (`.topbar`) and `contents` now and whenever either changes size, until
/// the calling component is dropped.
pub fn measure_sticky_bars(contents: NodeRef<leptos::html::Nav>) {
    let measure = move || {
        let toc = contents.get_untracked().map(web_sys::HtmlElement::from);
        set_sticky_offsets(toc.as_ref());
    };
    let on_resize = Closure::<dyn FnMut()>::new(measure);
    let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) else {
        return;
    };
    let kept = StoredValue::new_local(Some((observer, on_resize)));
    // Observed once the contents are in the document; the observer reports each size it
    // starts with, so the variables are set at once.
    Effect::new(move |_| {
        let Some(toc) = contents.get() else { return };
        kept.with_value(|kept| {
            if let Some((observer, _)) = kept {
                observer.observe(&toc);
                if let Some(topbar) = document().query_selector(".topbar").ok().flatten() {
                    observer.observe(&topbar);
                }
            }
        });
    });
    on_cleanup(move || {
        if let Some(Some((observer, _))) = kept.try_update_value(Option::take) {
            observer.disconnect();
        }
    });
}

/// Sets `--topbar-height` and `--sticky-bottom` (CSS pixels) from the bars as laid out now.
fn set_sticky_offsets(toc: Option<&web_sys::HtmlElement>) {
    let topbar = document()
        .query_selector(".topbar")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    let topbar_height = topbar.as_ref().map_or(0, |e| e.offset_height());
    let mut bottom = topbar.filter(is_sticky).map_or(0, |_| topbar_height);
    if let Some(toc) = toc.filter(|t| is_sticky(t)) {
        bottom = bottom.max(topbar_height + toc.offset_height());
    }
    let Some(root) = document()
        .document_element()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    let style = root.style();
    let _ = style.set_property("--topbar-height", &format!("{topbar_height}px"));
    let _ = style.set_property("--sticky-bottom", &format!("{bottom}px"));
}

/// Whether `element` is laid out `position: sticky` (the style sheet makes the bars sticky on
/// some widths only).
fn is_sticky(element: &web_sys::HtmlElement) -> bool {
    window()
        .get_computed_style(element)
        .ok()
        .flatten()
        .and_then(|s| s.get_property_value("position").ok())
        .is_some_and(|p| p == "sticky")
}
