//! infermeter viewer: mounts the app. Everything else lives in the modules below.

mod app;
mod charts;
mod components;
mod js_error;
mod load;
mod sections;
mod state;
mod theme;
mod timing;

fn main() {
    timing::mark_once(timing::APP_STARTED);
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
