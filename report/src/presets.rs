//! Scenario lists, use cases with thresholds, experience bands and the metric glossary from the
//! reference reports, shared by the collector (what to run) and the viewer (what to show).
