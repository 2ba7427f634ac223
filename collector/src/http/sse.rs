//! Server-sent events from a response body's bytes, as the WHATWG event-stream format defines
//! them (lines ending in LF, CRLF or CR; `data`, `event` and comment lines; a blank line
//! dispatches), parsed straight from the bytes.
//!
//! The driver reads every event of every stream through this, so it does per event only what
//! an event needs: one scan for the line ends, one copy of the data into the event's `String`.
//! (eventsource-stream, used before, copied each body chunk into a new `String`, split its
//! buffer into a new one after every line, so a read holding many events was copied once per
//! line, and walked the text a character at a time. Bytes that are not UTF-8 stalled it until
//! the request's timeout; here they become U+FFFD and the JSON parse reports the event.)

use std::borrow::Cow;

/// One dispatched event, borrowed from the parser until its next event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event<'a> {
    /// The `event:` field; empty for the default type, `message`.
    pub event: &'a str,
    /// The `data:` lines, joined by `\n`. Bytes that are not UTF-8 become U+FFFD.
    pub data: Cow<'a, str>,
}

/// The events of a body's bytes, fed to it as they are read ([`Events::push`]) and taken
/// out as they complete ([`Events::next_event`]).
#[derive(Debug, Default)]
pub struct Events {
    /// Bytes received and not yet parsed, from `at`.
    buf: Vec<u8>,
    at: usize,
    /// The event being built.
    data: Vec<u8>,
    event: String,
    /// The last line ended in CR: an LF right after it belongs to that line end.
    after_cr: bool,
    /// Whether the first line was seen (a byte-order mark before it is dropped).
    started: bool,
    /// The last event handed out lives in `data` and `event` until the next call: the
    /// buffers are reused, not allocated per event.
    dispatched: bool,
}

impl Events {
    /// The next event the bytes pushed so far complete, if any. (An event without its blank
    /// line is never dispatched, as the format says.)
    pub fn next_event(&mut self) -> Option<Event<'_>> {
        if std::mem::take(&mut self.dispatched) {
            self.data.clear();
            self.event.clear();
        }
        loop {
            let rest = &self.buf[self.at..];
            if self.after_cr && !rest.is_empty() {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    self.at += 1;
                    continue;
                }
            }
            let end = memchr::memchr2(b'\n', b'\r', rest)?;
            let mut line = &rest[..end];
            self.after_cr = rest[end] == b'\r';
            self.at += end + 1;
            if !self.started {
                self.started = true;
                line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            }
            if line.is_empty() {
                if self.data.is_empty() {
                    // No data, no event.
                    self.event.clear();
                    continue;
                }
                // The last data line's `\n` is not the event's.
                self.data.pop();
                self.dispatched = true;
                let data = match std::str::from_utf8(&self.data) {
                    Ok(data) => Cow::Borrowed(data),
                    Err(_) => String::from_utf8_lossy(&self.data),
                };
                return Some(Event {
                    event: &self.event,
                    data,
                });
            }
            let (field, value) = match memchr::memchr(b':', line) {
                // A comment (keep-alives).
                Some(0) => continue,
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (line, &b""[..]),
            };
            match field {
                b"data" => {
                    self.data.extend_from_slice(value);
                    self.data.push(b'\n');
                }
                b"event" => {
                    self.event.clear();
                    self.event.push_str(&String::from_utf8_lossy(value));
                }
                // `id` and `retry` matter only to a browser reconnecting: nothing here.
                _ => {}
            }
        }
    }

    /// Takes in a body chunk, dropping the bytes already parsed.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.at == self.buf.len() {
            self.buf.clear();
        } else {
            self.buf.drain(..self.at);
        }
        self.at = 0;
        self.buf.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of `chunks` received one after another, as (type, data).
    fn events(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut events = Events::default();
        let mut all = Vec::new();
        for chunk in chunks {
            events.push(chunk);
            while let Some(e) = events.next_event() {
                all.push((e.event.to_string(), e.data.into_owned()));
            }
        }
        all
    }

    fn message(data: &str) -> (String, String) {
        (String::new(), data.into())
    }

    #[test]
    fn events_are_cut_at_blank_lines_whatever_the_line_end() {
        let text = b"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d\ndata:e\n\n";
        let expected = [message("a"), message("b"), message("c"), message("d\ne")];
        assert_eq!(events(&[text]), expected);
        // Cut anywhere, even between a CR and its LF, the same events.
        for cut in 1..text.len() {
            assert_eq!(
                events(&[&text[..cut], &text[cut..]]),
                expected,
                "cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(events(&bytes), expected);
    }

    #[test]
    fn fields_comments_and_the_byte_order_mark() {
        let text = "\u{feff}: keep-alive\n\nevent: error\ndata: overloaded\n\nid: 7\nretry: 10\nfoo\ndata\n\n: x\ndata:  two spaces\n\n";
        assert_eq!(
            events(&[text.as_bytes()]),
            [
                ("error".into(), "overloaded".into()),
                // `data` alone is an empty data line; unknown fields are ignored.
                message(""),
                message(" two spaces"),
            ]
        );
        // No data, no event; an unfinished event at the end is dropped.
        assert_eq!(
            events(&[b"event: x\n\ndata: [DONE]\n\ndata: cut"]),
            [message("[DONE]")]
        );
    }

    #[test]
    fn a_character_split_across_chunks_is_whole() {
        let text = "data: {\"text\":\"é\"}\n\n".as_bytes();
        let at = text.iter().position(|&b| b >= 0xC0).unwrap() + 1;
        assert_eq!(
            events(&[&text[..at], &text[at..]]),
            [message("{\"text\":\"é\"}")]
        );
        // Bytes that never become UTF-8 are replaced, not fatal.
        assert_eq!(events(&[b"data: a\xFFb\n\n"]), [message("a\u{FFFD}b")]);
    }
}
