//! Every chart of the report page, each named once: its id (the embed key `?chart=ID`, the
//! export file name, `data-chart-id`), its title, intro and caption (the reference reports'
//! words), the pure function that plots it and the finding sentence under it. Sections place
//! these entries, the embed route and [`chart_list`] read them; nothing else names a chart.
//! A new chart is one entry here (and one line in [`CHARTS`]).
//!
//! The capacity analysis adds one chart per use case of the main report,
//! `capacity.<use case>` ([`capacity_id`], [`capacity_title`]).

use infermeter_report::analysis::agents::has_agents;
use infermeter_report::analysis::sessions::SessionFindings;
use infermeter_report::analysis::use_cases::{targets, CapacityTarget};

use super::option::ChartOption;
use super::plot::Plot;
use infermeter_report::lengths::LevelLengths;

use super::{
    agents, capacity, choice, deep_dive, fastest, goodput, lengths, power, scale_up, throughput,
    users, what_if, Source,
};
use crate::findings::{self as words, Finding};
use crate::state::{Scope, ViewState};

/// A chart: what a block on the page and an embed show.
#[derive(Debug, Clone, Copy)]
pub struct Chart {
    pub id: &'static str,
    pub title: &'static str,
    /// What the chart shows and why it matters, above it.
    pub intro: &'static str,
    /// What is plotted, under it.
    pub caption: &'static str,
    pub plot: fn(&[Source], &ViewState) -> Plot,
    /// The sentence under it, worded from each report's findings (`None`: its section words
    /// what it shows, as the goodput section does from the reader's SLO).
    pub finding: Option<Finding>,
}

pub const CHOICE_FRONTIER: Chart = Chart {
    id: "choice.frontier",
    title: "Pareto Frontier",
    intro: "Each point is one measured load of one configuration: how fast each user's answer streams (interactivity, across) against the output each GPU produces (up). More users per GPU cost each of them speed. The bold line is the Pareto frontier: the points no other configuration or load beats on both at once; faded points are beaten by some point of the frontier. Pick what goes up (cost per million tokens, energy) and whether latency goes across.",
    caption: "One curve per configuration, each point labelled with its load; the frontier across every configuration of the scenario, and the target interactivity as a dotted line. Cost is GPU rental only; energy is measured GPU power only.",
    plot: choice::frontier,
    finding: None,
};

pub const FASTEST_DECODE: Chart = Chart {
    id: "fastest.decode",
    title: "Decode Speed per Scenario",
    intro: "How many tokens per second each user receives as more users share the GPU. A single user gets the fastest decode, and speed drops as concurrency grows because the GPU's memory bandwidth is split among them.",
    caption: "Per-user decode speed (tok/s) at each concurrent-user level. One line per context-length scenario.",
    plot: fastest::decode,
    finding: Some(words::fastest::decode_by_scenario),
};

pub const FASTEST_ITL: Chart = Chart {
    id: "fastest.itl",
    title: "Inter-Token Latency per Scenario",
    intro: "The delay between consecutive tokens arriving in the stream: this is what decides whether the output feels fluid or choppy. Under ~20ms feels instant, 20–70ms feels noticeably slower but acceptable, and above 70ms feels sluggish.",
    caption: "Inter-token latency (ms) at each concurrent-user level. The 20ms threshold marks the boundary of perceptually instant streaming.",
    plot: fastest::itl,
    finding: Some(words::fastest::itl_by_scenario),
};

pub const FASTEST_SCALING: Chart = Chart {
    id: "fastest.scaling",
    title: "Scaling Efficiency",
    intro: "The GPU utilization trade-off. At 100% efficiency, doubling concurrency would double total throughput (every user gets the same speed as a single user). In practice, efficiency drops because memory bandwidth is shared.",
    caption: "Scaling efficiency (%) at each concurrent-user level relative to ideal linear scaling.",
    plot: fastest::scaling,
    finding: Some(words::fastest::scaling),
};

