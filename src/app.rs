//! The three pages and what they share. The page is chosen from the query string so the viewer
//! works from any static file server without rewrites: no report -> landing (report list),
//! `report=URL` -> the report, `report=URL&chart=ID` -> that chart alone (embed).

use std::sync::Arc;

use infermeter_report::index::ReportIndex;
use infermeter_report::{Report, Stat};
use leptos::prelude::*;

use crate::address_bar;
use crate::charts::registry;
use crate::components::{
    after_next_paint, painted_once, ChartView, ErrorPanel, SectionsUnavailablePanel, ThemeToggle,
};
use crate::load::{
    fetch_index, fetch_reports, index_url, inlined_report_urls, read_files, read_inputs, shared,
    LoadFailure, Reading,
};
use crate::sections::{self, read_sources, read_sources_in};
use crate::state::{ReportContext, ViewState};
use crate::timing;

#[component]
pub fn App() -> impl IntoView {
    let mut initial = ViewState::from_query(&address_bar::query());
    if initial.reports.is_empty() {
        // A file written by `infermeter export` opens on its own reports.
        initial.reports = inlined_report_urls();
    }
    let view_state = RwSignal::new(initial);
    // Files picked or dropped: they have no URL, so they replace the URL's reports.
    let files = RwSignal::new_local(None::<Vec<web_sys::File>>);
    let report_urls = Memo::new(move |_| view_state.with(|v| v.reports.clone()));
    let reports = LocalResource::new(move || {
        let picked = files.get();
        let urls = report_urls.get();
        // The full page draws the main report while compared ones are read; a chart embedded
        // alone waits for all of them.
        let main_first = view_state.with_untracked(|v| v.chart.is_none());
        async move {
            match picked {
                Some(picked) => read_files(picked).await,
                None => fetch_reports(urls, main_first).await,
            }
            .inspect(|_| timing::mark_once(timing::REPORTS_READ))
        }
    });
    let open_files = move |picked: Vec<web_sys::File>| {
        if picked.is_empty() {
            return;
        }
        view_state.update(|v| {
            v.reports.clear();
            v.chart = None;
        });
        files.set(Some(picked));
    };

    Effect::new(move |_| address_bar::write_soon(view_state.with(ViewState::to_query)));
    // A write still waiting when the reader reloads or leaves would lose the view's last change.
    let _ = window_event_listener(leptos::ev::pagehide, |_| address_bar::flush());
    Effect::new(move |_| {
        let theme = view_state.with(|v| v.theme);
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-theme", theme.key());
        }
    });
    let _drop = window_event_listener(leptos::ev::dragover, |ev| ev.prevent_default());
    let _drop = window_event_listener(leptos::ev::drop, move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        open_files(dropped_files(&ev));
    });

    // Memos: the page is rebuilt only when its kind changes, not on every slider move.
    let has_input =
        Memo::new(move |_| files.with(Option::is_some) || report_urls.with(|u| !u.is_empty()));
    let embed = Memo::new(move |_| view_state.with(|v| v.chart.is_some()));
    view! {
        {move || match (has_input.get(), embed.get()) {
            (false, _) => view! { <Landing view_state open_files /> }.into_any(),
            (true, true) => view! {
                <Loaded reports view_state>
                    {|| view! { <EmbeddedChart /> }}
                </Loaded>
            }.into_any(),
            (true, false) => view! {
                <Shell view_state open_files>
                    <Loaded reports view_state>
                        {|| view! { <ReportPage /> }}
                    </Loaded>
                </Shell>
            }.into_any(),
        }}
    }
}

