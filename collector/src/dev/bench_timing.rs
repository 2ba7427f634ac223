//! `infermeter-dev bench-timing`: how far the collector's event instants are from when the events
//! were sent, measured against the simulator's own send timestamps (`--emit-timestamps`) on the
//! same machine.
//!
//! The server stamps `mono_ns` (CLOCK_MONOTONIC) just before writing a chunk. The client's
//! instant is the kernel's receive timestamp of the read that completed the event (on loopback
//! taken in the sender's write; see [`crate::http::arrival`]), or the parse time where the kernel gives
//! none; as an `Instant` (CLOCK_MONOTONIC on Linux) it is mapped onto `mono_ns` through one
//! paired reading.

use std::time::{Duration, Instant};

use infermeter_report::{Distribution, Stat};
use infermeter_sim::SimError;

use crate::http::adapters::EngineKind;
use crate::http::api::{Api, ConnectionReuse};
use crate::http::arrival::{self, EventClock};
use crate::http::driver::{Driver, DriverConfig, DriverError, Exchange};

#[derive(Debug, Clone, clap::Args)]
pub struct BenchTimingArgs {
    /// Concurrent streams to measure at.
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 100, 1000])]
    pub streams: Vec<u32>,
    /// Output tokens per stream.
    #[arg(long, default_value_t = 64)]
    pub tokens: u32,
}

/// Why the timing benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchTimingError {
    #[error("cannot start the simulator")]
    Sim(#[source] SimError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error("a request task failed")]
    Request(#[source] tokio::task::JoinError),
}

/// CLOCK_MONOTONIC now, nanoseconds: the simulator's send stamps' clock.
fn monotonic_ns() -> u64 {
    arrival::clock_ns(libc::CLOCK_MONOTONIC)
}

/// Maps `Instant`s onto CLOCK_MONOTONIC nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct ClockMap {
    instant: Instant,
    mono_ns: u64,
}

impl ClockMap {
    /// Pairs the two clocks, keeping the tightest of a few readings.
    pub fn calibrate() -> ClockMap {
        (0..16)
            .map(|_| {
                let before = Instant::now();
                let mono_ns = monotonic_ns();
                let after = Instant::now();
                (
                    after - before,
                    ClockMap {
                        instant: before + (after - before) / 2,
                        mono_ns,
                    },
                )
            })
            .min_by_key(|(width, _)| *width)
            .map(|(_, m)| m)
            .expect("16 readings")
    }

    pub fn mono_ns(&self, at: Instant) -> i128 {
        let offset = if at >= self.instant {
            (at - self.instant).as_nanos() as i128
        } else {
            -((self.instant - at).as_nanos() as i128)
        };
        self.mono_ns as i128 + offset
    }
}

/// Timing errors at one stream count, seconds.
#[derive(Debug)]
pub struct TimingRow {
    pub streams: u32,
    /// Receive minus send of each request's first content event.
    pub ttft_error: Option<Distribution>,
    /// Client-measured gap minus server gap between consecutive events.
    pub itl_error: Option<Distribution>,
    /// Receive minus send of every event.
    pub event_lag: Option<Distribution>,
    pub failed: usize,
    /// Successful requests whose events were stamped at parse time (no kernel timestamps).
    pub parse_clock: usize,
}

/// Errors of a set of exchanges against their server timestamps.
pub fn timing_row(streams: u32, exchanges: &[Exchange], clock: &ClockMap) -> TimingRow {
    let (mut ttft, mut itl, mut lag) = (Vec::new(), Vec::new(), Vec::new());
    let (mut failed, mut parse_clock) = (0, 0);
    for ex in exchanges {
        if ex.outcome != infermeter_report::Outcome::Ok {
            failed += 1;
            continue;
        }
        parse_clock += usize::from(ex.clock == EventClock::Parse);
        let lags: Vec<f64> = ex
            .chunks
            .iter()
            .filter_map(|c| {
                let sent = c.server_mono_ns? as i128;
                Some((clock.mono_ns(c.at) - sent) as f64 / 1e9)
            })
            .collect();
        if let Some(first) = lags.first() {
            ttft.push(*first);
        }
        itl.extend(lags.windows(2).map(|w| (w[1] - w[0]).abs()));
        lag.extend(lags);
    }
    TimingRow {
        streams,
        ttft_error: Distribution::from_samples(&ttft),
        itl_error: Distribution::from_samples(&itl),
        event_lag: Distribution::from_samples(&lag),
        failed,
        parse_clock,
    }
}