pub const FASTEST_DECODE_RANGE: Chart = Chart {
    id: "fastest.decode_range",
    title: "Per-User Throughput Range",
    intro: "The band between best-case (short context) and worst-case (long context) per-user decode speed. A narrow band means context length doesn't matter much: users get a consistent experience.",
    caption: "Per-user decode speed range across scenarios at each concurrent-user level.",
    plot: fastest::decode_range,
    finding: Some(words::fastest::decode_band),
};

pub const FASTEST_TTFT_RANGE: Chart = Chart {
    id: "fastest.ttft_range",
    title: "TTFT Range",
    intro: "How long users wait before the first token appears. TTFT is dominated by the prefill phase: longer contexts mean longer prefill times, especially under concurrency.",
    caption: "TTFT range across scenarios at each concurrent-user level.",
    plot: fastest::ttft_range,
    finding: Some(words::fastest::ttft_by_scenario),
};

pub const BURST_TTFT: Chart = Chart {
    id: "scale_up.ttft",
    title: "TTFT vs Queue Depth",
    intro: "The most important chart for production planning. TTFT explodes under queue saturation because arriving requests must wait while the GPU finishes earlier prefills and decodes. The dashed line marks the TTFT limit beyond which users perceive the system as slow.",
    caption: "TTFT (seconds) at each queue depth, measured under simultaneous burst load.",
    plot: scale_up::ttft,
    finding: Some(words::burst::ttft),
};

pub const BURST_ITL: Chart = Chart {
    id: "scale_up.itl",
    title: "Inter-Token Latency vs Queue Depth",
    intro: "The streaming smoothness your users experience under queued traffic. Unlike peak conditions where ITL rises steadily with concurrency, queued ITL can plateau when the engine's continuous batching shares the decode pipeline across all active sequences.",
    caption: "Inter-token latency (ms) at each queue depth. The 70ms threshold marks where streaming turns sluggish: the memory-bandwidth ceiling of large MoE models.",
    plot: scale_up::itl,
    finding: Some(words::burst::itl),
};

pub const BURST_DECODE: Chart = Chart {
    id: "scale_up.decode",
    title: "Per-User Decode Speed vs Queue Depth",
    intro: "The per-scenario breakdown of decode speed under queued load. Decode speed (ITL) is usually more robust than TTFT when the system is heavily queued.",
    caption: "Per-user decode speed (tok/s) at each queue depth. One line per context-length scenario.",
    plot: scale_up::decode,
    finding: Some(words::burst::decode),
};

pub const SYSTEM_THROUGHPUT: Chart = Chart {
    id: "throughput.system",
    title: "System Throughput per Scenario",
    intro: "Aggregate token generation across all concurrent requests. Measures output tokens only; prompt tokens processed during prefill are excluded. Higher concurrency raises total throughput as the GPU processes more requests in parallel, even though per-user speed decreases. This is the figure for batch workloads such as document processing, synthetic data generation or offline analysis.",
    caption: "Aggregate system decode throughput (tok/s) at each concurrency level, one line per scenario.",
    plot: throughput::system,
    finding: Some(words::throughput::system),
};

pub const CONTEXT_THROUGHPUT: Chart = Chart {
    id: "deep_dive.throughput",
    title: "System Throughput by Context Length",
    intro: "Aggregate output tokens per second across all concurrent requests, at each context length. Longer contexts leave less of the GPU for decoding, so total throughput falls as context grows.",
    caption: "System throughput (tok/s) by context length, one line per concurrency level.",
    plot: deep_dive::throughput,
    finding: Some(words::context::throughput),
};

pub const CONTEXT_DECODE: Chart = Chart {
    id: "deep_dive.decode",
    title: "Per-User Generation Speed by Context Length",
    intro: "The speed at which text streams into each user's response, at each context length. As concurrency increases, per-user speed decreases since GPU resources are shared across requests.",
    caption: "Per-user generation speed (tok/s) by context length, one line per concurrency level.",
    plot: deep_dive::decode,
    finding: Some(words::context::decode),
};

