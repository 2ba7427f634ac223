//! One component per report section, in the order of the published reports. Sections are thin:
//! charts come from [`crate::charts::registry`], sentences from [`crate::findings`], table rows
//! from [`crate::tables`] (all pure and tested natively); a section only reads [`ReportContext`]
//! and lays them out.

use leptos::prelude::*;

use crate::charts::plot::Plot;
use crate::charts::registry::{plot_by_id, scope_of, Chart};
use crate::charts::{sources, Source};
use crate::components::{measure_sticky_bars, ChartView};
use crate::findings::{for_each_report, Finding, Findings};
use crate::state::{ReportContext, Scope, ViewState};

pub mod agents;
pub mod capacity;
pub mod choice;
pub mod deep_dive;
pub mod fastest;
pub mod goodput;
pub mod header;
pub mod measurements;
pub mod methodology;
pub mod power;
pub mod scale_up;
pub mod scenarios;
pub mod throughput;
pub mod users;
pub mod what_if;

/// A section of the report page: its element id (the table of contents' anchor; the test id
/// is `section-<id>`) and heading, each written once.
#[derive(Debug, Clone, Copy)]
pub struct SectionInfo {
    pub id: &'static str,
    pub title: &'static str,
}

pub const CHOICE: SectionInfo = SectionInfo {
    id: "choice",
    title: "Which Configuration?",
};
pub const SCENARIOS: SectionInfo = SectionInfo {
    id: "scenarios",
    title: "What Do the Scenarios Represent?",
};
pub const GLOSSARY: SectionInfo = SectionInfo {
    id: "glossary",
    title: "Metric Glossary",
};
pub const FASTEST: SectionInfo = SectionInfo {
    id: "fastest",
    title: "When Am I the Fastest?",
};
pub const SCALE_UP: SectionInfo = SectionInfo {
    id: "scale-up",
    title: "When to Scale Up",
};
pub const THROUGHPUT: SectionInfo = SectionInfo {
    id: "throughput",
    title: "System Throughput",
};
pub const CAPACITY: SectionInfo = SectionInfo {
    id: "capacity",
    title: "Use Case Guidance",
};
pub const GOODPUT: SectionInfo = SectionInfo {
    id: "goodput",
    title: "Goodput Under an SLO",
};
pub const USERS: SectionInfo = SectionInfo {
    id: "users",
    title: "Users, Sessions and Caching",
};
pub const AGENTS: SectionInfo = SectionInfo {
    id: "agents",
    title: "Agentic Jobs",
};
pub const WHAT_IF: SectionInfo = SectionInfo {
    id: "what-if",
    title: "What If: Beyond the Measured Levels",
};
pub const DEEP_DIVE: SectionInfo = SectionInfo {
    id: "deep-dive",
    title: "Technical Deep Dive",
};
pub const MEASUREMENTS: SectionInfo = SectionInfo {
    id: "measurements",
    title: "All Measurements",
};
pub const POWER: SectionInfo = SectionInfo {
    id: "power",
    title: "Power & Efficiency",
};
pub const METHODOLOGY: SectionInfo = SectionInfo {
    id: "methodology",
    title: "Methodology",
};
pub const EXPERIENCE: SectionInfo = SectionInfo {
    id: "experience",
    title: "What Good Looks Like",
};

/// The sections the table of contents links to, in page order.
const TOC: [&SectionInfo; 16] = [
    &CHOICE,
    &SCENARIOS,
    &GLOSSARY,
    &FASTEST,
    &SCALE_UP,
    &THROUGHPUT,
    &CAPACITY,
    &GOODPUT,
    &USERS,
    &AGENTS,
    &WHAT_IF,
    &DEEP_DIVE,
    &MEASUREMENTS,
    &POWER,
    &METHODOLOGY,
    &EXPERIENCE,
];

/// A section element with its id, test id and heading, around `children`.
#[component]
pub fn Section(info: &'static SectionInfo, children: Children) -> impl IntoView {
    view! {
        <section id=info.id data-testid=format!("section-{}", info.id)>
            <h2>{info.title}</h2>
            {children()}
        </section>
    }
}

