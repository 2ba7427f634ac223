//! Goodput: the requests that met every bound of a service-level objective at once, read from
//! each level's per-request columns ([`RequestColumns`]) for any SLO a reader picks. Attainment
//! (the share that met it, with a Wilson 95% interval), goodput in requests and tokens per
//! second, the highest load whose attainment reaches the SLO's target ([`max_load_under`], on
//! the monotone curve between measured levels, never beyond them), and whether a level's queue
//! was growing without bound ([`saturation`]).
//!
//! Every figure here is one pass over a level's columns, with no allocation: the viewer
//! recomputes them on each slider move.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::format::{format_number, with_unit};
use super::interpolate::MonotoneCurve;
use crate::schema::{Level, Limits, LoadMode, Report, RequestColumns, Series, Slo, TICK_S};

/// The SLO a reader starts from when a report records none: the first token within 5 s and
/// at least 20 tok/s after it (50 ms per token), for 95% of requests.
pub const DEFAULT_SLO: Slo = Slo {
    limits: Limits {
        max_ttft_s: Some(5.0),
        max_tpot_s: Some(0.05),
        ..Limits::NONE
    },
    target: crate::schema::DEFAULT_ATTAINMENT_TARGET,
};

/// The SLO to judge `report` by: the one its run recorded (`--slo`), else [`DEFAULT_SLO`], in
/// its per-request form ([`Limits::per_request`]), so the bounds shown are those judged.
pub fn report_slo(report: &Report) -> Slo {
    let slo = report.metadata.test.slo.unwrap_or(DEFAULT_SLO);
    Slo {
        limits: slo.limits.per_request(),
        ..slo
    }
}

/// z of a two-sided 95% interval.
const Z_95: f64 = 1.96;

/// A 95% interval of a share, 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// Wilson score interval (95%) of `met` successes in `total` trials: unlike the normal
/// approximation it stays inside 0..1 and is honest at 0 or 100% and for small counts.
/// `None` for no trials.
pub fn wilson_95(met: u64, total: u64) -> Option<Interval> {
    if total == 0 {
        return None;
    }
    let n = total as f64;
    let p = met.min(total) as f64 / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z_95 / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 or 100% an end is exactly the share (rounding would put it a hair inside).
    Some(Interval {
        low: if met == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if met >= total {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    })
}

/// Requests that missed each bound (a request can miss several; a failed one is counted as
/// failed only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Misses {
    pub failed: u64,
    pub ttft: u64,
    pub tpot: u64,
    pub e2e: u64,
    pub stalls: u64,
}

/// One level against an SLO.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Attainment {
    /// Requests that met every bound.
    pub met: u64,
    /// Measured requests, failed ones included.
    pub total: u64,
    /// `met / total`.
    pub fraction: f64,
    /// Wilson 95% interval of `fraction`.
    pub interval: Interval,
    /// Requests that met the SLO per second: the level's request rate times `fraction`;
    /// `None` without a window.
    pub goodput_req_s: Option<f64>,
    /// The 95% interval of `goodput_req_s`: `interval` times the level's requests per second.
    pub goodput_req_s_interval: Option<Interval>,
    /// Output tokens per second from those requests: the level's output throughput times the
    /// share of the measured requests' output tokens that theirs are (one window, one token
    /// count, so never above the throughput).
    pub goodput_tok_s: Option<f64>,
    pub misses: Misses,
}

impl Attainment {
    /// Whether the level reaches the SLO's target.
    pub fn passes(&self, slo: &Slo) -> bool {
        self.fraction >= slo.target
    }
}

/// The SLO's bounds in the columns' units: ticks, compared without dividing.
#[derive(Debug, Clone, Copy)]
struct TickBounds {
    ttft: Option<f64>,
    tpot: Option<f64>,
    e2e: Option<f64>,
    stalls: Option<u32>,
}

/// A bound at a tick's resolution: a figure written as exactly the bound meets it, whatever
/// the rounding of `seconds / TICK_S`.
fn ticks_bound(seconds: f64) -> f64 {
    seconds / TICK_S + 1e-6
}

impl TickBounds {
    fn of(slo: &Slo) -> TickBounds {
        let limits = slo.limits.per_request();
        TickBounds {
            ttft: limits.max_ttft_s.map(ticks_bound),
            tpot: limits.max_tpot_s.map(ticks_bound),
            e2e: limits.max_e2e_s.map(ticks_bound),
            stalls: limits.max_stalls,
        }
    }
}