pub const CONTEXT_TTFT: Chart = Chart {
    id: "deep_dive.ttft",
    title: "Time to First Token by Context Length",
    intro: "The primary metric for perceived responsiveness: time from request submission to the first response token, queue wait (grows with concurrency) plus prefill (grows with context length). At low concurrency prefill dominates; under load, queue wait takes over.",
    caption: "TTFT (s) by context length, one line per concurrency level.",
    plot: deep_dive::ttft,
    finding: Some(words::context::ttft),
};

pub const CONTEXT_QUEUE_WAIT: Chart = Chart {
    id: "deep_dive.queue_wait",
    title: "Queue Wait Times",
    intro: "Time a request waits for GPU availability before processing begins, as reported by the server. Queue wait is part of TTFT; breaking it out shows whether latency comes from GPU saturation (high queue wait) or context processing (high prefill time). Queue wait and prefill are measured independently and may not sum exactly to TTFT: under heavy load, chunked prefill and preemptions can make them overlap, so queue wait plus prefill can exceed TTFT. Use queue wait for capacity planning and finding bottlenecks, and TTFT for what users actually wait before streaming begins.",
    caption: "Queue wait (s) by context length, one line per concurrency level.",
    plot: deep_dive::queue_wait,
    finding: Some(words::context::queue_wait),
};

pub const CONTEXT_PREFILL: Chart = Chart {
    id: "deep_dive.prefill",
    title: "Per-User Prefill Speed",
    intro: "Rate at which the model processes input context before generating output (input tokens / TTFT). Prefill speed decides the non-queue part of TTFT. A line that peaks before the longest context reflects saturation or engine limits such as chunked prefill.",
    caption: "Per-user prefill speed (tok/s) by context length, one line per concurrency level.",
    plot: deep_dive::prefill,
    finding: Some(words::context::prefill),
};

pub const CONTEXT_ITL: Chart = Chart {
    id: "deep_dive.itl",
    title: "Inter-Token Latency by Context Length",
    intro: "Time between consecutive tokens during generation; it decides how smooth responses look and diagnoses token-level behaviour.",
    caption: "Inter-token latency (ms) by context length, one line per concurrency level. Lower is better: under 20ms feels instantaneous.",
    plot: deep_dive::itl,
    finding: Some(words::context::itl),
};

pub const CONTEXT_SCALING: Chart = Chart {
    id: "deep_dive.scaling",
    title: "Scaling Efficiency by Context Length",
    intro: "Percentage of ideal linear scaling achieved as concurrency increases. 100% means doubling concurrent requests doubles total throughput with no per-user loss. High efficiency at your target concurrency means headroom; sharply dropping efficiency means diminishing returns.",
    caption: "Scaling efficiency (%) by context length, one line per concurrency level.",
    plot: deep_dive::scaling,
    finding: Some(words::context::scaling),
};

pub const LENGTHS_TTFT: Chart = Chart {
    id: "lengths.ttft",
    title: "TTFT by Request Input Length",
    intro: "These requests were asked lengths of their own (a prompt file or drawn lengths), so each is a point here: how long it waited for its first token against its own prompt's length. Prefill grows with the prompt, and under load the wait for a slot adds to it.",
    caption: "Time to first token (s) of each successful request against its input tokens, one set of points per level. Hover a point for the request's lengths.",
    plot: lengths::ttft_by_input,
    finding: None,
};

pub const LENGTHS_E2E: Chart = Chart {
    id: "lengths.e2e",
    title: "End-to-End Latency by Request Output Length",
    intro: "Each request's whole time against the length of its answer: decoding one token after another makes long answers take longest.",
    caption: "End-to-end latency (s) of each successful request against its output tokens, one set of points per level.",
    plot: lengths::e2e_by_output,
    finding: None,
};

pub const LENGTHS_HISTOGRAM: Chart = Chart {
    id: "lengths.histogram",
    title: "Request Length Histograms",
    intro: "How the lengths the requests had were spread, input and output, per scenario: what the measurements table's realised means and 5th–95th percentiles summarise.",
    caption: "Requests in each band of input and of output tokens, a scenario's levels together.",
    plot: lengths::histograms,
    finding: None,
};

