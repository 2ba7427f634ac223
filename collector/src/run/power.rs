//! GPU power during a level, from NVML, `nvidia-smi` or a remote DCGM exporter.
//!
//! A [`PowerSampler`] runs from the start of a level to its end and collects timestamped
//! [`Reading`]s (one per GPU per tick); [`power_stats`] turns them into the report's
//! [`PowerStats`]: energy by trapezoid integration over each GPU's own timestamps, summed over
//! GPUs; mean power as that energy over the sampled span; max as the highest total of the latest
//! reading of every GPU.
//!
//! Sources ([`PowerSource`]): NVML (`libnvidia-ml` is loaded at run time, so this builds and runs
//! without a GPU), `nvidia-smi --query-gpu=timestamp,index,power.draw -lms 100` as a child
//! process, or a DCGM exporter's `/metrics` URL (`DCGM_FI_DEV_POWER_USAGE`) when the server is
//! remote. `auto` tries NVML then `nvidia-smi`; with neither it says so once and power is omitted.
//! Cost is not computed here: it is derived from these figures by the report crate.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use infermeter_report::PowerStats;
use tokio::io::AsyncBufReadExt;
use tokio::sync::oneshot;

use crate::http::scrape;
use crate::http::transport::error_chain;

/// Time between local power readings (NVML, nvidia-smi).
const LOCAL_INTERVAL: Duration = Duration::from_millis(100);
/// Time between DCGM exporter scrapes (the exporter itself refreshes every 1 to 30 s).
const DCGM_INTERVAL: Duration = Duration::from_millis(500);
const DCGM_TIMEOUT: Duration = Duration::from_secs(2);
const DCGM_POWER: &str = "DCGM_FI_DEV_POWER_USAGE";
const NO_SOURCE: &str =
    "no GPU power source found (no NVML, no nvidia-smi); power and energy will be omitted";

/// Why a power source asked for by name does not work; each says what to use instead.
#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    #[error("{0}; use --power nvidia-smi, a DCGM exporter URL, or --power none")]
    Nvml(NvmlUnavailable),
    #[error("cannot start the NVML sampling thread")]
    NvmlThread(#[source] std::io::Error),
    #[error("cannot run {}; install the NVIDIA driver utilities or use --power none", .program.display())]
    NvidiaSmi {
        program: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("nvidia-smi has no stdout")]
    NvidiaSmiOutput,
    #[error("cannot build the DCGM exporter's HTTP client")]
    DcgmClient(#[source] reqwest::Error),
    #[error("DCGM exporter {url}")]
    Dcgm { url: String, source: DcgmError },
}

/// Why NVML gives no GPU (said with its causes, inside [`PowerError::Nvml`]'s advice).
#[derive(Debug, thiserror::Error)]
pub enum NvmlUnavailable {
    #[error("NVML (libnvidia-ml) could not be loaded: {}", error_chain(.0))]
    Load(nvml_wrapper::error::NvmlError),
    #[error("{}", error_chain(.0))]
    Count(nvml_wrapper::error::NvmlError),
    #[error("NVML found no GPU")]
    NoGpu,
}

/// Why a DCGM exporter scrape gave no power reading.
#[derive(Debug, thiserror::Error)]
pub enum DcgmError {
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    #[error("serves no {DCGM_POWER} metric; is this a dcgm-exporter /metrics URL?")]
    NoPowerMetric,
}

/// Where power readings come from (`--power`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PowerSource {
    /// NVML if it loads, else nvidia-smi if it runs, else none.
    #[default]
    Auto,
    Nvml,
    NvidiaSmi,
    /// A DCGM exporter's metrics URL, for a server on another host.
    Dcgm(String),
    None,
}

impl FromStr for PowerSource {
    type Err = String;

    /// `auto`, `nvml`, `nvidia-smi`, `none`, or an `http(s)://` DCGM exporter URL.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(PowerSource::Auto),
            "nvml" => Ok(PowerSource::Nvml),
            "nvidia-smi" => Ok(PowerSource::NvidiaSmi),
            "none" | "off" => Ok(PowerSource::None),
            url if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(PowerSource::Dcgm(url.to_string()))
            }
            other => Err(format!(
                "unknown power source {other:?}: use auto, nvml, nvidia-smi, none, or a DCGM exporter URL such as http://gpu-host:9400/metrics"
            )),
        }
    }
}

