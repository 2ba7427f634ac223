//! The sideways-scrolling box every data table sits in, so a wide table never widens the page.

use leptos::prelude::*;

/// A named region that takes keyboard focus: on a narrow screen the table inside scrolls
/// sideways, and Safari lets the arrow keys scroll only a focused box. The name tells a screen
/// reader what the extra tab stop holds.
#[component]
pub fn TableScroll(#[prop(into)] label: String, children: Children) -> impl IntoView {
    view! { <div class="table-scroll" tabindex="0" role="region" aria-label=label>{children()}</div> }
}

/// A table's name; with reports compared, `report`'s label first says whose table it is.
pub fn table_name(report: Option<&str>, name: &str) -> String {
    report.map_or_else(|| name.to_string(), |r| format!("{r}: {name}"))
}
