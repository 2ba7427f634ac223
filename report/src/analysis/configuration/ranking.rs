//! "Cheapest meeting the SLO": for each compared report, the highest load whose requests meet
//! the goodput SLO at its target share ([`max_load_under`]), what one replica then delivers
//! per GPU and per dollar, and what serving N users takes (replicas = ⌈N / users per
//! replica⌉), ranked cheapest first. Each figure says its basis: a measured level, read between
//! two, or a bound where every tested level passed. What the data supports beside the ranking
//! ([`verdict`]): a configuration whose every tested level meets the SLO has a lower bound, not
//! a capacity: it is listed apart with what to measure, and compared with the ranked ones only
//! where its bound already decides ("serves at least 32 per replica for at most $X, already less
//! than H100's measured $Y").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::operating::{AtTarget, Figure, OperatingPoint, SeriesPoints};
use crate::analysis::cost::{cost_per_hour_from_gpu_hours, cost_per_million_tokens};
use crate::analysis::format::format_number;
use crate::analysis::goodput::{max_load_under, slo_spec, MaxLoad};
use crate::analysis::interpolate::MonotoneCurve;
use crate::schema::{LoadMode, Report, Slo};

/// How a figure at the SLO's load was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// At a measured level.
    Measured,
    /// Read on the monotone curves between two measured levels.
    Interpolated,
    /// Every tested level met the SLO: the figures are the highest level's, and more load may
    /// fit (so users per replica is at least, and replicas at most, what is stated).
    Bound,
}

/// One replica at the highest load meeting the SLO.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AtSlo {
    pub load: f64,
    pub basis: Basis,
    pub throughput_per_gpu: f64,
    /// GPU rental only; `None` without a price.
    pub usd_per_million: Option<f64>,
    /// GPU power only; `None` where power was not measured.
    pub joules_per_token: Option<f64>,
}

/// What serving `users` takes at the SLO's load per replica.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Replicas {
    pub users: u32,
    pub users_per_replica: u32,
    /// ⌈users / users_per_replica⌉.
    pub replicas: u32,
    pub gpus: u32,
    /// GPU rental for all of them; `None` without a price.
    pub usd_per_hour: Option<f64>,
    /// True when users per replica is a lower bound (every tested level passed): replicas,
    /// GPUs and cost are then at most these.
    pub at_most: bool,
}

/// Whether a row can be ranked: only a limit measured (or read between two measured levels)
/// is a capacity; a load every tested level passed is a lower bound, and ranking bounds against
/// limits (or each other) ranks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Its limit under the SLO was found: ranked.
    Ranked,
    /// Every tested level meets the SLO: no limit found, listed apart with what to measure.
    NoLimitFound,
    /// Even the lowest tested level misses the SLO.
    MissesAtLowest,
    /// No per-request figures to judge the SLO by.
    NotJudged,
}

impl Standing {
    fn of(max_load: Option<MaxLoad>) -> Standing {
        match max_load {
            None => Standing::NotJudged,
            Some(MaxLoad::AllPass { .. }) => Standing::NoLimitFound,
            Some(MaxLoad::NonePass { .. }) => Standing::MissesAtLowest,
            Some(MaxLoad::Between { .. }) => Standing::Ranked,
        }
    }
}

/// One compared report in a scenario's ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ranked {
    pub report: usize,
    pub label: String,
    pub gpu_kind: String,
    pub gpus_per_replica: u32,
    pub usd_per_gpu_hour: Option<f64>,
    /// The mode its load counts (concurrent users, users, req/s, queued requests).
    pub mode: LoadMode,
    /// `None` when the series has no per-request figures to judge the SLO by.
    pub max_load: Option<MaxLoad>,
    /// `None` when no tested level meets the SLO (or it cannot be judged).
    pub at_slo: Option<AtSlo>,
    /// `None` when the mode's load does not count users (rate, burst) or the SLO is not met.
    pub replicas: Option<Replicas>,
    /// Throughput per GPU and cost at the target interactivity.
    pub throughput_at_target: Option<AtTarget>,
    pub cost_at_target: Option<AtTarget>,
    /// Whether the row is ranked, and why not.
    pub standing: Standing,
    /// 1 is the cheapest; `None` unless its limit under the SLO was found ([`Standing`]).
    pub rank: Option<u32>,
    /// What to measure to place it: for a configuration whose every tested level passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_further: Option<String>,
}

