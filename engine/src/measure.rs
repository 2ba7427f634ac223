//! A load level run through [`simulate`] and measured as the collector measures it: the same
//! arrivals, the same measurement window, the same definitions of its figures (mean TTFT,
//! pooled ITL, mean per-user decode speed, output tokens per second in the window). So a
//! measured level and the model's level compare like for like.

use infermeter_report::Distribution;

use crate::profile::Profile;
use crate::simulate::{simulate, Arrival, RequestTiming, Workload};

/// How the collector applies a level's load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Exactly `concurrency` in flight, closed loop (peak mode). The first wave, sent together,
    /// is left out; the window holds the first `measured` requests to finish after it.
    Peak { concurrency: u32, measured: u32 },
    /// `requests` sent at once (burst mode), all measured.
    Burst { requests: u32 },
    /// `requests` open-loop arrivals at `rate` per second (rate mode), all measured, latency
    /// from the scheduled start; `poisson` draws exponential gaps (from a fixed seed), else
    /// evenly spaced.
    Rate {
        rate: f64,
        requests: u32,
        poisson: bool,
    },
}

/// A level: its load and its requests' lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelSpec {
    pub load: Load,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// A level's figures, as the report states them (means).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub ttft_s: f64,
    /// Every token gap of every measured request, pooled.
    pub itl_s: f64,
    /// (output tokens − 1) / (E2E − TTFT), averaged over measured requests.
    pub decode_tok_s: f64,
    /// (E2E − TTFT) / (output tokens − 1), averaged over the same requests: the mean TPOT a
    /// measured report states, which is not 1 / the mean decode speed (a mean of inverses).
    pub tpot_s: f64,
    /// Output tokens streamed inside the window per second of it.
    pub system_output_tok_s: f64,
    /// Mean end-to-end latency of the measured requests.
    pub e2e_s: f64,
}

/// The least time between two requests reaching a server's scheduler: requests the collector
/// sends together (a burst, a peak level's first wave, replacements of requests that finished
/// in the same step) reach an engine one at a time, and an idle engine starts its step with
/// the first alone, as the simulator served in real time does and vLLM's front end does. Any
/// gap well below a step gives the same figures; this is about one request's hand-off. An
/// engine that gathers its arrivals ([`Profile::gathers_arrivals`]: llama.cpp) gets them with
/// no gap, so they start together.
pub const HANDOVER_S: f64 = 1e-4;

/// Runs `spec` on the virtual clock and measures it.
pub fn measure(profile: &Profile, spec: &LevelSpec) -> Figures {
    let w = Window::of(profile, spec);
    figures(w.measured(), &w.timings, w.start, w.end)
}

/// Runs `spec` on the virtual clock and measures it, with the distributions of its measured
/// requests' TTFT, pooled token gaps and end-to-end latency, percentiles as the collector takes
/// them ([`Distribution::from_samples`]).
pub fn measure_distributions(profile: &Profile, spec: &LevelSpec) -> (Figures, Distributions) {
    let w = Window::of(profile, spec);
    let (mut ttft, mut itl, mut e2e) = (Vec::new(), Vec::new(), Vec::new());
    for r in w.measured().filter(|r| !r.tokens.is_empty()) {
        ttft.push(r.ttft());
        e2e.push(r.e2e());
        itl.extend(r.tokens.windows(2).map(|p| p[1] - p[0]));
    }
    let d = |v: &[f64]| Distribution::from_samples(v);
    let distributions = Distributions {
        ttft_s: d(&ttft),
        itl_s: d(&itl),
        e2e_s: d(&e2e),
    };
    (
        figures(w.measured(), &w.timings, w.start, w.end),
        distributions,
    )
}

/// The measured requests' distributions of a level the model ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distributions {
    pub ttft_s: Option<Distribution>,
    /// Every token gap of every measured request, pooled.
    pub itl_s: Option<Distribution>,
    pub e2e_s: Option<Distribution>,
}

