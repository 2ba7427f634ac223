//! Virtual-time calibration against the published reference reports.

#[test]
fn every_reference_figure_is_within_15_percent() {
    let table = infermeter_sim::calibration_table();
    let mut bad = Vec::new();
    for r in &table {
        println!("{:<85} ref {:>9.3}  sim {:>9.3}  {:+6.1}%", r.label, r.reference, r.simulated, 100.0 * r.relative_error());
        if !(r.relative_error().abs() <= 0.15) {
            bad.push(r.label.clone());
        }
    }
    assert_eq!(table.len(), 12);
    assert!(bad.is_empty(), "outside +-15%: {bad:?}");
}
