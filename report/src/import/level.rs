//! Pieces every reader builds a level from: a tool's statistics of one metric as a
//! [`Distribution`], the figures it lacks filled from its own per-request samples, and those
//! requests as [`RequestColumns`].

use crate::schema::{to_ticks, Level, LevelMetrics, RequestColumns, RequestCounts};
use crate::stats::Distribution;

/// A distribution of the figures a tool wrote (already in the report's unit), absent ones
/// `None`. `None` without a mean or a median: such a summary says too little to chart.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    pub count: Option<u64>,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub stddev: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
}

impl Figures {
    /// A tool's statistics of one metric, read by the names the tool gives them, in the order
    /// count, mean, median, min, max, standard deviation, p90, p95, p99, p99.9 (`None`: a figure
    /// the tool never writes). `get` reads one name: absent is `None`, anything but a number an
    /// error.
    pub fn read(
        names: [Option<&str>; 10],
        get: &dyn Fn(&str) -> Result<Option<f64>, String>,
    ) -> Result<Figures, String> {
        let mut v = [None; 10];
        for (slot, name) in v.iter_mut().zip(names) {
            if let Some(name) = name {
                *slot = get(name)?;
            }
        }
        Ok(Figures {
            count: v[0].map(|c| c as u64),
            mean: v[1],
            p50: v[2],
            min: v[3],
            max: v[4],
            stddev: v[5],
            p90: v[6],
            p95: v[7],
            p99: v[8],
            p999: v[9],
        })
    }

    /// Every figure times `factor` (milliseconds to seconds: 1e-3); the count as it is.
    pub fn scaled(self, factor: f64) -> Figures {
        let s = |v: Option<f64>| v.map(|v| v * factor);
        Figures {
            count: self.count,
            mean: s(self.mean),
            p50: s(self.p50),
            min: s(self.min),
            max: s(self.max),
            stddev: s(self.stddev),
            p90: s(self.p90),
            p95: s(self.p95),
            p99: s(self.p99),
            p999: s(self.p999),
        }
    }

    /// The distribution, with the figures the tool did not write computed from `samples` (the
    /// same requests, by the same percentile definition, numpy's linear one) when it gave them.
    pub fn distribution(self, samples: Option<&[f64]>) -> Option<Distribution> {
        let from = samples.and_then(Distribution::from_samples);
        let (mean, p50) = match (self.mean, self.p50, from) {
            (Some(mean), Some(p50), _) => (mean, p50),
            (mean, p50, Some(s)) => (mean.unwrap_or(s.mean), p50.unwrap_or(s.p50)),
            _ => return None,
        };
        let or = |own: Option<f64>, pick: fn(&Distribution) -> Option<f64>| {
            own.or_else(|| from.as_ref().and_then(pick))
        };
        Some(Distribution {
            count: self.count.or_else(|| from.and_then(|s| s.count)),
            mean,
            p50,
            min: or(self.min, |s| s.min),
            max: or(self.max, |s| s.max),
            stddev: or(self.stddev, |s| s.stddev),
            p90: or(self.p90, |s| s.p90),
            p95: or(self.p95, |s| s.p95),
            p99: or(self.p99, |s| s.p99),
            p999: or(self.p999, |s| s.p999),
        })
    }
}

/// A level with nothing measured, for struct update syntax: a reader sets what its file has.
pub(crate) fn empty() -> Level {
    Level::new(
        1,
        0.0,
        RequestCounts::default(),
        LevelMetrics::default(),
        0.0,
    )
}

/// One request as a tool recorded it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// [`RequestColumns::OK`], [`RequestColumns::INCOMPLETE`] or [`RequestColumns::ERRORED`].
    pub status: u8,
    pub ttft_s: Option<f64>,
    pub e2e_s: Option<f64>,
    pub output_tokens: Option<u32>,
    /// Pauses between the stream's content events, seconds; `None` when the tool keeps none.
    pub gaps_s: Option<Vec<f64>>,
}

impl Request {
    pub fn is_ok(&self) -> bool {
        self.status == RequestColumns::OK
    }
}