/// A level run on the virtual clock: every request's timings, which of them the collector
/// measures, and the window its throughput counts.
struct Window {
    timings: Vec<RequestTiming>,
    measured: Vec<usize>,
    start: f64,
    end: f64,
}

impl Window {
    fn of(profile: &Profile, spec: &LevelSpec) -> Window {
        let uniform = |count: u32, arrival| {
            Workload::uniform(
                count as usize,
                spec.input_tokens,
                spec.output_tokens,
                arrival,
            )
            .handed_over_in_turn(if profile.gathers_arrivals {
                0.0
            } else {
                HANDOVER_S
            })
        };
        let everything = |t: Vec<RequestTiming>| {
            let end = t.iter().map(RequestTiming::finished).fold(0.0, f64::max);
            Window {
                measured: (0..t.len()).collect(),
                timings: t,
                start: 0.0,
                end,
            }
        };
        match spec.load {
            Load::Peak {
                concurrency,
                measured,
            } => {
                let n = concurrency.max(1) as usize;
                let m = measured.max(1) as usize;
                // Every request sent before the window closes: the first wave, then one per
                // completion. Later requests cannot change the measured ones.
                let t = simulate(
                    profile,
                    &uniform((2 * n + m) as u32, Arrival::ClosedLoop { concurrency: n }),
                );
                // The window opens when the first request finishes (its replacement is sent)
                // and closes when the m-th request sent after the first wave finishes.
                let start = t
                    .iter()
                    .map(RequestTiming::finished)
                    .fold(f64::MAX, f64::min);
                let mut after_first_wave: Vec<usize> = (n.min(t.len())..t.len()).collect();
                // Stable: requests finishing in the same step keep their send order.
                infermeter_report::order::sort_by(&mut after_first_wave, |a, b| {
                    t[*a].finished().total_cmp(&t[*b].finished())
                });
                after_first_wave.truncate(m);
                let end = after_first_wave.last().map_or(start, |i| t[*i].finished());
                Window {
                    timings: t,
                    measured: after_first_wave,
                    start,
                    end,
                }
            }
            Load::Burst { requests } => {
                everything(simulate(profile, &uniform(requests.max(1), Arrival::Burst)))
            }
            Load::Rate {
                rate,
                requests,
                poisson,
            } => {
                let times = arrival_times(rate, requests.max(1), poisson);
                everything(simulate(
                    profile,
                    &uniform(requests.max(1), Arrival::At(times)),
                ))
            }
        }
    }

    fn measured(&self) -> impl Iterator<Item = &RequestTiming> {
        self.measured.iter().map(|i| &self.timings[*i])
    }
}

/// Arrival offsets of `count` requests at `rate` per second: evenly spaced, or a Poisson
/// process from a fixed seed (the collector's draws are its own; the distribution is the same).
fn arrival_times(rate: f64, count: u32, poisson: bool) -> Vec<f64> {
    let rate = if rate.is_finite() && rate > 0.0 {
        rate
    } else {
        1.0
    };
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut t = 0.0;
    (0..count)
        .map(|_| {
            let at = t;
            t += if poisson {
                // splitmix64 -> uniform in (0, 1].
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                -u.ln() / rate
            } else {
                1.0 / rate
            };
            at
        })
        .collect()
}

