//! Live progress on the terminal: one bar per level with running TTFT and decode speed.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use infermeter_report::{Level, LoadMode, Outcome, RequestRecord};

/// Progress display; hidden with `--quiet` or JSON logs.
pub struct Progress {
    visible: bool,
    bar: Mutex<Option<ProgressBar>>,
    live: Mutex<Live>,
}

struct Live {
    started: Instant,
    ok: u64,
    failed: u64,
    ttft_sum: f64,
    output_tokens: u64,
}

impl Live {
    fn new() -> Live {
        Live {
            started: Instant::now(),
            ok: 0,
            failed: 0,
            ttft_sum: 0.0,
            output_tokens: 0,
        }
    }
}

impl Progress {
    pub fn new(visible: bool) -> Progress {
        Progress {
            visible,
            bar: Mutex::new(None),
            live: Mutex::new(Live::new()),
        }
    }

    /// Starts a level's bar; `expected` requests when known (burst), a spinner otherwise.
    pub fn start_level(&self, label: &str, expected: Option<u64>) {
        *self.live.lock().unwrap_or_else(|e| e.into_inner()) = Live::new();
        let bar = match expected {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template("{prefix:>28} [{bar:24}] {pos}/{len} {msg}")
                    .expect("static template")
                    .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{prefix:>28} {spinner} {pos} done {msg}")
                    .expect("static template"),
            ),
        };
        if !self.visible {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_prefix(label.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        if let Some(old) = self
            .bar
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(bar)
        {
            old.finish_and_clear();
        }
    }

    /// Counts a finished request and refreshes the live figures.
    pub fn on_record(&self, r: &RequestRecord) {
        let message = {
            let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            if r.outcome == Outcome::Ok {
                live.ok += 1;
                live.ttft_sum += r.ttft_s.unwrap_or(0.0);
                live.output_tokens += u64::from(r.output_tokens.unwrap_or(0));
            } else {
                live.failed += 1;
            }
            // A rough running view; the level's figures come from `aggregate` at its end.
            let ttft = live.ttft_sum / live.ok.max(1) as f64;
            let tok_s = live.output_tokens as f64 / live.started.elapsed().as_secs_f64().max(1e-3);
            format!(
                "mean TTFT {ttft:.3}s  {tok_s:.0} tok/s finished  failed {}",
                live.failed
            )
        };
        if let Some(bar) = &*self.bar.lock().unwrap_or_else(|e| e.into_inner()) {
            bar.inc(1);
            bar.set_message(message);
        }
    }

    /// Closes the level's bar with its final figures (`mode`: its series').
    pub fn finish_level(&self, label: &str, mode: LoadMode, level: &Level) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
        let line = level_line(label, mode, level);
        if self.visible {
            eprintln!("{line}");
        } else {
            tracing::info!("{line}");
        }
    }
}

/// A finished level in one line: its label, its load as the report words it, its figures. A
/// figure no request gave (a level stopped by Ctrl-C before any request finished in its
/// window) reads "n/a", never "NaN".
fn level_line(label: &str, mode: LoadMode, level: &Level) -> String {
    let mean = |d: &Option<infermeter_report::Distribution>, scale: f64, decimals, unit| {
        d.filter(|d| d.mean.is_finite())
            .map_or("n/a".to_string(), |d| {
                format!("{:.decimals$}{unit}", d.mean * scale)
            })
    };
    format!(
        "{label:>28} ({})  TTFT {}  ITL {}  decode {}  system {:.1} tok/s  ok {}/{}",
        mode.describe_level(level),
        mean(&level.metrics.ttft_s, 1.0, 3, "s"),
        mean(&level.metrics.itl_s, 1000.0, 1, "ms"),
        mean(&level.metrics.decode_tok_s, 1.0, 1, " tok/s"),
        // `+ 0.0`: a negative zero (a report written before it was made positive) would
        // print "-0.0".
        level.system_output_tok_s + 0.0,
        level.requests.ok,
        level.requests.total(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seen on the H100 run: a level interrupted before any request finished in its window
    /// printed "TTFT NaNs  ITL NaNms  decode NaN tok/s".
    #[test]
    fn a_level_without_figures_says_so_instead_of_nan() {
        let level: Level = serde_json::from_value(serde_json::json!({
            "concurrency": 4, "duration_s": 40.0, "system_output_tok_s": 0.6, "metrics": {},
            "requests": {"ok": 4, "incomplete": 0, "errored": 0},
        }))
        .expect("a level");
        let line = level_line("ctx-4k peak @4", LoadMode::Peak, &level);
        assert!(!line.contains("NaN"), "{line}");
        assert!(
            line.contains(
                "(4 concurrent)  TTFT n/a  ITL n/a  decode n/a  system 0.6 tok/s  ok 4/4"
            ),
            "{line}"
        );
    }
}
