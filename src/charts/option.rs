//! The ECharts option every chart renders to: charming's component and series types, gathered
//! in a struct holding only what the charts draw (line series on one cartesian grid).
//!
//! Why not `charming::Chart`: its serializer covers every component and series kind ECharts has
//! (3D axes, maps, sankey, visual maps...), and the wasm keeps all of it because any field could
//! be set at run time. That was about 80 KB of the shipped wasm; this struct's serializer only
//! reaches the types the charts use.

use charming::component::{Axis, Grid};
use charming::element::{Color, Tooltip};
use charming::series::Line;
use serde::Serialize;

/// One chart's ECharts option, serialized with ECharts' field names.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChartOption {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animation: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_color: Option<Color>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub color: Vec<Color>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tooltip: Option<Tooltip>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x_axis: Option<Axis>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub y_axis: Vec<Axis>,
    /// Every series is a line: bands are stacked lines with an area fill, thresholds and the
    /// cursor are mark lines on data-less lines.
    pub series: Vec<Line>,
    /// The legend, drawn as HTML buttons beside the canvas (keyboard-reachable, unlike
    /// ECharts' canvas legend, and one ECharts component less to ship).
    #[serde(skip)]
    pub legend: Vec<LegendEntry>,
}

/// One legend entry: a series name (raw text) and how its line is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    pub name: String,
    /// CSS colour, the series' own (every series is given its colour explicitly).
    pub color: &'static str,
    pub dash: Dash,
}

/// How a line is stroked: each compared report in its own dash, threshold lines dashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    /// The dash of the lines of compared report `report` (0: the main one).
    pub fn of_report(report: usize) -> Dash {
        [Dash::Solid, Dash::Dashed, Dash::Dotted][report % 3]
    }

    /// The CSS `border-style` (and the name the PNG export reads, public/infermeter-echarts.js).
    pub fn css(self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dashed => "dashed",
            Dash::Dotted => "dotted",
        }
    }
}