/// Waits for the reports, shows an error panel when they cannot be read, and provides
/// [`ReportContext`] to `children` once they are. When the main report is read first
/// ([`Reading::rest`]), the compared ones are read after its page has been painted, and
/// `children` are built again with all of them.
#[component]
fn Loaded(
    reports: LocalResource<Result<Reading, LoadFailure>>,
    view_state: RwSignal<ViewState>,
    children: ChildrenFn,
) -> impl IntoView {
    let children = StoredValue::new(children);
    // Every report of a reading that left the compared ones for later, with that reading's
    // inputs (so a newer reading is never shown another's reports).
    let whole = RwSignal::new_local(None::<WholeReading>);
    view! {
        <Transition fallback=|| view! { <p class="loading" data-testid="loading">"Loading report…"</p> }>
            <ErrorBoundary fallback=|errors| view! {
                {move || errors.get().into_iter().map(|(_, e)| {
                    let (source, detail) = match e.downcast_ref::<LoadFailure>() {
                        Some(f) => (Some(f.source.clone()), f.message.clone()),
                        None => (None, e.to_string()),
                    };
                    view! { <ErrorPanel title="This report cannot be shown" detail source /> }
                }).collect_view()}
            }>
                {move || {
                    let read = whole.get();
                    Suspend::new(async move {
                        let reading = reports.await?;
                        let (loaded, pending) = match (read, reading.rest) {
                            (Some((of, compared)), Some(rest)) if Arc::ptr_eq(&of, &rest) => {
                                let mut all = reading.reports;
                                all.extend(compared?);
                                (all, 0)
                            }
                            (_, Some(rest)) => {
                                let pending = rest.len() - 1;
                                read_compared_soon(whole, rest);
                                (reading.reports, pending)
                            }
                            (_, None) => (reading.reports, 0),
                        };
                        provide_context(ReportContext::new(loaded, view_state, pending));
                        Ok::<_, LoadFailure>(children.with_value(|c| c()))
                    })
                }}
            </ErrorBoundary>
        </Transition>
    }
}

/// The inputs of a reading that left the compared reports for later, and the compared ones read
/// (each input an infermeter report, so one report each, in order after the main one).
type WholeReading = (
    Arc<Vec<(String, String)>>,
    Result<Vec<Arc<Report>>, LoadFailure>,
);

/// Reads the compared inputs of `rest` (all but the main report's, read already) after the
/// main report's page has been painted, into `whole` (once per reading).
fn read_compared_soon(
    whole: RwSignal<Option<WholeReading>, LocalStorage>,
    rest: Arc<Vec<(String, String)>>,
) {
    after_next_paint(move || {
        let done = whole
            .try_with_untracked(|w| w.as_ref().is_some_and(|(of, _)| Arc::ptr_eq(of, &rest)))
            .unwrap_or(true);
        if !done {
            let compared = read_inputs(&rest[1..]).map(shared);
            timing::mark_once(timing::COMPARED_READ);
            whole.try_set(Some((rest, compared)));
        }
    });
}

