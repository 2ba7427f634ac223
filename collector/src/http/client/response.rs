//! A response read from its connection: the head (status and framing) and the body's data,
//! decoded from the bytes as they are read (chunked, sized, or up to the server's close).

use std::io;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Buf;

use super::{Conn, Pool};
use crate::http::arrival::ArrivalClock;

/// A response head larger than this is refused (hyper's default limit was ~400 KiB for the
/// whole read buffer; no engine sends headers near this).
const MAX_HEAD: usize = 64 * 1024;
/// Headers parsed per response; more is refused.
const MAX_HEADERS: usize = 100;
/// A chunk-size line (hex digits and extensions) longer than this is refused.
const MAX_CHUNK_LINE: usize = 4096;

/// What a response's head says.
#[derive(Debug)]
pub(super) struct Head {
    status: http::StatusCode,
    framing: Framing,
    /// The connection may carry another request once the body is read.
    keep_alive: bool,
}

/// How the body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Chunked(ChunkState),
    /// `content-length`: the bytes still to come.
    Length(u64),
    /// Neither: the body runs to the server's close.
    Close,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// At a chunk-size line.
    Size,
    /// Inside a chunk's data: the bytes left.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last chunk: trailer lines up to a blank one.
    Trailer,
}

/// Reads and parses the response head, skipping interim (1xx) responses. On failure, the
/// reason and how many bytes of the response had arrived.
pub(super) async fn read_head(conn: &mut Conn) -> Result<Head, (String, usize)> {
    let mut received = 0;
    loop {
        if !conn.buf.is_empty() {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut parsed = httparse::Response::new(&mut headers);
            match parsed.parse(&conn.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let head = Head::of(&parsed).map_err(|e| (e, received))?;
                    conn.buf.advance(len);
                    // 100 Continue, 103 Early Hints: the real response follows.
                    if head.status.is_informational() {
                        continue;
                    }
                    return Ok(head);
                }
                Ok(httparse::Status::Partial) if conn.buf.len() > MAX_HEAD => {
                    return Err((
                        format!("the response head is over {} KiB", MAX_HEAD / 1024),
                        received,
                    ))
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => {
                    let start =
                        String::from_utf8_lossy(&conn.buf[..conn.buf.len().min(80)]).into_owned();
                    return Err((
                        format!("the answer is not an HTTP/1 response ({e}): {start:?}"),
                        received,
                    ));
                }
            }
        }
        match conn.read_more().await {
            Ok(0) if received == 0 => {
                return Err((
                    "connection closed before any byte of the response".into(),
                    0,
                ))
            }
            Ok(0) => {
                return Err((
                    "connection closed in the middle of the response head".into(),
                    received,
                ))
            }
            Ok(n) => received += n,
            Err(e) => return Err((format!("connection broke: {e}"), received)),
        }
    }
}

impl Head {
    fn of(parsed: &httparse::Response<'_, '_>) -> Result<Head, String> {
        let code = parsed.code.unwrap_or_default();
        let status = http::StatusCode::from_u16(code)
            .map_err(|_| format!("the response's status {code} is not an HTTP status"))?;
        let http10 = parsed.version == Some(0);
        let mut chunked = false;
        let mut length = None;
        let mut keep_alive = !http10;
        for header in parsed.headers.iter() {
            let value = String::from_utf8_lossy(header.value);
            let tokens = || value.split(',').map(str::trim);
            if header.name.eq_ignore_ascii_case("transfer-encoding") {
                // Chunked is the last coding when present (RFC 9112 6.3).
                chunked = value
                    .rsplit(',')
                    .next()
                    .map(str::trim)
                    .is_some_and(|t| t.eq_ignore_ascii_case("chunked"));
            } else if header.name.eq_ignore_ascii_case("content-length") {
                let n = value.trim().parse::<u64>().map_err(|_| {
                    format!("the response's content-length is not a number: {value:?}")
                })?;
                length = Some(n);
            } else if header.name.eq_ignore_ascii_case("connection") {
                if tokens().any(|t| t.eq_ignore_ascii_case("close")) {
                    keep_alive = false;
                } else if http10 && tokens().any(|t| t.eq_ignore_ascii_case("keep-alive")) {
                    keep_alive = true;
                }
            }
        }
        let framing = if matches!(
            status,
            http::StatusCode::NO_CONTENT | http::StatusCode::NOT_MODIFIED
        ) {
            Framing::Length(0)
        } else if chunked {
            Framing::Chunked(ChunkState::Size)
        } else if let Some(n) = length {
            Framing::Length(n)
        } else {
            keep_alive = false;
            Framing::Close
        };
        Ok(Head {
            status,
            framing,
            keep_alive,
        })
    }
}

/// What the bytes buffered so far give.
enum Step {
    /// Body data: the first `n` bytes of the buffer.
    Data(usize),
    NeedMore,
    Done,
}

/// A response whose head has arrived; its body is read with [`Response::data`]. Read to its
/// end on a connection that may be kept, the connection goes back to its pool; dropped
/// earlier, the connection closes.
pub struct Response {
    status: http::StatusCode,
    framing: Framing,
    keep_alive: bool,
    /// `None` once the body has ended or broken.
    conn: Option<Conn>,
    pool: Arc<Pool>,
    /// Bytes at the buffer's start handed out by the last [`Response::data`], dropped at the
    /// next one.
    handed: usize,
}

