//! Controls: the page-wide theme toggle, and the number field sections use for one setting.

use infermeter_report::analysis::format::format_number;
use leptos::prelude::*;

use crate::number::parse_f64;
use crate::state::ViewState;
use crate::theme::Theme;

/// Switches light/dark; the choice is part of the view state (and so of the URL). A toggle
/// button: its name stays "Dark theme" and `aria-pressed` says whether it is on, since a screen
/// reader's user hears the name the button shows.
#[component]
pub fn ThemeToggle(view_state: RwSignal<ViewState>) -> impl IntoView {
    view! {
        <button type="button" class="theme-toggle" data-testid="theme-toggle"
            aria-pressed=move || view_state.with(|v| v.theme == Theme::Dark).to_string()
            on:click=move |_| view_state.update(|v| v.theme = v.theme.toggled())>
            "Dark theme"
        </button>
    }
}

/// A labelled number input for one setting of the view: it shows `value` (empty when it is not
/// a number: a setting with no value yet), and each number typed
/// that `accept`s goes to `set` at once (anything else, such as a half-typed "0.", waits).
#[component]
pub fn NumberField(
    #[prop(into)] label: String,
    #[prop(into)] testid: String,
    /// The input's `min` and `step` attributes.
    min: &'static str,
    step: &'static str,
    value: impl Fn() -> f64 + Send + Sync + 'static,
    accept: fn(f64) -> bool,
    set: impl Fn(f64) + 'static,
) -> impl IntoView {
    view! {
        <label class="control">
            <span>{label}</span>
            <input type="number" min=min step=step data-testid=testid
                prop:value=move || Some(value()).filter(|v| v.is_finite()).map(format_number).unwrap_or_default()
                on:input=move |ev| {
                    if let Some(v) = parse_f64(&event_target_value(&ev)) {
                        if v.is_finite() && accept(v) {
                            set(v);
                        }
                    }
                } />
        </label>
    }
}
