//! What `infermeter summary --json` prints: a versioned shape scripts can rely on, with the
//! findings of each report and the decision across them. Its JSON Schema is
//! `data/schema/summary.schema.json` ([`crate::json_schema::summary_schema`]).

use schemars::JsonSchema;
use serde::Serialize;

use crate::analysis::configuration::ConfigurationFindings;
use crate::analysis::Findings;

/// Semver of the `summary --json` shape, apart from the report format's. 1.0.0: the first
/// versioned shape (`format`, `reports[]` with each report's findings, `configuration`); the
/// unversioned output before it was one report's findings alone. 1.1.0: a ranking row's
/// `standing` (only limits found are ranked), `measure_further` and `mode`, a scenario
/// ranking's `verdict`, a series' `cache`, and the options' `measured_only`. 1.2.0: a
/// report's `findings.agents`, the figures of its agentic jobs (absent without them). 1.3.0:
/// an agents level's `jobs_per_user_hour` and `job_rate`, a scenario's `rate_levels` and
/// `capacity_rate` (agentic jobs arriving at a rate).
pub const SUMMARY_FORMAT: &str = "1.3.0";

/// `infermeter summary --json`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Summary {
    /// [`SUMMARY_FORMAT`]: a reader accepts any minor version of its own major version.
    pub format: String,
    /// Each report given, in order.
    pub reports: Vec<SummaryReport>,
    /// Which configuration serves the users under the SLO for the least money, across them.
    pub configuration: ConfigurationFindings,
}

/// One report of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SummaryReport {
    /// The file as given on the command line.
    pub file: String,
    /// Its short label among the reports given.
    pub label: String,
    pub findings: Findings,
}
