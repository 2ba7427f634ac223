//! What a scenario's data supports beside its ranking. A configuration whose every tested level
//! meets the SLO has a lower bound, not a capacity: it is listed apart with what to measure, and
//! compared with the ranked ones only where its bound already decides ("serves at least 32 per
//! replica for at most $X, already less than H100's measured $Y").

use super::ranking::{Ranked, Standing};
use crate::analysis::format::format_number;
use crate::analysis::goodput::slo_spec;
use crate::schema::{LoadMode, Slo};

/// Why a configuration has no limit and how to find it: "no limit found up to 32 concurrent
/// users (every tested level meets the SLO): measure further with `infermeter run --search
/// mode=peak,min=32 --slo ttft=2s,tpot=50ms`".
pub fn measure_further(mode: LoadMode, highest: f64, slo: &Slo) -> String {
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
pub fn verdict(rows: &[Ranked], mode: LoadMode) -> Vec<String> {
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