impl fmt::Display for PowerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PowerSource::Auto => f.write_str("auto"),
            PowerSource::Nvml => f.write_str("nvml"),
            PowerSource::NvidiaSmi => f.write_str("nvidia-smi"),
            PowerSource::Dcgm(url) => f.write_str(url),
            PowerSource::None => f.write_str("none"),
        }
    }
}

/// Resolves `auto` to a concrete local source, once per process: the probe and its "no GPU"
/// message happen at the first call, later calls reuse the answer.
pub fn detect() -> Option<PowerSource> {
    static DETECTED: OnceLock<Option<PowerSource>> = OnceLock::new();
    DETECTED
        .get_or_init(|| {
            if nvml_device_count().is_ok() {
                Some(PowerSource::Nvml)
            } else if nvidia_smi_runs(Path::new("nvidia-smi")) {
                Some(PowerSource::NvidiaSmi)
            } else {
                tracing::warn!("{NO_SOURCE}");
                None
            }
        })
        .clone()
}

fn nvml_device_count() -> Result<u32, NvmlUnavailable> {
    let nvml = nvml_wrapper::Nvml::init().map_err(NvmlUnavailable::Load)?;
    match nvml.device_count().map_err(NvmlUnavailable::Count)? {
        0 => Err(NvmlUnavailable::NoGpu),
        n => Ok(n),
    }
}

fn nvidia_smi_runs(program: &Path) -> bool {
    std::process::Command::new(program)
        .arg("-L")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One GPU's power at one moment. `t` is in seconds on any fixed clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub t: f64,
    pub gpu: u32,
    pub watts: f64,
}

/// Reduces readings to the level's power figures; `None` without readings.
pub fn power_stats(readings: &[Reading], source: &str) -> Option<PowerStats> {
    let mut per_gpu: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
    for r in readings
        .iter()
        .filter(|r| r.watts.is_finite() && r.t.is_finite())
    {
        per_gpu.entry(r.gpu).or_default().push((r.t, r.watts));
    }
    if per_gpu.is_empty() {
        return None;
    }
    let (mut energy_j, mut mean_w, mut samples) = (0.0, 0.0, 0);
    for trace in per_gpu.values_mut() {
        trace.sort_by(|a, b| a.0.total_cmp(&b.0));
        let energy: f64 = trace
            .windows(2)
            .map(|w| (w[0].1 + w[1].1) / 2.0 * (w[1].0 - w[0].0))
            .sum();
        let span = trace[trace.len() - 1].0 - trace[0].0;
        energy_j += energy;
        mean_w += if span > 0.0 {
            energy / span
        } else {
            trace.iter().map(|p| p.1).sum::<f64>() / trace.len() as f64
        };
        samples = samples.max(trace.len() as u64);
    }
    Some(PowerStats {
        mean_w,
        max_w: max_total(&per_gpu),
        energy_j,
        source: source.to_string(),
        samples,
    })
}

/// Highest sum of every GPU's latest reading, counted once all GPUs have reported.
fn max_total(per_gpu: &BTreeMap<u32, Vec<(f64, f64)>>) -> f64 {
    let mut events: Vec<(f64, u32, f64)> = per_gpu
        .iter()
        .flat_map(|(gpu, trace)| trace.iter().map(|&(t, w)| (t, *gpu, w)))
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut latest: BTreeMap<u32, f64> = BTreeMap::new();
    let mut max = f64::NEG_INFINITY;
    for (i, &(t, gpu, w)) in events.iter().enumerate() {
        latest.insert(gpu, w);
        // Readings sharing a timestamp form one tick: total it after its last reading.
        let tick_ends = events.get(i + 1).is_none_or(|next| next.0 > t);
        if tick_ends && latest.len() == per_gpu.len() {
            max = max.max(latest.values().sum());
        }
    }
    max
}

/// Reads the lines of `nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv,noheader,nounits`,
/// e.g. `2025/03/14 09:26:53.100, 0, 300.00`. Times are kept relative to the first reading so
/// that millisecond steps survive in `f64` (absolute epoch seconds would round them).
#[derive(Debug, Default)]
pub struct NvidiaSmiParser {
    origin_ms: Option<i64>,
}

