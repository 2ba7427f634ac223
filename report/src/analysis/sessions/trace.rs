//! How a trace replay kept to its trace, speed by speed.

use schemars::JsonSchema;
use serde::Serialize;

use super::trace_speed;
use crate::analysis::format::with_unit;
use crate::analysis::metric::Metric;
use crate::schema::{Scenario, Series, TraceSource};
use crate::stats::Stat;

/// A replayed trace's figures.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TraceReplay {
    pub scenario: String,
    pub scenario_name: String,
    pub source: TraceSource,
    pub levels: Vec<TraceLevelFigures>,
}

/// One replay speed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TraceLevelFigures {
    pub speed: Option<f64>,
    /// Most requests in flight.
    pub concurrency: u32,
    pub ttft_s: Option<f64>,
    pub e2e_s: Option<f64>,
    pub system_output_tok_s: f64,
    /// Measured cached over prompt tokens, 0..1.
    pub cache_hit_ratio: Option<f64>,
    /// How late requests left against the trace's schedule, p99 seconds.
    pub scheduling_lag_p99_s: Option<f64>,
    pub has_timeline: bool,
}

impl TraceReplay {
    pub(super) fn of(
        scenario: &Scenario,
        source: &TraceSource,
        series: &Series,
        stat: Stat,
    ) -> TraceReplay {
        TraceReplay {
            scenario: scenario.id.clone(),
            scenario_name: scenario.name.clone(),
            source: source.clone(),
            levels: series
                .levels
                .iter()
                .map(|l| TraceLevelFigures {
                    speed: l.trace.map(|t| t.speed),
                    concurrency: l.concurrency,
                    ttft_s: Metric::Ttft.value(l, stat),
                    e2e_s: Metric::E2e.value(l, stat),
                    system_output_tok_s: l.system_output_tok_s,
                    cache_hit_ratio: l.prompt_cache.and_then(|c| c.hit_ratio()),
                    scheduling_lag_p99_s: l.client.as_ref().map(|c| c.scheduling_lag_p99_s),
                    has_timeline: l.timeline.is_some(),
                })
                .collect(),
        }
    }

    /// "Trace sample-mooncake at 4× speed: 51% of prompt tokens from the cache (its shared
    /// blocks imply 51%)."
    pub fn cache_sentence(&self) -> Option<String> {
        let level = self.levels.iter().find(|l| l.cache_hit_ratio.is_some())?;
        let speed = level
            .speed
            .map_or(String::new(), |s| format!(" at {}", trace_speed(s)));
        Some(format!(
            "{}{speed}: {} of prompt tokens from the cache (its shared blocks imply {}).",
            self.scenario_name,
            with_unit(level.cache_hit_ratio? * 100.0, "%"),
            with_unit(self.source.shared_block_ratio * 100.0, "%")
        ))
    }

    pub(super) fn lines(&self) -> Vec<(String, String)> {
        let mut lines = vec![(
            format!("Trace: {}", self.scenario_name),
            format!(
                "{} ({}), {} requests over {}, shared blocks imply a {} cache-hit ratio",
                self.source.file,
                self.source.format,
                self.source.requests,
                with_unit(self.source.duration_s, "s"),
                with_unit(self.source.shared_block_ratio * 100.0, "%")
            ),
        )];
        for l in &self.levels {
            let mut parts = Vec::new();
            if let Some(t) = l.ttft_s {
                parts.push(format!("TTFT {}", Metric::Ttft.display_text(t)));
            }
            parts.push(format!(
                "{} output",
                Metric::SystemOutputTokS.display_text(l.system_output_tok_s)
            ));
            if let Some(r) = l.cache_hit_ratio {
                parts.push(format!("cache hits {}", with_unit(r * 100.0, "%")));
            }
            if let Some(lag) = l.scheduling_lag_p99_s {
                parts.push(format!("send lag p99 {}", with_unit(lag * 1000.0, "ms")));
            }
            let speed = l.speed.map_or("replay".into(), trace_speed);
            lines.push((format!("  at {speed}"), parts.join(", ")));
        }
        lines
    }
}
