//! The measured streams' HTTP/1.1 client: the request's own task writes the request and reads
//! its response straight from the socket.
//!
//! Why not hyper, used before: its HTTP/1 client reads the socket in a connection task of its
//! own and hands each body chunk to the request's task through a channel, so one streamed event
//! woke the connection task (socket ready), the request's task (chunk sent) and the connection
//! task again (room in the channel). At 256 streams that handing-over was most of what the
//! collector added to a bare reader's CPU per event (docs/performance.md, issue #38). Here an
//! event costs one wake-up of one task, as it does a bare reader.
//!
//! What the pooled client did and this one keeps: idle connections are kept per driver and
//! reused, dropped once idle for [`POOL_IDLE_TIMEOUT`] or when the server closed them while
//! idle; and a request that failed on a reused connection before any byte of its response
//! never reached the engine ([`SendError::Stale`]), so the driver may send it again.

mod response;

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

pub use response::Response;

use crate::http::arrival::{self, ArrivalClock};
use crate::http::transport::{connect_timestamped, TimestampedTcp, POOL_IDLE_TIMEOUT};

/// Why a request got no response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// The connection could not be opened (TCP or TLS).
    Connect(String),
    /// A reused connection failed before any byte of the response: the server had closed it,
    /// so the request never reached the engine.
    Stale(String),
    /// The connection broke, or the answer is not an HTTP/1 response.
    Broken(String),
}

/// A pool of connections to one endpoint, and the request that endpoint takes. Cloning shares
/// the pool.
#[derive(Clone)]
pub struct StreamClient(Arc<Pool>);

struct Pool {
    host: String,
    port: u16,
    /// The request line and the headers every request carries, up to `content-length`.
    head: String,
    tls: Option<TlsConnector>,
    connect_timeout: Duration,
    max_idle: usize,
    idle: Mutex<Vec<Idle>>,
}

struct Idle {
    conn: Conn,
    since: Instant,
}

impl StreamClient {
    /// A client of `uri` (http or https, with a host); `max_idle` idle connections are kept
    /// for reuse (0: a new connection per request, closed after its response).
    pub fn new(
        uri: &http::Uri,
        connect_timeout: Duration,
        max_idle: usize,
    ) -> Result<StreamClient, rustls::Error> {
        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        // The host and port alone: a URL's credentials are never sent.
        let authority = match uri.port() {
            Some(port) => format!("{}:{port}", uri.host().unwrap_or_default()),
            None => uri.host().unwrap_or_default().to_string(),
        };
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\n\
             accept: text/event-stream\r\n"
        );
        let tls = https.then(tls_connector).transpose()?;
        arrival::keep_enabled();
        Ok(StreamClient(Arc::new(Pool {
            // An IPv6 literal keeps its brackets in the URI but not in a socket address.
            host: uri
                .host()
                .unwrap_or_default()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port: uri.port_u16().unwrap_or(if https { 443 } else { 80 }),
            head,
            tls,
            connect_timeout,
            max_idle,
            idle: Mutex::new(Vec::new()),
        })))
    }

    /// The whole request for `body`, with `authorization` (a header value) when given.
    pub fn request(&self, authorization: Option<&[u8]>, body: &[u8]) -> Vec<u8> {
        let head = &self.0.head;
        let mut request = Vec::with_capacity(head.len() + body.len() + 128);
        request.extend_from_slice(head.as_bytes());
        if let Some(value) = authorization {
            request.extend_from_slice(b"authorization: ");
            request.extend_from_slice(value);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        request.extend_from_slice(body);
        request
    }

    /// Sends `request` (from [`StreamClient::request`]) on an idle connection or a new one
    /// and reads the response's head. Errors never quote the request: its headers hold the
    /// API key.
    pub async fn send(&self, request: &[u8]) -> Result<Response, SendError> {
        let (mut conn, reused) = match self.0.take_idle() {
            Some(conn) => (conn, true),
            None => {
                let conn = self
                    .0
                    .connect()
                    .await
                    .map_err(|e| SendError::Connect(format!("cannot connect: {e}")))?;
                (conn, false)
            }
        };
        let failed = |detail: String, response_bytes: usize| {
            if reused && response_bytes == 0 {
                SendError::Stale(detail)
            } else {
                SendError::Broken(detail)
            }
        };
        let written = async {
            conn.io.write_all(request).await?;
            conn.io.flush().await
        };
        if let Err(e) = written.await {
            return Err(failed(format!("cannot send the request: {e}"), 0));
        }
        match response::read_head(&mut conn).await {
            Ok(head) => Ok(Response::new(head, conn, self.0.clone())),
            Err((detail, response_bytes)) => Err(failed(detail, response_bytes)),
        }
    }
}

