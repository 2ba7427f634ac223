//! #47's acceptance on a real engine: llama.cpp's `llama-server` on this machine's CPU (the
//! tiny model of engines/llama-cpp), measured by `infermeter sweep` at `--parallel` 1, 2 and 4
//! and two context lengths (tests/fixtures/llama-cpu-sweep/README.md says how). The model is
//! fitted on some configurations and predicts the others; each held-out figure is printed.

use infermeter_engine::fit::configurations::Judged;
use infermeter_engine::fit::configurations::{describe, hold_out, spread, Configuration, HeldOut};
use infermeter_engine::fit::FitOptions;
use infermeter_engine::ProfileSet;
use infermeter_report::Report;

fn report(name: &str) -> Report {
    let path = format!(
        "{}/../tests/fixtures/llama-cpu-sweep/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    infermeter_report::load_report(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The configuration of `report`, its slots from the sweep's `np` parameter.
fn configuration<'a>(name: &str, report: &'a Report) -> Configuration<'a> {
    let np = report
        .metadata
        .configuration
        .as_ref()
        .and_then(|c| c.parameters.get("np"))
        .and_then(|n| n.parse().ok())
        .expect("the sweep's np parameter");
    Configuration {
        name: name.into(),
        report,
        options: FitOptions {
            max_num_seqs: Some(np),
            ..FitOptions::default()
        },
    }
}

#[test]
fn fitted_on_some_llama_cpp_configurations_it_predicts_the_others() {
    let set = ProfileSet::builtin();
    let reports: Vec<(String, Report)> = ["short", "long"]
        .iter()
        .flat_map(|ctx| [1, 2, 4].map(|np| format!("{ctx}-np{np}")))
        .map(|name| (name.clone(), report(&name)))
        .collect();
    let c = |name: &str| {
        let (n, r) = reports.iter().find(|(n, _)| n == name).unwrap();
        configuration(n, r)
    };
    let mut slots: Vec<HeldOut> = Vec::new();
    for ctx in ["short", "long"] {
        let train = [c(&format!("{ctx}-np1")), c(&format!("{ctx}-np4"))];
        slots.extend(hold_out(&set, &train, &[c(&format!("{ctx}-np2"))]).unwrap());
    }
    println!(
        "fitted on --parallel 1 and 4, --parallel 2 held out:\n{}",
        describe(&slots)
    );
    print_levels(&slots);
    let mut contexts: Vec<HeldOut> = Vec::new();
    for (from, to) in [("short", "long"), ("long", "short")] {
        let train = [1, 2, 4].map(|np| c(&format!("{from}-np{np}")));
        let test = [1, 2, 4].map(|np| c(&format!("{to}-np{np}")));
        let mut h = hold_out(&set, &train, &test).unwrap();
        for h in &mut h {
            h.name = format!("{from} -> {}", h.name);
        }
        contexts.extend(h);
    }
    println!(
        "fitted on one context, the other held out:\n{}",
        describe(&contexts)
    );
    print_levels(&contexts);
    let all: Vec<HeldOut> = slots.iter().chain(&contexts).cloned().collect();
    let mut summary = String::new();
    for figure in Judged::ALL {
        let sp = spread(&all, figure);
        summary.push_str(&format!(
            "{:<10} median {:.1}% p99 {:.1}% over {} held-out levels\n",
            figure.label(),
            sp.median * 100.0,
            sp.p99 * 100.0,
            sp.levels
        ));
    }
    println!("every held-out level:\n{summary}");
    referee(&reports, &all);
    // #47's targets: a median error of 10% for the means and 20% at p99, over each question's
    // held-out levels and over all of them (docs/what-if.md: over all, 4.9%, 4.9%, 4.5%, 4.9%
    // and 14.1% when written).
    for (question, held_out, levels) in [
        ("--parallel 2 from 1 and 4", &slots[..], 20),
        ("one context from the other", &contexts[..], 60),
        ("both", &all[..], 80),
    ] {
        for (figure, target) in [
            (Judged::TtftMean, 0.10),
            (Judged::ItlMean, 0.10),
            (Judged::E2eMean, 0.10),
            (Judged::TtftP99, 0.20),
            (Judged::ItlP99, 0.20),
        ] {
            let sp = spread(held_out, figure);
            assert_eq!(sp.levels, levels, "{question}: {}", figure.label());
            assert!(
                sp.median <= target,
                "{question}: {} held-out median {:.1}%, target {:.0}%",
                figure.label(),
                sp.median * 100.0,
                target * 100.0
            );
        }
    }
}

