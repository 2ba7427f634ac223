//! Figures of multi-turn sessions (users and sessions modes) and trace replays: users served
//! under each use case's limits, TTFT by turn index with the prefix cache allowed and defeated,
//! the cache-hit ratio by load, what caching saved, and how a replay kept to its trace. The
//! viewer's Users section and `infermeter summary` word and plot these; they derive nothing.

use schemars::JsonSchema;
use serde::Serialize;

use super::capacity::Capacity;
use super::format::{context_label, format_number, with_unit};
use super::metric::Metric;
use crate::aggregate::Applied;
use crate::schema::Limits;
use crate::schema::{CacheUse, Level, LoadMode, Report, Scenario, Series, SessionShape, ThinkTime};
use crate::stats::Stat;

mod served;
mod trace;

use served::scenario_users_served;
pub use served::{caching_gains, users_served, CachingGain, LimitsOf, ScenarioUsersServed};
pub use trace::{TraceLevelFigures, TraceReplay};

/// Every session scenario and trace replay of a report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionFindings {
    /// Session scenarios with a users or sessions series, in report order.
    pub scenarios: Vec<SessionScenario>,
    /// Replayed traces, in report order.
    pub traces: Vec<TraceReplay>,
}

impl SessionFindings {
    pub fn of(report: &Report, stat: Stat) -> SessionFindings {
        let series_of = |s: &Scenario, modes: &[LoadMode]| -> Vec<&Series> {
            report
                .series
                .iter()
                .filter(|x| x.scenario == s.id && modes.contains(&x.mode) && !x.levels.is_empty())
                .collect()
        };
        let scenarios = report
            .scenarios
            .iter()
            .filter_map(|s| {
                let shape = s.session.as_ref()?;
                let series = series_of(s, &[LoadMode::Users, LoadMode::Sessions]);
                (!series.is_empty()).then(|| SessionScenario::of(s, shape, &series, stat))
            })
            .collect();
        let traces = report
            .scenarios
            .iter()
            .filter_map(|s| {
                let source = s.trace.as_ref()?;
                let series = series_of(s, &[LoadMode::Trace]);
                let series = series.first()?;
                Some(TraceReplay::of(s, source, series, stat))
            })
            .collect();
        SessionFindings { scenarios, traces }
    }

    /// True when the report measured no session and replayed no trace: the viewer shows no
    /// Users section.
    pub fn is_empty(&self) -> bool {
        self.scenarios.is_empty() && self.traces.is_empty()
    }

    /// Whether `report` has any session or trace figures, without computing them: the same
    /// answer as `!SessionFindings::of(report, ..).is_empty()`.
    pub fn exist_in(report: &Report) -> bool {
        report.scenarios.iter().any(|s| {
            let modes: &[LoadMode] = if s.session.is_some() {
                &[LoadMode::Users, LoadMode::Sessions]
            } else if s.trace.is_some() {
                &[LoadMode::Trace]
            } else {
                &[]
            };
            report
                .series
                .iter()
                .any(|x| x.scenario == s.id && modes.contains(&x.mode) && !x.levels.is_empty())
        })
    }

    /// The figures as the terminal prints them: (label, text) lines.
    pub fn lines(&self) -> Vec<(String, String)> {
        let mut lines = Vec::new();
        for s in &self.scenarios {
            lines.extend(s.lines());
        }
        for t in &self.traces {
            lines.extend(t.lines());
        }
        lines
    }
}

/// One session scenario's figures.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionScenario {
    pub scenario: String,
    pub scenario_name: String,
    pub shape: SessionShape,
    /// Each turn's reply, tokens.
    pub output_tokens: u32,
    /// The last turn's context when every reply is `output_tokens` long (chat template aside).
    pub last_turn_context_tokens: u32,
    /// "1K shared system prompt, 200-token first message, 5 turns adding 200 tokens, 256 out,
    /// think time exponential, mean 5 s".
    pub shape_text: String,
    /// Every series of the scenario, users mode first, caching allowed before defeated.
    pub series: Vec<SessionSeries>,
    /// Users mode: simultaneous users served under each applicable use case's limits (and the
    /// report's default limits), for each cache use measured.
    pub users_served: Vec<UsersServed>,
    /// TTFT of each later turn with caching allowed against defeated, at every load both
    /// measured: the caching caveat, measured.
    pub caching_effect: Vec<CachingEffect>,
}

