//! A successful response's stream as the driver reads it: each event's instant (the kernel's
//! receive stamp or the parse), and each chunk's tokens, text, usage and engine timings into the
//! exchange.

use std::time::Instant;

use infermeter_report::{EngineTimings, ErrorKind, TokenSource};

use super::{Choice, Chunk, Exchange, Stop, StreamChunk};
use crate::http::arrival::{ArrivalClock, EventClock};

/// When an event arrived, and which clock says so.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stamp {
    pub(super) at: Instant,
    /// Whether the kernel stamped the read that completed the event.
    kernel: bool,
    /// The exchange's clock if this event counts (`Parse` once any counted event was not
    /// kernel-stamped).
    pub(super) clock: EventClock,
}

/// A count raised by an event without text (tokens that decoded to nothing), waiting for the
/// next content event to carry it.
#[derive(Debug, Clone, Copy)]
struct Textless {
    stamp: Stamp,
    running_total: u32,
}

/// A successful response's stream as it is read: classifies each chunk into the exchange
/// (timestamps, token counts, usage, engine timings) and checks the end.
pub(super) struct StreamRead<'a> {
    pub(super) ex: &'a mut Exchange,
    arrival: Option<ArrivalClock>,
    /// Instants never go back: a clock step cannot reorder events or precede the request.
    floor: Instant,
    /// Set when the engine reports a running output count on content chunks (vLLM's
    /// `continuous_usage_stats`, llama.cpp's `timings_per_token`).
    running_counts: bool,
    /// The running count the chunks so far carry.
    counted: u32,
    /// Counts raised since the last content event; if none comes, these carry them.
    textless: Vec<Textless>,
    /// Events that carried reasoning.
    reasoning_events: u32,
    /// The server's reasoning token count (`completion_tokens_details`).
    reasoning_reported: Option<u32>,
}

