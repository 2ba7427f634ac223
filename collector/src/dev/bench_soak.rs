//! `infermeter-dev bench-soak`: a long run at thousands of streams, and what a kill leaves behind.
//!
//! The simulator runs in this process, on a runtime and threads of its own; the collector under
//! test is an ordinary `infermeter run` in a child process, so the memory read is its alone. The
//! run goes through back-to-back peak levels of `--streams` requests, one scenario each: a level
//! keeps its records until it ends (its percentiles pool every token gap), so with levels of a
//! minute that memory is one level's, and what still grows from level to level is a leak or an
//! unbounded buffer. Every `--sample-seconds` the child's resident memory, its CPU and the
//! records file's size are printed; since memory rises through each level and falls when it
//! ends, growth compares the peak of the window after the first minute with the peak of the
//! last window. After `--minutes` the child gets SIGKILL, in the middle of a level, and what it
//! wrote is read back: every record must parse, the partial report must load.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use infermeter_report::{Report, RequestRecord, RunStatus};
use infermeter_sim::{SimConfig, SimError, ThreadedSim};

use crate::dev::proc_stats;
use crate::output::records::records_path;
use crate::output::report_files::read_report;

#[derive(Debug, Clone, clap::Args)]
pub struct BenchSoakArgs {
    /// Concurrent streams (each level is a peak level of this many).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    pub streams: u32,
    /// How long the collector runs before it is killed, minutes.
    #[arg(long, default_value_t = 10.0)]
    pub minutes: f64,
    /// Shortest duration of each level, seconds: a level keeps its records until it ends.
    #[arg(long, default_value_t = 60.0)]
    pub level_seconds: f64,
    /// Seconds between two readings of the collector's memory.
    #[arg(long, default_value_t = 10.0)]
    pub sample_seconds: f64,
    /// Memory growth compares the peak of the window that starts here, seconds, with the peak
    /// of the last window.
    #[arg(long, default_value_t = 60.0)]
    pub baseline_seconds: f64,
    /// The length of those two windows, seconds: at least one level's rise and fall (a level
    /// of 60 s lasts about 75 with its last requests).
    #[arg(long, default_value_t = 90.0)]
    pub window_seconds: f64,
    /// Input and output tokens of every request.
    #[arg(long, default_value_t = 128)]
    pub input_tokens: u32,
    #[arg(long, default_value_t = 64)]
    pub output_tokens: u32,
    /// Extra simulated time of every engine step, milliseconds: the tokens each stream gets per
    /// second, and so the events per second the collector reads (2,000 streams at 100 ms: at
    /// most 20,000 events/s).
    #[arg(long, default_value_t = 100.0)]
    pub step_ms: f64,
    /// Where the suite, report, records and the collector's log go (default: infermeter-soak
    /// in the temp directory).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Resident memory's peak may grow at most this much from the minute after the first to the
/// last.
pub const GROWTH_TARGET: f64 = 0.05;

/// Why the soak could not run or be checked.
#[derive(Debug, thiserror::Error)]
pub enum BenchSoakError {
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the simulator")]
    Sim(#[source] SimError),
    #[error("cannot start the collector ({})", .program.display())]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
    #[error("the collector exited ({status}) before the kill; its log, {}, ends:\n{tail}", .log.display())]
    EndedEarly {
        status: std::process::ExitStatus,
        log: PathBuf,
        tail: String,
    },
    #[error("cannot read the collector's memory")]
    Proc(#[source] std::io::Error),
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One reading of the collector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since the collector started.
    pub at_s: f64,
    pub rss_mib: f64,
    /// Its CPU since the previous reading, percent of one core.
    pub cpu_percent: f64,
    /// The machine's one-minute load average.
    pub load: Option<f64>,
    /// Size of the records file, MiB.
    pub records_mib: f64,
}

/// The most resident memory held in a stretch of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
    pub peak_mib: f64,
}

/// Growth from the window after the first minute to the last window. Peaks are compared, not
/// single readings: memory rises through a level (its records) and falls when the level ends,
/// so one reading says more about where in a level it fell than about growth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    pub first: Window,
    pub last: Window,
}

impl Growth {
    /// The last window's peak relative to the first's.
    pub fn relative(&self) -> f64 {
        self.last.peak_mib / self.first.peak_mib - 1.0
    }
}

/// The peaks of the window of `window_s` from `baseline_s` and of the last one; `None` when
/// the run is too short for two windows apart.
pub fn growth(samples: &[Sample], baseline_s: f64, window_s: f64) -> Option<Growth> {
    let end = samples.last()?.at_s;
    let window = |from_s: f64, to_s: f64| {
        let peak = samples
            .iter()
            .filter(|s| s.at_s >= from_s && s.at_s < to_s)
            .map(|s| s.rss_mib)
            .fold(f64::NAN, f64::max);
        (!peak.is_nan()).then_some(Window {
            from_s,
            to_s,
            peak_mib: peak,
        })
    };
    let first = window(baseline_s, baseline_s + window_s)?;
    if end - window_s < first.to_s {
        return None;
    }
    // Past the end, so the last reading counts.
    let last = window(end - window_s, end + 1.0)?;
    Some(Growth { first, last })
}

/// What the records file holds after the kill.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordsCheck {
    pub lines: usize,
    pub parsed: usize,
    /// The last line did not parse: cut by the kill mid-write (a reader skips it).
    pub torn_last: bool,
    /// Other lines that do not parse (1-based): records lost.
    pub bad_lines: Vec<usize>,
}