/// One series (mode and cache use) of a session scenario, level by level.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionSeries {
    pub mode: LoadMode,
    pub cache: Option<CacheUse>,
    pub levels: Vec<SessionLevelFigures>,
}

/// One level of a session series at the reader's statistic.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionLevelFigures {
    /// Users (users mode), or the most sessions active at once (sessions mode).
    pub load: u32,
    /// New sessions per second (sessions mode).
    pub session_rate: Option<f64>,
    pub sessions_started: u64,
    pub sessions_completed: u64,
    /// Over all turns: TTFT, per-user decode speed, time to the first answer token (after
    /// reasoning), system output throughput.
    pub ttft_s: Option<f64>,
    pub decode_tok_s: Option<f64>,
    pub first_answer_s: Option<f64>,
    pub system_output_tok_s: f64,
    /// Cached over prompt tokens, 0..1, when the engine reported it.
    pub cache_hit_ratio: Option<f64>,
    pub turns: Vec<TurnFigures>,
    /// The level has a timeline (see [`crate::analysis::timeline`]).
    pub has_timeline: bool,
}

/// One turn index at one level.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TurnFigures {
    pub turn: u32,
    pub ok: u64,
    pub failed: u64,
    pub ttft_s: Option<f64>,
    /// Mean prompt tokens of the turn.
    pub input_tokens: Option<f64>,
    pub cache_hit_ratio: Option<f64>,
}

/// Users a series serves under one set of limits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UsersServed {
    /// Use-case id, or the scenario's id for the default limits.
    pub id: String,
    pub name: String,
    pub thresholds: Limits,
    pub cache: Option<CacheUse>,
    /// In users.
    pub capacity: Capacity,
    /// "Supports 24 simultaneous users within accepted thresholds. ..."
    pub verdict: String,
}

/// A later turn's TTFT with the prefix cache allowed and defeated, at one load.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CachingEffect {
    pub mode: LoadMode,
    pub load: u32,
    pub turn: u32,
    pub allowed_ttft_s: f64,
    pub defeated_ttft_s: f64,
    /// defeated / allowed: how many times sooner the first token came with caching.
    pub speedup: f64,
}

impl SessionScenario {
    fn of(scenario: &Scenario, shape: &SessionShape, series: &[&Series], stat: Stat) -> Self {
        let mut series: Vec<&Series> = series.to_vec();
        crate::order::sort_by_key(&mut series, |s| (s.mode != LoadMode::Users, s.cache));
        let last_turn_context_tokens = last_turn_context(scenario, shape);
        let users_served = scenario_users_served(
            scenario,
            &series,
            last_turn_context_tokens,
            stat,
            &|_, preset| preset,
        );
        SessionScenario {
            scenario: scenario.id.clone(),
            scenario_name: scenario.name.clone(),
            shape: shape.clone(),
            output_tokens: scenario.output_tokens,
            last_turn_context_tokens,
            shape_text: shape_text(scenario, shape),
            series: series
                .iter()
                .map(|s| SessionSeries {
                    mode: s.mode,
                    cache: s.cache,
                    levels: s.levels.iter().map(|l| level_figures(l, stat)).collect(),
                })
                .collect(),
            users_served,
            caching_effect: caching_effect(&series, stat),
        }
    }

    /// The series of `mode` and `cache`, if measured.
    pub fn series(&self, mode: LoadMode, cache: Option<CacheUse>) -> Option<&SessionSeries> {
        self.series
            .iter()
            .find(|s| s.mode == mode && s.cache == cache)
    }

