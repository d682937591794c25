//! How many claimed-but-not-started jobs a worker holds.
//!
//! Every claim is a store commit, so a buffer of a few jobs per slot means many small claims
//! when handlers finish in microseconds: the drain is then bound by claim commits, not by the
//! handlers. A large fixed buffer has the opposite cost: with slow jobs it parks leased work on
//! one worker that idle workers elsewhere could have taken. Without a configured prefetch the
//! buffer therefore follows the rate at which this worker finishes jobs: about [`HORIZON`] of
//! work, never below [`PREFETCH_PER_SLOT`] per slot nor above [`ADAPTIVE_CAP_PER_SLOT`] per slot.
//! A configured prefetch is used as it is.

use std::time::{Duration, Instant};

use super::config::{WorkerConfig, MAX_CONCURRENCY, PREFETCH_PER_SLOT};

/// The work a worker holds beyond its running jobs when it sizes its buffer by its finish rate.
pub(crate) const HORIZON: Duration = Duration::from_millis(5);

/// The most an adaptive buffer holds per slot.
pub(crate) const ADAPTIVE_CAP_PER_SLOT: u32 = 64;

/// The shortest interval a finish rate is measured over; shorter ones are folded into the next.
const MIN_SAMPLE: Duration = Duration::from_millis(1);

/// Weight of the newest sample in the smoothed finish rate.
const SMOOTHING: f64 = 0.5;

/// The buffer size in effect, re-estimated as jobs finish.
#[derive(Debug)]
pub(crate) struct Prefetch {
    current: u32,
    adaptive: Option<Adaptive>,
}

#[derive(Debug)]
struct Adaptive {
    floor: u32,
    cap: u32,
    /// Smoothed jobs finished per second.
    rate: f64,
    since: Instant,
    finished: u64,
}

impl Prefetch {
    pub(crate) fn new(cfg: &WorkerConfig, now: Instant) -> Self {
        match cfg.prefetch {
            Some(p) => Prefetch { current: p, adaptive: None },
            None => {
                let floor = cfg.concurrency.saturating_mul(PREFETCH_PER_SLOT).min(MAX_CONCURRENCY);
                let cap = cfg.concurrency.saturating_mul(ADAPTIVE_CAP_PER_SLOT).clamp(floor, MAX_CONCURRENCY);
                let adaptive = Adaptive { floor, cap, rate: 0.0, since: now, finished: 0 };
                Prefetch { current: floor, adaptive: Some(adaptive) }
            }
        }
    }

    /// The number of jobs to hold beyond the running ones.
    pub(crate) fn get(&self) -> u32 {
        self.current
    }

    /// Records `n` finished jobs.
    pub(crate) fn finished(&mut self, n: u64) {
        if let Some(a) = &mut self.adaptive {
            a.finished += n;
        }
    }

    /// Folds the jobs finished since the last sample into the rate and resizes the buffer.
    pub(crate) fn update(&mut self, now: Instant) {
        let Some(a) = &mut self.adaptive else { return };
        let elapsed = now.saturating_duration_since(a.since);
        if elapsed < MIN_SAMPLE {
            return;
        }
        let sample = a.finished as f64 / elapsed.as_secs_f64();
        a.rate = SMOOTHING * sample + (1.0 - SMOOTHING) * a.rate;
        a.since = now;
        a.finished = 0;
        let want = (a.rate * HORIZON.as_secs_f64()).round();
        // Float-to-integer casts saturate, so a rate past `u32::MAX` jobs lands on the cap.
        self.current = (want as u32).clamp(a.floor, a.cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(concurrency: u32, prefetch: Option<u32>) -> WorkerConfig {
        WorkerConfig { concurrency, prefetch, ..Default::default() }
    }

    /// `steps` samples `every` apart, `finished` jobs each; returns the time after the last.
    fn feed(p: &mut Prefetch, mut t: Instant, steps: u32, every: Duration, finished: u64) -> Instant {
        for _ in 0..steps {
            t += every;
            p.finished(finished);
            p.update(t);
        }
        t
    }

    #[test]
    fn a_configured_prefetch_never_moves() {
        let t0 = Instant::now();
        let mut p = Prefetch::new(&cfg(8, Some(3)), t0);
        p.finished(1_000_000);
        p.update(t0 + Duration::from_millis(5));
        assert_eq!(p.get(), 3);
    }

    #[test]
    fn fast_jobs_grow_the_buffer_up_to_the_cap_and_idle_shrinks_it_to_the_floor() {
        let t0 = Instant::now();
        let mut p = Prefetch::new(&cfg(8, None), t0);
        assert_eq!(p.get(), 8 * PREFETCH_PER_SLOT);
        // 50,000 jobs/s: the horizon's worth of jobs once the rate settles.
        let t = feed(&mut p, t0, 20, Duration::from_millis(2), 100);
        let want = (50_000.0 * HORIZON.as_secs_f64()) as u32;
        assert!(p.get().abs_diff(want) <= 2, "buffer {} for 50,000 jobs/s, want {want}", p.get());
        // Far faster than the cap covers.
        let t = feed(&mut p, t, 5, Duration::from_millis(1), 10_000);
        assert_eq!(p.get(), 8 * ADAPTIVE_CAP_PER_SLOT);
        // Nothing finishes: the rate decays and the buffer returns to four per slot.
        feed(&mut p, t, 40, Duration::from_millis(50), 0);
        assert_eq!(p.get(), 8 * PREFETCH_PER_SLOT);
    }

    #[test]
    fn slow_jobs_keep_the_floor() {
        let t0 = Instant::now();
        let mut p = Prefetch::new(&cfg(4, None), t0);
        feed(&mut p, t0, 10, Duration::from_millis(100), 4);
        assert_eq!(p.get(), 4 * PREFETCH_PER_SLOT);
    }

    #[test]
    fn samples_shorter_than_a_millisecond_are_folded_into_the_next() {
        let t0 = Instant::now();
        let mut p = Prefetch::new(&cfg(1, None), t0);
        p.finished(1_000);
        p.update(t0 + Duration::from_micros(100));
        assert_eq!(p.get(), PREFETCH_PER_SLOT);
        p.update(t0 + Duration::from_millis(2));
        assert!(p.get() > PREFETCH_PER_SLOT);
    }

    #[test]
    fn caps_stay_within_the_concurrency_limit() {
        let t0 = Instant::now();
        let mut p = Prefetch::new(&cfg(MAX_CONCURRENCY, None), t0);
        assert_eq!(p.get(), MAX_CONCURRENCY);
        p.finished(u64::from(u32::MAX));
        p.update(t0 + Duration::from_millis(1));
        assert_eq!(p.get(), MAX_CONCURRENCY);
    }
}