/// The compared reports of one scenario: those measured to their limit, cheapest first, then
/// those listed apart (no limit found, then those that miss the SLO or cannot be judged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioRanking {
    pub scenario: String,
    pub scenario_name: String,
    pub mode: LoadMode,
    pub rows: Vec<Ranked>,
    /// What the data supports beside the ranking: that no ranking is possible yet, or what a
    /// configuration without a limit already beats.
    pub verdict: Vec<String>,
}

impl ScenarioRanking {
    /// The rows measured to their limit, cheapest first.
    pub fn ranked(&self) -> Vec<&Ranked> {
        self.rows.iter().filter(|r| r.rank.is_some()).collect()
    }

    /// The rows listed apart: no limit found, then those that miss the SLO or cannot be judged.
    pub fn apart(&self) -> Vec<&Ranked> {
        self.rows.iter().filter(|r| r.rank.is_none()).collect()
    }
}

/// The heading of the rows listed apart from the ranking, as the page and the summary write it.
pub const APART: &str = "Not ranked: no limit found under the SLO, or none met";

/// What a ranking is computed under, beside the reports.
#[derive(Debug, Clone, Copy)]
pub struct RankingInputs<'a> {
    pub reports: &'a [&'a Report],
    pub labels: &'a [String],
    /// Every compared series (`operating::series_points`).
    pub series: &'a [SeriesPoints],
    /// Dollars per GPU-hour of each report.
    pub prices: &'a [Option<f64>],
    pub slo: &'a Slo,
    pub users: u32,
    pub interactivity: f64,
    /// Limits at measured levels only ([`MaxLoad::measured_only`]).
    pub measured_only: bool,
}

impl RankingInputs<'_> {
    /// The ranking of `scenario`: one row per report that measured it.
    pub fn rank(&self, scenario: &str) -> ScenarioRanking {
        let mut rows: Vec<Ranked> = Vec::new();
        let mut name = String::new();
        let mut mode = LoadMode::Peak;
        for s in self.series.iter().filter(|s| s.scenario == scenario) {
            name.clone_from(&s.scenario_name);
            mode = s.mode;
            rows.push(self.row(s));
        }
        crate::order::sort_by(&mut rows, |a, b| {
            let (ka, kb) = (order(a), order(b));
            ka.0.cmp(&kb.0)
                .then(ka.1.total_cmp(&kb.1))
                .then(ka.2.total_cmp(&kb.2))
                .then(a.report.cmp(&b.report))
        });
        let mut next = 1;
        for row in &mut rows {
            if row.standing == Standing::Ranked && row.at_slo.is_some() {
                row.rank = Some(next);
                next += 1;
            }
        }
        let verdict = verdict(&rows, mode);
        ScenarioRanking {
            scenario: scenario.to_string(),
            scenario_name: name,
            mode,
            rows,
            verdict,
        }
    }

    fn row(&self, s: &SeriesPoints) -> Ranked {
        let report = self.reports[s.report];
        let price = self.prices.get(s.report).copied().flatten();
        let max_load = report
            .series
            .iter()
            .find(|r| r.scenario == s.scenario && r.mode == s.mode && r.cache == s.cache)
            .and_then(|series| max_load_under(series, self.slo))
            .map(|m| {
                if self.measured_only {
                    m.measured_only()
                } else {
                    m
                }
            });
        let at_slo = max_load.and_then(|m| at_slo(&s.points, &m, s.gpus, price));
        let counts_users = matches!(s.mode, LoadMode::Peak | LoadMode::Users);
        let replicas = at_slo
            .filter(|_| counts_users)
            .map(|a| replicas(&a, self.users, s.gpus, price));
        let measure_further = match max_load {
            Some(MaxLoad::AllPass { highest }) => Some(measure_further(s.mode, highest, self.slo)),
            _ => None,
        };
        Ranked {
            report: s.report,
            label: row_label(self.labels.get(s.report).map_or("", String::as_str), s),
            gpu_kind: crate::analysis::cost::gpu_kind(&report.metadata.hardware.gpu_model),
            gpus_per_replica: s.gpus,
            mode: s.mode,
            usd_per_gpu_hour: price,
            max_load,
            at_slo,
            replicas,
            throughput_at_target: AtTarget::read(
                &s.points,
                self.interactivity,
                Figure::ThroughputPerGpu,
            ),
            cost_at_target: AtTarget::read(&s.points, self.interactivity, Figure::UsdPerMillion),
            standing: Standing::of(max_load),
            rank: None,
            measure_further,
        }
    }
}

