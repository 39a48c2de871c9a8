//! The host clocks that timestamps are compared against.

use std::time::{SystemTime, UNIX_EPOCH};

use nix::time::{ClockId, clock_gettime};

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch: the clock the kernel's software
/// timestamps (`SOF_TIMESTAMPING_SOFTWARE`) are taken on, so a departure the caller
/// schedules with this clock can be compared with the kernel's TX timestamp of it.
///
/// It is the wall clock: NTP may slew it (and an administrator may step it), which is
/// why the latency of one request is always the difference of two kernel timestamps,
/// and this clock only places requests in time. A clock before 1970 reads as 0.
pub fn realtime_ns() -> u64 {
    // SystemTime::now() is clock_gettime(CLOCK_REALTIME) through the vDSO.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// `CLOCK_MONOTONIC` in nanoseconds since boot: the clock for user-space timestamps
/// ([`TimestampMode::User`](super::TimestampMode::User)), which never steps. Such values
/// are comparable with each other only, never with kernel or NIC timestamps.
pub fn monotonic_ns() -> u64 {
    // clock_gettime(CLOCK_MONOTONIC) fails only for an unknown clock id or a bad pointer,
    // neither of which can happen here; 0 stands in for the impossible.
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |t| {
        u64::try_from(t.tv_sec()).unwrap_or(0) * 1_000_000_000
            + u64::try_from(t.tv_nsec()).unwrap_or(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance_and_realtime_is_after_2020() {
        let (r0, m0) = (realtime_ns(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (r1, m1) = (realtime_ns(), monotonic_ns());
        assert!(
            r0 > 1_577_836_800_000_000_000,
            "realtime {r0} is before 2020"
        );
        assert!(m1 - m0 >= 2_000_000, "monotonic advanced {} ns", m1 - m0);
        assert!(r1 > r0);
    }
}
