//! `infermeter-dev bench-client`: what the client itself costs per streamed token at scale, beside
//! the floor, a bare reader of the same streams.
//!
//! The simulator runs in this process, on a runtime and threads of its own; each client under
//! test is a child process, so the CPU time, peak memory and context switches the kernel
//! accounts to that child (`wait4`) are the client's alone. At each stream count every run
//! measures both clients, one after the other, alternating which goes first:
//! - `infermeter run`: one peak level of that many streams, one request per slot (so three
//!   waves of requests: the first, the measured one, and those that straddle its end), the
//!   product's whole path: records, metrics scrapes, the report;
//! - the floor (`bench-client-floor`): one task per connection sending the same request three
//!   times in turn and reading each response into a buffer it throws away (no HTTP or SSE
//!   parsing, no timestamps), on the same runtime.
//!
//! Both are divided by the tokens streamed (one per event here). Syscalls are counted by
//! `perf stat` attached to the child just after it starts, where perf runs.

mod floor;
mod measure;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use infermeter_report::Outcome;
use infermeter_sim::{SimConfig, SimError, ThreadedSim};

use crate::dev::proc_stats::load_average;
use crate::http::driver::DriverError;
use crate::output::records::{read_records, records_path, RecordsError};
pub use floor::run as floor;
use measure::{median, perf_runs, Measurement};

/// Requests each stream sends in turn: as many as a peak level of one request per slot sends.
const REQUESTS_PER_STREAM: u32 = 3;

#[derive(Debug, Clone, clap::Args)]
pub struct BenchClientArgs {
    /// Concurrent streams to measure at.
    #[arg(long, value_delimiter = ',', default_values_t = [64u32, 256, 1000])]
    pub streams: Vec<u32>,
    /// Runs of each client at each stream count; the table gives their medians.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Input and output tokens of every request.
    #[arg(long, default_value_t = 64)]
    pub input_tokens: u32,
    #[arg(long, default_value_t = 512)]
    pub output_tokens: u32,
    /// The simulated model and GPU (a B200 holds every stream's KV cache: no request waits).
    #[arg(long, default_value = "llama-3.1-8b")]
    pub model: String,
    #[arg(long, default_value = "b200")]
    pub gpu: String,
    /// Count each client's syscalls with `perf stat` (auto: where perf runs).
    #[arg(long, value_enum, default_value_t = SyscallCount::Auto)]
    pub syscalls: SyscallCount,
    /// Where the suites, reports, records and logs go (default: infermeter-bench-client in the
    /// temp directory).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// The collector to measure (default: the `infermeter` beside this binary), e.g. an earlier
    /// build to compare with.
    #[arg(long, value_name = "PATH")]
    pub collector: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SyscallCount {
    Auto,
    Perf,
    Off,
}

/// The floor client's options (`bench-client` starts it; not for direct use).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchFloorArgs {
    /// The API base, e.g. http://127.0.0.1:8000/v1.
    #[arg(long)]
    pub base_url: String,
    #[arg(long)]
    pub model: String,
    #[arg(long)]
    pub streams: u32,
    /// Requests each connection sends in turn.
    #[arg(long, default_value_t = REQUESTS_PER_STREAM)]
    pub requests: u32,
    #[arg(long)]
    pub input_tokens: u32,
    #[arg(long)]
    pub output_tokens: u32,
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchClientError {
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the simulator")]
    Sim(#[source] SimError),
    #[error("the simulator did not name its model at {url}: {detail}")]
    Model { url: String, detail: String },
    #[error("cannot start {what}")]
    Spawn {
        what: String,
        source: std::io::Error,
    },
    #[error("{what} exited ({status}); its log, {}, ends:\n{tail}", .log.display())]
    Failed {
        what: String,
        status: ExitStatus,
        log: PathBuf,
        tail: String,
    },
    #[error("{what}: {done} of {expected} requests streamed to the end; see {}", .log.display())]
    Incomplete {
        what: String,
        done: u64,
        expected: u64,
        log: PathBuf,
    },
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error("cannot connect to {addr}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("a floor stream failed: {0}")]
    Stream(String),
}

/// The two clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Infermeter,
    Floor,
}

impl Client {
    fn name(self) -> &'static str {
        match self {
            Client::Infermeter => "infermeter",
            Client::Floor => "floor",
        }
    }
}

/// One row of the table: a client at a stream count, the median of its runs.
#[derive(Debug, Clone)]
pub struct Row {
    pub streams: u32,
    pub client: Client,
    pub runs: Vec<Measurement>,
}

/// The table: per stream count, infermeter, the floor and their ratio.
pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:>7}  {:<10}  {:>5}  {:>8}  {:>8}  {:>8}  {:>8}  {:>10}  {:>9}  {:>7}  {:>8}\n",
        "streams",
        "client",
        "runs",
        "user µs",
        "sys µs",
        "CPU µs",
        "vs floor",
        "syscalls",
        "ctx vol",
        "invol",
        "RSS MiB"
    );
    for row in rows {
        let m = median(&row.runs);
        let floor = rows
            .iter()
            .find(|r| r.streams == row.streams && r.client == Client::Floor)
            .map(|r| median(&r.runs).cpu_us);
        let ratio = match (row.client, floor) {
            (Client::Infermeter, Some(f)) if f > 0.0 => format!("{:.2}×", m.cpu_us / f),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{:>7}  {:<10}  {:>5}  {:>8.2}  {:>8.2}  {:>8.2}  {:>8}  {:>10}  {:>9.1}  {:>7.1}  {:>8.1}\n",
            row.streams,
            row.client.name(),
            row.runs.len(),
            m.user_us,
            m.sys_us,
            m.cpu_us,
            ratio,
            m.syscalls.map_or("n/a".into(), |s| format!("{s:.2}")),
            m.voluntary_k,
            m.involuntary_k,
            m.rss_mib
        ));
    }
    out.push_str(
        "(medians of the runs; µs of CPU per streamed token (one per event); syscalls per event; \
         context switches per 1,000 events, voluntary and involuntary; peak RSS)",
    );
    for row in rows.iter().filter(|r| r.client == Client::Infermeter) {
        let cpu_us = median(&row.runs).cpu_us;
        if cpu_us > 0.0 {
            out.push_str(&format!(
                "\nat {} streams, one core's worth of this CPU drives ~{:.0} streams of 50 tok/s",
                row.streams,
                1e6 / (cpu_us * PER_CORE_TOK_S)
            ));
        }
    }
    out
}

