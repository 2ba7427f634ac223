//! What if: the fitted simulator's predictions for the reader's question (a load up to four
//! times the highest measured, request lengths, GPU kind and count), drawn dashed beside the
//! measured points, each predicted line naming its held-out error. A measured level is always
//! drawn as measured: predictions sit beside measurements, never in their place.
//!
//! The predictions come from the engine crate ([`infermeter_engine::what_if`]), the code
//! `infermeter fit` and `infermeter sim --fit` run; this module asks and draws.

use std::cell::RefCell;

use infermeter_engine::measure::Figures;
use infermeter_engine::profiles::ProfileSet;
use infermeter_engine::what_if::{
    curve_loads, extrapolation, held_out_error, uncalibrated_error, WhatIf,
};
use infermeter_report::analysis::format::format_number;
use infermeter_report::{
    Fit, FitCoefficients, FitDeployment, FitLevel, FitMetric, LoadMode, Report,
};

use super::plot::{Line, LineKind, Plot, XAxis, YAxis};
use super::{plot, source_line, Source};
use crate::state::ViewState;

/// The question the view asks of one report's fit, its defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub scenario: String,
    pub scenario_name: String,
    pub what: WhatIf,
    /// The highest load the fit measured in this scenario and mode.
    pub highest: u32,
    /// The load asked about.
    pub load: u32,
}

impl Question {
    /// The question `view` asks of `report` (`None` without a fit). Choices that do not apply
    /// to this report (a scenario it lacks) fall back to its defaults: the fit's first
    /// scenario, peak mode where measured, the measured lengths, deployment and highest load.
    pub fn of(report: &Report, view: &ViewState) -> Option<Question> {
        let fit = report.fit.as_ref()?;
        let choice = &view.what_if;
        let first = fit.levels.first()?;
        let scenario: &str = choice
            .scenario
            .as_deref()
            .filter(|s| fit.levels.iter().any(|l| l.scenario == *s))
            .unwrap_or(&first.scenario);
        let in_scenario = |mode: LoadMode| {
            fit.levels
                .iter()
                .filter(move |l| l.scenario == scenario && l.mode == mode)
        };
        let mode = choice
            .mode
            .filter(|m| in_scenario(*m).next().is_some())
            .or_else(|| {
                [LoadMode::Peak, LoadMode::Burst]
                    .into_iter()
                    .find(|m| in_scenario(*m).next().is_some())
            })?;
        let measured: Vec<&FitLevel> = in_scenario(mode).collect();
        let highest = measured.iter().map(|l| l.concurrency).max()?;
        let scenario_name = report
            .scenarios
            .iter()
            .find(|s| s.id == scenario)
            .map_or_else(|| scenario.to_string(), |s| s.name.clone());
        Some(Question {
            what: WhatIf {
                mode,
                input_tokens: choice.input_tokens.unwrap_or(measured[0].input_tokens),
                output_tokens: choice.output_tokens.unwrap_or(measured[0].output_tokens),
                gpu: choice
                    .gpu
                    .clone()
                    .unwrap_or_else(|| fit.deployment.gpu.clone()),
                gpus: choice.gpus.unwrap_or(fit.deployment.gpus),
                engine: report.metadata.engine.name.clone(),
            },
            load: choice.load.unwrap_or(highest).clamp(1, max_load(highest)),
            scenario: scenario.to_string(),
            scenario_name,
            highest,
        })
    }

    /// The fit's levels that answer this question as measured: its scenario and mode, on the
    /// measured deployment with the measured lengths.
    pub fn measured<'f>(&self, fit: &'f Fit) -> Vec<&'f FitLevel> {
        fit.levels
            .iter()
            .filter(|l| l.scenario == self.scenario && l.mode == self.what.mode)
            .filter(|l| {
                self.what.is_measured_deployment(fit)
                    && l.input_tokens == self.what.input_tokens
                    && l.output_tokens == self.what.output_tokens
            })
            .collect()
    }

    /// The loads of the predicted curve: doubling up to four times the highest measured, and
    /// the load asked about.
    pub fn loads(&self) -> Vec<u32> {
        let mut loads = curve_loads(self.highest);
        loads.push(self.load);
        infermeter_report::order::sort(&mut loads);
        loads.dedup();
        loads
    }
}

