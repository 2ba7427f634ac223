//! Rebuilds a sharded run's levels from all its shards' records, on the shared clock.
//!
//! Each shard counts a level's records and window from when it began the level: its scheduled
//! start, or `late_s` after it when it began late; moving them by `late_s` puts every shard on
//! the schedule's clock. How the shards' windows and loads then make one level is the mode's
//! rule ([`Merging`]): the *intersection* of the windows of a steady-state level (peak), where a
//! request counts when it ran inside it (as a single run counts those that started after its
//! first wave and ended before its drain), else their *union*, from the shared start to the
//! last response on any shard.

use infermeter_report::aggregate::{self, Applied, Expected, Trial, Window};
use infermeter_report::{
    CacheUse, ClientHealth, Level, LoadMode, Report, RequestRecord, RunStatus, Series, ShardLevel,
    ShardTrial,
};

use super::Shard;
use crate::http::arrival::MIXED_CLOCKS;
use crate::load::{self, level_label, MergedWindow, Merging};

/// A level's windows on the shards may differ by this much, seconds, at the ends that should
/// agree (both ends of a peak window, the start of the others) before the merge warns.
pub const WINDOW_BOUND_S: f64 = 1.0;

/// A level: (scenario, mode, cache use, level as records name it).
type LevelKey = (String, LoadMode, Option<CacheUse>, u32);

/// The merged report and every shard's records (moved onto the shared clock, `in_window` as the
/// merged windows count them).
pub fn rebuild(shards: &[Shard]) -> (Report, Vec<RequestRecord>) {
    let mut merged = Merge::new(shards);
    merged.clock_warnings();
    for key in merged.level_keys() {
        merged.level(&key);
    }
    merged.finish()
}

struct Merge<'a> {
    shards: &'a [Shard],
    /// Every shard's records on the shared clock, with the merged windows' `in_window`.
    records: Vec<RequestRecord>,
    report: Report,
    warnings: Vec<String>,
}