/// A row's configuration: the report's label, with the cache use of a session series (a
/// report may rank a scenario's series once for each): "H100 (caching defeated)".
fn row_label(label: &str, s: &SeriesPoints) -> String {
    match s.cache {
        Some(cache) => format!("{label} ({})", cache.label()),
        None => label.to_string(),
    }
}

/// Rows in tiers: by the cost of N users, then by the cost of a million tokens (no users to
/// count), then unpriced by throughput per GPU; rows without a limit after them (no limit found
/// first, in the same order among themselves), then those that fail or cannot be judged.
fn order(row: &Ranked) -> (u8, f64, f64) {
    let per_million = row.at_slo.and_then(|a| a.usd_per_million);
    let apart = match row.standing {
        Standing::Ranked => 0,
        Standing::NoLimitFound => 3,
        Standing::MissesAtLowest | Standing::NotJudged => return (6, 0.0, 0.0),
    };
    match (
        row.at_slo,
        row.replicas.and_then(|r| r.usd_per_hour),
        per_million,
    ) {
        (None, _, _) => (6, 0.0, 0.0),
        (Some(_), Some(per_hour), m) => (apart, per_hour, m.unwrap_or(f64::INFINITY)),
        (Some(_), None, Some(m)) => (apart + 1, m, 0.0),
        (Some(a), None, None) => (apart + 2, -a.throughput_per_gpu, 0.0),
    }
}

/// The figures of one replica at `max_load`; `None` when no tested level meets the SLO.
fn at_slo(
    points: &[OperatingPoint],
    max_load: &MaxLoad,
    gpus: u32,
    price: Option<f64>,
) -> Option<AtSlo> {
    let (load, basis) = match *max_load {
        MaxLoad::NonePass { .. } => return None,
        MaxLoad::AllPass { highest } => (highest, Basis::Bound),
        MaxLoad::Between { load, passing, .. } if load > passing => (load, Basis::Interpolated),
        MaxLoad::Between { passing, .. } => (passing, Basis::Measured),
    };
    let along = |figure: fn(&OperatingPoint) -> Option<f64>| {
        let xy: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| Some((p.load, figure(p)?)))
            .collect();
        MonotoneCurve::new(&xy)?.at(load).map(|e| e.value)
    };
    let throughput_per_gpu = along(|p| Some(p.throughput_per_gpu))?;
    let tok_s = throughput_per_gpu * f64::from(gpus);
    Some(AtSlo {
        load,
        basis,
        throughput_per_gpu,
        usd_per_million: price
            .and_then(|p| cost_per_million_tokens(cost_per_hour_from_gpu_hours(p, gpus), tok_s)),
        joules_per_token: along(|p| p.joules_per_token),
    })
}

fn replicas(at: &AtSlo, users: u32, gpus: u32, price: Option<f64>) -> Replicas {
    // Whole users: a replica holding 11.7 users holds 11.
    let users_per_replica = (at.load.floor() as u32).max(1);
    let replicas = users.div_ceil(users_per_replica);
    let total_gpus = replicas * gpus;
    Replicas {
        users,
        users_per_replica,
        replicas,
        gpus: total_gpus,
        usd_per_hour: price.map(|p| cost_per_hour_from_gpu_hours(p, total_gpus)),
        at_most: at.basis == Basis::Bound,
    }
}

/// How the table and `infermeter summary` write a row, so they read alike.
impl Ranked {
    /// "1", or "—" for a report not ranked ([`Standing`]).
    pub fn rank_text(&self) -> String {
        self.rank.map_or("—".into(), |r| r.to_string())
    }

    /// The highest load meeting the SLO, with its unit in every mode: "≥ 32 concurrent
    /// users", "≈ 4.2 req/s", "16 queued requests", "< 1 concurrent user", or "n/a".
    pub fn load_text(&self) -> String {
        self.max_load.map_or("n/a".into(), |m| {
            let value = match m {
                MaxLoad::AllPass { highest } => highest,
                MaxLoad::NonePass { lowest } => lowest,
                MaxLoad::Between { load, .. } => load,
            };
            format!("{} {}", m.value_text(), self.mode.unit(value))
        })
    }