    fn lines(&self) -> Vec<(String, String)> {
        let mut lines = vec![(
            format!("Sessions: {}", self.scenario_name),
            self.shape_text.clone(),
        )];
        for served in self
            .users_served
            .iter()
            .filter(|u| u.cache != Some(CacheUse::Defeated))
        {
            lines.push((
                format!("Users served: {}", served.name),
                served.verdict.clone(),
            ));
        }
        // The heaviest load both measured: where caching matters most.
        if let Some(top) = self.caching_effect.iter().max_by_key(|e| (e.load, e.turn)) {
            lines.push((
                format!(
                    "Turn {} TTFT at {}",
                    top.turn,
                    load_phrase(top.mode, top.load)
                ),
                top.text(),
            ));
        }
        for s in &self.series {
            let ratios: Vec<String> = s
                .levels
                .iter()
                .filter_map(|l| {
                    let r = l.cache_hit_ratio?;
                    Some(format!("{} {}", l.load, with_unit(r * 100.0, "%")))
                })
                .collect();
            if !ratios.is_empty() {
                lines.push((
                    format!(
                        "Cache hits by {} ({})",
                        s.mode.label(),
                        cache_label(s.cache)
                    ),
                    ratios.join(", "),
                ));
            }
        }
        lines
    }
}

impl CachingEffect {
    /// "0.05 s with caching, 0.41 s without (8.2× sooner)"; "(1.5× later)" where caching cost
    /// more than it saved (a short prompt on a fast engine).
    pub fn text(&self) -> String {
        let (factor, way) = if self.speedup >= 1.0 {
            (self.speedup, "sooner")
        } else {
            (1.0 / self.speedup, "later")
        };
        format!(
            "{} with caching, {} without ({}× {way})",
            Metric::Ttft.display_text(self.allowed_ttft_s),
            Metric::Ttft.display_text(self.defeated_ttft_s),
            format_number(factor)
        )
    }
}

impl SessionSeries {
    /// "caching allowed" (or "caching not set"), and "sessions" for an open-loop series.
    pub fn label(&self) -> String {
        match self.mode {
            LoadMode::Users => cache_label(self.cache).to_string(),
            mode => format!("{}, {}", mode.label(), cache_label(self.cache)),
        }
    }

    /// `(load, cached over prompt tokens 0..1)` of each level that reported cached tokens.
    pub fn cache_hit_points(&self) -> Vec<(u32, f64)> {
        self.levels
            .iter()
            .filter_map(|l| Some((l.load, l.cache_hit_ratio?)))
            .collect()
    }

    /// `(load, TTFT s over all turns)` of each level that has it.
    pub fn ttft_points(&self) -> Vec<(u32, f64)> {
        self.levels
            .iter()
            .filter_map(|l| Some((l.load, l.ttft_s?)))
            .collect()
    }

    /// The level at `load`.
    pub fn level(&self, load: u32) -> Option<&SessionLevelFigures> {
        self.levels.iter().find(|l| l.load == load)
    }
}

impl SessionLevelFigures {
    /// `(turn index, TTFT s)` of each turn that has it.
    pub fn turn_ttft_points(&self) -> Vec<(u32, f64)> {
        self.turns
            .iter()
            .filter_map(|t| Some((t.turn, t.ttft_s?)))
            .collect()
    }
}

/// One series' TTFT by turn index at one load: a line of the TTFT-by-turn chart.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnLine<'a> {
    pub series: &'a SessionSeries,
    pub load: u32,
    /// `(turn, TTFT s)`.
    pub points: Vec<(u32, f64)>,
}