/// The charts of requests of varied lengths: a report of fixed lengths has none of them.
pub const LENGTH_CHARTS: [&Chart; 3] = [&LENGTHS_TTFT, &LENGTHS_E2E, &LENGTHS_HISTOGRAM];

/// The Technical deep dive's charts: they draw the reports the reader picks there.
pub const DEEP_DIVE_CHARTS: [&Chart; 10] = [
    &CONTEXT_THROUGHPUT,
    &CONTEXT_DECODE,
    &CONTEXT_TTFT,
    &CONTEXT_QUEUE_WAIT,
    &CONTEXT_PREFILL,
    &CONTEXT_ITL,
    &CONTEXT_SCALING,
    &LENGTHS_TTFT,
    &LENGTHS_E2E,
    &LENGTHS_HISTOGRAM,
];

pub const POWER_DRAW: Chart = Chart {
    id: "power.draw",
    title: "Power Consumption",
    intro: "Mean GPU power draw (all GPUs) at each concurrency level, per scenario.",
    caption: "GPU power draw (W) at each concurrency level.",
    plot: power::draw,
    finding: Some(words::power::draw),
};

pub const ENERGY_EFFICIENCY: Chart = Chart {
    id: "power.tokens_per_joule",
    title: "Energy Efficiency",
    intro: "Output tokens generated per joule of GPU energy: higher means more work for the same power bill.",
    caption: "Output tokens per joule at each concurrency level.",
    plot: power::tokens_per_joule,
    finding: Some(words::power::efficiency),
};

pub const ENERGY_COST: Chart = Chart {
    id: "power.cost",
    title: "Energy Cost per Million Tokens",
    intro: "Electricity cost of a million output tokens at the price above (GPU power only; excludes host, cooling and hardware).",
    caption: "Energy cost ($ per million output tokens) at each concurrency level.",
    plot: power::cost,
    finding: Some(words::power::cost),
};

pub const GOODPUT_ATTAINMENT: Chart = Chart {
    id: "goodput.attainment",
    title: "Requests Meeting the SLO",
    intro: "The share of requests that met every bound of the SLO at once (failed requests count as misses), at each load. The dashed line is the target; the shaded band is the 95% interval of the share (Wilson), wide where a level had few requests.",
    caption: "Requests meeting the SLO (%) at each load, one line per scenario, with its 95% interval.",
    plot: goodput::attainment,
    finding: None,
};

pub const GOODPUT_RATE: Chart = Chart {
    id: "goodput.rate",
    title: "Goodput per Scenario",
    intro: "Requests per second that met the SLO: the throughput that counts. It rises with load while most requests meet the SLO and falls once they stop meeting it; its peak is where the deployment does the most useful work.",
    caption: "Goodput (requests per second meeting the SLO) at each load, one line per scenario, with its 95% interval.",
    plot: goodput::rate_per_s,
    finding: None,
};

/// The charts that read the goodput SLO.
pub const GOODPUT_CHARTS: [&Chart; 2] = [&GOODPUT_ATTAINMENT, &GOODPUT_RATE];

pub const USERS_TTFT_BY_TURN: Chart = Chart {
    id: "users.ttft_by_turn",
    title: "TTFT by Turn",
    intro: "How long each turn of a conversation waits for its first token. Every later turn carries the whole conversation so far; with prefix caching the engine prefills only what is new, without it the whole context again. Both lines are measured at the same number of users.",
    caption: "TTFT (s) of each turn index at the heaviest load both cache uses measured, caching allowed and defeated.",
    plot: users::ttft_by_turn,
    finding: Some(words::users::ttft_by_turn),
};

pub const USERS_TTFT_BY_USERS: Chart = Chart {
    id: "users.ttft_by_users",
    title: "TTFT by Users, Cached vs Uncached",
    intro: "The caching caveat, measured: time to first token over all turns as more users hold conversations at once, with the prefix cache allowed and defeated side by side.",
    caption: "TTFT (s) over all turns at each number of simultaneous users, one line per cache use.",
    plot: users::ttft_by_users,
    finding: Some(words::users::ttft_by_users),
};

