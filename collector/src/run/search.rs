//! Search mode: which level to measure next, from how the levels measured so far fared against
//! the SLO. Bracketing doubles the load from the lowest until a level fails (or the highest
//! allowed passes), then bisection halves the gap between the highest passing and the lowest
//! failing level down to the resolution ([`Search`]), each level judged by [`judge`]. Pure: the
//! run measures, this decides.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::goodput::{self, slo_text};
use infermeter_report::{Level, LoadMode, SearchSettings, Slo};

/// The search over one series: loads are whole numbers (requests in flight or queued).
#[derive(Debug, Clone)]
pub struct Search {
    settings: SearchSettings,
    /// Highest load that passed.
    passing: Option<u32>,
    /// Lowest load that failed.
    failing: Option<u32>,
}

impl Search {
    pub fn new(settings: SearchSettings) -> Search {
        Search {
            settings,
            passing: None,
            failing: None,
        }
    }

    fn min(&self) -> u32 {
        self.settings.min as u32
    }

    fn max(&self) -> u32 {
        self.settings.max as u32
    }

    /// The load to measure next; `None` when the search is over: the lowest level failed, the
    /// highest passed, or passing and failing are within the resolution.
    pub fn next(&self) -> Option<u32> {
        match (self.passing, self.failing) {
            (None, None) => Some(self.min()),
            (None, Some(_)) => None,
            (Some(p), None) if p >= self.max() => None,
            (Some(p), None) => Some(p.saturating_mul(2).min(self.max())),
            (Some(p), Some(f)) => {
                // Close enough: within the resolution of the passing load, and never finer
                // than one request.
                let step = ((f64::from(p) * self.settings.resolution).ceil() as u32).max(1);
                (f - p > step).then(|| p + (f - p) / 2)
            }
        }
    }

    /// Records how the level at `load` fared.
    pub fn record(&mut self, load: u32, passed: bool) {
        if passed {
            self.passing = Some(self.passing.map_or(load, |p| p.max(load)));
        } else {
            self.failing = Some(self.failing.map_or(load, |f| f.min(load)));
        }
    }
}

/// A probed level against the SLO: whether it passed, a line for the log, and a warning for
/// the report when the level was over-saturated.
pub struct Judgement {
    pub passed: bool,
    pub summary: String,
    pub warning: Option<String>,
}

impl Judgement {
    pub fn fail(summary: String) -> Judgement {
        Judgement {
            passed: false,
            summary,
            warning: None,
        }
    }
}

/// Whether `level` meets `slo`: its attainment reaches the target and, where the mode can
/// saturate ([`LoadMode::can_saturate`]), TTFT did not grow without bound over it. An
/// over-saturated level fails whatever its attainment: its figures only depend on how long it
/// ran.
pub fn judge(level: &Level, mode: LoadMode, slo: &Slo, label: &str) -> Judgement {
    let Some(attainment) = goodput::attainment(level, slo) else {
        return Judgement::fail(format!("{label}: no per-request figures to judge"));
    };
    let share = format!(
        "{label}: {}% of {} requests met {}",
        format_number(attainment.fraction * 100.0),
        attainment.total,
        slo_text(slo)
    );
    match goodput::over_saturated(mode, level) {
        Some(s) => Judgement {
            passed: false,
            summary: format!("{share}: over-saturated, counted as failing"),
            warning: Some(format!(
                "{label}: over-saturated (median TTFT rose from {} s to {} s over the level); \
                 the search counts it as failing and probes no higher load",
                format_number(s.first_ttft_s),
                format_number(s.last_ttft_s)
            )),
        },
        None => {
            let passed = attainment.passes(slo);
            Judgement {
                passed,
                summary: format!("{share}: {}", if passed { "pass" } else { "fail" }),
                warning: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(min: f64, max: f64, resolution: f64) -> SearchSettings {
        SearchSettings {
            mode: LoadMode::Peak,
            min,
            max,
            resolution,
        }
    }

    /// The loads a search probes when every load up to `capacity` passes.
    fn probes(settings: SearchSettings, capacity: u32) -> Vec<u32> {
        let mut search = Search::new(settings);
        let mut probed = Vec::new();
        while let Some(load) = search.next() {
            assert!(!probed.contains(&load), "{load} probed twice: {probed:?}");
            probed.push(load);
            search.record(load, load <= capacity);
        }
        probed
    }

    #[test]
    fn brackets_by_doubling_then_bisects_to_one_request() {
        assert_eq!(
            probes(settings(1.0, 256.0, 0.01), 11),
            [1, 2, 4, 8, 16, 12, 10, 11]
        );
        // A coarser resolution stops sooner: within 10% of 40 is 4 requests.
        assert_eq!(
            probes(settings(1.0, 256.0, 0.1), 45),
            [1, 2, 4, 8, 16, 32, 64, 48, 40, 44]
        );
    }

    #[test]
    fn stops_at_both_ends() {
        // Every level passes: up to the highest allowed, which is probed even off the doubling.
        assert_eq!(probes(settings(1.0, 20.0, 0.1), 1000), [1, 2, 4, 8, 16, 20]);
        // The lowest fails: nothing else.
        assert_eq!(probes(settings(4.0, 64.0, 0.1), 2), [4]);
    }

    /// Whatever the capacity, the search ends within one request (at this resolution) of it,
    /// having probed the passing and the failing side.
    #[test]
    fn finds_every_capacity_within_the_resolution() {
        for capacity in 1..200 {
            let probed = probes(settings(1.0, 256.0, 0.0), capacity);
            assert!(probed.contains(&capacity), "{capacity}: {probed:?}");
            assert!(probed.contains(&(capacity + 1)), "{capacity}: {probed:?}");
            assert!(probed.len() <= 16, "{capacity}: {probed:?}");
        }
    }
}