impl SessionScenario {
    /// The load TTFT by turn is compared at: the heaviest load that every series of the first
    /// series' mode measured (where caching matters most), else that series' heaviest.
    pub fn turn_load(&self) -> Option<(LoadMode, u32)> {
        let first = self.series.first()?;
        let same_mode: Vec<&SessionSeries> = self
            .series
            .iter()
            .filter(|s| s.mode == first.mode)
            .collect();
        let common = first
            .levels
            .iter()
            .map(|l| l.load)
            .filter(|&load| same_mode.iter().all(|s| s.level(load).is_some()))
            .max();
        let load = common.or_else(|| first.levels.iter().map(|l| l.load).max())?;
        Some((first.mode, load))
    }

    /// Each series' TTFT by turn at [`SessionScenario::turn_load`], caching allowed first.
    pub fn ttft_by_turn(&self) -> Vec<TurnLine<'_>> {
        let Some((mode, load)) = self.turn_load() else {
            return Vec::new();
        };
        self.series
            .iter()
            .filter(|s| s.mode == mode)
            .filter_map(|series| {
                let points = series.level(load)?.turn_ttft_points();
                (!points.is_empty()).then_some(TurnLine {
                    series,
                    load,
                    points,
                })
            })
            .collect()
    }

    /// "At 16 users, turn 4 of Chat: 0.05 s with caching, 0.41 s without (8.2× sooner)." with
    /// both cache uses; with one, its first and last turns' TTFT.
    pub fn turn_sentence(&self) -> Option<String> {
        let (mode, load) = self.turn_load()?;
        let at = load_phrase(mode, load);
        let effect = self
            .caching_effect
            .iter()
            .filter(|e| e.mode == mode && e.load == load)
            .max_by_key(|e| e.turn);
        if let Some(e) = effect {
            return Some(format!(
                "At {at}, turn {} of {}: {}.",
                e.turn,
                self.scenario_name,
                e.text()
            ));
        }
        let line = self.ttft_by_turn().into_iter().next()?;
        let (first, last) = (line.points.first()?, line.points.last()?);
        Some(format!(
            "At {at} ({}), {}'s first token came after {} on turn {} and {} on turn {}.",
            line.series.label(),
            self.scenario_name,
            Metric::Ttft.display_text(first.1),
            first.0,
            Metric::Ttft.display_text(last.1),
            last.0
        ))
    }

    /// "At 16 users, Chat's TTFT over all turns is 0.05 s with caching allowed and 0.41 s with
    /// caching defeated."
    pub fn load_sentence(&self) -> Option<String> {
        let (mode, load) = self.turn_load()?;
        let parts: Vec<String> = self
            .series
            .iter()
            .filter(|s| s.mode == mode)
            .filter_map(|s| {
                let ttft = s.level(load)?.ttft_s?;
                Some(format!(
                    "{} with {}",
                    Metric::Ttft.display_text(ttft),
                    s.label()
                ))
            })
            .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "At {}, {}'s TTFT over all turns is {}.",
                load_phrase(mode, load),
                self.scenario_name,
                parts.join(" and ")
            )
        })
    }

    /// "Share of Chat's prompt tokens served from the prefix cache: 73% at 1 user rising to
    /// 88% at 16 users with caching allowed; 0% throughout with caching defeated."
    pub fn cache_sentence(&self) -> Option<String> {
        let parts: Vec<String> = self
            .series
            .iter()
            .filter_map(|s| {
                let points = s.cache_hit_points();
                let (first, last) = (points.first()?, points.last()?);
                let text = |r: f64| with_unit(r * 100.0, "%");
                let span = if text(first.1) == text(last.1) {
                    format!("{} throughout", text(first.1))
                } else {
                    let way = if last.1 > first.1 {
                        "rising"
                    } else {
                        "falling"
                    };
                    format!(
                        "{} at {} {way} to {} at {}",
                        text(first.1),
                        load_phrase(s.mode, first.0),
                        text(last.1),
                        load_phrase(s.mode, last.0)
                    )
                };
                Some(format!("{span} with {}", s.label()))
            })
            .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "Share of {}'s prompt tokens served from the prefix cache: {}.",
                self.scenario_name,
                parts.join("; ")
            )
        })
    }
}

