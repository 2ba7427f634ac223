//! Users: what multi-turn sessions measured. Users served under the use cases' limits (their
//! sliders apply), TTFT by turn and by users with the prefix cache allowed and defeated, cache
//! hits by load, and one level's timeline. Only for reports with session or trace levels.

use infermeter_report::analysis::sessions::SessionFindings;
use infermeter_report::analysis::timeline::{
    level_by_key, timeline_levels, timeline_sentence, TimelineMetric,
};
use leptos::prelude::*;

use super::{context, read_sources, ChartBlock, ChartFrame, Section, USERS};
use crate::charts::registry::{
    USERS_CACHE_HITS, USERS_TIMELINE, USERS_TTFT_BY_TURN, USERS_TTFT_BY_USERS,
};
use crate::charts::users::timeline_key;
use crate::components::{table_name, TableScroll};
use crate::state::ReportContext;
use crate::tables::users::{users_table, UsersTable};

/// True when a report shown measured sessions or replayed a trace: the section and its
/// contents entry exist only then.
pub fn has_sessions(ctx: ReportContext) -> bool {
    ctx.reports
        .with(|all| all.iter().any(|r| SessionFindings::exist_in(r)))
}

#[component]
pub fn UsersSection() -> impl IntoView {
    let ctx = context();
    view! {
        <Show when=move || has_sessions(ctx)>
            <Section info=&USERS>
                <p>"Requests in flight are not users: a person sends a turn, reads the answer, and sends the next turn with the whole conversation so far. This report ran such users, each a closed loop of sessions with think time, so the figures below count users, not request slots. Where the same sessions ran with the prefix cache allowed and defeated, both are shown side by side: the caching caveat, measured."</p>
                <UsersServed />
                <ChartBlock chart=&USERS_TTFT_BY_TURN />
                <ChartBlock chart=&USERS_TTFT_BY_USERS />
                <ChartBlock chart=&USERS_CACHE_HITS />
                <TimelineBlock />
            </Section>
        </Show>
    }
}

/// Users served per session scenario and use case, for each report shown. It reads every use
/// case's limits, so a slider of the use-case guidance redraws it.
#[component]
fn UsersServed() -> impl IntoView {
    let ctx = context();
    let tables = Memo::new(move |_| {
        super::read_sources_in(ctx, ctx.view.into(), |sources, view| {
            let comparing = sources.len() > 1;
            sources
                .iter()
                .map(|s| (comparing.then(|| s.label.to_string()), users_table(s, view)))
                .filter(|(_, t)| !t.rows.is_empty())
                .collect::<Vec<_>>()
        })
    });
    view! {
        <h3>"Users Served"</h3>
        <p>"Simultaneous users each session scenario serves within a use case's limits (the use cases whose context holds the conversation's last turn), then within the scenario's default limits. Move a use case's sliders under Use Case Guidance to try your own limits."</p>
        {move || tables.get().into_iter().map(|(label, table)| view! {
            <UsersServedTable label table />
        }).collect_view()}
    }
}

#[component]
fn UsersServedTable(label: Option<String>, table: UsersTable) -> impl IntoView {
    view! {
        {label.clone().map(|l| view! { <p><strong>{l}</strong></p> })}
        <TableScroll label=table_name(label.as_deref(), "Users served")>
            <table class="data-table" data-testid="users-served">
                <thead><tr>
                    <th scope="col">"Scenario"</th><th scope="col">"Limits"</th>
                    {table.columns.into_iter().map(|c| view! { <th scope="col">{c}</th> }).collect_view()}
                </tr></thead>
                <tbody>
                    {table.rows.into_iter().map(|row| view! {
                        <tr>
                            <th scope="row">{row.scenario_name}" · "{row.name}</th>
                            <td>{row.limits}</td>
                            {row.cells.into_iter().map(|cell| match cell {
                                Some((figure, verdict)) => view! {
                                    <td><strong>{figure}</strong><br/><span class="muted">{verdict}</span></td>
                                }.into_any(),
                                None => view! { <td>"—"</td> }.into_any(),
                            }).collect_view()}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </TableScroll>
        {table.gains.into_iter().map(|gain| view! {
            <p class="finding" data-testid="caching-gain">{gain}</p>
        }).collect_view()}
    }
}

/// The timeline of one level: a level picker and a metric picker (both in the URL), the chart,
/// and each report's sentence of the level's slices.
#[component]
fn TimelineBlock() -> impl IntoView {
    let ctx = context();
    // The levels come from the main report; compared reports show the level of the same key.
    let levels = Memo::new(move |_| {
        ctx.reports
            .with(|r| r.first().map(|r| timeline_levels(r)).unwrap_or_default())
    });
    let picked = Memo::new(move |_| read_sources(ctx, timeline_key).unwrap_or_default());
    let metric = Memo::new(move |_| ctx.view.with(|v| v.timeline_metric));
    let sentences = move || {
        let key = picked.get();
        let stat = ctx.view.with(|v| v.stat);
        ctx.reports.with(|reports| {
            ctx.labels.with(|labels| {
                let comparing = reports.len() > 1;
                reports
                    .iter()
                    .zip(labels)
                    .filter_map(|(r, label)| {
                        let text = timeline_sentence(level_by_key(r, &key)?, stat)?;
                        Some((comparing.then(|| label.clone()), text))
                    })
                    .collect::<Vec<_>>()
            })
        })
    };
    view! {
        <div class="sliders">
            <label class="control">
                <span>"Level"</span>
                <select data-testid="timeline-level" prop:value=move || picked.get()
                    on:change=move |ev| {
                        let key = event_target_value(&ev);
                        ctx.view.update(|v| v.timeline = Some(key));
                    }>
                    {move || levels.get().into_iter().map(|l| {
                        let key = l.key.clone();
                        view! { <option value=l.key selected=move || picked.get() == key>{l.label}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label class="control">
                <span>"Plot"</span>
                <select data-testid="timeline-metric" prop:value=move || metric.get().key()
                    on:change=move |ev| {
                        let key = event_target_value(&ev);
                        if let Some(m) = TimelineMetric::ALL.into_iter().find(|m| m.key() == key) {
                            ctx.view.update(|v| v.timeline_metric = m);
                        }
                    }>
                    {TimelineMetric::ALL.into_iter().map(|m| view! {
                        <option value=m.key() selected=move || metric.get() == m>{m.label()}</option>
                    }).collect_view()}
                </select>
            </label>
        </div>
        <ChartFrame id=USERS_TIMELINE.id title=USERS_TIMELINE.title intro=USERS_TIMELINE.intro
            caption=Signal::stored(USERS_TIMELINE.caption.to_string()) finding=None />
        <p class="finding" data-testid="timeline-finding">
            {move || sentences().into_iter().map(|(label, text)| view! {
                {label.map(|l| view! { <strong>{l}": "</strong> })}
                {text}" "
            }).collect_view()}
        </p>
    }
}
