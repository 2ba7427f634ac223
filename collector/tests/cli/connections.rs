//! `--base-url` as users type it, and connections: a server that closes every streamed
//! connection without saying so loses no request, and the records say which went twice.

use std::time::Duration;

use infermeter_report::{load_report, Outcome, Report, RetryReason};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::common::*;

const SUITE: &str = r#"
name = "connections"
warmup = 1
[[scenario]]
id = "short"
name = "Short"
input_tokens = 64
output_tokens = 4
[peak]
levels = [1, 2, 4]
requests_per_slot = 8
min_seconds = 0
"#;

fn read_report(path: &std::path::Path) -> Report {
    load_report(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every way of writing the simulator's address measures it, with the model discovered.
#[tokio::test(flavor = "multi_thread")]
async fn the_root_v1_and_endpoint_urls_all_measure_the_simulator() {
    let sim = start_sim(fast_sim_args()).await;
    let v1 = sim.base_url().trim_end_matches('/').to_string();
    let root = v1.strip_suffix("/v1").unwrap().to_string();
    let dir = out_dir("base-url-forms");
    let suite = small_suite(&dir, &SUITE.replace("[1, 2, 4]", "[2]"));
    for (name, typed, api) in [
        ("root", root.clone(), "chat"),
        ("root-slash", format!("{root}/"), "chat"),
        ("v1", v1.clone(), "chat"),
        ("chat", format!("{v1}/chat/completions"), "chat"),
        ("completions", format!("{v1}/completions"), "completions"),
    ] {
        let report = dir.join(format!("{name}.json"));
        let args = run_args(&typed, suite.to_str().unwrap(), &report, &[]);
        let out = infermeter(&args, &[]).await;
        assert!(out.status.success(), "{typed}: {}", text(&out));
        let report = read_report(&report);
        assert_eq!(
            report.metadata.engine.base_url.as_deref(),
            Some(v1.as_str())
        );
        assert_eq!(report.metadata.engine.api.as_deref(), Some(api), "{typed}");
        assert_eq!(report.metadata.engine.name, "infermeter-sim", "{typed}");
        let level = &report.series[0].levels[0];
        assert!(level.requests.ok > 0, "{typed}");
        assert_eq!(level.requests.total(), level.requests.ok, "{typed}");
        // The endpoint measured, printed once.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let endpoint = format!(
            "endpoint=\"{v1}/{}\"",
            if api == "chat" {
                "chat/completions"
            } else {
                "completions"
            }
        );
        assert_eq!(stderr.matches(&endpoint).count(), 1, "{typed}: {stderr}");
    }
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_path_says_which_urls_it_tried() {
    let sim = start_sim(fast_sim_args()).await;
    let root = sim
        .base_url()
        .trim_end_matches('/')
        .strip_suffix("/v1")
        .unwrap()
        .to_string();
    let dir = out_dir("base-url-unknown");
    let report = dir.join("report.json");
    let typed = format!("{root}/nowhere");
    let out = infermeter(
        &run_args(&typed, "four-scenario", &report, &["--quiet"]),
        &[],
    )
    .await;
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for tried in [
        format!("{typed}/models: HTTP 404"),
        format!("{typed}/v1/models: HTTP 404"),
    ] {
        assert!(stderr.contains(&tried), "{tried} missing: {stderr}");
    }
    assert!(
        stderr.contains("pass --model, or check --base-url"),
        "{stderr}"
    );
    // A full endpoint URL and a different --api contradict each other.
    let chat = format!("{root}/v1/chat/completions");
    let extra = ["--quiet", "--api", "completions"];
    let out = infermeter(&run_args(&chat, "four-scenario", &report, &extra), &[]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("names the chat endpoint, but --api completions"),
        "{stderr}"
    );
    assert!(!report.exists(), "nothing measured, nothing written");
    sim.shutdown().await;
}

/// A server that answers one request per connection and then closes it, without
/// `Connection: close`, a little later: long enough for the client to have sent its next
/// request on it (the close then resets it), as a server whose keep-alive ends as a request
/// arrives does. Streams `data:` chunks of one token each, chunked.
async fn closing_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            tokio::spawn(answer_once(tcp));
        }
    });
    base_url
}

async fn answer_once(mut tcp: TcpStream) {
    let Some(head) = read_head(&mut tcp).await else {
        return;
    };
    let response = if head.starts_with("GET /v1/models ") {
        let body =
            r#"{"object":"list","data":[{"id":"closer","object":"model","owned_by":"test"}]}"#;
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
    } else if head.starts_with("POST /v1/chat/completions ") {
        let mut events = String::new();
        for word in ["a", "b", "c", "d"] {
            events.push_str(&format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{word}\"}}}}]}}\n\n"
            ));
        }
        events.push_str(
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":64,\"completion_tokens\":4}}\n\n",
        );
        events.push_str("data: [DONE]\n\n");
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n0\r\n\r\n",
            events.len()
        )
    } else {
        "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_string()
    };
    if tcp.write_all(response.as_bytes()).await.is_err() {
        return;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    // Dropped with the client's next request unread: the kernel resets the connection.
}

/// Reads a request's head and its `content-length` body; `None` when the client closed first.
async fn read_head(tcp: &mut TcpStream) -> Option<String> {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tcp.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text
                .to_lowercase()
                .lines()
                .find_map(|l| {
                    l.strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0usize);
            if request.len() >= end + 4 + length {
                return Some(text);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_closing_every_stream_loses_no_request() {
    let base_url = closing_server().await;
    let dir = out_dir("closing-server");
    let suite = small_suite(&dir, SUITE);
    for reuse in ["pooled", "never"] {
        let report_path = dir.join(format!("{reuse}.json"));
        let extra = ["--quiet", "--connection-reuse", reuse];
        let args = run_args(&base_url, suite.to_str().unwrap(), &report_path, &extra);
        let out = infermeter(&args, &[]).await;
        assert!(out.status.success(), "{reuse}: {}", text(&out));
        check_json_schema(&report_path);
        let report = read_report(&report_path);
        assert_eq!(report.measurement.connection_reuse.as_deref(), Some(reuse));
        let records: Vec<_> = read_records(&report_path)
            .into_iter()
            .filter(|r| !r.warmup)
            .collect();
        assert!(records.len() >= 50, "{reuse}: {} requests", records.len());
        let failed: Vec<_> = records
            .iter()
            .filter(|r| r.outcome != Outcome::Ok)
            .collect();
        assert!(failed.is_empty(), "{reuse}: {failed:#?}");
        let retried: Vec<_> = records.iter().filter_map(|r| r.retried.as_ref()).collect();
        let counted: u64 = report
            .series
            .iter()
            .flat_map(|s| &s.levels)
            .map(|l| l.client.as_ref().unwrap().retried)
            .sum();
        assert_eq!(counted, retried.len() as u64, "{reuse}");
        if reuse == "pooled" {
            // A slot's next request goes on the connection the server is about to close when
            // the pool hands it that one rather than a new one (about half the time here).
            eprintln!(
                "{reuse}: {} of {} requests retried",
                retried.len(),
                records.len()
            );
            assert!(!retried.is_empty(), "no request met a closed connection");
            for r in retried {
                assert_eq!(r.reason, RetryReason::StaleConnection);
                assert!(r.lost_s < 1.0, "{r:?}");
                assert!(!r.detail.is_empty());
            }
        } else {
            assert!(
                retried.is_empty(),
                "a new connection per request is never stale"
            );
        }
    }
}
