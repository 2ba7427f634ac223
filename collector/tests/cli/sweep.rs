//! `infermeter sweep` (#37) on the simulator: a grid of two parameters gives a report per
//! configuration naming its parameters, and an index; the servers are gone afterwards (by pid);
//! a server that exits at once, one that never becomes ready and one killed mid-run are each
//! recorded with their reason and log tail while the sweep measures the rest; Ctrl-C stops the
//! current server, keeps every finished report, and `--resume` goes on. A server started by
//! other means is measured after a hook applies each configuration.

use std::path::{Path, PathBuf};
use std::time::Duration;

use infermeter_report::index::{ConfigurationState, FailureStage, ReportIndex, Sweep};
use infermeter_report::{load_report, Report, RunStatus};

use crate::common::*;

/// A quick suite: one scenario, concurrency 4 (more than `mns=1` lets the engine run at once),
/// two seconds so that the engine's metrics are scraped during it.
const QUICK: &str = r#"
name = "sweep-quick"
warmup = 0
[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 128
output_tokens = 64
[peak]
levels = [4]
requests_per_slot = 3
min_seconds = 2
"#;

/// Two levels of at least three seconds each: long enough to be killed or interrupted mid-run.
const SLOW: &str = r#"
name = "sweep-slow"
warmup = 0
[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 128
output_tokens = 32
[peak]
levels = [1, 2]
requests_per_slot = 1
min_seconds = 3
"#;

/// `infermeter sim` on the fast test GPU at the sweep's port, `extra` options after.
fn sim_command(extra: &str) -> String {
    format!(
        "{{infermeter}} sim --quiet --listen 127.0.0.1:{{port}} --gpu test-fast --profiles {} {extra}",
        fast_profiles().display()
    )
}

/// The sweep's index, read back: its reports' list and its sweep section.
fn read_index(dir: &Path) -> (ReportIndex, Sweep) {
    let text = std::fs::read_to_string(dir.join("index.json")).unwrap();
    let sweep = Sweep::from_index(&text).unwrap().expect("a sweep section");
    (ReportIndex::parse(&text).unwrap(), sweep)
}

fn report_at(path: &Path) -> Report {
    load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Whether process `pid` or any process of its group still exists.
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only asks whether the process (group) exists.
    let one = unsafe { libc::kill(pid as i32, 0) } == 0;
    let group = unsafe { libc::killpg(pid as i32, 0) } == 0;
    one || group
}

#[tokio::test(flavor = "multi_thread")]
async fn timed_a_grid_of_the_simulator_gives_a_report_per_configuration_and_an_index() {
    let _timing = timing_sensitive().await;
    let dir = out_dir("sweep-grid");
    let suite = small_suite(&dir, QUICK);
    let out_dir = dir.join("out");
    let serve = sim_command("--max-num-seqs {mns} --gpus {tp}");
    let grid = ["--serve", &serve, "--param", "mns=1,8", "--param", "tp=1,2"];
    let out = infermeter(
        &sweep_args(
            &suite,
            &out_dir,
            &[&grid[..], &["--ready", "/health"]].concat(),
        ),
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("4 configurations, 4 complete, 0 failed"),
        "{printed}"
    );
    assert!(printed.contains("infermeter view "), "{printed}");

    let (index, sweep) = read_index(&out_dir);
    assert_eq!(index.reports.len(), 4);
    let names: Vec<String> = sweep
        .configurations
        .iter()
        .map(|c| c.parameters.to_string())
        .collect();
    assert_eq!(
        names,
        ["mns=1 tp=1", "mns=1 tp=2", "mns=8 tp=1", "mns=8 tp=2"]
    );
    let mut queue_s = Vec::new();
    for (c, entry) in sweep.configurations.iter().zip(&index.reports) {
        assert_eq!(c.state, ConfigurationState::Complete, "{c:?}");
        assert_eq!(entry.path, c.report);
        let path = out_dir.join(&c.report);
        check_json_schema(&path);
        let report = report_at(&path);
        assert_eq!(report.status, RunStatus::Complete);
        // The report names its configuration, in the sweep's order.
        let configuration = report.metadata.configuration.as_ref().expect("parameters");
        assert_eq!(configuration.parameters, c.parameters);
        assert_eq!(configuration.sweep.as_deref(), Some("out"));
        // The parameters reached the server: the deployment it reports, the batch it ran.
        let (mns, tp) = (
            c.parameters.get("mns").unwrap(),
            c.parameters.get("tp").unwrap(),
        );
        assert_eq!(report.metadata.hardware.gpu_count.to_string(), tp);
        let level = &report.series[0].levels[0];
        let server = level.server.as_ref().expect("the simulator's metrics");
        let running_max = server.running_max.expect("running requests scraped");
        assert!(running_max <= mns.parse().unwrap(), "{c:?}: {server:?}");
        queue_s.push(server.queue_time_mean_s.expect("queue time"));
        // The server's log is kept, and its process (group) is gone.
        let log = std::fs::read_to_string(out_dir.join(&c.log)).unwrap();
        assert!(log.contains("infermeter sim: serving"), "{log}");
        assert!(log.contains("stopped by SIGTERM"), "{log}");
        let pid = c.server_pid.expect("the server's pid");
        assert!(
            !alive(pid),
            "server {pid} of {} is still there",
            c.parameters
        );
    }
    // One sequence at a time queues three of the four in flight; eight queue none.
    assert!(
        queue_s[0] > 3.0 * queue_s[2] && queue_s[1] > 3.0 * queue_s[3],
        "mean queue time per configuration: {queue_s:?}"
    );

    // A second sweep into the same folder is refused, not mixed in.
    let again = infermeter(&sweep_args(&suite, &out_dir, &grid), &[]).await;
    assert!(!again.status.success());
    assert!(
        text(&again).contains("holds a sweep already: --resume"),
        "{}",
        text(&again)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_servers_are_recorded_and_the_sweep_measures_the_rest() {
    let dir = out_dir("sweep-faults");
    let suite = small_suite(&dir, SLOW);
    let out_dir = dir.join("out");
    // Each configuration's server misbehaves as its `mode` says; `kill -9 $$` kills the
    // simulator the shell became, as the kernel's OOM killer would.
    let serve = format!(
        "case {{mode}} in \
         exits) echo 'error: unrecognized arguments: --max-num-seqz' >&2; exit 2 ;; \
         hangs) echo 'loading weights (slowly)'; exec sleep 300 ;; \
         dies) (sleep 4; echo 'CUDA error: an illegal memory access was encountered'; kill -9 $$) & exec {} ;; \
         *) exec {} ;; \
         esac",
        sim_command("--seed 1"),
        sim_command("--seed 2"),
    );
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        infermeter(
            &sweep_args(
                &suite,
                &out_dir,
                &[
                    "--serve",
                    &serve,
                    "--configuration",
                    "mode=exits",
                    "--configuration",
                    "mode=hangs",
                    "--configuration",
                    "mode=dies",
                    "--configuration",
                    "mode=works",
                    "--ready-timeout",
                    "3",
                    "--stop-grace",
                    "2",
                ],
            ),
            &[],
        ),
    )
    .await
    .expect("the sweep ends");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("4 configurations, 1 complete, 3 failed"),
        "{printed}"
    );
    let (index, sweep) = read_index(&out_dir);
    let by_mode = |mode: &str| {
        sweep
            .configurations
            .iter()
            .find(|c| c.parameters.get("mode") == Some(mode))
            .unwrap()
    };

    let exits = by_mode("exits");
    let failure = exits.failure.as_ref().expect("a failure");
    assert_eq!(failure.stage, FailureStage::Start);
    assert_eq!(
        failure.reason,
        "the server exited with status 2 before it was ready"
    );
    assert_eq!(failure.exit_code, Some(2));
    assert!(
        failure
            .log_tail
            .iter()
            .any(|l| l.contains("--max-num-seqz")),
        "{failure:?}"
    );

    let hangs = by_mode("hangs");
    let failure = hangs.failure.as_ref().expect("a failure");
    assert_eq!(failure.stage, FailureStage::Ready);
    assert!(
        failure.reason.contains("was not ready within 3 s")
            && failure.reason.contains("; raise --ready-timeout"),
        "{failure:?}"
    );
    assert!(
        failure
            .log_tail
            .iter()
            .any(|l| l == "loading weights (slowly)"),
        "{failure:?}"
    );

    let dies = by_mode("dies");
    let failure = dies.failure.as_ref().expect("a failure");
    assert_eq!(failure.stage, FailureStage::Run);
    assert_eq!(failure.exit_signal, Some(9), "{failure:?}");
    assert!(
        failure
            .reason
            .starts_with("the server was killed by signal 9")
            && failure.reason.ends_with("during the run"),
        "{failure:?}"
    );
    assert!(
        failure
            .log_tail
            .iter()
            .any(|l| l.contains("illegal memory access")),
        "{failure:?}"
    );
    // What was measured before it died is kept, as a partial report.
    let partial = report_at(&out_dir.join(&dies.report));
    assert!(
        matches!(partial.status, RunStatus::Partial { .. }),
        "{:?}",
        partial.status
    );

    let works = by_mode("works");
    assert_eq!(works.state, ConfigurationState::Complete);
    assert_eq!(
        report_at(&out_dir.join(&works.report)).status,
        RunStatus::Complete
    );
    // The index lists what has a report: the complete one, and the partial one if a level
    // was measured before the kill.
    assert!(index.reports.iter().any(|e| e.path == works.report));
    assert!(!index
        .reports
        .iter()
        .any(|e| e.path == exits.report || e.path == hangs.report));
    for c in &sweep.configurations {
        if let Some(pid) = c.server_pid {
            assert!(!alive(pid), "{}: {pid} is still there", c.parameters);
        }
    }
    // The summary names each failure and where its log is.
    assert!(
        printed.contains("the server exited with status 2 before it was ready (log: "),
        "{printed}"
    );
}

/// Waits until `ready` holds of the sweep's index (or panics after `within`).
async fn wait_for(dir: &Path, within: Duration, ready: impl Fn(&Sweep) -> bool) -> Sweep {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let text = std::fs::read_to_string(dir.join("index.json")).unwrap_or_default();
        if let Ok(Some(sweep)) = Sweep::from_index(&text) {
            if ready(&sweep) {
                return sweep;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sweep did not get there: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn measured_records(report: &Path) -> usize {
    std::fs::read_to_string(records_file(report))
        .map(|t| t.lines().filter(|l| l.contains("\"warmup\":false")).count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_the_current_server_and_resume_goes_on() {
    let dir = out_dir("sweep-interrupt");
    let suite = small_suite(&dir, SLOW);
    let out_dir = dir.join("out");
    let serve = sim_command("--seed {seed}");
    let args = |resume: bool| {
        let mut args = sweep_args(
            &suite,
            &out_dir,
            &["--serve", &serve, "--param", "seed=1,2,3"],
        );
        if resume {
            args.push("--resume".into());
        }
        args
    };
    let child = tokio::process::Command::new(BIN)
        .args(args(false))
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // The second configuration's server is measuring: a few of its requests are on disk.
    let second: PathBuf = out_dir.join("seed-2.json");
    let sweep = wait_for(&out_dir, Duration::from_secs(90), |s| {
        s.configurations[1].state == ConfigurationState::Running
            && s.configurations[1].ready_s.is_some()
            && measured_records(&second) >= 2
    })
    .await;
    let server = sweep.configurations[1].server_pid.expect("its pid");
    assert!(alive(server));
    let first = out_dir.join(&sweep.configurations[0].report);
    let first_bytes = std::fs::read(&first).unwrap();
    // SAFETY: a signal to our own child.
    assert_eq!(
        unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) },
        0
    );
    let stopped = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the sweep stops")
        .unwrap();
    assert_eq!(stopped.status.code(), Some(130));
    // Said once, by the run it stopped (not again by the finished configuration's run).
    let log = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(log.matches("SIGINT received").count(), 1, "{log}");
    assert!(
        !alive(server),
        "the interrupted configuration's server is gone"
    );

    let (_, sweep) = read_index(&out_dir);
    let states: Vec<ConfigurationState> = sweep.configurations.iter().map(|c| c.state).collect();
    assert_eq!(
        states,
        [
            ConfigurationState::Complete,
            ConfigurationState::Interrupted,
            ConfigurationState::Pending
        ]
    );
    assert_eq!(
        std::fs::read(&first).unwrap(),
        first_bytes,
        "kept as it was"
    );
    let partial = report_at(&second);
    assert!(
        matches!(&partial.status, RunStatus::Partial { reason } if reason.contains("SIGINT")),
        "{:?}",
        partial.status
    );
    let before = measured_records(&second);

    // --resume skips the finished configuration, continues the interrupted one, runs the last.
    let out = tokio::time::timeout(Duration::from_secs(120), infermeter(&args(true), &[]))
        .await
        .expect("the resumed sweep ends");
    assert!(out.status.success(), "{}", text(&out));
    let (index, sweep) = read_index(&out_dir);
    assert_eq!(index.reports.len(), 3);
    assert!(sweep
        .configurations
        .iter()
        .all(|c| c.state == ConfigurationState::Complete));
    assert_eq!(
        std::fs::read(&first).unwrap(),
        first_bytes,
        "not measured again"
    );
    assert_eq!(report_at(&second).status, RunStatus::Complete);
    assert!(
        measured_records(&second) >= before,
        "the interrupted configuration's records are kept"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_started_by_other_means_is_measured_after_each_hook() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("sweep-hook");
    let suite = small_suite(&dir, QUICK);
    let out_dir = dir.join("out");
    let applied = dir.join("applied.txt");
    // The hook stands for `kubectl rollout`: it applies the configuration, or fails.
    let hook = format!(
        "echo \"rolling out replicas={{replicas}}\"; [ {{replicas}} != 3 ] || {{ echo 'error: quota exceeded' >&2; exit 4; }}; echo {{replicas}} >> {}",
        applied.display()
    );
    let base_url = sim.base_url();
    let hooked = [
        "--base-url",
        &base_url,
        "--hook",
        &hook,
        "--param",
        "replicas=1,3,2",
    ];
    let out = infermeter(&sweep_args(&suite, &out_dir, &hooked), &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&applied).unwrap(), "1\n2\n");
    let (index, sweep) = read_index(&out_dir);
    assert_eq!(sweep.serve, None);
    assert_eq!(index.reports.len(), 2);
    let failed = &sweep.configurations[1];
    let failure = failed.failure.as_ref().expect("the hook's failure");
    assert_eq!(failure.stage, FailureStage::Hook);
    assert_eq!(failure.exit_code, Some(4));
    assert_eq!(failure.reason, "the hook exited with status 4");
    assert!(
        failure
            .log_tail
            .iter()
            .any(|l| l == "error: quota exceeded"),
        "{failure:?}"
    );
    let report = report_at(&out_dir.join(&sweep.configurations[2].report));
    let configuration = report.metadata.configuration.unwrap();
    assert_eq!(configuration.parameters.to_string(), "replicas=2");
    sim.shutdown().await;
}

/// The processes of group `pgid` that have not exited (zombies left out: an orphan's exit
/// waits for whichever process adopted it to reap it).
fn live_in_group(pgid: u32) -> Vec<u32> {
    let entries = std::fs::read_dir("/proc").unwrap();
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or("", |(_, rest)| rest)
                .split_whitespace()
                .collect();
            fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str())
        })
        .collect()
}

/// The sweep started as a child, its first configuration's server up and measuring.
async fn sweep_measuring(args: Vec<String>, out_dir: &Path) -> (tokio::process::Child, u32) {
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // The sweep leaves SIGHUP ignored when it was started ignoring it (as under `nohup`), and
    // children inherit that: give it the default, so the SIGHUP test does not depend on how the
    // tests were started.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    let sweep = wait_for(out_dir, Duration::from_secs(60), |s| {
        s.configurations[0].ready_s.is_some()
            && measured_records(&out_dir.join(&s.configurations[0].report)) >= 1
    })
    .await;
    let server = sweep.configurations[0].server_pid.expect("its pid");
    assert!(!live_in_group(server).is_empty());
    (child, server)
}

