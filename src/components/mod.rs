//! Reusable view pieces shared by every section: the ECharts chart (with its export helpers),
//! error panel, highlight cards, table scroll boxes, theme toggle, and deferring work until
//! after a paint.
//!
//! Escaping: report text reaches the page only as Leptos text nodes and attributes (escaped by
//! Leptos) and as ECharts canvas text; the charts' HTML tooltip formatter escapes series names
//! itself (`charts::plot`). `tests/browser/` checks a hostile model name stays inert.

pub mod after_paint;
pub mod chart;
pub mod controls;
pub mod echarts;
pub mod error_panel;
pub mod export;
pub mod highlight;
pub mod sticky_bars;
pub mod table_scroll;

pub use after_paint::{after_next_paint, painted_once};
pub use chart::ChartView;
pub use controls::{NumberField, ThemeToggle};
pub use error_panel::{ErrorPanel, SectionsUnavailablePanel};
pub use highlight::{HighlightCard, HighlightGrid};
pub use sticky_bars::measure_sticky_bars;
pub use table_scroll::{table_name, TableScroll};