/// "caching allowed", or "caching not set" for a series without a cache use.
fn cache_label(cache: Option<CacheUse>) -> &'static str {
    cache.map_or("caching not set", CacheUse::label)
}

/// "16 users", "12 sessions active": a session series' load `load`, as [`LoadMode::describe`]
/// words it.
fn load_phrase(mode: LoadMode, load: u32) -> String {
    let applied = Applied {
        concurrency: load,
        ..Applied::default()
    };
    mode.describe(&applied)
}

/// "4× speed": a replay's speed, as [`LoadMode::describe`] words it.
fn trace_speed(speed: f64) -> String {
    let applied = Applied {
        trace_speed: Some(speed),
        ..Applied::default()
    };
    LoadMode::Trace.describe(&applied)
}

/// e.g. "exponential, mean 5 s".
pub fn think_time_text(think: &ThinkTime) -> String {
    let n = format_number;
    match *think {
        ThinkTime::Fixed { seconds } => format!("fixed {} s", n(seconds)),
        ThinkTime::Exponential { mean_s } => format!("exponential, mean {} s", n(mean_s)),
        ThinkTime::Lognormal { mean_s, sigma } => {
            format!("lognormal, mean {} s, sigma {}", n(mean_s), n(sigma))
        }
    }
}

fn shape_text(scenario: &Scenario, shape: &SessionShape) -> String {
    let system = match shape.system_prompt_tokens {
        0 => String::new(),
        n => format!("{} shared system prompt, ", context_label(n)),
    };
    format!(
        "{system}{}-token first message, {} turns adding {} tokens each, {} out per turn, think time {}",
        shape.first_turn_tokens,
        shape.turns,
        shape.turn_tokens,
        scenario.output_tokens,
        think_time_text(&shape.think_time)
    )
}

/// First turn's context plus, for each later turn, the previous reply and the new message.
fn last_turn_context(scenario: &Scenario, shape: &SessionShape) -> u32 {
    let later = shape.turns.saturating_sub(1);
    scenario
        .input_tokens
        .saturating_add(later.saturating_mul(scenario.output_tokens + shape.turn_tokens))
}

fn level_figures(level: &Level, stat: Stat) -> SessionLevelFigures {
    let sessions = level.sessions.clone().unwrap_or_default();
    SessionLevelFigures {
        load: level.concurrency,
        session_rate: sessions.session_rate,
        sessions_started: sessions.started,
        sessions_completed: sessions.completed,
        ttft_s: Metric::Ttft.value(level, stat),
        decode_tok_s: Metric::DecodeTokS.value(level, stat),
        first_answer_s: level.metrics.first_answer_s.and_then(|d| d.get(stat)),
        system_output_tok_s: level.system_output_tok_s,
        cache_hit_ratio: level.prompt_cache.and_then(|c| c.hit_ratio()),
        turns: sessions
            .turns
            .iter()
            .map(|t| TurnFigures {
                turn: t.turn,
                ok: t.ok,
                failed: t.failed,
                ttft_s: t.ttft_s.and_then(|d| d.get(stat)),
                input_tokens: t.input_tokens.map(|d| d.mean),
                cache_hit_ratio: t.prompt_cache.and_then(|c| c.hit_ratio()),
            })
            .collect(),
        has_timeline: level.timeline.is_some(),
    }
}