impl<'a> Merge<'a> {
    fn new(shards: &'a [Shard]) -> Merge<'a> {
        let records = shards
            .iter()
            .flat_map(|shard| {
                let part = &shard.report.sharding.as_ref().expect("checked").shards[0];
                shard.records.iter().map(move |r| {
                    // Warmups sit outside every level (and may carry a level's numbers).
                    let late = part_of(&part.levels, r)
                        .filter(|_| !r.warmup)
                        .and_then(|l| l.trials.get(r.trial as usize))
                        .map_or(0.0, |t| t.late_s);
                    RequestRecord {
                        scheduled_s: r.scheduled_s + late,
                        sent_s: r.sent_s + late,
                        shard: Some(part.index),
                        ..r.clone()
                    }
                })
            })
            .collect();
        let mut report = shards[0].report.clone();
        report.series.clear();
        report.warnings.clear();
        Merge {
            shards,
            records,
            report,
            warnings: Vec::new(),
        }
    }

    /// Every shard's levels, in schedule order (a shard stopped early has fewer).
    fn level_keys(&self) -> Vec<LevelKey> {
        let mut keys: Vec<LevelKey> = Vec::new();
        for (_, part) in self.parts() {
            for l in &part.levels {
                let key = level_key(l);
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        keys
    }

    /// (file, part) of every shard.
    fn parts(&self) -> impl Iterator<Item = (&'a Shard, &'a infermeter_report::ShardPart)> {
        self.shards
            .iter()
            .map(|s| (s, &s.report.sharding.as_ref().expect("checked").shards[0]))
    }

    /// Rebuilds one level from every shard's part of it and adds it to its series.
    fn level(&mut self, key: &LevelKey) {
        let (scenario_id, mode, cache, label_level) = key;
        let parts: Vec<(u32, &ShardLevel)> = self
            .parts()
            .filter_map(|(_, p)| {
                let level = p.levels.iter().find(|l| level_key(l) == *key)?;
                Some((p.index, level))
            })
            .collect();
        let label = level_label(scenario_id, *mode, *label_level, *cache);
        let rules = load::merging(*mode);
        let trial_count = parts.iter().map(|(_, l)| l.trials.len()).max().unwrap_or(0);
        let windows: Vec<Window> = (0..trial_count as u32)
            .map(|trial| self.window(&label, rules.window, &parts, trial))
            .collect();
        if rules.window == MergedWindow::Steady {
            self.count_in_window(key, &windows);
        }
        let by_trial: Vec<Vec<RequestRecord>> = (0..trial_count as u32)
            .map(|t| {
                self.records
                    .iter()
                    .filter(|r| !r.warmup && r.trial == t && record_key(r) == *key)
                    .cloned()
                    .collect()
            })
            .collect();
        let records: Vec<&RequestRecord> = by_trial.iter().flatten().collect();
        let trials: Vec<Trial<'_>> = by_trial
            .iter()
            .zip(&windows)
            .map(|(records, &window)| Trial { records, window })
            .collect();
        let measured = self.shard_levels(key);
        let previous = self.series(key).levels.last().map(|l| l.concurrency);
        let applied = applied(rules, &parts, &measured, previous);
        let slice_s = measured
            .iter()
            .find_map(|l| l.timeline.as_ref().map(|t| t.slice_s))
            .unwrap_or(aggregate::DEFAULT_SLICE_S);
        let mut level = aggregate::assemble(&applied, &trials, slice_s);
        if level.requests.total() == 0 {
            return;
        }
        level.server = aggregate::server(measured.iter().find_map(|l| l.server.clone()), &trials);
        level.power = measured.iter().find_map(|l| l.power.clone());
        level.client = merged_client(&measured);
        self.level_warnings(&label, key, rules, &records, &level, &measured);
        self.series(key).levels.push(level);
    }

    /// The merged window of one trial, and warnings where the shards' windows disagree.
    fn window(
        &mut self,
        label: &str,
        rule: MergedWindow,
        parts: &[(u32, &ShardLevel)],
        trial: u32,
    ) -> Window {
        let steady = rule == MergedWindow::Steady;
        // A shard with no share of a steady-state level has no steady state of its own.
        let windows: Vec<(u32, Window)> = parts
            .iter()
            .filter(|(_, l)| !steady || l.share.unwrap_or(0) > 0)
            .filter_map(|&(index, l)| Some((index, shifted(l.trials.get(trial as usize)?))))
            .collect();
        let starts = windows.iter().map(|(_, w)| w.start_s);
        let ends = windows.iter().map(|(_, w)| w.end_s);
        let spread = |v: Vec<f64>| {
            v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
        };
        let start_spread = spread(starts.clone().collect());
        let end_spread = spread(ends.clone().collect());
        let checked_spread = if steady {
            start_spread.max(end_spread)
        } else {
            start_spread
        };
        if windows.len() > 1 && checked_spread > WINDOW_BOUND_S {
            let shown: Vec<String> = windows
                .iter()
                .map(|(i, w)| format!("shard {i} {:.2}–{:.2} s", w.start_s, w.end_s))
                .collect();
            self.warnings.push(format!(
                "{label} (trial {trial}): the shards' windows differ by {checked_spread:.2} s, more than {WINDOW_BOUND_S} s ({}); their loads overlapped only in part",
                shown.join(", ")
            ));
        }
        let union = Window {
            start_s: starts.clone().fold(f64::MAX, f64::min),
            end_s: ends.clone().fold(0.0, f64::max),
        };
        let intersection = Window {
            start_s: starts.fold(0.0, f64::max),
            end_s: ends.fold(f64::MAX, f64::min),
        };
        if windows.is_empty() {
            Window {
                start_s: 0.0,
                end_s: 0.0,
            }
        } else if !steady {
            union
        } else if intersection.start_s <= intersection.end_s {
            intersection
        } else {
            self.warnings.push(format!(
                "{label} (trial {trial}): the shards were never in their steady state together; its figures span the union of their windows"
            ));
            union
        }
    }

    /// A request of a steady-state level counts when it ran inside the merged window.
    fn count_in_window(&mut self, key: &LevelKey, windows: &[Window]) {
        for r in self
            .records
            .iter_mut()
            .filter(|r| !r.warmup && record_key(r) == *key)
        {
            let Some(w) = windows.get(r.trial as usize) else {
                continue;
            };
            let end = r.sent_s + r.e2e_s.unwrap_or(0.0);
            r.in_window = r.in_window && r.sent_s >= w.start_s && end <= w.end_s;
        }
    }

    /// The level as each shard's own report has it (where the shard had requests in it).
    fn shard_levels(&self, key: &LevelKey) -> Vec<Level> {
        self.shards
            .iter()
            .filter_map(|s| {
                let series = s
                    .report
                    .series
                    .iter()
                    .find(|x| (&x.scenario, x.mode, x.cache) == (&key.0, key.1, key.2))?;
                let at = series_position(s, key)?;
                series.levels.get(at).cloned()
            })
            .collect()
    }

    /// The level's warnings, worded as a single run's: what its requests measured against
    /// what they were asked (a trace level's lengths are left to the shards, which read the
    /// trace), and clocks that differ between shards.
    fn level_warnings(
        &mut self,
        label: &str,
        key: &LevelKey,
        rules: Merging,
        records: &[&RequestRecord],
        level: &Level,
        measured: &[Level],
    ) {
        let report = &self.report;
        let Some(scenario) = report.scenarios.iter().find(|s| s.id == key.0) else {
            return;
        };
        let expected = Expected {
            scenario,
            prompt_caching: report.metadata.test.prompt_caching.unwrap_or(false),
            cache: key.2,
            trace_lengths: rules.replays_trace.then_some(&[]),
        };
        self.warnings
            .extend(aggregate::warnings(label, &expected, records, level));
        let clocks = level.client.as_ref().and_then(|c| c.event_clock.as_deref());
        if clocks == Some(MIXED_CLOCKS) {
            let each: Vec<String> = measured
                .iter()
                .filter_map(|l| l.client.as_ref()?.event_clock.clone())
                .collect();
            self.warnings.push(format!(
                "{label}: the shards' requests were timed by different clocks ({}); some were timed when parsed, not by the kernel's receive timestamp",
                each.join(", ")
            ));
        }
    }

    /// Warnings where the shards' clocks may have disagreed, so that they did not enter the
    /// levels together.
    fn clock_warnings(&mut self) {
        let parts: Vec<_> = self.parts().collect();
        for (shard, part) in &parts {
            let c = &part.clock;
            if c.server_offset_s.is_none() {
                self.warnings.push(format!(
                    "shard {} ({}): no clock estimate (the server sent no Date header), so its clock could not be compared with the others'",
                    part.index,
                    shard.file.display()
                ));
            }
            if let Some(end) = c.realtime_minus_monotonic_end_s {
                let moved = end - c.realtime_minus_monotonic_s;
                if moved.abs() > 0.1 {
                    self.warnings.push(format!(
                        "shard {}: its wall clock moved {moved:+.2} s against its monotonic clock during the run (stepped or slewed); the schedule ran on the mapping taken at the start",
                        part.index
                    ));
                }
            }
        }
        for (i, (_, a)) in parts.iter().enumerate() {
            for (_, b) in &parts[i + 1..] {
                let offsets = |p: &infermeter_report::ShardPart| {
                    Some((p.clock.server_offset_s?, p.clock.server_offset_bound_s?))
                };
                let (Some((oa, ba)), Some((ob, bb))) = (offsets(a), offsets(b)) else {
                    continue;
                };
                let gap = (oa - ob).abs() - (ba + bb);
                if gap > 0.0 {
                    self.warnings.push(format!(
                        "shards {} and {}: their clocks differ by at least {gap:.2} s (server Date offsets {oa:+.2} ± {ba:.2} s and {ob:+.2} ± {bb:.2} s); each began the levels by its own clock, so their loads overlapped only in part: synchronise the hosts' clocks (NTP, chrony) and run again",
                        a.index, b.index
                    ));
                }
            }
        }
    }

    /// The merged report's series of the level `key`, added (with the shards' arrivals) when
    /// new.
    fn series(&mut self, key: &LevelKey) -> &mut Series {
        let (scenario, mode, cache) = (&key.0, key.1, key.2);
        let shards = self.shards;
        self.report.series_mut(scenario, mode, cache, || {
            shards
                .iter()
                .flat_map(|s| &s.report.series)
                .find(|s| (&s.scenario, s.mode, s.cache) == (scenario, mode, cache))
                .and_then(|s| s.arrivals)
        })
    }

    /// The merged report: the first shard's description of the run, the rebuilt series, every
    /// shard's part, and the merged records.
    fn finish(mut self) -> (Report, Vec<RequestRecord>) {
        let parts: Vec<_> = self
            .parts()
            .map(|(shard, part)| infermeter_report::ShardPart {
                file: shard
                    .file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned()),
                ..part.clone()
            })
            .collect();
        let meta = &mut self.report.metadata;
        let all = self.shards.iter().map(|s| &s.report.metadata);
        meta.started_at = all
            .clone()
            .map(|m| m.started_at.clone())
            .min()
            .unwrap_or_default();
        meta.finished_at = all.filter_map(|m| m.finished_at.clone()).max();
        let unfinished: Vec<String> = self
            .shards
            .iter()
            .filter_map(|s| match &s.report.status {
                RunStatus::Partial { reason } => Some(format!("{} ({reason})", s.file.display())),
                RunStatus::Complete => None,
            })
            .collect();
        self.report.status = if unfinished.is_empty() {
            RunStatus::Complete
        } else {
            RunStatus::Partial {
                reason: format!(
                    "not every shard completed: {}; the merge holds what they measured",
                    unfinished.join("; ")
                ),
            }
        };
        if let Some(sharding) = &mut self.report.sharding {
            sharding.shards = parts;
        }
        self.report.warnings = self.warnings;
        (self.report, self.records)
    }
}

fn level_key(l: &ShardLevel) -> LevelKey {
    (l.scenario.clone(), l.mode, l.cache, l.level)
}

fn record_key(r: &RequestRecord) -> LevelKey {
    (r.scenario.clone(), r.mode, r.cache, r.concurrency)
}

/// How the merged level applied its load: its load as the mode's rule adds up the shards'
/// ([`load::MergedLoad`]); its rates and speed as the shards measured them.
fn applied(
    rules: Merging,
    parts: &[(u32, &ShardLevel)],
    measured: &[Level],
    previous: Option<u32>,
) -> Applied {
    let most = |l: &ShardLevel| l.trials.iter().map(|t| t.max_in_flight).max().unwrap_or(0);
    let shares = parts.iter().filter_map(|(_, l)| l.share).sum();
    let in_flight = parts.iter().map(|(_, l)| most(l)).sum();
    Applied {
        concurrency: rules.load.concurrency(shares, in_flight, previous),
        request_rate: parts.iter().find_map(|(_, l)| l.request_rate),
        session_rate: measured
            .iter()
            .find_map(|l| l.sessions.as_ref()?.session_rate),
        trace_speed: measured.iter().find_map(|l| l.trace.map(|t| t.speed)),
        job_rate: measured.iter().find_map(|l| l.agents.as_ref()?.job_rate),
    }
}

/// The shard's part of the level `r` belongs to.
fn part_of<'l>(levels: &'l [ShardLevel], r: &RequestRecord) -> Option<&'l ShardLevel> {
    levels.iter().find(|l| level_key(l) == record_key(r))
}

