//! Shared helpers: start a simulator, talk raw HTTP/1.1 to see the exact bytes on the wire.

use std::net::SocketAddr;

use infermeter_sim::{start, RunningSim, SimConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A fast deployment (8B model on a B200) so tests take seconds.
pub fn fast_args() -> SimConfig {
    SimConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        model: "llama-3.1-8b".into(),
        gpu: "b200".into(),
        ..Default::default()
    }
}

pub async fn sim_with(f: impl FnOnce(&mut SimConfig)) -> RunningSim {
    let mut args = fast_args();
    f(&mut args);
    start(args).await.expect("simulator starts")
}

pub const MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";

/// A raw HTTP response with its body chunks exactly as the server framed them.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub head: String,
    pub chunks: Vec<Vec<u8>>,
    /// The body ended with the chunked terminator (a clean end).
    pub complete: bool,
    pub error: Option<std::io::ErrorKind>,
}

impl Raw {
    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }
    pub fn text(&self) -> String {
        String::from_utf8(self.body()).expect("utf-8 body")
    }
}

/// POST JSON over a fresh connection and read until the server closes or finishes.
pub async fn raw_post(addr: SocketAddr, path: &str, body: &str, key: Option<&str>) -> Raw {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let auth = key
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let mut error = None;
    let mut tmp = [0u8; 65536];
    loop {
        match s.read(&mut tmp).await {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
            Err(e) => {
                error = Some(e.kind());
                break;
            }
        }
    }
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let status = head[9..12].parse().unwrap();
    let mut rest = &buf[split + 4..];
    let mut chunks = Vec::new();
    let mut complete = false;
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().trim(), 16)
                .unwrap();
            if size == 0 {
                complete = true;
                break;
            }
            if rest.len() < eol + 2 + size {
                break;
            }
            chunks.push(rest[eol + 2..eol + 2 + size].to_vec());
            rest = &rest[(eol + 4 + size).min(rest.len())..];
        }
    } else {
        chunks.push(rest.to_vec());
        complete = error.is_none();
    }
    Raw {
        status,
        head,
        chunks,
        complete,
        error,
    }
}

/// JSON payloads of the `data:` events of an SSE body (not `[DONE]`), in order.
pub fn sse_json(text: &str) -> Vec<serde_json::Value> {
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("bad event {d:?}: {e}")))
        .collect()
}

pub fn chat_body(content: &str, max_tokens: u32, extra: &str) -> String {
    format!(
        r#"{{"model":"{MODEL}","messages":[{{"role":"user","content":{}}}],"max_tokens":{max_tokens},"ignore_eos":true{extra}}}"#,
        serde_json::Value::String(content.into())
    )
}