/// The most load the section offers: four times the highest measured.
pub fn max_load(highest: u32) -> u32 {
    highest.max(1).saturating_mul(4)
}

/// The simulator's tables, read once.
pub fn tables() -> &'static ProfileSet {
    thread_local! {
        static TABLES: &'static ProfileSet = Box::leak(Box::new(ProfileSet::builtin()));
    }
    TABLES.with(|t| *t)
}

/// A predicted curve, `(load, figures)`.
type Curve = Vec<(u32, Figures)>;

/// What a curve is computed from: the fit's deployment and coefficients and the question.
type CurveKey = (FitDeployment, FitCoefficients, WhatIf, Vec<u32>);

thread_local! {
    static LAST: RefCell<Option<(CurveKey, Option<Curve>)>> = const { RefCell::new(None) };
}

/// The predicted curve of `question` from `fit`; `None` when the tables cannot build the engine
/// (a report fitted with a profile of its own, or a model that does not fit the GPUs asked).
/// The last one asked is kept: the section's charts and cards share one computation.
pub fn curve(fit: &Fit, question: &Question) -> Option<Curve> {
    let key: CurveKey = (
        fit.deployment.clone(),
        fit.coefficients,
        question.what.clone(),
        question.loads(),
    );
    if let Some(hit) = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, c)| c.clone())
    }) {
        return hit;
    }
    let computed = question.what.engine(fit, tables()).ok().map(|engine| {
        question
            .loads()
            .into_iter()
            .map(|n| (n, question.what.predict(&engine, n)))
            .collect()
    });
    LAST.with_borrow_mut(|last| *last = Some((key, computed.clone())));
    computed
}

/// A figure of the predictions, in display units.
pub fn display(metric: FitMetric, f: &Figures) -> f64 {
    let stored = match metric {
        FitMetric::TtftS => f.ttft_s,
        FitMetric::ItlS => f.itl_s,
        FitMetric::DecodeTokS => f.decode_tok_s,
        FitMetric::SystemOutputTokS => f.system_output_tok_s,
    };
    metric.metric().to_display(stored)
}

/// A measured figure of a fitted level, in display units.
pub fn measured_display(metric: FitMetric, level: &FitLevel) -> f64 {
    metric.metric().to_display(metric.point(level).measured)
}

/// The metric's y axis: the fit reads the mean of each distribution.
pub fn axis(metric: FitMetric) -> YAxis {
    let m = metric.metric();
    let name = if m.has_distribution() {
        format!("{}, mean", m.label())
    } else {
        m.label().to_string()
    };
    YAxis::new(name, m.unit())
}

/// "predicted: fitted simulator, held-out error 7%". The held-out error measures the fit on
/// what it was fitted on: outside it (another GPU or count, a context over 4x the longest
/// measured) the prediction is labelled an extrapolation, with the uncalibrated error beside it.
pub fn predicted_label(fit: &Fit, q: &Question, metric: FitMetric) -> String {
    if let Some(x) = extrapolation(fit, &q.what) {
        let beside = uncalibrated_error(fit, metric).map_or_else(String::new, |u| {
            format!(
                "; the uncalibrated profile is off by {}% on the measured levels",
                format_number(u * 100.0)
            )
        });
        return format!(
            "predicted: extrapolation to {} (no held-out error: not fitted on it{beside})",
            x.describe(fit)
        );
    }
    match held_out_error(fit, metric) {
        Some(e) => format!(
            "predicted: fitted simulator, held-out error {}%",
            format_number(e * 100.0)
        ),
        None => "predicted: fitted simulator".into(),
    }
}

