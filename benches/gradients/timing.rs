//! The timing loop: warm-up, calibrated batches, interleaved samples, median.
//!
//! Every column of a workload is measured in the same rounds: round `s` runs
//! one batch of each column in turn, so a burst of load on a noisy machine
//! lands on all columns alike and their ratios survive it. A batch repeats one
//! call enough times to last [`Config::batch`] (at least once), so the clock's
//! own cost is amortised even for a call of a nanosecond; the time per call is
//! the batch time divided by the repetitions, and a column's figure is the
//! median over [`Config::samples`] rounds.
//!
//! The clock is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) on Linux:
//! on an idle machine it equals wall time, and on a busy one it leaves out
//! the time the thread spent descheduled, which is the largest source of
//! noise on a shared two-core machine. `GRADBENCH_CLOCK=wall` (and any other
//! system) uses `std::time::Instant` instead.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// The clock the batches are timed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The calling thread's CPU time.
    ThreadCpu,
    /// Wall time (`Instant`).
    Wall,
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod cpu {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }

    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }

    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

    /// The calling thread's CPU time, if the system reports it.
    pub fn now() -> Option<std::time::Duration> {
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `struct timespec` (two 64-bit
        // fields on 64-bit Linux) and the clock id is a constant of the ABI.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        (rc == 0).then(|| std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
    }
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
mod cpu {
    pub fn now() -> Option<std::time::Duration> {
        None
    }
}

impl Clock {
    /// Thread CPU time where available, unless `GRADBENCH_CLOCK=wall`.
    pub fn from_env() -> Clock {
        let wall = std::env::var("GRADBENCH_CLOCK").is_ok_and(|v| v == "wall");
        if wall || cpu::now().is_none() {
            Clock::Wall
        } else {
            Clock::ThreadCpu
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Clock::ThreadCpu => "thread CPU time (CLOCK_THREAD_CPUTIME_ID)",
            Clock::Wall => "wall time (std::time::Instant)",
        }
    }
}

/// A running measurement on either clock.
enum Start {
    Cpu(Duration),
    Wall(Instant),
}

impl Start {
    #[inline(always)]
    fn now(clock: Clock) -> Start {
        match (clock, cpu::now()) {
            (Clock::ThreadCpu, Some(t)) => Start::Cpu(t),
            _ => Start::Wall(Instant::now()),
        }
    }

    #[inline(always)]
    fn elapsed(&self) -> Duration {
        match self {
            Start::Cpu(t) => cpu::now().unwrap_or(*t).saturating_sub(*t),
            Start::Wall(t) => t.elapsed(),
        }
    }
}

/// How long to measure.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Warm-up per column before calibration.
    pub warm_up: Duration,
    /// Target duration of one batch.
    pub batch: Duration,
    /// Rounds; the median is taken over them.
    pub samples: usize,
    /// What the batches are timed with.
    pub clock: Clock,
}

impl Config {
    /// The defaults, overridable by `GRADBENCH_SAMPLES` and `GRADBENCH_BATCH_MS`.
    pub fn from_env() -> Config {
        let var = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Config {
            warm_up: Duration::from_millis(20),
            batch: Duration::from_millis(var("GRADBENCH_BATCH_MS", 2)),
            samples: var("GRADBENCH_SAMPLES", 101) as usize,
            clock: Clock::from_env(),
        }
    }
}

/// Seconds per call of one column.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub median: f64,
    /// Interquartile range over the median: the noise of this figure.
    pub spread: f64,
}

/// A benchmarked call. `black_box` on the result keeps it from being
/// optimised away; each closure reads its inputs through `black_box` too.
pub trait Bench {
    fn run_batch(&mut self, reps: u64, clock: Clock) -> Duration;
}

impl<F: FnMut() -> R, R> Bench for F {
    #[inline(never)]
    fn run_batch(&mut self, reps: u64, clock: Clock) -> Duration {
        let start = Start::now(clock);
        for _ in 0..reps {
            black_box(self());
        }
        start.elapsed()
    }
}

/// Runs `f` for the warm-up time, then finds the repetitions per batch.
fn calibrate(f: &mut dyn Bench, cfg: &Config) -> u64 {
    let start = Instant::now();
    let mut reps = 1u64;
    while start.elapsed() < cfg.warm_up {
        f.run_batch(reps, cfg.clock);
        reps = reps.saturating_mul(2);
    }
    let mut reps = 1u64;
    loop {
        let t = f.run_batch(reps, cfg.clock).as_secs_f64();
        let target = cfg.batch.as_secs_f64();
        if t >= target / 4.0 {
            return ((reps as f64 * target / t).round() as u64).max(1);
        }
        reps = reps.saturating_mul(if t < target / 100.0 { 10 } else { 2 });
    }
}

/// Measures the columns in interleaved rounds.
///
/// The batch itself is monomorphised per closure (`run_batch` is generic), so
/// the dynamic dispatch costs one call per batch, not one per repetition.
pub fn measure(columns: &mut [&mut dyn Bench], cfg: &Config) -> Vec<Stats> {
    let reps: Vec<u64> = columns.iter_mut().map(|f| calibrate(*f, cfg)).collect();
    let mut samples = vec![Vec::with_capacity(cfg.samples); columns.len()];
    for _ in 0..cfg.samples {
        for (c, f) in columns.iter_mut().enumerate() {
            let t = f.run_batch(reps[c], cfg.clock).as_secs_f64();
            samples[c].push(t / reps[c] as f64);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            let q = |p: f64| s[((s.len() - 1) as f64 * p).round() as usize];
            let median = q(0.5);
            Stats {
                median,
                spread: (q(0.75) - q(0.25)) / median,
            }
        })
        .collect()
}
