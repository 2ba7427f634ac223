//! Which workloads a report ran, as its header says them: "request sweeps (peak, burst), Chat
//! sessions (users 1–64, caching allowed and defeated), trace replay (sample-mooncake, 1×)".

use schemars::JsonSchema;
use serde::Serialize;

use super::format::format_number;
use crate::schema::{CacheUse, LoadMode, Report, Series};

/// One kind of workload a report ran.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    /// Single requests of fixed shapes, under these modes (peak, burst, rate), in that order.
    RequestSweeps { modes: Vec<LoadMode> },
    /// A session scenario under one mode: users (loads are users) or sessions (loads are the
    /// sessions' arrival rates per second).
    Sessions {
        scenario_name: String,
        mode: LoadMode,
        /// Lowest and highest users, or sessions per second.
        loads: (f64, f64),
        caches: Vec<CacheUse>,
    },
    /// A replayed trace: its file's name without the extension, and the speeds.
    TraceReplay { trace: String, speeds: Vec<f64> },
}

impl Workload {
    /// "request sweeps (peak, burst)", "Chat sessions (users 1–64, caching allowed and
    /// defeated)", "trace replay (sample-mooncake, 1×, 4×)".
    pub fn text(&self) -> String {
        match self {
            Workload::RequestSweeps { modes } => {
                let modes: Vec<&str> = modes.iter().map(|m| m.label()).collect();
                format!("request sweeps ({})", modes.join(", "))
            }
            Workload::Sessions {
                scenario_name,
                mode,
                loads,
                caches,
            } => {
                let span = if loads.0 == loads.1 {
                    format_number(loads.0)
                } else {
                    format!("{}–{}", format_number(loads.0), format_number(loads.1))
                };
                let loads = match mode {
                    LoadMode::Users => format!("users {span}"),
                    _ => format!("{span} sessions/s"),
                };
                let caching = match caches[..] {
                    [] => String::new(),
                    [one] => format!(", {}", one.label()),
                    _ => {
                        let ids: Vec<&str> = caches.iter().map(|c| c.id()).collect();
                        format!(", caching {}", ids.join(" and "))
                    }
                };
                format!("{scenario_name} sessions ({loads}{caching})")
            }
            Workload::TraceReplay { trace, speeds } => {
                let speeds: Vec<String> = speeds
                    .iter()
                    .map(|s| format!("{}×", format_number(*s)))
                    .collect();
                format!("trace replay ({trace}, {})", speeds.join(", "))
            }
        }
    }
}

/// The workloads of `report`: request sweeps first, then each session scenario's modes and each
/// replayed trace, in report order. Series without levels ran nothing.
pub fn workloads(report: &Report) -> Vec<Workload> {
    let ran: Vec<&Series> = report
        .series
        .iter()
        .filter(|s| !s.levels.is_empty())
        .collect();
    let mut out = Vec::new();
    let modes: Vec<LoadMode> = [LoadMode::Peak, LoadMode::Burst, LoadMode::Rate]
        .into_iter()
        .filter(|m| ran.iter().any(|s| s.mode == *m))
        .collect();
    if !modes.is_empty() {
        out.push(Workload::RequestSweeps { modes });
    }
    for scenario in &report.scenarios {
        let of = |mode: LoadMode| {
            ran.iter()
                .filter(move |s| s.scenario == scenario.id && s.mode == mode)
        };
        if scenario.session.is_some() {
            for mode in [LoadMode::Users, LoadMode::Sessions] {
                let loads: Vec<f64> = of(mode)
                    .flat_map(|s| &s.levels)
                    .map(|l| match mode {
                        LoadMode::Users => f64::from(l.concurrency),
                        _ => l
                            .sessions
                            .as_ref()
                            .and_then(|s| s.session_rate)
                            .unwrap_or(0.0),
                    })
                    .collect();
                let Some(lo) = loads.iter().copied().reduce(f64::min) else {
                    continue;
                };
                let hi = loads.iter().copied().fold(lo, f64::max);
                let mut caches: Vec<CacheUse> = of(mode).filter_map(|s| s.cache).collect();
                crate::order::sort(&mut caches);
                caches.dedup();
                out.push(Workload::Sessions {
                    scenario_name: scenario.name.clone(),
                    mode,
                    loads: (lo, hi),
                    caches,
                });
            }
        }
        if let Some(source) = &scenario.trace {
            let speeds: Vec<f64> = of(LoadMode::Trace)
                .flat_map(|s| &s.levels)
                .map(|l| l.trace.map_or(1.0, |t| t.speed))
                .collect();
            if !speeds.is_empty() {
                let trace = source
                    .file
                    .rsplit_once('.')
                    .map_or(source.file.as_str(), |(stem, _)| stem);
                out.push(Workload::TraceReplay {
                    trace: trace.to_string(),
                    speeds,
                });
            }
        }
    }
    out
}

