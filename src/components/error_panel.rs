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
