//! Highlight cards: one headline figure with its label and the condition it was measured under,
//! as in the "HIGHLIGHTS" block of the published reports.

use leptos::prelude::*;

/// One card, e.g. value "218.4 tok/s", label "Peak throughput", context "@ 5 concurrent requests".
#[component]
pub fn HighlightCard(
    #[prop(into)] value: String,
    #[prop(into)] label: String,
    #[prop(optional, into)] context: Option<String>,
    /// `data-testid` of the card, e.g. `highlight-peak-decode`.
    #[prop(optional, into)]
    testid: Option<String>,
    /// Why the figure is only indicative ("indicative: p99 of 36 samples"), shown under it.
    #[prop(default = None)]
    note: Option<String>,
) -> impl IntoView {
    view! {
        <div class="highlight-card" data-testid=testid.unwrap_or_else(|| "highlight-card".into())>
            <div class="highlight-value" class:indicative=note.is_some()>{value}</div>
            <div class="highlight-label">{label}</div>
            {context.map(|c| view! { <div class="highlight-context">{c}</div> })}
            {note.map(|n| view! { <div class="highlight-note" data-testid="indicative-note">{n}</div> })}
        </div>
    }
}

/// A responsive row of highlight cards.
#[component]
pub fn HighlightGrid(children: Children) -> impl IntoView {
    view! { <div class="highlight-grid">{children()}</div> }
}
