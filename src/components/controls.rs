//! Page-wide controls that are not part of a section.

use leptos::prelude::*;

use crate::state::ViewState;
use crate::theme::Theme;

/// Switches light/dark; the choice is part of the view state (and so of the URL).
#[component]
pub fn ThemeToggle(view_state: RwSignal<ViewState>) -> impl IntoView {
    let dark = move || view_state.with(|v| v.theme == Theme::Dark);
    view! {
        <button type="button" class="theme-toggle" data-testid="theme-toggle"
            aria-pressed=move || dark().to_string()
            aria-label="Dark theme"
            on:click=move |_| view_state.update(|v| v.theme = v.theme.toggled())>
            {move || if dark() { "Light theme" } else { "Dark theme" }}
        </button>
    }
}