impl NvidiaSmiParser {
    /// The reading on `line`; `None` for `[N/A]` readings and lines that are not readings.
    pub fn reading(&mut self, line: &str) -> Option<Reading> {
        let mut fields = line.split(',').map(str::trim);
        let timestamp = fields.next()?;
        let gpu = fields.next()?.parse().ok()?;
        let watts = fields.next()?.parse().ok()?;
        let time = chrono::NaiveDateTime::parse_from_str(timestamp, "%Y/%m/%d %H:%M:%S%.f").ok()?;
        let ms = time.and_utc().timestamp_millis();
        let origin = *self.origin_ms.get_or_insert(ms);
        let t = (ms - origin) as f64 / 1000.0;
        Some(Reading { t, gpu, watts })
    }
}

/// Power readings of every GPU in a DCGM exporter scrape, stamped with `t`.
pub fn dcgm_readings(snapshot: &scrape::Snapshot, t: f64) -> Vec<Reading> {
    snapshot
        .samples(DCGM_POWER)
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let gpu = s
                .labels
                .iter()
                .find(|(k, _)| k == "gpu")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(i as u32);
            Reading {
                t,
                gpu,
                watts: s.value,
            }
        })
        .collect()
}

/// Samples power in the background for one level.
pub struct PowerSampler {
    source: &'static str,
    running: Running,
    /// Wall-clock start, logged with the level's figures so that another meter's trace
    /// (`nvidia-smi` beside NVML, a PDU) can be cut to the same window and compared.
    started: SystemTime,
}

enum Running {
    Task {
        stop: oneshot::Sender<()>,
        task: tokio::task::JoinHandle<Vec<Reading>>,
    },
    /// NVML calls block, so they run on their own thread.
    Thread {
        stop: Arc<AtomicBool>,
        thread: std::thread::JoinHandle<Vec<Reading>>,
    },
}

impl PowerSampler {
    /// A sampler whose readings `running` takes from now on.
    fn sampling(source: &'static str, running: Running) -> PowerSampler {
        PowerSampler {
            source,
            running,
            started: SystemTime::now(),
        }
    }

    /// Starts sampling. `Ok(None)` when the source is `none`, or `auto` found no GPU (said once);
    /// an error when an explicitly requested source does not work, since the user asked for it.
    pub async fn start(source: &PowerSource) -> Result<Option<PowerSampler>, PowerError> {
        match source {
            PowerSource::None => Ok(None),
            PowerSource::Auto => match detect() {
                Some(found) => Box::pin(PowerSampler::start(&found)).await,
                None => Ok(None),
            },
            PowerSource::Nvml => start_nvml().map(Some),
            PowerSource::NvidiaSmi => start_nvidia_smi(Path::new("nvidia-smi")).map(Some),
            PowerSource::Dcgm(url) => start_dcgm(url.clone()).await.map(Some),
        }
    }

    /// Stops sampling and summarises the level; `None` if no reading arrived.
    pub async fn stop(self) -> Option<PowerStats> {
        let readings = match self.running {
            Running::Task { stop, task } => {
                let _ = stop.send(());
                task.await.unwrap_or_default()
            }
            Running::Thread { stop, thread } => {
                stop.store(true, Ordering::Relaxed);
                tokio::task::spawn_blocking(move || thread.join().unwrap_or_default())
                    .await
                    .unwrap_or_default()
            }
        };
        let stats = power_stats(&readings, self.source);
        if let Some(stats) = &stats {
            let unix = |t: SystemTime| {
                t.duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs_f64()
            };
            tracing::debug!(
                source = self.source,
                from_unix_s = format!("{:.3}", unix(self.started)),
                to_unix_s = format!("{:.3}", unix(SystemTime::now())),
                readings = readings.len(),
                mean_w = format!("{:.1}", stats.mean_w),
                "power window"
            );
        }
        if stats.is_none() {
            tracing::warn!(
                source = self.source,
                "no power reading arrived during the level; power omitted for it"
            );
        }
        stats
    }
}

fn start_nvml() -> Result<PowerSampler, PowerError> {
    let count = nvml_device_count().map_err(PowerError::Nvml)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let thread = std::thread::Builder::new()
        .name("infermeter-nvml".into())
        .spawn(move || {
            let mut readings = Vec::new();
            let Ok(nvml) = nvml_wrapper::Nvml::init() else {
                return readings;
            };
            let devices: Vec<_> = (0..count)
                .filter_map(|i| Some((i, nvml.device_by_index(i).ok()?)))
                .collect();
            let epoch = Instant::now();
            while !stopped.load(Ordering::Relaxed) {
                for (gpu, device) in &devices {
                    if let Ok(milliwatts) = device.power_usage() {
                        readings.push(Reading {
                            t: epoch.elapsed().as_secs_f64(),
                            gpu: *gpu,
                            watts: f64::from(milliwatts) / 1000.0,
                        });
                    }
                }
                std::thread::sleep(LOCAL_INTERVAL);
            }
            readings
        })
        .map_err(PowerError::NvmlThread)?;
    Ok(PowerSampler::sampling(
        "nvml",
        Running::Thread { stop, thread },
    ))
}

