//! Held-out configurations: the model fitted to the reports of some configurations of an engine
//! (other slots or `--max-num-seqs`, another token budget, context length or GPU count) and
//! judged on the reports of the others, which the fit never saw. What a reader asking "what if
//! I ran 8 slots instead of 4" needs to know, where leaving out one level of the same run only
//! says how well the model interpolates load.
//!
//! The coefficients are shared: the first training configuration's profile is fitted, and every
//! other configuration runs it carried to its deployment ([`super::scale_to`]: rates scaled by
//! the datasheets' peaks, the limits its own). Each held-out level is judged on its means (TTFT,
//! ITL, end-to-end latency) and its tails (p90 and p99 of TTFT and of the pooled token gaps),
//! the model's taken from the requests it replays with the collector's percentile definition.

use infermeter_report::{Distribution, Report};

use super::{base_profile, deployment_of, fit_parts, measured_levels, relative_error};
use super::{FitError, FitOptions, MeasuredLevel, Part, ROUNDS};
use crate::measure::{measure_distributions, Distributions, Figures};
use crate::profile::Profile;
use crate::profiles::ProfileSet;

/// One configuration of a sweep: its name, its report and what the report does not say.
#[derive(Debug, Clone)]
pub struct Configuration<'a> {
    /// How tables name it, e.g. "np=2 ctx=short".
    pub name: String,
    pub report: &'a Report,
    pub options: FitOptions,
}

/// The figures a held-out level is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    TtftMean,
    ItlMean,
    E2eMean,
    TtftP90,
    TtftP99,
    ItlP90,
    ItlP99,
}

impl Judged {
    pub const ALL: [Judged; 7] = [
        Judged::TtftMean,
        Judged::ItlMean,
        Judged::E2eMean,
        Judged::TtftP90,
        Judged::TtftP99,
        Judged::ItlP90,
        Judged::ItlP99,
    ];

    /// "mean TTFT", "p99 ITL".
    pub fn label(self) -> &'static str {
        match self {
            Judged::TtftMean => "mean TTFT",
            Judged::ItlMean => "mean ITL",
            Judged::E2eMean => "mean E2E",
            Judged::TtftP90 => "p90 TTFT",
            Judged::TtftP99 => "p99 TTFT",
            Judged::ItlP90 => "p90 ITL",
            Judged::ItlP99 => "p99 ITL",
        }
    }

    /// This figure of a level's means and distributions; NaN where it has none.
    fn of(self, means: &Figures, d: &Distributions) -> f64 {
        let p = |d: Option<Distribution>, q: fn(&Distribution) -> Option<f64>| {
            d.as_ref().and_then(q).unwrap_or(f64::NAN)
        };
        match self {
            Judged::TtftMean => means.ttft_s,
            Judged::ItlMean => means.itl_s,
            Judged::E2eMean => means.e2e_s,
            Judged::TtftP90 => p(d.ttft_s, |d| d.p90),
            Judged::TtftP99 => p(d.ttft_s, |d| d.p99),
            Judged::ItlP90 => p(d.itl_s, |d| d.p90),
            Judged::ItlP99 => p(d.itl_s, |d| d.p99),
        }
    }
}

/// One held-out level: its key, and per [`Judged`] figure the measured and predicted values.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOutLevel {
    /// "cpu-64 peak 4".
    pub key: String,
    pub measured: [f64; 7],
    pub predicted: [f64; 7],
}

impl HeldOutLevel {
    /// `predicted / measured − 1` of `figure`; `None` where it was not measured.
    pub fn error(&self, figure: Judged) -> Option<f64> {
        let i = Judged::ALL.iter().position(|j| *j == figure)?;
        relative_error(self.predicted[i], self.measured[i])
    }
}

/// Sizes of relative errors over levels: median, mean, 99th percentile (the collector's
/// definition) and the worst with its sign.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub mean: f64,
    pub p99: f64,
    pub worst: f64,
    pub levels: usize,
}

impl Spread {
    /// The spread of `errors` (signed); NaN figures when there are none.
    pub fn of(errors: impl Iterator<Item = f64>) -> Spread {
        let e: Vec<f64> = errors.collect();
        let sizes: Vec<f64> = e.iter().map(|x| x.abs()).collect();
        let d = Distribution::from_samples(&sizes);
        let worst = e
            .iter()
            .copied()
            .max_by(|a, b| a.abs().total_cmp(&b.abs()))
            .unwrap_or(f64::NAN);
        Spread {
            median: d.map_or(f64::NAN, |d| d.p50),
            mean: d.map_or(f64::NAN, |d| d.mean),
            p99: d.and_then(|d| d.p99).unwrap_or(f64::NAN),
            worst,
            levels: e.len(),
        }
    }
}