/// The sections from the top of the page down to the first chart: built at once, so the first
/// screen and the first chart show without waiting for the rest. Every view built and every
/// chart option prepared in the same task delays the first chart's frame.
pub fn leading_sections() -> impl IntoView {
    view! {
        <header::HeaderSection />
        <header::HighlightsSection />
        <TableOfContents />
        <choice::ChoiceSection />
    }
}

/// The sections after [`leading_sections`], in the order of the published reports. In the
/// viewer's build (scripts/build-viewer.sh sets `infermeter_split`) the code only these
/// sections run moves into a wasm module of its own (tools/wasm-split), fetched the first time
/// this is called (after the first paint), so the first screen waits only for its own code.
/// `fallible`: a module that cannot be fetched or started is an error the page shows
/// ([`SectionsUnavailable`]), where Leptos' `#[lazy]` would panic and stop the whole app. Elsewhere
/// (`trunk serve`, which does not split, and native tests) a plain `async fn`.
#[cfg(infermeter_split)]
#[leptos::wasm_split::wasm_split(
    remaining_sections,
    wasm_split_path = ::leptos::wasm_split,
    fallible
)]
pub fn remaining_sections() -> Result<AnyView, SectionsUnavailable> {
    Ok(build_remaining_sections())
}

/// [`remaining_sections`] in a build that is not split.
#[cfg(not(infermeter_split))]
pub async fn remaining_sections() -> Result<AnyView, SectionsUnavailable> {
    Ok(build_remaining_sections())
}

/// The module of the sections below the first screen could not be fetched or started (the
/// browser's console says why).
#[derive(Debug)]
pub struct SectionsUnavailable;

#[cfg(infermeter_split)]
impl From<leptos::wasm_split::SplitLoaderError> for SectionsUnavailable {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        SectionsUnavailable
    }
}

fn build_remaining_sections() -> AnyView {
    view! {
        <scenarios::ScenariosSection />
        <scenarios::GlossarySection />
        <fastest::FastestSection />
        <scale_up::ScaleUpSection />
        <throughput::ThroughputSection />
        <capacity::CapacitySection />
        <goodput::GoodputSection />
        <users::UsersSection />
        <agents::AgentsSection />
        <what_if::WhatIfSection />
        <deep_dive::DeepDiveSection />
        <measurements::MeasurementsSection />
        <power::PowerSection />
        <methodology::MethodologySection />
        <methodology::ExperienceSection />
    }
    .into_any()
}

/// Links to every section, as in the published reports; sticky on wide screens, where the
/// sections land below it (`measure_sticky_bars`). The Users and Agents sections are linked
/// only when they are shown.
#[component]
fn TableOfContents() -> impl IntoView {
    let ctx = context();
    let with_users = users::has_sessions(ctx);
    let with_agents = agents::shows_agents(ctx);
    let contents = NodeRef::new();
    measure_sticky_bars(contents);
    view! {
        <nav class="toc" data-testid="toc" aria-label="Contents" node_ref=contents>
            <ol>
                {TOC.iter().filter(|s| (s.id != USERS.id || with_users) && (s.id != AGENTS.id || with_agents)).map(|s| view! {
                    <li><a href=format!("#{}", s.id)>{s.title}</a></li>
                }).collect_view()}
            </ol>
        </nav>
    }
}

/// What an empty chart says: for a report imported from another tool, that its files lack it.
fn not_measured(ctx: ReportContext) -> String {
    ctx.reports.with(
        |r| match r.first().and_then(|r| r.metadata.provenance.as_ref()) {
            Some(p) => format!(
                "Not in the {} results this report was imported from (see the notes at the top).",
                p.tool
            ),
            None => "Not measured in this report.".into(),
        },
    )
}

/// Why the main report lacks `what` (`power`, `per_request`…), when it was imported from a
/// tool whose files do not hold it.
pub(crate) fn imported_absence(ctx: ReportContext, what: &str) -> Option<String> {
    ctx.reports.with(|r| {
        r.first()
            .and_then(|r| r.metadata.provenance.as_ref())
            .and_then(|p| p.absent.get(what).cloned())
    })
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
        ctx.labels
            .with(|labels| view.with(|view| f(&sources(reports, labels), view)))
    })
}

