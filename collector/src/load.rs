//! The load modes, one file each behind [`Load`]: how a mode's levels are planned from its
//! suite section, how one level runs, and how it is shared among the shards of a sharded run.
//! Around them: a level's context and outcome ([`LevelContext`], [`LevelRun`]), the plan of a
//! whole run ([`plan`]), the records a level keeps ([`record`]), the thread that sends
//! open-loop requests on time ([`dispatch`]) and the shards' parts ([`Part`]).
//!
//! Adding a mode: a file here implementing [`Load`], its lines in [`levels_of`] and [`merging`],
//! its suite section (`suite.rs`), its `LoadMode` variant in the report schema and its words
//! (report/src/analysis/load_mode.rs) (docs/architecture.md has the checklist).

mod agents;
mod burst;
mod conversations;
pub mod dispatch;
mod job_rate;
mod open_loop;
mod peak;
mod probe;
mod rate;
pub mod record;
mod sessions;
mod shard;
mod trace;
mod users;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use infermeter_report::aggregate::{Applied, Window};
use infermeter_report::{
    Arrivals, CacheUse, ClientHealth, Distribution, LoadMode, RequestRecord, TokenSource,
};
use tokio::sync::watch;

use crate::http::arrival::ClockCounts;
use crate::http::driver::Driver;
use crate::prompts::conversation::SessionPlan;
use crate::prompts::trace::BlockWords;
use crate::prompts::Prepared;
use crate::suite::Suite;
pub use shard::{MergedLoad, MergedWindow, Merging, Part, Sharded};

/// A level's run, boxed: the trait's levels are chosen at run time.
pub type LevelFuture<'a> = Pin<Box<dyn Future<Output = LevelRun> + 'a>>;

/// One level of one load mode.
pub trait Load: fmt::Debug + Send + Sync {
    /// The mode's levels of suite scenario `scenario`, in order: none where the suite has no
    /// section for the mode or the scenario is not of its kind.
    fn plan(suite: &Suite, scenario: usize) -> Vec<Self>
    where
        Self: Sized;

    fn mode(&self) -> LoadMode;

    /// The level's number in its records (their `concurrency`): its load where the mode sets
    /// it (peak, burst, users), else its place in its series from 1.
    fn record_label(&self) -> u32;

    /// Rate levels: how their requests arrive (constant or Poisson), which their series
    /// records.
    fn arrivals(&self) -> Option<Arrivals> {
        None
    }

    /// Session levels: whether the engine's prefix cache may reuse earlier turns.
    fn cache(&self) -> Option<CacheUse> {
        None
    }

    /// The most requests the level has in flight, to size the connection pool: an open loop
    /// cannot say, and sizes it for 64.
    fn max_in_flight(&self) -> usize {
        64
    }

    /// Requests one trial sends, when known in advance (the progress bar's length).
    fn expected_requests(&self) -> Option<u64> {
        None
    }

    /// How the level applied its load, given the most requests one of its trials had in
    /// flight and the series' previous level.
    fn applied(&self, max_in_flight: u32, previous: Option<u32>) -> Applied;

    /// Runs one trial of the level.
    fn run<'a>(&'a self, ctx: &'a LevelContext<'a>) -> LevelFuture<'a>;

    /// This shard's part of the level in a sharded run, where every step loads the server for
    /// a fixed time (`level_time` where the mode's own does not say).
    fn shard(&self, part: Part, level_time: Duration) -> Sharded;

    /// How the shards' parts of the mode's levels merge back into one ([`merging`] by mode).
    fn merging() -> Merging
    where
        Self: Sized;

    /// Whether the level's requests are a trace's lines (their prompts and lengths), not its
    /// scenario's.
    fn replays_trace(&self) -> bool {
        merging(self.mode()).replays_trace
    }
}

/// Every mode's levels of suite scenario `scenario`, boxed: the registry of modes.
fn levels_of(mode: LoadMode, suite: &Suite, scenario: usize) -> Vec<Arc<dyn Load>> {
    fn boxed<L: Load + 'static>(levels: Vec<L>) -> Vec<Arc<dyn Load>> {
        levels
            .into_iter()
            .map(|l| Arc::new(l) as Arc<dyn Load>)
            .collect()
    }
    match mode {
        LoadMode::Peak => boxed(peak::Peak::plan(suite, scenario)),
        LoadMode::Burst => boxed(burst::Burst::plan(suite, scenario)),
        LoadMode::Rate => boxed(rate::Rate::plan(suite, scenario)),
        LoadMode::Users => boxed(users::Users::plan(suite, scenario)),
        LoadMode::Sessions => boxed(sessions::SessionArrivals::plan(suite, scenario)),
        LoadMode::Trace => boxed(trace::Replay::plan(suite, scenario)),
        LoadMode::Agents => boxed(agents::Agents::plan(suite, scenario)),
        LoadMode::JobRate => boxed(job_rate::JobArrivals::plan(suite, scenario)),
    }
}

