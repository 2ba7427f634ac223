//! The Agents section's charts: job completion time against concurrent jobs, and the swim
//! lanes of one job. The figures are `report::analysis::agents`'; these only place them on axes
//! and word each call's tooltip.

use infermeter_report::analysis::agents::{
    agents_findings, job_lanes, lanes_level, DEFAULT_JOB_SLO,
};
use infermeter_report::analysis::format::{format_grouped, format_number};
use infermeter_report::SampleCall;

use super::plot::{Line, LineKind, Plot, XAxis, YAxis};
use super::{plot, source_line, Source};
use crate::state::ViewState;

/// The chosen statistic of job completion time at each number of concurrent jobs, one line per
/// agents scenario of every report.
pub fn completion(sources: &[Source], view: &ViewState) -> Plot {
    let y = YAxis::new(format!("Job completion time, {}", view.stat.label()), "s");
    let mut p = plot(XAxis::Jobs, vec![y], view);
    for source in sources {
        let report = source.analysis.report();
        for found in agents_findings(report, &DEFAULT_JOB_SLO) {
            let points: Vec<(f64, f64)> = (found.levels.iter())
                .filter_map(|l| {
                    let s = l.completion_s?.get(view.stat)?;
                    Some((f64::from(l.jobs_at_once), s))
                })
                .collect();
            let name = (report.scenarios.iter())
                .find(|s| s.id == found.scenario)
                .map_or(found.scenario.as_str(), |s| s.name.as_str());
            if !points.is_empty() {
                p.lines.push(source_line(sources, source, name, 0, points));
            }
        }
    }
    p
}

/// The main report's sample job at its most concurrent jobs: a lane per agent, each call a bar
/// from its send to its last token, spawns and joins as dotted links between lanes.
pub fn lanes(sources: &[Source], view: &ViewState) -> Plot {
    let mut p = plot(
        XAxis::JobSeconds,
        vec![YAxis::new("Agent (0: the root)", "")],
        view,
    );
    p.item_tooltip = true;
    let Some(lanes) = (sources.first())
        .and_then(|s| lanes_level(s.analysis.report()))
        .and_then(job_lanes)
    else {
        return p;
    };
    for call in &lanes.calls {
        let name = agent_name(call);
        let lane = f64::from(call.place.agent);
        let details = call_details(call);
        p.lines.push(Line {
            kind: LineKind::Lane,
            details: vec![details.clone(), details],
            ..Line::plain(name, 0, vec![(call.sent_s, lane), (call.end_s, lane)])
        });
    }
    for (name, links) in [("Spawn", &lanes.spawns), ("Join", &lanes.joins)] {
        for link in links {
            let ends = [link.from, link.to].map(|(t, agent)| (t, f64::from(agent)));
            p.lines.push(Line {
                kind: LineKind::Link,
                ..Line::plain(name, 0, ends.to_vec())
            });
        }
    }
    p
}

/// A lane's name: "Root", or "Agent 2 · depth 1".
fn agent_name(call: &SampleCall) -> String {
    match call.place.agent {
        0 => "Root".into(),
        a => format!("Agent {a} · depth {}", call.place.depth),
    }
}

/// A call's tooltip lines: its agent, depth and call, its times, its tokens.
fn call_details(call: &SampleCall) -> Vec<String> {
    let tokens = |n: Option<u32>| n.map_or("?".into(), |n| format_grouped(f64::from(n)));
    let mut lines = vec![
        format!(
            "Agent {}, depth {}, call {}",
            call.place.agent,
            call.place.depth,
            call.place.call + 1
        ),
        format!(
            "Sent at {} s, last token at {} s",
            format_number(call.sent_s),
            format_number(call.end_s)
        ),
        format!(
            "{} prompt tokens ({} cached), {} output tokens",
            tokens(call.input_tokens),
            tokens(call.cached_tokens),
            tokens(call.output_tokens)
        ),
    ];
    if let Some(ttft) = call.ttft_s {
        lines.push(format!("First token after {} s", format_number(ttft)));
    }
    if !call.ok {
        lines.push("Failed".into());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::Stat;

    /// Each call is a bar on its agent's lane from its send to its last token, and its tooltip
    /// names its agent, depth and tokens; every subagent has its spawn.
    #[test]
    fn the_lanes_draw_each_call_of_the_sample_job_on_its_agents_lane() {
        let p = with_sources(&agents_sample(), |s| lanes(s, &ViewState::default()));
        let bars: Vec<&Line> = p
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Lane)
            .collect();
        // The level of the most concurrent jobs, its sample job as the file holds it.
        let report = agents_sample();
        let top = report.series[0].levels.iter().max_by_key(|l| l.concurrency);
        let job = top.unwrap().agents.as_ref().unwrap().sample_job.as_ref();
        let calls = &job.unwrap().calls;
        assert_eq!(bars.len(), calls.len());
        for (bar, call) in bars.iter().zip(calls) {
            let agent = f64::from(call.place.agent);
            assert_eq!(bar.points, vec![(call.sent_s, agent), (call.end_s, agent)]);
            let tip = bar.details[1].join("\n");
            let depth = call.place.depth;
            assert!(
                tip.contains(&format!("Agent {agent}, depth {depth}")),
                "{tip}"
            );
            let input = f64::from(call.input_tokens.unwrap());
            assert!(
                tip.contains(&format!("{} prompt tokens", format_grouped(input))),
                "{tip}"
            );
        }
        let agents = u64::from(calls.iter().map(|c| c.place.agent).max().unwrap());
        let spawns = p.lines.iter().filter(|l| l.name == "Spawn").count();
        assert_eq!(spawns as u64, agents, "one spawn per subagent");
        // One legend entry per agent, however many calls it made.
        let legend = p.to_option().legend;
        assert_eq!(legend.len() as u64, agents + 1 + 2, "{legend:?}");
    }

    /// The completion line reads each level's completion time at the chosen statistic.
    #[test]
    fn the_completion_line_has_a_point_per_level() {
        let report = agents_sample();
        let view = ViewState {
            stat: Stat::P95,
            ..ViewState::default()
        };
        let p = with_sources(&report, |s| completion(s, &view));
        let levels = &report.series[0].levels;
        let expected: Vec<(f64, f64)> = (levels.iter())
            .map(|l| {
                let d = l.agents.as_ref().unwrap().completion_s.unwrap();
                (f64::from(l.concurrency), d.p95.unwrap())
            })
            .collect();
        assert_eq!(p.lines[0].points, expected);
    }

    /// A report without agentic work draws neither chart.
    #[test]
    fn a_report_without_agents_draws_nothing() {
        let view = ViewState::default();
        assert!(with_sources(&sample(), |s| lanes(s, &view)).is_empty());
        assert!(with_sources(&sample(), |s| completion(s, &view)).is_empty());
    }
}
