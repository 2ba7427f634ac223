//! 2,000 concurrent streams through one simulator, every one complete and exact.

use futures::StreamExt;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_concurrent_streams_complete() {
    let sim = sim_with(|a| a.max_num_seqs = 2048).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let url = format!("{}/chat/completions", sim.base_url());
    let start = std::time::Instant::now();
    let tasks: Vec<_> = (0..2000u32)
        .map(|i| {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move {
                let out = 8 + i % 9;
                let body = serde_json::from_str::<serde_json::Value>(&chat_body(
                    &format!("request {i}"),
                    out,
                    r#","stream":true,"stream_options":{"include_usage":true}"#,
                ))
                .unwrap();
                let resp = client.post(&url).json(&body).send().await.expect("connect");
                assert_eq!(resp.status(), 200);
                let mut bytes = Vec::new();
                let mut s = resp.bytes_stream();
                while let Some(b) = s.next().await {
                    bytes.extend_from_slice(&b.expect("body"));
                }
                let text = String::from_utf8(bytes).unwrap();
                assert!(text.ends_with("data: [DONE]\n\n"));
                let events = sse_json(&text);
                let content = events
                    .iter()
                    .filter(|e| {
                        e["choices"][0]["delta"]["content"]
                            .as_str()
                            .is_some_and(|c| !c.is_empty())
                    })
                    .count() as u32;
                let usage = events.last().unwrap()["usage"]["completion_tokens"]
                    .as_u64()
                    .unwrap() as u32;
                (out, content, usage)
            })
        })
        .collect();
    let mut n = 0;
    for t in tasks {
        let (want, content, usage) = t.await.expect("stream task");
        assert_eq!((content, usage), (want, want));
        n += 1;
    }
    assert_eq!(n, 2000);
    eprintln!("2000 streams in {:.1}s", start.elapsed().as_secs_f64());
    let metrics = reqwest::get(format!("http://{}/metrics", sim.addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains(&format!(
        "vllm:time_to_first_token_seconds_count{{model_name=\"{MODEL}\"}} 2000"
    )));
    sim.shutdown().await;
}