/// The chart of `metric`: per report with a fit, its measured points and its predicted curve.
fn chart(sources: &[Source], view: &ViewState, metric: FitMetric) -> Plot {
    let main = sources
        .first()
        .and_then(|s| Question::of(s.analysis.report(), view));
    let x = match main.as_ref().map(|q| q.what.mode) {
        Some(LoadMode::Burst) => XAxis::QueueDepth,
        _ => XAxis::ConcurrentUsers,
    };
    let mut p = plot(x, vec![axis(metric)], view);
    for source in sources {
        let report = source.analysis.report();
        let (Some(fit), Some(q)) = (report.fit.as_ref(), Question::of(report, view)) else {
            continue;
        };
        let measured: Vec<(f64, f64)> = q
            .measured(fit)
            .into_iter()
            .map(|l| (f64::from(l.concurrency), measured_display(metric, l)))
            .collect();
        if !measured.is_empty() {
            let name = format!("{} (measured)", q.scenario_name);
            p.lines
                .push(source_line(sources, source, &name, 0, measured));
        }
        if let Some(curve) = curve(fit, &q) {
            let points = curve
                .iter()
                .map(|(n, f)| (f64::from(*n), display(metric, f)))
                .filter(|(_, y)| y.is_finite())
                .collect();
            let name = format!("{} ({})", q.scenario_name, predicted_label(fit, &q, metric));
            p.lines.push(Line {
                kind: LineKind::Predicted,
                ..source_line(sources, source, &name, 0, points)
            });
        }
    }
    p
}

pub fn ttft(sources: &[Source], view: &ViewState) -> Plot {
    chart(sources, view, FitMetric::TtftS)
}

pub fn itl(sources: &[Source], view: &ViewState) -> Plot {
    chart(sources, view, FitMetric::ItlS)
}

pub fn decode(sources: &[Source], view: &ViewState) -> Plot {
    chart(sources, view, FitMetric::DecodeTokS)
}

pub fn throughput(sources: &[Source], view: &ViewState) -> Plot {
    chart(sources, view, FitMetric::SystemOutputTokS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    /// The predicted line is dashed and names its held-out error; the measured points are a
    /// line of their own, at the measured loads only.
    #[test]
    fn predictions_are_drawn_beside_the_measured_points() {
        let report = fitted_sample();
        let fit = report
            .fit
            .as_ref()
            .expect("the bundled report holds its fit");
        let p = with_sources(&report, |s| ttft(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 2);
        let (measured, predicted) = (&p.lines[0], &p.lines[1]);
        assert_eq!(measured.kind, LineKind::Plain);
        assert_eq!(predicted.kind, LineKind::Predicted);
        assert!(
            predicted.name.contains("held-out error"),
            "{}",
            predicted.name
        );
        let q = Question::of(&report, &ViewState::default()).unwrap();
        assert_eq!(measured.points.len(), q.measured(fit).len());
        assert_eq!(predicted.points.last().unwrap().0, f64::from(4 * q.highest));
        let json = chart_json(&p);
        assert_eq!(json["series"][1]["lineStyle"]["type"], "dashed");
    }

    /// Another GPU, or other lengths, are not what was measured: no measured points then.
    #[test]
    fn another_question_has_no_measured_points() {
        let report = fitted_sample();
        let mut view = ViewState::default();
        view.what_if.gpu = Some("h200".into());
        let p = with_sources(&report, |s| itl(s, &view));
        assert_eq!(p.lines.len(), 1);
        assert_eq!(p.lines[0].kind, LineKind::Predicted);
        let on_h100 = with_sources(&report, |s| itl(s, &ViewState::default()));
        let last = |p: &Plot| p.lines.last().unwrap().points.last().unwrap().1;
        assert!(last(&p) < last(&on_h100), "an H200 streams faster");
        // The held-out error measures the fit on its own GPU only: not stated for the H200.
        let name = &p.lines[0].name;
        assert!(!name.contains("held-out error "), "{name}");
        assert!(
            name.contains("extrapolation to h200, scaled by datasheets from h100-sxm"),
            "{name}"
        );
        assert!(
            name.contains("the uncalibrated profile is off by"),
            "{name}"
        );
        // Nor for two of its own GPUs: one count does not say another.
        view.what_if.gpu = None;
        view.what_if.gpus = Some(2);
        let p = with_sources(&report, |s| itl(s, &view));
        let name = &p.lines[0].name;
        assert!(
            name.contains("extrapolation to 2 GPUs (the fit saw 1)"),
            "{name}"
        );
    }

    #[test]
    fn a_report_without_a_fit_plots_nothing() {
        let p = with_sources(&sample(), |s| throughput(s, &ViewState::default()));
        assert!(p.is_empty());
    }
}
