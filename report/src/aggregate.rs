//! Reduces the records of one level to a [`Level`]: raw samples in, distributions out. Pure:
//! records and each trial's measurement window in, the level out, so the collector measuring a
//! level and anything rebuilding levels from records files compute them the same way.

use std::collections::BTreeMap;

use crate::schema::{
    to_ticks, EngineTimings, Level, LevelMetrics, Outcome, RequestColumns, RequestCounts,
    RequestRecord, ServerMetrics, TraceLevel, TrialSummary, DEFAULT_STALL_GAP_S,
};
use crate::stats::{confidence_interval_95, percentile_sorted, Distribution};

mod agents;
mod expected;
mod workload;

pub use agents::agents_level;
pub use expected::{warnings, Expected};
pub use workload::{prompt_cache, session_level, timeline, DEFAULT_SLICE_S};

/// The measurement window of one trial of a level, seconds after that trial's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub start_s: f64,
    pub end_s: f64,
}

impl Window {
    pub fn duration_s(&self) -> f64 {
        (self.end_s - self.start_s).max(0.0)
    }
}

/// One trial's records and window.
#[derive(Debug, Clone, Copy)]
pub struct Trial<'a> {
    pub records: &'a [RequestRecord],
    pub window: Window,
}

/// How a level applied its load: what its records cannot say.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Applied {
    /// The level's load: requests in flight (peak), queue depth (burst), users, or the most
    /// requests (sessions) in flight at once in an open-loop mode ([`open_loop_concurrency`]).
    pub concurrency: u32,
    /// Rate mode: requests per second offered.
    pub request_rate: Option<f64>,
    /// Session arrivals: new sessions per second offered.
    pub session_rate: Option<f64>,
    /// Trace replay: its speed.
    pub trace_speed: Option<f64>,
    /// Job arrivals: new agentic jobs per second offered.
    pub job_rate: Option<f64>,
}

impl Applied {
    /// How a measured level applied its load, as its report says.
    pub fn of(level: &Level) -> Applied {
        Applied {
            concurrency: level.concurrency,
            request_rate: level.request_rate,
            session_rate: level.sessions.as_ref().and_then(|s| s.session_rate),
            trace_speed: level.trace.map(|t| t.speed),
            job_rate: level.agents.as_ref().and_then(|a| a.job_rate),
        }
    }
}

/// An open-loop level's `concurrency`: the most requests (or sessions) in flight, at least 1
/// and above the series' `previous` level, so that a series' levels keep increasing as the
/// schema wants.
pub fn open_loop_concurrency(max_in_flight: u32, previous: Option<u32>) -> u32 {
    max_in_flight.max(1).max(previous.map_or(0, |p| p + 1))
}