fn start_nvidia_smi(program: &Path) -> Result<PowerSampler, PowerError> {
    let mut child = tokio::process::Command::new(program)
        .args([
            "--query-gpu=timestamp,index,power.draw",
            "--format=csv,noheader,nounits",
            "-lms",
            &LOCAL_INTERVAL.as_millis().to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| PowerError::NvidiaSmi {
            program: program.to_path_buf(),
            source,
        })?;
    let stdout = child.stdout.take().ok_or(PowerError::NvidiaSmiOutput)?;
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut parser = NvidiaSmiParser::default();
        let mut readings = Vec::new();
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                line = lines.next_line() => match line {
                    Ok(Some(line)) => readings.extend(parser.reading(&line)),
                    _ => break,
                },
            }
        }
        let _ = child.kill().await;
        readings
    });
    Ok(PowerSampler::sampling(
        "nvidia-smi",
        Running::Task { stop, task },
    ))
}

async fn start_dcgm(url: String) -> Result<PowerSampler, PowerError> {
    let client = reqwest::Client::builder()
        .timeout(DCGM_TIMEOUT)
        .build()
        .map_err(PowerError::DcgmClient)?;
    let epoch = Instant::now();
    let first = match scrape_dcgm(&client, &url, epoch).await {
        Ok(first) => first,
        Err(source) => return Err(PowerError::Dcgm { url, source }),
    };
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut readings = first;
        let mut ticks = tokio::time::interval(DCGM_INTERVAL);
        ticks.tick().await; // immediate; the first scrape was just taken
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = ticks.tick() => {
                    if let Ok(more) = scrape_dcgm(&client, &url, epoch).await {
                        readings.extend(more);
                    }
                }
            }
        }
        // Close the window at the level's end rather than at the last tick.
        if let Ok(last) = scrape_dcgm(&client, &url, epoch).await {
            readings.extend(last);
        }
        readings
    });
    Ok(PowerSampler::sampling(
        "dcgm-exporter",
        Running::Task { stop, task },
    ))
}