/// How `level`'s measured requests fare against `slo`; `None` when the level has no
/// per-request columns (a report before schema 1.2.0) or no request.
pub fn attainment(level: &Level, slo: &Slo) -> Option<Attainment> {
    let columns = level.per_request.as_ref().filter(|c| !c.is_empty())?;
    let bounds = TickBounds::of(slo);
    let mut misses = Misses::default();
    let (mut met, mut met_tokens) = (0u64, 0u64);
    for i in 0..columns.len() {
        if meets(columns, i, &bounds, &mut misses) {
            met += 1;
            met_tokens += u64::from(columns.output_tokens[i]);
        }
    }
    let total = columns.len() as u64;
    let interval = wilson_95(met, total)?;
    let (requests_s, tokens_s) = level_rates(level, columns, total);
    let all_tokens: u64 = columns.output_tokens.iter().map(|&t| u64::from(t)).sum();
    Some(Attainment {
        met,
        total,
        fraction: met as f64 / total as f64,
        interval,
        goodput_req_s: requests_s.map(|all| all * met as f64 / total as f64),
        goodput_req_s_interval: requests_s.map(|all| Interval {
            low: interval.low * all,
            high: interval.high * all,
        }),
        goodput_tok_s: tokens_s
            .filter(|_| all_tokens > 0)
            .map(|all| all * met_tokens as f64 / all_tokens as f64),
        misses,
    })
}

/// The level's requests per second (all `total` measured requests, failed ones included) and
/// output tokens per second, from one window and one token count: the level's own request rate
/// and output throughput, so goodput (their share from requests meeting the SLO) never exceeds
/// them. `None` without a window.
fn level_rates(level: &Level, columns: &RequestColumns, total: u64) -> (Option<f64>, Option<f64>) {
    if level.duration_s <= 0.0 {
        return (None, None);
    }
    let ok = columns
        .status
        .iter()
        .filter(|&&s| s == RequestColumns::OK)
        .count();
    // The level's rate counts completed requests; scaled to every measured one.
    let requests_s = match level.requests_per_s {
        Some(rate) if ok > 0 => rate * total as f64 / ok as f64,
        _ => total as f64 / level.duration_s,
    };
    (Some(requests_s), Some(level.system_output_tok_s))
}

/// Whether request `i` meets every bound, counting the bounds it misses.
fn meets(columns: &RequestColumns, i: usize, bounds: &TickBounds, misses: &mut Misses) -> bool {
    if columns.status[i] != RequestColumns::OK {
        misses.failed += 1;
        return false;
    }
    let (ttft, e2e) = (columns.ttft[i], columns.e2e[i]);
    let mut ok = true;
    let mut check = |within: bool, missed: &mut u64| {
        if !within {
            *missed += 1;
            ok = false;
        }
    };
    if let Some(limit) = bounds.ttft {
        check(f64::from(ttft) <= limit, &mut misses.ttft);
    }
    if let Some(limit) = bounds.tpot {
        // (e2e - ttft) / (tokens - 1) <= limit, multiplied out; one token has no decode time.
        let gaps = columns.output_tokens[i].saturating_sub(1);
        let decode = f64::from(e2e.saturating_sub(ttft));
        check(
            gaps == 0 || decode <= limit * f64::from(gaps),
            &mut misses.tpot,
        );
    }
    if let Some(limit) = bounds.e2e {
        check(f64::from(e2e) <= limit, &mut misses.e2e);
    }
    // A level whose stream gaps were not recorded (an imported tool's) cannot be judged on
    // stalls: the bound is left out there, and the report's provenance says so.
    if let (Some(most), Some(&stalls)) = (bounds.stalls, columns.stalls.get(i)) {
        check(stalls <= most, &mut misses.stalls);
    }
    ok
}

/// The highest load of a series that meets an SLO.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MaxLoad {
    /// Every tested level reaches the target: the highest one is a lower bound.
    AllPass { highest: f64 },
    /// Even the lowest tested level misses it.
    NonePass { lowest: f64 },
    /// `passing` (measured) reaches the target and `failing` (the next level measured) does
    /// not; `load` is the highest load between them where the monotone curve of attainment
    /// still reaches it (whole requests for peak and burst), `passing` itself when none does.
    Between {
        load: f64,
        passing: f64,
        failing: f64,
    },
}

impl MaxLoad {
    /// The figure: "≥ 32", "< 1", "≈ 19" (interpolated), "16" (measured).
    pub fn value_text(&self) -> String {
        match *self {
            MaxLoad::AllPass { highest } => format!("≥ {}", format_number(highest)),
            MaxLoad::NonePass { lowest } => format!("< {}", format_number(lowest)),
            MaxLoad::Between { load, passing, .. } if load > passing => {
                format!("≈ {}", format_number(load))
            }
            MaxLoad::Between { load, .. } => format_number(load),
        }
    }

    /// The highest measured level that meets the SLO, without reading between levels: what a
    /// "measured levels only" answer rests on.
    pub fn measured_only(self) -> MaxLoad {
        match self {
            MaxLoad::Between {
                passing, failing, ..
            } => MaxLoad::Between {
                load: passing,
                passing,
                failing,
            },
            other => other,
        }
    }

