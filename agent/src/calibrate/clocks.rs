//! What one clock read costs.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use super::{CalibrateError, join};
use crate::sys::{monotonic_ns, pin_current_thread, realtime_ns};

/// Reads timed together, so that the cost of the two `Instant` reads around them is
/// spread over many.
const READS_PER_BATCH: u32 = 1_000;

/// Batches per clock; the median batch is reported, which ignores batches an interrupt
/// landed in.
const BATCHES: usize = 201;

/// The median cost of one read of each clock, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClockReadCost {
    /// `quanta::Clock::now()`: the TSC, scaled, where the CPU has an invariant one.
    pub quanta: f64,
    /// `clock_gettime(CLOCK_MONOTONIC)` (through the vDSO): user-space timestamps.
    pub clock_gettime_monotonic: f64,
    /// `clock_gettime(CLOCK_REALTIME)`: the clock of kernel software timestamps.
    pub clock_gettime_realtime: f64,
}

/// Measures each clock on `cpu`.
pub(super) fn measure(cpu: usize) -> Result<ClockReadCost, CalibrateError> {
    let handle = std::thread::spawn(move || {
        pin_current_thread(cpu)?;
        let clock = quanta::Clock::new();
        Ok(ClockReadCost {
            quanta: median_cost(|| {
                black_box(clock.now());
            }),
            clock_gettime_monotonic: median_cost(|| {
                black_box(monotonic_ns());
            }),
            clock_gettime_realtime: median_cost(|| {
                black_box(realtime_ns());
            }),
        })
    });
    join(handle, "clock-cost")
}

/// The median over [`BATCHES`] of the mean cost of `read` in a batch, in ns.
fn median_cost(mut read: impl FnMut()) -> f64 {
    let mut costs = [0.0f64; BATCHES];
    for cost in &mut costs {
        let start = Instant::now();
        for _ in 0..READS_PER_BATCH {
            read();
        }
        *cost = start.elapsed().as_nanos() as f64 / f64::from(READS_PER_BATCH);
    }
    costs.sort_by(f64::total_cmp);
    // To the picosecond: the figure is a median of means, not that precise.
    (costs[BATCHES / 2] * 1_000.0).round() / 1_000.0
}