async fn scrape_dcgm(
    client: &reqwest::Client,
    url: &str,
    epoch: Instant,
) -> Result<Vec<Reading>, DcgmError> {
    let response = client.get(url).send().await?.error_for_status()?;
    let text = response.text().await?;
    let readings = dcgm_readings(&scrape::parse(&text), epoch.elapsed().as_secs_f64());
    if readings.is_empty() {
        return Err(DcgmError::NoPowerMetric);
    }
    Ok(readings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NVIDIA_SMI: &str = include_str!("../../tests/fixtures/power/nvidia-smi.csv");
    const DCGM_1: &str = include_str!("../../tests/fixtures/power/dcgm-1.txt");
    const DCGM_2: &str = include_str!("../../tests/fixtures/power/dcgm-2.txt");

    fn close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() < 1e-6,
            "{actual} != {expected} (expected)"
        );
    }

    #[test]
    fn nvidia_smi_recording_two_gpus() {
        let mut parser = NvidiaSmiParser::default();
        let readings: Vec<Reading> = NVIDIA_SMI
            .lines()
            .filter_map(|l| parser.reading(l))
            .collect();
        assert_eq!(readings.len(), 10);
        let stats = power_stats(&readings, "nvidia-smi").unwrap();
        // GPU0: 25 + 30 + 27.5 + 22.5 = 105 J; GPU1: 10 + 15 + 17.5 + 12.5 = 55 J (0.1 s steps)
        close(stats.energy_j, 160.0);
        // over 0.4 s: 262.5 W + 137.5 W
        close(stats.mean_w, 400.0);
        // ticks total 300, 400, 500, 400, 300
        close(stats.max_w, 500.0);
        assert_eq!(stats.samples, 5);
        assert_eq!(stats.source, "nvidia-smi");
    }

    #[test]
    fn nvidia_smi_lines_that_are_not_readings_are_skipped() {
        let mut parser = NvidiaSmiParser::default();
        assert_eq!(parser.reading("2025/03/14 09:26:53.000, 2, [N/A]"), None);
        assert_eq!(
            parser.reading("NVIDIA-SMI has failed because it couldn't communicate"),
            None
        );
        let first = parser.reading("2025/03/14 23:59:59.900, 3, 71.25").unwrap();
        assert_eq!((first.t, first.gpu, first.watts), (0.0, 3, 71.25));
        // across midnight
        let next = parser.reading("2025/03/15 00:00:00.150, 3, 70.5").unwrap();
        assert!((next.t - 0.25).abs() < 1e-12, "{next:?}");
    }

    #[test]
    fn dcgm_exporter_recording_two_gpus() {
        let mut readings = dcgm_readings(&scrape::parse(DCGM_1), 0.0);
        readings.extend(dcgm_readings(&scrape::parse(DCGM_2), 1.0));
        assert_eq!(readings.len(), 4);
        let stats = power_stats(&readings, "dcgm-exporter").unwrap();
        // GPU0 (350 + 450) / 2 x 1 s = 400 J; GPU1 (250 + 350) / 2 = 300 J
        close(stats.energy_j, 700.0);
        close(stats.mean_w, 700.0);
        close(stats.max_w, 800.0);
        assert_eq!(stats.samples, 2);
    }

    #[test]
    fn single_reading_has_no_energy_and_its_own_power() {
        let stats = power_stats(
            &[Reading {
                t: 5.0,
                gpu: 0,
                watts: 123.0,
            }],
            "nvml",
        )
        .unwrap();
        assert_eq!(
            (stats.mean_w, stats.max_w, stats.energy_j),
            (123.0, 123.0, 0.0)
        );
        assert_eq!(power_stats(&[], "nvml"), None);
    }

    #[test]
    fn sources_parse_from_the_command_line() {
        assert_eq!("auto".parse(), Ok(PowerSource::Auto));
        assert_eq!("nvidia-smi".parse(), Ok(PowerSource::NvidiaSmi));
        assert_eq!("none".parse(), Ok(PowerSource::None));
        assert_eq!(
            "http://gpu:9400/metrics".parse(),
            Ok(PowerSource::Dcgm("http://gpu:9400/metrics".into()))
        );
        let err = "gpu".parse::<PowerSource>().unwrap_err();
        assert!(err.contains("DCGM exporter URL"), "{err}");
    }

    #[tokio::test]
    async fn none_starts_nothing_and_missing_nvidia_smi_is_a_clear_error() {
        assert!(PowerSampler::start(&PowerSource::None)
            .await
            .unwrap()
            .is_none());
        let err = start_nvidia_smi(Path::new("/nonexistent/nvidia-smi"))
            .err()
            .expect("error");
        assert!(err.to_string().contains("--power none"), "{err}");
    }

    /// Runs the real child-process path on a script that replays the recording.
    #[tokio::test]
    async fn nvidia_smi_child_process_is_read_and_stopped() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("recording.csv");
        std::fs::write(&data, NVIDIA_SMI).unwrap();
        let script = dir.path().join("nvidia-smi");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ncat '{}'\nexec sleep 30\n", data.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let sampler = start_nvidia_smi(&script).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stats = tokio::time::timeout(Duration::from_secs(5), sampler.stop())
            .await
            .expect("stop does not wait for the child to exit")
            .unwrap();
        close(stats.energy_j, 160.0);
    }

    #[tokio::test]
    async fn dcgm_exporter_over_loopback() {
        let app = axum::Router::new().route("/metrics", axum::routing::get(|| async { DCGM_2 }));
        let url = format!("{}/metrics", crate::http::test_server::serve(app).await);
        let sampler = PowerSampler::start(&PowerSource::Dcgm(url))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
        let stats = sampler.stop().await.unwrap();
        // A steady 450 W + 350 W over the window.
        close(stats.mean_w, 800.0);
        close(stats.max_w, 800.0);
        assert!(stats.samples >= 2);
        assert!(
            (stats.energy_j / stats.mean_w - 0.6).abs() < 0.2,
            "{stats:?}"
        );
    }

    #[tokio::test]
    async fn dcgm_url_without_power_metric_is_refused() {
        let app = axum::Router::new().route("/metrics", axum::routing::get(|| async { "up 1\n" }));
        let url = format!("{}/metrics", crate::http::test_server::serve(app).await);
        let err = PowerSampler::start(&PowerSource::Dcgm(url))
            .await
            .err()
            .expect("error");
        // As the command line prints it: the error and its causes.
        let message = error_chain(&err);
        assert!(message.contains(DCGM_POWER), "{message}");
    }
}
