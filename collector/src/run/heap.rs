//! Hands memory the process freed back to the system.
//!
//! A level holds its records until it ends (its percentiles pool every token gap), then frees
//! them all. glibc's allocator keeps freed memory in its arenas for reuse, and at thousands of
//! streams the next level's allocations, spread over the runtime's threads, land beside it
//! rather than in it: resident memory climbed level after level (`infermeter-dev bench-soak`, 2,000
//! streams: the peak of minute 2 to that of minute 10, +14%, still rising). `malloc_trim`
//! returns every free page of every arena after each level, and the peaks stay level (−1.3%
//! and +1.4% in two runs; docs/soak.md).

/// Returns the free pages of the heap to the system (glibc on Linux; elsewhere nothing).
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages; it touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}