    /// How the load was read, and where the other figures come from.
    pub fn basis_text(&self) -> String {
        let Some(max_load) = self.max_load else {
            return "no per-request figures to judge the SLO by".into();
        };
        match (&self.measure_further, self.at_slo) {
            (Some(further), _) => further.clone(),
            (
                None,
                Some(AtSlo {
                    basis: Basis::Bound,
                    load,
                    ..
                }),
            ) => format!(
                "every tested level passes; figures at {}, the highest tested",
                format_number(load)
            ),
            _ => max_load.note(),
        }
    }

    /// The mark of a figure at the SLO's load: "≈ " when read at an interpolated load; for a
    /// bound, `bound` ("≥ " where more load gives more, "≤ " where it gives less), since more
    /// load may fit; none at a measured limit.
    fn mark(&self, bound: &'static str) -> &'static str {
        match self.at_slo.map(|a| a.basis) {
            Some(Basis::Interpolated) => "≈ ",
            Some(Basis::Bound) => bound,
            _ => "",
        }
    }

    /// "2,456.8 tok/s per GPU", "≈ 263.1 …" (interpolated load), "≥ …" (a bound).
    pub fn throughput_text(&self) -> String {
        self.at_slo.map_or("—".into(), |a| {
            format!(
                "{}{}",
                self.mark("≥ "),
                Figure::ThroughputPerGpu.text(a.throughput_per_gpu)
            )
        })
    }

    pub fn cost_text(&self) -> String {
        match (self.at_slo, self.usd_per_gpu_hour) {
            (Some(a), Some(_)) => a.usd_per_million.map_or("—".into(), |c| {
                format!("{}{}", self.mark("≤ "), Figure::UsdPerMillion.text(c))
            }),
            (Some(_), None) => "no price".into(),
            (None, _) => "—".into(),
        }
    }

    /// Energy at the SLO's load; at a bound it is the highest tested level's, unmarked (more
    /// load may cost more or less energy per token).
    pub fn energy_text(&self) -> String {
        self.at_slo
            .and_then(|a| a.joules_per_token)
            .map_or("—".into(), |j| {
                format!("{}{}", self.mark(""), Figure::JoulesPerToken.text(j))
            })
    }

    /// What serving the users takes, marked as the load it rests on: "≤ " for a bound (more
    /// users per replica may fit), "≈ " for an interpolated load.
    fn bounded(&self, text: String) -> String {
        format!("{}{text}", self.mark("≤ "))
    }

    /// Replicas for the users: "4", "≤ 4", "—".
    pub fn replicas_text(&self) -> String {
        self.replicas
            .map_or("—".into(), |r| self.bounded(r.replicas.to_string()))
    }

    pub fn gpus_text(&self) -> String {
        self.replicas
            .map_or("—".into(), |r| self.bounded(r.gpus.to_string()))
    }

    /// GPU rental for the users, an hour: "$10.76", "≤ $10.76", "no price", "—".
    pub fn usd_per_hour_text(&self) -> String {
        match self.replicas {
            Some(r) => r.usd_per_hour.map_or("no price".into(), |c| {
                self.bounded(format!("${}", format_number(c)))
            }),
            None => "—".into(),
        }
    }

    /// Throughput per GPU at the target interactivity.
    pub fn throughput_at_target_text(&self) -> String {
        self.throughput_at_target
            .map_or("—".into(), |a| a.text(Figure::ThroughputPerGpu))
    }

    pub fn cost_at_target_text(&self) -> String {
        match (self.cost_at_target, self.usd_per_gpu_hour) {
            (Some(a), _) => a.text(Figure::UsdPerMillion),
            (None, None) => "no price".into(),
            (None, Some(_)) => "—".into(),
        }
    }

    /// Every cell of the row in table order (see [`COLUMNS`]).
    pub fn cells(&self) -> [String; 12] {
        [
            self.rank_text(),
            self.label.clone(),
            self.load_text(),
            self.throughput_text(),
            self.cost_text(),
            self.energy_text(),
            self.replicas_text(),
            self.gpus_text(),
            self.usd_per_hour_text(),
            self.throughput_at_target_text(),
            self.cost_at_target_text(),
            self.basis_text(),
        ]
    }
}

/// Why a configuration has no limit and how to find it: "no limit found up to 32 concurrent
/// users (every tested level meets the SLO): measure further with `infermeter run --search
/// mode=peak,min=32 --slo ttft=2s,tpot=50ms`".
fn measure_further(mode: LoadMode, highest: f64, slo: &Slo) -> String {
    let found = format!(
        "no limit found up to {} {} (every tested level meets the SLO)",
        format_number(highest),
        mode.unit(highest)
    );
    match mode {
        LoadMode::Peak | LoadMode::Burst => format!(
            "{found}: measure further with `infermeter run --search mode={},min={} --slo {}`",
            mode.label(),
            format_number(highest),
            slo_spec(slo)
        ),
        _ => format!("{found}: measure levels above it to find the limit"),
    }
}

/// The statements of a scenario whose `rows` (ranked first) include some without a limit: that
/// no ranking is possible when none has one, else what each bound already says against the
/// cheapest configuration ranked.
fn verdict(rows: &[Ranked], mode: LoadMode) -> Vec<String> {
    let apart: Vec<&Ranked> = rows
        .iter()
        .filter(|r| r.standing == Standing::NoLimitFound)
        .collect();
    if apart.is_empty() {
        return Vec::new();
    }
    let Some(best) = rows.iter().find(|r| r.rank == Some(1)) else {
        let names: Vec<&str> = apart.iter().map(|r| r.label.as_str()).collect();
        return vec![format!(
            "No ranking is possible yet: no configuration was measured to its limit under this SLO (every tested level of {} meets it), and lower bounds do not rank. Measure further, as each row says.",
            names.join(", ")
        )];
    };
    apart.iter().map(|r| beside(r, best, mode)).collect()
}

/// What `row` (no limit found) serves, and how its cost bound compares with `best`'s cost.
fn beside(row: &Ranked, best: &Ranked, mode: LoadMode) -> String {
    let load = row.at_slo.map_or(0.0, |a| a.load);
    let serves = format!(
        "{} serves at least {} {} per replica",
        row.label,
        format_number(load),
        mode.unit(load)
    );
    let per_hour = |r: &Ranked| r.replicas.and_then(|x| x.usd_per_hour);
    let per_million = |r: &Ranked| r.at_slo.and_then(|a| a.usd_per_million);
    let (bound, measured, unit) = match (per_hour(row), per_hour(best), per_million(row)) {
        (Some(b), Some(m), _) => (
            b,
            m,
            format!(" an hour for {} users", row.replicas.map_or(0, |x| x.users)),
        ),
        (_, _, Some(b)) if per_million(best).is_some() => {
            (b, per_million(best).unwrap_or(b), " per M tokens".into())
        }
        _ => return format!("{serves}; measure it to its limit to rank it."),
    };
    let money = |v: f64| format!("${}", format_number(v));
    if bound <= measured {
        format!(
            "{serves}, at most {}{unit}: already no more than {}'s measured {} (ranked first among the configurations measured to their limit).",
            money(bound),
            best.label,
            money(measured)
        )
    } else {
        format!(
            "{serves}, at most {}{unit}, against {}'s measured {}: its limit decides which is cheaper; measure it further.",
            money(bound),
            best.label,
            money(measured)
        )
    }
}

/// The ranking table's column headings, as the page and `infermeter summary` print them.
pub const COLUMNS: [&str; 12] = [
    "Rank",
    "Configuration",
    "Highest load meeting the SLO",
    "Throughput per GPU",
    "$ per M tokens",
    "J per token",
    "Replicas",
    "GPUs",
    "$ per hour",
    "Throughput at target",
    "$ per M at target",
    "Basis",
];

#[cfg(test)]
mod tests {
    use super::super::operating::series_points;
    use super::*;
    use crate::analysis::testing::{level, report, series};
    use crate::schema::{to_ticks, Limits, RequestColumns};
    use crate::stats::Stat;

