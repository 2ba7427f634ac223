//! Every measured level of a report as one table, the way `vllm bench serve` or guidellm print
//! their results: request outcomes, request rate and each latency and speed at the chosen
//! statistic. Nothing a run measured is left out of the page, and the CSV carries it all.

use infermeter_report::analysis::findings::headline::indicative_note;
use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;
use infermeter_report::lengths::LevelLengths;
use infermeter_report::{LoadMode, Stat};

use crate::charts::plot::csv_field;
use crate::charts::Source;

/// The per-level figures, in the order `vllm bench serve` reports them. GPU power, a mean over
/// the window rather than a distribution, stays in the power section.
const METRICS: [Metric; 11] = [
    Metric::Ttft,
    Metric::Tpot,
    Metric::Itl,
    Metric::InterChunk,
    Metric::E2e,
    Metric::QueueWait,
    Metric::DecodeTokS,
    Metric::PrefillTokS,
    Metric::InputTokens,
    Metric::OutputTokens,
    Metric::SystemOutputTokS,
];

/// One level's row.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementRow {
    pub scenario: String,
    pub mode: LoadMode,
    /// "8 concurrent", "queue depth 64", "2 req/s", "16 users (caching allowed)".
    pub load: String,
    pub ok: u64,
    pub total: u64,
    pub requests_per_s: Option<f64>,
    /// One value per [`MeasurementTable::metrics`], in display units.
    pub values: Vec<Option<f64>>,
    /// Per value, "indicative: p99 of 36 samples" when it is a percentile on too few samples.
    pub indicative: Vec<Option<String>>,
    /// The lengths the level's requests had, where they were asked lengths of their own (a
    /// prompt file, drawn lengths): "input mean 144 (p5–p95 41–240), output mean 24 (…)".
    pub lengths: Option<String>,
}

/// All levels of one report, with the metrics any level measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementTable {
    pub metrics: Vec<Metric>,
    pub rows: Vec<MeasurementRow>,
    /// Whether any level had varied lengths: the table then ends with their column.
    pub lengths: bool,
}

/// "TTFT (s)": a column heading, the metric's short label with its display unit.
pub fn heading(metric: Metric) -> String {
    format!("{} ({})", metric.short_label(), metric.unit())
}

/// Every level of `source`'s report, series in report order, `stat` of each distribution.
/// A metric no level measured gets no column.
pub fn measurements(source: &Source, stat: Stat) -> MeasurementTable {
    let analysis = &source.analysis;
    let report = analysis.report();
    let levels = || {
        report
            .series
            .iter()
            .flat_map(|s| s.levels.iter().map(move |l| (s, l)))
    };
    let metrics: Vec<Metric> = METRICS
        .into_iter()
        .filter(|m| levels().any(|(_, l)| m.value(l, stat).is_some()))
        .collect();
    let rows = levels()
        .map(|(series, level)| MeasurementRow {
            scenario: analysis
                .scenario(&series.scenario)
                .map_or_else(|| series.scenario.clone(), |s| s.name.clone()),
            mode: series.mode,
            load: match series.cache {
                Some(cache) => format!("{} ({})", series.mode.describe_level(level), cache.label()),
                None => series.mode.describe_level(level),
            },
            ok: level.requests.ok,
            total: level.requests.total(),
            requests_per_s: level.requests_per_s,
            values: metrics
                .iter()
                .map(|m| m.value(level, stat).map(|v| m.to_display(v)))
                .collect(),
            indicative: metrics
                .iter()
                .map(|m| {
                    m.samples(level)
                        .filter(|&n| stat.is_indicative(n))
                        .map(|n| indicative_note(stat, n))
                })
                .collect(),
            lengths: LevelLengths::of(level).map(|l| l.text()),
        })
        .collect::<Vec<MeasurementRow>>();
    let lengths = rows.iter().any(|r| r.lengths.is_some());
    MeasurementTable {
        metrics,
        rows,
        lengths,
    }
}