/// The referee of the held-out errors: each level's measured figures recomputed from the
/// report's per-request columns (not the level's metrics the fit read), and each question's
/// median error recomputed from them, against #47's targets. p99 ITL is left to the assertion
/// above: the columns keep each request's longest pause, not its pauses.
fn referee(reports: &[(String, Report)], held_out: &[HeldOut]) {
    // TTFT mean, ITL mean, E2E mean and p99 TTFT, with #47's targets.
    const FIGURES: [(usize, &str, f64); 4] = [
        (0, "mean TTFT", 0.10),
        (1, "mean ITL", 0.10),
        (2, "mean E2E", 0.10),
        (4, "p99 TTFT", 0.20),
    ];
    let mut errors: [Vec<f64>; 4] = Default::default();
    for h in held_out {
        let name = h.name.rsplit("-> ").next().unwrap();
        let (_, report) = reports.iter().find(|(n, _)| n == name).unwrap();
        for l in &h.levels {
            let level = report
                .series
                .iter()
                .flat_map(|s| s.levels.iter().map(move |lv| (s, lv)))
                .find(|(s, lv)| {
                    format!("{} {} {}", s.scenario, s.mode.label(), lv.concurrency) == l.key
                })
                .map(|(_, lv)| lv)
                .unwrap_or_else(|| panic!("{name}: no level {}", l.key));
            let refereed = from_columns(level.per_request.as_ref().expect("per-request columns"));
            for (k, &(i, figure, _)) in FIGURES.iter().enumerate() {
                let off = l.measured[i] / refereed[k] - 1.0;
                assert!(
                    off.abs() < 0.01,
                    "{name} {}: {figure} {} in the fit, {} from the columns",
                    l.key,
                    l.measured[i],
                    refereed[k]
                );
                errors[k].push((l.predicted[i] / refereed[k] - 1.0).abs());
            }
        }
    }
    for (k, &(_, figure, target)) in FIGURES.iter().enumerate() {
        let e = &mut errors[k];
        assert_eq!(e.len(), 80, "{figure}");
        e.sort_by(f64::total_cmp);
        let median = (e[39] + e[40]) / 2.0;
        println!(
            "refereed {figure}: median {:.1}% over 80 levels",
            median * 100.0
        );
        assert!(
            median <= target,
            "refereed {figure}: {:.1}%",
            median * 100.0
        );
    }
}

/// TTFT mean, ITL mean (every pause: a request's stream after its first token over its tokens
/// after the first), E2E mean and p99 TTFT (interpolated between ranks) of the requests that
/// completed, in seconds.
fn from_columns(c: &infermeter_report::RequestColumns) -> [f64; 4] {
    let tick = infermeter_report::TICK_S;
    let ok: Vec<usize> = (0..c.status.len()).filter(|&i| c.status[i] == 0).collect();
    let n = ok.len() as f64;
    let sum = |f: &dyn Fn(usize) -> f64| ok.iter().map(|&i| f(i)).sum::<f64>();
    let ttft = sum(&|i| f64::from(c.ttft[i])) * tick / n;
    let e2e = sum(&|i| f64::from(c.e2e[i])) * tick / n;
    let itl = sum(&|i| f64::from(c.e2e[i] - c.ttft[i])) * tick
        / sum(&|i| f64::from(c.output_tokens[i] - 1));
    let mut ttfts: Vec<f64> = ok.iter().map(|&i| f64::from(c.ttft[i]) * tick).collect();
    ttfts.sort_by(f64::total_cmp);
    let rank = 0.99 * (ttfts.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    let p99 = ttfts[lo] + (ttfts[hi] - ttfts[lo]) * (rank - lo as f64);
    [ttft, itl, e2e, p99]
}

/// Each held-out level's means, measured and predicted.
fn print_levels(held_out: &[HeldOut]) {
    for h in held_out {
        for l in &h.levels {
            let f = |i: usize| format!("{:.4}/{:.4}", l.measured[i], l.predicted[i]);
            println!(
                "{:<16} {:<20} TTFT {} ITL {} E2E {} p99 ITL {}",
                h.name,
                l.key,
                f(0),
                f(1),
                f(2),
                f(6)
            );
        }
    }
}
