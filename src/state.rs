//! What the reader is looking at, kept in the URL query so a link reproduces the view.
//!
//! Query keys (only non-default values are written):
//! `report` (first report URL), `compare` (more report URLs, repeatable, overlaid), `stat`
//! (mean|p50|p90|p95|p99|p99.9|min|max), `uc.<use_case>.<ttft|decode|itl|e2e>` (threshold
//! overrides in stored units: seconds, tok/s), `queue_ttft` (seconds), `kwh` ($/kWh), `at`
//! (interpolation cursor concurrency), `theme` (light|dark), `chart` (embed one chart by id),
//! `slo.<ttft|tpot|e2e|job>` and `slo.target` (the page's SLO: a bound in seconds or `off`),
//! `timeline` (the level whose timeline the Users section shows, by its key),
//! `timeline_metric` (what that timeline plots: completed_per_s|output_tok_s|ttft|
//! cache_hit_ratio|errors), the What-if section's question (`wi.scenario`, `wi.mode`
//! peak|burst, `wi.load`, `wi.in`, `wi.out` tokens, `wi.gpu` and `wi.gpus`), and the "Which
//! configuration?" section's `choice.scenario` (a scenario id), `choice.y`
//! (throughput|cost|energy|per_kw), `choice.x` (interactivity|e2e), `choice.at` (target
//! interactivity, tok/s per user), `choice.users`, `choice.measured` (1: measured levels only) and `price.<GPU kind>` (dollars per GPU-hour,
//! e.g. `price.H100=2.5`).
//! Unknown keys and unreadable values are ignored so a mangled link still opens.
//!
//! Sections read everything through [`ReportContext`] (`use_context::<ReportContext>()`).

use std::collections::BTreeMap;
use std::sync::Arc;

use infermeter_report::analysis::capacity::LimitKind;
use infermeter_report::analysis::configuration::{Figure, DEFAULT_INTERACTIVITY, DEFAULT_USERS};
use infermeter_report::analysis::cost::DEFAULT_USD_PER_KWH;
use infermeter_report::analysis::timeline::TimelineMetric;
use infermeter_report::analysis::DEFAULT_TTFT_THRESHOLD_S;
use infermeter_report::analysis::{findings, Findings, FindingsOptions};
use infermeter_report::{Limits, LoadMode, Report, Slo, Stat};
use leptos::prelude::{Memo, RwSignal, Signal};

pub use crate::theme::Theme;
use infermeter_report::analysis::labels::report_labels;

/// The limits a use case's sliders can override (`uc.<use_case>.<key>`).
pub const USE_CASE_LIMITS: [LimitKind; 4] = [
    LimitKind::Ttft,
    LimitKind::Decode,
    LimitKind::Itl,
    LimitKind::E2e,
];

/// The bounds of the page's SLO a slider sets (`slo.<key>`): those each request is judged by,
/// and an agentic job's completion time (the Agents section's).
pub const SLO_BOUNDS: [LimitKind; 4] = [
    LimitKind::Ttft,
    LimitKind::Tpot,
    LimitKind::E2e,
    LimitKind::Job,
];

/// The kind of `set` named `key` in a URL.
fn kind_in(set: &[LimitKind], key: &str) -> Option<LimitKind> {
    set.iter().copied().find(|k| k.key() == key)
}

/// The goodput SLO as the reader moved it off the report's own: each bound set (`Some(None)`:
/// switched off) or left as the report has it (`None`), and the target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SloChoice {
    pub bounds: BTreeMap<LimitKind, Option<f64>>,
    pub target: Option<f64>,
}

impl SloChoice {
    /// `base` with the reader's changes.
    pub fn apply(&self, base: Slo) -> Slo {
        let mut slo = base;
        for (bound, value) in &self.bounds {
            *bound.slot(&mut slo.limits) = *value;
        }
        slo.target = self.target.unwrap_or(slo.target);
        slo
    }

    /// Sets one bound (`None`: off); back at `base`'s value it is no change at all.
    pub fn set_bound(&mut self, base: &Slo, bound: LimitKind, value: Option<f64>) {
        if bound.get(&base.limits) == value {
            self.bounds.remove(&bound);
        } else {
            self.bounds.insert(bound, value);
        }
    }