/// Starts a simulator with timestamps, drives each stream count and prints the table.
pub async fn run(args: BenchTimingArgs) -> Result<Vec<TimingRow>, BenchTimingError> {
    let max = args.streams.iter().copied().max().unwrap_or(1);
    let sim_config = infermeter_sim::SimConfig {
        listen: "127.0.0.1:0".parse().expect("literal address"),
        emit_timestamps: true,
        max_num_seqs: max.max(256),
        max_num_batched_tokens: Some((max * 64).max(8192)),
        ..infermeter_sim::SimConfig::default()
    };
    // The simulator gets its own runtime and threads, so its work does not queue behind the
    // client's tasks (and vice versa) as it would on one shared runtime.
    let sim = infermeter_sim::ThreadedSim::start(sim_config, true)
        .await
        .map_err(BenchTimingError::Sim)?;
    let base_url = sim.base_url().to_string();
    let driver = Driver::new(DriverConfig {
        base_url,
        api: Api::Chat,
        model: infermeter_sim::SimConfig::default().model,
        engine: EngineKind::Sim,
        prompt_caching: false,
        api_key: None,
        connect_timeout: Duration::from_secs(10),
        first_token_timeout: Duration::from_secs(120),
        total_timeout: Duration::from_secs(600),
        max_in_flight: max as usize,
        connection_reuse: ConnectionReuse::Pooled,
        extra_body: Default::default(),
    })?;
    let body = driver.body("Tell me a story about timing.", args.tokens);
    let clock = ClockMap::calibrate();
    let mut rows = Vec::new();
    for &streams in &args.streams {
        // The first pass opens the connections; the second is measured on warm ones.
        let _ = concurrent(&driver, &body, streams).await?;
        let exchanges = concurrent(&driver, &body, streams).await?;
        rows.push(timing_row(streams, &exchanges, &clock));
    }
    sim.stop();
    println!("{}", table(&rows));
    Ok(rows)
}

async fn concurrent(
    driver: &Driver,
    body: &[u8],
    streams: u32,
) -> Result<Vec<Exchange>, BenchTimingError> {
    let tasks: Vec<_> = (0..streams)
        .map(|_| {
            let (driver, body) = (driver.clone(), body.to_vec());
            tokio::spawn(async move { driver.send(body).await })
        })
        .collect();
    let mut exchanges = Vec::with_capacity(tasks.len());
    for t in tasks {
        exchanges.push(t.await.map_err(BenchTimingError::Request)?);
    }
    Ok(exchanges)
}

/// The rows as a text table, milliseconds.
pub fn table(rows: &[TimingRow]) -> String {
    let ms = |d: &Option<Distribution>, stat: Stat| {
        d.as_ref()
            .and_then(|d| d.get(stat))
            .map_or("n/a".into(), |v| format!("{:.3}", v * 1e3))
    };
    let mut out = format!(
        "{:>8} {:>14} {:>14} {:>14} {:>14} {:>14} {:>7}\n",
        "streams",
        "TTFT err p50",
        "TTFT err p99",
        "ITL err p50",
        "ITL err p99",
        "lag p99.9",
        "failed"
    );
    for r in rows {
        out.push_str(&format!(
            "{:>8} {:>14} {:>14} {:>14} {:>14} {:>14} {:>7}\n",
            r.streams,
            ms(&r.ttft_error, Stat::P50),
            ms(&r.ttft_error, Stat::P99),
            ms(&r.itl_error, Stat::P50),
            ms(&r.itl_error, Stat::P99),
            ms(&r.event_lag, Stat::P999),
            r.failed
        ));
    }
    let parsed: usize = rows.iter().map(|r| r.parse_clock).sum();
    let clock = if parsed == 0 {
        EventClock::KernelReceive.label().to_string()
    } else {
        format!(
            "{} for {parsed} requests, else {}",
            EventClock::Parse.label(),
            EventClock::KernelReceive.label()
        )
    };
    out.push_str(&format!(
        "(milliseconds; error = client event instant - simulator send stamp (CLOCK_MONOTONIC \
         just before the write); client instant: {clock})"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_map_agrees_with_clock_gettime() {
        let map = ClockMap::calibrate();
        let now = Instant::now();
        let mono = monotonic_ns() as i128;
        // Both read CLOCK_MONOTONIC: they agree to well under a millisecond.
        assert!((map.mono_ns(now) - mono).abs() < 1_000_000);
    }
}