/// How the shards' parts of a level of `mode` merge back into one: the mode's
/// [`Load::merging`].
pub fn merging(mode: LoadMode) -> Merging {
    match mode {
        LoadMode::Peak => peak::Peak::merging(),
        LoadMode::Burst => burst::Burst::merging(),
        LoadMode::Rate => rate::Rate::merging(),
        LoadMode::Users => users::Users::merging(),
        LoadMode::Sessions => sessions::SessionArrivals::merging(),
        LoadMode::Trace => trace::Replay::merging(),
        LoadMode::Agents => agents::Agents::merging(),
        LoadMode::JobRate => job_rate::JobArrivals::merging(),
    }
}

/// One level of a run's plan.
#[derive(Debug, Clone)]
pub struct PlannedLevel {
    /// Index of its scenario in the suite.
    pub scenario: usize,
    pub load: Arc<dyn Load>,
    /// Its place among the levels of its series (scenario, mode and cache use), from 0: a
    /// resumed run skips the levels its partial report completed.
    pub position: usize,
}

impl PlannedLevel {
    /// Written into records: see [`Load::record_label`].
    pub fn record_label(&self) -> u32 {
        self.load.record_label()
    }

    pub fn mode(&self) -> LoadMode {
        self.load.mode()
    }

    pub fn cache(&self) -> Option<CacheUse> {
        self.load.cache()
    }
}

/// Every level of `suite` for the `modes` asked (all when empty): scenario by scenario, in the
/// order of [`LoadMode::ALL`], each mode's levels in the suite's order.
pub fn plan(suite: &Suite, modes: &[LoadMode]) -> Vec<PlannedLevel> {
    let mut levels: Vec<PlannedLevel> = Vec::new();
    for scenario in 0..suite.scenarios.len() {
        for mode in LoadMode::ALL {
            if !modes.is_empty() && !modes.contains(&mode) {
                continue;
            }
            for load in levels_of(mode, suite, scenario) {
                let position = levels
                    .iter()
                    .filter(|l| {
                        l.scenario == scenario && l.mode() == mode && l.cache() == load.cache()
                    })
                    .count();
                levels.push(PlannedLevel {
                    scenario,
                    load,
                    position,
                });
            }
        }
    }
    levels
}

/// The level a search probes: `load` requests in flight (peak, each level as long as the
/// suite's `[peak]` says) or sent at once (burst).
pub fn probe(suite: &Suite, scenario: usize, mode: LoadMode, load: u32) -> PlannedLevel {
    let load: Arc<dyn Load> = match mode {
        LoadMode::Burst => Arc::new(burst::Burst::new(load)),
        _ => Arc::new(peak::Peak::new(
            &suite.peak.clone().unwrap_or_default(),
            load,
        )),
    };
    PlannedLevel {
        scenario,
        load,
        position: 0,
    }
}

/// Most requests any level of the plan has in flight, to size the connection pool.
pub fn max_in_flight(levels: &[PlannedLevel]) -> usize {
    levels
        .iter()
        .map(|l| l.load.max_in_flight())
        .max()
        .unwrap_or(1)
}

/// How progress lines and warnings name a level, e.g. "chatbot peak @4", "chat users @8
/// (caching defeated)" (`record_label`: the records' `concurrency`).
pub fn level_label(
    scenario: &str,
    mode: LoadMode,
    record_label: u32,
    cache: Option<CacheUse>,
) -> String {
    let cache = cache.map_or(String::new(), |c| format!(" ({})", c.label()));
    format!("{scenario} {} @{record_label}{cache}", mode.label())
}

/// Where records of a level go and what they are labelled with.
pub struct LevelContext<'a> {
    pub driver: &'a Driver,
    pub scenario: &'a str,
    /// Level label written into records ([`Load::record_label`]).
    pub concurrency: u32,
    pub trial: u32,
    /// The request of number `n`: a number is a request's, unique in the level (a sharded
    /// closed loop numbers its requests across the shards: [`LevelContext::prompt`]); a trace
    /// line's where the level replays the trace ([`Load::replays_trace`]), else the scenario's.
    pub prepare: &'a (dyn Fn(u64) -> Prepared + Sync),
    /// The conversation texts of the suite's session scenarios, which users and
    /// session-arrivals levels (each planned with its scenario) hold their sessions in.
    pub conversations: &'a SessionPlan,
    /// The words the prompt blocks of agentic jobs are written in (a run with `[agents]`).
    pub block_words: Option<&'a BlockWords>,
    /// The level's cache use, written into its records.
    pub cache: Option<CacheUse>,
    pub on_record: &'a (dyn Fn(&RequestRecord) + Sync),
    /// Flips to true on Ctrl-C / SIGTERM: stop sending.
    pub stop: watch::Receiver<bool>,
    /// How long in-flight requests may finish after a stop.
    pub grace: Duration,
    /// When the level starts: records and window count from it (a sharded run's step start).
    pub origin: Instant,
    /// In a sharded run, this shard: it sends only its part of the level, and stamps its
    /// records.
    pub part: Option<Part>,
}