/// The level from its trials' records, as the run measuring it and `merge` rebuilding it both
/// make it: the statistics (pooled over trials, with confidence intervals when there are
/// several), the per-request columns, its sessions and trace replay, and its timeline in slices
/// of `slice_s` seconds. What side channels saw (server metrics, power, the client's health)
/// is the caller's to add.
pub fn assemble(applied: &Applied, trials: &[Trial<'_>], slice_s: f64) -> Level {
    let mut level = level(applied.concurrency, applied.request_rate, trials);
    if let Some(sessions) = &mut level.sessions {
        sessions.session_rate = applied.session_rate;
    }
    level.trace = applied.trace_speed.map(|speed| TraceLevel { speed });
    if let Some(agents) = &mut level.agents {
        agents.job_rate = applied.job_rate;
    }
    level.timeline = timeline(trials, slice_s);
    level
}

/// Builds the level's statistics from its trials (pooled), with confidence intervals when
/// there are several.
fn level(concurrency: u32, request_rate: Option<f64>, trials: &[Trial<'_>]) -> Level {
    let all: Vec<&RequestRecord> = trials
        .iter()
        .flat_map(|t| t.records.iter())
        .filter(|r| !r.warmup)
        .collect();
    let duration_s: f64 = trials.iter().map(|t| t.window.duration_s()).sum();
    // `+ 0.0`: an empty f64 sum is -0.0, which a level whose requests all failed would
    // print as "-0.0 tok/s".
    let window_tokens: f64 = trials.iter().map(|t| tokens_in_window(t)).sum::<f64>() + 0.0;
    let measured: Vec<&RequestRecord> = all
        .iter()
        .copied()
        .filter(|r| r.in_window && r.outcome == Outcome::Ok)
        .collect();
    let per_s = |x: f64| (duration_s > 0.0).then(|| x / duration_s);
    let input_total: f64 = measured
        .iter()
        .filter_map(|r| r.input_tokens)
        .map(f64::from)
        .sum::<f64>()
        + 0.0;
    Level {
        concurrency,
        request_rate,
        duration_s,
        requests: counts(&all),
        metrics: metrics(&measured),
        system_output_tok_s: per_s(window_tokens).unwrap_or(0.0),
        system_input_tok_s: per_s(input_total),
        requests_per_s: per_s(measured.len() as f64),
        power: None,
        server: None,
        client: None,
        trials: trial_summary(concurrency, request_rate, trials),
        prompt_cache: prompt_cache(measured.iter().copied()),
        sessions: session_level(&all),
        trace: None,
        agents: agents_level(trials),
        timeline: None,
        per_request: Some(request_columns(trials)),
    }
}

/// The measured requests of every trial (in the window, warmups left out, failures in), trial
/// by trial in the order they were sent (across the shards of a merged run), as
/// [`RequestColumns`].
fn request_columns(trials: &[Trial<'_>]) -> RequestColumns {
    let mut measured: Vec<(usize, &RequestRecord)> = trials
        .iter()
        .enumerate()
        .flat_map(|(t, trial)| trial.records.iter().map(move |r| (t, r)))
        .filter(|(_, r)| !r.warmup && r.in_window)
        .collect();
    // By send time, not index: a merged run's shards each number their requests from 0.
    measured.sort_by(|(ta, a), (tb, b)| {
        ta.cmp(tb)
            .then(a.sent_s.total_cmp(&b.sent_s))
            .then(a.index.cmp(&b.index))
    });
    let mut columns = RequestColumns::measured();
    // Input lengths only where requests were asked lengths of their own: a fixed-length
    // scenario's column would repeat one number.
    let varied = measured.iter().any(|(_, r)| r.asked.is_some());
    let mut gaps: Vec<u32> = Vec::new();
    for (_, r) in measured {
        if varied {
            columns.input_tokens.push(r.input_tokens.unwrap_or(0));
        }
        let status = match r.outcome {
            Outcome::Ok => RequestColumns::OK,
            Outcome::Incomplete { .. } => RequestColumns::INCOMPLETE,
            Outcome::Errored { .. } => RequestColumns::ERRORED,
        };
        // In ticks, so a pause of exactly the stall gap is not one by a rounding error.
        gaps.clear();
        gaps.extend(
            r.chunks
                .windows(2)
                .map(|pair| to_ticks(pair[1].t - pair[0].t)),
        );
        columns.push_request(status, r.ttft_s, r.e2e_s, r.output_tokens, &mut gaps);
    }
    columns
}

impl RequestColumns {
    /// No requests yet, with the default stall gap.
    pub(crate) fn measured() -> RequestColumns {
        RequestColumns {
            stall_gap: to_ticks(DEFAULT_STALL_GAP_S),
            ..RequestColumns::default()
        }
    }

    /// Adds one request: its status, times (seconds; a missing one as 0), output tokens and the
    /// pauses between its content events (ticks, in any order; sorted here).
    pub(crate) fn push_request(
        &mut self,
        status: u8,
        ttft_s: Option<f64>,
        e2e_s: Option<f64>,
        output_tokens: Option<u32>,
        gaps: &mut [u32],
    ) {
        self.status.push(status);
        self.ttft.push(ttft_s.map_or(0, to_ticks));
        self.e2e.push(e2e_s.map_or(0, to_ticks));
        self.output_tokens.push(output_tokens.unwrap_or(0));
        gaps.sort_unstable();
        let smoothness = Smoothness::of_sorted(gaps, self.stall_gap);
        self.max_gap.push(smoothness.max_gap);
        self.stalls.push(smoothness.stalls);
        self.jitter.push(smoothness.jitter_hundredths);
    }
}

/// How evenly one request's stream arrived, from its pauses between content events (ticks).
struct Smoothness {
    max_gap: u32,
    /// Pauses longer than the stall gap.
    stalls: u32,
    /// p99 pause over the median pause, in hundredths; 0 with fewer than two pauses (or a median
    /// of zero: events that arrived together).
    jitter_hundredths: u32,
}

impl Smoothness {
    fn of_sorted(gaps: &[u32], stall_gap: u32) -> Smoothness {
        let stalls = gaps.len() - gaps.partition_point(|&g| g <= stall_gap);
        let ticks: Vec<f64> = gaps.iter().map(|&g| f64::from(g)).collect();
        let jitter = match ticks.len() {
            0 | 1 => 0,
            _ => {
                let median = percentile_sorted(&ticks, 50.0);
                if median > 0.0 {
                    (percentile_sorted(&ticks, 99.0) / median * 100.0).round() as u32
                } else {
                    0
                }
            }
        };
        Smoothness {
            max_gap: gaps.last().copied().unwrap_or(0),
            stalls: stalls as u32,
            jitter_hundredths: jitter,
        }
    }
}

/// The server's figures of a level: what its `/metrics` said (`scraped`), with the engine's
/// own speeds from the records where it reports them.
pub fn server(scraped: Option<ServerMetrics>, trials: &[Trial<'_>]) -> Option<ServerMetrics> {
    match (scraped, engine_speeds(trials)) {
        (Some(scraped), Some(speeds)) => Some(ServerMetrics {
            engine_prefill_tok_s: speeds.engine_prefill_tok_s,
            engine_decode_tok_s: speeds.engine_decode_tok_s,
            ..scraped
        }),
        (scraped, speeds) => scraped.or(speeds),
    }
}

/// The engine's own per-request speeds (llama.cpp `timings`) over the measured requests, as
/// server figures; `None` when the engine reports no timings.
pub fn engine_speeds(trials: &[Trial<'_>]) -> Option<ServerMetrics> {
    let timings: Vec<&EngineTimings> = trials
        .iter()
        .flat_map(|t| t.records.iter())
        .filter(|r| !r.warmup && r.in_window && r.outcome == Outcome::Ok)
        .filter_map(|r| r.engine_timings.as_ref())
        .collect();
    let rate = |n: Option<u64>, ms: Option<f64>| match (n, ms) {
        (Some(n), Some(ms)) if n > 0 && ms > 0.0 => Some(n as f64 / ms * 1000.0),
        _ => None,
    };
    let prefill: Vec<f64> = timings
        .iter()
        .filter_map(|t| rate(t.prompt_n, t.prompt_ms))
        .collect();
    // `predicted_ms` runs from the first token (sampled at the end of the prefill) to the
    // last, so it spans `predicted_n - 1` tokens: the client's decode tok/s definition.
    let decode: Vec<f64> = timings
        .iter()
        .filter_map(|t| rate(t.predicted_n.map(|n| n.saturating_sub(1)), t.predicted_ms))
        .collect();
    let metrics = ServerMetrics {
        engine_prefill_tok_s: Distribution::from_samples(&prefill),
        engine_decode_tok_s: Distribution::from_samples(&decode),
        ..ServerMetrics::default()
    };
    (metrics.engine_prefill_tok_s.is_some() || metrics.engine_decode_tok_s.is_some())
        .then_some(metrics)
}

/// Output tokens whose chunks arrived inside the window, from every request (a request that
/// straddles the window edge still produced those tokens inside it).
fn tokens_in_window(trial: &Trial<'_>) -> f64 {
    let w = trial.window;
    trial
        .records
        .iter()
        .filter(|r| !r.warmup)
        .flat_map(|r| r.chunks.iter().map(move |c| (r.sent_s + c.t, c.tokens)))
        .filter(|(t, _)| *t >= w.start_s && *t <= w.end_s)
        .map(|(_, tokens)| f64::from(tokens))
        .sum()
}

fn counts(records: &[&RequestRecord]) -> RequestCounts {
    let mut counts = RequestCounts::default();
    for r in records {
        match &r.outcome {
            Outcome::Ok => counts.ok += 1,
            Outcome::Incomplete { kind, .. } => {
                counts.incomplete += 1;
                *counts.error_kinds.entry(kind.clone()).or_default() += 1;
            }
            Outcome::Errored { kind, .. } => {
                counts.errored += 1;
                *counts.error_kinds.entry(kind.clone()).or_default() += 1;
            }
        }
    }
    counts
}

/// Per-request samples and pooled token gaps, as `Measurement::default()` describes them.
fn metrics(records: &[&RequestRecord]) -> LevelMetrics {
    let mut s = Samples::default();
    for r in records {
        let (Some(ttft), Some(e2e)) = (r.ttft_s, r.e2e_s) else {
            continue;
        };
        s.ttft.push(ttft);
        s.e2e.push(e2e);
        if let Some(input) = r.input_tokens {
            s.input.push(f64::from(input));
            if ttft > 0.0 {
                s.prefill.push(f64::from(input) / ttft);
            }
        }
        if let Some(out) = r.output_tokens {
            s.output.push(f64::from(out));
            let decode_s = e2e - ttft;
            if out > 1 && decode_s > 0.0 {
                s.tpot.push(decode_s / f64::from(out - 1));
                s.decode.push(f64::from(out - 1) / decode_s);
            }
        }
        if let Some(q) = r.queue_wait_s {
            s.queue.push(q);
        }
        // Only requests that streamed reasoning have a first answer apart from their first token.
        if let Some(reasoning) = r.reasoning_tokens {
            s.reasoning.push(f64::from(reasoning));
            s.first_answer.extend(r.first_answer_s);
        }
        for pair in r.chunks.windows(2) {
            let gap = pair[1].t - pair[0].t;
            s.inter_chunk.push(gap);
            // A chunk of k tokens after a gap g stands for k token gaps of g / k.
            let k = pair[1].tokens;
            if k > 0 {
                s.itl
                    .extend(std::iter::repeat_n(gap / f64::from(k), k as usize));
            }
        }
    }
    let d = |v: &Vec<f64>| Distribution::from_samples(v);
    LevelMetrics {
        ttft_s: d(&s.ttft),
        itl_s: d(&s.itl),
        inter_chunk_s: d(&s.inter_chunk),
        tpot_s: d(&s.tpot),
        e2e_s: d(&s.e2e),
        decode_tok_s: d(&s.decode),
        prefill_tok_s: d(&s.prefill),
        queue_wait_s: d(&s.queue),
        input_tokens: d(&s.input),
        output_tokens: d(&s.output),
        first_answer_s: d(&s.first_answer),
        reasoning_tokens: d(&s.reasoning),
    }
}

#[derive(Default)]
struct Samples {
    ttft: Vec<f64>,
    e2e: Vec<f64>,
    tpot: Vec<f64>,
    decode: Vec<f64>,
    prefill: Vec<f64>,
    queue: Vec<f64>,
    itl: Vec<f64>,
    inter_chunk: Vec<f64>,
    input: Vec<f64>,
    output: Vec<f64>,
    first_answer: Vec<f64>,
    reasoning: Vec<f64>,
}

/// Mean and 95% interval over trial means of the headline figures (`None` for one trial).
fn trial_summary(
    concurrency: u32,
    request_rate: Option<f64>,
    trials: &[Trial<'_>],
) -> Option<TrialSummary> {
    if trials.len() < 2 {
        return None;
    }
    let levels: Vec<Level> = trials
        .iter()
        .map(|t| level(concurrency, request_rate, std::slice::from_ref(t)))
        .collect();
    let mean_of =
        |f: fn(&Level) -> Option<f64>| -> Vec<f64> { levels.iter().filter_map(f).collect() };
    let figures: [(&str, Vec<f64>); 5] = [
        ("ttft_s", mean_of(|l| l.metrics.ttft_s.map(|d| d.mean))),
        ("itl_s", mean_of(|l| l.metrics.itl_s.map(|d| d.mean))),
        ("e2e_s", mean_of(|l| l.metrics.e2e_s.map(|d| d.mean))),
        (
            "decode_tok_s",
            mean_of(|l| l.metrics.decode_tok_s.map(|d| d.mean)),
        ),
        (
            "system_output_tok_s",
            mean_of(|l| Some(l.system_output_tok_s)),
        ),
    ];
    let intervals: BTreeMap<String, _> = figures
        .into_iter()
        .filter_map(|(name, values)| Some((name.to_string(), confidence_interval_95(&values)?)))
        .collect();
    Some(TrialSummary {
        trials: trials.len() as u32,
        intervals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ChunkArrival, ErrorKind, LoadMode};

    pub(super) fn ok(index: u64, sent_s: f64, chunk_ts: &[(f64, u32)]) -> RequestRecord {
        let ttft = chunk_ts[0].0;
        let e2e = chunk_ts.last().unwrap().0;
        RequestRecord {
            scheduled_s: sent_s,
            sent_s,
            ttft_s: Some(ttft),
            e2e_s: Some(e2e),
            input_tokens: Some(100),
            output_tokens: Some(chunk_ts.iter().map(|c| c.1).sum()),
            chunks: chunk_ts
                .iter()
                .map(|&(t, tokens)| ChunkArrival { t, tokens })
                .collect(),
            ..RequestRecord::ok("s", LoadMode::Peak, index)
        }
    }

    /// The level of one trial of `records` over the window 0..`end_s`.
    fn one_trial(concurrency: u32, records: &[RequestRecord], end_s: f64) -> Level {
        let window = Window {
            start_s: 0.0,
            end_s,
        };
        level(concurrency, None, &[Trial { records, window }])
    }

    #[test]
    fn per_token_itl_differs_from_inter_chunk() {
        // First token at 0.5 s, then one chunk of 3 tokens 0.3 s later, then 1 token 0.1 s later.
        let r = ok(0, 0.0, &[(0.5, 1), (0.8, 3), (0.9, 1)]);
        let l = one_trial(1, &[r], 1.0);
        let itl = l.metrics.itl_s.unwrap();
        assert_eq!(itl.count, Some(4));
        assert!((itl.mean - 0.4 / 4.0).abs() < 1e-12);
        let chunks = l.metrics.inter_chunk_s.unwrap();
        assert_eq!(chunks.count, Some(2));
        assert!((chunks.mean - 0.2).abs() < 1e-12);
        // 5 tokens, TTFT 0.5, E2E 0.9: TPOT = 0.4 / 4, decode = 4 / 0.4.
        assert!((l.metrics.tpot_s.unwrap().mean - 0.1).abs() < 1e-12);
        assert!((l.metrics.decode_tok_s.unwrap().mean - 10.0).abs() < 1e-9);
        assert!((l.metrics.prefill_tok_s.unwrap().mean - 200.0).abs() < 1e-9);
        assert!((l.system_output_tok_s - 5.0).abs() < 1e-12);
    }

    #[test]
    fn errors_count_but_do_not_enter_statistics() {
        let mut failed = ok(1, 0.0, &[(0.1, 1), (0.2, 1)]);
        failed.outcome = Outcome::Incomplete {
            kind: ErrorKind::Disconnect,
            detail: String::new(),
        };
        failed.ttft_s = Some(99.0);
        let mut outside = ok(2, 0.0, &[(7.0, 1), (8.0, 1)]);
        outside.in_window = false;
        let records = [ok(0, 0.0, &[(1.0, 1), (2.0, 1)]), failed, outside];
        let l = one_trial(2, &records, 2.0);
        assert_eq!((l.requests.ok, l.requests.incomplete), (2, 1));
        assert_eq!(l.requests.error_kinds[&ErrorKind::Disconnect], 1);
        assert_eq!(l.metrics.ttft_s.unwrap().count, Some(1));
        // The columns hold the window's requests, the failed one with its status; the one
        // outside the window is not there.
        let columns = l.per_request.unwrap();
        assert_eq!(
            columns.status,
            [RequestColumns::OK, RequestColumns::INCOMPLETE]
        );
        assert_eq!(columns.ttft, [10_000, 990_000]);
        // Tokens inside [0, 2]: 2 + 2 from the failed stream, none from the late one.
        assert!((l.system_output_tok_s - 2.0).abs() < 1e-12);
        assert!(l.trials.is_none());
    }

    /// Seen when the engine died mid-run: twenty levels of `ok 0/47` each said
    /// "system -0.0 tok/s" (an empty f64 sum is -0.0).
    #[test]
    fn a_level_whose_requests_all_failed_has_a_positive_zero_throughput() {
        let failed: Vec<RequestRecord> = (0..47)
            .map(|i| RequestRecord {
                outcome: Outcome::Errored {
                    kind: ErrorKind::Connect,
                    detail: "connection refused".into(),
                },
                ..RequestRecord::ok("s", LoadMode::Peak, i)
            })
            .collect();
        let l = one_trial(47, &failed, 0.2);
        assert_eq!((l.requests.ok, l.requests.errored), (0, 47));
        assert_eq!(l.system_output_tok_s, 0.0);
        assert!(l.system_output_tok_s.is_sign_positive());
        assert_eq!(format!("{:.1}", l.system_output_tok_s), "0.0");
    }

    /// Pauses of 0.3, 0.1, 0.1, 0.1 s: the 0.3 s one is a stall (over 100 ms; 0.1 s is not),
    /// the worst gap is 0.3 s and the p99 pause (0.294 s) over the median (0.1 s) is 294%.
    #[test]
    fn columns_keep_each_request_in_send_order_with_its_smoothness() {
        let smooth = ok(1, 0.5, &[(0.2, 1), (0.5, 1), (0.6, 1), (0.7, 1), (0.8, 1)]);
        let mut warm = ok(0, 0.0, &[(0.1, 1)]);
        warm.warmup = true;
        let single = ok(0, 0.0, &[(0.05, 1)]);
        let l = one_trial(1, &[smooth, warm, single], 2.0);
        let c = l.per_request.unwrap();
        assert_eq!(c.len(), 2);
        // Index 0 was sent first.
        assert_eq!(c.ttft, [500, 2_000]);
        assert_eq!(c.e2e, [500, 8_000]);
        assert_eq!(c.output_tokens, [1, 5]);
        assert_eq!(c.max_gap, [0, 3_000]);
        assert_eq!(c.stalls, [0, 1]);
        assert_eq!(c.jitter, [0, 294]);
        assert_eq!(c.stall_gap, 1_000);
        assert!(c.column_lengths().iter().all(|&(_, n)| n == 2));
    }

    /// Two shards' records, each shard numbering its own from 0, merged onto one clock (the
    /// second shard's requests all sent after the first's): the columns follow the send times,
    /// not the indices, so the first and last requests are the first and last sent.
    #[test]
    fn columns_of_merged_shards_follow_the_send_times() {
        let sent = |shard, index, sent_s: f64| {
            let ttft_s = 0.1 * (sent_s + 1.0);
            let mut r = ok(index, sent_s, &[(ttft_s, 1), (ttft_s + 0.1, 1)]);
            r.shard = Some(shard);
            r
        };
        let records = [
            sent(0, 0, 0.0),
            sent(0, 1, 1.0),
            sent(1, 0, 2.0),
            sent(1, 1, 3.0),
        ];
        let c = one_trial(2, &records, 4.0).per_request.unwrap();
        assert_eq!(c.ttft, [1_000, 2_000, 3_000, 4_000]);
    }

    #[test]
    fn engine_speeds_come_from_measured_timings() {
        let timed = |prompt_n, prompt_ms, predicted_n, predicted_ms| {
            let mut r = ok(0, 0.0, &[(0.1, 1), (0.2, 1)]);
            r.engine_timings = Some(EngineTimings {
                prompt_n: Some(prompt_n),
                prompt_ms: Some(prompt_ms),
                predicted_n: Some(predicted_n),
                predicted_ms: Some(predicted_ms),
                cache_n: None,
            });
            r
        };
        let mut warm = timed(1, 1.0, 2, 1.0);
        warm.warmup = true;
        let records = [
            timed(100, 200.0, 33, 320.0),
            timed(50, 50.0, 11, 50.0),
            warm,
        ];
        let trial = Trial {
            records: &records,
            window: Window {
                start_s: 0.0,
                end_s: 1.0,
            },
        };
        let server = engine_speeds(&[trial]).unwrap();
        let prefill = server.engine_prefill_tok_s.unwrap();
        assert_eq!(
            (prefill.count, prefill.min, prefill.max),
            (Some(2), Some(500.0), Some(1000.0))
        );
        let decode = server.engine_decode_tok_s.unwrap();
        assert_eq!(
            (decode.count, decode.min, decode.max),
            (Some(2), Some(100.0), Some(200.0))
        );
        let untimed = [ok(0, 0.0, &[(0.1, 1)])];
        let trial = Trial {
            records: &untimed,
            window: trial.window,
        };
        assert!(engine_speeds(&[trial]).is_none());
    }

    /// A reasoning model's first answer token comes after its reasoning; a plain model's
    /// levels get neither figure.
    #[test]
    fn first_answer_and_reasoning_only_where_reasoning_streamed() {
        let window = Window {
            start_s: 0.0,
            end_s: 2.0,
        };
        let plain = [ok(0, 0.0, &[(0.1, 1), (0.2, 1)])];
        let l = level(
            1,
            None,
            &[Trial {
                records: &plain,
                window,
            }],
        );
        assert!(l.metrics.first_answer_s.is_none() && l.metrics.reasoning_tokens.is_none());
        let mut thinking = ok(0, 0.0, &[(0.1, 1), (0.5, 1), (0.6, 1)]);
        thinking.first_answer_s = Some(0.5);
        thinking.reasoning_tokens = Some(1);
        let records = [thinking];
        let l = level(
            1,
            None,
            &[Trial {
                records: &records,
                window,
            }],
        );
        assert_eq!(l.metrics.ttft_s.unwrap().mean, 0.1);
        assert_eq!(l.metrics.first_answer_s.unwrap().mean, 0.5);
        assert_eq!(l.metrics.reasoning_tokens.unwrap().mean, 1.0);
    }

    #[test]
    fn trials_give_confidence_intervals() {
        let a = [ok(0, 0.0, &[(1.0, 1), (2.0, 1)])];
        let b = [ok(0, 0.0, &[(2.0, 1), (3.0, 1)])];
        let w = Window {
            start_s: 0.0,
            end_s: 3.0,
        };
        let l = level(
            1,
            None,
            &[
                Trial {
                    records: &a,
                    window: w,
                },
                Trial {
                    records: &b,
                    window: w,
                },
            ],
        );
        let t = l.trials.unwrap();
        assert_eq!(t.trials, 2);
        assert_eq!(t.intervals["ttft_s"].mean, 1.5);
    }
}
