//! Sorting through one compiled sort, for the viewer's weight (issue #44).
//!
//! The standard library's sort is generic over the element type and the comparator: each
//! `sort_by` with a comparator of its own, and each `collect` into a `BTreeMap` or `BTreeSet`,
//! compiles the whole of it (driftsort or ipnsort, about 1 KB of gzip in the viewer's wasm)
//! once more; two dozen of them were 28 KB of the viewer. These functions sort the elements'
//! indices with one comparator type (`&mut dyn FnMut`), so the sort is compiled once, and then
//! move the elements into that order. The result is the standard stable sort's: for a comparator
//! that orders consistently, a stable sort has one result, whatever the algorithm.
//!
//! Sorting plain `f64` samples (`sort_unstable_by(f64::total_cmp)`, one instantiation shared
//! by every caller) stays as it is: it runs on every sample of a run.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The indices `0..len` in the stable order `compare` gives them: the one compiled sort.
fn stable_order(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// `items.sort_by(compare)`, with the same result.
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let mut order = stable_order(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    // Position k takes the element at order[k]: each cycle of the permutation is walked once,
    // with swaps, and its positions marked done (order[k] = k) on the way.
    for start in 0..order.len() {
        let mut k = start;
        loop {
            let from = order[k];
            order[k] = k;
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

/// `items.sort_by_key(key)`, with the same result.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// `items.sort()` (or `sort_unstable()`: for a total order whose equal elements are equal, the
/// two agree), with the same result.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// `pairs.collect::<BTreeMap<_, _>>()`, with the same result (a repeated key keeps its last
/// value), inserted one by one instead of sorted first.
pub fn btree_map<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (key, value) in pairs {
        map.insert(key, value);
    }
    map
}

/// `items.collect::<BTreeSet<_>>()`, with the same result, inserted one by one.
pub fn btree_set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for item in items {
        set.insert(item);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs with many repeated keys, so stability shows: the standard sort is the reference.
    fn pairs(n: usize) -> Vec<(u32, usize)> {
        (0..n).map(|i| (((i * 7919) % 13) as u32, i)).collect()
    }

    #[test]
    // The reference is the standard `sort_by` itself, with the same comparator.
    #[allow(clippy::unnecessary_sort_by)]
    fn sorts_as_the_standard_stable_sort_does() {
        for n in [0, 1, 2, 3, 19, 20, 21, 64, 257, 1000] {
            let mut ours = pairs(n);
            let mut std = ours.clone();
            sort_by_key(&mut ours, |p| p.0);
            std.sort_by_key(|p| p.0);
            assert_eq!(ours, std, "{n} elements");
            sort_by(&mut ours, |a, b| b.1.cmp(&a.1));
            std.sort_by(|a, b| b.1.cmp(&a.1));
            assert_eq!(ours, std, "{n} elements, reversed");
        }
        let mut words = vec!["b", "a", "c", "a"];
        sort(&mut words);
        assert_eq!(words, ["a", "a", "b", "c"]);
    }

    #[test]
    fn collects_as_the_standard_collections_do() {
        let items = pairs(50);
        assert_eq!(
            btree_map(items.clone()),
            items.iter().copied().collect::<BTreeMap<_, _>>()
        );
        assert_eq!(
            btree_set(items.iter().map(|p| p.0)),
            items.iter().map(|p| p.0).collect()
        );
    }
}
