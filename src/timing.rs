//! Performance marks along the way to the first chart, and when the page is ready for controls. `tests/browser/bench.mjs` reads them
//! (`performance.getEntriesByName`) and prints where the page-load time goes.

/// The app's `main` has started: the wasm is downloaded, compiled and instantiated.
pub const APP_STARTED: &str = "infermeter:app-started";
/// The reports named in the URL are fetched, parsed and validated.
pub const REPORTS_READ: &str = "infermeter:reports-read";
/// The compared reports are read, after the main report's page was drawn without them
/// (`load::Reading::rest`); the page is built again with all of them next.
pub const COMPARED_READ: &str = "infermeter:compared-read";
/// The first chart is about to be created: its section is built and ECharts has loaded (index.html
/// marks `infermeter:echarts-loaded`).
pub const FIRST_CHART_STARTED: &str = "infermeter:first-chart-started";
/// The first chart of the page has drawn (ECharts' `rendered` event).
pub const FIRST_CHART_DRAWN: &str = "infermeter:first-chart-drawn";
/// ECharts' update path has been run once, in idle time (`components::chart`).
pub const UPDATE_WARMED: &str = "infermeter:update-warmed";

/// Sets the mark `name` unless the page already has one: each step is marked the first time.
pub fn mark_once(name: &str) {
    let Some(performance) = web_sys::window().and_then(|w| w.performance()) else {
        return;
    };
    if performance.get_entries_by_name(name).length() == 0 {
        let _ = performance.mark(name);
    }
}
