//! The Users section's sentences: each session scenario's (and trace's) sentence from
//! `report::analysis::sessions`, joined.

use super::Findings;

/// TTFT of the last turn with caching allowed against defeated, per session scenario.
pub fn ttft_by_turn(f: &Findings) -> Option<String> {
    joined(
        f.sessions
            .scenarios
            .iter()
            .filter_map(|s| s.turn_sentence()),
    )
}

/// TTFT over all turns at the heaviest load, per cache use.
pub fn ttft_by_users(f: &Findings) -> Option<String> {
    joined(
        f.sessions
            .scenarios
            .iter()
            .filter_map(|s| s.load_sentence()),
    )
}

/// Cache hits by load per scenario, then each trace's measured against implied.
pub fn cache_hits(f: &Findings) -> Option<String> {
    let scenarios = f
        .sessions
        .scenarios
        .iter()
        .filter_map(|s| s.cache_sentence());
    let traces = f.sessions.traces.iter().filter_map(|t| t.cache_sentence());
    joined(scenarios.chain(traces))
}

fn joined(sentences: impl Iterator<Item = String>) -> Option<String> {
    let all: Vec<String> = sentences.collect();
    (!all.is_empty()).then(|| all.join(" "))
}