    /// How it was read: "all tested levels pass", "the lowest level tested misses the
    /// target", "between measured 16 and 24", "measured; 24 misses the target".
    pub fn note(&self) -> String {
        match *self {
            MaxLoad::AllPass { .. } => "all tested levels pass".into(),
            MaxLoad::NonePass { .. } => "the lowest level tested misses the target".into(),
            MaxLoad::Between {
                load,
                passing,
                failing,
            } if load > passing => format!(
                "between measured {} and {}",
                format_number(passing),
                format_number(failing)
            ),
            MaxLoad::Between { failing, .. } => {
                format!("measured; {} misses the target", format_number(failing))
            }
        }
    }
}

impl MaxLoad {
    /// The use-case verdict on the attainment basis: "95% of requests stay within the
    /// thresholds up to ≈ 11 concurrent users (between measured 8 and 16).", "… at every
    /// tested level, up to 32 concurrent users.", "Fewer than 95% of requests stay within the thresholds even at
    /// 1 concurrent user, the lowest tested."
    pub fn attainment_sentence(&self, mode: LoadMode, target: f64) -> String {
        let share = with_unit(target * 100.0, "%");
        match *self {
            MaxLoad::AllPass { highest } => format!(
                "{share} of requests stay within the thresholds at every tested level, up to {} {}.",
                format_number(highest),
                mode.unit(highest)
            ),
            MaxLoad::NonePass { lowest } => format!(
                "Fewer than {share} of requests stay within the thresholds even at {} {}, the lowest tested.",
                format_number(lowest),
                mode.unit(lowest)
            ),
            MaxLoad::Between { load, .. } => format!(
                "{share} of requests stay within the thresholds up to {} {} ({}).",
                self.value_text(),
                mode.unit(load),
                self.note()
            ),
        }
    }
}

/// The highest load of `series` at which the share of requests meeting `slo` reaches
/// `slo.target`, as the capacity analysis reads limits: the last level such that it and every
/// lower level pass, then the monotone curve of attainment towards the next level, never
/// beyond the measured range. `None` when no level has per-request columns.
pub fn max_load_under(series: &Series, slo: &Slo) -> Option<MaxLoad> {
    let points: Vec<(f64, f64)> = series
        .levels
        .iter()
        .filter_map(|l| Some((series.mode.level_load(l), attainment(l, slo)?.fraction)))
        .collect();
    max_load_of(series.mode, &points, slo.target)
}

/// [`max_load_under`] from the levels' (load, share meeting the SLO), in level order.
fn max_load_of(mode: LoadMode, points: &[(f64, f64)], target: f64) -> Option<MaxLoad> {
    let (&(lowest, _), &(highest, _)) = (points.first()?, points.last()?);
    let Some(first_fail) = points.iter().position(|&(_, f)| f < target) else {
        return Some(MaxLoad::AllPass { highest });
    };
    if first_fail == 0 {
        return Some(MaxLoad::NonePass { lowest });
    }
    let (passing, failing) = (points[first_fail - 1].0, points[first_fail].0);
    let curve = MonotoneCurve::new(points)?;
    let crossing = last_reaching(&curve, passing, failing, target);
    // A rate or a speed is read as it crosses; a closed loop's load is whole requests in
    // flight, queued, or users.
    let load = if mode.is_open_loop() {
        crossing
    } else {
        crossing.floor().max(passing)
    };
    Some(MaxLoad::Between {
        load,
        passing,
        failing,
    })
}

/// The highest x in `[from, to]` where `curve` is at least `target`, given it is at `from` and
/// not at `to`: bisection, since the curve is monotone between neighbouring points.
fn last_reaching(curve: &MonotoneCurve, from: f64, to: f64, target: f64) -> f64 {
    let reaches = |x: f64| curve.at(x).is_some_and(|e| e.value >= target);
    let (mut lo, mut hi) = (from, to);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if reaches(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Within a few ulps of a whole number is that number (1e-9 of a request is rounding).
    let nearest = lo.round();
    if (lo - nearest).abs() < 1e-9 * nearest.max(1.0) && reaches(nearest) {
        nearest
    } else {
        lo
    }
}

/// Time to first token growing without bound over a level: requests arrive faster than the
/// server serves them and queue ever longer, so the level's figures depend on how long it ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Saturation {
    /// Median TTFT of the first quarter of requests sent, seconds.
    pub first_ttft_s: f64,
    /// Median TTFT of the last quarter.
    pub last_ttft_s: f64,
}

/// The last quarter's median TTFT at least this many times the first quarter's...
const SATURATED_RATIO: f64 = 3.0;
/// ...and at least this much longer, seconds (a few milliseconds tripling is noise).
const SATURATED_GROWTH_S: f64 = 0.5;
/// Fewer completed requests than this say nothing about a trend.
const SATURATION_MIN_REQUESTS: usize = 8;

/// [`saturation`] of a level of `mode`, where its TTFT growing means one
/// ([`LoadMode::can_saturate`]).
pub fn over_saturated(mode: LoadMode, level: &Level) -> Option<Saturation> {
    mode.can_saturate().then(|| saturation(level)).flatten()
}

