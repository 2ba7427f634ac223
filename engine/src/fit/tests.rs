use super::testing::{other_engine, simulated_report};
use super::*;
use crate::profile::BatchEntry;

/// Acceptance 3 of #34: fitted to the simulator's own report, the model gives every level
/// within 2%, fitted and held out, where the tables' profile is far off.
#[test]
fn a_fit_recovers_the_profile_that_made_the_report() {
    let truth = other_engine();
    let report = simulated_report(
        &truth,
        "meta-llama/Llama-3.1-8B-Instruct",
        "NVIDIA H100 SXM5 80GB",
    );
    let fit = fit(&report, &ProfileSet::builtin(), &FitOptions::default()).unwrap();
    assert_eq!(
        (fit.deployment.model.as_str(), fit.deployment.gpu.as_str()),
        ("llama-3.1-8b", "h100-sxm")
    );
    assert_eq!(fit.levels.len(), 12);
    let mut worst: Vec<(String, FitMetric, f64, f64)> = Vec::new();
    for level in &fit.levels {
        for metric in FitMetric::ALL {
            let p = metric.point(level);
            let e = |m| relative_error(m, p.measured).unwrap().abs();
            worst.push((level_key(level), metric, e(p.fitted), e(p.held_out)));
        }
    }
    let bad: Vec<_> = worst
        .iter()
        .filter(|w| w.2 >= 0.02 || w.3 >= 0.02)
        .collect();
    assert!(bad.is_empty(), "levels off by 2% or more: {bad:?}");
    let uncalibrated = &fit.errors[0].uncalibrated;
    assert!(
        uncalibrated.median > 0.1,
        "the tables' profile is not the truth: {uncalibrated:?}"
    );
    // The decode step times and a lone prompt's time to its first token come back. (Not every
    // coefficient alone: a memory-bound step's weight read and its fixed overhead add up to one
    // constant the levels pin and split it no further, as the front end and a prefill step do.)
    let fitted = with_coefficients(&truth, &fit.coefficients);
    let decode = |context| vec![BatchEntry { tokens: 1, context }];
    let prefill = |tokens| vec![BatchEntry { tokens, context: 0 }];
    for (batch, first_token) in [
        (decode(1000), false),
        (
            vec![
                BatchEntry {
                    tokens: 1,
                    context: 4000
                };
                8
            ],
            false,
        ),
        (prefill(1024), true),
        (prefill(4096), true),
    ] {
        let time =
            |p: &Profile| p.step_time(&batch) + if first_token { p.frontend_latency } else { 0.0 };
        let (got, want) = (time(&fitted), time(&truth));
        assert!(
            (got / want - 1.0).abs() < 0.02,
            "{batch:?}: {got} s against {want} s"
        );
    }
    assert!((fit.coefficients.seq_overhead_us / 60.0 - 1.0).abs() < 0.05);
}

#[test]
fn a_report_it_cannot_place_says_what_to_name() {
    let report = simulated_report(&other_engine(), "my-model", "NVIDIA H100 SXM5 80GB");
    let set = ProfileSet::builtin();
    let err = fit(&report, &set, &FitOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"my-model\"") && err.contains("--model") && err.contains("llama-3.1-8b"),
        "{err}"
    );
    let mut report = report;
    report.metadata.model.id = "llama-3.1-8b".into();
    report.metadata.hardware.gpu_model = "Abacus".into();
    let err = fit(&report, &set, &FitOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"Abacus\"") && err.contains("--gpu") && err.contains("h200"),
        "{err}"
    );
    report.series.truncate(0);
    let options = FitOptions {
        gpu: Some("h100-sxm".into()),
        ..FitOptions::default()
    };
    let err = fit(&report, &set, &options).unwrap_err();
    assert_eq!(
        err,
        FitError::TooFewLevels {
            found: 0,
            needed: MIN_LEVELS
        }
    );
}

/// The page predicts with the fit as stored: the fitted profile gives each level's `fitted`
/// figures again, and another GPU scales the rates by the datasheets.
#[test]
fn a_stored_fit_predicts_its_levels_and_scales_to_other_gpus() {
    let set = ProfileSet::builtin();
    let report = simulated_report(&other_engine(), "llama-3.1-8b", "NVIDIA H100 SXM5 80GB");
    let mut fit = fit(&report, &set, &FitOptions::default()).unwrap();
    fit.levels.truncate(2);
    let fitted = fitted_profile(&fit, &report.metadata.engine.name, &set).unwrap();
    let (levels, _) = measured_levels(&report);
    for (stored, level) in fit.levels.iter().zip(&levels) {
        let again = measure(&fitted, &level.spec);
        assert_eq!(again.ttft_s, stored.ttft_s.fitted);
        assert_eq!(again.itl_s, stored.itl_s.fitted);
    }
    let h200 = scaled_profile(&fit, &report.metadata.engine.name, &set, "h200", 1).unwrap();
    assert!((h200.mem_bw / fitted.mem_bw - 4800.0 / 3350.0).abs() < 1e-9);
    assert_eq!(h200.step_overhead, fitted.step_overhead);
    assert!(h200.kv_capacity_blocks > fitted.kv_capacity_blocks);
    let two = scaled_profile(&fit, &report.metadata.engine.name, &set, "h100-sxm", 2).unwrap();
    assert!((two.flops / fitted.flops - 2.0).abs() < 1e-9);
}
