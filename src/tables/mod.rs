//! The rows of the page's data tables, built from the reports and the view: what a section lays
//! out as a table, apart from the charts and the sentences.

pub mod agents;
pub mod capacity;
pub mod cursor;
pub mod measurements;
pub mod users;
