//! What each streaming connection has carried, so the driver can tell a request the server
//! never saw from one it failed.
//!
//! A server may close a kept-alive connection (without `Connection: close`, or as its idle
//! timeout runs out) just as the client's pool hands it to the next request. That request then
//! fails before any response byte: it never reached the engine, and sending it again on a new
//! connection is safe. A request that failed on a new connection, or after any byte of its
//! response, is a real failure and is never sent again. Telling these apart needs two facts
//! about the failed attempt's connection: had it finished a response before, and has any byte
//! of this one arrived. [`LoggedConnector`] wraps the streaming client's connections (above
//! TLS, so a TLS alert is not counted as response bytes) and keeps those facts in a
//! [`ConnectionLog`], which rides in the connection's `Connected` info: hyper-util copies it
//! into each response's extensions and into each request error's connect info.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use http::Uri;
use hyper::rt::{Read, ReadBuf, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};

use crate::http::transport::write_through;

/// One connection's counts, shared by its I/O and the requests it carries.
#[derive(Debug, Clone, Default)]
pub struct ConnectionLog(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    /// Response bytes read (after TLS) since the connection opened.
    bytes_read: AtomicU64,
    /// `bytes_read` when the request now on the connection began to be written.
    bytes_before_request: AtomicU64,
    /// Responses that arrived on the connection before the request now on it.
    responses: AtomicU32,
    /// Set when a response's head arrived: the connection's next write starts a new request.
    /// (HTTP/1.1 without pipelining: that write can only come once this response is read.)
    answered: AtomicBool,
}

/// What a failed attempt's connection says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptFacts {
    /// The connection had carried a response before this request: it was reused.
    pub reused: bool,
    /// Bytes of this request's response that arrived.
    pub response_bytes: u64,
}

impl AttemptFacts {
    /// Whether the request certainly never reached the engine: it failed on a reused
    /// connection before any byte of its response (the server had closed the connection).
    pub fn never_reached_the_server(self) -> bool {
        self.reused && self.response_bytes == 0
    }
}

impl ConnectionLog {
    /// The log a connection's `Connected` info carries (set by [`LoggedConnector`]).
    pub fn of(connected: &Connected) -> Option<ConnectionLog> {
        let mut extensions = http::Extensions::new();
        connected.get_extras(&mut extensions);
        extensions.remove::<ConnectionLog>()
    }

    /// Marks the arrival of a response's head; call it before the response is read on.
    pub fn answered(&self) {
        self.0.answered.store(true, Ordering::Release);
    }

    /// The facts of the request now on the connection.
    pub fn attempt(&self) -> AttemptFacts {
        let counts = &self.0;
        let read = counts.bytes_read.load(Ordering::Acquire);
        AttemptFacts {
            reused: counts.responses.load(Ordering::Acquire) > 0,
            response_bytes: read - counts.bytes_before_request.load(Ordering::Acquire),
        }
    }

    fn on_read(&self, bytes: usize) {
        self.0.bytes_read.fetch_add(bytes as u64, Ordering::AcqRel);
    }

    /// Called before every write: the first one after an answered response starts a request.
    fn on_write(&self) {
        let counts = &self.0;
        if counts.answered.swap(false, Ordering::AcqRel) {
            counts.responses.fetch_add(1, Ordering::AcqRel);
            let read = counts.bytes_read.load(Ordering::Acquire);
            counts.bytes_before_request.store(read, Ordering::Release);
        }
    }
}

/// A connector whose connections keep a [`ConnectionLog`].
#[derive(Debug, Clone)]
pub struct LoggedConnector<C>(pub C);

impl<C> tower_service::Service<Uri> for LoggedConnector<C>
where
    C: tower_service::Service<Uri>,
    C::Future: Send + 'static,
{
    type Response = Logged<C::Response>;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Logged<C::Response>, C::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move {
            Ok(Logged {
                io: connecting.await?,
                log: ConnectionLog::default(),
            })
        })
    }
}

/// A connection counting what it reads and when requests start.
#[derive(Debug)]
pub struct Logged<T> {
    io: T,
    log: ConnectionLog,
}

impl<T: Connection> Connection for Logged<T> {
    fn connected(&self) -> Connected {
        self.io.connected().extra(self.log.clone())
    }
}

impl<T: Read + Unpin> Read for Logged<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // A cursor cannot say how much a read filled: read through a buffer of our own over
        // the same memory, and advance the cursor by what it holds.
        // SAFETY: the inner read initialises the bytes it reports filled, and the cursor
        // advances over exactly those.
        let filled = {
            let mut inner = ReadBuf::uninit(unsafe { buf.as_mut() });
            ready!(Pin::new(&mut this.io).poll_read(cx, inner.unfilled()))?;
            inner.filled().len()
        };
        this.log.on_read(filled);
        unsafe { buf.advance(filled) };
        Poll::Ready(Ok(()))
    }
}

impl<T: Write + Unpin> Write for Logged<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.log.on_write();
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.log.on_write();
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    write_through!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_new_after_an_answered_response() {
        let log = ConnectionLog::default();
        // The first request on a fresh connection: not reused, whatever it read.
        log.on_write();
        assert_eq!(
            log.attempt(),
            AttemptFacts {
                reused: false,
                response_bytes: 0
            }
        );
        log.on_read(100);
        log.answered();
        log.on_read(50);
        assert!(!log.attempt().never_reached_the_server());
        // The next request: its writes start it; nothing of its response has come.
        log.on_write();
        log.on_write();
        let next = log.attempt();
        assert_eq!(
            next,
            AttemptFacts {
                reused: true,
                response_bytes: 0
            }
        );
        assert!(next.never_reached_the_server());
        // One byte of its response, and it may have reached the server.
        log.on_read(1);
        assert!(!log.attempt().never_reached_the_server());
    }
}