impl Pool {
    async fn connect(&self) -> io::Result<Conn> {
        let tcp = connect_timestamped(&self.host, self.port, self.connect_timeout).await?;
        let arrival = tcp.arrival().cloned();
        let io = match &self.tls {
            None => Io::Plain(tcp),
            Some(tls) => {
                let name = ServerName::try_from(self.host.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                Io::Tls(Box::new(tls.connect(name, tcp).await?))
            }
        };
        Ok(Conn {
            io,
            buf: BytesMut::with_capacity(READ_SIZE),
            arrival,
        })
    }

    /// The most recently idle connection still open, dropping the expired and closed ones.
    fn take_idle(&self) -> Option<Conn> {
        if self.max_idle == 0 {
            return None;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(Idle { conn, since }) = idle.pop() {
            if since.elapsed() < POOL_IDLE_TIMEOUT && conn.still_open() {
                return Some(conn);
            }
        }
        None
    }

    /// Keeps a connection whose response was read to its end, if there is room.
    fn put(&self, conn: Conn) {
        if self.max_idle == 0 {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.retain(|i| i.since.elapsed() < POOL_IDLE_TIMEOUT);
        if idle.len() < self.max_idle {
            idle.push(Idle {
                conn,
                since: Instant::now(),
            });
        }
    }
}

/// Same TLS as reqwest's `rustls-tls`: ring and the webpki roots. The provider is named rather
/// than taken from the process default, which is ambiguous when a dependency also enables
/// aws-lc-rs.
fn tls_connector() -> Result<TlsConnector, rustls::Error> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    })
    .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// Bytes asked of the socket per read (hyper's first read size): an event is far smaller, so
/// a read drains the socket and its readiness is cleared without a second read.
const READ_SIZE: usize = 8192;

/// One connection, with the bytes read from it and not yet taken.
struct Conn {
    io: Io,
    buf: BytesMut,
    arrival: Option<ArrivalClock>,
}

impl Conn {
    /// Reads once more into `buf`; `Ok(0)` at the end of the stream.
    fn poll_read_more(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.buf.capacity() - self.buf.len() < READ_SIZE / 4 {
            self.buf.reserve(READ_SIZE);
        }
        let mut read = ReadBuf::uninit(self.buf.spare_capacity_mut());
        std::task::ready!(Pin::new(&mut self.io).poll_read(cx, &mut read))?;
        let n = read.filled().len();
        // SAFETY: the read initialised these `n` bytes of the spare capacity.
        unsafe { self.buf.set_len(self.buf.len() + n) };
        Poll::Ready(Ok(n))
    }

