//! The connections under the HTTP clients: reqwest's for side channels, and for the measured
//! streams TCP sockets that report when each read's bytes arrived ([`crate::http::arrival`]),
//! under the streaming client of our own ([`crate::http::client`]).

use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Once;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

use crate::http::arrival::{self, ArrivalClock};

/// Servers close idle keep-alive connections after 5 s (llama.cpp's cpp-httplib, uvicorn under
/// vLLM); reusing one as it closes fails the request before it is sent, so both clients drop
/// them before that.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

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

/// Opens a TCP connection for the measured streams (no-delay, bounded connect time) with
/// receive timestamps on where the kernel gives them.
pub async fn connect_timestamped(
    host: &str,
    port: u16,
    connect_timeout: Duration,
) -> io::Result<TimestampedTcp> {
    let tcp = tokio::time::timeout(connect_timeout, connect(host, port))
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
    Ok(TimestampedTcp { tcp, arrival })
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

/// A TCP connection whose reads record their kernel receive timestamp in `arrival` (when set).
#[derive(Debug)]
pub struct TimestampedTcp {
    tcp: TcpStream,
    arrival: Option<ArrivalClock>,
}

impl TimestampedTcp {
    /// The clock of this connection's reads; `None` without kernel timestamps.
    pub fn arrival(&self) -> Option<&ArrivalClock> {
        self.arrival.as_ref()
    }

    pub fn tcp(&self) -> &TcpStream {
        &self.tcp
    }
}

impl AsyncRead for TimestampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(clock) = &this.arrival else {
            return Pin::new(&mut this.tcp).poll_read(cx, buf);
        };
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let tcp = &this.tcp;
        let fd = tcp.as_raw_fd();
        loop {
            ready!(tcp.poll_read_ready(cx))?;
            // SAFETY: recvmsg writes only bytes it reports, and assume_init covers exactly those.
            let unfilled = unsafe { buf.unfilled_mut() };
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
            unsafe { buf.assume_init(n) };
            buf.advance(n);
            return Poll::Ready(Ok(()));
        }
    }
}

impl AsyncWrite for TimestampedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

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
