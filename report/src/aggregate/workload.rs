//! The parts of a level that sessions, caching and time add: cached prompt tokens, figures per
//! turn index, and the level in fixed time slices. Pure, like the rest of the aggregation.

use std::collections::BTreeMap;

use super::Trial;
use crate::schema::{
    Outcome, PromptCache, RequestRecord, SessionLevel, Timeline, TimelineSlice, TurnStats,
};
use crate::stats::Distribution;

/// The default slice of a level's timeline, seconds.
pub const DEFAULT_SLICE_S: f64 = 10.0;

/// Cached against prompt tokens over the successful requests that reported both; `None` when
/// none did (the engine says nothing about its cache).
pub fn prompt_cache<'a>(
    records: impl IntoIterator<Item = &'a RequestRecord>,
) -> Option<PromptCache> {
    let mut cache = PromptCache::default();
    for r in records {
        if let (Outcome::Ok, Some(prompt), Some(cached)) =
            (&r.outcome, r.input_tokens, r.cached_tokens)
        {
            cache.requests += 1;
            cache.prompt_tokens += u64::from(prompt);
            cache.cached_tokens += u64::from(cached);
        }
    }
    (cache.requests > 0).then_some(cache)
}

/// Sessions and per-turn figures of a level's records; `None` when no record belongs to a
/// session. A session is keyed by trial and id.
pub fn session_level(records: &[&RequestRecord]) -> Option<SessionLevel> {
    let mut sessions: BTreeMap<(u32, u64), bool> = BTreeMap::new();
    let mut turns: BTreeMap<u32, Vec<&RequestRecord>> = BTreeMap::new();
    for r in records {
        let Some(s) = r.session else { continue };
        let all_ok = sessions.entry((r.trial, s.id)).or_insert(true);
        *all_ok &= r.outcome == Outcome::Ok;
        turns.entry(s.turn).or_default().push(r);
    }
    if sessions.is_empty() {
        return None;
    }
    let turns = turns
        .into_iter()
        .map(|(turn, records)| {
            let ok: Vec<&RequestRecord> = records
                .iter()
                .copied()
                .filter(|r| r.outcome == Outcome::Ok)
                .collect();
            let samples = |f: fn(&RequestRecord) -> Option<f64>| {
                Distribution::from_samples(&ok.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
            };
            TurnStats {
                turn,
                ok: ok.len() as u64,
                failed: (records.len() - ok.len()) as u64,
                ttft_s: samples(|r| r.ttft_s),
                input_tokens: samples(|r| r.input_tokens.map(f64::from)),
                prompt_cache: prompt_cache(ok.iter().copied()),
            }
        })
        .collect();
    Some(SessionLevel {
        started: sessions.len() as u64,
        completed: sessions.values().filter(|ok| **ok).count() as u64,
        session_rate: None,
        turns,
    })
}

/// The level's trials in slices of `slice_s` seconds from each trial's start (trials pooled at
/// the same offset); `None` without requests or for a slice that is not a positive length.
pub fn timeline(trials: &[Trial<'_>], slice_s: f64) -> Option<Timeline> {
    if !(slice_s.is_finite() && slice_s > 0.0) {
        return None;
    }
    let records = || {
        trials
            .iter()
            .flat_map(|t| t.records.iter())
            .filter(|r| !r.warmup)
    };
    let slice = |t: f64| (t.max(0.0) / slice_s).floor() as usize;
    let mut slices: Vec<SliceSamples> = Vec::new();
    for r in records() {
        // Latency counts from the scheduled start where the mode says so (rate, trace).
        let start = r.scheduled_s.min(r.sent_s);
        if let Some(e2e) = r.e2e_s {
            let end = at(&mut slices, slice(start + e2e));
            match r.outcome {
                Outcome::Ok => end.completed += 1,
                _ => end.errors += 1,
            }
        }
        for c in &r.chunks {
            at(&mut slices, slice(r.sent_s + c.t)).output_tokens += u64::from(c.tokens);
        }
        if r.outcome == Outcome::Ok {
            let started = at(&mut slices, slice(start));
            started.ttft.extend(r.ttft_s);
            started.requests.push(r);
        }
    }
    if slices.is_empty() {
        return None;
    }
    let slices = slices
        .into_iter()
        .enumerate()
        .map(|(i, s)| TimelineSlice {
            start_s: i as f64 * slice_s,
            completed: s.completed,
            errors: s.errors,
            output_tokens: s.output_tokens,
            ttft_s: Distribution::from_samples(&s.ttft),
            prompt_cache: prompt_cache(s.requests),
        })
        .collect();
    Some(Timeline { slice_s, slices })
}

/// Slice `i`, added (empty, with any before it) when new.
fn at<'s, 'a>(slices: &'s mut Vec<SliceSamples<'a>>, i: usize) -> &'s mut SliceSamples<'a> {
    if slices.len() <= i {
        slices.resize_with(i + 1, SliceSamples::default);
    }
    &mut slices[i]
}

#[derive(Default)]
struct SliceSamples<'a> {
    completed: u64,
    errors: u64,
    output_tokens: u64,
    ttft: Vec<f64>,
    requests: Vec<&'a RequestRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::{tests::ok, Window};
    use crate::schema::{ErrorKind, SessionTurn};

    fn turn(
        mut r: RequestRecord,
        session: u64,
        turn: u32,
        input: u32,
        cached: u32,
    ) -> RequestRecord {
        r.session = Some(SessionTurn { id: session, turn });
        r.input_tokens = Some(input);
        r.cached_tokens = Some(cached);
        r
    }

    #[test]
    fn turns_and_cache_per_turn_index() {
        let mut failed = turn(ok(3, 1.0, &[(0.2, 1)]), 1, 2, 1500, 0);
        failed.outcome = Outcome::Errored {
            kind: ErrorKind::Http(500),
            detail: String::new(),
        };
        let records = [
            turn(ok(0, 0.0, &[(0.4, 1)]), 0, 1, 1200, 0),
            turn(ok(1, 0.0, &[(0.6, 1)]), 1, 1, 1200, 0),
            turn(ok(2, 1.0, &[(0.1, 1)]), 0, 2, 1600, 1184),
            failed,
        ];
        let refs: Vec<&RequestRecord> = records.iter().collect();
        let level = session_level(&refs).unwrap();
        assert_eq!((level.started, level.completed), (2, 1));
        let [first, second] = &level.turns[..] else {
            panic!("two turns: {:?}", level.turns)
        };
        assert_eq!((first.turn, first.ok, first.failed), (1, 2, 0));
        assert!((first.ttft_s.unwrap().mean - 0.5).abs() < 1e-12);
        assert_eq!(first.prompt_cache.unwrap().hit_ratio(), Some(0.0));
        assert_eq!((second.ok, second.failed), (1, 1));
        let cache = second.prompt_cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (1600, 1184));
        // Over the level: the failed request's tokens do not count.
        let all = prompt_cache(refs.iter().copied()).unwrap();
        assert_eq!(
            (all.requests, all.prompt_tokens, all.cached_tokens),
            (3, 4000, 1184)
        );
        assert!(session_level(&[&ok(0, 0.0, &[(0.1, 1)])]).is_none());
    }

    #[test]
    fn slices_count_where_requests_start_end_and_stream() {
        // Started at 1 s: tokens at 1.5 and 12 s, done at 12 s. Started at 11 s, done at 11.3 s.
        let mut long = ok(0, 1.0, &[(0.5, 2), (11.0, 3)]);
        long.cached_tokens = Some(50);
        let short = ok(1, 11.0, &[(0.2, 1), (0.3, 1)]);
        let records = [long, short];
        let trial = Trial {
            records: &records,
            window: Window {
                start_s: 0.0,
                end_s: 12.0,
            },
        };
        let t = timeline(&[trial], 10.0).unwrap();
        assert_eq!(t.slice_s, 10.0);
        let [a, b] = &t.slices[..] else {
            panic!("two slices: {:?}", t.slices)
        };
        assert_eq!((a.start_s, a.completed, a.output_tokens), (0.0, 0, 2));
        assert_eq!((b.start_s, b.completed, b.output_tokens), (10.0, 2, 5));
        assert_eq!(a.ttft_s.unwrap().mean, 0.5);
        assert_eq!(b.ttft_s.unwrap().mean, 0.2);
        assert_eq!(a.prompt_cache.unwrap().cached_tokens, 50);
        assert!(b.prompt_cache.is_none());
        assert!(timeline(&[trial], 0.0).is_none());
    }
}