impl MeasurementTable {
    /// Column headings, as [`MeasurementTable::cells`] fills them.
    pub fn headings(&self) -> Vec<String> {
        ["Scenario", "Mode", "Load", "Requests OK", "Requests/s"]
            .into_iter()
            .map(String::from)
            .chain(self.metrics.iter().map(|m| heading(*m)))
            .chain(self.lengths.then(|| LENGTHS.to_string()))
            .collect()
    }

    /// Each row's cells, as [`MeasurementTable::headings`] names them.
    pub fn row_cells(&self, row: &MeasurementRow) -> Vec<String> {
        let mut cells = row.cells();
        if self.lengths {
            cells.push(row.lengths.clone().unwrap_or_else(|| "fixed".into()));
        }
        cells
    }

    /// Per cell of [`MeasurementTable::row_cells`], why it is only indicative, if it is.
    pub fn row_notes(&self, row: &MeasurementRow) -> Vec<Option<String>> {
        let mut notes = row.cell_notes();
        if self.lengths {
            notes.push(None);
        }
        notes
    }
}

/// The heading of the realised lengths' column.
const LENGTHS: &str = "Lengths realised (tokens)";

impl MeasurementRow {
    /// Per cell of [`MeasurementRow::cells`], why it is only indicative, if it is.
    pub fn cell_notes(&self) -> Vec<Option<String>> {
        std::iter::repeat_n(None, 5)
            .chain(self.indicative.iter().cloned())
            .collect()
    }

    /// The row as the page shows it: figures rounded as everywhere else, "—" where a level
    /// has no value.
    pub fn cells(&self) -> Vec<String> {
        let figure = |v: Option<f64>| v.map_or_else(|| "—".to_string(), format_number);
        [
            self.scenario.clone(),
            self.mode.label().to_string(),
            self.load.clone(),
            format!("{} of {}", self.ok, self.total),
            figure(self.requests_per_s),
        ]
        .into_iter()
        .chain(self.values.iter().map(|v| figure(*v)))
        .collect()
    }
}