    /// Sets the target; back at `base`'s it is no change at all.
    pub fn set_target(&mut self, base: &Slo, target: f64) {
        self.target = (target != base.target).then_some(target);
    }
}

/// The What-if section's question as the reader changed it from its defaults (the fit's first
/// scenario, its deployment, the highest measured load): `None` keeps the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WhatIfChoice {
    pub scenario: Option<String>,
    pub mode: Option<LoadMode>,
    pub load: Option<u32>,
    pub input_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    pub gpu: Option<String>,
    pub gpus: Option<u32>,
}

impl WhatIfChoice {
    /// Reads one `wi.<key>` value; false for a key it does not know.
    fn read(&mut self, key: &str, value: &str) -> bool {
        let count = || value.parse::<u32>().ok().filter(|n| *n > 0);
        let text = || (!value.is_empty()).then(|| value.to_string());
        match key {
            "scenario" => self.scenario = text().or(self.scenario.take()),
            "mode" => {
                self.mode = match value {
                    "peak" => Some(LoadMode::Peak),
                    "burst" => Some(LoadMode::Burst),
                    _ => self.mode,
                }
            }
            "load" => self.load = count().or(self.load),
            "in" => self.input_tokens = count().or(self.input_tokens),
            "out" => self.output_tokens = count().or(self.output_tokens),
            "gpu" => self.gpu = text().or(self.gpu.take()),
            "gpus" => self.gpus = count().or(self.gpus),
            _ => return false,
        }
        true
    }

    fn write(&self, q: &mut form_urlencoded::Serializer<String>) {
        let mut pair = |key: &str, value: Option<String>| {
            if let Some(v) = value {
                q.append_pair(&format!("wi.{key}"), &v);
            }
        };
        pair("scenario", self.scenario.clone());
        pair("mode", self.mode.map(|m| m.label().to_string()));
        pair("load", self.load.map(|n| n.to_string()));
        pair("in", self.input_tokens.map(|n| n.to_string()));
        pair("out", self.output_tokens.map(|n| n.to_string()));
        pair("gpu", self.gpu.clone());
        pair("gpus", self.gpus.map(|n| n.to_string()));
    }
}

/// The "Which configuration?" section's controls.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceView {
    /// The scenario shown, by id; `None`: the main report's first.
    pub scenario: Option<String>,
    /// What the Pareto chart plots upwards (one of [`Figure::Y`]) and across ([`Figure::X`]).
    pub y: Figure,
    pub x: Figure,
    /// Target interactivity, tok/s per user.
    pub interactivity: f64,
    /// Users to serve.
    pub users: u32,
    /// Dollars per GPU-hour the reader set, by GPU kind.
    pub prices: BTreeMap<String, f64>,
    /// Rank on measured levels only (`choice.measured=1`).
    pub measured_only: bool,
}

impl Default for ChoiceView {
    fn default() -> Self {
        ChoiceView {
            scenario: None,
            y: Figure::ThroughputPerGpu,
            x: Figure::Interactivity,
            interactivity: DEFAULT_INTERACTIVITY,
            users: DEFAULT_USERS,
            prices: BTreeMap::new(),
            measured_only: false,
        }
    }
}

impl ChoiceView {
    /// Reads one `choice.*` or `price.*` pair; false when `key` is not one of them.
    fn read(&mut self, key: &str, value: &str) -> bool {
        if let Some(kind) = key.strip_prefix("price.").filter(|k| !k.is_empty()) {
            if let Some(price) = non_negative(value) {
                self.prices.insert(kind.to_string(), price);
            }
            return true;
        }
        let figure = |among: &[Figure]| Figure::parse(value).filter(|f| among.contains(f));
        match key {
            "choice.scenario" if !value.is_empty() => self.scenario = Some(value.to_string()),
            "choice.y" => self.y = figure(&Figure::Y).unwrap_or(self.y),
            "choice.x" => self.x = figure(&Figure::X).unwrap_or(self.x),
            "choice.at" => self.interactivity = positive(value).unwrap_or(self.interactivity),
            "choice.measured" => self.measured_only = value == "1",
            "choice.users" => {
                self.users = value
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .unwrap_or(self.users)
            }
            _ => return key.starts_with("choice."),
        }
        true
    }

