//! Deterministic randomness: SplitMix64, so runs with the same `--seed` reproduce exactly.

/// One SplitMix64 output for `x` (a strong 64-bit mixer).
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash a sequence of words into one seed.
pub fn combine(parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(0x1234_5678_9abc_def0, |acc, p| mix(acc ^ p))
}

/// A uniform value in [0, 1) from a 64-bit hash.
pub fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}
