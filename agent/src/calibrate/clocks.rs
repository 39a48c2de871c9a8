//! What one clock read costs.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use super::error::{CalibrateError, join};
use super::spread::Spread;
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
    /// The spread of `clock_gettime(CLOCK_MONOTONIC)`'s batch means (what user-space
    /// timestamps cost), for the contributors' table.
    #[serde(skip)]
    pub monotonic_spread: Spread,
}

/// Measures each clock on `cpu`.
pub(super) fn measure(cpu: usize) -> Result<ClockReadCost, CalibrateError> {
    let handle = std::thread::spawn(move || {
        pin_current_thread(cpu)?;
        let clock = quanta::Clock::new();
        let monotonic = batch_costs(|| {
            black_box(monotonic_ns());
        });
        Ok(ClockReadCost {
            quanta: median(&batch_costs(|| {
                black_box(clock.now());
            })),
            clock_gettime_monotonic: median(&monotonic),
            clock_gettime_realtime: median(&batch_costs(|| {
                black_box(realtime_ns());
            })),
            monotonic_spread: Spread::of_sorted(&monotonic),
        })
    });
    join(handle, "clock-cost")
}

/// The mean cost of `read` in each of [`BATCHES`] batches, in ns, ascending.
fn batch_costs(mut read: impl FnMut()) -> Vec<f64> {
    let mut costs = vec![0.0f64; BATCHES];
    for cost in &mut costs {
        let start = Instant::now();
        for _ in 0..READS_PER_BATCH {
            read();
        }
        *cost = start.elapsed().as_nanos() as f64 / f64::from(READS_PER_BATCH);
    }
    costs.sort_by(f64::total_cmp);
    costs
}

/// The median batch, to the picosecond: the figure is a median of means, not that precise.
fn median(sorted: &[f64]) -> f64 {
    (sorted[sorted.len() / 2] * 1_000.0).round() / 1_000.0
}
