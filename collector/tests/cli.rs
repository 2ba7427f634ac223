//! Integration tests of the `infermeter` binary against the simulator over loopback.

#[path = "cli/agents.rs"]
mod agents;
#[path = "cli/bench_client.rs"]
mod bench_client;
#[path = "cli/binaries.rs"]
mod binaries;
#[path = "cli/common.rs"]
mod common;
#[path = "cli/connections.rs"]
mod connections;
#[path = "cli/datasets.rs"]
mod datasets;
#[path = "cli/faults.rs"]
mod faults;
#[path = "cli/goodput.rs"]
mod goodput;
#[path = "cli/imports.rs"]
mod imports;
#[path = "cli/interrupt.rs"]
mod interrupt;
#[path = "cli/job_rate.rs"]
mod job_rate;
#[path = "cli/k8s.rs"]
mod k8s;
#[path = "cli/llama_cpp.rs"]
mod llama_cpp;
#[path = "cli/referee.rs"]
mod referee;
#[path = "cli/secrets.rs"]
mod secrets;
#[path = "cli/server_gone.rs"]
mod server_gone;
#[path = "cli/sessions.rs"]
mod sessions;
#[path = "cli/shards.rs"]
mod shards;
#[path = "cli/suite_run.rs"]
mod suite_run;
#[path = "cli/summary.rs"]
mod summary;
#[path = "cli/sweep.rs"]
mod sweep;
#[path = "cli/unchanged.rs"]
mod unchanged;
#[path = "cli/viewer.rs"]
mod viewer;
#[path = "cli/what_if.rs"]
mod what_if;