    /// Appends the pairs that differ from the defaults.
    fn write(&self, q: &mut form_urlencoded::Serializer<String>) {
        let defaults = ChoiceView::default();
        if let Some(scenario) = &self.scenario {
            q.append_pair("choice.scenario", scenario);
        }
        if self.y != defaults.y {
            q.append_pair("choice.y", self.y.key());
        }
        if self.x != defaults.x {
            q.append_pair("choice.x", self.x.key());
        }
        if self.interactivity != defaults.interactivity {
            q.append_pair("choice.at", &number(self.interactivity));
        }
        if self.users != defaults.users {
            q.append_pair("choice.users", &self.users.to_string());
        }
        if self.measured_only {
            q.append_pair("choice.measured", "1");
        }
        for (kind, price) in &self.prices {
            q.append_pair(&format!("price.{kind}"), &number(*price));
        }
    }
}

/// Which reports the Technical deep dive draws in a comparison: one at a time (its lines per
/// concurrency level of several reports together are a tangle), or all of them together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeepDivePick {
    /// The main report.
    #[default]
    Main,
    /// The compared report at this position (1 the first; past the last: the main one).
    Report(usize),
    All,
}

impl DeepDivePick {
    /// Whether the report at `index` of `count` shown together is drawn.
    pub fn shows(self, index: usize, count: usize) -> bool {
        self == DeepDivePick::All || self.normalized(count) == DeepDivePick::of(index)
    }

    /// The pick of the report at `index`.
    pub fn of(index: usize) -> DeepDivePick {
        match index {
            0 => DeepDivePick::Main,
            i => DeepDivePick::Report(i),
        }
    }

    /// The same pick with a report past the last one (an old address) read as the main one.
    pub fn normalized(self, count: usize) -> DeepDivePick {
        match self {
            DeepDivePick::Report(i) if i >= count => DeepDivePick::Main,
            pick => pick,
        }
    }

    /// `deep=` of the address: `all` or a report's position.
    fn parse(value: &str) -> Option<DeepDivePick> {
        match value {
            "all" => Some(DeepDivePick::All),
            v => v.parse().ok().map(DeepDivePick::of),
        }
    }

    fn key(self) -> String {
        match self {
            DeepDivePick::Main => "0".into(),
            DeepDivePick::Report(i) => i.to_string(),
            DeepDivePick::All => "all".into(),
        }
    }
}

/// What part of the view a chart depends on beyond the common settings, so a control redraws
/// only what reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Statistic, cursor, theme...: neither use-case limits nor the goodput SLO.
    Common,
    /// The common settings and one use case's limits.
    UseCase(&'a str),
    /// The common settings and the goodput SLO.
    Goodput,
    /// The common settings, the goodput SLO and the What-if question.
    WhatIf,
    /// The common settings and the "Which configuration?" controls.
    Choice,
    /// The common settings and which reports the Technical deep dive draws.
    DeepDive,
}

/// The whole view: which reports, which statistic, which limits, which theme.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewState {
    /// Report URLs; the first is the main report, the rest are overlaid for comparison.
    pub reports: Vec<String>,
    pub stat: Stat,
    /// Use-case id -> limits the reader changed (a `None` field keeps the preset).
    pub threshold_overrides: BTreeMap<String, Limits>,
    /// TTFT limit for the burst queue-depth line, seconds.
    pub queue_ttft_s: f64,
    pub usd_per_kwh: f64,
    /// Concurrency the interpolation cursor sits at.
    pub at: Option<u32>,
    pub theme: Theme,
    /// Chart id shown alone (embed view).
    pub chart: Option<String>,
    /// The goodput SLO's changes from the main report's.
    pub slo: SloChoice,
    /// The level whose timeline is shown (`TimelineLevel::key`); `None`: the report's default.
    pub timeline: Option<String>,
    /// What the timeline plots.
    pub timeline_metric: TimelineMetric,
    /// The What-if section's question.
    pub what_if: WhatIfChoice,
    /// The "Which configuration?" section's controls.
    pub choice: ChoiceView,
    /// Which reports the Technical deep dive draws.
    pub deep_dive: DeepDivePick,
}