impl RecordsCheck {
    /// Every complete line parses as a record.
    pub fn intact(&self) -> bool {
        self.bad_lines.is_empty()
    }
}

/// Parses every line of a records file.
pub fn check_records(text: &str) -> RecordsCheck {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let bad: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| serde_json::from_str::<RequestRecord>(l).is_err())
        .map(|(i, _)| i + 1)
        .collect();
    // A line is torn only when the file does not end with its newline.
    let torn_last = bad.last() == Some(&lines.len()) && !text.ends_with('\n');
    let bad_lines: Vec<usize> = bad
        .iter()
        .copied()
        .filter(|&l| !(torn_last && l == lines.len()))
        .collect();
    RecordsCheck {
        lines: lines.len(),
        parsed: lines.len() - bad.len(),
        torn_last,
        bad_lines,
    }
}

/// The suite: `levels` scenarios of the same shape, one peak level of `streams` each.
pub fn suite_toml(args: &BenchSoakArgs, levels: usize) -> String {
    let mut toml = "name = \"soak\"\nwarmup = 0\n".to_string();
    for level in 1..=levels {
        toml.push_str(&format!(
            "[[scenario]]\nid = \"level-{level:02}\"\nname = \"Level {level}\"\ninput_tokens = {}\noutput_tokens = {}\n",
            args.input_tokens, args.output_tokens
        ));
    }
    toml.push_str(&format!(
        "[peak]\nlevels = [{}]\nrequests_per_slot = 1\nmin_seconds = {}\n",
        args.streams, args.level_seconds
    ));
    toml
}

/// A soak's files and timing.
struct Soak {
    dir: PathBuf,
    suite: PathBuf,
    report: PathBuf,
    log: PathBuf,
    duration: Duration,
    period: Duration,
}

impl Soak {
    /// Writes the suite, with levels enough to outlast the kill.
    fn prepare(args: &BenchSoakArgs) -> Result<Soak, BenchSoakError> {
        let dir = args
            .out_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("infermeter-soak"));
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).map_err(|source| BenchSoakError::Write {
                path: path.to_path_buf(),
                source,
            })
        };
        std::fs::create_dir_all(&dir).map_err(|source| BenchSoakError::Write {
            path: dir.clone(),
            source,
        })?;
        let duration = Duration::from_secs_f64(args.minutes.max(0.0) * 60.0);
        let levels = (duration.as_secs_f64() / args.level_seconds.max(1.0)).ceil() as usize + 1;
        let suite = dir.join("soak-suite.toml");
        write(&suite, &suite_toml(args, levels))?;
        Ok(Soak {
            suite,
            report: dir.join("soak.json"),
            log: dir.join("collector.log"),
            duration,
            period: Duration::from_secs_f64(args.sample_seconds.max(0.1)),
            dir,
        })
    }

    /// Starts the collector, reads it every period until the duration is up, then kills it.
    async fn measure(&self, base_url: &str) -> Result<Vec<Sample>, BenchSoakError> {
        let program = crate::dev::collector::binary();
        let log = std::fs::File::create(&self.log).map_err(|source| BenchSoakError::Write {
            path: self.log.clone(),
            source,
        })?;
        let stderr = log.try_clone().map_err(|source| BenchSoakError::Write {
            path: self.log.clone(),
            source,
        })?;
        let mut child = tokio::process::Command::new(&program)
            .args([
                "--quiet",
                "run",
                "--base-url",
                base_url,
                "--force",
                "--suite",
            ])
            .arg(&self.suite)
            .arg("--out")
            .arg(&self.report)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| BenchSoakError::Spawn { program, source })?;
        let pid = child.id().expect("a running child has an id");
        let start = Instant::now();
        let ticks_per_s = proc_stats::ticks_per_second();
        let mut samples = Vec::new();
        let mut previous = (start, 0u64);
        println!("     t   RSS MiB   CPU %   load   records MiB");
        for k in 1.. {
            let due = (self.period * k).min(self.duration);
            tokio::time::sleep_until((start + due).into()).await;
            if let Some(status) = child.try_wait().map_err(BenchSoakError::Proc)? {
                return Err(self.ended_early(status));
            }
            let reading = proc_stats::read(pid).map_err(BenchSoakError::Proc)?;
            let now = Instant::now();
            let cpu_s = reading.cpu_ticks.saturating_sub(previous.1) as f64 / ticks_per_s;
            let sample = Sample {
                at_s: (now - start).as_secs_f64(),
                rss_mib: reading.rss_kib as f64 / 1024.0,
                cpu_percent: 100.0 * cpu_s / (now - previous.0).as_secs_f64(),
                load: proc_stats::load_average(),
                records_mib: std::fs::metadata(records_path(&self.report))
                    .map_or(0.0, |m| m.len() as f64 / (1024.0 * 1024.0)),
            };
            previous = (now, reading.cpu_ticks);
            println!("{}", sample_line(&sample));
            samples.push(sample);
            if due >= self.duration {
                break;
            }
        }
        // SIGKILL: no handler runs, nothing is flushed on the way out.
        child.start_kill().map_err(BenchSoakError::Proc)?;
        let _ = child.wait().await;
        println!(
            "SIGKILL at {:.0} s; the collector's files are in {}",
            start.elapsed().as_secs_f64(),
            self.dir.display()
        );
        Ok(samples)
    }

    fn ended_early(&self, status: std::process::ExitStatus) -> BenchSoakError {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        BenchSoakError::EndedEarly {
            status,
            log: self.log.clone(),
            tail: lines[lines.len().saturating_sub(20)..].join("\n"),
        }
    }

    /// Reads back the records and the partial report.
    fn verify(&self) -> Result<(RecordsCheck, Result<Report, String>), BenchSoakError> {
        let path = records_path(&self.report);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| BenchSoakError::Read { path, source })?;
        Ok((check_records(&text), read_report(&self.report)))
    }
}

