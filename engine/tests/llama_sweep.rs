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
