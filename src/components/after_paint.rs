//! Work that waits until the browser has painted: what lies below the first screen is built
//! after that screen is on it, so the report's top and its first chart show without waiting for
//! the other few dozen tables and charts.

use leptos::prelude::*;

/// Runs `f` once the next frame has been painted: `requestAnimationFrame` runs just before the
/// paint, and a task queued from there runs after it. (A frame callback alone would delay the
/// paint by the work it does.) In a background tab this waits until the tab is shown.
pub fn after_next_paint(f: impl FnOnce() + 'static) {
    request_animation_frame(move || set_timeout(f, std::time::Duration::ZERO));
}

/// A flag that turns true after the next paint. Read it to build something only then.
pub fn painted_once() -> ReadSignal<bool> {
    let (painted, set_painted) = signal(false);
    // `try_set`: the owner may be gone by then (another report opened meanwhile).
    after_next_paint(move || {
        set_painted.try_set(true);
    });
    painted
}