/// The figures of the `measured` requests, with throughput over `[start, end]` counting every
/// request's tokens (`all`), as the collector counts a window.
fn figures<'a>(
    measured: impl Iterator<Item = &'a RequestTiming>,
    all: &[RequestTiming],
    start: f64,
    end: f64,
) -> Figures {
    let (mut n, mut ttft, mut e2e, mut decode, mut tpot) = (0usize, 0.0, 0.0, 0.0, 0.0);
    let (mut decode_n, mut gaps_s, mut gaps) = (0usize, 0.0, 0usize);
    for r in measured {
        if r.tokens.is_empty() {
            continue;
        }
        n += 1;
        ttft += r.ttft();
        e2e += r.e2e();
        let k = r.tokens.len();
        if k > 1 {
            let span = r.tokens[k - 1] - r.tokens[0];
            gaps_s += span;
            gaps += k - 1;
            if span > 0.0 {
                decode += (k - 1) as f64 / span;
                tpot += span / (k - 1) as f64;
                decode_n += 1;
            }
        }
    }
    let tokens = all
        .iter()
        .flat_map(|r| r.tokens.iter())
        .filter(|t| **t >= start && **t <= end)
        .count();
    let per = |x: f64, count: usize| {
        if count > 0 {
            x / count as f64
        } else {
            f64::NAN
        }
    };
    Figures {
        ttft_s: per(ttft, n),
        itl_s: per(gaps_s, gaps),
        decode_tok_s: per(decode, decode_n),
        tpot_s: per(tpot, decode_n),
        system_output_tok_s: if end > start {
            tokens as f64 / (end - start)
        } else {
            f64::NAN
        },
        e2e_s: per(e2e, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::BatchEntry;
    use crate::profiles::ProfileSet;

    /// #43 item 7: two requests of 50 and 100 ms per token have a mean TPOT of 75 ms, where
    /// 1 / their mean decode speed (20 and 10 tok/s) is 66.7 ms.
    #[test]
    fn the_mean_tpot_is_each_requests_averaged() {
        let request = |gap: f64| RequestTiming {
            sent: 0.0,
            admitted: 0.0,
            tokens: (0..5).map(|i| 0.1 + gap * f64::from(i)).collect(),
            cached_tokens: 0,
            preemptions: 0,
        };
        let all = [request(0.05), request(0.1)];
        let f = figures(all.iter(), &all, 0.0, 1.0);
        assert!((f.tpot_s - 0.075).abs() < 1e-12, "{f:?}");
        assert!((1.0 / f.decode_tok_s - 1.0 / 15.0).abs() < 1e-12, "{f:?}");
    }

    /// The replay's tails are the collector's: recomputed here from the simulated requests of a
    /// burst (every request measured), sorted, with the linear interpolation between closest
    /// ranks, they are what `measure_distributions` gives (TTFT over requests, ITL over every
    /// token gap pooled).
    #[test]
    fn the_tails_are_the_collectors_percentiles_of_the_replayed_requests() {
        let p = llama();
        let spec = LevelSpec {
            load: Load::Burst { requests: 24 },
            input_tokens: 2048,
            output_tokens: 40,
        };
        let (f, d) = measure_distributions(&p, &spec);
        let t = simulate(
            &p,
            &Workload::uniform(24, 2048, 40, Arrival::Burst).handed_over_in_turn(HANDOVER_S),
        );
        let percentile = |mut v: Vec<f64>, q: f64| {
            v.sort_by(f64::total_cmp);
            let rank = q * (v.len() - 1) as f64;
            let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
        };
        let ttfts: Vec<f64> = t.iter().map(|r| r.tokens[0] - r.sent).collect();
        let gaps: Vec<f64> = (t.iter())
            .flat_map(|r| r.tokens.windows(2).map(|w| w[1] - w[0]))
            .collect();
        assert_eq!(gaps.len(), 24 * 39);
        let (ttft, itl) = (d.ttft_s.unwrap(), d.itl_s.unwrap());
        for (got, want) in [
            (ttft.p99.unwrap(), percentile(ttfts.clone(), 0.99)),
            (ttft.p90.unwrap(), percentile(ttfts.clone(), 0.90)),
            (itl.p99.unwrap(), percentile(gaps.clone(), 0.99)),
            (itl.p90.unwrap(), percentile(gaps, 0.90)),
            (
                f.e2e_s,
                t.iter().map(|r| r.tokens[39] - r.sent).sum::<f64>() / 24.0,
            ),
        ] {
            assert!((got / want - 1.0).abs() < 1e-12, "{got} against {want}");
        }
        // A queue of 24 long prompts: the tail is not the mean.
        assert!(ttft.p99.unwrap() > 1.5 * ttft.mean, "{ttft:?}");
    }

    fn llama() -> Profile {
        ProfileSet::builtin()
            .resolve("llama-3.1-8b", "h100-sxm", Some(1))
            .unwrap()
    }

    /// An engine that gathers its arrivals (llama.cpp) starts requests sent together in one
    /// step, and a closed loop of them stays in lockstep: every token gap is a decode step of
    /// both. Handed over in turn, one request's prefill lands between the other's tokens.
    #[test]
    fn gathered_arrivals_start_together_and_stay_in_lockstep() {
        let handed = llama();
        let gathered = Profile {
            gathers_arrivals: true,
            ..llama()
        };
        let spec = |load| LevelSpec {
            load,
            input_tokens: 4096,
            output_tokens: 32,
        };
        let burst = spec(Load::Burst { requests: 2 });
        let ttft = |p: &Profile| measure_distributions(p, &burst).1.ttft_s.unwrap();
        let (g, h) = (ttft(&gathered), ttft(&handed));
        assert_eq!(
            g.min, g.max,
            "gathered: both first tokens in one step: {g:?}"
        );
        assert!(h.max.unwrap() > 1.5 * h.min.unwrap(), "handed over: {h:?}");

        let peak = spec(Load::Peak {
            concurrency: 2,
            measured: 6,
        });
        let longest_gap = |p: &Profile| {
            measure_distributions(p, &peak)
                .1
                .itl_s
                .unwrap()
                .max
                .unwrap()
        };
        let decode = gathered.step_time(
            &[BatchEntry {
                tokens: 1,
                context: 4096 + 32,
            }; 2],
        );
        assert!(longest_gap(&gathered) <= decode * 1.0001, "{decode}");
        assert!(longest_gap(&handed) > 2.0 * decode, "{decode}");
    }

    #[test]
    fn one_request_alone_is_its_own_figures() {
        let p = llama();
        let spec = |load| LevelSpec {
            load,
            input_tokens: 1000,
            output_tokens: 50,
        };
        let burst = measure(&p, &spec(Load::Burst { requests: 1 }));
        let t = &simulate(&p, &Workload::uniform(1, 1000, 50, Arrival::Burst))[0];
        assert_eq!(burst.ttft_s, t.ttft());
        assert!((burst.decode_tok_s - t.decode_tps()).abs() < 1e-9);
        assert!((burst.itl_s * burst.decode_tok_s - 1.0).abs() < 1e-9);
        // Tokens over the whole request: 50 tokens in its E2E.
        assert!((burst.system_output_tok_s - 50.0 / t.e2e()).abs() < 1e-9);
        // A closed loop of one measures requests after the first the same way.
        let peak = measure(
            &p,
            &spec(Load::Peak {
                concurrency: 1,
                measured: 3,
            }),
        );
        assert!((peak.itl_s / burst.itl_s - 1.0).abs() < 1e-9);
    }

    #[test]
    fn more_load_waits_longer_and_streams_slower() {
        let p = llama();
        let at = |load| {
            measure(
                &p,
                &LevelSpec {
                    load,
                    input_tokens: 4096,
                    output_tokens: 128,
                },
            )
        };
        let one = at(Load::Burst { requests: 1 });
        let many = at(Load::Burst { requests: 64 });
        assert!(many.ttft_s > 5.0 * one.ttft_s, "{many:?} {one:?}");
        assert!(many.itl_s > one.itl_s, "{many:?} {one:?}");
        assert!(
            many.system_output_tok_s > 3.0 * one.system_output_tok_s,
            "{many:?} {one:?}"
        );
        let slow = at(Load::Rate {
            rate: 0.5,
            requests: 6,
            poisson: false,
        });
        let fast = at(Load::Rate {
            rate: 50.0,
            requests: 60,
            poisson: true,
        });
        assert!((slow.ttft_s / one.ttft_s - 1.0).abs() < 0.01, "{slow:?}");
        assert!(fast.ttft_s > slow.ttft_s);
    }
}