/// `requests` as the per-request columns goodput is judged from; `None` without requests.
pub(crate) fn columns(requests: &[Request]) -> Option<RequestColumns> {
    if requests.is_empty() {
        return None;
    }
    let mut columns = RequestColumns::measured();
    let mut gaps: Vec<u32> = Vec::new();
    for r in requests {
        gaps.clear();
        gaps.extend(r.gaps_s.iter().flatten().map(|&g| to_ticks(g)));
        columns.push_request(r.status, r.ttft_s, r.e2e_s, r.output_tokens, &mut gaps);
    }
    if requests.iter().all(|r| r.gaps_s.is_none()) {
        // Not recorded is not "no pause": the stall and jitter columns stay empty.
        columns.max_gap.clear();
        columns.stalls.clear();
        columns.jitter.clear();
    }
    Some(columns)
}

/// `f` of each successful request that has it; `None` without requests (a summary alone).
pub(crate) fn successful(requests: &[Request], f: fn(&Request) -> Option<f64>) -> Option<Vec<f64>> {
    (!requests.is_empty()).then(|| {
        requests
            .iter()
            .filter(|r| r.is_ok())
            .filter_map(f)
            .collect()
    })
}

/// Each successful request's time per output token, infermeter's definition:
/// (E2E − TTFT) / (output tokens − 1), for requests of more than one token.
pub(crate) fn tpots(requests: &[Request]) -> Option<Vec<f64>> {
    successful(requests, |r| {
        let (ttft, e2e, out) = (r.ttft_s?, r.e2e_s?, r.output_tokens?);
        (out > 1).then(|| (e2e - ttft) / f64::from(out - 1))
    })
}

/// The per-user decode speed of each successful request, infermeter's definition:
/// (output tokens − 1) / (E2E − TTFT), for requests of more than one token.
pub(crate) fn decode_speeds(requests: &[Request]) -> Vec<f64> {
    requests
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| {
            let (ttft, e2e, out) = (r.ttft_s?, r.e2e_s?, r.output_tokens?);
            (out > 1 && e2e > ttft).then(|| f64::from(out - 1) / (e2e - ttft))
        })
        .collect()
}

/// The most requests in flight at once, from each request's start and end (seconds on one
/// clock); `None` without any.
pub(crate) fn most_in_flight(spans: impl Iterator<Item = (f64, f64)>) -> Option<u32> {
    let (mut starts, mut ends): (Vec<f64>, Vec<f64>) = spans.unzip();
    if starts.is_empty() {
        return None;
    }
    starts.sort_unstable_by(f64::total_cmp);
    ends.sort_unstable_by(f64::total_cmp);
    // Each start, less the requests ended by then (one that ends as another starts frees its
    // slot first).
    let mut ended = 0;
    let mut most = 0;
    for (i, start) in starts.iter().enumerate() {
        while ended < ends.len() && ends[ended] <= *start {
            ended += 1;
        }
        most = most.max(i + 1 - ended.min(i + 1));
    }
    Some(most as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_figures_stay_and_missing_ones_come_from_the_samples() {
        let own = Figures {
            mean: Some(5.0),
            p50: Some(4.0),
            p99: Some(9.0),
            ..Figures::default()
        };
        let samples: Vec<f64> = (1..=10).map(f64::from).collect();
        let d = own.distribution(Some(&samples)).unwrap();
        assert_eq!((d.mean, d.p50, d.p99), (5.0, 4.0, Some(9.0)));
        assert!((d.p90.unwrap() - 9.1).abs() < 1e-12);
        assert_eq!((d.min, d.max, d.count), (Some(1.0), Some(10.0), Some(10)));
        let summary_only = own.distribution(None).unwrap();
        assert_eq!((summary_only.p90, summary_only.count), (None, None));
        assert!(Figures::default().distribution(None).is_none());
    }

    #[test]
    fn most_in_flight_counts_overlaps() {
        let spans = [(0.0, 2.0), (1.0, 3.0), (2.0, 4.0), (2.5, 2.6)];
        assert_eq!(most_in_flight(spans.into_iter()), Some(3));
        assert_eq!(most_in_flight(std::iter::empty()), None);
    }
}
