//! What the kernel accounts to one child process: CPU time (user and system apart) and
//! context switches from `wait4`, peak memory from `/proc` while it runs, and its syscalls from
//! `perf stat` attached just after it starts.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::dev::proc_stats::peak_rss_kib;

/// How often a child's peak memory is read while it runs.
const RSS_PERIOD: Duration = Duration::from_millis(50);

/// Runs `command` to its end with its output and errors in `log`; its exit status and what it
/// cost (tokens left at 0 for the caller, who knows what it streamed). Syscalls are counted by
/// perf into `perf_out` where given.
pub async fn child(
    mut command: Command,
    log: std::fs::File,
    perf_out: Option<&Path>,
) -> std::io::Result<(ExitStatus, Measurement)> {
    let err = log.try_clone()?;
    let start = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()?;
    let pid = child.id();
    let counter = perf_out.map(|out| SyscallCounter::attach(pid, out));
    let mut waiting = tokio::task::spawn_blocking(move || wait_for(pid));
    let mut peak_kib = 0;
    let waited = loop {
        tokio::select! {
            waited = &mut waiting => break waited.expect("wait4 does not panic"),
            () = tokio::time::sleep(RSS_PERIOD) => {
                peak_kib = peak_kib.max(peak_rss_kib(pid).unwrap_or(0));
            }
        }
    };
    let (status, mut m) = waited?;
    m.max_rss_kib = peak_kib;
    m.wall_s = start.elapsed().as_secs_f64();
    m.syscalls = match counter {
        Some(Ok(counter)) => counter.finish(),
        _ => None,
    };
    Ok((status, m))
}

/// What the kernel accounted to one child process, and what it streamed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measurement {
    pub user_s: f64,
    pub sys_s: f64,
    /// The peak resident memory of the client's program (`VmHWM`, read every [`RSS_PERIOD`]).
    /// Not `wait4`'s `ru_maxrss`: a child started with vfork (as `Command` does) is charged
    /// the peak of its parent's memory, here the simulator's, when it calls exec.
    pub max_rss_kib: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Counted by perf from just after the start; `None` without perf.
    pub syscalls: Option<u64>,
    pub tokens: u64,
    pub wall_s: f64,
}

impl Measurement {
    fn per_token_us(&self, x: f64) -> f64 {
        x / self.tokens.max(1) as f64 * 1e6
    }
    pub fn user_us(&self) -> f64 {
        self.per_token_us(self.user_s)
    }
    pub fn sys_us(&self) -> f64 {
        self.per_token_us(self.sys_s)
    }
    pub fn cpu_us(&self) -> f64 {
        self.per_token_us(self.user_s + self.sys_s)
    }
    pub fn syscalls_per_token(&self) -> Option<f64> {
        self.syscalls.map(|n| n as f64 / self.tokens.max(1) as f64)
    }
    /// Context switches (voluntary, involuntary) per 1,000 tokens.
    pub fn switches_per_k(&self) -> (f64, f64) {
        let k = self.tokens.max(1) as f64 / 1e3;
        (
            self.voluntary_switches as f64 / k,
            self.involuntary_switches as f64 / k,
        )
    }
}

/// The medians of one client's runs at one stream count, per streamed token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Medians {
    pub user_us: f64,
    pub sys_us: f64,
    /// The median of each run's total (not the sum of the two medians).
    pub cpu_us: f64,
    /// `None` unless every run was counted.
    pub syscalls: Option<f64>,
    /// Context switches per 1,000 tokens, voluntary and involuntary.
    pub voluntary_k: f64,
    pub involuntary_k: f64,
    pub rss_mib: f64,
}

/// The median of each figure over `runs`.
pub fn median(runs: &[Measurement]) -> Medians {
    let mid = |f: &dyn Fn(&Measurement) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    };
    let counted = !runs.is_empty() && runs.iter().all(|r| r.syscalls.is_some());
    Medians {
        user_us: mid(&Measurement::user_us),
        sys_us: mid(&Measurement::sys_us),
        cpu_us: mid(&Measurement::cpu_us),
        syscalls: counted.then(|| mid(&|r| r.syscalls_per_token().unwrap_or(0.0))),
        voluntary_k: mid(&|r| r.switches_per_k().0),
        involuntary_k: mid(&|r| r.switches_per_k().1),
        rss_mib: mid(&|r| r.max_rss_kib as f64 / 1024.0),
    }
}

/// Whether `perf stat` can count syscalls here.
pub fn perf_runs() -> bool {
    Command::new("perf")
        .args(["stat", "-x", ",", "-e", "raw_syscalls:sys_enter", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Waits for the child `pid` and takes what the kernel accounted to it.
fn wait_for(pid: u32) -> std::io::Result<(ExitStatus, Measurement)> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and usage outlive the call.
        let rc = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if rc >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((
        ExitStatus::from_raw(status),
        Measurement {
            user_s: secs(usage.ru_utime),
            sys_s: secs(usage.ru_stime),
            voluntary_switches: usage.ru_nvcsw as u64,
            involuntary_switches: usage.ru_nivcsw as u64,
            ..Measurement::default()
        },
    ))
}

/// `perf stat` counting one process's syscalls.
struct SyscallCounter {
    perf: std::process::Child,
    out: PathBuf,
}

impl SyscallCounter {
    fn attach(pid: u32, out: &Path) -> std::io::Result<SyscallCounter> {
        let perf = Command::new("perf")
            .args(["stat", "-x", ",", "-e", "raw_syscalls:sys_enter", "-p"])
            .arg(pid.to_string())
            .arg("-o")
            .arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        Ok(SyscallCounter {
            perf,
            out: out.to_path_buf(),
        })
    }

    /// The count, once perf has seen its process end.
    fn finish(mut self) -> Option<u64> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.perf.try_wait().ok()?.is_none() {
            if Instant::now() > deadline {
                // SAFETY: SIGINT to our own child; perf writes its counts on it.
                unsafe { libc::kill(self.perf.id() as libc::pid_t, libc::SIGINT) };
                self.perf.wait().ok()?;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        parse_perf(&std::fs::read_to_string(&self.out).ok()?)
    }
}

/// The count of `perf stat -x ,` output's syscall line.
pub fn parse_perf(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.contains("raw_syscalls:sys_enter"))
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.trim().parse().ok())
}
