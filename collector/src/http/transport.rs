//! The HTTP clients: reqwest for side channels, and for the measured streams a hyper client
//! whose TCP sockets report when each read's bytes arrived ([`crate::http::arrival`]).
//!
//! reqwest does not expose its sockets, so the streaming path builds hyper-util's pooled client
//! on a connector of our own. The connection's [`ArrivalClock`] rides in every response's
//! extensions (hyper-util copies a connection's `Connected::extra` there).

use std::future::Future;
use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::{Arc, Once};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::Full;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::http::arrival::{self, ArrivalClock};
use crate::http::connection_log::LoggedConnector;

/// Servers close idle keep-alive connections after 5 s (llama.cpp's cpp-httplib, uvicorn under
/// vLLM); reusing one as it closes fails the request before it is sent ("connection closed
/// before message completed"), so both clients drop them before that.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// An error and its sources, `: `-separated: the whole story of a failed request (the
/// connection's error under the client's), as `{:#}` of an `anyhow::Error` tells it.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut chain = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        chain.push_str(": ");
        chain.push_str(&s.to_string());
        source = s.source();
    }
    chain
}

/// Builds the HTTP client side channels share (discovery, tokenizer, metrics, power); `pool`
/// idle connections are kept for reuse.
pub fn http_client(connect_timeout: Duration, pool: usize) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .http1_only()
        .tcp_nodelay(true)
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(pool)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build()
}

/// The measured requests' client: HTTP/1.1 over plain TCP or rustls, each connection logged
/// ([`crate::http::connection_log::ConnectionLog`]).
pub type StreamClient = Client<LoggedConnector<HttpsConnector<TcpConnector>>, Full<Bytes>>;

/// Builds the streaming client; `pool` idle connections are kept for reuse (0: a new
/// connection per request, closed after its response).
pub fn stream_client(
    connect_timeout: Duration,
    pool: usize,
) -> Result<StreamClient, rustls::Error> {
    // Same TLS as reqwest's `rustls-tls`: ring and the webpki roots. The provider is named
    // rather than taken from the process default, which is ambiguous when a dependency also
    // enables aws-lc-rs.
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    })
    .with_no_client_auth();
    arrival::keep_enabled();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(TcpConnector { connect_timeout });
    Ok(Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_max_idle_per_host(pool)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build(LoggedConnector(connector)))
}

/// Opens TCP connections (no-delay, bounded connect time) with receive timestamps on.
#[derive(Debug, Clone)]
pub struct TcpConnector {
    connect_timeout: Duration,
}

impl tower_service::Service<Uri> for TcpConnector {
    type Response = TimestampedTcp;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<TimestampedTcp>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connect_timeout = self.connect_timeout;
        Box::pin(async move {
            // An IPv6 literal keeps its brackets in the URI but not in a socket address.
            let host = uri
                .host()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "URL has no host"))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let tcp = tokio::time::timeout(connect_timeout, connect(&host, port))
                .await
                .map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "tcp connect to {host}:{port} timed out after {}s (--connect-timeout)",
                            connect_timeout.as_secs_f64()
                        ),
                    )
                })??;
            tcp.set_nodelay(true)?;
            let arrival = match arrival::enable(tcp.as_raw_fd()) {
                Ok(()) => Some(ArrivalClock::default()),
                Err(e) => {
                    static SAID: Once = Once::new();
                    SAID.call_once(|| {
                        tracing::warn!(
                            error = %e,
                            "no kernel receive timestamps; events are stamped when parsed, \
                             which runs late when many arrive at once"
                        )
                    });
                    None
                }
            };
            Ok(TimestampedTcp {
                io: TokioIo::new(tcp),
                arrival,
            })
        })
    }
}

/// Tries each resolved address in turn.
async fn connect(host: &str, port: u16) -> io::Result<TcpStream> {
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        match TcpStream::connect(addr).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) => {
                last = Some(io::Error::new(
                    e.kind(),
                    format!("tcp connect to {addr}: {e}"),
                ))
            }
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{host} resolved to no address"),
        )
    }))
}

/// A TCP connection whose reads record their kernel receive timestamp (when `arrival` is set);
/// otherwise hyper-util's plain tokio adapter.
#[derive(Debug)]
pub struct TimestampedTcp {
    io: TokioIo<TcpStream>,
    arrival: Option<ArrivalClock>,
}

impl Connection for TimestampedTcp {
    fn connected(&self) -> Connected {
        match &self.arrival {
            Some(clock) => Connected::new().extra(clock.clone()),
            None => Connected::new(),
        }
    }
}