/// Page frame of the landing and report pages: title bar with the global controls.
#[component]
fn Shell(
    view_state: RwSignal<ViewState>,
    open_files: impl Fn(Vec<web_sys::File>) + Copy + Send + Sync + 'static,
    children: Children,
) -> impl IntoView {
    let stat = move || view_state.with(|v| v.stat.label());
    view! {
        <header class="topbar">
            <a class="brand" href="./">"infermeter"</a>
            <nav class="topbar-controls" aria-label="View controls">
                <label class="control">
                    <span>"Statistic"</span>
                    <select data-testid="stat-select" prop:value=stat
                        on:change=move |ev| {
                            if let Some(s) = Stat::parse(&event_target_value(&ev)) {
                                view_state.update(|v| v.stat = s);
                            }
                        }>
                        {Stat::ALL.into_iter().map(|s| view! {
                            <option value=s.label() selected=move || stat() == s.label()>{s.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
                <FilePicker open_files />
                <ThemeToggle view_state />
            </nav>
        </header>
        <main id="main">{children()}</main>
    }
}

/// "Open file…": a labelled file input (the visible label is the button).
#[component]
fn FilePicker(
    open_files: impl Fn(Vec<web_sys::File>) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <label class="file-picker">
            <span>"Open file…"</span>
            <input type="file" accept=".json,.jsonl,application/json" multiple data-testid="file-input"
                on:change=move |ev| {
                    let input: web_sys::HtmlInputElement = event_target(&ev);
                    open_files(file_list(input.files()));
                    input.set_value("");
                } />
        </label>
    }
}

#[component]
fn Landing(
    view_state: RwSignal<ViewState>,
    open_files: impl Fn(Vec<web_sys::File>) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let index = LocalResource::new(fetch_index);
    view! {
        <Shell view_state open_files>
            <section class="landing" data-testid="landing">
                <h1>"How many users can this model serve, and how fast will it feel?"</h1>
                <p class="lead">
                    "Pick a benchmark report, open a report file written by "
                    <code>"infermeter run"</code>" (or the results of "<code>"vllm bench serve"</code>", AIPerf, guidellm or inference-perf), or drop one anywhere on this page."
                </p>
                <div class="drop-zone" data-testid="drop-zone">
                    <p>"Drop report JSON files here (the first is the main report, others are compared). Several result files of one vLLM, AIPerf or inference-perf sweep become one report; drop an AIPerf summary with its profile_export.jsonl to judge goodput."</p>
                    <FilePicker open_files />
                </div>
                <h2>"Reports"</h2>
                <Transition fallback=|| view! { <p class="loading">"Loading the report list…"</p> }>
                    {move || Suspend::new(async move {
                        match index.await {
                            Ok(index) => view! { <ReportList index /> }.into_any(),
                            Err(e) => view! {
                                <ErrorPanel title="The report list cannot be read"
                                    detail=e.message source=Some(e.source) />
                            }.into_any(),
                        }
                    })}
                </Transition>
            </section>
        </Shell>
    }
}

#[component]
fn ReportList(index: ReportIndex) -> impl IntoView {
    let ReportIndex {
        reports: entries,
        comparisons,
        ..
    } = index;
    if entries.is_empty() {
        return view! { <p>"No reports are bundled; open a file instead."</p> }.into_any();
    }
    // Ticked reports go to the address as `compare=` (a plain GET form): the first in the
    // list becomes the main report, as `ViewState::from_query` reads it.
    view! {
        {(!comparisons.is_empty()).then(|| view! {
            <ul class="report-list" data-testid="comparison-list">
                {comparisons.into_iter().map(|entry| {
                    // The first is the main report, the others are compared with it.
                    let href = reports_href(entry.paths.iter().map(|p| index_url(p)).collect());
                    view! {
                        <li>
                            <a href=href data-testid="comparison-link">{entry.title}</a>
                            <span class="badge">"compared"</span>
                            {entry.synthetic.then(|| view! { <span class="badge">"synthetic"</span> })}
                        </li>
                    }
                }).collect_view()}
            </ul>
        })}
        <form method="get" data-testid="compare-form">
            <ul class="report-list" data-testid="report-list">
                {entries.into_iter().map(|entry| {
                    let url = index_url(&entry.path);
                    let title = entry.title().to_string();
                    let href = reports_href(vec![url.clone()]);
                    view! {
                        <li>
                            <a href=href>{title.clone()}</a>
                            {entry.synthetic.then(|| view! { <span class="badge">"synthetic"</span> })}
                            <label class="compare-pick">
                                <input type="checkbox" name="compare" value=url
                                    data-testid="compare-pick"
                                    aria-label=format!("Compare: {title}") />
                                " Compare"
                            </label>
                            {entry.detail().map(|d| view! { <p class="muted">{d}</p> })}
                        </li>
                    }
                }).collect_view()}
            </ul>
            <p class="compare-bar">
                <button type="submit" data-testid="compare-selected">"Compare the ticked reports"</button>
                <span class="muted">" Tick two or more to overlay them on one page."</span>
            </p>
        </form>
    }
    .into_any()
}

/// The address of the report page for `reports` (the first is the main one).
fn reports_href(reports: Vec<String>) -> String {
    format!(
        "?{}",
        ViewState {
            reports,
            ..ViewState::default()
        }
        .to_query()
    )
}

/// The full report: every section in the order of the published reports. The sections below
/// the first charts are built after the first paint, from their own wasm module (fetched then:
/// [`sections::remaining_sections`]); until they are in the page the article is `aria-busy`.
#[component]
fn ReportPage() -> impl IntoView {
    let painted = painted_once();
    let pending = expect_context::<ReportContext>().pending;
    // The rest of the page waits for the compared reports: it is built once, with all of them.
    let whole = move || painted.get() && pending == 0;
    let (built, set_built) = signal(false);
    Effect::new(move |_| {
        if built.get() {
            // A link to a section (`…#capacity`) lands there once the section exists.
            request_animation_frame(scroll_to_fragment);
        }
    });
    let remaining = move || {
        Suspend::new(async move {
            let sections = sections::remaining_sections().await;
            set_built.set(true);
            sections.unwrap_or_else(|_| view! { <SectionsUnavailablePanel /> }.into_any())
        })
    };
    view! {
        <article class="report" data-testid="report" aria-busy=move || (!built.get()).to_string()>
            {(pending > 0).then(|| view! {
                <p class="loading" role="status" data-testid="compared-pending">
                    {format!("Reading the {pending} compared report{}…", if pending == 1 { "" } else { "s" })}
                </p>
            })}
            {sections::leading_sections()}
            <Show when=whole>{remaining}</Show>
        </article>
    }
}

/// Scrolls to the element the address's fragment names, if there is one.
fn scroll_to_fragment() {
    let hash = window().location().hash().unwrap_or_default();
    let Some(id) = hash.strip_prefix('#').filter(|id| !id.is_empty()) else {
        return;
    };
    if let Some(target) = document().get_element_by_id(id) {
        target.scroll_into_view();
    }
}

/// The chart named by `chart=` alone (embed view): its title, the chart, a link to the report.
#[component]
fn EmbeddedChart() -> impl IntoView {
    let ctx = expect_context::<ReportContext>();
    let id = ctx
        .view
        .with_untracked(|v| v.chart.clone())
        .unwrap_or_default();
    let title = {
        let id = id.clone();
        move || read_sources(ctx, |s, _| registry::title_of(&id, s))
    };
    let exists = title.clone();
    let full_report = move || {
        let mut v = ctx.view.get();
        v.chart = None;
        format!("?{}", v.to_query())
    };
    let (option_id, csv_id) = (id.clone(), id.clone());
    view! {
        <Show when=move || exists().is_some() fallback={
            let id = id.clone();
            move || {
                let ids: Vec<String> = read_sources(ctx, |s, _| registry::chart_list(s))
                    .into_iter()
                    .map(|(id, _)| id)
                    .collect();
                view! {
                    <ErrorPanel title="No such chart" detail=format!(
                        "the report has no chart \"{id}\"; remove the chart parameter to see the whole report, or name one of its charts: {}",
                        ids.join(", "))
                    />
                }
            }
        }>
            <main class="embed" data-testid="embed">
                <h1 class="embed-title">{title.clone()}</h1>
                <ChartView id=option_id.clone() label=title().unwrap_or_default() height=420
                    option={
                        let id = option_id.clone();
                        move || read_view(ctx, |s, v| registry::chart_by_id(&id, s, v)).unwrap_or_default()
                    }
                    csv={
                        let id = csv_id.clone();
                        move || read_view(ctx, |s, v| registry::chart_csv(&id, s, v)).unwrap_or_default()
                    } />
                <a class="embed-link" href=full_report target="_blank" rel="noopener">"Full report"</a>
            </main>
        </Show>
    }
}

fn dropped_files(ev: &web_sys::DragEvent) -> Vec<web_sys::File> {
    file_list(ev.data_transfer().and_then(|d| d.files()))
}

fn file_list(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// Runs `f` with the chart sources and the whole view (the embed shows any chart, a capacity
/// chart with its use case's limits).
fn read_view<T>(
    ctx: ReportContext,
    f: impl FnOnce(&[crate::charts::Source], &ViewState) -> T,
) -> T {
    read_sources_in(ctx, ctx.view.into(), f)
}