impl LevelContext<'_> {
    /// The request a closed loop numbers `index` on this shard: its number among every
    /// shard's requests of the level (the shards' numbers interleave), so that no two shards
    /// send the same prompt.
    pub fn prompt(&self, index: u64) -> Prepared {
        let number = match self.part {
            Some(p) => index * u64::from(p.count) + u64::from(p.index),
            None => index,
        };
        (self.prepare)(number)
    }

    /// Whether item `key` of an open-loop level (an arrival, a user, a session) is this
    /// shard's to send: every item of an unsharded run is.
    pub fn owns(&self, key: u64) -> bool {
        self.part.is_none_or(|p| p.owns(key))
    }
}

/// The outcome of one level trial.
#[derive(Debug)]
pub struct LevelRun {
    pub records: Vec<RequestRecord>,
    pub window: Window,
    pub client: ClientHealth,
    /// Most requests in flight at once.
    pub max_in_flight: u32,
    pub interrupted: bool,
    /// Where the output token counts of successful requests came from.
    pub token_source: Option<TokenSource>,
    /// Which clock stamped the events of the requests that got a stream.
    pub clocks: ClockCounts,
}

/// Scheduling lag (p99) above this may have distorted the level.
const DISTORTION_THRESHOLD_S: f64 = 0.005;

/// Runs one trial of the level to completion (or until stopped), with the client's health
/// over it.
pub async fn run_level(ctx: &LevelContext<'_>, load: &dyn Load) -> LevelRun {
    let probe = probe::LoopProbe::start();
    let mut run = load.run(ctx).await;
    let loop_delays = probe.finish().await;
    let lags: Vec<f64> = run
        .records
        .iter()
        .map(|r| (r.sent_s - r.scheduled_s).max(0.0))
        .collect();
    let p99 = |v: &[f64]| {
        Distribution::from_samples(v)
            .and_then(|d| d.p99)
            .unwrap_or(0.0)
    };
    let scheduling_lag_p99_s = p99(&lags);
    let event_loop_delay_p99_s = p99(&loop_delays);
    run.client = ClientHealth {
        scheduling_lag_p99_s,
        event_loop_delay_p99_s,
        distorted: scheduling_lag_p99_s > DISTORTION_THRESHOLD_S,
        event_clock: run.clocks.summary().map(str::to_string),
        retried: run.records.iter().filter(|r| r.retried.is_some()).count() as u64,
    };
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_orders_scenarios_then_modes() {
        let suite = Suite::load("four-scenario").unwrap().quick();
        let levels = plan(&suite, &[LoadMode::Burst]);
        assert_eq!(levels.len(), 4 * 3);
        assert!(levels.iter().all(|l| l.mode() == LoadMode::Burst));
        let all = plan(&suite, &[]);
        assert_eq!(all.len(), 4 * 6);
        // Each series counts its own levels.
        let positions: Vec<usize> = all.iter().take(6).map(|l| l.position).collect();
        assert_eq!(positions, [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn open_loop_levels_are_numbered_and_keep_increasing() {
        let suite: Suite = Suite::parse(
            "name = \"r\"\n[[scenario]]\nid = \"s\"\nname = \"S\"\ninput_tokens = 8\n\
             output_tokens = 8\n[rate]\nrates = [1.0, 2.0]\nduration_s = 1.0\n",
            "test",
            std::path::Path::new("."),
        )
        .unwrap();
        let levels = plan(&suite, &[]);
        assert_eq!(levels[1].record_label(), 2);
        let applied = |max, previous| levels[1].load.applied(max, previous);
        assert_eq!(applied(5, Some(3)).request_rate, Some(2.0));
        assert_eq!(applied(5, Some(3)).concurrency, 5);
        assert_eq!(applied(2, Some(3)).concurrency, 4);
        assert_eq!(levels[0].load.applied(0, None).concurrency, 1);
        assert_eq!(levels[1].load.expected_requests(), None);
    }

    #[test]
    fn session_levels_are_planned_per_cache_use() {
        let suite = Suite::load("chat-sessions").unwrap().quick();
        let levels = plan(&suite, &[]);
        let described: Vec<(u32, Option<CacheUse>, usize)> = levels
            .iter()
            .map(|l| (l.record_label(), l.cache(), l.position))
            .collect();
        let allowed = Some(CacheUse::Allowed);
        let defeated = Some(CacheUse::Defeated);
        assert_eq!(
            described,
            [
                (1, allowed, 0),
                (8, allowed, 1),
                (64, allowed, 2),
                (1, defeated, 0),
                (8, defeated, 1),
                (64, defeated, 2)
            ]
        );
    }
}
