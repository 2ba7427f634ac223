//! The data behind one chart (lines, axes, threshold lines, cursor) and its two renderings:
//! an ECharts option of `charming` types ([`ChartOption`], built in plot/echarts.rs with its
//! tooltips in plot/tooltip.rs), and CSV. Every chart module builds a [`Plot`], so the picture
//! and the exported numbers can never disagree.
//!
//! [`ChartOption`]: super::option::ChartOption

mod echarts;
mod tooltip;

use infermeter_report::analysis::format::{format_grouped, format_number};
use infermeter_report::analysis::{Estimate, MonotoneCurve};

use super::option::Dash;
use crate::theme::Theme;

/// What the x axis measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Requests in flight (peak mode): doubling sweeps read best on a log2 axis.
    ConcurrentUsers,
    /// Requests sent at once (burst mode).
    QueueDepth,
    /// Input tokens of each scenario.
    ContextTokens,
    /// Simultaneous users, each a closed loop of sessions (users mode).
    Users,
    /// A session's turn index, 1 first: a linear axis of whole numbers.
    Turn,
    /// Seconds since the level started (a timeline): linear.
    Seconds,
    /// Each user's output tokens per second (a Pareto chart): linear.
    Interactivity,
    /// End-to-end latency in seconds (a Pareto chart's second view): linear.
    E2eLatency,
    /// One request's input tokens (requests of varied lengths): linear.
    RequestInput,
    /// One request's output tokens: linear.
    RequestOutput,
    /// Tokens of a request, input or output (length histograms): linear.
    RequestTokens,
    /// Agentic jobs in flight at once (agents mode): a doubling sweep, log2.
    Jobs,
    /// Seconds since a job's first call (its swim lanes): linear.
    JobSeconds,
}

impl XAxis {
    pub fn name(self) -> &'static str {
        match self {
            XAxis::ConcurrentUsers => "Concurrent users",
            XAxis::QueueDepth => "Queue depth (requests)",
            XAxis::ContextTokens => "Context length (input tokens)",
            XAxis::Users => "Simultaneous users",
            XAxis::Turn => "Turn",
            XAxis::Seconds => "Seconds since the level started",
            XAxis::Interactivity => "Interactivity (tok/s per user)",
            XAxis::E2eLatency => "End-to-end latency (s)",
            XAxis::RequestInput => "Input tokens of the request",
            XAxis::RequestOutput => "Output tokens of the request",
            XAxis::RequestTokens => "Tokens per request",
            XAxis::Jobs => "Concurrent jobs",
            XAxis::JobSeconds => "Seconds since the job started",
        }
    }

    /// Loads and contexts double from point to point and read best on a log2 axis; turns,
    /// seconds, speeds and latencies step evenly.
    pub fn is_log(self) -> bool {
        !matches!(
            self,
            XAxis::Turn
                | XAxis::Seconds
                | XAxis::Interactivity
                | XAxis::E2eLatency
                | XAxis::RequestInput
                | XAxis::RequestOutput
                | XAxis::RequestTokens
                | XAxis::JobSeconds
        )
    }

    /// A value on this axis as the page writes it: "32", or "32,768" input tokens.
    pub fn value_text(self, x: f64) -> String {
        match self {
            XAxis::ContextTokens => format_grouped(x),
            _ => format_number(x),
        }
    }

    /// Whether the interpolation cursor (a concurrency of requests) applies to this axis.
    pub fn is_concurrency(self) -> bool {
        matches!(self, XAxis::ConcurrentUsers | XAxis::QueueDepth)
    }
}

/// A y axis: name and display unit.
#[derive(Debug, Clone, PartialEq)]
pub struct YAxis {
    pub name: String,
    pub unit: String,
}

impl YAxis {
    pub fn new(name: impl Into<String>, unit: impl Into<String>) -> YAxis {
        YAxis {
            name: name.into(),
            unit: unit.into(),
        }
    }
}

/// How a line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Plain,
    /// Lower edge of a band (drawn as a line, the area above it is filled up to the upper edge).
    BandLower,
    /// Upper edge of a band, stacked on the lower edge of the same `band` group.
    BandUpper,
    /// A model's prediction, not a measurement: drawn dashed whatever report it is of, and
    /// never read by the interpolation cursor.
    Predicted,
    /// Points alone, unjoined: one per request. Each point's tooltip text is its `notes`
    /// entry (the value with its unit and what the request was).
    Points,
    /// One call of a swim lane: a thick bar between its two points (send, last token), each
    /// naming the call in an item tooltip ([`Line::details`]). Calls of one agent share a name,
    /// hence a colour and one legend entry.
    Lane,
    /// An arrow between lanes (a spawn or a join): thin, dotted, without symbols, silent.
    Link,
}

