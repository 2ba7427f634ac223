//! A shard's clocks: its wall clock against the server's `Date` headers, and against its own
//! monotonic clock. Shards align on their wall clocks, so a merge needs to know how far apart
//! those may be.
//!
//! `Date` has one-second resolution (servers write the time truncated to the second). A
//! response sent at local time `t0` and received at `t1` carrying `D` says the server's clock
//! read between D and D + 1 at some local moment in [t0, t1], so the offset (server minus local)
//! lies in (D - t1, D + 1 - t0). Samples taken at spread phases of the second cut different
//! slices of that one-second interval; their intersection is the estimate.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::http::api_key::ApiKey;
use crate::http::arrival;

/// Samples per estimate, spaced so their phases spread over a second: the bound comes down to
/// about a second over this count, plus the round trip.
const SAMPLES: u32 = 5;
const SPACING: Duration = Duration::from_millis(210);

/// One response's `Date`, with the local wall-clock times around it, seconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DateSample {
    pub sent_s: f64,
    pub received_s: f64,
    pub date_s: f64,
}

/// The server's clock minus this host's: the middle of the interval the samples allow, and
/// half its width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offset {
    pub mid_s: f64,
    pub bound_s: f64,
}

/// The offset the samples allow; None without samples. Samples that contradict one another
/// (the wall clock stepped between them) give the interval that holds them all.
pub fn server_offset(samples: &[DateSample]) -> Option<Offset> {
    let interval = |s: &DateSample| (s.date_s - s.received_s, s.date_s + 1.0 - s.sent_s);
    let first = interval(samples.first()?);
    let (mut low, mut high) = first;
    for s in samples {
        let (l, h) = interval(s);
        low = low.max(l);
        high = high.min(h);
    }
    if low > high {
        (low, high) = samples
            .iter()
            .map(interval)
            .fold(first, |(lo, hi), (l, h)| (lo.min(l), hi.max(h)));
    }
    Some(Offset {
        mid_s: (low + high) / 2.0,
        bound_s: (high - low) / 2.0,
    })
}

fn wall_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Asks `url` a few times for its `Date`; responses without one are left out.
pub async fn sample_dates(
    client: &reqwest::Client,
    url: &str,
    key: Option<&ApiKey>,
) -> Vec<DateSample> {
    let mut samples = Vec::new();
    for i in 0..SAMPLES {
        if i > 0 {
            tokio::time::sleep(SPACING).await;
        }
        let mut request = client.get(url).timeout(Duration::from_secs(10));
        if let Some(key) = key {
            request = key.authorize(request);
        }
        let sent_s = wall_s();
        let Ok(response) = request.send().await else {
            continue;
        };
        let received_s = wall_s();
        let date = response
            .headers()
            .get(http::header::DATE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| chrono::DateTime::parse_from_rfc2822(v).ok());
        if let Some(date) = date {
            samples.push(DateSample {
                sent_s,
                received_s,
                date_s: date.timestamp() as f64,
            });
        }
    }
    samples
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC now, seconds (the monotonic reading taken around the
/// wall-clock one).
pub fn realtime_minus_monotonic_s() -> f64 {
    let before = arrival::clock_ns(libc::CLOCK_MONOTONIC);
    let real = arrival::clock_ns(libc::CLOCK_REALTIME);
    let after = arrival::clock_ns(libc::CLOCK_MONOTONIC);
    let mono = before / 2 + after / 2;
    (real as f64 - mono as f64) / 1e9
}

/// This host's name (a Kubernetes pod's is `JOB-INDEX`).
pub fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    (rc == 0 && !name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples of a server whose clock is `offset` ahead, taken `rtt` apart at local times
    /// `starts`, its `Date` truncated to the second as servers write it.
    fn samples(offset: f64, rtt: f64, starts: &[f64]) -> Vec<DateSample> {
        starts
            .iter()
            .map(|&t0| DateSample {
                sent_s: t0,
                received_s: t0 + rtt,
                date_s: (t0 + rtt / 2.0 + offset).floor(),
            })
            .collect()
    }

    #[test]
    fn spread_samples_narrow_the_one_second_resolution() {
        let starts: Vec<f64> = (0..5).map(|i| 1000.0 + f64::from(i) * 0.21).collect();
        for offset in [-3.72, 0.0, 0.4, 12.95] {
            let got = server_offset(&samples(offset, 0.002, &starts)).unwrap();
            assert!(
                (got.mid_s - offset).abs() <= got.bound_s,
                "{offset}: {got:?}"
            );
            assert!(got.bound_s <= 0.2, "{offset}: {got:?}");
        }
        // One sample alone bounds it to half a second (plus half the round trip).
        let one = server_offset(&samples(0.4, 0.002, &starts[..1])).unwrap();
        assert!((one.bound_s - 0.501).abs() < 1e-9, "{one:?}");
        assert!(server_offset(&[]).is_none());
    }

    #[test]
    fn contradicting_samples_widen_instead_of_failing() {
        let mut s = samples(0.0, 0.001, &[10.0, 10.5]);
        s[1].date_s += 5.0;
        let got = server_offset(&s).unwrap();
        assert!(got.bound_s > 2.0, "{got:?}");
    }

    #[test]
    fn clocks_and_host_read() {
        // The wall clock is far past the boot-relative monotonic one.
        assert!(realtime_minus_monotonic_s() > 1e9);
        assert!(host_name().is_some());
    }
}