/// The per-stream token rate the streams-per-core line is given at (a typical chat pace).
const PER_CORE_TOK_S: f64 = 50.0;

/// The simulator: every stream in one batch (no queue), prefill of a whole level in one step.
fn sim_config(args: &BenchClientArgs) -> SimConfig {
    let max = args.streams.iter().copied().max().unwrap_or(1);
    SimConfig {
        listen: "127.0.0.1:0".parse().expect("literal address"),
        model: args.model.clone(),
        gpu: args.gpu.clone(),
        max_num_seqs: max.max(256),
        max_num_batched_tokens: Some(max.saturating_mul(args.input_tokens).max(8192)),
        ..SimConfig::default()
    }
}

/// The suite `infermeter run` measures: one peak level of `streams`, one request per slot.
pub fn suite_toml(args: &BenchClientArgs, streams: u32) -> String {
    format!(
        "name = \"bench-client\"\nwarmup = 0\n[[scenario]]\nid = \"stream\"\nname = \"Stream\"\n\
         input_tokens = {}\noutput_tokens = {}\n[peak]\nlevels = [{streams}]\n\
         requests_per_slot = 1\nmin_seconds = 0\n",
        args.input_tokens, args.output_tokens
    )
}

/// Runs the benchmark and prints the table.
pub async fn run(args: BenchClientArgs) -> Result<Vec<Row>, BenchClientError> {
    let dir = args
        .out_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("infermeter-bench-client"));
    std::fs::create_dir_all(&dir).map_err(|source| BenchClientError::Write {
        path: dir.clone(),
        source,
    })?;
    let perf = match args.syscalls {
        SyscallCount::Off => false,
        SyscallCount::Perf => true,
        SyscallCount::Auto => perf_runs(),
    };
    println!(
        "client CPU per streamed token: {} in / {} out tokens, simulated {} on {}, streams {:?}, \
         {} runs each; load average {}",
        args.input_tokens,
        args.output_tokens,
        args.model,
        args.gpu,
        args.streams,
        args.runs,
        load_line()
    );
    let sim = ThreadedSim::start(sim_config(&args), true)
        .await
        .map_err(BenchClientError::Sim)?;
    let measured = measure_all(&args, &dir, sim.base_url(), perf).await;
    sim.stop();
    let rows = measured?;
    println!("{}", table(&rows));
    println!("load average at the end {}", load_line());
    Ok(rows)
}

