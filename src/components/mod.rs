//! Reusable view pieces shared by every section: the ECharts chart, error panel, highlight cards,
//! theme toggle, and the escaping and export helpers they rely on.

pub mod chart;
pub mod controls;
pub mod error_panel;
pub mod escape;
pub mod export;
pub mod highlight;

pub use chart::ChartView;
pub use controls::ThemeToggle;
pub use error_panel::ErrorPanel;
pub use escape::{escape_html, escape_template};
pub use highlight::{HighlightCard, HighlightGrid};