/// One series: display name (raw text, escaped when rendered), y axis index, points in display
/// units, ascending x.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    /// What the line shows, the same in every compared report (a scenario, "ITL (left axis)"):
    /// lines showing the same thing share a colour, and each report draws its own dash.
    pub shows: String,
    /// The compared report the line comes from (0: the main one).
    pub report: usize,
    pub axis: usize,
    pub points: Vec<(f64, f64)>,
    pub kind: LineKind,
    /// Stack group of a band (one band per compared report).
    pub band: Option<String>,
    /// The input length of the scenario a per-scenario line shows, for sentences that compare
    /// contexts.
    pub input_tokens: Option<u32>,
    /// Per point (by index; empty: none), its sample count when it is a percentile resting on
    /// too few samples (`Stat::is_indicative`): drawn hollow, and the tooltip says so.
    pub indicative: Vec<Option<u64>>,
    /// Per point (by index; empty: none): a short label drawn above it (a level's load).
    pub point_labels: Vec<String>,
    /// Per point (by index; empty: none): drawn faint (a point off a Pareto frontier).
    pub faded: Vec<bool>,
    /// Per point (by index): the lines an item tooltip shows for it ([`Plot::item_tooltip`]).
    pub details: Vec<Vec<String>>,
    /// Drawn over the other lines to mark some of their points (a Pareto frontier): wide,
    /// half-transparent, in the text colour, without symbols of its own, and silent, so the
    /// pointer reaches the points under it.
    pub overlay: bool,
    /// Per point of a [`LineKind::Points`] line, its whole tooltip text.
    pub notes: Vec<String>,
}

impl Line {
    pub fn plain(name: impl Into<String>, axis: usize, points: Vec<(f64, f64)>) -> Line {
        let name = name.into();
        Line {
            shows: name.clone(),
            name,
            report: 0,
            axis,
            points,
            kind: LineKind::Plain,
            band: None,
            input_tokens: None,
            indicative: Vec::new(),
            notes: Vec::new(),
            point_labels: Vec::new(),
            faded: Vec::new(),
            details: Vec::new(),
            overlay: false,
        }
    }

    /// How the line is stroked: a prediction dashed, else its report's dash.
    pub fn dash(&self) -> Dash {
        match self.kind {
            LineKind::Predicted => Dash::Dashed,
            _ => Dash::of_report(self.report),
        }
    }

    /// The sample count of point `i` when it is only indicative.
    pub fn indicative_at(&self, i: usize) -> Option<u64> {
        self.indicative.get(i).copied().flatten()
    }

    /// The same line, as report `report` of those compared, showing `shows`.
    pub fn of_report(self, report: usize, shows: impl Into<String>) -> Line {
        Line {
            report,
            shows: shows.into(),
            ..self
        }
    }
}

/// A dashed horizontal limit on axis `axis`, in display units.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub axis: usize,
    pub value: f64,
    pub label: String,
}

/// Everything a chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    pub x: XAxis,
    pub y: Vec<YAxis>,
    pub lines: Vec<Line>,
    pub thresholds: Vec<Threshold>,
    /// Concurrency of the interpolation cursor, when set and the x axis is a concurrency.
    pub cursor: Option<u32>,
    pub theme: Theme,
    /// The tooltip names the hovered point alone with its [`Line::details`], instead of
    /// listing every line at the hovered x (points of different lines rarely share an x).
    pub item_tooltip: bool,
    /// A dotted vertical line at this x (display units), with its label: a target.
    pub marker_x: Option<(f64, String)>,
}

/// Name of the series carrying the threshold lines (also its legend entry).
pub const THRESHOLD_SERIES: &str = "Quality thresholds";

impl Plot {
    /// True when no line has a point: the section shows a note instead of an empty chart.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.points.is_empty())
    }

    /// The estimate of every plain line at the cursor, `None` for lines whose measured range
    /// does not reach it (we never extrapolate).
    pub fn cursor_estimates(&self) -> Vec<(&Line, Option<Estimate>)> {
        let Some(at) = self.cursor.filter(|_| self.x.is_concurrency()) else {
            return Vec::new();
        };
        self.lines
            .iter()
            .filter(|l| l.kind == LineKind::Plain)
            .map(|l| (l, estimate_at(l, at)))
            .collect()
    }

    /// Whether `line` is an edge of the interval around a plain line of its report showing
    /// the same thing (a band whose lines share that line's name).
    fn is_interval_edge(&self, line: &Line) -> bool {
        line.band.is_some()
            && self
                .lines
                .iter()
                .any(|l| l.band.is_none() && l.report == line.report && l.shows == line.shows)
    }

    /// The edges (lower, upper) of the interval around plain `line`, if it has one.
    fn interval_of(&self, line: &Line) -> Option<(&Line, &Line)> {
        if line.band.is_some() {
            return None;
        }
        let edge = |kind| {
            self.lines.iter().find(|l| {
                l.kind == kind
                    && l.band.is_some()
                    && l.report == line.report
                    && l.shows == line.shows
            })
        };
        Some((edge(LineKind::BandLower)?, edge(LineKind::BandUpper)?))
    }

    /// `series,x_name,x,value,unit` rows; names unescaped (CSV is not HTML), fields quoted.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("series,x_axis,x,value,unit\n");
        for line in &self.lines {
            let unit = self.y.get(line.axis).map_or("", |y| y.unit.as_str());
            let name = match (self.is_interval_edge(line), line.kind) {
                (true, LineKind::BandLower) => format!("{} (95% interval, low)", line.name),
                (true, _) => format!("{} (95% interval, high)", line.name),
                (false, _) => line.name.clone(),
            };
            for &(x, y) in &line.points {
                out.push_str(&format!(
                    "{},{},{},{},{}\n",
                    csv_field(&name),
                    csv_field(self.x.name()),
                    x,
                    y,
                    csv_field(unit)
                ));
            }
        }
        out
    }
}