    /// A request column set where the first `met` of 100 requests start within 1 s and the rest
    /// at 3 s: a 2 s TTFT bound passes `met` percent.
    fn columns(met: usize) -> RequestColumns {
        let mut c = RequestColumns {
            stall_gap: 1_000,
            ..RequestColumns::default()
        };
        for i in 0..100 {
            let ttft = if i < met { 1.0 } else { 3.0 };
            c.status.push(RequestColumns::OK);
            c.ttft.push(to_ticks(ttft));
            c.e2e.push(to_ticks(ttft + 1.0));
            c.output_tokens.push(10);
            c.max_gap.push(0);
            c.stalls.push(0);
            c.jitter.push(0);
        }
        c
    }

    /// A one-scenario report on `gpus` × `gpu`: `(users, decode tok/s, share meeting 2 s)`.
    fn deployment(gpu: &str, gpus: u32, levels: &[(u32, f64, usize)]) -> Report {
        let mut s = series(
            "chat",
            LoadMode::Peak,
            &levels
                .iter()
                .map(|&(n, d, _)| (n, 0.5, d))
                .collect::<Vec<_>>(),
        );
        for (l, &(_, _, met)) in s.levels.iter_mut().zip(levels) {
            l.per_request = Some(columns(met));
        }
        let mut r = report(&["chat"], vec![s]);
        r.metadata.hardware.gpu_model = gpu.into();
        r.metadata.hardware.gpu_count = gpus;
        r
    }

