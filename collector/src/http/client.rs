//! The measured streams' HTTP/1 client: each connection is driven by the task of the request it
//! carries, and the idle ones are kept for the next request.
//!
//! hyper-util's pooled client runs each connection in a task of its own and hands every body
//! chunk to the request's task through a channel: one streamed event woke the connection's
//! task (the socket is readable), the request's task (a chunk is waiting) and the connection's
//! task again (the chunk was taken), each a trip through the runtime's queues and often across
//! its threads. Here the request's task polls the connection itself, before each poll of the
//! request or its body ([`Streamed`]), so an event is read, decoded and parsed in one task.
//!
//! What the pool did, this keeps: a connection whose response was read to its end goes back
//! for the next request (at most `pool` idle, none older than [`POOL_IDLE_TIMEOUT`]); one the
//! server closed while it was idle is seen closed when it is taken, and skipped; and a request
//! that fails on a reused connection before any response byte reports that
//! ([`RequestError::facts`]), so the driver sends it again on a new connection. Between
//! requests nothing polls an idle connection: the server's close waits in its socket until the
//! connection is taken.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http::header::{HeaderValue, HOST};
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1;
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::Connection;
use tower_service::Service;

use crate::http::arrival::ArrivalClock;
use crate::http::connection_log::{AttemptFacts, ConnectionLog, Logged, LoggedConnector};
use crate::http::transport::{error_chain, TcpConnector, TimestampedTcp, POOL_IDLE_TIMEOUT};

type Io = Logged<MaybeHttpsStream<TimestampedTcp>>;
type Connector = LoggedConnector<HttpsConnector<TcpConnector>>;

/// The measured requests' client, for one endpoint.
#[derive(Clone)]
pub struct StreamClient {
    connector: Connector,
    idle: Arc<Idle>,
}

/// Connections waiting for a request, the newest last.
struct Idle {
    conns: Mutex<Vec<(Instant, Conn)>>,
    /// How many may wait (0: each connection is closed after its response).
    max: usize,
}

/// One HTTP/1 connection and what it tells about itself.
struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
    /// `None` once it ended (the server closed it, or it failed): dropped then, as a
    /// connection task would be, so that a request or body still waiting on it hears so.
    connection: Option<http1::Connection<Io, Full<Bytes>>>,
    log: Option<ConnectionLog>,
    arrival: Option<ArrivalClock>,
}

impl Conn {
    /// Moves the connection on: writes what is queued, reads what arrived into the response or
    /// its body. Wakes this task when there is more to do.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(connection) = &mut self.connection {
            if connection.poll_without_shutdown(cx).is_ready() {
                self.connection = None;
            }
        }
    }

    fn closed(&self) -> bool {
        self.connection.is_none()
    }

    /// Ready for a request, or closed (`false`): an idle connection the server closed has
    /// its end of stream waiting, which this first poll reads.
    async fn ready(&mut self) -> bool {
        std::future::poll_fn(|cx| {
            self.drive(cx);
            self.sender.poll_ready(cx).map(|ready| ready.is_ok())
        })
        .await
    }
}

/// Why a request got no response head.
#[derive(Debug)]
pub enum RequestError {
    /// No connection could be opened (or its TLS set up).
    Connect(String),
    /// The connection failed; `facts` says what it carried of this request.
    Failed {
        detail: String,
        facts: Option<AttemptFacts>,
    },
}

impl StreamClient {
    /// A client opening connections through `connector`; `pool` idle ones are kept for reuse.
    pub fn new(connector: Connector, pool: usize) -> StreamClient {
        StreamClient {
            connector,
            idle: Arc::new(Idle {
                conns: Mutex::new(Vec::new()),
                max: pool,
            }),
        }
    }

