//! The host clocks that timestamps are compared against, and the map that puts a NIC's
//! PTP hardware clock on one of them.

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::time::{ClockId, ClockNanosleepFlags, clock_gettime, clock_nanosleep};

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

/// Sleeps until `CLOCK_MONOTONIC` reads `deadline_ns` (an absolute deadline: a signal
/// or a late wake-up does not make the next one drift). One system call.
pub fn sleep_until(deadline_ns: u64) {
    let at = TimeSpec::from_duration(Duration::from_nanos(deadline_ns));
    loop {
        match clock_nanosleep(
            ClockId::CLOCK_MONOTONIC,
            ClockNanosleepFlags::TIMER_ABSTIME,
            &at,
        ) {
            // A signal: the deadline is absolute, so sleeping again loses nothing.
            Err(Errno::EINTR) => continue,
            Ok(_) => return,
            // Not expected on Linux; a relative sleep measures the same lateness.
            Err(_) => {
                std::thread::sleep(Duration::from_nanos(
                    deadline_ns.saturating_sub(monotonic_ns()),
                ));
                return;
            }
        }
    }
}

/// How often a worker re-reads its NIC's PTP hardware clock against the host's clock:
/// phc2sys's default rate (`-R 1`). Between readings the map extrapolates at the measured
/// frequency; an oscillator's frequency wanders by well under a ppm in a second, so a
/// second of extrapolation costs well under a microsecond.
pub const PHC_REFRESH: Duration = Duration::from_secs(1);

/// Readings per refresh, of which the one with the narrowest window is kept: phc2sys's
/// default (`-N 5`). A PHC read is a system call that a preemption or an interrupt can
/// stretch; of five, one is nearly always undisturbed.
pub const PHC_READINGS: usize = 5;

/// A disagreement between the map and a reading beyond which the map steps to the reading
/// rather than slewing towards it: the NIC clock was stepped (ptp4l steps it on its
/// first synchronisation, by up to seconds). Slewing at [`MAX_SLEW`] corrects 500 µs per
/// second; an error of more than twice that is not drift.
const STEP_THRESHOLD_NS: i128 = 1_000_000;

/// The most the map's rate may differ from the measured frequency while it corrects an
/// offset, as a fraction: 500 ppm, the frequency range most PHCs can be adjusted over
/// (ptp4l's and phc2sys's servos are clamped to the clock's `max_adj`, commonly this or
/// more). It keeps the correction gradual: the map never steps, so departures keep
/// their order.
const MAX_SLEW: f64 = 500e-6;

/// The frequency error (NIC against host) believed possible: crystal oscillators are
/// specified within ±100 ppm; a reading that implies more than ten times that is bad,
/// and the estimate is clamped.
const MAX_FREQUENCY_ERROR: f64 = 1e-3;

/// How many readings back the frequency is measured from: over 8 s, a reading's window
/// of a microsecond or two is a fraction of a ppm of error, while a change of the
/// oscillator's frequency (with its temperature) is followed within seconds.
const FREQUENCY_BASELINE: usize = 8;

/// One reading of a NIC clock and a host clock at (nearly) the same instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    /// The NIC clock's time, ns.
    pub nic_ns: u64,
    /// The host clock's time when the NIC clock read `nic_ns`: the midpoint of the two
    /// host reads around the NIC read.
    pub host_ns: u64,
    /// The span of the two host reads: the NIC was read within half of it of `host_ns`.
    pub window_ns: u64,
}

/// A NIC clock and the host clock it is to be mapped onto, read one at a time: a real
/// PTP hardware clock ([`Phc::against`](super::Phc::against)) or, in tests, a
/// simulated one that runs at an offset and a drift.
pub trait ClockPair {
    /// The NIC clock's time, ns.
    fn nic_ns(&mut self) -> io::Result<u64>;
    /// The host clock's time, ns.
    fn host_ns(&mut self) -> u64;
}

/// Reads `clocks` `tries` times (at least once) as phc2sys's `read_phc` does (host, NIC,
/// host; the NIC's time is put at the midpoint of the two host reads) and keeps the
/// reading with the narrowest window, the one least disturbed by a preemption or an
/// interrupt.
pub fn read_clocks(clocks: &mut impl ClockPair, tries: usize) -> io::Result<ClockReading> {
    let mut best: Option<ClockReading> = None;
    for _ in 0..tries.max(1) {
        let before = clocks.host_ns();
        let nic_ns = clocks.nic_ns()?;
        let after = clocks.host_ns().max(before);
        let window_ns = after - before;
        let reading = ClockReading {
            nic_ns,
            host_ns: before + window_ns / 2,
            window_ns,
        };
        if best.is_none_or(|b| reading.window_ns < b.window_ns) {
            best = Some(reading);
        }
    }
    // `tries.max(1)` readings were taken, so `best` is set; the fallback is unreachable.
    best.ok_or_else(|| io::Error::other("no clock reading taken"))
}