/// Runs `f` with the findings of the main report (tracking them); `None` without reports.
pub(crate) fn read_main_findings<T>(
    ctx: ReportContext,
    f: impl FnOnce(&Findings) -> T,
) -> Option<T> {
    ctx.findings.with(|all| all.first().map(f))
}

/// The view as `scope` reads it (see [`ViewState::scoped`]), so what reads it re-renders only
/// when that changes.
pub(crate) fn scoped_view(ctx: ReportContext, scope: Scope) -> Signal<ViewState> {
    match scope {
        Scope::Common => ctx.common.into(),
        Scope::UseCase(id) => {
            let id = id.to_string();
            Memo::new(move |_| ctx.view.with(|v| v.scoped(Scope::UseCase(&id)))).into()
        }
        Scope::Goodput => Memo::new(move |_| ctx.view.with(|v| v.scoped(Scope::Goodput))).into(),
        Scope::WhatIf => Memo::new(move |_| ctx.view.with(|v| v.scoped(Scope::WhatIf))).into(),
        Scope::Choice => Memo::new(move |_| ctx.view.with(|v| v.scoped(Scope::Choice))).into(),
        Scope::DeepDive => Memo::new(move |_| ctx.view.with(|v| v.scoped(Scope::DeepDive))).into(),
    }
}

/// A registered chart with its heading, intro, caption and finding sentence, as in the reports.
#[component]
pub fn ChartBlock(chart: &'static Chart) -> impl IntoView {
    view! {
        <ChartFrame id=chart.id title=chart.title intro=chart.intro
            caption=Signal::stored(chart.caption.to_string()) finding=chart.finding />
    }
}

/// A chart with its heading, intro, caption and, under it, the finding of each report shown.
/// Shows a note instead of an empty chart when the reports did not measure what it plots.
#[component]
pub fn ChartFrame(
    /// A chart id of the registry (`charts::registry`).
    #[prop(into)]
    id: String,
    #[prop(into)] title: String,
    intro: &'static str,
    caption: Signal<String>,
    finding: Option<Finding>,
) -> impl IntoView {
    let ctx = context();
    let view = scoped_view(ctx, scope_of(&id));
    let plot = {
        let id = id.clone();
        Memo::new(move |_| read_sources_in(ctx, view, |s, v| plot_by_id(&id, s, v)))
    };
    // The deep dive's sentences are those of the reports its charts draw.
    let deep_dive = scope_of(&id) == Scope::DeepDive;
    let sentences = move || {
        let finding = finding?;
        let pick = view.with(|v| v.deep_dive);
        let texts = ctx.findings.with(|all| {
            let shown = |i| !deep_dive || pick.shows(i, all.len());
            ctx.labels
                .with(|labels| for_each_report(all, labels, finding, shown))
        });
        Some(view! {
            <p class="finding" data-testid="finding">
                {texts.into_iter().map(|(label, text)| view! {
                    {label.map(|l| view! { <strong>{l}": "</strong> })}
                    {text}" "
                }).collect_view()}
            </p>
        })
    };
    let has_data = move || plot.with(|p| p.as_ref().is_some_and(|p| !p.is_empty()));
    let chart_id = id.clone();
    let label = title.clone();
    view! {
        <div class="chart-block" data-testid=format!("block-{id}")>
            <h3>{title}</h3>
            {(!intro.is_empty()).then(|| view! { <p class="intro">{intro}</p> })}
            <Show when=has_data fallback=move || view! {
                <p class="muted" data-testid="not-measured">{not_measured(ctx)}</p>
            }>
                <ChartView id=chart_id.clone() label=label.clone() embed_button=true
                    warm_update=scope_of(&chart_id) != Scope::Common
                    option=move || plot.with(|p| p.as_ref().map(Plot::to_option)).unwrap_or_default()
                    csv=move || plot.with(|p| p.as_ref().map(Plot::to_csv)).unwrap_or_default() />
                <p class="caption">{move || caption.get()}</p>
                {sentences}
            </Show>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::assert_written_once;

    /// Each section's id and heading are written once: the section and the table of contents
    /// read them from its [`SectionInfo`]. (A CSS class of the same name is not an id.)
    #[test]
    fn every_section_id_and_heading_is_written_once() {
        for section in TOC {
            assert_written_once(section.id);
            assert_written_once(section.title);
        }
    }
}