/// A held-out configuration: its levels as predicted by the fit of the others.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOut {
    pub name: String,
    pub levels: Vec<HeldOutLevel>,
}

impl HeldOut {
    /// The spread of `figure`'s errors over this configuration's levels.
    pub fn spread(&self, figure: Judged) -> Spread {
        spread(std::slice::from_ref(self), figure)
    }
}

/// The spread of `figure`'s errors over every level of `held_out`.
pub fn spread(held_out: &[HeldOut], figure: Judged) -> Spread {
    Spread::of(
        held_out
            .iter()
            .flat_map(|h| &h.levels)
            .filter_map(|l| l.error(figure)),
    )
}

/// A configuration ready to fit or judge: its uncalibrated profile and its levels.
struct Prepared {
    name: String,
    base: Profile,
    levels: Vec<MeasuredLevel>,
}

fn prepare(set: &ProfileSet, c: &Configuration<'_>) -> Result<Prepared, FitError> {
    let deployment = deployment_of(c.report, set, &c.options)?;
    Ok(Prepared {
        name: c.name.clone(),
        base: base_profile(set, &deployment, &c.report.metadata.engine.name)?,
        levels: measured_levels(c.report).0,
    })
}

/// The model fitted to `train`'s configurations together, as the first one's profile.
pub fn fit_configurations(
    set: &ProfileSet,
    train: &[Configuration<'_>],
) -> Result<Profile, FitError> {
    let prepared = train
        .iter()
        .map(|c| prepare(set, c))
        .collect::<Result<Vec<_>, _>>()?;
    let found: usize = prepared.iter().map(|p| p.levels.len()).sum();
    if prepared.is_empty() || found < super::MIN_LEVELS {
        return Err(FitError::TooFewLevels {
            found,
            needed: super::MIN_LEVELS,
        });
    }
    let parts: Vec<Part<'_>> = prepared
        .iter()
        .map(|p| Part {
            base: p.base.clone(),
            levels: p.levels.iter().collect(),
        })
        .collect();
    Ok(fit_parts(&parts, &ROUNDS))
}

/// Fits the model to `train` and predicts every level of each of `test`'s configurations.
pub fn hold_out(
    set: &ProfileSet,
    train: &[Configuration<'_>],
    test: &[Configuration<'_>],
) -> Result<Vec<HeldOut>, FitError> {
    let fitted = fit_configurations(set, train)?;
    test.iter()
        .map(|c| {
            let p = prepare(set, c)?;
            let engine = super::scale_to(&fitted, &p.base);
            let levels = p
                .levels
                .iter()
                .map(|l| {
                    let (means, d) = measure_distributions(&engine, &l.spec);
                    HeldOutLevel {
                        key: format!("{} {} {}", l.scenario, l.mode.label(), l.concurrency),
                        measured: Judged::ALL.map(|j| j.of(&l.measured, &l.distributions)),
                        predicted: Judged::ALL.map(|j| j.of(&means, &d)),
                    }
                })
                .collect();
            Ok(HeldOut {
                name: p.name,
                levels,
            })
        })
        .collect()
}

/// A table of `held_out`: per configuration and figure, the median, mean, p99 and worst error
/// over its levels, then over every held-out level.
pub fn describe(held_out: &[HeldOut]) -> String {
    let mut s = format!(
        "{:<22} {:<10} {:>7} {:>7} {:>7} {:>8}\n",
        "held out", "figure", "median", "mean", "p99", "worst"
    );
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let mut row = |name: &str, figure: Judged, sp: Spread| {
        s.push_str(&format!(
            "{:<22} {:<10} {:>7} {:>7} {:>7} {:>8}\n",
            name,
            figure.label(),
            pct(sp.median),
            pct(sp.mean),
            pct(sp.p99),
            format!("{:+.1}%", sp.worst * 100.0)
        ));
    };
    for h in held_out {
        for figure in Judged::ALL {
            row(&h.name, figure, h.spread(figure));
        }
    }
    for figure in Judged::ALL {
        row("all held out", figure, spread(held_out, figure));
    }
    s
}

#[cfg(test)]
mod tests;
