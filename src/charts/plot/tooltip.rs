//! The tooltips of a [`Plot`]: each names a function of public/infermeter-echarts.js with its
//! arguments as JSON (an option crosses to JS as JSON, which has no functions), every value
//! already written as the page writes it.

use infermeter_report::analysis::format::{format_number, samples_text};

use super::{Line, LineKind, Plot};

/// The axis tooltip's formatter, followed by `:` and its arguments as a JSON object.
const TOOLTIP_FORMATTER: &str = "infermeter:tooltip";
/// The item tooltip's formatter, followed by `:` and its arguments.
const POINT_FORMATTER: &str = "infermeter:point";

impl Plot {
    /// Tooltip of the hovered point alone: its line's name and its [`Line::details`], escaped
    /// by the function (public/infermeter-echarts.js) like every tooltip.
    pub(super) fn point_formatter(&self) -> String {
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
    pub(super) fn tooltip_formatter(&self) -> String {
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
}