/// A NIC clock's time put on a host clock, as phc2sys puts it on the system clock but
/// without adjusting either clock: the host time of a NIC time is
/// `host + (nic - anchor) × rate` on the line from the latest reading.
///
/// The map is continuous and increasing: at each reading a new line starts where the
/// previous one was (not at the reading), with a rate that makes up the difference to
/// the reading by the next refresh (at most [`MAX_SLEW`] off the measured frequency).
/// Two NIC stamps therefore map in their order, whichever side of a refresh they are
/// mapped on; only a disagreement beyond [`STEP_THRESHOLD_NS`] (the NIC clock was
/// stepped) makes the map jump, which [`steps`](ClockMap::steps) counts.
///
/// Accuracy: within the half-window of the readings plus what the frequency error
/// accumulates until the next refresh (1 µs in the tests' simulation of system-call reads
/// of 0.3-1.5 µs), once two readings have measured the frequency
/// (until then the NIC is taken to run at the host's rate: off by its drift, up to
/// 100 µs a second for a ±100 ppm crystal, slewed away over the following second).
/// Stamps taken before the previous refresh (a second old) are mapped on the previous
/// line extended, which may break their order against newer ones; TX stamps come within
/// milliseconds.
#[derive(Debug, Clone)]
pub struct ClockMap {
    current: Segment,
    previous: Segment,
    /// Host ns per NIC ns, measured over up to [`FREQUENCY_BASELINE`] readings.
    frequency: f64,
    /// The latest readings, oldest first once full, for the frequency.
    readings: [Option<ClockReading>; FREQUENCY_BASELINE],
    next: usize,
    steps: u64,
}

/// One line of the map: NIC time `nic` is host time `host`, and the host clock advances
/// `rate` ns per NIC ns from there.
#[derive(Debug, Clone, Copy)]
struct Segment {
    nic: u64,
    host: u64,
    rate: f64,
}

impl Segment {
    fn at(reading: &ClockReading, rate: f64) -> Segment {
        Segment {
            nic: reading.nic_ns,
            host: reading.host_ns,
            rate,
        }
    }

    fn map(&self, nic_ns: u64) -> i128 {
        let since = (i128::from(nic_ns) - i128::from(self.nic)) as f64;
        i128::from(self.host) + (since * self.rate).round() as i128
    }
}

impl ClockMap {
    /// A map from one reading: the NIC clock at that reading's offset, taken to run at
    /// the host's rate until [`update`](ClockMap::update) measures it.
    pub fn new(first: ClockReading) -> ClockMap {
        let line = Segment::at(&first, 1.0);
        let mut readings = [None; FREQUENCY_BASELINE];
        readings[0] = Some(first);
        ClockMap {
            current: line,
            previous: line,
            frequency: 1.0,
            readings,
            next: 1,
            steps: 0,
        }
    }

    /// Takes a new reading in: measures the frequency against the oldest reading kept,
    /// and starts a new line where the map is now, slewing towards the reading over the
    /// next [`PHC_REFRESH`] (or steps to it, see the type's docs).
    pub fn update(&mut self, reading: ClockReading) {
        let predicted = self.current.map(reading.nic_ns);
        let error = i128::from(reading.host_ns) - predicted;
        if reading.nic_ns <= self.current.nic || error.abs() > STEP_THRESHOLD_NS {
            // The NIC clock went back or jumped: earlier readings measure nothing now.
            self.steps += 1;
            self.readings = [None; FREQUENCY_BASELINE];
            self.readings[0] = Some(reading);
            self.next = 1;
            self.current = Segment::at(&reading, self.frequency);
            self.previous = self.current;
            return;
        }
        let oldest = self.readings[self.next % FREQUENCY_BASELINE]
            .or(self.readings[0])
            .filter(|o| reading.nic_ns > o.nic_ns);
        if let Some(oldest) = oldest {
            let host = (i128::from(reading.host_ns) - i128::from(oldest.host_ns)) as f64;
            let nic = (reading.nic_ns - oldest.nic_ns) as f64;
            self.frequency =
                (host / nic).clamp(1.0 - MAX_FREQUENCY_ERROR, 1.0 + MAX_FREQUENCY_ERROR);
        }
        self.readings[self.next % FREQUENCY_BASELINE] = Some(reading);
        self.next += 1;
        let correction = (error as f64 / PHC_REFRESH.as_nanos() as f64).clamp(-MAX_SLEW, MAX_SLEW);
        self.previous = self.current;
        self.current = Segment {
            nic: reading.nic_ns,
            host: u64::try_from(predicted.max(0)).unwrap_or(u64::MAX),
            rate: self.frequency * (1.0 + correction),
        };
    }