/// The timeline's metric before the reader picks one: TTFT shows warm-up and a filling cache.
pub const DEFAULT_TIMELINE_METRIC: TimelineMetric = TimelineMetric::Ttft;

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            reports: Vec::new(),
            stat: Stat::Mean,
            threshold_overrides: BTreeMap::new(),
            queue_ttft_s: DEFAULT_TTFT_THRESHOLD_S,
            usd_per_kwh: DEFAULT_USD_PER_KWH,
            at: None,
            theme: Theme::Light,
            chart: None,
            slo: SloChoice::default(),
            timeline: None,
            timeline_metric: DEFAULT_TIMELINE_METRIC,
            what_if: WhatIfChoice::default(),
            choice: ChoiceView::default(),
            deep_dive: DeepDivePick::default(),
        }
    }
}

impl ViewState {
    /// Reads a query string, with or without the leading `?`.
    pub fn from_query(query: &str) -> ViewState {
        let mut state = ViewState::default();
        let query = query.strip_prefix('?').unwrap_or(query);
        let mut main_report = None;
        let mut compared = Vec::new();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let value = value.trim();
            match key.as_ref() {
                "report" if !value.is_empty() => main_report = Some(value.to_string()),
                "compare" if !value.is_empty() => compared.push(value.to_string()),
                "stat" => state.stat = Stat::parse(value).unwrap_or(state.stat),
                "queue_ttft" => state.queue_ttft_s = positive(value).unwrap_or(state.queue_ttft_s),
                "kwh" => state.usd_per_kwh = non_negative(value).unwrap_or(state.usd_per_kwh),
                "at" => state.at = value.parse::<u32>().ok().filter(|n| *n > 0),
                "theme" => state.theme = Theme::parse(value).unwrap_or(state.theme),
                "chart" if !value.is_empty() => state.chart = Some(value.to_string()),
                "slo.target" => {
                    state.slo.target = positive(value).filter(|v| *v <= 1.0).or(state.slo.target)
                }
                "timeline" if !value.is_empty() => state.timeline = Some(value.to_string()),
                "deep" => state.deep_dive = DeepDivePick::parse(value).unwrap_or_default(),
                "timeline_metric" => {
                    if let Some(m) = TimelineMetric::ALL.into_iter().find(|m| m.key() == value) {
                        state.timeline_metric = m;
                    }
                }
                key if key
                    .strip_prefix("wi.")
                    .is_some_and(|k| state.what_if.read(k, value)) => {}
                key if state.choice.read(key, value) => {}
                key => {
                    if let Some((use_case, kind)) = threshold_key(key) {
                        if let Some(v) = non_negative(value) {
                            state.set_override(use_case, kind, Some(v));
                        }
                    } else if let Some(bound) = key
                        .strip_prefix("slo.")
                        .and_then(|k| kind_in(&SLO_BOUNDS, k))
                    {
                        let limit = match value {
                            "off" => Some(None),
                            v => positive(v).map(Some),
                        };
                        if let Some(limit) = limit {
                            state.slo.bounds.insert(bound, limit);
                        }
                    }
                }
            }
        }
        state.reports = main_report.into_iter().chain(compared).collect();
        state
    }

    /// Writes the query string (without `?`); default values are left out.
    pub fn to_query(&self) -> String {
        let defaults = ViewState::default();
        let mut q = form_urlencoded::Serializer::new(String::new());
        let mut reports = self.reports.iter();
        if let Some(main) = reports.next() {
            q.append_pair("report", main);
        }
        for other in reports {
            q.append_pair("compare", other);
        }
        if self.stat != defaults.stat {
            q.append_pair("stat", self.stat.label());
        }
        for (use_case, t) in &self.threshold_overrides {
            for kind in USE_CASE_LIMITS {
                if let Some(v) = kind.get(t) {
                    q.append_pair(&format!("uc.{use_case}.{}", kind.key()), &number(v));
                }
            }
        }
        if self.queue_ttft_s != defaults.queue_ttft_s {
            q.append_pair("queue_ttft", &number(self.queue_ttft_s));
        }
        if self.usd_per_kwh != defaults.usd_per_kwh {
            q.append_pair("kwh", &number(self.usd_per_kwh));
        }
        if let Some(at) = self.at {
            q.append_pair("at", &at.to_string());
        }
        if self.theme != defaults.theme {
            q.append_pair("theme", self.theme.key());
        }
        if let Some(chart) = &self.chart {
            q.append_pair("chart", chart);
        }
        for (bound, value) in &self.slo.bounds {
            let value = value.map_or_else(|| "off".to_string(), number);
            q.append_pair(&format!("slo.{}", bound.key()), &value);
        }
        if let Some(target) = self.slo.target {
            q.append_pair("slo.target", &number(target));
        }
        if let Some(level) = &self.timeline {
            q.append_pair("timeline", level);
        }
        if self.timeline_metric != defaults.timeline_metric {
            q.append_pair("timeline_metric", self.timeline_metric.key());
        }
        self.what_if.write(&mut q);
        self.choice.write(&mut q);
        if self.deep_dive != defaults.deep_dive {
            q.append_pair("deep", &self.deep_dive.key());
        }
        q.finish()
    }

    /// The view as seen by what depends on `scope`: the same view without the use-case limits
    /// and the goodput SLO it does not read. Memoised per chart, a slider then re-renders only
    /// what reads it.
    pub fn scoped(&self, scope: Scope) -> ViewState {
        let use_case = match scope {
            Scope::UseCase(id) => Some(id),
            _ => None,
        };
        ViewState {
            threshold_overrides: infermeter_report::order::btree_map(
                self.threshold_overrides
                    .iter()
                    .filter(|(id, _)| Some(id.as_str()) == use_case)
                    .map(|(id, t)| (id.clone(), *t)),
            ),
            slo: match scope {
                Scope::Goodput | Scope::WhatIf => self.slo.clone(),
                _ => SloChoice::default(),
            },
            what_if: match scope {
                Scope::WhatIf => self.what_if.clone(),
                _ => WhatIfChoice::default(),
            },
            choice: match scope {
                Scope::Choice => self.choice.clone(),
                _ => ChoiceView::default(),
            },
            deep_dive: match scope {
                Scope::DeepDive => self.deep_dive,
                _ => DeepDivePick::default(),
            },
            ..self.clone()
        }
    }

    /// The goodput SLO: the main report's (`base`) with the reader's changes.
    pub fn slo(&self, base: Slo) -> Slo {
        self.slo.apply(base)
    }

    /// What the report's findings depend on: the statistic, the queue's TTFT limit, the price.
    /// Not the goodput SLO: the goodput section computes goodput itself, so its sliders
    /// recompute nothing else.
    pub fn findings_options(&self) -> FindingsOptions {
        FindingsOptions {
            stat: self.stat,
            queue_ttft_s: self.queue_ttft_s,
            usd_per_kwh: self.usd_per_kwh,
            slo: None,
        }
    }

    /// The limits of `use_case`: its preset with the reader's overrides applied.
    pub fn thresholds(&self, use_case: &str, preset: Limits) -> Limits {
        let Some(o) = self.threshold_overrides.get(use_case) else {
            return preset;
        };
        Limits {
            max_ttft_s: o.max_ttft_s.or(preset.max_ttft_s),
            min_decode_tok_s: o.min_decode_tok_s.or(preset.min_decode_tok_s),
            max_itl_s: o.max_itl_s.or(preset.max_itl_s),
            max_e2e_s: o.max_e2e_s.or(preset.max_e2e_s),
            ..preset
        }
    }

    /// Sets one limit of `use_case` (a slider moved). A value equal to the preset's removes the
    /// override, so the URL only carries what the reader changed.
    pub fn set_threshold(&mut self, use_case: &str, preset: Limits, kind: LimitKind, value: f64) {
        let is_preset = kind.get(&preset) == Some(value);
        self.set_override(use_case, kind, (!is_preset).then_some(value));
    }

    fn set_override(&mut self, use_case: &str, kind: LimitKind, value: Option<f64>) {
        let entry = self
            .threshold_overrides
            .entry(use_case.to_string())
            .or_default();
        *kind.slot(entry) = value;
        if entry.is_empty() {
            self.threshold_overrides.remove(use_case);
        }
    }
}

