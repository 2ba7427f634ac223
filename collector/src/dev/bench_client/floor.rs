//! The floor `bench-client` measures beside the collector: a bare reader of the same streams,
//! one task per connection reading the socket into a buffer it throws away (no HTTP or SSE
//! parsing, no timestamps), on the same runtime.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{BenchClientError, BenchFloorArgs};
use crate::http::adapters::EngineKind;
use crate::http::api::{Api, ConnectionReuse};
use crate::http::driver::{Driver, DriverConfig};

/// The floor client: `streams` connections, each sending the request `requests` times in turn
/// and reading every response to its end, discarding it. Prints `requests N` when done.
pub async fn run(args: BenchFloorArgs) -> Result<(), BenchClientError> {
    let driver = Driver::new(DriverConfig {
        base_url: args.base_url.clone(),
        api: Api::Completions,
        model: args.model.clone(),
        engine: EngineKind::Sim,
        prompt_caching: false,
        api_key: None,
        connect_timeout: Duration::from_secs(10),
        first_token_timeout: Duration::from_secs(600),
        total_timeout: Duration::from_secs(600),
        max_in_flight: 1,
        connection_reuse: ConnectionReuse::Pooled,
        extra_body: Default::default(),
    })?;
    let uri: http::Uri = format!("{}/completions", args.base_url.trim_end_matches('/'))
        .parse()
        .map_err(|e| BenchClientError::Stream(format!("{e}")))?;
    let addr = uri
        .authority()
        .map(|a| a.as_str().to_string())
        .unwrap_or_default();
    let prompt = "hello ".repeat(args.input_tokens as usize);
    let body = driver.body(prompt.trim_end(), args.output_tokens);
    let mut request = format!(
        "POST {} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        uri.path(),
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let request = std::sync::Arc::new(request);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.streams {
        let (request, addr) = (request.clone(), addr.clone());
        let requests = args.requests;
        tasks.spawn(async move { read_streams(&addr, &request, requests).await });
    }
    let mut done = 0u64;
    while let Some(result) = tasks.join_next().await {
        done += result.map_err(|e| BenchClientError::Stream(e.to_string()))??;
    }
    println!("requests {done}");
    Ok(())
}

/// The last bytes of a chunked body: the zero-length chunk and the empty trailer.
const BODY_END: &[u8; 5] = b"0\r\n\r\n";

/// One connection of the floor: `requests` requests in turn, each read to its body's end.
async fn read_streams(addr: &str, request: &[u8], requests: u32) -> Result<u64, BenchClientError> {
    let mut tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|source| BenchClientError::Connect {
            addr: addr.to_string(),
            source,
        })?;
    let broke = |e: std::io::Error| BenchClientError::Stream(e.to_string());
    tcp.set_nodelay(true).map_err(broke)?;
    // The streaming client's read size.
    let mut buf = vec![0u8; 8192];
    for _ in 0..requests {
        tcp.write_all(request).await.map_err(broke)?;
        let mut tail = [0u8; 5];
        let mut first = true;
        loop {
            let n = tcp.read(&mut buf).await.map_err(broke)?;
            if n == 0 {
                return Err(BenchClientError::Stream(
                    "the server closed the connection mid-response".into(),
                ));
            }
            if first && !buf[..n].starts_with(b"HTTP/1.1 200") {
                return Err(BenchClientError::Stream(format!(
                    "not a 200 response: {}",
                    String::from_utf8_lossy(&buf[..n.min(200)])
                )));
            }
            first = false;
            // Only the end is looked for: the last five bytes seen, across reads.
            if n >= 5 {
                tail.copy_from_slice(&buf[n - 5..n]);
            } else {
                tail.rotate_left(n);
                tail[5 - n..].copy_from_slice(&buf[..n]);
            }
            if &tail == BODY_END {
                break;
            }
        }
    }
    Ok(u64::from(requests))
}
