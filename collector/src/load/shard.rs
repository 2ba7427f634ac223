//! A shard's part of a level: [`Part`] names the shard, [`Sharded`] is what a mode makes of a
//! level for it ([`super::Load::shard`]).
//!
//! How each mode shares a level: a closed loop's load (peak, burst) is split as evenly as can
//! be, the remainder on the first shards (7 over 3: 3, 2, 2); the items of an open loop are
//! dealt out in turn by their number: a rate level's arrivals, a users level's users and a
//! session-arrivals level's sessions (so a session's turns stay on one shard), a trace's lines
//! by their session (or by line, where the trace has no sessions). Every shard computes the same
//! plan, so together they send exactly what one process would.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use infermeter_report::aggregate::open_loop_concurrency;

use super::Load;

/// Shard `index` of `count`, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub index: u32,
    pub count: u32,
}

impl Part {
    /// This shard's share of `total` requests: as even as can be, the remainder on the first
    /// shards.
    pub fn share(self, total: u32) -> u32 {
        total / self.count + u32::from(self.index < total % self.count)
    }

    /// Whether item `key` of a level (an arrival, a user, a session) is this shard's: they are
    /// dealt out in turn.
    pub fn owns(self, key: u64) -> bool {
        key % u64::from(self.count) == u64::from(self.index)
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Part {
    type Err = String;

    fn from_str(text: &str) -> Result<Part, String> {
        let usage = "takes INDEX/COUNT with shards numbered from 0, e.g. 0/3, 1/3 and 2/3 for a run of three";
        let (index, count) = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)))
            .ok_or_else(|| format!("\"{text}\": --shard {usage}"))?;
        if count == 0 {
            return Err(format!(
                "\"{text}\": a run has at least one shard; --shard {usage}"
            ));
        }
        if index >= count {
            return Err(format!(
                "\"{text}\": shard {index} does not exist in a run of {count} (shards are numbered from 0 to {}, as Kubernetes' JOB_COMPLETION_INDEX); --shard {usage}",
                count - 1
            ));
        }
        Ok(Part { index, count })
    }
}

/// A shard's part of one level.
#[derive(Debug, Clone)]
pub struct Sharded {
    /// What this shard runs (it sends only what it owns of an open loop: the context's part).
    pub load: Arc<dyn Load>,
    /// Its share of a load the mode sets (requests in flight, queue depth, users); none for an
    /// open loop, whose load is what it saw.
    pub share: Option<u32>,
    /// How long the level loads the server before its requests are given the drain time:
    /// every shard's schedule gives each step this long.
    pub load_time: Duration,
}

impl Sharded {
    /// An open loop's part: the whole level, whose items the shard deals out as it runs, its
    /// step `load_time` long.
    pub fn dealt_out<L: Load + 'static>(load: L, load_time: Duration) -> Sharded {
        Sharded {
            load: Arc::new(load),
            share: None,
            load_time,
        }
    }
}

/// How the shards' parts of a level of a mode merge back into one level (`infermeter merge`):
/// the mode's rule, [`super::Load::merging`], read through [`super::merging`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merging {
    pub window: MergedWindow,
    pub load: MergedLoad,
    /// The level's requests were asked a trace's lines, whose lengths the shards checked (the
    /// merge does not read the trace); else their scenario's.
    pub replays_trace: bool,
}

/// How the shards' windows of a level make the merged one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergedWindow {
    /// The level's figures are its steady state (peak): the merged window is the intersection
    /// of the windows of the shards with a share of the load (the only time the whole load is
    /// applied), both its ends should agree across shards, and a request counts when it ran
    /// inside it.
    Steady,
    /// The level's window is its whole span (as in a single run): the merged one is the union,
    /// from the shared start to the last response on any shard; the starts should agree, and
    /// each shard's count of its requests in the window stands.
    Span,
}

/// How the shards' parts of a level add up to its load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergedLoad {
    /// The mode sets the load (requests in flight, queue depth, users): the shards' shares.
    Shares,
    /// An open loop's load is what it saw: the most each shard had in flight, added up.
    InFlight,
}

impl MergedLoad {
    /// The merged level's load from the sum of the shards' `shares` and of the most each had
    /// `in_flight`, given the series' `previous` level (an open loop's load keeps increasing,
    /// as it is the level's key).
    pub fn concurrency(self, shares: u32, in_flight: u32, previous: Option<u32>) -> u32 {
        match self {
            MergedLoad::Shares => shares,
            MergedLoad::InFlight => open_loop_concurrency(in_flight, previous),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_even_with_the_remainder_first() {
        let parts = |count: u32| (0..count).map(move |index| Part { index, count });
        let shares =
            |total: u32, count: u32| -> Vec<u32> { parts(count).map(|p| p.share(total)).collect() };
        assert_eq!(shares(7, 3), [3, 2, 2]);
        assert_eq!(shares(2, 3), [1, 1, 0]);
        assert_eq!(shares(6, 3), [2, 2, 2]);
        assert_eq!(shares(5, 1), [5]);
        for total in 0..50 {
            for count in 1..9 {
                let s = shares(total, count);
                assert_eq!(s.iter().sum::<u32>(), total);
                assert!(s.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
                // A shard's share is the count of the items it owns.
                for p in parts(count) {
                    let owned = (0..u64::from(total)).filter(|&k| p.owns(k)).count();
                    assert_eq!(owned as u32, p.share(total));
                }
            }
        }
        // Every arrival belongs to exactly one shard.
        for key in 0..100 {
            assert_eq!(parts(3).filter(|p| p.owns(key)).count(), 1);
        }
    }

    #[test]
    fn shard_option_is_checked() {
        assert_eq!("1/3".parse::<Part>(), Ok(Part { index: 1, count: 3 }));
        let err = "3/3".parse::<Part>().unwrap_err();
        assert!(err.contains("numbered from 0 to 2"), "{err}");
        assert!("0/0".parse::<Part>().unwrap_err().contains("at least one"));
        assert!("1-3".parse::<Part>().unwrap_err().contains("INDEX/COUNT"));
    }
}