/// Whether TTFT grew without bound over `level` (the last quarter of its completed requests, in
/// sending order, waited [`SATURATED_RATIO`] times as long as the first, and half a second
/// more). `None` when it did not, or when the level has too few requests to say. Meaningful
/// for peak and rate levels; a burst's queue drains by design, so its TTFT always grows.
pub fn saturation(level: &Level) -> Option<Saturation> {
    let columns = level.per_request.as_ref()?;
    let ttfts: Vec<f64> = (0..columns.len())
        .filter(|&i| columns.status[i] == RequestColumns::OK)
        .map(|i| f64::from(columns.ttft[i]) * TICK_S)
        .collect();
    if ttfts.len() < SATURATION_MIN_REQUESTS {
        return None;
    }
    let quarter = ttfts.len() / 4;
    let median = |part: &[f64]| crate::stats::percentile_unsorted(&mut part.to_vec(), 50.0);
    let first_ttft_s = median(&ttfts[..quarter]);
    let last_ttft_s = median(&ttfts[ttfts.len() - quarter..]);
    (last_ttft_s >= SATURATED_RATIO * first_ttft_s
        && last_ttft_s - first_ttft_s >= SATURATED_GROWTH_S)
        .then_some(Saturation {
            first_ttft_s,
            last_ttft_s,
        })
}

/// How evenly a level's streams arrived: its stalls (pauses longer than the stall gap) and its
/// requests' jitter (each request's p99 pause over its median pause).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamSmoothness {
    /// Stalls over all of the level's completed requests.
    pub stalls: u64,
    /// Completed requests with at least one stall.
    pub stalled_requests: u64,
    /// The pause that counts as a stall, seconds.
    pub stall_gap_s: f64,
    /// Median over requests of their jitter (1: an even stream); `None` when no request had
    /// two pauses to compare.
    pub jitter_p50: Option<f64>,
}

/// The stalls and jitter of `level`'s completed requests; `None` without per-request columns
/// or without their stream gaps (an imported tool that did not record them).
pub fn stream_smoothness(level: &Level) -> Option<StreamSmoothness> {
    let columns = level.per_request.as_ref().filter(|c| c.has_smoothness())?;
    let completed = || (0..columns.len()).filter(|&i| columns.status[i] == RequestColumns::OK);
    let mut jitters: Vec<f64> = completed()
        .map(|i| columns.jitter[i])
        .filter(|&j| j > 0)
        .map(|j| f64::from(j) / 100.0)
        .collect();
    Some(StreamSmoothness {
        stalls: completed().map(|i| u64::from(columns.stalls[i])).sum(),
        stalled_requests: completed().filter(|&i| columns.stalls[i] > 0).count() as u64,
        stall_gap_s: f64::from(columns.stall_gap) * TICK_S,
        jitter_p50: (!jitters.is_empty())
            .then(|| crate::stats::percentile_unsorted(&mut jitters, 50.0)),
    })
}

/// The SLO in words: "TTFT ≤ 5 s, TPOT ≤ 50 ms, no stall; 95% of requests".
pub fn slo_text(slo: &Slo) -> String {
    let limits = slo.limits.per_request();
    let mut bounds: Vec<String> = Vec::new();
    if let Some(t) = limits.max_ttft_s {
        bounds.push(format!("TTFT ≤ {}", with_unit(t, "s")));
    }
    if let Some(t) = limits.max_tpot_s {
        bounds.push(format!("TPOT ≤ {}", with_unit(t * 1000.0, "ms")));
    }
    if let Some(t) = limits.max_e2e_s {
        bounds.push(format!("E2E ≤ {}", with_unit(t, "s")));
    }
    match limits.max_stalls {
        Some(0) => bounds.push("no stall".into()),
        Some(n) => bounds.push(format!("at most {n} stalls")),
        None => {}
    }
    if bounds.is_empty() {
        bounds.push("completed".into());
    }
    format!(
        "{}; {} of requests",
        bounds.join(", "),
        with_unit(slo.target * 100.0, "%")
    )
}

/// The SLO as `run --slo` and `summary --slo` take it: "ttft=2s,tpot=50ms,target=95%".
pub fn slo_spec(slo: &Slo) -> String {
    let duration = |s: f64| {
        if s < 1.0 {
            format!("{}ms", format_number(s * 1000.0))
        } else {
            format!("{}s", format_number(s))
        }
    };
    let limits = slo.limits.per_request();
    let mut parts: Vec<String> = Vec::new();
    let named = [
        ("ttft", limits.max_ttft_s),
        ("tpot", limits.max_tpot_s),
        ("e2e", limits.max_e2e_s),
    ];
    for (key, bound) in named {
        if let Some(s) = bound {
            parts.push(format!("{key}={}", duration(s)));
        }
    }
    if let Some(n) = limits.max_stalls {
        parts.push(format!("stall={n}"));
    }
    parts.push(format!("target={}%", format_number(slo.target * 100.0)));
    parts.join(",")
}

