//! Every fault kind, checked as raw bytes on the wire.

use crate::support::*;

fn contents(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn every_fault_kind_on_the_wire() {
    let spec = "schedule=429,500,503,reset,stall:1,malformed,error,nodone,multi:4,keepalive,crlf,utf8split,ok";
    let sim = sim_with(|a| {
        a.faults = Some(spec.into());
        a.emit_timestamps = true;
    })
    .await;
    let body = chat_body(
        "go",
        10,
        r#","stream":true,"stream_options":{"include_usage":true}"#,
    );
    let next = || {
        let body = body.clone();
        let addr = sim.addr;
        async move { raw_post(addr, "/v1/chat/completions", &body, None).await }
    };

    let r = next().await;
    assert_eq!(r.status, 429);
    assert!(
        r.head.to_ascii_lowercase().contains("retry-after: 1"),
        "{}",
        r.head
    );
    let v: serde_json::Value = serde_json::from_slice(&r.body()).unwrap();
    assert_eq!(v["error"]["code"], 429);
    for code in [500, 503] {
        let r = next().await;
        assert_eq!(r.status, code);
        let v: serde_json::Value = serde_json::from_slice(&r.body()).unwrap();
        assert!(v["error"]["message"].is_string());
    }

    // reset: some tokens, then a TCP RST (no chunked terminator).
    let r = next().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.error, Some(std::io::ErrorKind::ConnectionReset), "{r:?}");
    assert!(!r.complete);
    let text = String::from_utf8_lossy(&r.body()).to_string();
    assert_eq!(contents(&sse_json(&text)).len(), 5);
    assert!(!text.contains("[DONE]"));

    // stall:1 — a one-second silence between two consecutive tokens.
    let r = next().await;
    let events = sse_json(&r.text());
    let ts: Vec<u64> = events
        .iter()
        .map(|e| e["infermeter_ts"]["mono_ns"].as_u64().unwrap())
        .collect();
    let max_gap = ts.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(max_gap >= 1_000_000_000, "{max_gap}");
    assert_eq!(contents(&events).len(), 10);

    // malformed: one broken data line, the rest intact.
    let r = next().await;
    let text = r.text();
    assert!(text.contains("data: {\"id\": \"truncated\n\n"));
    let good: Vec<_> = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .collect();
    assert_eq!(contents(&good).len(), 10);
    assert!(text.ends_with("data: [DONE]\n\n"));

    // error: an error object mid-stream, then [DONE].
    let r = next().await;
    let text = r.text();
    let events = sse_json(&text);
    let err = events
        .iter()
        .find(|e| e.get("error").is_some())
        .expect("error event");
    assert_eq!(err["error"]["code"], 500);
    assert_eq!(contents(&events).len(), 5);
    assert!(text.ends_with("data: [DONE]\n\n") && r.complete);

    // nodone: all tokens and usage, clean end, no [DONE].
    let r = next().await;
    let text = r.text();
    assert!(r.complete && !text.contains("[DONE]"));
    let events = sse_json(&text);
    assert_eq!(contents(&events).len(), 10);
    assert_eq!(events.last().unwrap()["usage"]["completion_tokens"], 10);

    // multi:4 — 10 tokens in chunks of 4, 4, 2.
    let r = next().await;
    let c = contents(&sse_json(&r.text()));
    assert_eq!(c.len(), 3);
    assert_eq!(
        c.iter().map(|s| s.matches(' ').count()).collect::<Vec<_>>(),
        vec![4, 4, 2]
    );

    // keepalive: a comment line before every event.
    let r = next().await;
    let text = r.text();
    assert_eq!(
        text.matches(": keep-alive\n\n").count(),
        1 + 10 + 1 + 1,
        "{text}"
    );
    assert_eq!(
        contents(&sse_json(&text.replace(": keep-alive\n\n", ""))).len(),
        10
    );

    // crlf: CRLF line endings only.
    let r = next().await;
    let text = r.text();
    assert!(text.contains("\r\n\r\n") && text.ends_with("data: [DONE]\r\n\r\n"));
    assert!(!text.replace("\r\n", "").contains('\n'));
    assert_eq!(contents(&sse_json(&text.replace("\r\n", "\n"))).len(), 10);

    // utf8split: one write ends inside a two-byte character; the next write completes it.
    let r = next().await;
    let i = r
        .chunks
        .iter()
        .position(|c| c.last() == Some(&0xC3))
        .expect("a chunk ending mid-character");
    assert_eq!(r.chunks[i + 1].first(), Some(&0xA9));
    assert!(std::str::from_utf8(&r.chunks[i]).is_err());
    let text = r.text();
    assert!(contents(&sse_json(&text)).contains(&" café".to_string()));

    // ok: past the schedule.
    let r = next().await;
    assert_eq!(contents(&sse_json(&r.text())).len(), 10);
    sim.shutdown().await;
}

#[tokio::test]
async fn probabilistic_faults_are_seeded() {
    async fn statuses(seed: u64) -> Vec<u16> {
        let sim = sim_with(|a| {
            a.faults = Some("status429=0.3,status503=0.2".into());
            a.seed = seed;
        })
        .await;
        let mut out = Vec::new();
        for _ in 0..30 {
            out.push(
                raw_post(
                    sim.addr,
                    "/v1/chat/completions",
                    &chat_body("x", 1, ""),
                    None,
                )
                .await
                .status,
            );
        }
        sim.shutdown().await;
        out
    }
    let a = statuses(7).await;
    assert_eq!(a, statuses(7).await);
    assert!(
        a.contains(&429) && a.contains(&503) && a.contains(&200),
        "{a:?}"
    );
}

#[test]
fn bad_fault_spec_is_rejected_at_start() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let err = rt
        .block_on(infermeter_sim::start(infermeter_sim::SimConfig {
            faults: Some("explode=0.5".into()),
            ..fast_args()
        }))
        .err()
        .unwrap();
    assert!(err.to_string().contains("unknown fault"), "{err}");
}