/// `uc.<use_case>.<kind>` -> (use_case, kind).
fn threshold_key(key: &str) -> Option<(&str, LimitKind)> {
    let rest = key.strip_prefix("uc.")?;
    let (use_case, kind) = rest.rsplit_once('.')?;
    (!use_case.is_empty()).then_some(())?;
    Some((use_case, kind_in(&USE_CASE_LIMITS, kind)?))
}

fn non_negative(s: &str) -> Option<f64> {
    crate::number::parse_f64(s).filter(|v| v.is_finite() && *v >= 0.0)
}

fn positive(s: &str) -> Option<f64> {
    non_negative(s).filter(|v| *v > 0.0)
}

/// Shortest decimal that reads back to the same f64 ("8", "0.1").
fn number(v: f64) -> String {
    format!("{v}")
}

/// What every section reads from context: the loaded reports (main first, then compared ones,
/// in `ViewState::reports` order), their labels and findings, and the view state. Sections write
/// the view (sliders, selectors) through `view.update(..)`; the app mirrors it into the URL.
#[derive(Debug, Clone, Copy)]
pub struct ReportContext {
    pub reports: Signal<Vec<Arc<Report>>>,
    /// Each report's label when several are shown together (`charts::report_labels`).
    pub labels: Signal<Vec<String>>,
    pub view: RwSignal<ViewState>,
    /// `view.scoped(Scope::Common)`: what depends neither on use-case limits nor on the goodput
    /// SLO reads this, so their sliders do not re-render it.
    pub common: Memo<ViewState>,
    /// Every figure of each report under the view's statistic, queue limit and price: what the
    /// cards, tables and sentences word. Recomputed only when one of those changes.
    pub findings: Memo<Vec<Findings>>,
    /// Compared reports still being read (the main report's page is drawn first); 0 once every
    /// report is here.
    pub pending: usize,
}

