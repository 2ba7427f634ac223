use crate::support::*;

#[tokio::test]
async fn api_key_guards_v1_but_not_health_or_metrics() {
    let sim = sim_with(|a| a.api_key = Some("s3cret-key".into())).await;
    let body = chat_body("hi", 2, "");
    let none = raw_post(sim.addr, "/v1/chat/completions", &body, None).await;
    assert_eq!(none.status, 401);
    let wrong = raw_post(sim.addr, "/v1/chat/completions", &body, Some("nope")).await;
    assert_eq!(wrong.status, 401);
    let v: serde_json::Value = serde_json::from_slice(&wrong.body()).unwrap();
    for k in ["message", "type", "param", "code"] {
        assert!(v["error"].get(k).is_some(), "{v}");
    }
    assert!(!wrong.text().contains("s3cret") && !wrong.text().contains("nope"));
    let ok = raw_post(sim.addr, "/v1/chat/completions", &body, Some("s3cret-key")).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    let tok = raw_post(sim.addr, "/tokenize", r#"{"prompt":"a b"}"#, None).await;
    assert_eq!(tok.status, 401);
    let client = reqwest::Client::new();
    let base = format!("http://{}", sim.addr);
    assert_eq!(
        client
            .get(format!("{base}/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        client
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        client
            .get(format!("{base}/v1/models"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let models = client
        .get(format!("{base}/v1/models"))
        .bearer_auth("s3cret-key")
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    sim.shutdown().await;
}