async fn measure_all(
    args: &BenchClientArgs,
    dir: &Path,
    base_url: &str,
    perf: bool,
) -> Result<Vec<Row>, BenchClientError> {
    let model = served_model(base_url).await?;
    let mut rows = Vec::new();
    for &streams in &args.streams {
        let suite = dir.join(format!("suite-{streams}.toml"));
        std::fs::write(&suite, suite_toml(args, streams)).map_err(|source| {
            BenchClientError::Write {
                path: suite.clone(),
                source,
            }
        })?;
        let mut infermeter = Vec::new();
        let mut floor = Vec::new();
        for run in 0..args.runs {
            let order = if run % 2 == 0 {
                [Client::Infermeter, Client::Floor]
            } else {
                [Client::Floor, Client::Infermeter]
            };
            for client in order {
                let job = Job {
                    client,
                    streams,
                    run,
                    dir,
                    base_url,
                    model: &model,
                    suite: &suite,
                    args,
                };
                let m = job.measure(perf).await?;
                println!("{}", run_line(&job, &m));
                match client {
                    Client::Infermeter => infermeter.push(m),
                    Client::Floor => floor.push(m),
                }
            }
        }
        rows.push(Row {
            streams,
            client: Client::Infermeter,
            runs: infermeter,
        });
        rows.push(Row {
            streams,
            client: Client::Floor,
            runs: floor,
        });
    }
    Ok(rows)
}

fn run_line(job: &Job<'_>, m: &Measurement) -> String {
    format!(
        "  {:>5} streams, run {}, {:<10} {:>7.2} µs/token (user {:.2}, sys {:.2}), {} tokens in {:.1} s, syscalls/token {}, RSS {:.1} MiB, load {}",
        job.streams,
        job.run + 1,
        job.client.name(),
        m.cpu_us(),
        m.user_us(),
        m.sys_us(),
        m.tokens,
        m.wall_s,
        m.syscalls_per_token()
            .map_or("n/a".into(), |s| format!("{s:.2}")),
        m.max_rss_kib as f64 / 1024.0,
        load_line()
    )
}

fn load_line() -> String {
    load_average().map_or("n/a".into(), |l| format!("{l:.2}"))
}

/// The model the simulator serves, from `/models`.
async fn served_model(base_url: &str) -> Result<String, BenchClientError> {
    let url = format!("{base_url}/models");
    let fail = |detail: String| BenchClientError::Model {
        url: url.clone(),
        detail,
    };
    let client = crate::http::transport::http_client(Duration::from_secs(5), 1)
        .map_err(|e| fail(e.to_string()))?;
    let body: serde_json::Value = client
        .get(&url)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| fail(e.to_string()))?
        .json()
        .await
        .map_err(|e| fail(e.to_string()))?;
    body["data"][0]["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| fail(format!("no data[0].id in {body}")))
}

/// One client's run at one stream count.
struct Job<'a> {
    client: Client,
    streams: u32,
    run: u32,
    dir: &'a Path,
    base_url: &'a str,
    model: &'a str,
    suite: &'a Path,
    args: &'a BenchClientArgs,
}

impl Job<'_> {
    fn stem(&self) -> String {
        format!("{}-{}-{}", self.client.name(), self.streams, self.run + 1)
    }

    fn command(&self, report: &Path) -> Command {
        match self.client {
            Client::Infermeter => {
                let collector = self.args.collector.clone();
                let mut command =
                    Command::new(collector.unwrap_or_else(crate::dev::collector::binary));
                command
                    .args(["--quiet", "run", "--force", "--power", "none"])
                    .args(["--api", "completions", "--base-url", self.base_url])
                    .arg("--suite")
                    .arg(self.suite)
                    .arg("--out")
                    .arg(report);
                command
            }
            Client::Floor => {
                // The floor is a subcommand of this binary.
                let this =
                    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("infermeter-dev"));
                let mut command = Command::new(this);
                command
                    .args(["--quiet", "bench-client-floor", "--base-url", self.base_url])
                    .args(["--model", self.model])
                    .args(["--streams", &self.streams.to_string()])
                    .args(["--input-tokens", &self.args.input_tokens.to_string()])
                    .args(["--output-tokens", &self.args.output_tokens.to_string()]);
                command
            }
        }
    }

    /// Starts the client, counts its syscalls, waits for it and reads what it streamed.
    async fn measure(&self, perf: bool) -> Result<Measurement, BenchClientError> {
        let stem = self.stem();
        let log = self.dir.join(format!("{stem}.log"));
        let report = self.dir.join(format!("{stem}.json"));
        let out = std::fs::File::create(&log).map_err(|source| BenchClientError::Write {
            path: log.clone(),
            source,
        })?;
        let what = format!("the {} client", self.client.name());
        let perf_out = perf.then(|| self.dir.join(format!("{stem}.perf")));
        let (status, mut m) = measure::child(self.command(&report), out, perf_out.as_deref())
            .await
            .map_err(|source| BenchClientError::Spawn {
                what: what.clone(),
                source,
            })?;
        if !status.success() {
            return Err(BenchClientError::Failed {
                what,
                status,
                tail: tail(&log),
                log,
            });
        }
        let (done, expected, tokens) = match self.client {
            Client::Infermeter => streamed(&records_path(&report))?,
            Client::Floor => {
                let done = floor_requests(&log);
                let expected = u64::from(self.streams) * u64::from(REQUESTS_PER_STREAM);
                (done, expected, done * u64::from(self.args.output_tokens))
            }
        };
        if done < expected {
            return Err(BenchClientError::Incomplete {
                what,
                done,
                expected,
                log,
            });
        }
        m.tokens = tokens;
        Ok(m)
    }
}