    async fn read_more(&mut self) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_read_more(cx)).await
    }

    /// Whether an idle connection is still open: the server has neither closed it nor sent
    /// anything (bytes on an idle HTTP/1 connection, a TLS alert included, mean it is done).
    fn still_open(&self) -> bool {
        use std::os::fd::AsRawFd;
        let fd = self.io.tcp().tcp().as_raw_fd();
        let mut byte = 0u8;
        // SAFETY: a one-byte peek into a local.
        let n = unsafe {
            libc::recv(
                fd,
                (&mut byte as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
    }
}

/// A connection's byte stream: plain TCP or TLS over it.
enum Io {
    Plain(TimestampedTcp),
    Tls(Box<TlsStream<TimestampedTcp>>),
}

impl Io {
    fn tcp(&self) -> &TimestampedTcp {
        match self {
            Io::Plain(tcp) => tcp,
            Io::Tls(tls) => tls.get_ref().0,
        }
    }
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    use super::*;
    use crate::http::transport::read_request;

    /// A test server's socket and a client of it that keeps one idle connection.
    async fn listener() -> (TcpListener, StreamClient) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri: http::Uri = format!("http://{}/v1/completions", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        let client = StreamClient::new(&uri, Duration::from_secs(5), 1).unwrap();
        (listener, client)
    }

    /// Serves one connection: each request in turn gets the next of `answers`, written in
    /// pieces (`|` marks a cut, each piece a write of its own 10 ms after the last).
    async fn serve(answers: Vec<&'static str>) -> (StreamClient, tokio::task::JoinHandle<()>) {
        let (listener, client) = listener().await;
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            for answer in answers {
                read_request(&mut tcp).await;
                for piece in answer.split('|') {
                    tcp.write_all(piece.as_bytes()).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        });
        (client, server)
    }

    /// The status and the body of a response to `client`'s next request.
    async fn exchange(client: &StreamClient) -> (u16, Result<String, String>) {
        let request = client.request(None, b"{}");
        // The server accepts one connection: a request on a new one is never answered.
        let mut response = tokio::time::timeout(Duration::from_secs(5), client.send(&request))
            .await
            .expect("no answer: the request went on a new connection, not the idle one")
            .unwrap();
        let mut body = Vec::new();
        loop {
            match response.data().await {
                Some(Ok(bytes)) => body.extend_from_slice(bytes),
                Some(Err(e)) => return (response.status().as_u16(), Err(e.to_string())),
                None => break,
            }
        }
        (
            response.status().as_u16(),
            Ok(String::from_utf8(body).unwrap()),
        )
    }

    #[tokio::test]
    async fn bodies_end_where_their_framing_says_and_the_connection_is_reused() {
        let (client, server) = serve(vec![
            // Chunked, cut inside a size line, a chunk's data and its CRLF; an extension and
            // a trailer.
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r|\nhel|lo\r|\n6;x=1\r\n world\r\n0\r\nx-t: 1\r\n\r\n",
            // An interim response before the real one; a sized body.
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab|cd",
            // An error status with its body.
            "HTTP/1.1 429 Too Many Requests\r\ncontent-length: 4\r\n\r\nslow",
            // Runs to the close.
            "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nto the| end",
        ])
        .await;
        assert_eq!(exchange(&client).await, (200, Ok("hello world".into())));
        assert_eq!(exchange(&client).await, (200, Ok("abcd".into())));
        assert_eq!(exchange(&client).await, (429, Ok("slow".into())));
        assert_eq!(exchange(&client).await, (200, Ok("to the end".into())));
        // All four on the one connection the server accepted; the last is not kept.
        server.await.unwrap();
        assert!(client.0.take_idle().is_none());
    }

    #[tokio::test]
    async fn a_broken_body_is_an_error_never_its_end() {
        let cases = [
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
                "malformed chunked body: a chunk size is not hex",
            ),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n",
                "malformed chunked body: a chunk's data runs past its size",
            ),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
                "the server closed the connection before the body's end",
            ),
        ];
        for (answer, error) in cases {
            let (client, _server) = serve(vec![answer]).await;
            let (status, body) = exchange(&client).await;
            assert_eq!(status, 200);
            let body = body.unwrap_err();
            assert!(body.contains(error), "{answer:?}: {body}");
            assert!(client.0.take_idle().is_none(), "{answer:?}");
        }
    }

    #[tokio::test]
    async fn what_is_not_a_response_head_says_so() {
        for (answer, error) in [
            ("SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1 response"),
            (
                "HTTP/1.1 200 OK\r\n",
                "closed in the middle of the response head",
            ),
            ("", "connection closed before any byte of the response"),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n",
                "content-length is not a number",
            ),
        ] {
            let (client, _server) = serve(vec![answer]).await;
            let request = client.request(None, b"{}");
            // A new connection: never stale, always broken.
            match client.send(&request).await {
                Err(SendError::Broken(detail)) => assert!(detail.contains(error), "{detail}"),
                Err(e) => panic!("{answer:?}: {e:?}"),
                Ok(r) => panic!("{answer:?}: status {}", r.status()),
            }
        }
    }

    #[tokio::test]
    async fn requests_carry_the_host_the_length_and_the_key_once() {
        let client = StreamClient::new(
            &"http://[::1]:8000/v1/chat/completions?x=1".parse().unwrap(),
            Duration::from_secs(1),
            0,
        )
        .unwrap();
        let request = client.request(Some(b"Bearer sk-1"), b"{\"a\":1}");
        assert_eq!(
            String::from_utf8(request).unwrap(),
            "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: [::1]:8000\r\n\
             content-type: application/json\r\naccept: text/event-stream\r\n\
             authorization: Bearer sk-1\r\ncontent-length: 7\r\n\r\n{\"a\":1}"
        );
    }

    #[tokio::test]
    async fn responses_carry_the_connections_arrival_clock() {
        let (listener, client) = listener().await;
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
        let mut response = client.send(&client.request(None, b"{}")).await.unwrap();
        let clock = response.arrival();
        let (writing, written, _tcp) = server.await.unwrap();
        // The event waits 50 ms in the socket; its instant must still be its arrival.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let data = response.data().await.unwrap().unwrap().to_vec();
        let read_at = Instant::now();
        assert_eq!(&data[..], b"data: {}\n\n");
        if !cfg!(target_os = "linux") {
            return;
        }
        let arrived = clock
            .expect("the connection's clock")
            .last_arrival()
            .expect("the read carried a kernel timestamp");
        let slack = Duration::from_micros(200);
        assert!(arrived + slack >= writing, "{:?} early", writing - arrived);
        assert!(arrived <= written + slack, "{:?} late", arrived - written);
        assert!(read_at - arrived >= Duration::from_millis(50));
    }

    #[tokio::test]
    async fn the_servers_close_keeps_the_last_bytes_stamp() {
        let (listener, client) = listener().await;
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
        let (status, body) = {
            let mut response = client.send(&client.request(None, b"{}")).await.unwrap();
            let clock = response.arrival();
            let mut body = Vec::new();
            while let Some(bytes) = response.data().await {
                body.extend_from_slice(bytes.unwrap());
            }
            let writing = server.await.unwrap();
            if cfg!(target_os = "linux") {
                let clock = clock.expect("the connection's clock");
                let arrived = clock.last_arrival().expect("the close erased the stamp");
                // The body's stamp, not the headers' (50 ms earlier).
                let slack = Duration::from_micros(200);
                assert!(arrived + slack >= writing, "{:?} early", writing - arrived);
            }
            (response.status().as_u16(), body)
        };
        assert_eq!((status, &body[..]), (200, &b"data: [DONE]\n\n"[..]));
    }
}