/// A trial's window on the shared clock.
fn shifted(t: &ShardTrial) -> Window {
    Window {
        start_s: t.window_start_s + t.late_s,
        end_s: t.window_end_s + t.late_s,
    }
}

/// Where the shard's report holds the level `key` in its series: among the levels the shard
/// had requests in (the report keeps no empty level), in schedule order.
fn series_position(shard: &Shard, key: &LevelKey) -> Option<usize> {
    let part = &shard.report.sharding.as_ref()?.shards[0];
    let has_requests = |l: &ShardLevel| {
        shard
            .records
            .iter()
            .any(|r| !r.warmup && record_key(r) == level_key(l))
    };
    let before = part
        .levels
        .iter()
        .take_while(|l| level_key(l) != *key)
        .filter(|l| (&l.scenario, l.mode, l.cache) == (&key.0, key.1, key.2) && has_requests(l))
        .count();
    part.levels
        .iter()
        .any(|l| level_key(l) == *key)
        .then_some(before)
}

/// The client's health over the shards: the worst lag, distorted when any shard was, the
/// event clock they share ("mixed" when they differ) and every shard's retried requests.
fn merged_client(levels: &[Level]) -> Option<ClientHealth> {
    let clients: Vec<&ClientHealth> = levels.iter().filter_map(|l| l.client.as_ref()).collect();
    let first = clients.first()?;
    let clocks: Vec<Option<&str>> = clients.iter().map(|c| c.event_clock.as_deref()).collect();
    Some(ClientHealth {
        scheduling_lag_p99_s: clients
            .iter()
            .map(|c| c.scheduling_lag_p99_s)
            .fold(0.0, f64::max),
        event_loop_delay_p99_s: clients
            .iter()
            .map(|c| c.event_loop_delay_p99_s)
            .fold(0.0, f64::max),
        distorted: clients.iter().any(|c| c.distorted),
        retried: clients.iter().map(|c| c.retried).sum(),
        event_clock: if clocks.iter().all(|c| *c == clocks[0]) {
            first.event_clock.clone()
        } else {
            Some(MIXED_CLOCKS.to_string())
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use infermeter_report::SCHEMA_VERSION;
    use serde_json::json;

    /// A shard's report: levels peak @2 (share 1) and burst @2 (share 1), with the given
    /// windows (start, end) and lateness of peak @2.
    fn shard(index: u32, peak: (f64, f64), late_s: f64, burst_end: f64) -> Report {
        let trial = |(start, end): (f64, f64), late_s: f64| json!([{ "late_s": late_s, "window_start_s": start, "window_end_s": end, "max_in_flight": 1 }]);
        serde_json::from_value(json!({
            "schema_version": SCHEMA_VERSION,
            "metadata": {
                "model": { "id": "m" }, "engine": { "name": "e" },
                "hardware": { "gpu_model": "g", "gpu_count": 1 },
                "started_at": "2026-01-01T00:00:00Z", "collector_version": "0"
            },
            "scenarios": [{ "id": "s", "name": "S", "input_tokens": 10, "output_tokens": 2 }],
            "series": [],
            "sharding": {
                "count": 2, "start_at": "2026-01-01T00:00:00Z", "level_seconds": 5.0,
                "drain_seconds": 2.0,
                "shards": [{
                    "index": index, "clock": { "realtime_minus_monotonic_s": 0.0 },
                    "levels": [
                        { "scenario": "s", "mode": "peak", "level": 2, "share": 1, "trials": trial(peak, late_s) },
                        { "scenario": "s", "mode": "burst", "level": 2, "share": 1, "trials": trial((0.0, burst_end), 0.0) }
                    ]
                }]
            }
        }))
        .unwrap()
    }

    fn record(mode: LoadMode, sent_s: f64, in_window: bool) -> RequestRecord {
        RequestRecord {
            concurrency: 2,
            in_window,
            scheduled_s: sent_s,
            sent_s,
            ttft_s: Some(0.1),
            e2e_s: Some(0.5),
            input_tokens: Some(10),
            output_tokens: Some(2),
            ..RequestRecord::ok("s", mode, 0)
        }
    }

    #[test]
    fn peak_windows_intersect_and_burst_windows_unite_on_the_shared_clock() {
        let shards = [
            Shard {
                file: "a.json".into(),
                report: shard(0, (1.0, 5.0), 0.0, 3.0),
                // Sent before shard 1's steady state began: outside the merged window.
                records: vec![
                    record(LoadMode::Peak, 1.2, true),
                    record(LoadMode::Peak, 2.0, true),
                    record(LoadMode::Burst, 0.0, true),
                ],
            },
            Shard {
                file: "b.json".into(),
                // Began peak @2 0.25 s late: its window is 1.25–5.25 s on the shared clock.
                report: shard(1, (1.0, 5.0), 0.25, 4.0),
                records: vec![
                    // 4.6 s on the shared clock, ends at 5.1: after shard 0 drained.
                    record(LoadMode::Peak, 4.35, true),
                    record(LoadMode::Peak, 2.0, true),
                    record(LoadMode::Burst, 0.0, true),
                ],
            },
        ];
        let (report, records) = rebuild(&shards);
        let peak = &report.series[0].levels[0];
        assert_eq!(
            (report.series[0].mode, peak.concurrency),
            (LoadMode::Peak, 2)
        );
        assert!((peak.duration_s - 3.75).abs() < 1e-9, "{}", peak.duration_s);
        assert_eq!(peak.metrics.ttft_s.unwrap().count, Some(2));
        let in_window: Vec<bool> = records.iter().map(|r| r.in_window).collect();
        assert_eq!(in_window, [false, true, true, false, true, true]);
        assert_eq!(records[3].sent_s, 4.6);
        assert_eq!(
            records.iter().map(|r| r.shard).collect::<Vec<_>>()[3],
            Some(1)
        );
        let burst = &report.series[1].levels[0];
        assert_eq!((burst.duration_s, burst.requests.ok), (4.0, 2));
        assert!(report
            .warnings
            .iter()
            .all(|w| !w.contains("windows differ")));
        assert_eq!(report.sharding.unwrap().shards.len(), 2);
    }
}