fn sample_line(s: &Sample) -> String {
    let load = s.load.map_or("n/a".into(), |l| format!("{l:.2}"));
    format!(
        "{:>5.0}s  {:>8.1}  {:>6.0}  {:>5}  {:>12.1}",
        s.at_s, s.rss_mib, s.cpu_percent, load, s.records_mib
    )
}

/// The simulated engine: room for every stream in one batch, and every step slowed by
/// `--step-ms`, which sets the token rate.
fn sim_config(args: &BenchSoakArgs) -> SimConfig {
    SimConfig {
        listen: "127.0.0.1:0".parse().expect("literal address"),
        model: "llama-3.1-8b".into(),
        gpu: "h100-sxm".into(),
        max_num_seqs: args.streams,
        max_num_batched_tokens: Some(args.streams.saturating_mul(16).max(8192)),
        cuda_graph_max_batch: Some(0),
        eager_step_overhead_ms: Some(args.step_ms),
        ..SimConfig::default()
    }
}

/// Runs the soak and prints its figures; false when a record was lost, the report does not
/// load, or memory grew past the target.
pub async fn run(args: BenchSoakArgs) -> Result<bool, BenchSoakError> {
    let soak = Soak::prepare(&args)?;
    println!(
        "{} streams for {:.1} min ({:.0} s levels), the collector's memory every {:.0} s",
        args.streams,
        args.minutes,
        args.level_seconds,
        soak.period.as_secs_f64()
    );
    let sim = ThreadedSim::start(sim_config(&args), true)
        .await
        .map_err(BenchSoakError::Sim)?;
    let samples = soak.measure(sim.base_url()).await;
    sim.stop();
    let samples = samples?;
    let (records, report) = soak.verify()?;
    let growth = growth(&samples, args.baseline_seconds, args.window_seconds);
    println!("{}", verdict(&samples, growth, &records, &report));
    let grew = growth.is_some_and(|g| g.relative() > GROWTH_TARGET);
    Ok(records.intact() && report.is_ok() && !grew)
}

/// The figures after the kill, in words.
fn verdict(
    samples: &[Sample],
    growth: Option<Growth>,
    records: &RecordsCheck,
    report: &Result<Report, String>,
) -> String {
    let mut out = Vec::new();
    let pct = |x: f64| format!("{:+.1}%", x * 100.0);
    out.push(match growth {
        Some(g) => format!(
            "RSS peak {:.0}–{:.0} s: {:.1} MiB; in the last window, {:.0}–{:.0} s: {:.1} MiB: {} (target under +{:.0}%)",
            g.first.from_s,
            g.first.to_s,
            g.first.peak_mib,
            g.last.from_s,
            g.last.to_s.min(samples.last().map_or(0.0, |s| s.at_s)),
            g.last.peak_mib,
            pct(g.relative()),
            GROWTH_TARGET * 100.0
        ),
        None => format!(
            "RSS: {} readings, too few for two windows apart: no growth figure",
            samples.len()
        ),
    });
    out.push(format!(
        "records after SIGKILL: {} lines, {} parse{}{}",
        records.lines,
        records.parsed,
        if records.torn_last {
            "; the last was cut mid-write (readers skip it)"
        } else {
            ", none torn"
        },
        if records.intact() {
            String::new()
        } else {
            format!("; LOST: lines {:?}", records.bad_lines)
        }
    ));
    out.push(match report {
        Ok(report) => report_line(report),
        Err(e) => format!("partial report DOES NOT LOAD: {e}"),
    });
    out.join("\n")
}