/// The monotone-curve estimate of `line` at concurrency `at`; `None` outside its measured range.
fn estimate_at(line: &Line, at: u32) -> Option<Estimate> {
    MonotoneCurve::new(&line.points)?.at(f64::from(at))
}

/// `s` as one CSV field: quoted when it holds a separator, and a leading `=`, `+`, `-` or `@`
/// defused with `'`, so a hostile name does not run as a spreadsheet formula when opened.
pub(crate) fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::echarts::{nice_ceiling, THRESHOLD_COLOR};
    use super::*;
    use crate::charts::option::ChartOption;
    use crate::theme::palette;

    /// Runs `expr` in Node on the chart's option as the browser gets it (JSON revived by
    /// public/infermeter-echarts.js) and returns what it prints; `None` without Node.
    fn run_in_node(chart: &ChartOption, expr: &str) -> Option<String> {
        // Read at run time: a build cache shared by checkouts can hold this binary built in
        // another one, and cargo does not rebuild it for a path change alone.
        let module = format!(
            "{}/public/infermeter-echarts.js",
            std::env::var("CARGO_MANIFEST_DIR").unwrap()
        );
        let json = serde_json::to_string(chart).unwrap();
        let script = format!(
            "import {{ parseOption }} from {module:?};\n\
             const o = parseOption({json:?}, []);\n\
             process.stdout.write(String({expr}));"
        );
        let out = match std::process::Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .output()
        {
            Ok(out) => out,
            // The test command (scripts/test.sh, CI=true) has Node: there a skip would hide a
            // failure.
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("node cannot run under CI=true ({e}): install Node.js")
            }
            Err(e) => {
                eprintln!("SKIPPED: node cannot run ({e}), so the formatter is not executed");
                return None;
            }
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn plot_of(name: &str, point: (f64, f64)) -> Plot {
        Plot {
            x: XAxis::ConcurrentUsers,
            y: vec![YAxis::new("Per-user decode speed", "tok/s")],
            lines: vec![Line::plain(name, 0, vec![point])],
            thresholds: Vec::new(),
            cursor: None,
            theme: Theme::Light,
            item_tooltip: false,
            marker_x: None,
        }
    }

    /// Up to five lines (the reference suites have four or five scenarios), none is drawn in
    /// the threshold lines' colour.
    #[test]
    fn the_first_five_lines_are_not_in_the_threshold_colour() {
        for theme in [Theme::Light, Theme::Dark] {
            assert!(!palette(theme)[..5].contains(&THRESHOLD_COLOR), "{theme:?}");
        }
    }

    /// Runs the tooltip formatter in Node with a hostile series name, as ECharts would call it.
    #[test]
    fn tooltip_formatter_escapes_series_names() {
        let hostile = "<img src=x onerror=alert(1)>";
        let call = format!(
            "o.tooltip.formatter([{{seriesIndex:0, dataIndex:0, seriesName:{hostile:?}, marker:'', value:[4, 1234.5]}}])"
        );
        let Some(text) = run_in_node(&plot_of(hostile, (4.0, 1234.5)).to_option(), &call) else {
            return;
        };
        assert_eq!(
            text,
            "Concurrent users: 4<br/>&lt;img src=x onerror=alert(1)&gt;: <b>1234.5</b> tok/s"
        );
    }

    /// The tooltip shows each value exactly as the page writes it (the report crate's
    /// format_number): on a table of values, from the rounding boundaries to an absurd one.
    #[test]
    fn tooltips_write_values_as_the_page_does() {
        let values = [
            172.49999999999994,
            9774.0,
            10_659_600.0,
            6.18,
            0.04662,
            99.96,
            5.797,
            0.0,
            -0.0001,
            1e300,
            999_999_999_999_999.0,
        ];
        let mut plot = plot_of("a", (1.0, 1.0));
        plot.lines[0].points = values
            .iter()
            .enumerate()
            .map(|(i, &v)| (f64::from(1u32 << i), v))
            .collect();
        let calls: Vec<String> = (0..values.len())
            .map(|i| {
                format!(
                    "o.tooltip.formatter([{{seriesIndex:0, dataIndex:{i}, seriesName:'a', marker:'', value:[0, 0]}}])"
                )
            })
            .collect();
        let call = format!("[{}].join('|')", calls.join(","));
        let Some(text) = run_in_node(&plot.to_option(), &call) else {
            return;
        };
        let expected: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                format!(
                    "Concurrent users: {}<br/>a: <b>{}</b> tok/s",
                    1u32 << i,
                    format_number(v)
                )
            })
            .collect();
        assert_eq!(text, expected.join("|"));
    }

    /// A band on a log x axis: ECharts stacks the first numeric dimension, so each edge must put
    /// y there (x first stacked the concurrencies, and drew the upper edge at twice its x).
    #[test]
    fn band_edges_stack_their_y_values_and_the_tooltip_reads_them() {
        let edge = |name: &str, kind, points| Line {
            kind,
            band: Some("H100".into()),
            ..Line::plain(name, 0, points)
        };
        let mut plot = plot_of("unused", (1.0, 1.0));
        plot.lines = vec![
            edge("low", LineKind::BandLower, vec![(1.0, 100.0), (8.0, 40.0)]),
            edge(
                "high",
                LineKind::BandUpper,
                vec![(1.0, 170.0), (8.0, 120.0)],
            ),
        ];
        let option = serde_json::to_value(plot.to_option()).unwrap();
        let series = option["series"].as_array().unwrap();
        for s in &series[..2] {
            assert_eq!(s["stack"], "H100");
            assert_eq!(s["encode"], serde_json::json!({"x": 1, "y": 0}));
        }
        assert_eq!(
            series[0]["data"],
            serde_json::json!([[100.0, 1.0], [40.0, 8.0]])
        );
        // The span above the lower edge, then x, then the real upper value.
        assert_eq!(
            series[1]["data"],
            serde_json::json!([[70.0, 1.0, 170.0], [80.0, 8.0, 120.0]])
        );
        let call = "o.tooltip.formatter([\
            {seriesIndex:0, dataIndex:1, seriesName:'low', marker:'', value:[40, 8], encode:{x:[1], y:[0]}},\
            {seriesIndex:1, dataIndex:1, seriesName:'high', marker:'', value:[80, 8, 120], encode:{x:[1], y:[0]}}])";
        if let Some(text) = run_in_node(&plot.to_option(), call) {
            assert_eq!(
                text,
                "Concurrent users: 8<br/>low: <b>40</b> tok/s<br/>high: <b>120</b> tok/s"
            );
        }
    }

    /// Two compared reports' bands: every edge has a colour of its own, so the overlapping
    /// fills (drawn in the upper edge's colour) can be told apart.
    #[test]
    fn compared_bands_do_not_share_a_fill_colour() {
        let edge = |report: usize, shows: &str, kind| Line {
            kind,
            band: Some(["H100", "H200"][report].into()),
            ..Line::plain(format!("{report} {shows}"), 0, vec![(1.0, 1.0)]).of_report(report, shows)
        };
        let mut plot = plot_of("unused", (1.0, 1.0));
        plot.lines = vec![
            edge(0, "Lowest", LineKind::BandLower),
            edge(0, "Highest", LineKind::BandUpper),
            edge(1, "Lowest", LineKind::BandLower),
            edge(1, "Highest", LineKind::BandUpper),
        ];
        let colors = plot.line_colors();
        let mut distinct = colors.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{colors:?}");
        // Lines that are not bands keep one colour per thing shown across reports.
        plot.lines = vec![
            Line::plain("a", 0, vec![]).of_report(0, "chat"),
            Line::plain("b", 0, vec![]).of_report(1, "chat"),
        ];
        let colors = plot.line_colors();
        assert_eq!(colors[0], colors[1]);
    }

    #[test]
    fn log2_axis_labels_only_whole_powers_of_two() {
        let chart = plot_of("a", (4.0, 1.0)).to_option();
        let call = "[4, 6, 1024].map((v) => o.xAxis.axisLabel.formatter(v)).join('|')";
        if let Some(text) = run_in_node(&chart, call) {
            assert_eq!(text, "4||1024");
        }
    }

    #[test]
    fn nice_ceiling_rounds_up_to_readable_tops() {
        assert_eq!(nice_ceiling(23.0), 25.0);
        assert_eq!(nice_ceiling(3.45), 5.0);
        assert_eq!(nice_ceiling(80.5), 100.0);
    }
}