pub const USERS_CACHE_HITS: Chart = Chart {
    id: "users.cache_hits",
    title: "Cache-Hit Ratio by Load",
    intro: "The share of prompt tokens the engine served from its prefix cache. It falls under load when the cache evicts conversations before their next turn arrives.",
    caption: "Cached over prompt tokens (%) at each number of simultaneous users, one line per cache use.",
    plot: users::cache_hits,
    finding: Some(words::users::cache_hits),
};

pub const USERS_TIMELINE: Chart = Chart {
    id: "users.timeline",
    title: "Level Timeline",
    intro: "One level over time, in fixed slices from its start: warm-up, drift and a filling cache show here, where a level's single figure hides them. Pick the level and what to plot.",
    caption: "The chosen figure in each time slice of the chosen level.",
    plot: users::timeline,
    finding: None,
};

/// The Users section's charts: a report without sessions or traces has none of them.
const USERS_CHARTS: [&str; 4] = [
    USERS_TTFT_BY_TURN.id,
    USERS_TTFT_BY_USERS.id,
    USERS_CACHE_HITS.id,
    USERS_TIMELINE.id,
];

pub const WHAT_IF_TTFT: Chart = Chart {
    id: "what_if.ttft",
    title: "Predicted Time to First Token",
    intro:
        "Mean TTFT predicted for the question above, up to four times the highest load measured.",
    caption: "Mean TTFT (s): measured (solid), predicted (dashed).",
    plot: what_if::ttft,
    finding: None,
};

pub const WHAT_IF_ITL: Chart = Chart {
    id: "what_if.itl",
    title: "Predicted Inter-Token Latency",
    intro: "Mean inter-token latency predicted for the question above.",
    caption: "Mean ITL (ms): measured (solid), predicted (dashed).",
    plot: what_if::itl,
    finding: None,
};

pub const WHAT_IF_DECODE: Chart = Chart {
    id: "what_if.decode",
    title: "Predicted Per-User Decode Speed",
    intro: "Mean decode speed each user would see, predicted for the question above.",
    caption: "Mean per-user decode speed (tok/s): measured (solid), predicted (dashed).",
    plot: what_if::decode,
    finding: None,
};

pub const WHAT_IF_THROUGHPUT: Chart = Chart {
    id: "what_if.throughput",
    title: "Predicted System Throughput",
    intro: "Output tokens per second over all requests, predicted for the question above.",
    caption: "System throughput (tok/s): measured (solid), predicted (dashed).",
    plot: what_if::throughput,
    finding: None,
};

/// The What-if section's charts: a report without a fit has none of them.
pub const WHAT_IF_CHARTS: [&Chart; 4] = [
    &WHAT_IF_TTFT,
    &WHAT_IF_ITL,
    &WHAT_IF_DECODE,
    &WHAT_IF_THROUGHPUT,
];

/// Every chart with a fixed id, in page order.
pub const AGENTS_COMPLETION: Chart = Chart {
    id: "agents.completion",
    title: "Job Completion Time by Concurrent Jobs",
    intro: "An agent's user waits for the whole task, not one call: how long a job takes from its first call to its last reply, its subagents included, as more jobs share the engine.",
    caption: "Job completion time (s) at each number of concurrent jobs, one line per agents scenario.",
    plot: agents::completion,
    finding: None,
};

pub const AGENTS_LANES: Chart = Chart {
    id: "agents.lanes",
    title: "One Job, Agent by Agent",
    intro: "The job of median completion time at the most concurrent jobs tested, one lane per agent: each bar is a call from its send to its last token, the gaps between bars are tool and think time or waits for subagents. Dotted links show where a subagent was spawned and where its parent's next call joined it. Hover a call for its agent, depth and tokens.",
    caption: "Seconds since the job's first call; the root agent on top, subagents below in the order they started.",
    plot: agents::lanes,
    finding: None,
};

/// The Agents section's charts: listed only for reports with agentic jobs.
const AGENTS_CHARTS: [&str; 2] = [AGENTS_COMPLETION.id, AGENTS_LANES.id];

