//! Injected faults (`--faults SPEC`), for testing clients against misbehaving servers.
//!
//! Grammar (comma-separated items):
//! - `KIND=P` — each request independently gets fault KIND with probability P (0..1). The draws
//!   are seeded by `--seed` and the request's arrival index, so runs reproduce exactly. When
//!   several kinds are given their probabilities add up (at most 1).
//! - `schedule=KIND` followed by more bare `KIND` items — a deterministic list applied by arrival
//!   index: request 0 gets the first entry, request 1 the second, and so on. Requests past the end
//!   of the schedule fall back to the probabilities (or `ok`).
//!
//! KIND is one of:
//!
//! | kind | effect |
//! |---|---|
//! | `ok` | no fault |
//! | `429` / `status429` | HTTP 429 with `Retry-After: 1` and an OpenAI-style error body |
//! | `500` / `status500`, `503` / `status503` | HTTP 500 / 503 with an error body |
//! | `reset` | TCP reset (RST) halfway through the output |
//! | `stall:SECS` | the stream goes silent for SECS seconds halfway (tokens then arrive in a burst) |
//! | `malformed` | one malformed SSE line (`data: {"truncated` ...) halfway, then the stream goes on |
//! | `error` | an `error` object mid-stream (`data: {"error":{...}}`), then `data: [DONE]` |
//! | `nodone` | the stream ends cleanly but without `data: [DONE]` |
//! | `multi:K` | K tokens per chunk (default 4) |
//! | `keepalive` | a `: keep-alive` comment line before every event |
//! | `crlf` | CRLF line endings |
//! | `utf8split` | the halfway token is ` café`, and its chunk is written in two parts split inside `é` |
//!
//! Only generation requests (`/v1/completions`, `/v1/chat/completions`) count and get faults.
//! Status faults apply to streamed and non-streamed requests alike, as do `stall` and `reset`;
//! the others shape the SSE stream and so only affect streamed requests.

use crate::rng;
use crate::SimError;

/// What happens to one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    Ok,
    Status(u16),
    Reset,
    Stall(f64),
    Malformed,
    ErrorEvent,
    NoDone,
    Multi(u32),
    KeepAlive,
    Crlf,
    Utf8Split,
}

impl Fault {
    fn parse(s: &str) -> Result<Self, SimError> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let bad = |m: String| SimError::Faults(m);
        let num = |a: Option<&str>, default: Option<f64>| -> Result<f64, SimError> {
            match (a, default) {
                (Some(a), _) => a
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| bad(format!("{s:?}: {a:?} is not a non-negative number"))),
                (None, Some(d)) => Ok(d),
                (None, None) => Err(bad(format!("{s:?} needs an argument, e.g. {name}:2"))),
            }
        };
        let f = match name {
            "ok" => Fault::Ok,
            "429" | "status429" => Fault::Status(429),
            "500" | "status500" => Fault::Status(500),
            "503" | "status503" => Fault::Status(503),
            "reset" => Fault::Reset,
            "stall" => Fault::Stall(num(arg, None)?),
            "malformed" => Fault::Malformed,
            "error" => Fault::ErrorEvent,
            "nodone" => Fault::NoDone,
            "multi" => Fault::Multi((num(arg, Some(4.0))? as u32).max(1)),
            "keepalive" => Fault::KeepAlive,
            "crlf" => Fault::Crlf,
            "utf8split" => Fault::Utf8Split,
            other => {
                return Err(bad(format!(
                "unknown fault {other:?}; known: ok, 429, 500, 503, reset, stall:SECS, malformed, \
                     error, nodone, multi:K, keepalive, crlf, utf8split"
            )))
            }
        };
        if arg.is_some() && !matches!(f, Fault::Stall(_) | Fault::Multi(_)) {
            return Err(bad(format!("{s:?}: {name} takes no argument")));
        }
        Ok(f)
    }
}

/// A parsed `--faults` spec.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultPlan {
    probabilities: Vec<(Fault, f64)>,
    schedule: Vec<Fault>,
    seed: u64,
}

impl FaultPlan {
    pub fn parse(spec: Option<&str>, seed: u64) -> Result<Self, SimError> {
        let mut plan = FaultPlan {
            seed,
            ..Self::default()
        };
        let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(plan);
        };
        let mut in_schedule = false;
        for item in spec.split(',').map(str::trim) {
            match item.split_once('=') {
                Some(("schedule", first)) => {
                    in_schedule = true;
                    plan.schedule.push(Fault::parse(first.trim())?);
                }
                Some((kind, p)) => {
                    in_schedule = false;
                    let p: f64 = p
                        .trim()
                        .parse()
                        .ok()
                        .filter(|p| (0.0..=1.0).contains(p))
                        .ok_or_else(|| {
                            SimError::Faults(format!(
                                "{item:?}: probability must be between 0 and 1"
                            ))
                        })?;
                    plan.probabilities.push((Fault::parse(kind.trim())?, p));
                }
                None if in_schedule => plan.schedule.push(Fault::parse(item)?),
                None => {
                    return Err(SimError::Faults(format!(
                        "{item:?}: expected KIND=PROBABILITY or schedule=KIND,KIND,..."
                    )))
                }
            }
        }
        let total: f64 = plan.probabilities.iter().map(|p| p.1).sum();
        if total > 1.0 + 1e-9 {
            return Err(SimError::Faults(format!(
                "probabilities add up to {total}, more than 1"
            )));
        }
        Ok(plan)
    }

    /// The fault for the request with this arrival index.
    pub fn for_request(&self, index: u64) -> Fault {
        if let Some(f) = self.schedule.get(index as usize) {
            return *f;
        }
        let mut u = rng::unit(rng::combine(&[self.seed, index, 0xfa17]));
        for (f, p) in &self.probabilities {
            if u < *p {
                return *f;
            }
            u -= p;
        }
        Fault::Ok
    }

    pub fn is_empty(&self) -> bool {
        self.schedule.is_empty() && self.probabilities.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schedule_and_probabilities() {
        let p = FaultPlan::parse(
            Some("status429=0.5,schedule=ok,429,reset,stall:2,multi:3"),
            1,
        )
        .unwrap();
        assert_eq!(p.for_request(0), Fault::Ok);
        assert_eq!(p.for_request(1), Fault::Status(429));
        assert_eq!(p.for_request(2), Fault::Reset);
        assert_eq!(p.for_request(3), Fault::Stall(2.0));
        assert_eq!(p.for_request(4), Fault::Multi(3));
        let n429 = (5..2005)
            .filter(|i| p.for_request(*i) == Fault::Status(429))
            .count();
        assert!((800..1200).contains(&n429), "{n429}");
        // Same seed, same draws (past the schedule); another seed, other draws.
        let draws = |seed| {
            let q = FaultPlan::parse(Some("status429=0.5"), seed).unwrap();
            (5..2005).map(|i| q.for_request(i)).collect::<Vec<_>>()
        };
        assert_eq!(
            draws(1),
            (5..2005).map(|i| p.for_request(i)).collect::<Vec<_>>()
        );
        assert_ne!(draws(1), draws(2));
    }

    #[test]
    fn rejects_bad_specs() {
        for bad in [
            "bogus=0.1",
            "reset=2",
            "stall",
            "reset:3",
            "ok",
            "429=0.7,500=0.7",
        ] {
            assert!(FaultPlan::parse(Some(bad), 0).is_err(), "{bad}");
        }
    }
}
