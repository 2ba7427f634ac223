//! infermeter viewer: mounts the app. Everything else lives in the modules below.

mod address_bar;
mod app;
mod charts;
mod components;
mod facts;
mod findings;
mod js_error;
mod load;
mod number;
mod sections;
mod state;
mod tables;
mod theme;
mod timing;

fn main() {
    timing::mark_once(timing::APP_STARTED);
    console_error_panic_hook::set_once();
    // index.html's "Loading…" line, which says why if the app cannot start.
    if let Some(boot) = leptos::prelude::document().get_element_by_id("boot") {
        boot.remove();
    }
    leptos::mount::mount_to_body(app::App);
}