pub const CHARTS: [&Chart; 35] = [
    &CHOICE_FRONTIER,
    &FASTEST_DECODE,
    &FASTEST_ITL,
    &FASTEST_SCALING,
    &FASTEST_DECODE_RANGE,
    &FASTEST_TTFT_RANGE,
    &BURST_TTFT,
    &BURST_ITL,
    &BURST_DECODE,
    &SYSTEM_THROUGHPUT,
    &GOODPUT_ATTAINMENT,
    &GOODPUT_RATE,
    &CONTEXT_THROUGHPUT,
    &CONTEXT_DECODE,
    &CONTEXT_TTFT,
    &CONTEXT_QUEUE_WAIT,
    &CONTEXT_PREFILL,
    &CONTEXT_ITL,
    &CONTEXT_SCALING,
    &LENGTHS_TTFT,
    &LENGTHS_E2E,
    &LENGTHS_HISTOGRAM,
    &POWER_DRAW,
    &ENERGY_EFFICIENCY,
    &ENERGY_COST,
    &USERS_TTFT_BY_TURN,
    &USERS_TTFT_BY_USERS,
    &USERS_CACHE_HITS,
    &USERS_TIMELINE,
    &AGENTS_COMPLETION,
    &AGENTS_LANES,
    &WHAT_IF_TTFT,
    &WHAT_IF_ITL,
    &WHAT_IF_DECODE,
    &WHAT_IF_THROUGHPUT,
];

const CAPACITY_PREFIX: &str = "capacity.";

/// The id of a use case's capacity chart.
pub fn capacity_id(target: &CapacityTarget) -> String {
    format!("{CAPACITY_PREFIX}{}", target.id)
}

/// The title of a use case's capacity chart, also its summary card's label.
pub fn capacity_title(target: &CapacityTarget) -> String {
    format!("{} Capacity", target.name)
}

/// The use case whose capacity chart `id` is; `None` for another chart.
pub fn use_case_of(id: &str) -> Option<&str> {
    id.strip_prefix(CAPACITY_PREFIX)
}

/// What chart `id` reads of the view beyond the common settings.
pub fn scope_of(id: &str) -> Scope<'_> {
    if let Some(use_case) = use_case_of(id) {
        Scope::UseCase(use_case)
    } else if GOODPUT_CHARTS.iter().any(|c| c.id == id) {
        Scope::Goodput
    } else if WHAT_IF_CHARTS.iter().any(|c| c.id == id) {
        Scope::WhatIf
    } else if id == CHOICE_FRONTIER.id {
        Scope::Choice
    } else if DEEP_DIVE_CHARTS.iter().any(|c| c.id == id) {
        Scope::DeepDive
    } else {
        Scope::Common
    }
}

/// The use case a capacity chart id names, among the main report's.
fn capacity_target(id: &str, sources: &[Source]) -> Option<CapacityTarget> {
    let use_case = use_case_of(id)?;
    targets(sources.first()?.analysis.report())
        .into_iter()
        .find(|t| t.id == use_case)
}

/// The plot of chart `id`; `None` for an unknown id or a use case the reports cannot show.
pub fn plot_by_id(id: &str, sources: &[Source], view: &ViewState) -> Option<Plot> {
    if let Some(target) = capacity_target(id, sources) {
        return Some(capacity::chart(sources, &target, view));
    }
    CHARTS
        .iter()
        .find(|c| c.id == id)
        .map(|c| (c.plot)(sources, view))
}

/// The chart `id` (embed route).
pub fn chart_by_id(id: &str, sources: &[Source], view: &ViewState) -> Option<ChartOption> {
    plot_by_id(id, sources, view).map(|p| p.to_option())
}

/// The data of chart `id` as CSV (`series,x_axis,x,value,unit`).
pub fn chart_csv(id: &str, sources: &[Source], view: &ViewState) -> Option<String> {
    plot_by_id(id, sources, view).map(|p| p.to_csv())
}