/// One measured level against the SLO.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LevelGoodput {
    pub concurrency: u32,
    /// [`LoadMode::level_load`].
    pub load: f64,
    pub attainment: Attainment,
    /// TTFT grew without bound over the level (peak and rate levels only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturation: Option<Saturation>,
    pub smoothness: Option<StreamSmoothness>,
}

/// One series against the SLO.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SeriesGoodput {
    pub scenario: String,
    pub scenario_name: String,
    pub mode: LoadMode,
    /// Levels with per-request columns, ascending.
    pub levels: Vec<LevelGoodput>,
    pub max_load: MaxLoad,
}

/// Goodput of every series of a report under one SLO: what the viewer's goodput section plots
/// and `infermeter summary` prints.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GoodputFindings {
    pub slo: Slo,
    /// Series with per-request columns, in report order (scenarios, then peak, burst, rate).
    pub series: Vec<SeriesGoodput>,
    /// Why there is nothing to show, when `series` is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}

/// Goodput of every series of `report` under `slo`.
pub fn findings(report: &Report, slo: &Slo) -> GoodputFindings {
    let mut series: Vec<SeriesGoodput> = Vec::new();
    for scenario in &report.scenarios {
        for s in report.series.iter().filter(|s| s.scenario == scenario.id) {
            // Each level judged once, for its row and for the series' highest load.
            let judged: Vec<(&Level, f64, Attainment)> = s
                .levels
                .iter()
                .filter_map(|l| Some((l, s.mode.level_load(l), attainment(l, slo)?)))
                .collect();
            let points: Vec<(f64, f64)> = judged.iter().map(|(_, x, a)| (*x, a.fraction)).collect();
            let Some(max_load) = max_load_of(s.mode, &points, slo.target) else {
                continue;
            };
            let levels = judged
                .into_iter()
                .map(|(l, load, attainment)| LevelGoodput {
                    concurrency: l.concurrency,
                    load,
                    attainment,
                    saturation: over_saturated(s.mode, l),
                    smoothness: stream_smoothness(l),
                })
                .collect();
            series.push(SeriesGoodput {
                scenario: scenario.id.clone(),
                scenario_name: scenario.name.clone(),
                mode: s.mode,
                levels,
                max_load,
            });
        }
    }
    let absent = series.is_empty().then(|| why_absent(report));
    GoodputFindings {
        slo: *slo,
        series,
        absent,
    }
}

