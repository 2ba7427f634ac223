//! Virtual-time calibration against the published reference reports.

use infermeter_sim::calibration::{Figure, REFERENCES};

#[test]
fn every_reference_figure_is_within_15_percent() {
    let table = infermeter_sim::calibration_table();
    let mut bad = Vec::new();
    for r in &table {
        println!(
            "{:<90} ref {:>9.3}  sim {:>9.3}  {:+6.1}%",
            r.label(),
            r.reference.value,
            r.simulated,
            100.0 * r.relative_error(),
        );
        if r.relative_error().abs() > 0.15 {
            bad.push(r.label());
        }
    }
    assert_eq!(table.len(), REFERENCES.len());
    assert!(bad.is_empty(), "outside tolerance: {bad:?}");
}

#[test]
fn qwen3_coder_throughput_peaks_at_24_and_falls_past_the_cuda_graph_limit() {
    let coder = REFERENCES
        .iter()
        .find(|r| r.figure == Figure::PeakSystemTokS)
        .expect("a peak reference");
    let p = infermeter_sim::calibration::profile(coder.deployment);
    let system = |n| {
        infermeter_sim::calibration::peak_level(&p, n, coder.input_tokens, coder.output_tokens)
            .system_tps()
    };
    let (at16, at24, at32) = (system(16), system(24), system(32));
    assert!(at24 > at16 && at24 > at32 * 1.3, "{at16} {at24} {at32}");
}
