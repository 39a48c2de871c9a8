//! The host's own jitter: the gaps between consecutive clock reads in a tight spin.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::error::{CalibrateError, join};
use super::spread::{Spread, us};
use crate::sys::pin_current_thread;

/// A gap longer than this is time the spinning thread did not run (an interrupt, a
/// hypervisor exit, another task): far above a clock read's cost, and at the scale of
/// the latencies vernier measures.
const GAP_THRESHOLD_NS: u64 = 10_000;

/// A gap longer than this is a stall at the scale of a whole request and its queue: what
/// the agent's probes count as time not ours (`NOT_OURS_NS`).
const LONG_GAP_NS: u64 = 100_000;

/// Clock reads between two checks of the deadline.
const READS_PER_CHECK: u32 = 1_024;

/// The gaps between consecutive clock reads on one core, in µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoreJitter {
    /// The core.
    pub cpu: usize,
    /// The longest gap (exact).
    pub max: f64,
    /// The 99.99th percentile of the gaps (HDR histogram, 3 significant digits).
    pub p9999: f64,
    /// How many gaps exceeded 10 µs.
    pub gaps_over_10us: u64,
    /// Their total, in µs: the time the thread lost to them.
    pub lost_over_10us: f64,
    /// How many gaps exceeded 100 µs.
    #[serde(default)]
    pub gaps_over_100us: u64,
    /// Clock reads (gaps) in the spin.
    pub reads: u64,
    /// How long the spin ran, in seconds.
    pub seconds: f64,
    /// The gaps over 10 µs (µs), for the contributors' table; `None` without any.
    #[serde(skip)]
    pub stalls: Option<Spread>,
}

/// Spins on every core of `cpus` at once (each in a thread pinned to it) for `spin`.
pub(super) fn measure(cpus: &[usize], spin: Duration) -> Result<Vec<CoreJitter>, CalibrateError> {
    let mut unique = cpus.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let handles: Vec<_> = unique
        .into_iter()
        .map(|cpu| std::thread::spawn(move || spin_on(cpu, spin)))
        .collect();
    handles
        .into_iter()
        .map(|handle| join(handle, "jitter"))
        .collect()
}

fn spin_on(cpu: usize, spin: Duration) -> Result<CoreJitter, CalibrateError> {
    pin_current_thread(cpu)?;
    let clock = quanta::Clock::new();
    // 1 ns to 100 s: a gap beyond that is clamped, not lost.
    let mut gaps = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3)
        .map_err(|e| CalibrateError::Options(format!("jitter histogram: {e}")))?;
    let mut stalls = gaps.clone();
    let spin_ns = u64::try_from(spin.as_nanos()).unwrap_or(u64::MAX);
    let (mut over, mut lost, mut reads, mut max) = (0u64, 0u64, 0u64, 0u64);
    let mut long = 0u64;
    let start = clock.raw();
    let mut prev = start;
    loop {
        for _ in 0..READS_PER_CHECK {
            let now = clock.raw();
            let gap = clock.delta_as_nanos(prev, now);
            prev = now;
            gaps.saturating_record(gap.max(1));
            max = max.max(gap);
            if gap > GAP_THRESHOLD_NS {
                over += 1;
                lost += gap;
                long += u64::from(gap > LONG_GAP_NS);
                stalls.saturating_record(gap);
            }
        }
        reads += u64::from(READS_PER_CHECK);
        let elapsed = clock.delta_as_nanos(start, prev);
        if elapsed >= spin_ns {
            return Ok(CoreJitter {
                cpu,
                max: us(max),
                p9999: us(gaps.value_at_quantile(0.9999)),
                gaps_over_10us: over,
                lost_over_10us: us(lost),
                gaps_over_100us: long,
                reads,
                seconds: elapsed as f64 / 1e9,
                // The histogram's values are its buckets' highest (3 digits): never past
                // the exact longest gap.
                stalls: (over > 0).then(|| Spread {
                    min: us(stalls.min()),
                    p50: us(stalls.value_at_quantile(0.5).min(max)),
                    p99: us(stalls.value_at_quantile(0.99).min(max)),
                    max: us(max),
                    count: over,
                }),
            });
        }
    }
}
