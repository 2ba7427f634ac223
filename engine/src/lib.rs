//! infermeter-engine: the simulator's engine model, pure (no I/O, no clocks, no async), so it
//! runs natively in the simulator and in the viewer (wasm32).
//!
//! - [`profiles`]: GPUs and models from `engine/profiles.toml`, resolved into a [`Profile`].
//! - [`Profile::step_cost`]: the roofline step-time model.
//! - [`Engine`]: the continuous-batching scheduler over a paged KV cache, one step at a time.
//! - [`simulate`]: a workload through the engine on a virtual clock.
//! - [`measure`]: a load level simulated and measured as the collector measures it.
//! - [`fit`]: the model fitted to a measured report.
//! - [`what_if`]: the fitted model's predictions beyond the measured levels.

mod batching;
pub mod fit;
pub mod measure;
mod profile;
pub mod profiles;
mod simulate;
pub mod what_if;

pub use batching::{Engine, EngineStats, SeqId, SeqSpec, Step, StepEvent};
pub use profile::{BatchEntry, DeploymentCard, Peaks, Profile, StepCost};
pub use profiles::{ProfileError, ProfileSet};
pub use simulate::{simulate, Arrival, RequestTiming, Workload};