/// The table as CSV, figures unrounded.
pub fn to_csv(table: &MeasurementTable, stat: Stat) -> String {
    let mut out = String::from("scenario,mode,load,requests_ok,requests_total,requests_per_s");
    for m in &table.metrics {
        out.push(',');
        out.push_str(&csv_field(&format!("{} {}", heading(*m), stat.label())));
    }
    if table.lengths {
        out.push(',');
        out.push_str(&csv_field(LENGTHS));
    }
    out.push('\n');
    let figure = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    for r in &table.rows {
        out.push_str(&format!(
            "{},{},{},{},{},{}",
            csv_field(&r.scenario),
            r.mode.label(),
            csv_field(&r.load),
            r.ok,
            r.total,
            figure(r.requests_per_s)
        ));
        for v in &r.values {
            out.push(',');
            out.push_str(&figure(*v));
        }
        if table.lengths {
            out.push(',');
            out.push_str(&csv_field(r.lengths.as_deref().unwrap_or("fixed")));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn one_row_per_level_with_the_chosen_statistic() {
        let report = sample();
        let table = with_sources(&report, |s| measurements(&s[0], Stat::P99));
        let levels: usize = report.series.iter().map(|s| s.levels.len()).sum();
        assert_eq!(table.rows.len(), levels);
        let first = &report.series[0].levels[0];
        let row = &table.rows[0];
        assert_eq!(row.total, first.requests.total());
        let column = |metric| table.metrics.iter().position(|m| *m == metric).unwrap();
        let ttft = column(Metric::Ttft);
        assert_eq!(row.values[ttft], first.metrics.ttft_s.as_ref().unwrap().p99);
        // ITL in ms, as every chart shows it.
        assert_eq!(
            row.values[column(Metric::Itl)],
            first
                .metrics
                .itl_s
                .as_ref()
                .unwrap()
                .p99
                .map(|s| s * 1000.0)
        );
        let burst = report
            .series
            .iter()
            .position(|s| s.mode == LoadMode::Burst)
            .unwrap();
        let at: usize = report.series[..burst].iter().map(|s| s.levels.len()).sum();
        assert!(table.rows[at].load.ends_with(" queue depth") || table.rows[at].load == "1 user");
        assert_eq!(heading(Metric::Itl), "ITL (ms)");
        let headings = table.headings();
        let cells = row.cells();
        assert_eq!(cells.len(), headings.len());
        assert_eq!(headings[5 + ttft], "TTFT (s)");
        assert_eq!(cells[5 + ttft], format_number(row.values[ttft].unwrap()));
        assert_eq!(cells[3], format!("{} of {}", row.ok, row.total));
        // Chunk gaps too, which the charts do not show.
        assert!(headings.contains(&"Inter-chunk latency (ms)".to_string()));
        // p99 of the single-user level's few requests is only indicative; pooled token gaps are
        // many enough.
        let notes = row.cell_notes();
        assert_eq!(notes.len(), cells.len());
        let ttft_samples = first.metrics.ttft_s.as_ref().unwrap().count.unwrap();
        assert_eq!(
            notes[5 + ttft],
            Some(format!("indicative: p99 of {ttft_samples} samples"))
        );
        assert_eq!(notes[5 + column(Metric::Itl)], None);
    }

    #[test]
    fn unmeasured_metrics_get_no_column_and_the_csv_keeps_every_figure() {
        let mut report = sample();
        for level in report.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
            level.metrics.queue_wait_s = None;
        }
        report.scenarios[0].name = "=HYPERLINK(\"x\"), \"quoted\"".into();
        let table = with_sources(&report, |s| measurements(&s[0], Stat::Mean));
        assert!(!table.metrics.contains(&Metric::QueueWait));
        let csv = to_csv(&table, Stat::Mean);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), table.rows.len() + 1);
        assert!(lines[0].contains("TTFT (s) mean"), "{}", lines[0]);
        let columns = lines[0].split(',').count();
        let ttft = report.series[0].levels[0]
            .metrics
            .ttft_s
            .as_ref()
            .unwrap()
            .mean;
        // A name that would be a spreadsheet formula is quoted and defused.
        assert!(
            lines[1].starts_with("\"'=HYPERLINK(\"\"x\"\"), \"\"quoted\"\"\",peak,single user,"),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains(&format!(",{ttft},")), "{}", lines[1]);
        assert!(lines[1..]
            .iter()
            .filter(|l| !l.starts_with('"'))
            .all(|l| l.split(',').count() == columns));
    }

    #[test]
    fn varied_lengths_get_a_column_of_their_realised_spread() {
        let report = sample();
        let fixed = with_sources(&report, |s| measurements(&s[0], Stat::Mean));
        assert!(!fixed.lengths && !fixed.headings().contains(&LENGTHS.to_string()));
        let mut report = sample();
        report.series[0].levels[0].per_request = Some(infermeter_report::RequestColumns {
            status: vec![0, 0],
            output_tokens: vec![10, 30],
            input_tokens: vec![100, 300],
            ..Default::default()
        });
        let table = with_sources(&report, |s| measurements(&s[0], Stat::Mean));
        let headings = table.headings();
        assert_eq!(headings.last().unwrap(), LENGTHS);
        let cells = table.row_cells(&table.rows[0]);
        assert_eq!(cells.len(), headings.len());
        assert_eq!(table.row_notes(&table.rows[0]).len(), headings.len());
        assert!(
            cells
                .last()
                .unwrap()
                .starts_with("input mean 200 (p5–p95 110–290)"),
            "{cells:?}"
        );
        assert_eq!(table.row_cells(&table.rows[1]).last().unwrap(), "fixed");
        let csv = to_csv(&table, Stat::Mean);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .ends_with("\"input mean 200 (p5–p95 110–290), output mean 20 (p5–p95 11–29)\""),
            "{csv}"
        );
    }
}
