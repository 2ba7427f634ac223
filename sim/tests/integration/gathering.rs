//! A simulator serving a llama.cpp fit starts the requests that reach it together in one step,
//! as llama-server does and as the what-if's replay assumes, though their arrivals spread over a
//! few milliseconds (a client's closed loop on a loaded machine); one sent once that step runs
//! waits for the next.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use crate::support::*;

/// The instant the first streamed token of a request sent `after` from `origin` came back.
async fn first_token(base: String, origin: Instant, after: Duration) -> Instant {
    tokio::time::sleep_until((origin + after).into()).await;
    let prompt = "the quick brown fox jumps over the lazy dog ".repeat(20);
    let response = reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
        .json(&json!({
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": 4,
            "ignore_eos": true,
            "stream": true,
        }))
        .send()
        .await
        .expect("the simulator answers");
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut text = String::new();
    while let Some(bytes) = body.next().await {
        text.push_str(&String::from_utf8_lossy(&bytes.expect("the stream reads")));
        let token = sse_json(text.rsplit_once("\n\n").map_or("", |(whole, _)| whole))
            .iter()
            .any(|e| {
                e["choices"][0]["delta"]["content"]
                    .as_str()
                    .is_some_and(|c| !c.is_empty())
            });
        if token {
            return Instant::now();
        }
    }
    panic!("no token came: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_sent_together_start_in_one_step() {
    let report = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/reports/llama-cpu-tiny-llama.json"
    );
    let sim = infermeter_sim::start(infermeter_sim::SimConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        fit: Some(report.into()),
        ..Default::default()
    })
    .await
    .expect("the simulator starts");
    let origin = Instant::now();
    // Three within 8 ms, then one while their prefill (half a second) runs. Apart, each would
    // get its first token a prefill after the one before.
    let offsets = [0, 4, 8, 100].map(Duration::from_millis);
    let tasks: Vec<_> = offsets
        .iter()
        .map(|&after| tokio::spawn(first_token(sim.base_url(), origin, after)))
        .collect();
    let mut firsts = Vec::new();
    for task in tasks {
        firsts.push(task.await.expect("the request's task ends"));
    }
    let since = |i: usize| firsts[i].duration_since(origin).as_secs_f64() * 1e3;
    let together =
        (0..3).map(since).fold(f64::NAN, f64::max) - (0..3).map(since).fold(f64::NAN, f64::min);
    assert!(
        together < 50.0,
        "the three sent within 8 ms got their first tokens {together:.1} ms apart: {:?} ms",
        (0..4).map(since).collect::<Vec<_>>()
    );
    assert!(
        since(3) > since(0) + 100.0,
        "the one sent 100 ms later joined their step: {:?} ms",
        (0..4).map(since).collect::<Vec<_>>()
    );
}
