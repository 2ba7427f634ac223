//! The data behind one chart (lines, axes, threshold lines, cursor) and its two renderings:
//! an ECharts option of `charming` types ([`ChartOption`]), and CSV. Every chart module builds
//! a [`Plot`], so the picture and the exported numbers can never disagree.

use charming::component::{Axis, Grid};
use charming::datatype::{DataPoint, DataPointItem};
use charming::element::{
    AreaStyle, AxisLabel, AxisType, Color, DimensionEncode, ItemStyle, Label, LabelPosition,
    LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant, MarkPoint, MarkPointData,
    NameLocation, SplitLine, Symbol, TextStyle, Tooltip, Trigger,
};
use charming::series::Line as LineSeries;
use infermeter_report::analysis::format::{format_grouped, format_number, samples_text};
use infermeter_report::analysis::{Estimate, MonotoneCurve};

use super::option::{ChartOption, Dash, LegendEntry};
use crate::theme::{palette, Theme};

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
/// Colour of the threshold lines: Okabe–Ito vermillion, which both palettes keep for the sixth
/// line or later (src/theme.rs).
const THRESHOLD_COLOR: &str = "#D55E00";

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

    /// The ECharts option.
    pub fn to_option(&self) -> ChartOption {
        let colors = self.theme.colors();
        let carrier_axis: Vec<usize> = {
            let mut axes: Vec<usize> = self.thresholds.iter().map(|t| t.axis).collect();
            axes.dedup();
            axes
        };
        let mut legend: Vec<LegendEntry> = Vec::new();
        let mut series: Vec<LineSeries> = Vec::new();
        for (line, color) in self.lines.iter().zip(self.line_colors()) {
            series.push(self.series(line, color));
            // An interval's edges share its line's name and legend entry: the entry shows or
            // hides them together.
            if !self.is_interval_edge(line) {
                legend.push(LegendEntry {
                    name: line.name.clone(),
                    color,
                    dash: line.dash(),
                });
            }
        }
        if !self.thresholds.is_empty() {
            legend.push(LegendEntry {
                name: THRESHOLD_SERIES.into(),
                color: THRESHOLD_COLOR,
                dash: Dash::Dashed,
            });
        }
        // Thresholds ride on data-less series (one per y axis), all named THRESHOLD_SERIES: one
        // legend entry shows or hides them all, and hiding a line leaves them.
        series.extend(carrier_axis.into_iter().map(|a| self.threshold_series(a)));
        series.extend(self.cursor_series());
        series.extend(self.marker_series());
        let tooltip = if self.item_tooltip {
            Tooltip::new()
                .trigger(Trigger::Item)
                .formatter(self.point_formatter().as_str())
        } else {
            Tooltip::new()
                .trigger(Trigger::Axis)
                .formatter(self.tooltip_formatter().as_str())
        };
        ChartOption {
            // No animation: slider and selector updates redraw at once (ECharts' update and
            // mark-line entry animations held each change back by up to a second), and a
            // report page draws a few dozen charts on load.
            animation: Some(false),
            background_color: Some(colors.background.into()),
            color: palette(self.theme)
                .iter()
                .map(|&c| Color::from(c))
                .collect(),
            tooltip: Some(tooltip.background_color(colors.tooltip_background)),
            // `contain_label` keeps tick labels inside but not axis titles: leave room for the
            // rotated y title(s) ("… (tok/s)") beyond the 48 px name gap, and the x title below.
            grid: Some(
                Grid::new()
                    .left(44)
                    .right(if self.y.len() > 1 { 44 } else { 24 })
                    .top(40)
                    .bottom(32)
                    .contain_label(true),
            ),
            x_axis: Some(self.axis(self.x.name(), None, true)),
            y_axis: self
                .y
                .iter()
                .map(|y| self.axis(&y.name, Some(&y.unit), false))
                .collect(),
            series,
            legend,
        }
    }

    /// A colour per line: one per thing shown, in order of first appearance, so a scenario has
    /// the same colour in every compared report (whose lines differ by dash and symbol). Bands
    /// are the exception: each report's band has colours of its own, since their fills overlap
    /// and a shared fill colour would blur them into one area; but a band around a line of its
    /// report (an interval) takes the line's colour.
    fn line_colors(&self) -> Vec<&'static str> {
        let palette = palette(self.theme);
        let mut shown: Vec<(Option<&str>, &str)> = Vec::new();
        self.lines
            .iter()
            .map(|line| {
                if line.overlay {
                    return self.theme.colors().text;
                }
                let band = line
                    .band
                    .as_deref()
                    .filter(|_| !self.is_interval_edge(line));
                let key = (band, line.shows.as_str());
                let index = shown.iter().position(|s| *s == key).unwrap_or_else(|| {
                    shown.push(key);
                    shown.len() - 1
                });
                palette[index % palette.len()]
            })
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

    fn axis(&self, name: &str, unit: Option<&str>, is_x: bool) -> Axis {
        let colors = self.theme.colors();
        let title = match unit {
            Some(unit) if !unit.is_empty() => format!("{name} ({unit})"),
            _ => name.to_string(),
        };
        let axis = Axis::new()
            .name(title)
            .name_location(NameLocation::Middle)
            .name_gap(if is_x { 28 } else { 48 })
            .name_text_style(TextStyle::new().color(colors.muted))
            .axis_label(AxisLabel::new().color(colors.muted))
            .split_line(SplitLine::new().line_style(LineStyle::new().color(colors.grid_line)));
        if is_x && self.x.is_log() {
            self.x_axis_range(axis.type_(AxisType::Log).log_base(2))
        } else if is_x {
            let axis = axis.type_(AxisType::Value);
            match self.x {
                // Turns are whole: no tick between turn 1 and turn 2.
                XAxis::Turn => axis.min(1).min_interval(1),
                _ => axis.min(0),
            }
        } else {
            let axis = axis.type_(AxisType::Value);
            // ECharts sizes an axis from its data only; keep a limit above the data visible.
            match self.axis_top(name) {
                Some(max) => axis.max(max),
                None => axis,
            }
        }
    }

    /// Pads the log x axis by a quarter step beyond the data on both sides. Without it the
    /// first and last points sit exactly on the grid edge, where half of their symbol lies
    /// outside the grid and the axis pointer (hence the tooltip) ignores the mouse. Labels show
    /// only the whole powers of two, not the padded ends.
    fn x_axis_range(&self, axis: Axis) -> Axis {
        let xs = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let (lo, hi) = xs
            .filter(|x| *x > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
        if !(lo.is_finite() && hi.is_finite()) {
            return axis;
        }
        let pad = 2f64.powf(X_AXIS_PAD_STEPS);
        let muted = self.theme.colors().muted;
        axis.min(lo / pad).max(hi * pad).axis_label(
            AxisLabel::new()
                .color(muted)
                .formatter(LOG2_LABEL_FORMATTER),
        )
    }

    /// A round top for the y axis named `name` when one of its thresholds lies above its data.
    fn axis_top(&self, name: &str) -> Option<f64> {
        let index = self.y.iter().position(|y| y.name == name)?;
        let data_max = self
            .lines
            .iter()
            .filter(|l| l.axis == index)
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .fold(f64::NEG_INFINITY, f64::max);
        let limit = self
            .thresholds
            .iter()
            .filter(|t| t.axis == index)
            .map(|t| t.value)
            .fold(f64::NEG_INFINITY, f64::max);
        (limit.is_finite() && limit >= data_max).then(|| nice_ceiling(limit * 1.15))
    }

    fn series(&self, line: &Line, color: &'static str) -> LineSeries {
        // ECharts stacks the first numeric dimension of a series' data, which on value and log
        // x axes is x: the edges of a band put y first (`encode` says so). The upper edge is
        // stacked on the lower one: it plots the span, and keeps its real value third for the
        // tooltip.
        let lower = if line.kind == LineKind::BandUpper {
            self.lines
                .iter()
                .find(|l| l.kind == LineKind::BandLower && l.band.is_some() && l.band == line.band)
        } else {
            None
        };
        let data: Vec<DataPoint> = line
            .points
            .iter()
            .enumerate()
            .map(|(i, &(x, y))| match (&line.band, line.kind) {
                (None, _) => self.plain_point(line, i, (x, y), color),
                (Some(_), LineKind::BandUpper) => {
                    let base = lower
                        .and_then(|l| l.points.iter().find(|p| p.0 == x))
                        .map_or(0.0, |p| p.1);
                    DataPoint::from(vec![y - base, x, y])
                }
                (Some(_), _) => DataPoint::from(vec![y, x]),
            })
            .collect();
        let dash = line.dash();
        let mut style = LineStyle::new();
        if dash != Dash::Solid {
            style = style.type_(match dash {
                Dash::Dotted => LineStyleType::Dotted,
                _ => LineStyleType::Dashed,
            });
        }
        if line.overlay {
            style = style.width(6).opacity(OVERLAY_OPACITY);
        }
        let mut series = LineSeries::new()
            .name(line.name.as_str())
            .y_axis_index(line.axis as f64)
            // Compared reports differ by symbol too, not by dash alone.
            .symbol(
                [
                    Symbol::Circle,
                    Symbol::Triangle,
                    Symbol::Rect,
                    Symbol::Diamond,
                ][line.report % 4]
                    .clone(),
            )
            .symbol_size(6)
            // Explicit, so the HTML legend shows the same colour.
            .item_style(ItemStyle::new().color(color))
            .data(data);
        if dash != Dash::Solid || line.overlay {
            series = series.line_style(style);
        }
        if line.overlay {
            series = series.symbol(Symbol::None).silent(true);
        }
        if !line.point_labels.is_empty() {
            // `{b}` is each point's name: its label (plain_point).
            series = series.label(
                Label::new()
                    .show(true)
                    .formatter("{b}")
                    .position(LabelPosition::Top)
                    .color(self.theme.colors().muted)
                    .font_size(10),
            );
        }
        if let Some(band) = &line.band {
            series = series
                .stack(band.as_str())
                .encode(DimensionEncode::new().x(1).y(0));
        }
        if self.is_interval_edge(line) {
            // An interval is a faint area around its line, not two more lines.
            series = series
                .symbol(Symbol::None)
                .line_style(LineStyle::new().opacity(0.0));
        }
        if line.kind == LineKind::BandUpper {
            series = series.area_style(AreaStyle::new().opacity(0.25));
        }
        if line.kind == LineKind::Points {
            series = series
                .symbol_size(5)
                .line_style(LineStyle::new().opacity(0.0));
        }
        if let Some(points) = self.cursor_points(line) {
            series = series.mark_point(points);
        }
        series
    }

    /// A point of a plain line: plain `[x, y]`, or with its label (as the point's name), drawn
    /// hollow when only indicative (the line's colour as its ring only), faint when faded.
    fn plain_point(&self, line: &Line, i: usize, (x, y): (f64, f64), color: &str) -> DataPoint {
        let label = line.point_labels.get(i).filter(|l| !l.is_empty());
        let faded = line.faded.get(i).copied().unwrap_or(false);
        let hollow = line.indicative_at(i).is_some();
        if label.is_none() && !faded && !hollow {
            return DataPoint::from(vec![x, y]);
        }
        let mut item = DataPointItem::new(vec![x, y]);
        if let Some(label) = label {
            item = item.name(label.as_str());
        }
        let mut style = ItemStyle::new();
        if hollow {
            style = style
                .color(self.theme.colors().background)
                .border_color(color)
                .border_width(2);
        }
        if faded {
            style = style.opacity(FADED_OPACITY);
        }
        if hollow || faded {
            item = item.item_style(style);
        }
        DataPoint::from(item)
    }

    fn threshold_series(&self, axis: usize) -> LineSeries {
        let colors = self.theme.colors();
        let lines: Vec<MarkLineVariant> = self
            .thresholds
            .iter()
            .filter(|t| t.axis == axis)
            .map(|t| {
                MarkLineVariant::Simple(
                    MarkLineData::new()
                        .name(t.label.as_str())
                        .y_axis(t.value)
                        .label(
                            // Above the line at its left end, where the lowest load has
                            // each line at its best, far from a limit; at the right end, the
                            // lines that cross it ran through the label.
                            Label::new()
                                .formatter(t.label.as_str())
                                .position(LabelPosition::InsideStartTop)
                                .color(colors.text),
                        ),
                )
            })
            .collect();
        let style = LineStyle::new()
            .type_(LineStyleType::Dashed)
            .width(2)
            .color(THRESHOLD_COLOR);
        mark_lines(THRESHOLD_SERIES, style, lines)
            .y_axis_index(axis as f64)
            .line_style(
                LineStyle::new()
                    .type_(LineStyleType::Dashed)
                    .color(colors.text),
            )
    }

    /// Marker at the cursor on `line`, when the cursor lies in its measured range.
    fn cursor_points(&self, line: &Line) -> Option<MarkPoint> {
        let at = self.cursor.filter(|_| self.x.is_concurrency())?;
        if line.kind != LineKind::Plain {
            return None;
        }
        let estimate = estimate_at(line, at)?;
        let at = f64::from(at);
        let kind = if estimate.measured {
            "measured"
        } else {
            "interpolated"
        };
        Some(MarkPoint::new().data(vec![MarkPointData::new()
                .name(kind)
                .x_axis(at)
                .y_axis(estimate.value)
                // ECharts labels the point with this number as JavaScript writes it, which for
                // the shortest decimal format_number gives is those same digits.
                .value(format_number(estimate.value).parse().unwrap_or(estimate.value))]))
    }

    /// Vertical dashed line at the cursor, labelled with its concurrency and kind.
    fn cursor_series(&self) -> Option<LineSeries> {
        let at = self.cursor.filter(|_| self.x.is_concurrency())?;
        let estimates = self.cursor_estimates();
        if estimates.iter().all(|(_, e)| e.is_none()) {
            return None;
        }
        let measured = estimates.iter().filter_map(|(_, e)| *e).all(|e| e.measured);
        let label = format!(
            "{at} ({})",
            if measured { "measured" } else { "interpolated" }
        );
        let style = LineStyle::new()
            .type_(LineStyleType::Dotted)
            .color(self.theme.colors().muted);
        let line = MarkLineData::new()
            .x_axis(f64::from(at))
            .label(Label::new().formatter(label.as_str()));
        Some(mark_lines(
            "Cursor",
            style,
            vec![MarkLineVariant::Simple(line)],
        ))
    }

    /// Dotted vertical line at [`Plot::marker_x`], labelled.
    fn marker_series(&self) -> Option<LineSeries> {
        let (x, label) = self.marker_x.as_ref()?;
        let style = LineStyle::new()
            .type_(LineStyleType::Dotted)
            .width(2)
            .color(THRESHOLD_COLOR);
        let line = MarkLineData::new().x_axis(*x).label(
            Label::new()
                .formatter(label.as_str())
                .color(self.theme.colors().text),
        );
        Some(mark_lines(
            MARKER_SERIES,
            style,
            vec![MarkLineVariant::Simple(line)],
        ))
    }

    /// Tooltip of the hovered point alone: its line's name and its [`Line::details`], escaped
    /// by the function (public/infermeter-echarts.js) like every tooltip.
    fn point_formatter(&self) -> String {
        let texts: Vec<&Vec<Vec<String>>> = self.lines.iter().map(|l| &l.details).collect();
        format!(
            "{POINT_FORMATTER}:{}",
            serde_json::json!({ "texts": texts })
        )
    }

    /// Tooltip listing every series at the hovered x with its unit. It shows every value as
    /// the page writes it: each point's x and y, formatted here by the report crate's one
    /// formatter, travel with the chart (`texts`, by series and point), so the tooltip formats
    /// nothing itself. Its output is HTML: the function (public/infermeter-echarts.js) escapes
    /// every string, series names included.
    fn tooltip_formatter(&self) -> String {
        // A point's note carries its unit.
        let units: Vec<&str> = self
            .lines
            .iter()
            .map(|l| match l.kind {
                LineKind::Points => "",
                _ => self.y.get(l.axis).map_or("", |y| y.unit.as_str()),
            })
            .collect();
        // An interval's edges say nothing of their own: the line's value carries its interval.
        let texts: Vec<Vec<[String; 2]>> = self
            .lines
            .iter()
            .map(|l| match (self.is_interval_edge(l), self.interval_of(l)) {
                _ if l.kind == LineKind::Points => l
                    .points
                    .iter()
                    .zip(&l.notes)
                    .map(|(&(x, _), note)| [self.x.value_text(x), note.clone()])
                    .collect(),
                (true, _) => Vec::new(),
                (false, Some((low, high))) => l
                    .points
                    .iter()
                    .map(|&(x, y)| {
                        let at = |edge: &Line| edge.points.iter().find(|p| p.0 == x).map(|p| p.1);
                        let y = match (at(low), at(high)) {
                            (Some(lo), Some(hi)) => format!(
                                "{} (95% interval {}–{})",
                                format_number(y),
                                format_number(lo),
                                format_number(hi)
                            ),
                            _ => format_number(y),
                        };
                        [self.x.value_text(x), y]
                    })
                    .collect(),
                (false, None) => l
                    .points
                    .iter()
                    .enumerate()
                    .map(|(i, &(x, y))| {
                        let y = match l.indicative_at(i) {
                            Some(n) => {
                                format!("{} (indicative: {})", format_number(y), samples_text(n))
                            }
                            None => format_number(y),
                        };
                        [self.x.value_text(x), y]
                    })
                    .collect(),
            })
            .collect();
        let args = serde_json::json!({"units": units, "x": self.x.name(), "texts": texts});
        format!("{TOOLTIP_FORMATTER}:{args}")
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

/// Log2 steps of blank axis beyond the outermost points.
const X_AXIS_PAD_STEPS: f64 = 0.25;
/// Formatter names that public/infermeter-echarts.js replaces with its functions (an option
/// crosses to JS as JSON, which has none). Labels whole powers of two only (the padded axis
/// ends are not).
const LOG2_LABEL_FORMATTER: &str = "infermeter:log2-label";
/// Followed by `:` and the arguments as a JSON object.
const TOOLTIP_FORMATTER: &str = "infermeter:tooltip";
/// The item tooltip's formatter, followed by `:` and its arguments.
const POINT_FORMATTER: &str = "infermeter:point";
/// Name of the series carrying the vertical marker.
const MARKER_SERIES: &str = "Target";
/// Opacity of a faded point: visible, yet clearly behind the others.
const FADED_OPACITY: f64 = 0.3;
/// Opacity of an overlay line: the lines under it show through.
const OVERLAY_OPACITY: f64 = 0.3;

/// A series without data carrying silent mark lines drawn in `style`: threshold lines, the
/// cursor, a target.
fn mark_lines(name: &str, style: LineStyle, lines: Vec<MarkLineVariant>) -> LineSeries {
    LineSeries::new()
        .name(name)
        .data(Vec::<Vec<f64>>::new())
        .mark_line(
            MarkLine::new()
                .silent(true)
                .symbol(vec![Symbol::None, Symbol::None])
                .line_style(style)
                .data(lines),
        )
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

/// Smallest 1, 2, 2.5 or 5 times a power of ten at or above `v` (a readable axis top).
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    let power = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&c| c >= v)
        .unwrap_or(10.0 * power)
}

#[cfg(test)]
mod tests {
    use super::*;

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