/// Why a report has no goodput: its format predates per-request columns, or its levels lack
/// them.
fn why_absent(report: &Report) -> String {
    let old = crate::load::parse_version(&report.schema_version)
        .is_some_and(|(major, minor, _)| (major, minor) < (1, 2));
    let imported = report
        .metadata
        .provenance
        .as_ref()
        .and_then(|p| p.absent.get(crate::import::absent::PER_REQUEST));
    if report.series.iter().all(|s| s.levels.is_empty()) {
        "The report has no measured levels.".into()
    } else if let Some(why) = imported {
        format!("{why}.")
    } else if old {
        format!(
            "Goodput needs each request's figures, which reports keep since format 1.2.0; this one \
             is format {}. Measure again with a current infermeter to judge it by an SLO.",
            report.schema_version
        )
    } else {
        "Goodput needs each request's figures, and this report's levels carry none (they were \
         left out or rebuilt without them). Measure again with infermeter run to judge it by \
         an SLO."
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{level, report, series};
    use crate::schema::to_ticks;

    /// A column set of `(status, ttft s, e2e s, output tokens, stalls)` requests.
    fn columns(requests: &[(u8, f64, f64, u32, u32)]) -> RequestColumns {
        let mut c = RequestColumns {
            stall_gap: 1_000,
            ..RequestColumns::default()
        };
        for &(status, ttft, e2e, tokens, stalls) in requests {
            c.status.push(status);
            c.ttft.push(to_ticks(ttft));
            c.e2e.push(to_ticks(e2e));
            c.output_tokens.push(tokens);
            c.max_gap.push(0);
            c.stalls.push(stalls);
            c.jitter.push(0);
        }
        c
    }

    fn slo(ttft: Option<f64>, tpot: Option<f64>, e2e: Option<f64>) -> Slo {
        Slo {
            limits: Limits {
                max_ttft_s: ttft,
                max_tpot_s: tpot,
                max_e2e_s: e2e,
                ..Limits::default()
            },
            ..Slo::default()
        }
    }

    /// Four requests over a 10 s window: one within everything, one slow to start, one slow
    /// to stream, one failed.
    fn four_requests() -> Level {
        let mut l = level(4, 1.0, 50.0);
        l.duration_s = 10.0;
        // The window's figures: 303 tokens and 3 completed requests in 10 s.
        l.system_output_tok_s = 30.3;
        l.requests_per_s = Some(0.3);
        l.per_request = Some(columns(&[
            // TPOT (3.0 - 0.5) / 100 = 25 ms.
            (RequestColumns::OK, 0.5, 3.0, 101, 0),
            (RequestColumns::OK, 6.0, 8.0, 101, 0),
            // TPOT (10.5 - 0.5) / 100 = 100 ms, and one stall.
            (RequestColumns::OK, 0.5, 10.5, 101, 1),
            (RequestColumns::ERRORED, 0.0, 0.2, 0, 0),
        ]));
        l
    }

    #[test]
    fn attainment_counts_requests_meeting_every_bound() {
        let l = four_requests();
        let a = attainment(&l, &slo(Some(5.0), Some(0.05), None)).unwrap();
        assert_eq!((a.met, a.total), (1, 4));
        assert_eq!(a.fraction, 0.25);
        assert_eq!(
            a.misses,
            Misses {
                failed: 1,
                ttft: 1,
                tpot: 1,
                e2e: 0,
                stalls: 0
            }
        );
        // One request of 101 tokens in 10 s; the interval is the share's times 4 requests in 10 s.
        assert!((a.goodput_req_s.unwrap() - 0.1).abs() < 1e-12);
        let band = a.goodput_req_s_interval.unwrap();
        assert!((band.low - a.interval.low * 0.4).abs() < 1e-12);
        assert!((band.high - a.interval.high * 0.4).abs() < 1e-12);
        assert!((a.goodput_tok_s.unwrap() - 10.1).abs() < 1e-12);
        // No bound: every request that did not fail.
        let any = attainment(&l, &Slo::default()).unwrap();
        assert_eq!(any.met, 3);
        // A bound exactly at a figure meets it: TTFT 6 s, TPOT 100 ms.
        let exact = attainment(&l, &slo(Some(6.0), Some(0.1), None)).unwrap();
        assert_eq!(exact.met, 3);
        let no_stall = Slo {
            limits: Limits {
                max_stalls: Some(0),
                ..Limits::default()
            },
            ..Slo::default()
        };
        assert_eq!(attainment(&l, &no_stall).unwrap().misses.stalls, 1);
        assert_eq!(attainment(&l, &slo(None, None, Some(8.0))).unwrap().met, 2);
        // Without columns there is nothing to judge.
        assert_eq!(attainment(&level(1, 1.0, 50.0), &Slo::default()), None);
    }

    #[test]
    fn one_token_has_no_time_per_output_token() {
        let mut l = level(1, 1.0, 50.0);
        l.per_request = Some(columns(&[(RequestColumns::OK, 0.1, 9.0, 1, 0)]));
        assert_eq!(
            attainment(&l, &slo(None, Some(0.001), None)).unwrap().met,
            1
        );
    }

    /// Known values: 8 of 10 is [0.4902, 0.9433] (Wilson, z = 1.96); 0 of 10 starts at 0 and 10
    /// of 10 ends at 1; 95 of 100 is [0.8883, 0.9785].
    #[test]
    fn wilson_interval_of_known_counts() {
        let close = |i: Interval, low: f64, high: f64| {
            assert!(
                (i.low - low).abs() < 1e-4 && (i.high - high).abs() < 1e-4,
                "{i:?}"
            );
        };
        close(wilson_95(8, 10).unwrap(), 0.4902, 0.9433);
        close(wilson_95(0, 10).unwrap(), 0.0, 0.2775);
        close(wilson_95(10, 10).unwrap(), 0.7225, 1.0);
        close(wilson_95(95, 100).unwrap(), 0.8883, 0.9785);
        assert_eq!(wilson_95(7, 7).unwrap().high, 1.0);
        assert_eq!(wilson_95(0, 7).unwrap().low, 0.0);
        assert_eq!(wilson_95(0, 0), None);
    }

    /// A series whose levels have attainments `fractions` of 100 requests each (TTFT 1 s for
    /// the ones that meet a 2 s bound, 3 s for the rest).
    fn series_of(mode: LoadMode, loads: &[u32], fractions: &[f64]) -> Series {
        let mut s = series(
            "chat",
            mode,
            &loads.iter().map(|&c| (c, 1.0, 50.0)).collect::<Vec<_>>(),
        );
        for (l, &f) in s.levels.iter_mut().zip(fractions) {
            let met = (f * 100.0).round() as usize;
            let requests: Vec<(u8, f64, f64, u32, u32)> = (0..100)
                .map(|i| {
                    let ttft = if i < met { 1.0 } else { 3.0 };
                    (RequestColumns::OK, ttft, ttft + 1.0, 10, 0)
                })
                .collect();
            l.per_request = Some(columns(&requests));
        }
        s
    }

    fn within_2s(target: f64) -> Slo {
        Slo {
            limits: Limits {
                max_ttft_s: Some(2.0),
                ..Limits::default()
            },
            target,
        }
    }

    #[test]
    fn max_load_at_both_ends_of_the_range() {
        let s = series_of(LoadMode::Peak, &[1, 2, 4], &[1.0, 0.99, 0.96]);
        let all = max_load_under(&s, &within_2s(0.95)).unwrap();
        assert_eq!(all, MaxLoad::AllPass { highest: 4.0 });
        assert_eq!(
            (all.value_text(), all.note()),
            ("≥ 4".to_string(), "all tested levels pass".to_string())
        );
        let none = max_load_under(&s, &within_2s(1.0)).unwrap();
        // 99% at 2 misses a 100% target, but 1 passes: between. A 97% target with the lowest
        // level at 96% is below the range.
        assert!(matches!(none, MaxLoad::Between { passing, .. } if passing == 1.0));
        let low = series_of(LoadMode::Peak, &[2, 4], &[0.9, 0.8]);
        let below = max_load_under(&low, &within_2s(0.95)).unwrap();
        assert_eq!(below, MaxLoad::NonePass { lowest: 2.0 });
        assert_eq!(below.value_text(), "< 2");
        // No columns: no answer.
        let bare = series("chat", LoadMode::Peak, &[(1, 1.0, 50.0)]);
        assert_eq!(max_load_under(&bare, &within_2s(0.95)), None);
    }

    /// Attainments 100% at 8 and 80% at 16: the monotone curve (its tangent is zero at 8 and
    /// the secant's, -2.5% per user, at 16) is 97.8% at 10, 95.4% at 11 and 94.0% at 11.5.
    #[test]
    fn max_load_between_levels_reads_the_monotone_curve() {
        let s = series_of(LoadMode::Peak, &[4, 8, 16], &[1.0, 1.0, 0.8]);
        let between = max_load_under(&s, &within_2s(0.95)).unwrap();
        assert_eq!(
            between,
            MaxLoad::Between {
                load: 11.0,
                passing: 8.0,
                failing: 16.0
            }
        );
        assert_eq!(between.value_text(), "≈ 11");
        assert_eq!(between.note(), "between measured 8 and 16");
        // A rate series keeps the fractional load.
        let mut rate = series_of(LoadMode::Rate, &[1, 2, 3], &[1.0, 1.0, 0.8]);
        for (l, r) in rate.levels.iter_mut().zip([4.0, 8.0, 16.0]) {
            l.request_rate = Some(r);
        }
        let MaxLoad::Between { load, .. } = max_load_under(&rate, &within_2s(0.95)).unwrap() else {
            panic!("between")
        };
        assert!(load > 11.0 && load < 11.5, "{load}");
        // When the next level is already far below, the measured one stands.
        let steep = series_of(LoadMode::Peak, &[8, 9], &[1.0, 0.0]);
        let measured = max_load_under(&steep, &within_2s(0.95)).unwrap();
        assert_eq!(measured.value_text(), "8");
        assert_eq!(measured.note(), "measured; 9 misses the target");
        // A level after a failing one does not count, as in the capacity analysis.
        let dip = series_of(LoadMode::Peak, &[1, 2, 4], &[1.0, 0.5, 1.0]);
        assert!(matches!(
            max_load_under(&dip, &within_2s(0.95)).unwrap(),
            MaxLoad::Between { passing, failing, .. } if passing == 1.0 && failing == 2.0
        ));
    }

    #[test]
    fn saturation_is_ttft_growing_over_the_level() {
        let mut growing = level(8, 1.0, 50.0);
        let requests: Vec<(u8, f64, f64, u32, u32)> = (0..16)
            .map(|i| (RequestColumns::OK, 0.2 + 0.3 * f64::from(i), 5.0, 10, 0))
            .collect();
        growing.per_request = Some(columns(&requests));
        let s = saturation(&growing).unwrap();
        // First four: 0.2..1.1, median 0.65; last four: 3.8..4.7, median 4.25.
        assert!((s.first_ttft_s - 0.65).abs() < 1e-9, "{s:?}");
        assert!((s.last_ttft_s - 4.25).abs() < 1e-9, "{s:?}");
        let mut steady = growing.clone();
        steady.per_request = Some(columns(&vec![(RequestColumns::OK, 0.5, 5.0, 10, 0); 16]));
        assert_eq!(saturation(&steady), None);
        let mut few = growing;
        few.per_request = Some(columns(&requests[..4]));
        assert_eq!(saturation(&few), None);
    }

    /// Stalls summed over completed requests (a failed one's are not counted); jitter is the
    /// median of the requests that had one.
    #[test]
    fn smoothness_counts_stalls_and_reads_jitter() {
        let mut l = level(3, 1.0, 50.0);
        let mut c = columns(&[
            (RequestColumns::OK, 0.1, 1.0, 10, 2),
            (RequestColumns::OK, 0.1, 1.0, 10, 0),
            (RequestColumns::OK, 0.1, 1.0, 10, 1),
            (RequestColumns::INCOMPLETE, 0.1, 1.0, 5, 7),
        ]);
        c.jitter = vec![150, 0, 310, 900];
        l.per_request = Some(c);
        let s = stream_smoothness(&l).unwrap();
        assert_eq!((s.stalls, s.stalled_requests), (3, 2));
        assert_eq!(s.stall_gap_s, 0.1);
        assert_eq!(s.jitter_p50, Some(2.3));
        assert_eq!(stream_smoothness(&level(1, 1.0, 50.0)), None);
    }

    #[test]
    fn findings_cover_series_with_columns_and_say_why_when_none() {
        let mut r = report(
            &["chat", "long"],
            vec![
                series_of(LoadMode::Peak, &[1, 2], &[1.0, 0.5]),
                series("long", LoadMode::Peak, &[(1, 1.0, 50.0)]),
            ],
        );
        let f = findings(&r, &within_2s(0.95));
        assert_eq!(f.series.len(), 1);
        assert_eq!(f.series[0].scenario_name, "Scenario chat");
        assert_eq!(f.series[0].levels[1].attainment.met, 50);
        assert_eq!(f.absent, None);
        r.series.remove(0);
        let none = findings(&r, &within_2s(0.95));
        assert!(none.series.is_empty());
        assert!(none.absent.unwrap().contains("carry none"));
        r.schema_version = "1.1.0".into();
        let old = findings(&r, &within_2s(0.95)).absent.unwrap();
        assert!(old.contains("format 1.1.0"), "{old}");
    }

    /// A use case's limits judge each request: 10 tok/s is 100 ms per token, 70 ms ITL is the
    /// stricter; the verdict says the share and the load.
    #[test]
    fn use_case_thresholds_as_an_slo() {
        let t = Limits {
            max_ttft_s: Some(8.0),
            min_decode_tok_s: Some(10.0),
            max_itl_s: Some(0.07),
            ..Limits::default()
        };
        assert_eq!(
            t.per_request(),
            Limits {
                max_ttft_s: Some(8.0),
                max_tpot_s: Some(0.07),
                ..Limits::default()
            }
        );
        let speed_only = Limits {
            max_itl_s: None,
            ..t
        };
        assert_eq!(speed_only.per_request().max_tpot_s, Some(0.1));
        // A stored TPOT bound stricter than the speed stays.
        let tpot = Limits {
            max_tpot_s: Some(0.05),
            ..speed_only
        };
        assert_eq!(tpot.per_request().max_tpot_s, Some(0.05));
        let s = series_of(LoadMode::Peak, &[4, 8, 16], &[1.0, 1.0, 0.8]);
        let verdict = max_load_under(&s, &within_2s(0.95)).unwrap();
        assert_eq!(
            verdict.attainment_sentence(LoadMode::Peak, 0.95),
            "95% of requests stay within the thresholds up to ≈ 11 concurrent users (between measured 8 and 16)."
        );
        assert_eq!(
            MaxLoad::AllPass { highest: 32.0 }.attainment_sentence(LoadMode::Burst, 0.9),
            "90% of requests stay within the thresholds at every tested level, up to 32 queued requests."
        );
    }

    /// A stored SLO keeps its keys and their order (the limits flattened, then the target);
    /// a speed or an ITL limit in one is judged as the time per output token it means, and
    /// shown as such.
    #[test]
    fn a_stored_slo_reads_and_writes_its_keys_and_folds_speed_into_tpot() {
        let text =
            r#"{"max_ttft_s":5.0,"max_tpot_s":0.05,"max_e2e_s":30.0,"max_stalls":0,"target":0.9}"#;
        let stored: Slo = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&stored).unwrap(), text);
        let thresholds =
            r#"{"max_ttft_s":10.0,"min_decode_tok_s":10.0,"max_itl_s":0.07,"max_e2e_s":60.0}"#;
        let limits: Limits = serde_json::from_str(thresholds).unwrap();
        assert_eq!(serde_json::to_string(&limits).unwrap(), thresholds);
        // 20 tok/s is the 50 ms TPOT of the request that streams in 25 ms only.
        let speed: Slo = serde_json::from_str(r#"{"min_decode_tok_s":20.0}"#).unwrap();
        assert_eq!(speed.target, 0.95);
        let by_speed = attainment(&four_requests(), &speed).unwrap();
        let by_tpot = attainment(&four_requests(), &slo(None, Some(0.05), None)).unwrap();
        assert_eq!(by_speed, by_tpot);
        assert_eq!(slo_text(&speed), "TPOT ≤ 50 ms; 95% of requests");
        assert_eq!(slo_spec(&speed), "tpot=50ms,target=95%");
    }

    #[test]
    fn slo_in_words() {
        let s = Slo {
            limits: Limits {
                max_ttft_s: Some(5.0),
                max_tpot_s: Some(0.05),
                max_stalls: Some(0),
                ..Limits::default()
            },
            ..Slo::default()
        };
        assert_eq!(
            slo_text(&s),
            "TTFT ≤ 5 s, TPOT ≤ 50 ms, no stall; 95% of requests"
        );
        assert_eq!(slo_text(&Slo::default()), "completed; 95% of requests");
    }
}