/// The partial report: its status, levels and each level's client health.
fn report_line(report: &Report) -> String {
    let levels: Vec<_> = report.series.iter().flat_map(|s| &s.levels).collect();
    let status = match &report.status {
        RunStatus::Complete => "complete".to_string(),
        RunStatus::Partial { reason } => format!("partial ({reason})"),
    };
    let mut out = format!(
        "partial report loads: {status}, {} levels, {} records counted at its last write",
        levels.len(),
        report.records.as_ref().map_or(0, |r| r.count)
    );
    out.push_str("\n  level  requests  tok/s/user p50  system tok/s  lag p99 ms  loop p99 ms  distorted  retried");
    for (i, level) in levels.iter().enumerate() {
        let client = level.client.clone().unwrap_or_default();
        let decode = level.metrics.decode_tok_s.as_ref().map_or(0.0, |d| d.p50);
        out.push_str(&format!(
            "\n  {:>5}  {:>8}  {:>14.1}  {:>12.0}  {:>10.1}  {:>11.1}  {:>9}  {:>7}",
            i + 1,
            level.requests.total(),
            decode,
            level.system_output_tok_s,
            client.scheduling_lag_p99_s * 1e3,
            client.event_loop_delay_p99_s * 1e3,
            client.distorted,
            client.retried
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, rss_mib: f64) -> Sample {
        Sample {
            at_s,
            rss_mib,
            cpu_percent: 0.0,
            load: None,
            records_mib: 0.0,
        }
    }

    #[test]
    fn growth_compares_the_peaks_of_two_windows() {
        let samples: Vec<Sample> = [
            (10.0, 50.0),
            (60.0, 90.0),
            (70.0, 100.0),
            (80.0, 60.0),
            (130.0, 70.0),
            (140.0, 103.0),
            (150.0, 65.0),
        ]
        .map(|(at, mib)| sample(at, mib))
        .to_vec();
        let g = growth(&samples, 60.0, 30.0).unwrap();
        assert_eq!((g.first.peak_mib, g.last.peak_mib), (100.0, 103.0));
        assert!((g.relative() - 0.03).abs() < 1e-9);
        // The first reading (50 MiB, before the baseline) does not count.
        assert!(
            growth(&samples, 60.0, 60.0).is_none(),
            "windows would overlap"
        );
        assert!(
            growth(&samples, 200.0, 30.0).is_none(),
            "nothing after the baseline"
        );
    }

    #[test]
    fn a_torn_last_line_is_told_apart_from_a_lost_record() {
        let record = r#"{"scenario":"s","mode":"peak","concurrency":1,"index":0,"outcome":{"status":"ok"},"scheduled_s":0.0,"sent_s":0.0}"#;
        let whole = format!("{record}\n{record}\n");
        assert_eq!(
            check_records(&whole),
            RecordsCheck {
                lines: 2,
                parsed: 2,
                torn_last: false,
                bad_lines: vec![]
            }
        );
        let torn = check_records(&format!("{record}\n{}", &record[..40]));
        assert!(torn.torn_last && torn.intact(), "{torn:?}");
        let lost = check_records(&format!("{}\n{record}\n", &record[..40]));
        assert_eq!(lost.bad_lines, [1]);
        assert!(!lost.intact());
    }

    #[test]
    fn the_suite_is_one_level_per_scenario() {
        let args = BenchSoakArgs {
            streams: 2000,
            minutes: 10.0,
            level_seconds: 60.0,
            sample_seconds: 10.0,
            baseline_seconds: 60.0,
            window_seconds: 90.0,
            input_tokens: 128,
            output_tokens: 64,
            step_ms: 100.0,
            out_dir: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("soak.toml");
        std::fs::write(&path, suite_toml(&args, 11)).unwrap();
        let suite = crate::suite::Suite::load(path.to_str().unwrap()).unwrap();
        assert_eq!(suite.scenarios.len(), 11);
        let peak = suite.peak.unwrap();
        assert_eq!((peak.levels, peak.min_seconds), (vec![2000], 60.0));
    }
}
