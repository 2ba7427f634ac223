//! Pauses drawn from a `ThinkTime`: a user's think time between turns, an agent's tool wait
//! and think time. A leaf (no import from the crate), so the suite, the conversations and the
//! agent generator share it.

use std::time::Duration;

use infermeter_report::ThinkTime;
use rand::{Rng, SeedableRng};

/// Whether `think` can be drawn from: a finite, non-negative mean (a positive one and a
/// finite, non-negative sigma for the lognormal).
pub fn think_time_ok(think: &ThinkTime) -> bool {
    match *think {
        ThinkTime::Fixed { seconds } => seconds.is_finite() && seconds >= 0.0,
        ThinkTime::Exponential { mean_s } => mean_s.is_finite() && mean_s >= 0.0,
        ThinkTime::Lognormal { mean_s, sigma } => {
            mean_s.is_finite() && mean_s > 0.0 && sigma.is_finite() && sigma >= 0.0
        }
    }
}

/// Draws pauses of one `ThinkTime`, seeded: a user's think times, an agent's waits.
pub struct Thinker {
    think: ThinkTime,
    rng: rand::rngs::StdRng,
}

impl Thinker {
    pub fn new(think: ThinkTime, seed: u64) -> Thinker {
        Thinker {
            think,
            rng: rand::rngs::StdRng::seed_from_u64(seed),
        }
    }

    /// The next pause.
    pub fn pause(&mut self) -> Duration {
        let u: f64 = self.rng.random();
        // Box-Muller: a standard normal draw for the lognormal.
        let (u1, u2): (f64, f64) = (self.rng.random(), self.rng.random());
        let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        Duration::from_secs_f64(self.think.sample(u, z))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_times_have_their_means() {
        let mean = |think: ThinkTime| {
            let mut t = Thinker::new(think, 7);
            let n = 20_000;
            (0..n).map(|_| t.pause().as_secs_f64()).sum::<f64>() / f64::from(n)
        };
        assert_eq!(mean(ThinkTime::Fixed { seconds: 1.5 }), 1.5);
        let exp = mean(ThinkTime::Exponential { mean_s: 5.0 });
        assert!((exp - 5.0).abs() < 0.15, "{exp}");
        let log = mean(ThinkTime::Lognormal {
            mean_s: 2.0,
            sigma: 0.8,
        });
        assert!((log - 2.0).abs() < 0.08, "{log}");
        // Seeded: the same seed, the same pauses.
        let draws = |seed| {
            let mut t = Thinker::new(ThinkTime::Exponential { mean_s: 1.0 }, seed);
            (0..5).map(|_| t.pause()).collect::<Vec<_>>()
        };
        assert_eq!(draws(3), draws(3));
        assert_ne!(draws(3), draws(4));
    }
}
