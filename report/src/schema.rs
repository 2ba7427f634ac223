//! The benchmark report: the JSON written by the collector and read by the viewer.
//!
//! Every type here is plain data. Derived figures (highlights, capacity, interpolation) are
//! computed by [`crate::analysis`], never stored twice. The JSON Schema in `data/schema/` is
//! generated from these types (`cargo run -p infermeter-report --example write_schema`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod agents;
mod configuration;
mod fit;
mod from_value;
mod metadata;
mod outcome;
mod prompts;
mod record;
mod series;
mod workload;

pub use agents::*;
pub use configuration::*;
pub use fit::*;
pub use metadata::*;
pub use outcome::*;
pub use prompts::*;
pub use record::*;
pub use series::*;
pub use workload::*;

/// Version of the report format written by this build. Semver: a reader accepts any
/// minor version of its own major version and refuses a newer major version.
/// 1.1.0: `ClientHealth::event_clock`. 1.2.0 (all optional, so 1.0 and 1.1 reports stay valid):
/// `Level::per_request` (goodput under any SLO), `TestParameters::slo` and
/// `TestParameters::search` (#24); `Report::sharding` and `RequestRecord::shard` (#27);
/// `RequestRecord::retried`, `ClientHealth::retried` and `Measurement::connection_reuse` (#26);
/// sessions (`users` and `sessions` modes, `Scenario::session`, `Series::cache`,
/// `Level::sessions`), trace replay (`trace` mode), reasoning (`first_answer_s`,
/// `reasoning_tokens`), `Level::prompt_cache` and `Level::timeline` (#25).
/// 1.3.0 (all optional, so older reports stay valid): `ShardLevel::cache`, so that sharded users
/// and session-arrival levels keep their cache use (#32); `Metadata::provenance`, the figures of
/// a `Distribution` other than the mean and median, and `RequestColumns`' `max_gap`, `stalls`
/// and `jitter` may be absent, for reports imported from other tools' result files (#35);
/// `Report::fit`, the simulator fitted to the measured levels, with its coefficients, the levels
/// used and the held-out errors (#34); prompt files and length distributions (#36):
/// `Scenario::prompts`, `Scenario::lengths`, `RequestRecord::asked` and the per-request column
/// `RequestColumns::input_tokens`; `Metadata::configuration`, the parameters of a sweep's
/// configuration (#37).
/// 1.4.0 (optional, so older reports stay valid): `Measurement::prompt_tokens`, which tokenizer
/// counted the prompts' tokens and whether its counts are exact (#43).
/// 1.5.0 (optional, so older reports stay valid): the `agents` load mode and
/// `RequestRecord::agent`, each call's job, agent, parent, depth and call index (#46).
/// 1.6.0 (optional, so older reports stay valid): the `job_rate` load mode (agentic jobs
/// arriving at a rate) and `AgentsLevel::job_rate` (#46).
/// 1.7.0 (optional, so older reports and fits stay valid): `FitCoefficients::batch_overhead_ms`,
/// the fitted cost of a step of two or more sequences (#47).
pub const SCHEMA_VERSION: &str = "1.7.0";

/// One benchmark run: what was measured, on what, and every measured level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// Semver of the report format, e.g. "1.0.0".
    pub schema_version: String,
    pub metadata: Metadata,
    /// Complete, or partial when the run was interrupted (the measured levels are kept).
    #[serde(default)]
    pub status: RunStatus,
    /// How each metric was measured and pooled.
    #[serde(default)]
    pub measurement: Measurement,
    pub scenarios: Vec<Scenario>,
    pub series: Vec<Series>,
    /// Per-request records, kept in a separate JSONL file next to the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<RecordsLink>,
    /// Warnings raised while measuring (cache hits in a no-cache suite, output length mismatches, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Set when the load came from several client processes (`infermeter run --shard I/N`):
    /// in a shard's report, that shard; in the report `infermeter merge` made of them, every
    /// shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<Sharding>,
    /// The simulator fitted to this report's levels (`infermeter fit`, since 1.3.0): what the
    /// viewer's What-if section predicts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
}

impl Report {
    /// The series of `scenario` in `mode` with `cache` use (session series; None for others),
    /// added (empty, with `arrivals`) when the report has none yet: a run and a merge add
    /// levels to their report through this.
    pub fn series_mut(
        &mut self,
        scenario: &str,
        mode: LoadMode,
        cache: Option<CacheUse>,
        arrivals: impl FnOnce() -> Option<Arrivals>,
    ) -> &mut Series {
        let at = match self
            .series
            .iter()
            .position(|s| s.scenario == scenario && s.mode == mode && s.cache == cache)
        {
            Some(at) => at,
            None => {
                self.series.push(Series {
                    scenario: scenario.into(),
                    mode,
                    arrivals: arrivals(),
                    levels: Vec::new(),
                    cache,
                });
                self.series.len() - 1
            }
        };
        &mut self.series[at]
    }

    /// The run's title: `metadata.title`, else "MODEL on Nx GPU". One definition for the
    /// collector's `view` index and the viewer's header.
    pub fn display_title(&self) -> String {
        self.metadata.title.clone().unwrap_or_else(|| {
            format!(
                "{} on {}",
                self.metadata.model.id,
                self.metadata.hardware.gpu_label()
            )
        })
    }
}
