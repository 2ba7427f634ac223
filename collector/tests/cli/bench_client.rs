//! `bench-client` in small: both clients stream every request to its end, in alternating runs,
//! and the table sets infermeter beside the floor. (Its figures are the full benchmark's
//! business.)

use std::time::Duration;

use crate::common::{infermeter_dev, out_dir, text};

#[tokio::test(flavor = "multi_thread")]
async fn both_clients_stream_every_request_and_the_table_compares_them() {
    let dir = out_dir("bench-client");
    let args = [
        "bench-client",
        "--streams",
        "3",
        "--runs",
        "2",
        "--output-tokens",
        "16",
        "--syscalls",
        "off",
        "--out-dir",
        dir.to_str().unwrap(),
    ];
    let out = tokio::time::timeout(Duration::from_secs(120), infermeter_dev(&args))
        .await
        .expect("the benchmark ends");
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Each run measures both, the second in the other order.
    let runs: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" streams, run "))
        .collect();
    assert_eq!(runs.len(), 4, "{stdout}");
    assert!(
        runs[0].contains("infermeter") && runs[2].contains("floor"),
        "{stdout}"
    );
    // Whole requests of 16 tokens: the floor's three on each of 3 streams, infermeter's peak
    // level at least its first wave and the measured one.
    let tokens = |line: &str| -> u64 {
        let before = &line[..line.find(" tokens in").expect("a token count")];
        before.rsplit(' ').next().unwrap().parse().unwrap()
    };
    for line in &runs {
        let n = tokens(line);
        assert_eq!(n % 16, 0, "{line}");
        if line.contains("floor") {
            assert_eq!(n, 144, "{line}");
        } else {
            assert!(n >= 96, "{line}");
        }
    }
    let row = |client: &str| -> Vec<f64> {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(client))
            .unwrap_or_else(|| panic!("no {client} row in {stdout}"));
        line.split_whitespace()
            .filter_map(|f| f.trim_end_matches('×').parse().ok())
            .collect()
    };
    // streams, runs, user, sys, CPU (, ratio), … : CPU is user + system, and there is time.
    let floor = row("floor");
    let ours = row("infermeter");
    assert_eq!((floor[0], floor[1]), (3.0, 2.0), "{stdout}");
    assert!(ours[4] > 0.0 && floor[4] > 0.0, "{stdout}");
    assert!((ours[5] - ours[4] / floor[4]).abs() < 0.01, "{stdout}");
}
