//! One component per report section, in the order of the published reports. Sections are thin:
//! charts come from [`crate::charts`], sentences from [`findings`] (both pure and tested
//! natively); a section only reads [`ReportContext`] and lays them out.

use leptos::prelude::*;

use crate::charts::plot::Plot;
use crate::charts::{plot_by_id, report_labels, sources, Source};
use crate::components::ChartView;
use crate::state::{ReportContext, ViewState};

pub mod capacity;
pub mod deep_dive;
pub mod fastest;
pub mod findings;
pub mod header;
pub mod measurements;
pub mod methodology;
pub mod power;
pub mod scale_up;
pub mod scenarios;
pub mod throughput;

/// The sections from the top of the page down to the first charts: built at once, so the first
/// screen and the first chart show without waiting for the rest.
pub fn leading_sections() -> impl IntoView {
    view! {
        <header::HeaderSection />
        <header::HighlightsSection />
        <TableOfContents />
        <scenarios::ScenariosSection />
        <scenarios::GlossarySection />
        <fastest::FastestSection />
    }
}

/// The sections after [`leading_sections`], in the order of the published reports.
pub fn remaining_sections() -> impl IntoView {
    view! {
        <scale_up::ScaleUpSection />
        <throughput::ThroughputSection />
        <capacity::CapacitySection />
        <deep_dive::DeepDiveSection />
        <measurements::MeasurementsSection />
        <power::PowerSection />
        <methodology::MethodologySection />
        <methodology::ExperienceSection />
    }
}

/// Sections the table of contents links to: (element id, heading), in page order.
const TOC: [(&str, &str); 11] = [
    ("scenarios", "Scenarios"),
    ("glossary", "Glossary"),
    ("fastest", "When am I the fastest?"),
    ("scale-up", "When to scale up"),
    ("throughput", "System throughput"),
    ("capacity", "Use case guidance"),
    ("deep-dive", "Technical deep dive"),
    ("measurements", "All measurements"),
    ("power", "Power & efficiency"),
    ("methodology", "Methodology"),
    ("experience", "What good looks like"),
];

/// Links to every section, as in the published reports; sticky on wide screens.
#[component]
fn TableOfContents() -> impl IntoView {
    view! {
        <nav class="toc" data-testid="toc" aria-label="Contents">
            <ol>
                {TOC.iter().map(|(id, title)| view! {
                    <li><a href=format!("#{id}")>{*title}</a></li>
                }).collect_view()}
            </ol>
        </nav>
    }
}

pub(crate) fn context() -> ReportContext {
    expect_context::<ReportContext>()
}

/// Runs `f` with the loaded reports as chart sources and the view without use-case limits
/// (tracking both): for everything outside the capacity analysis.
pub(crate) fn read_sources<T>(ctx: ReportContext, f: impl FnOnce(&[Source], &ViewState) -> T) -> T {
    read_sources_in(ctx, ctx.common.into(), f)
}

/// [`read_sources`] with a chosen view, e.g. [`scoped_view`] of one use case.
pub(crate) fn read_sources_in<T>(
    ctx: ReportContext,
    view: Signal<ViewState>,
    f: impl FnOnce(&[Source], &ViewState) -> T,
) -> T {
    ctx.reports.with(|reports| {
        let labels = report_labels(reports);
        view.with(|view| f(&sources(reports, &labels), view))
    })
}

/// The view with the limits of `use_case` only (all use cases' limits dropped for `None`), so
/// what reads it re-renders only when they change.
pub(crate) fn scoped_view(ctx: ReportContext, use_case: Option<&str>) -> Signal<ViewState> {
    match use_case {
        None => ctx.common.into(),
        Some(id) => {
            let id = id.to_string();
            Memo::new(move |_| ctx.view.with(|v| v.scoped(Some(&id)))).into()
        }
    }
}

/// A chart with its heading, explanation, caption and finding sentence, as in the reports.
/// Shows a note instead of an empty chart when the reports did not measure what it plots.
#[component]
pub fn ChartBlock(
    /// Chart id from [`crate::charts::CHART_IDS`] (or `capacity.<use case>`).
    #[prop(into)]
    id: String,
    #[prop(into)] title: String,
    #[prop(into)] intro: String,
    #[prop(into)] caption: String,
    /// The finding sentence(s) read from the plot.
    finding: fn(&Plot) -> Option<String>,
    /// Another plot for the finding to read, when the chart's own lacks what it names (a band
    /// across scenarios does not say which scenario an edge comes from).
    #[prop(optional)]
    finding_from: Option<fn(&[Source], &ViewState) -> Plot>,
) -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, id.strip_prefix("capacity."));
    let plot = {
        let id = id.clone();
        Memo::new(move |_| read_sources_in(ctx, view, |s, v| plot_by_id(&id, s, v)))
    };
    let finding_plot = finding_from.map(|f| Memo::new(move |_| read_sources_in(ctx, view, f)));
    let finding_text = move || match finding_plot {
        Some(other) => other.with(finding),
        None => plot.with(|p| p.as_ref().and_then(finding)),
    };
    let has_data = move || plot.with(|p| p.as_ref().is_some_and(|p| !p.is_empty()));
    let chart_id = id.clone();
    let label = title.clone();
    view! {
        <div class="chart-block" data-testid=format!("block-{id}")>
            <h3>{title}</h3>
            <p class="intro">{intro}</p>
            <Show when=has_data fallback=|| view! {
                <p class="muted" data-testid="not-measured">"Not measured in this report."</p>
            }>
                <ChartView id=chart_id.clone() label=label.clone() embed_button=true
                    warm_update=chart_id.starts_with("capacity.")
                    option=move || plot.with(|p| p.as_ref().map(Plot::to_option)).unwrap_or_default()
                    csv=move || plot.with(|p| p.as_ref().map(Plot::to_csv)).unwrap_or_default() />
                <p class="caption">{caption.clone()}</p>
                <p class="finding" data-testid="finding">
                    {finding_text}
                </p>
            </Show>
        </div>
    }
}
