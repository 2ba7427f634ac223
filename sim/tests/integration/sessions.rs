//! What multi-turn clients meet: a conversation's answer cached for its next turn, reasoning
//! streamed before the answer, the served-requests log, and scaled time.

use std::time::Instant;

use serde_json::{json, Value};

use crate::support::*;

/// A chat request to the model served (no `model`: the one the simulator serves).
async fn chat(base: &str, messages: &Value, max_tokens: u32) -> Value {
    reqwest::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .json(&json!({"messages": messages, "max_tokens": max_tokens, "ignore_eos": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn served(base: &str) -> Vec<Value> {
    let log: Value = reqwest::get(format!("{base}/infermeter/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    log["requests"].as_array().unwrap().clone()
}

/// Turn 2 carries turn 1's prompt, its answer as received and a new message: the cache serves
/// every full block of turn 1's prompt and answer (all but the last, unfed answer token), and
/// the log holds what each response's usage says.
#[tokio::test]
async fn the_next_turn_reuses_the_previous_answer() {
    let sim = sim_with(|a| a.prefix_cache = true).await;
    let base = format!("http://{}", sim.addr);
    let words = |n: usize, tag: &str| -> String { (0..n).map(|i| format!(" {tag}{i}")).collect() };
    let mut messages = json!([
        {"role": "system", "content": words(500, "s")},
        {"role": "user", "content": words(100, "u")},
    ]);
    let first = chat(&base, &messages, 64).await;
    let answer = first["choices"][0]["message"]["content"].as_str().unwrap();
    let prompt1 = first["usage"]["prompt_tokens"].as_u64().unwrap();
    messages.as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": answer}),
        json!({"role": "user", "content": words(100, "v")}),
    ]);
    let second = chat(&base, &messages, 8).await;
    let cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    // Turn 1 computed its prompt and 63 of its 64 answer tokens.
    assert_eq!(cached, (prompt1 + 63) / 16 * 16, "{second}");
    assert!(cached > prompt1);
    let log = served(&base).await;
    let [a, b] = &log[..] else {
        panic!("two requests logged: {log:?}")
    };
    assert_eq!(a["id"], first["id"]);
    assert_eq!(b["id"], second["id"]);
    assert_eq!(
        (a["cached_tokens"].as_u64(), b["cached_tokens"].as_u64()),
        (Some(0), Some(cached))
    );
    assert_eq!(b["prompt_tokens"], second["usage"]["prompt_tokens"]);
    sim.shutdown().await;
}

/// `--reasoning-tokens`: the first tokens stream as `reasoning_content`, counted in the output
/// and in `completion_tokens_details`, then the answer.
#[tokio::test]
async fn reasoning_streams_before_the_answer() {
    let sim = sim_with(|a| a.reasoning_tokens = 5).await;
    let addr = sim.addr;
    let body = chat_body(
        "think first",
        8,
        r#","stream":true,"stream_options":{"include_usage":true}"#,
    );
    let raw = raw_post(addr, "/v1/chat/completions", &body, None).await;
    let events = sse_json(&raw.text());
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| {
            let delta = &e["choices"][0]["delta"];
            if delta["reasoning_content"].is_string() {
                Some("reasoning")
            } else {
                delta["content"]
                    .as_str()
                    .filter(|c| !c.is_empty())
                    .map(|_| "answer")
            }
        })
        .collect();
    assert_eq!(
        kinds,
        ["reasoning"; 5]
            .iter()
            .chain(&["answer"; 3])
            .copied()
            .collect::<Vec<_>>()
    );
    let usage = &events.last().unwrap()["usage"];
    assert_eq!(usage["completion_tokens"], 8);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 5);
    // Not streamed: the reasoning apart from the content.
    let whole = chat(
        &format!("http://{addr}"),
        &json!([{"role": "user", "content": "hi"}]),
        8,
    )
    .await;
    let message = &whole["choices"][0]["message"];
    assert_eq!(
        message["reasoning_content"]
            .as_str()
            .unwrap()
            .split(' ')
            .count(),
        6
    );
    assert_eq!(message["content"].as_str().unwrap().split(' ').count(), 4);
    sim.shutdown().await;
}

/// `--time-scale 0.1` serves the same request ten times sooner.
#[tokio::test]
async fn scaled_time_serves_sooner() {
    let timed = |scale: f64| async move {
        let sim = sim_with(|a| {
            a.model = "qwen3-coder-30b-a3b".into();
            a.gpu = "h100-pcie".into();
            a.time_scale = scale;
        })
        .await;
        let base = format!("http://{}", sim.addr);
        let start = Instant::now();
        let answer = chat(&base, &json!([{"role": "user", "content": "hello"}]), 100).await;
        assert_eq!(answer["usage"]["completion_tokens"], 100, "{answer}");
        let took = start.elapsed().as_secs_f64();
        sim.shutdown().await;
        took
    };
    let (real, scaled) = (timed(1.0).await, timed(0.1).await);
    // About 0.7 s at 150 tok/s; a tenth of it, plus the client's own milliseconds.
    assert!(real > 0.5, "{real}");
    assert!(scaled < real / 4.0, "{scaled} vs {real}");
}
