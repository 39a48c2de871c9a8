//! The common time origin of the engine's workers.

use std::time::Instant;

/// The common time origin of all workers: every reported time is relative to it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Epoch {
    pub(crate) mono: Instant,
    /// CLOCK_MONOTONIC at `mono`, ns (`Instant` reads the same clock): what a host probe's
    /// intervals are shifted by to reach the samples' clock.
    pub(crate) mono_ns: u64,
    /// CLOCK_REALTIME at `mono`, ns: kernel software timestamps are on this clock.
    pub(crate) realtime_ns: u64,
}

impl Epoch {
    pub(super) fn now() -> Self {
        Epoch {
            mono: Instant::now(),
            mono_ns: crate::sys::monotonic_ns(),
            realtime_ns: crate::sys::realtime_ns(),
        }
    }

    /// Monotonic ns since the epoch.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.mono.elapsed().as_nanos() as u64
    }
}