/// The header's line: every workload's [`Workload::text`], joined; `None` for a report that ran
/// nothing.
pub fn workloads_text(report: &Report) -> Option<String> {
    let parts: Vec<String> = workloads(report).iter().map(Workload::text).collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{report, series};
    use crate::schema::{SessionLevel, SessionShape, ThinkTime, TraceLevel, TraceSource};

    #[test]
    fn the_header_names_every_workload_that_ran() {
        let users = |cache| {
            let mut s = series("chat", LoadMode::Users, &[(1, 0.1, 100.0), (64, 0.4, 60.0)]);
            s.cache = Some(cache);
            s
        };
        let mut sessions = series(
            "chat",
            LoadMode::Sessions,
            &[(3, 0.1, 100.0), (5, 0.2, 90.0)],
        );
        for (level, rate) in sessions.levels.iter_mut().zip([0.5, 1.0]) {
            level.sessions = Some(SessionLevel {
                session_rate: Some(rate),
                ..SessionLevel::default()
            });
        }
        sessions.cache = Some(CacheUse::Allowed);
        let mut trace = series(
            "mooncake",
            LoadMode::Trace,
            &[(5, 0.1, 100.0), (9, 0.2, 90.0)],
        );
        for (level, speed) in trace.levels.iter_mut().zip([1.0, 4.0]) {
            level.trace = Some(TraceLevel { speed });
        }
        let mut r = report(
            &["plain", "chat", "mooncake", "never"],
            vec![
                series("plain", LoadMode::Burst, &[(1, 0.1, 100.0)]),
                series("plain", LoadMode::Peak, &[(1, 0.1, 100.0)]),
                users(CacheUse::Defeated),
                users(CacheUse::Allowed),
                sessions,
                trace,
                series("never", LoadMode::Rate, &[]),
            ],
        );
        r.scenarios[1].name = "Chat".into();
        r.scenarios[1].session = Some(SessionShape {
            system_prompt_tokens: 0,
            first_turn_tokens: 100,
            turn_tokens: 100,
            turns: 2,
            think_time: ThinkTime::Fixed { seconds: 1.0 },
        });
        r.scenarios[2].trace = Some(TraceSource {
            file: "sample-mooncake.jsonl".into(),
            format: "mooncake".into(),
            requests: 10,
            duration_s: 5.0,
            block_tokens: 512,
            shared_block_ratio: 0.5,
        });
        assert_eq!(
            workloads_text(&r).unwrap(),
            "request sweeps (peak, burst), Chat sessions (users 1–64, caching allowed and \
             defeated), Chat sessions (0.5–1 sessions/s, caching allowed), trace replay \
             (sample-mooncake, 1×, 4×)"
        );
        // Without sessions or traces: the sweeps alone; nothing run, nothing said.
        let plain = report(
            &["plain"],
            vec![series("plain", LoadMode::Peak, &[(1, 0.1, 1.0)])],
        );
        assert_eq!(
            workloads_text(&plain).as_deref(),
            Some("request sweeps (peak)")
        );
        assert_eq!(workloads_text(&report(&["x"], vec![])), None);
    }
}