/// #43 item 13: a sweep killed by SIGKILL leaves no server running. The server is the simulator
/// behind a shell (`sh -c "… & wait"`): the shell dies with the sweep, and the watchdog stops the
/// rest of the group.
#[tokio::test(flavor = "multi_thread")]
async fn a_sweep_killed_by_sigkill_leaves_no_server() {
    let dir = out_dir("sweep-sigkill");
    let suite = small_suite(&dir, SLOW);
    let out_dir = dir.join("out");
    let serve = format!("{} & wait", sim_command("--seed {seed}"));
    let args = sweep_args(&suite, &out_dir, &["--serve", &serve, "--param", "seed=1"]);
    let (mut child, server) = sweep_measuring(args, &out_dir).await;
    assert!(
        live_in_group(server).len() >= 2,
        "the shell and the simulator"
    );
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !live_in_group(server).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "5 s after the sweep's SIGKILL its server still runs: {:?}",
            live_in_group(server)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// #43 item 13: SIGHUP (a closed terminal) is handled as SIGTERM: the server is stopped, the
/// configuration interrupted, exit 129. `--resume` then refuses changed settings unless told to
/// go on.
#[tokio::test(flavor = "multi_thread")]
async fn sighup_stops_a_sweep_and_resume_refuses_changed_settings() {
    let dir = out_dir("sweep-sighup");
    let suite = small_suite(&dir, SLOW);
    let out_dir = dir.join("out");
    let serve = sim_command("--seed {seed}");
    let args = |seeds: &str, more: &[&str]| {
        let grid = ["--serve", &serve, "--param", seeds];
        sweep_args(&suite, &out_dir, &[&grid[..], more].concat())
    };
    let (child, server) = sweep_measuring(args("seed=1,2", &[]), &out_dir).await;
    // SAFETY: a signal to our own child.
    assert_eq!(
        unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGHUP) },
        0
    );
    let stopped = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the sweep stops")
        .unwrap();
    assert_eq!(stopped.status.code(), Some(129), "{}", text(&stopped));
    assert!(live_in_group(server).is_empty());
    let (_, sweep) = read_index(&out_dir);
    assert_eq!(
        sweep.configurations[0].state,
        ConfigurationState::Interrupted
    );
    let partial = report_at(&out_dir.join(&sweep.configurations[0].report));
    assert!(
        matches!(&partial.status, RunStatus::Partial { reason } if reason.contains("SIGHUP")),
        "{:?}",
        partial.status
    );

    let changed = infermeter(&args("seed=1,2,3", &["--resume"]), &[]).await;
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let said = text(&changed);
    assert!(
        said.contains("was started with other settings: the configurations changed from [seed=1] [seed=2] to [seed=1] [seed=2] [seed=3]")
            && said.contains("--accept-changes"),
        "{said}"
    );
    let accepted = tokio::time::timeout(
        Duration::from_secs(120),
        infermeter(&args("seed=1", &["--resume", "--accept-changes"]), &[]),
    )
    .await
    .expect("the resumed sweep ends");
    assert!(accepted.status.success(), "{}", text(&accepted));
    let (_, sweep) = read_index(&out_dir);
    assert_eq!(sweep.configurations[0].state, ConfigurationState::Complete);
    assert_eq!(sweep.planned.as_deref().map(<[_]>::len), Some(1));
}
