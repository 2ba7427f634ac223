//! A command of the sweep (a server, a hook) as a process group of its own: started by `sh -c`
//! with its output appended to a log, watched, and stopped as a whole (SIGTERM, then SIGKILL
//! after a grace period), so a server's workers go with it. The group is not the terminal's, so
//! Ctrl-C reaches the sweep alone, which then stops the server itself.
//!
//! The sweep is made a child subreaper (Linux): a server that `sh` started outlives the shell
//! when the group is signalled, and would otherwise be left to an init that may never reap it.
//!
//! A sweep that dies without stopping its server (SIGKILL, a crash) takes the server with it:
//! the group's leader gets SIGTERM when the sweep dies (`PR_SET_PDEATHSIG`), and a watchdog
//! process of its own (`infermeter sweep-watchdog`, [`watch`]) stops the whole group, the
//! leader's children included, once the sweep is gone. The server's environment carries
//! [`SWEEP_DIR_VAR`], by which `--resume` knows a server an interrupted attempt left.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use std::os::unix::process::ExitStatusExt;

/// How many of a log's last lines a failure keeps.
pub const TAIL_LINES: usize = 20;
/// Longest line a failure keeps of a log, in characters.
const TAIL_LINE_CHARS: usize = 400;

/// Makes orphaned descendants this process's children, so their exit can be reaped here.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with an integer argument; no memory is passed.
        let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if done != 0 {
            tracing::warn!(
                "cannot become a subreaper ({}): a server's processes that outlive its shell are left to init",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// The environment variable naming the sweep's folder in every server and hook it starts.
pub const SWEEP_DIR_VAR: &str = "INFERMETER_SWEEP_DIR";

/// A command running in its own process group.
pub struct Group {
    child: tokio::process::Child,
    /// Stops the group if the sweep dies first (none where it could not start: logged).
    _watchdog: Option<tokio::process::Child>,
    pgid: i32,
    /// The leader's exit, once seen.
    status: Option<ExitStatus>,
    log: PathBuf,
    /// Where this attempt's output starts in the log.
    log_start: u64,
}

/// How a stop went.
#[derive(Debug, Clone, PartialEq)]
pub enum Stopped {
    /// Every process of the group had exited before the stop.
    AlreadyGone,
    /// Gone within the grace after SIGTERM.
    Terminated(Duration),
    /// Still there after the grace: SIGKILL.
    Killed,
    /// Processes left even after SIGKILL (their ids).
    Left(Vec<i32>),
}

impl Group {
    /// Starts `sh -c command` with `env` added, its output appended to `log` after a header
    /// line (`what` and the command as written; the environment's values are not written).
    pub fn start(
        what: &str,
        command: &str,
        env: &[(String, String)],
        log: &Path,
    ) -> std::io::Result<Group> {
        let mut file = OpenOptions::new().create(true).append(true).open(log)?;
        let log_start = file.seek(SeekFrom::End(0))?;
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        writeln!(
            file,
            "==> {} infermeter sweep: {what}: sh -c {command:?}{}",
            chrono::Utc::now().to_rfc3339(),
            if names.is_empty() {
                String::new()
            } else {
                format!(" (environment: {})", names.join(", "))
            }
        )?;
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .process_group(0)
            // A sweep that ends by an error still stops its server (Group::stop is the way).
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let child = cmd.spawn()?;
        let pgid = child.id().expect("a child just spawned has an id") as i32;
        Ok(Group {
            child,
            _watchdog: start_watchdog(pgid),
            pgid,
            status: None,
            log: log.to_path_buf(),
            log_start,
        })
    }

    /// The leader's process id (the group's id).
    pub fn pid(&self) -> u32 {
        self.pgid as u32
    }

    /// Waits until the leader exits; its status. Cancel-safe.
    pub async fn exited(&mut self) -> ExitStatus {
        if let Some(status) = self.status {
            return status;
        }
        let status = match self.child.wait().await {
            Ok(status) => status,
            // Only when the child was reaped elsewhere: report it as gone without a status.
            Err(_) => ExitStatus::from_raw(0),
        };
        self.status = Some(status);
        status
    }

    /// The leader's status, if it has exited.
    pub fn try_exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// This attempt's last lines of the log.
    pub fn log_tail(&self) -> Vec<String> {
        log_tail(&self.log, self.log_start)
    }

    /// Stops the whole group: SIGTERM, up to `grace` for every process to exit, then SIGKILL.
    /// The log says how it went.
    pub async fn stop(&mut self, grace: Duration) -> Stopped {
        let stopped = self.stop_group(grace).await;
        let line = match &stopped {
            Stopped::AlreadyGone => "had exited".to_string(),
            Stopped::Terminated(took) => {
                format!("stopped by SIGTERM in {:.1} s", took.as_secs_f64())
            }
            Stopped::Killed => format!(
                "killed by SIGKILL: still there {:.0} s after SIGTERM",
                grace.as_secs_f64()
            ),
            Stopped::Left(pids) => format!("processes {pids:?} left even after SIGKILL"),
        };
        let appended = OpenOptions::new()
            .append(true)
            .open(&self.log)
            .and_then(|mut f| {
                writeln!(
                    f,
                    "==> {} infermeter sweep: {line}",
                    chrono::Utc::now().to_rfc3339()
                )
            });
        if let Err(e) = appended {
            tracing::warn!("cannot append to {}: {e}", self.log.display());
        }
        stopped
    }

    async fn stop_group(&mut self, grace: Duration) -> Stopped {
        if self.is_gone() {
            return Stopped::AlreadyGone;
        }
        let started = Instant::now();
        self.signal(libc::SIGTERM);
        if self.wait_gone(grace).await {
            return Stopped::Terminated(started.elapsed());
        }
        self.signal(libc::SIGKILL);
        if self.wait_gone(Duration::from_secs(5)).await {
            return Stopped::Killed;
        }
        Stopped::Left(members(self.pgid))
    }

    fn signal(&self, signal: i32) {
        // SAFETY: signals the process group this Group started; no memory is passed.
        unsafe { libc::killpg(self.pgid, signal) };
    }

    /// Whether no process of the group is left, reaping those that are this process's.
    fn is_gone(&mut self) -> bool {
        if self.try_exited().is_none() {
            return false;
        }
        // The leader is reaped: what is left of the group and has become ours (orphans, as a
        // subreaper) can be reaped without taking the leader from tokio.
        loop {
            let mut status = 0;
            // SAFETY: waits for a child in our group without blocking.
            let pid = unsafe { libc::waitpid(-self.pgid, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
        }
        // SAFETY: signal 0 only asks whether any process of the group exists.
        let alive = unsafe { libc::killpg(self.pgid, 0) } == 0;
        !alive
    }

    async fn wait_gone(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if self.is_gone() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Asks the kernel to send the command SIGTERM when the sweep dies (Linux). The signal follows
/// the thread that started the child: the runtime's workers live as long as the sweep.
fn die_with_parent(cmd: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let sweep = std::process::id() as libc::pid_t;
        // SAFETY: the closure runs in the forked child before exec and calls only prctl and
        // getppid, which are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The sweep died between the fork and the prctl: no signal would come.
                if libc::getppid() != sweep {
                    return Err(std::io::Error::other("the sweep exited"));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Starts `infermeter sweep-watchdog` for group `pgid`, in a group of its own (so a terminal's
/// signals to the sweep do not end it first).
fn start_watchdog(pgid: i32) -> Option<tokio::process::Child> {
    // A unit test's binary is not `infermeter`: it has no such subcommand.
    if cfg!(test) {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let started = tokio::process::Command::new(exe)
        .args(["sweep-watchdog", "--sweep"])
        .arg(std::process::id().to_string())
        .arg("--group")
        .arg(pgid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    match started {
        Ok(child) => Some(child),
        Err(e) => {
            tracing::warn!("cannot start the watchdog of server group {pgid} ({e}): if the sweep is killed, its server is left running");
            None
        }
    }
}

/// The watchdog: waits while the sweep (`sweep`, its parent) lives and group `pgid` has
/// processes; once the sweep is gone, stops the group (SIGTERM, two seconds, SIGKILL).
pub async fn watch(sweep: u32, pgid: i32) {
    loop {
        // SAFETY: getppid takes nothing; signal 0 only asks whether the group exists.
        let (parent, alive) = unsafe { (libc::getppid() as u32, libc::killpg(pgid, 0) == 0) };
        if !alive {
            return;
        }
        if parent != sweep {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // SAFETY: signals the group the dead sweep started.
    unsafe { libc::killpg(pgid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && !live_members(pgid).is_empty() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // SAFETY: as above.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
}

/// The sweep folder `dir` as the marker names it: absolute, so that a sweep resumed from
/// another working directory knows its servers.
pub fn marker_dir(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
}

/// Stops what an interrupted attempt left of group `pgid`: its live processes whose environment
/// names this sweep's folder `dir` (another program may have the group id by now). Whether any
/// was found.
pub async fn stop_left_over(pgid: i32, dir: &Path, grace: Duration) -> bool {
    let marker = format!("{SWEEP_DIR_VAR}={}", marker_dir(dir).display());
    let ours = live_members(pgid).into_iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == marker.as_bytes()))
    });
    if !ours {
        return false;
    }
    for (signal, within) in [
        (libc::SIGTERM, grace),
        (libc::SIGKILL, Duration::from_secs(5)),
    ] {
        // SAFETY: signals a group whose processes carry this sweep's marker.
        unsafe { libc::killpg(pgid, signal) };
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if live_members(pgid).is_empty() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    true
}

/// The processes of group `pgid` that are not zombies (those have exited; only their parent's
/// wait is missing).
pub fn live_members(pgid: i32) -> Vec<i32> {
    members(pgid)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat_fields(&stat).first() != Some(&"Z"))
        })
        .collect()
}

/// The fields of a /proc stat line after the command's name in parentheses: state, ppid, pgrp…
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect()
}

/// The processes of group `pgid`, from /proc (Linux; elsewhere none are listed).
fn members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat_fields(&stat).get(2) == Some(&pgid.to_string().as_str()))
        })
        .collect()
}

/// The last lines of `log` from `start` on, each cut to a readable length.
pub fn log_tail(log: &Path, start: u64) -> Vec<String> {
    let mut text = Vec::new();
    let read = File::open(log).and_then(|mut f| {
        let len = f.metadata()?.len();
        // The tail is in the last few hundred KB, whatever the log's length.
        f.seek(SeekFrom::Start(start.max(len.saturating_sub(256 * 1024))))?;
        f.read_to_end(&mut text)
    });
    if read.is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| match l.char_indices().nth(TAIL_LINE_CHARS) {
            Some((at, _)) => format!("{}…", &l[..at]),
            None => l.to_string(),
        })
        .collect()
}

/// An exit in words: "exited with status 2", "was killed by signal 9 (SIGKILL)"; and its code
/// and signal.
pub fn describe(status: ExitStatus) -> (String, Option<i32>, Option<i32>) {
    match (status.code(), status.signal()) {
        (Some(code), _) if code > 128 && code - 128 <= 64 => (
            format!(
                "exited with status {code} (as a shell reports signal {}{})",
                code - 128,
                signal_name(code - 128)
            ),
            Some(code),
            None,
        ),
        (Some(code), _) => (format!("exited with status {code}"), Some(code), None),
        (None, Some(signal)) => (
            format!("was killed by signal {signal}{}", signal_name(signal)),
            None,
            Some(signal),
        ),
        (None, None) => ("exited".to_string(), None, None),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGKILL => " (SIGKILL, e.g. out of memory)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGTERM => " (SIGTERM)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_are_named() {
        let (text, code, signal) = describe(ExitStatus::from_raw(2 << 8));
        assert_eq!(
            (text.as_str(), code, signal),
            ("exited with status 2", Some(2), None)
        );
        let (text, _, _) = describe(ExitStatus::from_raw(137 << 8));
        assert!(
            text.contains("status 137 (as a shell reports signal 9 (SIGKILL"),
            "{text}"
        );
        let (text, code, signal) = describe(ExitStatus::from_raw(9));
        assert!(text.starts_with("was killed by signal 9"), "{text}");
        assert_eq!((code, signal), (None, Some(9)));
    }

    #[test]
    fn the_tail_is_this_attempts_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.log");
        let earlier = "an earlier attempt\n";
        let lines: String = (0..30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&log, format!("{earlier}{lines}{}\n", "x".repeat(1000))).unwrap();
        let tail = log_tail(&log, earlier.len() as u64);
        assert_eq!(tail.len(), TAIL_LINES);
        assert_eq!(tail[0], "line 11");
        assert_eq!(tail[19].chars().count(), TAIL_LINE_CHARS + 1);
        assert_eq!(log_tail(&log, 0).len(), TAIL_LINES);
        assert!(log_tail(&dir.path().join("none.log"), 0).is_empty());
    }

    /// #43 item 13: `--resume` stops the server an interrupted sweep left (its group's
    /// processes carry this sweep's folder), and leaves alone a group that is not this sweep's.
    #[tokio::test]
    async fn a_server_left_by_an_interrupted_sweep_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("left.log");
        let marker = vec![(
            SWEEP_DIR_VAR.to_string(),
            marker_dir(dir.path()).display().to_string(),
        )];
        // Forgotten, as a killed sweep forgets it: only its pid is in the index.
        let left = Group::start("test", "sleep 30 & wait", &marker, &log).unwrap();
        let mut other = Group::start("test", "sleep 30 & wait", &[], &log).unwrap();
        let (left_pgid, other_pgid) = (left.pgid, other.pgid);
        std::mem::forget(left);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(live_members(left_pgid).len(), 2);
        let grace = Duration::from_secs(2);
        assert!(!stop_left_over(other_pgid, dir.path(), grace).await);
        assert_eq!(live_members(other_pgid).len(), 2, "not this sweep's");
        assert!(stop_left_over(left_pgid, dir.path(), grace).await);
        assert!(live_members(left_pgid).is_empty());
        other.stop(grace).await;
    }

    #[tokio::test]
    async fn a_group_is_stopped_whole_and_a_stubborn_one_killed() {
        become_subreaper();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("g.log");
        // A shell whose child outlives it: SIGTERM ends both.
        let mut group = Group::start("test", "sleep 30 & echo started; wait", &[], &log).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(members(group.pgid).len() >= 2);
        let pgid = group.pgid;
        assert!(matches!(
            group.stop(Duration::from_secs(5)).await,
            Stopped::Terminated(_)
        ));
        assert!(members(pgid).is_empty());
        assert!(group.log_tail().iter().any(|l| l == "started"));
        // One that ignores SIGTERM is killed after the grace.
        let mut group = Group::start(
            "test",
            "trap '' TERM; echo ready; sleep 30",
            &[("A".into(), "1".into())],
            &log,
        )
        .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let pgid = group.pgid;
        assert_eq!(
            group.stop(Duration::from_millis(300)).await,
            Stopped::Killed
        );
        assert!(members(pgid).is_empty());
        let header = std::fs::read_to_string(&log).unwrap();
        assert!(header.contains("(environment: A)"), "{header}");
        assert_eq!(
            group.stop(Duration::from_secs(1)).await,
            Stopped::AlreadyGone
        );
    }
}