/// Later turns' TTFT, allowed against defeated, at each (mode, load) both series measured.
fn caching_effect(series: &[&Series], stat: Stat) -> Vec<CachingEffect> {
    let find = |mode: LoadMode, cache: CacheUse| {
        series
            .iter()
            .find(|s| s.mode == mode && s.cache == Some(cache))
    };
    let mut effects = Vec::new();
    for mode in [LoadMode::Users, LoadMode::Sessions] {
        let (Some(allowed), Some(defeated)) = (
            find(mode, CacheUse::Allowed),
            find(mode, CacheUse::Defeated),
        ) else {
            continue;
        };
        for a in &allowed.levels {
            let Some(d) = defeated
                .levels
                .iter()
                .find(|d| d.concurrency == a.concurrency)
            else {
                continue;
            };
            let turns = |l: &Level| l.sessions.clone().map(|s| s.turns).unwrap_or_default();
            let defeated_turns = turns(d);
            for at in turns(a).iter().filter(|t| t.turn >= 2) {
                let dt = defeated_turns.iter().find(|t| t.turn == at.turn);
                let (Some(allowed_ttft), Some(defeated_ttft)) = (
                    at.ttft_s.and_then(|x| x.get(stat)),
                    dt.and_then(|t| t.ttft_s).and_then(|x| x.get(stat)),
                ) else {
                    continue;
                };
                if allowed_ttft > 0.0 {
                    effects.push(CachingEffect {
                        mode,
                        load: a.concurrency,
                        turn: at.turn,
                        allowed_ttft_s: allowed_ttft,
                        defeated_ttft_s: defeated_ttft,
                        speedup: defeated_ttft / allowed_ttft,
                    });
                }
            }
        }
    }
    effects
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{report, series};
    use crate::schema::{PromptCache, SessionLevel, TurnStats};
    use crate::Distribution;

    fn chat_shape() -> SessionShape {
        SessionShape {
            system_prompt_tokens: 1024,
            first_turn_tokens: 200,
            turn_tokens: 200,
            turns: 3,
            think_time: ThinkTime::Exponential { mean_s: 5.0 },
        }
    }

    /// A users series whose later turns take `later_ttft` (turn 1: 0.5 s) and hit the cache
    /// `hit` of their prompt.
    fn users(cache: CacheUse, later_ttft: f64, hit: u64) -> Series {
        let mut s = series(
            "chat",
            LoadMode::Users,
            &[(1, 0.2, 150.0), (8, 0.4, 120.0), (64, 4.0, 40.0)],
        );
        s.cache = Some(cache);
        for level in &mut s.levels {
            let turn = |turn, ttft: f64, cached| TurnStats {
                turn,
                ok: 8,
                failed: 0,
                ttft_s: Some(Distribution::constant(ttft)),
                input_tokens: Some(Distribution::constant(1000.0)),
                prompt_cache: Some(PromptCache {
                    requests: 8,
                    prompt_tokens: 8000,
                    cached_tokens: cached,
                }),
            };
            level.sessions = Some(SessionLevel {
                started: 8,
                completed: 8,
                session_rate: None,
                turns: vec![
                    turn(1, 0.5, 0),
                    turn(2, later_ttft, hit * 8),
                    turn(3, later_ttft, hit * 8),
                ],
            });
            level.prompt_cache = Some(PromptCache {
                requests: 24,
                prompt_tokens: 24_000,
                cached_tokens: hit * 16,
            });
        }
        s
    }

    fn session_report() -> Report {
        let mut r = report(
            &["chat", "plain"],
            vec![
                users(CacheUse::Defeated, 0.6, 0),
                users(CacheUse::Allowed, 0.1, 900),
                series("plain", LoadMode::Peak, &[(1, 0.2, 100.0)]),
            ],
        );
        r.scenarios[0].input_tokens = 1224;
        r.scenarios[0].session = Some(chat_shape());
        r
    }

    /// TTFT within 5 s: the defeated series passes at 8 users and fails at 64 (10 s), the
    /// allowed one passes throughout (4 s), so caching adds at least the difference.
    #[test]
    fn caching_gain_where_the_defeated_series_reaches_the_limits() {
        let limits = |_: &str, _: Limits| Limits {
            max_ttft_s: Some(5.0),
            ..Limits::default()
        };
        assert!(caching_gains(&users_served(&session_report(), Stat::Mean, &limits)).is_empty());
        let mut r = session_report();
        r.series[0].levels[2].metrics.ttft_s = Some(Distribution::constant(10.0));
        let gains = caching_gains(&users_served(&r, Stat::Mean, &limits));
        let g = gains.last().expect("the default limits at least");
        assert_eq!(g.limits_name, "Scenario chat (default limits)");
        assert!(g.allowed_is_bound);
        assert_eq!(g.allowed, 64);
        assert!((8..64).contains(&g.defeated), "{g:?}");
        assert_eq!(
            g.sentence(),
            format!(
                "Within the limits of Scenario chat (default limits), prefix caching adds at least {} \
                 users to Scenario chat: ≥ 64 with it (every level tested passes), {} without.",
                64 - g.defeated,
                g.defeated
            )
        );
    }

    #[test]
    fn a_report_without_sessions_has_no_session_figures() {
        let r = report(
            &["plain"],
            vec![series("plain", LoadMode::Peak, &[(1, 0.2, 100.0)])],
        );
        assert!(SessionFindings::of(&r, Stat::Mean).is_empty());
        assert!(!SessionFindings::exist_in(&r));
        assert!(SessionFindings::exist_in(&session_report()));
    }

    #[test]
    fn session_figures_by_turn_cache_and_load() {
        let f = SessionFindings::of(&session_report(), Stat::Mean);
        let [s] = &f.scenarios[..] else {
            panic!("one session scenario: {:?}", f.scenarios)
        };
        assert_eq!(s.last_turn_context_tokens, 1224 + 2 * 456);
        assert_eq!(
            s.shape_text,
            "1K shared system prompt, 200-token first message, 3 turns adding 200 tokens each, \
             256 out per turn, think time exponential, mean 5 s"
        );
        // Allowed first, whatever the report's order.
        let caches: Vec<Option<CacheUse>> = s.series.iter().map(|x| x.cache).collect();
        assert_eq!(caches, [Some(CacheUse::Allowed), Some(CacheUse::Defeated)]);
        let allowed = s.series(LoadMode::Users, Some(CacheUse::Allowed)).unwrap();
        let loads: Vec<u32> = allowed.levels.iter().map(|l| l.load).collect();
        assert_eq!(loads, [1, 8, 64]);
        let top = &allowed.levels[2];
        let ttft: Vec<Option<f64>> = top.turns.iter().map(|t| t.ttft_s).collect();
        assert_eq!(ttft, [Some(0.5), Some(0.1), Some(0.1)]);
        assert_eq!(top.turns[1].cache_hit_ratio, Some(0.9));
        assert_eq!(top.cache_hit_ratio, Some(0.6));
        // Every load, every later turn: 0.6 s defeated against 0.1 s allowed.
        assert_eq!(s.caching_effect.len(), 3 * 2);
        let e = &s.caching_effect[5];
        assert_eq!((e.load, e.turn), (64, 3));
        assert!((e.speedup - 6.0).abs() < 1e-9);
        assert_eq!(e.text(), "0.1 s with caching, 0.6 s without (6× sooner)");
        // General chatbot (32K) and longer hold the 2.1K last turn; code completion (1K) does not.
        let served: Vec<(&str, Option<CacheUse>)> = s
            .users_served
            .iter()
            .map(|u| (u.id.as_str(), u.cache))
            .collect();
        assert!(served.contains(&("short_form_chatbot", Some(CacheUse::Allowed))));
        assert!(served.contains(&("chat", Some(CacheUse::Defeated))));
        assert!(!served.iter().any(|(id, _)| *id == "code_completion"));
        let general = s
            .users_served
            .iter()
            .find(|u| u.id == "general_chatbot" && u.cache == Some(CacheUse::Allowed))
            .unwrap();
        // TTFT ≤ 8 s everywhere, decode ≥ 15 tok/s everywhere: all 64 users.
        assert_eq!(
            general.verdict,
            "Supports all 64 tested simultaneous users."
        );
        let lines = f.lines();
        assert!(lines
            .iter()
            .any(|(label, text)| label == "Turn 3 TTFT at 64 users" && text.contains("6× sooner")));
        assert!(lines.iter().any(
            |(label, text)| label == "Cache hits by users (caching allowed)"
                && text == "1 60%, 8 60%, 64 60%"
        ));
    }

    /// The charts' data and sentences: TTFT by turn at the heaviest load both series measured,
    /// cache hits by load, users served under limits the reader moved.
    #[test]
    fn chart_lines_and_sentences_of_a_session_scenario() {
        let r = session_report();
        let f = SessionFindings::of(&r, Stat::Mean);
        let s = &f.scenarios[0];
        assert_eq!(s.turn_load(), Some((LoadMode::Users, 64)));
        let lines = s.ttft_by_turn();
        let caches: Vec<Option<CacheUse>> = lines.iter().map(|l| l.series.cache).collect();
        assert_eq!(caches, [Some(CacheUse::Allowed), Some(CacheUse::Defeated)]);
        assert_eq!(lines[0].points, [(1, 0.5), (2, 0.1), (3, 0.1)]);
        assert_eq!(lines[1].points, [(1, 0.5), (2, 0.6), (3, 0.6)]);
        assert_eq!(
            s.turn_sentence().unwrap(),
            "At 64 users, turn 3 of Scenario chat: 0.1 s with caching, 0.6 s without (6× sooner)."
        );
        assert_eq!(
            s.series[0].cache_hit_points(),
            [(1, 0.6), (8, 0.6), (64, 0.6)]
        );
        assert_eq!(
            s.cache_sentence().unwrap(),
            "Share of Scenario chat's prompt tokens served from the prefix cache: 60% throughout \
             with caching allowed; 0% throughout with caching defeated."
        );
        assert_eq!(s.series[1].ttft_points(), [(1, 0.2), (8, 0.4), (64, 4.0)]);
        assert_eq!(
            s.load_sentence().unwrap(),
            "At 64 users, Scenario chat's TTFT over all turns is 4 s with caching allowed and 4 s \
             with caching defeated."
        );
        // A slower cache than none reads as later, not as "0.5× sooner".
        let slower = CachingEffect {
            allowed_ttft_s: 0.2,
            defeated_ttft_s: 0.1,
            speedup: 0.5,
            ..s.caching_effect[0].clone()
        };
        assert_eq!(
            slower.text(),
            "0.2 s with caching, 0.1 s without (2× later)"
        );

        // Users served: the presets, then a limit the reader moved (TTFT at most 0.3 s: only
        // the single user's 0.2 s level holds).
        let preset = users_served(&r, Stat::Mean, &|_, preset| preset);
        assert_eq!(preset.len(), 1);
        assert_eq!(preset[0].served, s.users_served);
        let strict = users_served(&r, Stat::Mean, &|id, preset| {
            if id == "general_chatbot" {
                Limits {
                    max_ttft_s: Some(0.3),
                    ..preset
                }
            } else {
                preset
            }
        });
        let general = strict[0]
            .served
            .iter()
            .find(|u| u.id == "general_chatbot" && u.cache == Some(CacheUse::Allowed))
            .unwrap();
        assert_eq!(general.capacity.max_concurrency, Some(1));
        assert_eq!(general.thresholds.max_ttft_s, Some(0.3));
        assert!(general.verdict.contains("user"), "{}", general.verdict);
    }

    /// One cache use measured: the sentence gives the first and the last turn.
    #[test]
    fn a_single_series_turn_sentence_gives_first_and_last_turn() {
        let mut r = session_report();
        r.series.remove(0);
        let f = SessionFindings::of(&r, Stat::Mean);
        assert_eq!(
            f.scenarios[0].turn_sentence().unwrap(),
            "At 64 users (caching allowed), Scenario chat's first token came after 0.5 s on turn \
             1 and 0.1 s on turn 3."
        );
    }
}