/// The title of chart `id`; `None` for an unknown id.
pub fn title_of(id: &str, sources: &[Source]) -> Option<String> {
    chart_list(sources)
        .into_iter()
        .find(|(chart, _)| chart == id)
        .map(|(_, title)| title)
}

/// Every chart the reports can show, `(id, title)`: [`CHARTS`] (the Users section's only when
/// a report has sessions or traces, the Agents section's only when one has agentic jobs, the
/// length charts only when it has varied lengths, the
/// What-if section's only when the main report has a fit) then one capacity chart per use case
/// of the main report.
pub fn chart_list(sources: &[Source]) -> Vec<(String, String)> {
    let sessions = sources
        .iter()
        .any(|s| SessionFindings::exist_in(s.analysis.report()));
    let fitted = sources
        .first()
        .is_some_and(|s| s.analysis.report().fit.is_some());
    let varied = sources
        .iter()
        .any(|s| LevelLengths::exist_in(s.analysis.report()));
    let agents = (sources.iter()).any(|s| has_agents(s.analysis.report()));
    let fixed = CHARTS
        .iter()
        .filter(|c| sessions || !USERS_CHARTS.contains(&c.id))
        .filter(|c| agents || !AGENTS_CHARTS.contains(&c.id))
        .filter(|c| fitted || !WHAT_IF_CHARTS.iter().any(|w| w.id == c.id))
        .filter(|c| varied || !LENGTH_CHARTS.iter().any(|l| l.id == c.id))
        .map(|c| (c.id.to_string(), c.title.to_string()));
    let capacity = sources.first().into_iter().flat_map(|s| {
        targets(s.analysis.report())
            .into_iter()
            .map(|t| (capacity_id(&t), capacity_title(&t)))
    });
    fixed.chain(capacity).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::{
        agents_sample, assert_written_once, sample, sessions_sample, with_sources,
    };

    /// Each chart is named in one place: its id and title are written once in the viewer's
    /// source (here), so a section, the embed route and the chart list cannot drift apart.
    #[test]
    fn every_chart_id_and_title_is_written_once() {
        for chart in CHARTS {
            assert_written_once(chart.id);
            assert_written_once(chart.title);
            assert_eq!(CHARTS.iter().filter(|c| c.title == chart.title).count(), 1);
        }
    }

    /// The embed's list is the registry, then a capacity chart per use case, with their titles.
    #[test]
    fn the_chart_list_is_the_registry_and_the_use_cases() {
        let report = sample();
        let list = with_sources(&report, chart_list);
        let use_cases = targets(&report);
        // The sample has no sessions, no agents and fixed lengths: no Users, Agents or length
        // charts.
        assert_eq!(
            list.len(),
            CHARTS.len()
                - USERS_CHARTS.len()
                - AGENTS_CHARTS.len()
                - WHAT_IF_CHARTS.len()
                - LENGTH_CHARTS.len()
                + use_cases.len()
        );
        let sessions = sessions_sample();
        let with_users = with_sources(&sessions, chart_list);
        assert!(USERS_CHARTS
            .iter()
            .all(|id| with_users.iter().any(|(listed, _)| listed == id)));
        let with_agents = with_sources(&agents_sample(), chart_list);
        assert!(AGENTS_CHARTS
            .iter()
            .all(|id| with_agents.iter().any(|(listed, _)| listed == id)));
        let fixed = CHARTS.iter().filter(|c| {
            !USERS_CHARTS.contains(&c.id)
                && !AGENTS_CHARTS.contains(&c.id)
                && !WHAT_IF_CHARTS.iter().any(|w| w.id == c.id)
                && !c.id.starts_with("lengths.")
        });
        for (chart, (id, title)) in fixed.zip(&list) {
            assert_eq!((chart.id, chart.title), (id.as_str(), title.as_str()));
        }
        let first = &use_cases[0];
        let id = capacity_id(first);
        assert_eq!(use_case_of(&id), Some(first.id.as_str()));
        assert_eq!(
            with_sources(&report, |s| title_of(&id, s)),
            Some(capacity_title(first))
        );
        assert_eq!(use_case_of(FASTEST_DECODE.id), None);
    }
}
