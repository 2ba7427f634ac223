//! The panel shown instead of a report that cannot be read: what went wrong and where.

use leptos::prelude::*;

/// A visible, announced error, headed as the page (it stands in for the report). `source` names the input (URL or file name); `detail` is the
/// loader's message (with line, column or JSON path) and is shown as text, never as markup.
#[component]
pub fn ErrorPanel(
    #[prop(into)] title: String,
    #[prop(into)] detail: String,
    #[prop(default = None)] source: Option<String>,
) -> impl IntoView {
    view! {
        <section class="error-panel" data-testid="error-panel" role="alert">
            <h1>{title}</h1>
            {source.map(|s| view! { <p class="error-source">"Input: " <code>{s}</code></p> })}
            <pre class="error-detail" data-testid="error-detail">{detail}</pre>
            <p class="error-hint">
                "Check that the file is an infermeter report (JSON written by "
                <code>"infermeter run"</code>") and that it was copied completely, or "
                <a href="./">"pick another report"</a>"."
            </p>
        </section>
    }
}

/// Stands in for the sections below the first screen when their code, a wasm module fetched
/// after the first paint (`sections::remaining_sections`), could not be fetched or started: the
/// page says so instead of ending blank under the first section.
#[component]
pub fn SectionsUnavailablePanel() -> impl IntoView {
    view! {
        <section class="error-panel" data-testid="sections-error" role="alert">
            <h2>"The rest of this report could not be loaded"</h2>
            <p>
                "The sections below this point come from a file of their own, which the browser \
                could not fetch or start (its console names the error). Reload the page to try \
                again; if that fails too, check the connection to the server that serves this page."
            </p>
        </section>
    }
}