    fn ttft_within(seconds: f64, target: f64) -> Slo {
        Slo {
            limits: Limits {
                max_ttft_s: Some(seconds),
                ..Limits::default()
            },
            target,
        }
    }

    fn rank(reports: &[Report], prices: &[Option<f64>], slo: &Slo, users: u32) -> ScenarioRanking {
        let labels = crate::analysis::labels::report_labels(reports);
        let refs: Vec<&Report> = reports.iter().collect();
        let series = series_points(&refs, LoadMode::Peak, Stat::Mean, prices);
        RankingInputs {
            reports: &refs,
            labels: &labels,
            series: &series,
            prices,
            slo,
            users,
            interactivity: 20.0,
            measured_only: false,
        }
        .rank("chat")
    }

    /// Known answers: 8 users pass (100%), 16 fail (80%): the curve crosses 95% at 11 users
    /// (goodput's own test). 100 users over 11 per replica: 10 replicas of 1 GPU at $2 = $20/h.
    #[test]
    fn replicas_and_cost_for_n_users() {
        let r = deployment(
            "NVIDIA H100",
            1,
            &[(4, 50.0, 100), (8, 40.0, 100), (16, 25.0, 80)],
        );
        let ranking = rank(
            std::slice::from_ref(&r),
            &[Some(2.0)],
            &ttft_within(2.0, 0.95),
            100,
        );
        let row = &ranking.rows[0];
        assert_eq!(row.rank, Some(1));
        let at = row.at_slo.unwrap();
        assert_eq!((at.load, at.basis), (11.0, Basis::Interpolated));
        // Throughput per GPU between 320 (8 × 40) and 400 (16 × 25), on the monotone curve.
        assert!(at.throughput_per_gpu > 320.0 && at.throughput_per_gpu < 400.0);
        let expected_cost = 2.0 / (at.throughput_per_gpu * 3600.0) * 1e6;
        assert!((at.usd_per_million.unwrap() - expected_cost).abs() < 1e-12);
        let rep = row.replicas.unwrap();
        assert_eq!(
            (
                rep.users_per_replica,
                rep.replicas,
                rep.gpus,
                rep.usd_per_hour,
                rep.at_most
            ),
            (11, 10, 10, Some(20.0), false)
        );
        assert_eq!(row.load_text(), "≈ 11 concurrent users");
        assert_eq!(row.basis_text(), "between measured 8 and 16");
        // Every figure resting on the interpolated load says so.
        assert_eq!(row.usd_per_hour_text(), "≈ $20");
        assert_eq!([row.replicas_text(), row.gpus_text()], ["≈ 10", "≈ 10"]);
        assert!(
            row.throughput_text().starts_with("≈ "),
            "{}",
            row.throughput_text()
        );
        assert!(row.cost_text().starts_with("≈ $"), "{}", row.cost_text());
        // Measured levels only: 8 users, the highest measured level that passes; 13 replicas.
        let labels = ["H100".to_string()];
        let refs = [&r];
        let series = series_points(&refs, LoadMode::Peak, Stat::Mean, &[Some(2.0)]);
        let measured = RankingInputs {
            reports: &refs,
            labels: &labels,
            series: &series,
            prices: &[Some(2.0)],
            slo: &ttft_within(2.0, 0.95),
            users: 100,
            interactivity: 20.0,
            measured_only: true,
        }
        .rank("chat");
        let m = &measured.rows[0];
        assert_eq!(
            m.at_slo.map(|a| (a.load, a.basis)),
            Some((8.0, Basis::Measured))
        );
        // 8 users × 40 tok/s on one GPU.
        assert_eq!(m.throughput_text(), "320 tok/s per GPU");
        assert_eq!(
            [m.load_text(), m.replicas_text(), m.usd_per_hour_text()],
            ["8 concurrent users", "13", "$26"]
        );
        // 110 users need exactly 10 replicas; 111 need 11.
        let exact = rank(&[row_report()], &[Some(2.0)], &ttft_within(2.0, 0.95), 110);
        assert_eq!(exact.rows[0].replicas.unwrap().replicas, 10);
        let one_more = rank(&[row_report()], &[Some(2.0)], &ttft_within(2.0, 0.95), 111);
        assert_eq!(one_more.rows[0].replicas.unwrap().replicas, 11);
    }

