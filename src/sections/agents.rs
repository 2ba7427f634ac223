//! Agents: what agentic jobs measured (agents mode). Job completion time against concurrent
//! jobs, where the jobs' time went, the capacity in concurrent jobs under the page's SLO (the
//! goodput sliders), and one job's swim lanes. Only for reports with agents series.

use infermeter_report::analysis::agents::has_agents;
use leptos::prelude::*;

use super::{context, read_sources_in, ChartBlock, Section, AGENTS};
use crate::charts::labelled;
use crate::charts::registry::{AGENTS_COMPLETION, AGENTS_LANES};
use crate::components::{table_name, TableScroll};
use crate::sections::goodput::{BoundSlider, Slider, SloControls};
use crate::state::ReportContext;
use crate::tables::agents::{agents_tables, base_job_slo, page_job_slo, AgentsTable};
use infermeter_report::analysis::capacity::LimitKind;

/// The job completion bound's slider: half a second to half an hour.
const JOB_SLIDER: BoundSlider = BoundSlider {
    bound: LimitKind::Job,
    label: "Max job completion time",
    range: (0.5, 1800.0, 0.5),
};

/// True when a report shown played agentic jobs: the section and its contents entry exist only
/// then.
pub fn shows_agents(ctx: ReportContext) -> bool {
    ctx.reports.with(|all| all.iter().any(|r| has_agents(r)))
}

#[component]
pub fn AgentsSection() -> impl IntoView {
    let ctx = context();
    view! {
        <Show when=move || shows_agents(ctx)>
            <Section info=&AGENTS>
                <p>"An agentic job is a tree of calls: a root agent calls the model, waits for its tools, spawns subagents that run in parallel and waits for them before its next call. What its user waits for is the whole job, so the figures below count jobs: each job held its slot until its whole tree was done."</p>
                <ChartBlock chart=&AGENTS_COMPLETION />
                <JobTables />
                <ChartBlock chart=&AGENTS_LANES />
            </Section>
        </Show>
    }
}

/// Per agents scenario of each report: where the time went and the SLO's verdict at each level,
/// and the capacity in concurrent jobs. It reads the goodput sliders, so moving one redraws it.
#[component]
fn JobTables() -> impl IntoView {
    let ctx = context();
    let tables = Memo::new(move |_| {
        read_sources_in(ctx, ctx.view.into(), |sources, view| {
            let slo = page_job_slo(sources, view);
            let comparing = sources.len() > 1;
            (sources.iter())
                .flat_map(|s| {
                    let label = s.label.to_string();
                    agents_tables(s, &slo)
                        .into_iter()
                        .map(move |t| (labelled(&label, &t.scenario, comparing), t))
                })
                .collect::<Vec<_>>()
        })
    });
    view! {
        <h3>"Where the Time Went, and Jobs Served"</h3>
        <p>"A job's wall time on its root agent's lane: its calls in flight (engine), tool and think time between them, and waits for the subagents a call joins. A level meets the SLO when enough of its jobs finish within the job bound and enough of its calls meet the TTFT bound; the TTFT bound and the target are the page's SLO (the same sliders as under Goodput), the job bound has its own. Jobs per hour per user count a user as one job in flight at a time: a slot of concurrent jobs, or at a job rate the jobs in flight on average (their summed wall time over the level's time)."</p>
        <SloControls prefix="jobs" />
        <div class="sliders">
            <Slider spec=JOB_SLIDER prefix="jobs"
                base=ctx.reports.with(|r| base_job_slo(r.first().map(|report| &**report))) />
        </div>
        {move || tables.get().into_iter().map(|(name, table)| view! {
            <JobTable name table />
        }).collect_view()}
    }
}

#[component]
fn JobTable(name: String, table: AgentsTable) -> impl IntoView {
    view! {
        <p class="finding" data-testid="agents-capacity">{table.capacity}</p>
        <TableScroll label=table_name(Some(&name), "Agentic jobs")>
            <table class="data-table" data-testid="agents-levels">
                <thead><tr>
                    <th scope="col">"Jobs at once or arriving"</th><th scope="col">"Completed"</th>
                    <th scope="col">"Completion p50 / p95"</th><th scope="col">"Jobs per hour"</th>
                    <th scope="col">"Per user"</th>
                    <th scope="col">"Where the time went"</th><th scope="col">"Meets the SLO"</th>
                </tr></thead>
                <tbody>
                    {table.rows.into_iter().map(|row| view! {
                        <tr>
                            <th scope="row">{row.load}</th>
                            <td>{row.completed}</td>
                            <td>{row.completion}</td>
                            <td>{row.jobs_per_hour}</td>
                            <td data-testid="agents-per-user">{row.per_user}</td>
                            <td><TimeSplit split=row.split /></td>
                            <td data-testid="agents-meets">{row.meets}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </TableScroll>
    }
}

/// A stacked bar of the shares of a job's time, each part labelled.
#[component]
fn TimeSplit(split: [(&'static str, f64, String); 3]) -> impl IntoView {
    let title = (split.iter())
        .map(|(what, _, share)| format!("{what} {share}"))
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <div class="time-split" data-testid="time-split" title=title.clone() aria-label=title>
            {split.into_iter().enumerate().map(|(i, (what, share, text))| view! {
                <span class=format!("part part-{i}") data-part=what
                    style=format!("width: {:.1}%", share * 100.0)>{text}</span>
            }).collect_view()}
        </div>
    }
}