impl Response {
    pub(super) fn new(head: Head, conn: Conn, pool: Arc<Pool>) -> Response {
        Response {
            status: head.status,
            framing: head.framing,
            keep_alive: head.keep_alive,
            conn: Some(conn),
            pool,
            handed: 0,
        }
    }

    pub fn status(&self) -> http::StatusCode {
        self.status
    }

    /// The clock of the connection's reads: when the bytes read last arrived.
    pub fn arrival(&self) -> Option<ArrivalClock> {
        self.conn.as_ref().and_then(|c| c.arrival.clone())
    }

    /// The body's next bytes as they arrive; `None` at its end.
    pub async fn data(&mut self) -> Option<io::Result<&[u8]>> {
        let n = match std::future::poll_fn(|cx| self.poll_data(cx)).await {
            Some(Ok(n)) => n,
            Some(Err(e)) => return Some(Err(e)),
            None => return None,
        };
        self.conn.as_ref().map(|conn| Ok(&conn.buf[..n]))
    }

    /// The body's start as text, up to `limit` bytes (for an error's detail).
    pub async fn text(mut self, limit: usize) -> String {
        let mut text = Vec::new();
        while let Some(Ok(bytes)) = self.data().await {
            text.extend_from_slice(&bytes[..bytes.len().min(limit - text.len())]);
            if text.len() == limit {
                break;
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    }

    /// Polls for the body's next bytes: how many, at the buffer's start.
    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<usize>>> {
        let Some(conn) = self.conn.as_mut() else {
            return Poll::Ready(None);
        };
        conn.buf.advance(std::mem::take(&mut self.handed));
        loop {
            match self.step() {
                Ok(Step::Data(n)) => {
                    self.handed = n;
                    return Poll::Ready(Some(Ok(n)));
                }
                Ok(Step::Done) => {
                    self.end();
                    return Poll::Ready(None);
                }
                Ok(Step::NeedMore) => {}
                Err(e) => {
                    self.conn = None;
                    return Poll::Ready(Some(Err(e)));
                }
            }
            let conn = self.conn.as_mut().expect("checked above");
            match ready!(conn.poll_read_more(cx)) {
                Ok(0) if self.framing == Framing::Close => self.framing = Framing::Done,
                Ok(0) => {
                    self.conn = None;
                    return Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection before the body's end",
                    ))));
                }
                Ok(_) => {}
                Err(e) => {
                    self.conn = None;
                    return Poll::Ready(Some(Err(e)));
                }
            }
        }
    }

    /// The body has ended: the connection goes back to the pool if it may carry another
    /// request and nothing follows the body.
    fn end(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.keep_alive && conn.buf.is_empty() {
                self.pool.put(conn);
            }
        }
    }

    /// Decodes the buffered bytes as far as they go.
    fn step(&mut self) -> io::Result<Step> {
        let buf = &mut self.conn.as_mut().expect("a body being read").buf;
        loop {
            match &mut self.framing {
                Framing::Done => return Ok(Step::Done),
                Framing::Length(0) => self.framing = Framing::Done,
                Framing::Length(left) | Framing::Chunked(ChunkState::Data(left)) => {
                    if buf.is_empty() {
                        return Ok(Step::NeedMore);
                    }
                    let n = (*left).min(buf.len() as u64);
                    *left -= n;
                    if let Framing::Chunked(state @ ChunkState::Data(0)) = &mut self.framing {
                        *state = ChunkState::DataEnd;
                    }
                    return Ok(Step::Data(n as usize));
                }
                Framing::Close if buf.is_empty() => return Ok(Step::NeedMore),
                Framing::Close => return Ok(Step::Data(buf.len())),
                Framing::Chunked(state) => {
                    let Some(end) = memchr::memchr(b'\n', buf) else {
                        if buf.len() > MAX_CHUNK_LINE {
                            return Err(bad_chunk("a chunk line runs over 4 KiB"));
                        }
                        return Ok(Step::NeedMore);
                    };
                    let line = &buf[..end];
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    let next = match *state {
                        ChunkState::Size => match chunk_size(line)? {
                            0 => ChunkState::Trailer,
                            n => ChunkState::Data(n),
                        },
                        ChunkState::DataEnd if line.is_empty() => ChunkState::Size,
                        ChunkState::DataEnd => {
                            return Err(bad_chunk("a chunk's data runs past its size"))
                        }
                        ChunkState::Trailer if line.is_empty() => {
                            buf.advance(end + 1);
                            self.framing = Framing::Done;
                            continue;
                        }
                        ChunkState::Trailer => ChunkState::Trailer,
                        ChunkState::Data(_) => unreachable!("matched above"),
                    };
                    buf.advance(end + 1);
                    *state = next;
                }
            }
        }
    }
}

/// A chunk-size line's size: hex digits, then optional extensions after `;`.
fn chunk_size(line: &[u8]) -> io::Result<u64> {
    let digits = line.split(|&b| b == b';').next().unwrap_or_default();
    let digits = std::str::from_utf8(digits).unwrap_or_default().trim();
    u64::from_str_radix(digits, 16)
        .map_err(|_| bad_chunk(&format!("a chunk size is not hex: {digits:?}")))
}

fn bad_chunk(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed chunked body: {what}"),
    )
}