    fn row_report() -> Report {
        deployment(
            "NVIDIA H100",
            1,
            &[(4, 50.0, 100), (8, 40.0, 100), (16, 25.0, 80)],
        )
    }

    /// Every level passes: the highest is a bound, so replicas and cost are "at most".
    #[test]
    fn a_bound_when_every_level_passes() {
        let r = deployment("NVIDIA H200", 2, &[(8, 40.0, 100), (32, 20.0, 100)]);
        let ranking = rank(&[r], &[Some(3.0)], &ttft_within(2.0, 0.95), 100);
        let row = &ranking.rows[0];
        assert_eq!(row.at_slo.unwrap().basis, Basis::Bound);
        // 32 users × 20 tok/s over 2 GPUs.
        assert_eq!(row.at_slo.unwrap().throughput_per_gpu, 320.0);
        let rep = row.replicas.unwrap();
        assert_eq!((rep.replicas, rep.gpus, rep.at_most), (4, 8, true));
        assert_eq!(row.replicas_text(), "≤ 4");
        assert_eq!(row.usd_per_hour_text(), "≤ $24");
        assert_eq!(row.load_text(), "≥ 32 concurrent users");
        // The load names its unit in every mode.
        let between = |load, mode| Ranked {
            mode,
            max_load: Some(MaxLoad::Between {
                load,
                passing: 4.0,
                failing: 32.0,
            }),
            ..row.clone()
        };
        assert_eq!(between(4.2, LoadMode::Rate).load_text(), "≈ 4.2 req/s");
        assert_eq!(
            between(4.0, LoadMode::Burst).load_text(),
            "4 queued requests"
        );
        assert_eq!(between(16.0, LoadMode::Users).load_text(), "≈ 16 users");
        // A lower bound, not a capacity: listed apart, with what to measure, and never ranked.
        assert_eq!((row.standing, row.rank), (Standing::NoLimitFound, None));
        assert_eq!(
            row.basis_text(),
            "no limit found up to 32 concurrent users (every tested level meets the SLO): measure further with `infermeter run --search mode=peak,min=32 --slo ttft=2s,target=95%`"
        );
        assert_eq!(row.throughput_text(), "≥ 320 tok/s per GPU");
        assert_eq!(row.gpu_kind, "H200");
        assert_eq!(ranking.ranked().len(), 0);
        assert_eq!(
            ranking.verdict,
            ["No ranking is possible yet: no configuration was measured to its limit under this SLO (every tested level of 2x H200 meets it), and lower bounds do not rank. Measure further, as each row says."]
        );
    }