    /// The host time of NIC time `nic_ns` (0 for a time before the host clock's origin).
    pub fn to_host(&self, nic_ns: u64) -> u64 {
        let line = if nic_ns >= self.current.nic {
            &self.current
        } else {
            &self.previous
        };
        u64::try_from(line.map(nic_ns).max(0)).unwrap_or(u64::MAX)
    }

    /// A NIC clock interval (a latency between two NIC stamps) in host ns: scaled by the
    /// measured frequency, not by the slewing rate, so that a correction in progress does
    /// not bias latencies.
    pub fn span_to_host(&self, nic_span_ns: u64) -> u64 {
        (nic_span_ns as f64 * self.frequency).round() as u64
    }

    /// How fast the NIC clock runs against the host's, parts per billion (positive: the
    /// NIC's clock is fast).
    pub fn drift_ppb(&self) -> f64 {
        (1.0 / self.frequency - 1.0) * 1e9
    }

    /// How many times the map jumped to a reading rather than slewing to it.
    pub fn steps(&self) -> u64 {
        self.steps
    }
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

    /// A host clock whose reads take 40-200 ns, and a NIC clock at `offset` and `drift`
    /// whose reads are system calls of 0.3-1.5 µs, one in ten stretched by 20 µs (a
    /// preemption), the NIC sampled somewhere inside its read. `now` is the true host
    /// time, ns since the engine's epoch.
    struct SimClocks {
        now: u64,
        offset: u64,
        drift: f64,
        step: u64,
        rng: u64,
    }

    impl SimClocks {
        fn new(offset: u64, drift: f64) -> SimClocks {
            SimClocks {
                now: 1_000_000,
                offset,
                drift,
                step: 0,
                rng: 0x9e37_79b9_7f4a_7c15,
            }
        }

        /// What the NIC clock reads at true host time `host`.
        fn nic_at(&self, host: u64) -> u64 {
            self.offset + self.step + (host as f64 * (1.0 + self.drift)).round() as u64
        }

        fn jitter(&mut self, lo: u64, hi: u64) -> u64 {
            // xorshift64: reproducible without a dependency.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            lo + self.rng % (hi - lo)
        }
    }

    impl ClockPair for SimClocks {
        fn nic_ns(&mut self) -> io::Result<u64> {
            self.now += self.jitter(150, 750);
            if self.jitter(0, 10) == 0 {
                self.now += 20_000;
            }
            let nic = self.nic_at(self.now);
            self.now += self.jitter(150, 750);
            Ok(nic)
        }

        fn host_ns(&mut self) -> u64 {
            self.now += self.jitter(40, 200);
            self.now
        }
    }

    /// The bound the simulated NIC's stamps must land within of the true host time, from
    /// the second refresh on (before it the NIC's drift is not yet measured): a reading
    /// is off by at most half the difference of its two halves' durations (under 400 ns
    /// here), and the frequency, measured over seconds, adds a few ns a second. 305 ns
    /// was the worst seen.
    const BOUND_NS: u64 = 1_000;
    const REFRESH_NS: u64 = PHC_REFRESH.as_nanos() as u64;
    /// A NIC clock on TAI since 1970, far from the engine's clock, as PHCs synchronised
    /// by ptp4l are.
    const TAI_OFFSET: u64 = 1_760_000_000_000_000_000;

    /// Departures every ~1 ms for `seconds`, with the map refreshed every
    /// [`PHC_REFRESH`]; the last 50 stamps of each interval are mapped after the
    /// refresh, as late TX stamps are. Returns (true host time, mapped time) in departure
    /// order, and the map.
    fn simulate(sim: &mut SimClocks, seconds: u64) -> (Vec<(u64, u64)>, ClockMap) {
        let mut map = ClockMap::new(read_clocks(sim, PHC_READINGS).unwrap());
        let mut departures = Vec::new();
        for _ in 0..seconds {
            let end = sim.now + REFRESH_NS;
            let mut times = Vec::new();
            let mut t = sim.now;
            loop {
                t += sim.jitter(900_000, 1_100_000);
                if t >= end {
                    break;
                }
                times.push(t);
            }
            let late = times.len().saturating_sub(50);
            for &t in &times[..late] {
                departures.push((t, map.to_host(sim.nic_at(t))));
            }
            sim.now = end;
            map.update(read_clocks(sim, PHC_READINGS).unwrap());
            for &t in &times[late..] {
                departures.push((t, map.to_host(sim.nic_at(t))));
            }
        }
        (departures, map)
    }

