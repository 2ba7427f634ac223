//! The interpolation cursor's table: each series' decode speed, ITL and system throughput at
//! the cursor, read from the same plots the charts draw (monotone interpolation between
//! measured levels, never beyond them).

use infermeter_report::analysis::format::with_unit;

use crate::charts::fastest::{decode, itl};
use crate::charts::plot::Plot;
use crate::charts::{throughput, Source};
use crate::state::ViewState;

/// One row of the cursor table: a series and its estimate per metric ("—" outside its range).
#[derive(Debug, Clone, PartialEq)]
pub struct CursorRow {
    pub series: String,
    /// (value with unit, measured?) per column of [`CURSOR_COLUMNS`].
    pub cells: Vec<Option<(String, bool)>>,
}

pub const CURSOR_COLUMNS: [&str; 3] = ["Decode speed", "Inter-token latency", "System throughput"];

/// The rows at the view's cursor.
pub fn cursor_rows(sources: &[Source], view: &ViewState) -> Vec<CursorRow> {
    let plots: [Plot; 3] = [
        decode(sources, view),
        itl(sources, view),
        throughput::system(sources, view),
    ];
    let mut rows: Vec<CursorRow> = Vec::new();
    for (column, plot) in plots.iter().enumerate() {
        let unit = plot.y[0].unit.clone();
        for (line, estimate) in plot.cursor_estimates() {
            let row = match rows.iter_mut().find(|r| r.series == line.name) {
                Some(row) => row,
                None => {
                    rows.push(CursorRow {
                        series: line.name.clone(),
                        cells: vec![None; CURSOR_COLUMNS.len()],
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            row.cells[column] = estimate.map(|e| (with_unit(e.value, &unit), e.measured));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::analysis::coverage::concurrency_domain;

    #[test]
    fn cursor_rows_mark_measured_and_interpolated_values() {
        let report = sample();
        let levels = peak_levels(&report);
        let domain = concurrency_domain([&report]).unwrap();
        assert_eq!(
            (domain.low, domain.high),
            (levels[0], *levels.last().unwrap())
        );
        let measured = ViewState {
            at: Some(levels[1]),
            ..ViewState::default()
        };
        let rows = with_sources(&report, |s| cursor_rows(s, &measured));
        assert_eq!(rows.len(), peak_scenarios(&report));
        assert!(rows
            .iter()
            .flat_map(|r| &r.cells)
            .all(|c| c.as_ref().is_some_and(|c| c.1)));
        let between = ViewState {
            at: Some(levels[2] + 1),
            ..ViewState::default()
        };
        let rows = with_sources(&report, |s| cursor_rows(s, &between));
        assert!(rows
            .iter()
            .flat_map(|r| &r.cells)
            .all(|c| c.as_ref().is_some_and(|c| !c.1)));
        let beyond = ViewState {
            at: Some(domain.high + 5),
            ..ViewState::default()
        };
        let rows = with_sources(&report, |s| cursor_rows(s, &beyond));
        assert!(rows.iter().flat_map(|r| &r.cells).all(Option::is_none));
    }
}
