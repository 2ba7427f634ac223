use super::*;
use crate::fit::testing::{other_engine_on, simulated_report};

const MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";
const GPU: &str = "NVIDIA H100 SXM5 80GB";

/// The simulator's engine on `gpus` H100s at these limits, with a report of it measured on the
/// virtual clock, as a configuration named `name`.
fn simulated(gpus: u32, max_num_seqs: u32, max_num_batched_tokens: u32) -> (Report, FitOptions) {
    let mut truth = other_engine_on(gpus);
    truth.max_num_seqs = max_num_seqs;
    truth.max_num_batched_tokens = max_num_batched_tokens;
    let options = FitOptions {
        max_num_seqs: Some(max_num_seqs),
        max_num_batched_tokens: Some(max_num_batched_tokens),
        ..FitOptions::default()
    };
    (simulated_report(&truth, MODEL, GPU), options)
}

fn configuration<'a>(name: &str, made: &'a (Report, FitOptions)) -> Configuration<'a> {
    Configuration {
        name: name.into(),
        report: &made.0,
        options: made.1.clone(),
    }
}

/// Acceptance 2 of #47: on the simulator driven as ground truth with settings the fit did not
/// see (another batch limit, another token budget, another GPU count), every held-out figure
/// (mean TTFT, ITL and end-to-end latency, p90 and p99 of TTFT and ITL) within 5% at the median
/// and at the worst level. The reports are made with coefficients other than the tables' (see
/// `other_engine`), and the fit starts from the tables.
///
/// The GPU count is predicted from a fit on one and four GPUs: from one GPU count alone a
/// memory-bound step's weight read and its fixed overhead add up to one constant, and how it
/// splits (which another count needs: the read divides, the overhead does not) is not in the
/// measurements. The test below shows that error; the page labels such a prediction an
/// extrapolation.
#[test]
fn a_fit_on_one_configuration_predicts_the_simulator_on_another() {
    let set = ProfileSet::builtin();
    let wide = simulated(1, 32, 8192);
    let four = simulated(4, 32, 8192);
    let trained_on_one = [configuration("1 GPU", &wide)];
    let trained_on_two = [
        configuration("1 GPU", &wide),
        configuration("4 GPUs", &four),
    ];
    let experiments = [
        (
            "max-num-seqs 32 -> 8",
            &trained_on_one[..],
            simulated(1, 8, 8192),
        ),
        (
            "batched tokens 8192 -> 2048",
            &trained_on_one[..],
            simulated(1, 32, 2048),
        ),
        (
            "1, 4 GPUs -> 2 (TP)",
            &trained_on_two[..],
            simulated(2, 32, 8192),
        ),
    ];
    let mut held_out = Vec::new();
    for (name, train, made) in &experiments {
        held_out.extend(hold_out(&set, train, &[configuration(name, made)]).unwrap());
    }
    println!("{}", describe(&held_out));
    let mut bad = Vec::new();
    for h in &held_out {
        for figure in Judged::ALL {
            let sp = h.spread(figure);
            assert_eq!(sp.levels, 12, "{} {}", h.name, figure.label());
            if sp.median > 0.05 || sp.worst.abs() > 0.05 {
                bad.push(format!("{} {}: {sp:?}", h.name, figure.label()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "held out by more than 5%:\n{}",
        bad.join("\n")
    );
    // The settings change what is measured, or holding them out would prove nothing.
    let (trained, _) = measured_levels(&wide.0);
    for h in &held_out {
        let moved = (h.levels.iter().zip(&trained))
            .map(|(a, b)| (a.measured[0] / b.measured.ttft_s - 1.0).abs())
            .fold(0.0, f64::max);
        assert!(moved > 0.2, "{}: TTFT moved {:.1}%", h.name, moved * 100.0);
    }
}

/// From one GPU count alone, another is not identified (see above): on one H100 the fit splits
/// a decode step's constant between weight reads and overhead as the levels allow, and two
/// H100s halve only the reads. The figure the page's extrapolation label stands for, printed.
#[test]
fn one_gpu_count_alone_does_not_say_another() {
    let set = ProfileSet::builtin();
    let one = simulated(1, 32, 8192);
    let two = simulated(2, 32, 8192);
    let h = hold_out(
        &set,
        &[configuration("1 GPU", &one)],
        &[configuration("1 GPU -> 2 GPUs (TP)", &two)],
    )
    .unwrap();
    println!("{}", describe(&h));
    // Time to first token is prefill, compute-bound, and carries over; decode does not.
    assert!(h[0].spread(Judged::TtftMean).median < 0.05);
    assert!(h[0].spread(Judged::ItlMean).median > 0.05);
}
