//! Two binaries: `infermeter` lists what users run, `infermeter-dev` the developers' commands
//! (self-benchmarks and calibration), and neither lists the other's.

use crate::common::{infermeter, infermeter_dev, text};

const DEVELOPERS: [&str; 4] = ["bench-timing", "bench-soak", "bench-client", "calibrate"];

#[tokio::test]
async fn users_help_lists_what_users_run_and_dev_help_the_rest() {
    let out = infermeter(&["--help"], &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    for command in [
        "run", "sweep", "merge", "summary", "view", "sim", "fit", "man",
    ] {
        assert!(
            help.contains(&format!("  {command} ")),
            "no {command}:\n{help}"
        );
    }
    for command in DEVELOPERS {
        assert!(
            !help.contains(&format!("  {command} ")),
            "{command}:
{help}"
        );
    }
    assert!(!help.contains("bench-"), "{help}");
    assert!(!help.contains("sweep-watchdog"), "hidden:\n{help}");

    let out = infermeter_dev(&["--help"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    for command in DEVELOPERS {
        assert!(
            help.contains(&format!("  {command} ")),
            "no {command}:\n{help}"
        );
    }
    assert!(!help.contains("bench-client-floor"), "hidden:\n{help}");
    assert!(!help.contains("  run "), "{help}");
}

#[tokio::test]
async fn a_developers_command_is_not_a_users_one() {
    for command in DEVELOPERS {
        let out = infermeter(&[command, "--help"], &[]).await;
        assert!(
            !out.status.success(),
            "infermeter {command}: {}",
            text(&out)
        );
        let out = infermeter_dev(&[command, "--help"]).await;
        assert!(
            out.status.success(),
            "infermeter-dev {command}: {}",
            text(&out)
        );
    }
}
