//! A [`Plot`] as an ECharts option of `charming` types ([`ChartOption`]): one series per line
//! (bands stacked, intervals as faint areas, indicative points hollow), the axes, the colours,
//! and the mark lines of thresholds, the cursor and a target.

use charming::component::{Axis, Grid};
use charming::datatype::{DataPoint, DataPointItem};
use charming::element::{
    AreaStyle, AxisLabel, AxisType, Color, DimensionEncode, ItemStyle, Label, LabelPosition,
    LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant, MarkPoint, MarkPointData,
    NameLocation, SplitLine, Symbol, TextStyle, Tooltip, Trigger,
};
use charming::series::Line as LineSeries;
use infermeter_report::analysis::format::format_number;

use super::{estimate_at, Line, LineKind, Plot, XAxis, THRESHOLD_SERIES};
use crate::charts::option::{ChartOption, Dash, LegendEntry};
use crate::theme::palette;

/// Colour of the threshold lines: Okabe–Ito vermillion, which both palettes keep for the sixth
/// line or later (src/theme.rs).
pub(super) const THRESHOLD_COLOR: &str = "#D55E00";

impl Plot {
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
            // hides them together; so do the calls of a swim lane.
            let listed = legend.iter().any(|e| e.name == line.name);
            let shared = matches!(line.kind, LineKind::Lane | LineKind::Link) && listed;
            if !self.is_interval_edge(line) && !shared {
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
        // Threshold lines ride on data-less series (one per y axis), all named
        // THRESHOLD_SERIES: one legend entry shows or hides them all, and hiding a line leaves
        // them.
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
    pub(super) fn line_colors(&self) -> Vec<&'static str> {
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
        } else if self.x == XAxis::JobSeconds {
            // Swim lanes: one whole-numbered lane per agent, the root's on top.
            axis.type_(AxisType::Value).inverse(true).min_interval(1)
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
        let dash = line.dash();
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
            .data(self.series_data(line, color));
        if dash != Dash::Solid || line.overlay {
            series = series.line_style(stroke(line));
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
        match line.kind {
            LineKind::Lane => {
                series = series
                    .symbol_size(9)
                    .line_style(LineStyle::new().width(9).color(color));
            }
            LineKind::Link => {
                series = series.symbol(Symbol::None).silent(true).line_style(
                    LineStyle::new()
                        .width(1)
                        .type_(LineStyleType::Dotted)
                        .color(color),
                );
            }
            _ => {}
        }
        if let Some(points) = self.cursor_points(line) {
            series = series.mark_point(points);
        }
        series
    }

    /// The data of `line`'s series: plain points, or a band edge's `[y, x]` (the upper edge's
    /// `[span, x, y]`).
    fn series_data(&self, line: &Line, color: &'static str) -> Vec<DataPoint> {
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
        line.points
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
            .collect()
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
                            Label::new()
                                .formatter(t.label.as_str())
                                .position(self.threshold_label_end(axis, t.value))
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

    /// Where a threshold's label goes: above the line at its left end, where the lowest load
    /// has each line at its best, far from a limit; at the right end when a line already
    /// crosses the threshold between its first two points (it would run through the label) and
    /// none crosses it between its last two.
    fn threshold_label_end(&self, axis: usize, value: f64) -> LabelPosition {
        let crosses = |a: Option<&(f64, f64)>, b: Option<&(f64, f64)>| match (a, b) {
            (Some(a), Some(b)) => (a.1 - value) * (b.1 - value) < 0.0,
            _ => false,
        };
        let on_axis = || self.lines.iter().filter(|l| l.axis == axis);
        let at_start = on_axis().any(|l| crosses(l.points.first(), l.points.get(1)));
        let at_end = on_axis().any(|l| {
            let n = l.points.len();
            n >= 2 && crosses(l.points.get(n - 2), l.points.last())
        });
        if at_start && !at_end {
            LabelPosition::InsideEndTop
        } else {
            LabelPosition::InsideStartTop
        }
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
                .value(
                    crate::number::parse_f64(&format_number(estimate.value))
                        .unwrap_or(estimate.value),
                )]))
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
}

/// Log2 steps of blank axis beyond the outermost points.
const X_AXIS_PAD_STEPS: f64 = 0.25;
/// A formatter name that public/infermeter-echarts.js replaces with its function (an option
/// crosses to JS as JSON, which has none): labels whole powers of two only (the padded axis
/// ends are not).
const LOG2_LABEL_FORMATTER: &str = "infermeter:log2-label";
/// Name of the series carrying the vertical marker.
const MARKER_SERIES: &str = "Target";
/// Opacity of a faded point: visible, yet clearly behind the others.
const FADED_OPACITY: f64 = 0.3;
/// Opacity of an overlay line: the lines under it show through.
const OVERLAY_OPACITY: f64 = 0.3;

/// The stroke of a dashed or overlay line: its dash, an overlay wide and half-transparent.
fn stroke(line: &Line) -> LineStyle {
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
    style
}

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

/// Smallest 1, 2, 2.5 or 5 times a power of ten at or above `v` (a readable axis top).
pub(super) fn nice_ceiling(v: f64) -> f64 {
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
