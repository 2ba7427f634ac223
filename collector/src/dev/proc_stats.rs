//! What Linux's `/proc` says about a process (resident memory, CPU time) and the machine (load).

use std::io;

/// One reading of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcReading {
    /// Resident memory (`VmRSS`), KiB.
    pub rss_kib: u64,
    /// User and system CPU time, clock ticks.
    pub cpu_ticks: u64,
}

/// Reads `/proc/PID/status` and `/proc/PID/stat`.
pub fn read(pid: u32) -> io::Result<ProcReading> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let unreadable = |what: &str| io::Error::other(format!("/proc/{pid}/{what} has no {what}"));
    Ok(ProcReading {
        rss_kib: kib(&status, "VmRSS").ok_or_else(|| unreadable("VmRSS"))?,
        cpu_ticks: cpu_ticks(&stat).ok_or_else(|| unreadable("utime"))?,
    })
}

/// The most resident memory the process has held since it started its program (`VmHWM`),
/// KiB; `None` once it has ended.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    kib(
        &std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
        "VmHWM",
    )
}

/// A `NAME:    12345 kB` line of a status file (`VmRSS`, `VmHWM`).
fn kib(status: &str, name: &str) -> Option<u64> {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?;
    line.trim().strip_suffix("kB")?.trim().parse().ok()
}

/// utime + stime of a stat line. The command name (field 2) is in parentheses and may hold
/// spaces or parentheses itself, so fields are counted from the last `)`: field 3 (state) is
/// the first after it, utime and stime are fields 14 and 15.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(field(14)? + field(15)?)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of [`ProcReading::cpu_ticks`].
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// The machine's one-minute load average: how many threads wanted a core.
pub fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rss_and_cpu_from_recorded_files() {
        let status = "Name:\tinfermeter\nVmPeak:\t  300000 kB\nVmRSS:\t   81234 kB\nThreads:\t3\n";
        assert_eq!(kib(status, "VmRSS"), Some(81234));
        assert_eq!(kib(status, "VmPeak"), Some(300000));
        assert_eq!(kib("Name:\tx\n", "VmRSS"), None);
        // A command name with a space and a parenthesis.
        let stat = "4242 (tokio (w) 1) S 1 4242 4242 0 -1 4194560 2000 0 0 0 150 25 0 0 20 0 3 0";
        assert_eq!(cpu_ticks(stat), Some(175));
    }

    #[test]
    fn reads_this_process() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let reading = read(std::process::id()).unwrap();
        assert!(reading.rss_kib > 1024, "{reading:?}");
        assert!(peak_rss_kib(std::process::id()).is_some_and(|p| p >= reading.rss_kib));
        assert!(ticks_per_second() > 0.0);
        assert!(load_average().is_some_and(|l| l >= 0.0));
    }
}