impl<'a> StreamRead<'a> {
    pub(super) fn new(ex: &'a mut Exchange, arrival: Option<ArrivalClock>) -> StreamRead<'a> {
        // Kernel-stamped until an event that counts is not (see `stamp`).
        ex.clock = match arrival {
            Some(_) => EventClock::KernelReceive,
            None => EventClock::Parse,
        };
        let floor = ex.sent;
        StreamRead {
            ex,
            arrival,
            floor,
            running_counts: false,
            counted: 0,
            textless: Vec::new(),
            reasoning_events: 0,
            reasoning_reported: None,
        }
    }

    /// The instant of the event just taken. The body is read only as its events are taken,
    /// so the latest read is the one that completed this event (or a later one: hence no
    /// later than now); a read without a timestamp falls back to parse time.
    pub(super) fn stamp(&mut self) -> Stamp {
        let now = Instant::now();
        let arrived = self
            .arrival
            .as_ref()
            .and_then(|clock| clock.last_arrival_before(now));
        let at = arrived.map_or(now, |arrived| arrived.max(self.floor).min(now));
        self.floor = at;
        Stamp {
            at,
            kernel: arrived.is_some(),
            clock: if arrived.is_some() {
                self.ex.clock
            } else {
                EventClock::Parse
            },
        }
    }

    /// Takes in one chunk: its tokens (1 per content event, or the increase of a running
    /// count), usage and timings, and the first-token instant.
    /// What the chunk's `timings` (llama.cpp) and `usage` say of the request's counts.
    fn counts(&mut self, chunk: &StreamChunk<'_>) {
        let ex = &mut *self.ex;
        if let Some(t) = &chunk.timings {
            ex.engine_timings = Some(EngineTimings {
                prompt_n: t.prompt_n,
                prompt_ms: t.prompt_ms,
                predicted_n: t.predicted_n.map(u64::from),
                predicted_ms: t.predicted_ms,
                cache_n: t.cache_n,
            });
            // llama.cpp says what its cache served here; `usage`, when it says, wins below.
            if let Some(cache_n) = t.cache_n {
                ex.cached_tokens = Some(u32::try_from(cache_n).unwrap_or(u32::MAX));
            }
        }
        if let Some(usage) = &chunk.usage {
            if let Some(completion) = usage.completion_tokens {
                ex.output_tokens = Some(completion);
            }
            ex.prompt_tokens = usage.prompt_tokens.or(ex.prompt_tokens);
            if let Some(cached) = usage
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
            {
                ex.cached_tokens = Some(cached);
            }
            if let Some(reasoning) = usage
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
            {
                self.reasoning_reported = Some(reasoning);
            }
        }
    }

    pub(super) fn classify(&mut self, chunk: StreamChunk<'_>, stamp: Stamp) {
        let ex = &mut *self.ex;
        if ex.response_id.is_none() {
            ex.response_id = chunk.id.as_deref().map(str::to_string);
        }
        let carries_output = chunk.choices.iter().any(Choice::carries_output);
        if chunk.choices.iter().any(Choice::carries_reasoning) {
            self.reasoning_events += 1;
        }
        if chunk.choices.iter().any(Choice::carries_answer) {
            ex.first_answer.get_or_insert(stamp.at);
        }
        if let Some(answer) = &mut ex.answer {
            for text in chunk.choices.iter().filter_map(Choice::answer_text) {
                answer.push_str(text);
            }
        }
        // A running count on a content chunk: this chunk's share is the increase since the
        // last one (0 or 2 happen: llama.cpp holds back a token ending in half a UTF-8
        // character and sends control tokens as empty text, which is not a content event).
        let running = chunk
            .usage
            .as_ref()
            .and_then(|u| u.completion_tokens)
            .or(chunk.timings.as_ref().and_then(|t| t.predicted_n));
        let mut tokens = 1;
        if let (true, Some(total)) = (carries_output, running) {
            self.running_counts = true;
            tokens = total.saturating_sub(self.counted);
            self.counted = total;
        }
        self.counts(&chunk);
        let ex = &mut *self.ex;
        match (carries_output, running) {
            (false, Some(total)) => {
                let last = self
                    .textless
                    .last()
                    .map_or(self.counted, |t| t.running_total);
                if total > last {
                    self.textless.push(Textless {
                        stamp,
                        running_total: total,
                    });
                }
            }
            (false, None) => {}
            (true, _) => {
                self.textless.clear();
                ex.clock = stamp.clock;
                ex.first_token.get_or_insert(stamp.at);
                ex.chunks.push(Chunk {
                    at: stamp.at,
                    tokens,
                    server_mono_ns: chunk.infermeter_ts.map(|t| t.mono_ns),
                });
            }
        }
    }

    /// Ends the read at `[DONE]`'s instant (`None`: the stream ended without it): where the
    /// token counts came from, whether the stream was complete, and the last counts without
    /// text.
    pub(super) fn finish(self, done: Option<Instant>) -> Result<Instant, Stop> {
        let ex = self.ex;
        // Only a stream that reasoned has a first answer apart from its first token.
        if self.reasoning_events > 0 || self.reasoning_reported.is_some_and(|n| n > 0) {
            ex.reasoning_tokens = self.reasoning_reported.or(Some(self.reasoning_events));
        } else {
            ex.first_answer = None;
        }
        ex.token_source = match (self.running_counts, ex.output_tokens.is_some()) {
            (true, _) => TokenSource::ContinuousUsage,
            (false, true) => TokenSource::Usage,
            (false, false) => TokenSource::Chunks,
        };
        let Some(done) = done else {
            return Err(Stop::Failed {
                kind: ErrorKind::ClosedWithoutDone,
                detail: "the stream ended without a [DONE] event".into(),
            });
        };
        if ex.first_token.is_none() {
            return Err(Stop::Failed {
                kind: ErrorKind::NoOutput,
                detail: "the stream finished without any content".into(),
            });
        }
        // llama.cpp's last token can decode to nothing (a control token, half a UTF-8
        // character): only the final event counts it, and the chunks must still add up.
        if self.running_counts {
            let mut counted = self.counted;
            for Textless {
                stamp,
                running_total,
            } in self.textless
            {
                if !stamp.kernel {
                    ex.clock = EventClock::Parse;
                }
                ex.chunks.push(Chunk {
                    at: stamp.at,
                    tokens: running_total - counted,
                    server_mono_ns: None,
                });
                counted = running_total;
            }
        }
        Ok(done)
    }
}
