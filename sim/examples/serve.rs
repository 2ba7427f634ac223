//! Run the simulator without the collector: `cargo run -p infermeter-sim --example serve -- --help`.

use clap::Parser;

#[derive(Parser)]
struct Opts {
    #[command(flatten)]
    sim: infermeter_sim::SimArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    Ok(infermeter_sim::run(Opts::parse().sim).await?)
}
