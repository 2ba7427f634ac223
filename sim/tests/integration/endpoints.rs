use serde_json::{json, Value};

use crate::support::*;

async fn post_json(url: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

#[tokio::test]
async fn models_health_and_tokenizer_agree_with_usage() {
    let sim = sim_with(|_| {}).await;
    let base = format!("http://{}", sim.addr);
    let models: Value = reqwest::get(format!("{base}/v1/models"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], MODEL);
    assert_eq!(models["data"][0]["max_model_len"], 131072);
    assert_eq!(
        reqwest::get(format!("{base}/health"))
            .await
            .unwrap()
            .status(),
        200
    );

    let messages = json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello, world! How are you?"}]);
    let (s, tok) = post_json(
        &format!("{base}/tokenize"),
        json!({"model": MODEL, "messages": messages}),
    )
    .await;
    assert_eq!(s, 200);
    // Per message: im_start, role, \n, content, im_end, \n; then im_start, assistant, \n.
    // "Be brief." = Be, " brief", "." (3); "Hello, world! How are you?" = 8 tokens.
    assert_eq!(tok["count"], 5 + 3 + 5 + 8 + 3, "{tok}");
    assert_eq!(tok["tokens"].as_array().unwrap().len(), 24);
    let (_, chat) = post_json(
        &format!("{base}/v1/chat/completions"),
        json!({"model": MODEL, "messages": messages, "max_tokens": 5, "ignore_eos": true}),
    )
    .await;
    assert_eq!(chat["usage"]["prompt_tokens"], 24, "{chat}");
    assert_eq!(chat["usage"]["completion_tokens"], 5);
    assert_eq!(chat["choices"][0]["message"]["role"], "assistant");
    assert_eq!(chat["choices"][0]["finish_reason"], "length");
    let text = chat["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    // Each generated token is exactly one token of the tokenizer.
    let (_, t) = post_json(&format!("{base}/tokenize"), json!({"prompt": text})).await;
    assert_eq!(t["count"], 5);
    let (_, d) = post_json(
        &format!("{base}/detokenize"),
        json!({"tokens": t["tokens"]}),
    )
    .await;
    assert_eq!(d["prompt"], text.as_str());

    let (_, t) = post_json(
        &format!("{base}/tokenize"),
        json!({"prompt": "one two three, four"}),
    )
    .await;
    assert_eq!(t["count"], 5);
    let (_, c) = post_json(
        &format!("{base}/v1/completions"),
        json!({"model": MODEL, "prompt": "one two three, four", "max_tokens": 7, "ignore_eos": true}),
    )
    .await;
    assert_eq!(c["usage"]["prompt_tokens"], 5);
    assert_eq!(c["usage"]["completion_tokens"], 7);
    assert_eq!(c["object"], "text_completion");
    // Token-id prompts count as given.
    let (_, c) = post_json(
        &format!("{base}/v1/completions"),
        json!({"prompt": [1, 2, 3, 4, 5, 6, 7, 8, 9], "max_tokens": 2, "ignore_eos": true}),
    )
    .await;
    assert_eq!(c["usage"]["prompt_tokens"], 9, "{c}");
    sim.shutdown().await;
}

#[tokio::test]
async fn streamed_chat_has_vllm_shape_and_usage() {
    let sim = sim_with(|a| a.emit_timestamps = true).await;
    let body = chat_body(
        "Write a poem.",
        12,
        r#","stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}"#,
    );
    let raw = raw_post(sim.addr, "/v1/chat/completions", &body, None).await;
    assert_eq!(raw.status, 200);
    assert!(raw
        .head
        .to_ascii_lowercase()
        .contains("content-type: text/event-stream"));
    assert!(raw.complete);
    let text = raw.text();
    assert!(text.ends_with("data: [DONE]\n\n"));
    let events = sse_json(&text);
    // role chunk + 12 content chunks + usage chunk
    assert_eq!(events.len(), 14, "{text}");
    assert_eq!(
        events[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(events[0]["object"], "chat.completion.chunk");
    for (i, e) in events[1..13].iter().enumerate() {
        assert!(e["choices"][0]["delta"]["content"]
            .as_str()
            .unwrap()
            .starts_with(' '));
        assert_eq!(e["usage"]["completion_tokens"], i as u64 + 1);
        let fr = &e["choices"][0]["finish_reason"];
        assert_eq!(fr.as_str(), (i == 11).then_some("length"));
    }
    let usage = &events[13];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 12);
    assert_eq!(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    // Ground-truth send times: present, monotonic, and consistent between the two clocks.
    let mono: Vec<u64> = events
        .iter()
        .map(|e| e["infermeter_ts"]["mono_ns"].as_u64().unwrap())
        .collect();
    let unix: Vec<u64> = events
        .iter()
        .map(|e| e["infermeter_ts"]["unix_ns"].as_u64().unwrap())
        .collect();
    assert!(mono.windows(2).all(|w| w[1] >= w[0]));
    let span_mono = mono[12] - mono[1];
    let span_unix = unix[12] as i128 - unix[1] as i128;
    assert!(
        (span_mono as i128 - span_unix).abs() < 5_000_000,
        "{span_mono} vs {span_unix}"
    );
    assert!(span_mono > 0);
    sim.shutdown().await;
}

#[tokio::test]
async fn eos_min_tokens_and_validation() {
    let sim = sim_with(|_| {}).await;
    let base = format!("http://{}", sim.addr);
    let url = format!("{base}/v1/completions");
    // Concurrently, so the whole sample takes about one request's time.
    let replies = futures::future::join_all((0..40).map(|i| {
        let url = url.clone();
        async move {
            post_json(
                &url,
                json!({"prompt": format!("question number {i}"), "max_tokens": 400}),
            )
            .await
        }
    }))
    .await;
    let mut lengths = Vec::new();
    let mut stops = 0;
    for (s, c) in replies {
        assert_eq!(s, 200);
        let n = c["usage"]["completion_tokens"].as_u64().unwrap();
        assert!((1..=400).contains(&n));
        if c["choices"][0]["finish_reason"] == "stop" {
            stops += 1;
            assert!(n < 400);
        }
        lengths.push(n);
    }
    lengths.sort();
    lengths.dedup();
    assert!(
        lengths.len() > 10 && stops > 10,
        "lengths {lengths:?}, {stops} stops"
    );
    // Same prompt, same seed: same length (deterministic EOS).
    let body = json!({"prompt": "question number 3", "max_tokens": 400});
    let (_, a) = post_json(&url, body.clone()).await;
    let (_, b) = post_json(&url, body).await;
    assert_eq!(a["usage"], b["usage"]);
    assert_eq!(a["choices"][0]["text"], b["choices"][0]["text"]);
    // min_tokens forces at least that many.
    for i in 0..10 {
        let (_, c) = post_json(
            &url,
            json!({"prompt": format!("q{i}"), "max_tokens": 50, "min_tokens": 50}),
        )
        .await;
        assert_eq!(c["usage"]["completion_tokens"], 50);
    }
    // Unsupported and invalid parameters: OpenAI-style 400s.
    for (body, param) in [
        (json!({"prompt": "x", "n": 2}), "n"),
        (json!({"prompt": "x", "max_tokens": 200000}), "max_tokens"),
        (
            json!({"prompt": "x", "max_tokens": 5, "min_tokens": 6}),
            "min_tokens",
        ),
        (
            json!({"prompt": "x", "stream_options": {"include_usage": true}}),
            "stream_options",
        ),
        (json!({"prompt": ["a", "b"]}), "prompt"),
        (json!({"prompt": "x", "echo": true}), "echo"),
    ] {
        let (s, e) = post_json(&url, body.clone()).await;
        assert_eq!(s, 400, "{body}");
        assert_eq!(e["error"]["param"], param, "{e}");
        assert_eq!(e["error"]["code"], 400);
        assert!(e["error"]["message"].as_str().unwrap().len() > 10);
        assert!(e["error"]["type"].is_string());
    }
    let (s, e) = post_json(&url, json!({"prompt": "x", "model": "gpt-9"})).await;
    assert_eq!(s, 404);
    assert!(e["error"]["message"].as_str().unwrap().contains(MODEL));
    let r = reqwest::Client::new()
        .post(&url)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    sim.shutdown().await;
}

#[tokio::test]
async fn metrics_use_vllm_names_and_count_tokens() {
    let sim = sim_with(|_| {}).await;
    let base = format!("http://{}", sim.addr);
    for _ in 0..3 {
        let (s, _) = post_json(
            &format!("{base}/v1/completions"),
            json!({"prompt": "a b c d", "max_tokens": 10, "ignore_eos": true}),
        )
        .await;
        assert_eq!(s, 200);
    }
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let label = format!("model_name=\"{MODEL}\"");
    for needle in [
        format!("vllm:num_requests_running{{{label}}} 0"),
        format!("vllm:num_requests_waiting{{{label}}} 0"),
        format!("vllm:prompt_tokens_total{{{label}}} 12"),
        format!("vllm:generation_tokens_total{{{label}}} 30"),
        format!("vllm:time_to_first_token_seconds_count{{{label}}} 3"),
        format!("vllm:request_queue_time_seconds_count{{{label}}} 3"),
        format!("vllm:request_prefill_time_seconds_count{{{label}}} 3"),
        format!("vllm:request_decode_time_seconds_count{{{label}}} 3"),
        format!("vllm:request_success_total{{finished_reason=\"length\",{label}}} 3"),
    ] {
        assert!(text.contains(&needle), "missing {needle}\n{text}");
    }
    assert!(
        text.contains("vllm:gpu_cache_usage_perc") && text.contains("vllm:kv_cache_usage_perc")
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn prefix_cache_reports_cached_tokens() {
    let sim = sim_with(|a| a.prefix_cache = true).await;
    let url = format!("http://{}/v1/completions", sim.addr);
    let prompt: String = (0..300).map(|i| format!(" w{i}")).collect();
    let body = json!({"prompt": prompt, "max_tokens": 3, "ignore_eos": true});
    let (_, a) = post_json(&url, body.clone()).await;
    let (_, b) = post_json(&url, body).await;
    assert_eq!(a["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    assert_eq!(
        b["usage"]["prompt_tokens_details"]["cached_tokens"], 288,
        "{b}"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn startup_errors_are_actionable() {
    let sim = sim_with(|_| {}).await;
    let err = infermeter_sim::start(infermeter_sim::SimConfig {
        listen: sim.addr,
        ..fast_args()
    })
    .await
    .err()
    .expect("port in use");
    let msg = err.to_string();
    assert!(
        msg.contains("already in use") && msg.contains("127.0.0.1:0"),
        "{msg}"
    );
    let err = infermeter_sim::start(infermeter_sim::SimConfig {
        gpu: "tpu".into(),
        ..fast_args()
    })
    .await
    .err()
    .unwrap();
    assert!(err.to_string().contains("h100-sxm"), "{err}");
    let err = infermeter_sim::start(infermeter_sim::SimConfig {
        model: "deepseek-r1".into(),
        gpu: "l40s".into(),
        gpus: 1,
        ..fast_args()
    })
    .await
    .err()
    .unwrap();
    assert!(err.to_string().contains("--gpus"), "{err}");
    sim.shutdown().await;
}

#[tokio::test]
async fn full_batch_makes_requests_queue() {
    // One sequence at a time: the second request's first token comes after the first's last.
    let sim = sim_with(|a| {
        a.max_num_seqs = 1;
        a.emit_timestamps = true;
    })
    .await;
    let body = chat_body("queue", 20, r#","stream":true"#);
    let (a, b) = tokio::join!(
        raw_post(sim.addr, "/v1/chat/completions", &body, None),
        raw_post(sim.addr, "/v1/chat/completions", &body, None)
    );
    let times = |r: &Raw| -> Vec<u64> {
        sse_json(&r.text())
            .iter()
            .map(|e| e["infermeter_ts"]["mono_ns"].as_u64().unwrap())
            .collect()
    };
    let (ta, tb) = (times(&a), times(&b));
    assert_eq!((ta.len(), tb.len()), (21, 21));
    let (first, second) = if ta[0] < tb[0] { (ta, tb) } else { (tb, ta) };
    assert!(second[1] > first[20], "{first:?} {second:?}");
    sim.shutdown().await;
}