    /// Sends `request` (its URI absolute) on an idle connection or a new one, driving the
    /// connection in this task; the response's head, its body driving the connection on.
    pub async fn request(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<Response<Streamed>, RequestError> {
        let uri = request.uri().clone();
        origin_form(&mut request, &uri);
        let mut conn = match self.take_idle().await {
            Some(conn) => conn,
            None => self.connect(&uri).await?,
        };
        if let Some(log) = &conn.log {
            log.request_starts();
        }
        let sending = conn.sender.send_request(request);
        let mut sending = std::pin::pin!(sending);
        let sent = std::future::poll_fn(|cx| {
            conn.drive(cx);
            sending.as_mut().poll(cx)
        })
        .await;
        match sent {
            Ok(response) => {
                if let Some(log) = &conn.log {
                    log.answered();
                }
                Ok(response.map(|body| Streamed {
                    body,
                    conn: Some(conn),
                    ended: false,
                    idle: self.idle.clone(),
                }))
            }
            Err(e) => Err(RequestError::Failed {
                detail: error_chain(&e),
                facts: conn.log.as_ref().map(ConnectionLog::attempt),
            }),
        }
    }

    /// The newest idle connection that is still open, if any.
    async fn take_idle(&self) -> Option<Conn> {
        loop {
            let mut conn = self.idle.take()?;
            if conn.ready().await {
                return Some(conn);
            }
        }
    }

    async fn connect(&self, uri: &Uri) -> Result<Conn, RequestError> {
        let failed = |e: &dyn std::error::Error| RequestError::Connect(error_chain(e));
        let mut connector = self.connector.clone();
        std::future::poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(|e| failed(&*e))?;
        let io = connector.call(uri.clone()).await.map_err(|e| failed(&*e))?;
        let mut extras = http::Extensions::new();
        io.connected().get_extras(&mut extras);
        let (sender, connection) = http1::handshake(io).await.map_err(|e| failed(&e))?;
        Ok(Conn {
            sender,
            connection: Some(connection),
            log: extras.remove(),
            arrival: extras.remove(),
        })
    }
}

impl Idle {
    fn take(&self) -> Option<Conn> {
        let mut conns = self.conns.lock().expect("no panic holds the pool");
        conns.retain(|(since, _)| since.elapsed() < POOL_IDLE_TIMEOUT);
        conns.pop().map(|(_, conn)| conn)
    }

    fn put(&self, conn: Conn) {
        let mut conns = self.conns.lock().expect("no panic holds the pool");
        if conns.len() < self.max {
            conns.push((Instant::now(), conn));
        }
    }
}

/// The request as HTTP/1 sends it: the path alone, the host in its own header.
fn origin_form(request: &mut Request<Full<Bytes>>, uri: &Uri) {
    if let Some(host) = uri.host() {
        let default_port = match uri.scheme_str() {
            Some("https") => 443,
            _ => 80,
        };
        let host = match uri.port_u16() {
            Some(port) if port != default_port => format!("{host}:{port}"),
            _ => host.to_string(),
        };
        if let Ok(value) = HeaderValue::from_str(&host) {
            request.headers_mut().entry(HOST).or_insert(value);
        }
    }
    let path = uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()
        .expect("a URI's path is a URI");
    *request.uri_mut() = path;
}

/// A response body that drives its connection as it is read; the connection goes back to the
/// pool when the body was read to its end.
pub struct Streamed {
    body: Incoming,
    conn: Option<Conn>,
    ended: bool,
    idle: Arc<Idle>,
}

impl Streamed {
    /// The connection's receive clock (`None` without kernel timestamps).
    pub fn arrival(&self) -> Option<ArrivalClock> {
        self.conn.as_ref().and_then(|c| c.arrival.clone())
    }
}

impl Body for Streamed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        // The connection first: it moves what the socket holds into the body.
        if let Some(conn) = &mut this.conn {
            conn.drive(cx);
        }
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = frame {
            this.ended = true;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Streamed {
    fn drop(&mut self) {
        match self.conn.take() {
            Some(conn) if (self.ended || self.body.is_end_stream()) && !conn.closed() => {
                self.idle.put(conn)
            }
            _ => {}
        }
    }
}