/// Requests that ended well, requests sent, and tokens streamed, from a run's records.
fn streamed(records: &Path) -> Result<(u64, u64, u64), BenchClientError> {
    let records = read_records(records)?;
    let ok = records.iter().filter(|r| r.outcome == Outcome::Ok);
    let tokens = ok
        .clone()
        .flat_map(|r| &r.chunks)
        .map(|c| u64::from(c.tokens))
        .sum();
    Ok((ok.count() as u64, records.len() as u64, tokens))
}

/// The floor's count of requests streamed to the end (its last line: `requests N`).
fn floor_requests(log: &Path) -> u64 {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("requests "))
        .filter_map(|n| n.trim().parse().ok())
        .next_back()
        .unwrap_or(0)
}

/// The last lines of a log.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::measure::parse_perf;
    use super::*;

    fn m(user_s: f64, sys_s: f64, tokens: u64, syscalls: Option<u64>) -> Measurement {
        Measurement {
            user_s,
            sys_s,
            tokens,
            syscalls,
            max_rss_kib: 10_240,
            ..Measurement::default()
        }
    }

    #[test]
    fn medians_are_of_per_token_figures() {
        // 2, 4 and 3 µs user per token over different token counts: the median is 3; the
        // totals are 3, 5 and 3.6, so the CPU median is 3.6, not 3 + 1.
        let runs = [
            m(2.0, 1.0, 1_000_000, Some(3_000_000)),
            m(8.0, 2.0, 2_000_000, Some(4_000_000)),
            m(1.5, 0.3, 500_000, Some(1_000_000)),
        ];
        let med = median(&runs);
        assert!((med.user_us - 3.0).abs() < 1e-9, "{med:?}");
        assert!((med.sys_us - 1.0).abs() < 1e-9, "{med:?}");
        assert!((med.cpu_us - 3.6).abs() < 1e-9, "{med:?}");
        assert_eq!(med.syscalls, Some(2.0));
        assert_eq!(med.rss_mib, 10.0);
        // One run without a count: no syscall figure.
        let mut partial = runs;
        partial[1].syscalls = None;
        assert_eq!(median(&partial).syscalls, None);
    }

    #[test]
    fn the_table_sets_infermeter_beside_the_floor() {
        let rows = [
            Row {
                streams: 256,
                client: Client::Infermeter,
                runs: vec![m(4.0, 2.0, 1_000_000, None)],
            },
            Row {
                streams: 256,
                client: Client::Floor,
                runs: vec![m(1.0, 2.0, 1_000_000, None)],
            },
        ];
        let text = table(&rows);
        let line = |client: &str| {
            text.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|fields| fields.get(1) == Some(&client))
                .unwrap()
        };
        assert_eq!(line("infermeter")[3..7], ["4.00", "2.00", "6.00", "2.00×"]);
        assert_eq!(line("floor")[3..6], ["1.00", "2.00", "3.00"]);
    }

    #[test]
    fn perf_counts_are_read_from_its_csv() {
        let text = "# started on Mon\n\n1234567,,raw_syscalls:sys_enter,100.00,,\n";
        assert_eq!(parse_perf(text), Some(1_234_567));
        assert_eq!(
            parse_perf("<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n"),
            None
        );
    }

    #[test]
    fn the_suite_is_one_peak_level() {
        let args = BenchClientArgs {
            streams: vec![256],
            runs: 1,
            input_tokens: 64,
            output_tokens: 512,
            model: "llama-3.1-8b".into(),
            gpu: "b200".into(),
            syscalls: SyscallCount::Off,
            out_dir: None,
            collector: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, suite_toml(&args, 256)).unwrap();
        let suite = crate::suite::Suite::load(path.to_str().unwrap()).unwrap();
        assert_eq!(suite.scenarios[0].output_tokens, 512);
        let peak = suite.peak.unwrap();
        assert_eq!((peak.levels, peak.requests_per_slot), (vec![256], 1));
    }
}
