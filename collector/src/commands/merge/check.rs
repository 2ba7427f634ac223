//! Whether the given reports are the shards of one run, all of them once each: the same run
//! settings, and every index from 0 to N - 1. Each refusal names the field, the files and both
//! values.

use std::fmt;

use infermeter_report::{CacheUse, LoadMode, Report, Sharding};

use super::Shard;

/// What to do when the shards are not of one run.
const ONE_RUN: &str = "merge the shards of one run only: started with one --start-at, the same --suite, --model, --base-url and shard count";

/// Why the given reports are not the shards of one run.
#[derive(Debug, thiserror::Error)]
pub enum MergeMismatch {
    #[error("{file} is not a shard's report (it has no `sharding`): write shards with `infermeter run --shard I/N --start-at TIME`")]
    NotAShard { file: String },
    #[error(
        "{file} is already a merged report (of {shards} shards): merge the shards' own reports"
    )]
    AlreadyMerged { file: String, shards: usize },
    #[error("{0}")]
    Differ(Box<Difference>),
    #[error("shard {index}/{count} appears twice: {first_file} and {other_file}; give each shard's report once")]
    Duplicate {
        index: u32,
        count: u32,
        first_file: String,
        other_file: String,
    },
    #[error("shard(s) {missing} of {count} missing (given: {given}); give every shard's report, e.g. shard-*.json")]
    Missing {
        missing: String,
        count: u32,
        given: String,
    },
}

/// A run setting two shards disagree on: which, where in the report, and each one's value.
#[derive(Debug)]
pub struct Difference {
    what: &'static str,
    field: &'static str,
    first_file: String,
    first: String,
    other_file: String,
    other: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Difference {
            what,
            field,
            first_file,
            first,
            other_file,
            other,
        } = self;
        write!(
            f,
            "the shards differ in {what} ({field}): {first_file} has {first}, {other_file} has {other}; {ONE_RUN}"
        )
    }
}

/// The run settings every shard must share: what it is called, where it lives in the report,
/// and its value there.
type Setting = (&'static str, &'static str, fn(&Report, &Sharding) -> String);

const SETTINGS: [Setting; 10] = [
    ("shard count", "sharding.count", |_, s| s.count.to_string()),
    ("start time", "sharding.start_at", |_, s| s.start_at.clone()),
    ("level time", "sharding.level_seconds", |_, s| {
        s.level_seconds.to_string()
    }),
    ("drain time", "sharding.drain_seconds", |_, s| {
        s.drain_seconds.to_string()
    }),
    ("suite", "metadata.test.suite", |r, _| {
        quoted(r.metadata.test.suite.as_deref())
    }),
    ("model", "metadata.model.id", |r, _| {
        quoted(Some(&r.metadata.model.id))
    }),
    ("endpoint", "metadata.engine.base_url", |r, _| {
        quoted(r.metadata.engine.base_url.as_deref())
    }),
    ("API", "metadata.engine.api", |r, _| {
        quoted(r.metadata.engine.api.as_deref())
    }),
    (
        "connection reuse",
        "measurement.connection_reuse",
        |r, _| quoted(r.measurement.connection_reuse.as_deref()),
    ),
    ("scenarios", "scenarios", |r, _| {
        serde_json::to_string(&r.scenarios).unwrap_or_default()
    }),
];

fn quoted(value: Option<&str>) -> String {
    value.map_or("none".into(), |v| format!("\"{v}\""))
}

/// The shard's `sharding`, refusing a report that is not one shard's.
fn sharding(shard: &Shard) -> Result<&Sharding, MergeMismatch> {
    let file = shard.name();
    let sharding = shard
        .report
        .sharding
        .as_ref()
        .ok_or_else(|| MergeMismatch::NotAShard { file: file.clone() })?;
    match sharding.shards.len() {
        1 => Ok(sharding),
        shards => Err(MergeMismatch::AlreadyMerged { file, shards }),
    }
}

/// A level as a shard names it: (scenario, mode, cache use, level).
type Named<'a> = (&'a str, LoadMode, Option<CacheUse>, u32);

/// The levels a shard was given, in order.
fn levels(sharding: &Sharding) -> Vec<Named<'_>> {
    sharding.shards[0]
        .levels
        .iter()
        .map(|l| (l.scenario.as_str(), l.mode, l.cache, l.level))
        .collect()
}

/// Checks that `shards` are one run's, each once and none missing, and sorts them by index.
pub fn check(shards: &mut [Shard]) -> Result<(), MergeMismatch> {
    let first = &shards[0];
    let first_sharding = sharding(first)?;
    for other in &shards[1..] {
        let other_sharding = sharding(other)?;
        for (what, field, value) in SETTINGS {
            let (a, b) = (
                value(&first.report, first_sharding),
                value(&other.report, other_sharding),
            );
            if a != b {
                return Err(differ(what, field, first, a, other, b));
            }
        }
        // A shard stopped early measured a beginning of the schedule.
        let (a, b) = (levels(first_sharding), levels(other_sharding));
        let common = a.len().min(b.len());
        if a[..common] != b[..common] {
            let show = |l: &[Named<'_>]| format!("{l:?}");
            return Err(differ(
                "levels",
                "sharding.shards[0].levels",
                first,
                show(&a),
                other,
                show(&b),
            ));
        }
    }
    let index = |s: &Shard| s.report.sharding.as_ref().map_or(0, |s| s.shards[0].index);
    shards.sort_by_key(index);
    let count = first_sharding_count(shards);
    for pair in shards.windows(2) {
        if index(&pair[0]) == index(&pair[1]) {
            return Err(MergeMismatch::Duplicate {
                index: index(&pair[0]),
                count,
                first_file: pair[0].name(),
                other_file: pair[1].name(),
            });
        }
    }
    let given: Vec<u32> = shards.iter().map(index).collect();
    let missing: Vec<String> = (0..count)
        .filter(|i| !given.contains(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        let given: Vec<String> = given.iter().map(u32::to_string).collect();
        return Err(MergeMismatch::Missing {
            missing: missing.join(", "),
            count,
            given: given.join(", "),
        });
    }
    Ok(())
}

fn first_sharding_count(shards: &[Shard]) -> u32 {
    shards[0].report.sharding.as_ref().map_or(1, |s| s.count)
}

fn differ(
    what: &'static str,
    field: &'static str,
    first: &Shard,
    a: String,
    other: &Shard,
    b: String,
) -> MergeMismatch {
    MergeMismatch::Differ(Box::new(Difference {
        what,
        field,
        first_file: first.name(),
        first: a,
        other_file: other.name(),
        other: b,
    }))
}