impl Read for TimestampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(clock) = &this.arrival else {
            return Pin::new(&mut this.io).poll_read(cx, buf);
        };
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let tcp = this.io.inner();
        let fd = tcp.as_raw_fd();
        loop {
            ready!(tcp.poll_read_ready(cx))?;
            // SAFETY: recvmsg writes only bytes it reports, and advance covers exactly those.
            let unfilled = unsafe { buf.as_mut() };
            let room = unfilled.len();
            let mut short = None;
            // try_io clears the readiness on WouldBlock, so the next poll waits for data. A
            // read that did not fill the buffer drained the socket, so it clears the readiness
            // too, as tokio's own reads do (epoll is edge-triggered: bytes arriving after the
            // read raise a new edge, which this clear does not erase); otherwise every event
            // would cost a second recvmsg that finds nothing. try_io clears only on
            // WouldBlock, so such a read is handed out through `short`.
            let read = tcp.try_io(Interest::READABLE, || {
                let (n, at) = arrival::recv(fd, unfilled)?;
                if n > 0 && n < room {
                    short = Some((n, at));
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok((n, at))
            });
            let (n, at) = match (read, short) {
                (_, Some(read)) | (Ok(read), None) => read,
                (Err(e), None) if e.kind() == io::ErrorKind::WouldBlock => continue,
                (Err(e), None) => return Poll::Ready(Err(e)),
            };
            // End of stream carries no bytes and no stamp: the bytes still being parsed
            // (llama.cpp's `[DONE]` before it closes) keep their read's stamp.
            if n > 0 {
                clock.record(at);
            }
            unsafe { buf.advance(n) };
            return Poll::Ready(Ok(()));
        }
    }
}

impl Write for TimestampedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    write_through!();
}

/// The `hyper::rt::Write` methods a connection wrapper passes straight to its `io` field (the
/// ones it does not watch).
macro_rules! write_through {
    () => {
        fn is_write_vectored(&self) -> bool {
            self.io.is_write_vectored()
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().io).poll_flush(cx)
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
        }
    };
}
pub(crate) use write_through;

/// Reads one whole HTTP request (head and `content-length` body) on a test server's socket:
/// closing a connection with unread bytes would reset it.
#[cfg(test)]
pub(crate) async fn read_request(tcp: &mut TcpStream) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(n > 0, "the client closed before its request was whole");
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request).to_lowercase();
        if let Some(head) = text.find("\r\n\r\n") {
            let length = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
            if request.len() >= head + 4 + length {
                return request;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use http_body_util::BodyExt;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    use super::*;

    #[tokio::test]
    async fn responses_carry_the_connections_arrival_clock() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://{}/v1/chat/completions",
            listener.local_addr().unwrap()
        );
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            read_request(&mut tcp).await;
            tcp.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                .await
                .unwrap();
            // Time for the kernel's deferred switch-on of timestamping (see keep_enabled).
            tokio::time::sleep(Duration::from_millis(50)).await;
            let writing = Instant::now();
            tcp.write_all(b"a\r\ndata: {}\n\n\r\n0\r\n\r\n")
                .await
                .unwrap();
            let written = Instant::now();
            (writing, written, tcp)
        });
        let client = stream_client(Duration::from_secs(5), 1).unwrap();
        let request = http::Request::post(url)
            .body(Full::new(Bytes::from_static(b"{}")))
            .unwrap();
        let response = client.request(request).await.unwrap();
        let clock = response.extensions().get::<ArrivalClock>().cloned();
        let (writing, written, _tcp) = server.await.unwrap();
        // The event waits 50 ms in the socket; its instant must still be its arrival.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut body = response.into_body();
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        let read_at = Instant::now();
        assert_eq!(&frame[..], b"data: {}\n\n");
        if !cfg!(target_os = "linux") {
            return;
        }
        let arrived = clock
            .expect("the connection's clock in the response extensions")
            .last_arrival()
            .expect("the read carried a kernel timestamp");
        let slack = Duration::from_micros(200);
        assert!(arrived + slack >= writing, "{:?} early", writing - arrived);
        assert!(arrived <= written + slack, "{:?} late", arrived - written);
        assert!(read_at - arrived >= Duration::from_millis(50));
    }

    #[tokio::test]
    async fn the_servers_close_keeps_the_last_bytes_stamp() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/completions", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            read_request(&mut tcp).await;
            tcp.write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            // A close-delimited body: the client reads to end of stream.
            let writing = Instant::now();
            tcp.write_all(b"data: [DONE]\n\n").await.unwrap();
            writing
        });
        let client = stream_client(Duration::from_secs(5), 1).unwrap();
        let request = http::Request::post(url)
            .body(Full::new(Bytes::from_static(b"{}")))
            .unwrap();
        let response = client.request(request).await.unwrap();
        let clock = response.extensions().get::<ArrivalClock>().cloned();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"data: [DONE]\n\n");
        let writing = server.await.unwrap();
        if cfg!(target_os = "linux") {
            let clock = clock.expect("the connection's clock");
            let arrived = clock.last_arrival().expect("the close erased the stamp");
            // The body's stamp, not the headers' (50 ms earlier).
            let slack = Duration::from_micros(200);
            assert!(arrived + slack >= writing, "{:?} early", writing - arrived);
        }
    }
}
