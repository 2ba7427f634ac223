//! The view in the address bar, so a copied link reproduces it. Writes wait until the view has
//! held still for a moment: browsers drop history updates beyond a rate (Chromium: over 200 in
//! 10 s) or refuse them (Safari: over 100 in 30 s), and a dragged slider changes the view at
//! every frame, which left the address at some earlier value of the drag.

use std::cell::RefCell;
use std::time::Duration;

use leptos::prelude::*;

/// How long the view must hold still before the address is written: a drag writes once, at
/// its end, and a reader's single steps stay well under the browsers' caps.
const SETTLE: Duration = Duration::from_millis(400);

thread_local! {
    /// The query waiting to be written, and the timer that writes it.
    static PENDING: RefCell<Option<(String, TimeoutHandle)>> = const { RefCell::new(None) };
}

/// The address's query, `?` included (empty when it has none).
pub fn query() -> String {
    window().location().search().unwrap_or_default()
}

/// Writes `query` (without `?`) into the address once the view has held still for [`SETTLE`],
/// in place of any write still waiting.
pub fn write_soon(query: String) {
    if let Some((_, timer)) = PENDING.with(|p| p.borrow_mut().take()) {
        timer.clear();
    }
    match set_timeout_with_handle(flush, SETTLE) {
        Ok(timer) => PENDING.with(|p| *p.borrow_mut() = Some((query, timer))),
        Err(_) => write(&query),
    }
}

/// Writes the waiting query now: for what reads the address next (the embed link) and before
/// the page goes away.
pub fn flush() {
    if let Some((query, timer)) = PENDING.with(|p| p.borrow_mut().take()) {
        timer.clear();
        write(&query);
    }
}

/// Replaces the address's query without adding a history entry (a slider moves a lot).
fn write(query: &str) {
    let location = window().location();
    if location
        .search()
        .unwrap_or_default()
        .trim_start_matches('?')
        == query
    {
        return;
    }
    let path = location.pathname().unwrap_or_default();
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    let _ = window()
        .history()
        .and_then(|h| h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url)));
}