impl ReportContext {
    pub fn new(
        reports: Vec<Arc<Report>>,
        view: RwSignal<ViewState>,
        pending: usize,
    ) -> ReportContext {
        use leptos::prelude::With;
        let labels = Signal::stored(report_labels(&reports));
        let reports = Signal::stored(reports);
        let options = Memo::new(move |_| view.with(ViewState::findings_options));
        ReportContext {
            reports,
            labels,
            view,
            common: Memo::new(move |_| view.with(|v| v.scoped(Scope::Common))),
            findings: Memo::new(move |_| {
                reports.with(|r| options.with(|o| r.iter().map(|r| findings(r, o)).collect()))
            }),
            pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_state_writes_an_empty_query() {
        assert_eq!(ViewState::default().to_query(), "");
        assert_eq!(ViewState::from_query(""), ViewState::default());
        assert_eq!(ViewState::from_query("?"), ViewState::default());
    }

    #[test]
    fn every_field_round_trips_through_the_url() {
        let mut state = ViewState {
            reports: vec![
                "data/reports/a b.json".into(),
                "https://example.org/r.json?x=1&y=2".into(),
                "c.json".into(),
            ],
            stat: Stat::P99,
            queue_ttft_s: 5.5,
            usd_per_kwh: 0.25,
            at: Some(12),
            theme: Theme::Dark,
            chart: Some("throughput-system".into()),
            timeline: Some("chat.users.allowed.16".into()),
            timeline_metric: TimelineMetric::CacheHitRatio,
            what_if: WhatIfChoice {
                scenario: Some("ctx 4k".into()),
                mode: Some(LoadMode::Burst),
                load: Some(64),
                input_tokens: Some(8192),
                output_tokens: Some(512),
                gpu: Some("h200".into()),
                gpus: Some(2),
            },
            choice: ChoiceView {
                scenario: Some("rag qa".into()),
                y: Figure::UsdPerMillion,
                x: Figure::E2e,
                interactivity: 35.5,
                users: 500,
                prices: [("H100".to_string(), 2.5), ("RTX Pro 6000".to_string(), 1.9)]
                    .into_iter()
                    .collect(),
                measured_only: true,
            },
            deep_dive: DeepDivePick::Report(2),
            ..ViewState::default()
        };
        let preset = Limits {
            max_ttft_s: Some(8.0),
            min_decode_tok_s: Some(10.0),
            ..Limits::default()
        };
        state.set_threshold("general_chatbot", preset, LimitKind::Ttft, 4.0);
        state.set_threshold("general_chatbot", preset, LimitKind::Itl, 0.05);
        let query = state.to_query();
        assert_eq!(ViewState::from_query(&query), state);
        assert_eq!(ViewState::from_query(&format!("?{query}")), state);
        assert!(query.contains("uc.general_chatbot.ttft=4"), "{query}");
        assert!(query.contains("stat=p99&"), "{query}");
        assert!(
            query.contains(
                "choice.y=cost&choice.x=e2e&choice.at=35.5&choice.users=500&choice.measured=1&price.H100=2.5"
            ),
            "{query}"
        );
    }

    /// The deep dive draws the main report until another is picked; a pick past the last
    /// report (an old address) draws the main one; the pick is no other chart's concern.
    #[test]
    fn the_deep_dive_shows_one_report_or_all() {
        assert_eq!(ViewState::from_query("deep=0"), ViewState::default());
        assert_eq!(ViewState::from_query("deep=x"), ViewState::default());
        let main = DeepDivePick::default();
        assert!(main.shows(0, 4) && !main.shows(1, 4));
        let third = ViewState::from_query("deep=2&stat=p90");
        assert_eq!(third.deep_dive, DeepDivePick::Report(2));
        assert_eq!(
            (0..4)
                .map(|i| third.deep_dive.shows(i, 4))
                .collect::<Vec<_>>(),
            [false, false, true, false]
        );
        assert!(third.deep_dive.shows(0, 2) && !third.deep_dive.shows(1, 2));
        let all = ViewState::from_query("deep=all").deep_dive;
        assert!((0..4).all(|i| all.shows(i, 4)));
        assert_eq!(third.scoped(Scope::Common).to_query(), "stat=p90");
        assert_eq!(third.scoped(Scope::DeepDive).to_query(), "stat=p90&deep=2");
    }

    /// The section's controls leave the address at their defaults, refuse what they cannot
    /// show (a y figure as x, a price below zero), and stay out of the other sections' view.
    #[test]
    fn the_choice_controls_round_trip_and_scope() {
        let s = ViewState::from_query(
            "choice.y=e2e&choice.x=cost&price.H100=-2&choice.users=0&choice.at=0&choice.nope=1",
        );
        assert_eq!(s, ViewState::default());
        let s = ViewState::from_query("choice.y=energy&price.B200=6&stat=p90");
        assert_eq!(s.choice.y, Figure::JoulesPerToken);
        assert_eq!(s.scoped(Scope::Common).to_query(), "stat=p90");
        assert_eq!(
            s.scoped(Scope::Choice).to_query(),
            "stat=p90&choice.y=energy&price.B200=6"
        );
    }

    #[test]
    fn a_scoped_view_keeps_only_its_use_case_limits() {
        let s = ViewState::from_query("uc.a.ttft=2&uc.b.ttft=3&stat=p99&slo.ttft=4");
        assert_eq!(
            s.scoped(Scope::UseCase("a")).to_query(),
            "stat=p99&uc.a.ttft=2"
        );
        assert_eq!(s.scoped(Scope::Common).to_query(), "stat=p99");
        assert_eq!(s.scoped(Scope::Goodput).to_query(), "stat=p99&slo.ttft=4");
        let s = ViewState::from_query("wi.load=64&wi.mode=burst&slo.ttft=4");
        assert_eq!(s.scoped(Scope::Common).to_query(), "");
        assert_eq!(
            s.scoped(Scope::WhatIf).to_query(),
            "slo.ttft=4&wi.mode=burst&wi.load=64"
        );
    }

    /// The SLO's bounds and target round-trip; a bound switched off reads "off"; moved back
    /// to the report's own, nothing is written.
    #[test]
    fn the_goodput_slo_round_trips_through_the_url() {
        let base = Slo {
            limits: Limits {
                max_ttft_s: Some(5.0),
                max_tpot_s: Some(0.05),
                ..Limits::default()
            },
            ..Slo::default()
        };
        let mut state = ViewState::default();
        state.slo.set_bound(&base, LimitKind::Ttft, Some(2.5));
        state.slo.set_bound(&base, LimitKind::Tpot, None);
        state.slo.set_bound(&base, LimitKind::E2e, Some(30.0));
        state.slo.set_bound(&base, LimitKind::Job, Some(300.0));
        state.slo.set_target(&base, 0.99);
        let query = state.to_query();
        assert_eq!(
            query,
            "slo.ttft=2.5&slo.tpot=off&slo.e2e=30&slo.job=300&slo.target=0.99"
        );
        let read = ViewState::from_query(&query);
        assert_eq!(read, state);
        let slo = read.slo(base);
        assert_eq!(
            (
                slo.limits.max_ttft_s,
                slo.limits.max_tpot_s,
                slo.limits.max_e2e_s,
                slo.limits.max_job_s,
                slo.target
            ),
            (Some(2.5), None, Some(30.0), Some(300.0), 0.99)
        );
        let mut back = read;
        back.slo.set_bound(&base, LimitKind::Ttft, Some(5.0));
        back.slo.set_bound(&base, LimitKind::Tpot, Some(0.05));
        back.slo.set_bound(&base, LimitKind::E2e, None);
        back.slo.set_bound(&base, LimitKind::Job, None);
        back.slo.set_target(&base, base.target);
        assert_eq!(back.to_query(), "");
        // Unreadable values are ignored.
        assert_eq!(
            ViewState::from_query("slo.ttft=-1&slo.target=2&slo.itl=3&slo.e2e=soon"),
            ViewState::default()
        );
    }

    #[test]
    fn report_order_is_main_then_compared() {
        let s = ViewState::from_query("compare=b.json&report=a.json&compare=c.json");
        assert_eq!(s.reports, ["a.json", "b.json", "c.json"]);
        assert_eq!(s.to_query(), "report=a.json&compare=b.json&compare=c.json");
    }

    #[test]
    fn a_threshold_set_back_to_its_preset_leaves_the_url() {
        let preset = Limits {
            max_ttft_s: Some(8.0),
            ..Limits::default()
        };
        let mut state = ViewState::default();
        state.set_threshold("code_completion", preset, LimitKind::Ttft, 2.0);
        assert_eq!(state.to_query(), "uc.code_completion.ttft=2");
        assert_eq!(
            state.thresholds("code_completion", preset).max_ttft_s,
            Some(2.0)
        );
        state.set_threshold("code_completion", preset, LimitKind::Ttft, 8.0);
        assert_eq!(state.to_query(), "");
        assert_eq!(state.thresholds("code_completion", preset), preset);
    }

    #[test]
    fn overrides_keep_the_preset_limits_they_do_not_name() {
        let preset = Limits {
            max_ttft_s: Some(8.0),
            min_decode_tok_s: Some(10.0),
            ..Limits::default()
        };
        let state = ViewState::from_query("uc.long_doc.decode=20");
        let t = state.thresholds("long_doc", preset);
        assert_eq!(t.max_ttft_s, Some(8.0));
        assert_eq!(t.min_decode_tok_s, Some(20.0));
        assert_eq!(state.thresholds("other", preset), preset);
    }

    #[test]
    fn unreadable_values_fall_back_to_defaults() {
        let s = ViewState::from_query(
            "stat=p42&kwh=-1&queue_ttft=NaN&at=0&theme=neon&uc.x.ttft=inf&uc..ttft=3&uc.y.speed=1&chart=&report=&timeline=&timeline_metric=speed&wi.load=0&wi.mode=rate&wi.gpus=x&wi.gpu=&wi.in=-3",
        );
        assert_eq!(s, ViewState::default());
        let s = ViewState::from_query("queue_ttft=0&kwh=0");
        assert_eq!(s.queue_ttft_s, DEFAULT_TTFT_THRESHOLD_S);
        assert_eq!(s.usd_per_kwh, 0.0);
    }

    #[test]
    fn percent_encoded_values_are_decoded() {
        let s = ViewState::from_query("report=reports%2Fmy%20run.json&stat=p99.9");
        assert_eq!(s.reports, ["reports/my run.json"]);
        assert_eq!(s.stat, Stat::P999);
    }
}