    /// The cheaper GPU wins at a loose SLO and loses at a tight one: A ($2/h) meets a 95% share
    /// at every level (16 users), B ($3/h) up to 12 users; at a 99% share A holds only 3 users
    /// (97% at 8 misses it) and B 9.
    #[test]
    fn the_ranking_flips_with_the_slo_and_the_price() {
        let a = deployment(
            "NVIDIA H100",
            1,
            &[(1, 60.0, 100), (8, 40.0, 97), (16, 30.0, 96)],
        );
        let b = deployment(
            "NVIDIA H200",
            1,
            &[(1, 70.0, 100), (8, 50.0, 100), (16, 35.0, 90)],
        );
        let reports = [a, b];
        let prices = [Some(2.0), Some(3.0)];
        let order =
            |r: &ScenarioRanking| r.rows.iter().map(|r| r.label.clone()).collect::<Vec<_>>();
        let per_replica = |r: &Ranked| r.replicas.unwrap().users_per_replica;
        // A: 64 users over ≥ 16 per replica, at most 4 × $2 = $8; B: 6 × $3 = $18.
        // At the loose SLO A has no limit (a bound): only B is ranked; A, listed apart, already
        // costs at most what B costs measured.
        let loose = rank(&reports, &prices, &ttft_within(2.0, 0.95), 64);
        assert_eq!(order(&loose), ["H200", "H100"]);
        assert_eq!((loose.rows[0].rank, loose.rows[1].rank), (Some(1), None));
        assert_eq!(loose.verdict, ["H100 serves at least 16 concurrent users per replica, at most $8 an hour for 64 users: already no more than H200's measured $18 (ranked first among the configurations measured to their limit)."]);
        let loose = ScenarioRanking {
            rows: vec![loose.rows[1].clone(), loose.rows[0].clone()],
            ..loose
        };
        assert_eq!(
            (per_replica(&loose.rows[0]), per_replica(&loose.rows[1])),
            (16, 12)
        );
        assert_eq!(loose.rows[0].usd_per_hour_text(), "≤ $8");
        assert_eq!(loose.rows[1].usd_per_hour_text(), "≈ $18");
        // A: 22 replicas × $2 = $44; B: 8 × $3 = $24.
        let tight = rank(&reports, &prices, &ttft_within(2.0, 0.99), 64);
        assert_eq!(order(&tight), ["H200", "H100"]);
        assert_eq!(
            (per_replica(&tight.rows[0]), per_replica(&tight.rows[1])),
            (9, 3)
        );
        assert_eq!(tight.rows[1].usd_per_hour_text(), "≈ $44");
        // At the loose SLO, A costs more once its GPU-hour is dearer than $18 / 4 = $4.50.
        let dear = rank(
            &reports,
            &[Some(6.5), Some(3.0)],
            &ttft_within(2.0, 0.95),
            64,
        );
        assert_eq!(order(&dear), ["H200", "H100"]);
        assert_eq!(dear.verdict, ["H100 serves at least 16 concurrent users per replica, at most $26 an hour for 64 users, against H200's measured $18: its limit decides which is cheaper; measure it further."]);
    }

    /// A report that misses the SLO even at its lowest load is listed last, unranked; one
    /// without a price comes after the priced ones.
    #[test]
    fn failing_and_unpriced_reports_come_last() {
        let fails = deployment("NVIDIA A100", 1, &[(1, 20.0, 50), (2, 15.0, 10)]);
        let unpriced = deployment(
            "NVIDIA L40S",
            1,
            &[(1, 30.0, 100), (2, 25.0, 100), (3, 20.0, 50)],
        );
        let priced = deployment(
            "NVIDIA H100",
            1,
            &[(1, 60.0, 100), (2, 50.0, 100), (3, 40.0, 50)],
        );
        let ranking = rank(
            &[fails, unpriced, priced],
            &[Some(1.0), None, Some(2.0)],
            &ttft_within(2.0, 0.95),
            10,
        );
        let ranks: Vec<(String, Option<u32>)> = ranking
            .rows
            .iter()
            .map(|r| (r.label.clone(), r.rank))
            .collect();
        assert_eq!(
            ranks,
            [
                ("H100".to_string(), Some(1)),
                ("L40S".to_string(), Some(2)),
                ("A100".to_string(), None)
            ]
        );
        assert_eq!(ranking.rows[1].usd_per_hour_text(), "no price");
        assert_eq!(ranking.rows[2].load_text(), "< 1 concurrent user");
        assert_eq!(ranking.rows[2].rank_text(), "—");
        assert_eq!(ranking.rows[2].cells().len(), COLUMNS.len());
    }

    #[test]
    fn without_per_request_figures_nothing_is_judged() {
        let r = report(
            &["chat"],
            vec![series(
                "chat",
                LoadMode::Peak,
                &[(1, 0.1, 50.0), (2, 0.1, 45.0)],
            )],
        );
        let ranking = rank(&[r], &[Some(2.0)], &ttft_within(2.0, 0.95), 10);
        let row = &ranking.rows[0];
        assert_eq!((row.max_load, row.rank), (None, None));
        assert_eq!(row.load_text(), "n/a");
        assert_eq!(
            row.basis_text(),
            "no per-request figures to judge the SLO by"
        );
        // The target interactivity is read all the same: 20 tok/s is below both levels.
        assert!(row.throughput_at_target.is_some());
        let _ = level(1, 0.1, 1.0);
    }
}