    #[test]
    fn simulated_nic_departures_keep_their_order_and_land_within_the_bound() {
        for drift in [80e-6, -45e-6, 0.0] {
            let mut sim = SimClocks::new(TAI_OFFSET, drift);
            let (departures, map) = simulate(&mut sim, 20);
            for pair in departures.windows(2) {
                assert!(
                    pair[0].1 <= pair[1].1,
                    "drift {drift}: {pair:?} out of order"
                );
            }
            let settled = 1_000_000 + 2 * REFRESH_NS;
            let worst = departures
                .iter()
                .filter(|&&(t, _)| t >= settled)
                .map(|&(t, mapped)| t.abs_diff(mapped))
                .max()
                .unwrap();
            assert!(worst <= BOUND_NS, "drift {drift}: {worst} ns off");
            assert!(
                (map.drift_ppb() - drift * 1e9).abs() < 200.0,
                "drift {drift}: measured {} ppb",
                map.drift_ppb()
            );
            assert_eq!(map.steps(), 0);
        }
    }

    #[test]
    fn round_cutoffs_on_mapped_departures_fall_where_the_host_clock_puts_them() {
        let mut sim = SimClocks::new(TAI_OFFSET, 95e-6);
        let (departures, _) = simulate(&mut sim, 12);
        // Cutoffs (ns since the engine's epoch) mid-interval and right at refreshes.
        let cutoffs =
            (3..11).flat_map(|s| [s * REFRESH_NS + 1_000_000, s * REFRESH_NS + 437_000_123]);
        for cutoff in cutoffs {
            let mut checked = 0;
            for &(t, mapped) in &departures {
                if t.abs_diff(cutoff) > BOUND_NS {
                    assert_eq!(
                        mapped >= cutoff,
                        t >= cutoff,
                        "cutoff {cutoff}: {t} -> {mapped}"
                    );
                    checked += 1;
                }
            }
            assert!(checked > 10_000, "{checked}");
        }
    }

    #[test]
    fn a_stepped_nic_clock_is_followed_at_once_and_counted() {
        let mut sim = SimClocks::new(TAI_OFFSET, 30e-6);
        let (_, mut map) = simulate(&mut sim, 4);
        // ptp4l steps the PHC by two seconds.
        sim.step = 2_000_000_000;
        sim.now += REFRESH_NS;
        map.update(read_clocks(&mut sim, PHC_READINGS).unwrap());
        assert_eq!(map.steps(), 1);
        let t = sim.now + 5_000_000;
        assert!(map.to_host(sim.nic_at(t)).abs_diff(t) <= BOUND_NS);
        // The frequency measured before the step is kept.
        assert!(
            (map.drift_ppb() - 30_000.0).abs() < 200.0,
            "{}",
            map.drift_ppb()
        );
    }

    /// Host reads and NIC reads scripted: windows of 1000, 200 and 600 ns.
    struct Scripted {
        host: std::vec::IntoIter<u64>,
        nic: std::vec::IntoIter<io::Result<u64>>,
    }

    impl ClockPair for Scripted {
        fn nic_ns(&mut self) -> io::Result<u64> {
            self.nic.next().unwrap()
        }
        fn host_ns(&mut self) -> u64 {
            self.host.next().unwrap()
        }
    }

    #[test]
    fn the_narrowest_of_several_readings_is_kept() {
        let mut clocks = Scripted {
            host: vec![0, 1_000, 2_000, 2_200, 3_000, 3_600].into_iter(),
            nic: vec![Ok(50_500), Ok(52_100), Ok(53_300)].into_iter(),
        };
        let reading = read_clocks(&mut clocks, 3).unwrap();
        assert_eq!(
            reading,
            ClockReading {
                nic_ns: 52_100,
                host_ns: 2_100,
                window_ns: 200
            }
        );
    }

    #[test]
    fn a_failed_nic_read_is_an_error() {
        let mut clocks = Scripted {
            host: vec![0, 1_000].into_iter(),
            nic: vec![Err(io::Error::from_raw_os_error(libc::ENODEV))].into_iter(),
        };
        let err = read_clocks(&mut clocks, 5).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENODEV));
    }

    #[test]
    fn latencies_scale_by_the_measured_frequency_not_the_slew() {
        // The NIC runs 100 ppm fast: the second reading finds it 100 µs ahead, to slew away.
        let mut map = ClockMap::new(ClockReading {
            nic_ns: 5_000_000_000,
            host_ns: 0,
            window_ns: 0,
        });
        map.update(ClockReading {
            nic_ns: 6_000_100_000,
            host_ns: 1_000_000_000,
            window_ns: 0,
        });
        assert!(
            (map.drift_ppb() - 100_000.0).abs() < 1.0,
            "{}",
            map.drift_ppb()
        );
        assert_eq!(map.span_to_host(100_010), 100_000);
    }
}
