//! A host stall as an interval of time: when a core was not the measurement's, on the
//! clock of the samples it may have touched, and which probe saw it.
//!
//! Two probes find them. The host probe ([`HostProbe`](crate::HostProbe)) sleeps to
//! deadlines [`PROBE_PERIOD`] apart: a wake-up later than [`STALL_THRESHOLD_NS`] is a
//! stall from the deadline it was due at to the late wake-up, [`stall_of_wakeup`]. A worker that spins (`poll: spin`, or the adaptive mode's
//! spins) watches its own zero-timeout polls: one that takes longer than the threshold
//! is a stall of its core, known to the µs, [`stall_of_spin`].
//!
//! # Detection limits of the host probe (period P = 1 ms, threshold T = 100 µs)
//!
//! A stall of length D that begins at a uniformly random phase of the period delays the
//! next wake-up by D − (the time from the stall's start to that deadline), so:
//!
//! - D ≥ P + T: always seen (the wake-up after it is at least T late);
//! - T ≤ D < P + T: seen with probability (D − T) / P;
//! - D < T: never seen (a timer's own latency on a quiet core is tens of µs, and a
//!   threshold below that would call every wake-up a stall).
//!
//! The recorded interval runs from the deadline the late wake-up was due at to the
//! wake-up: the core was not ours at the deadline (had it been, the timer would have fired
//! within its latency) and was again at the wake-up (its end is known to within the
//! timer's latency). The stall may have begun up to a period before the deadline (after
//! the previous wake-up), but every request it held was still in flight at the deadline:
//! a core taken away answers nothing, and sends nothing, until it is back. So the interval
//! meets every request the stall touched, and no request that had finished before the
//! stall began. Recorded from the previous wake-up instead (the start's bound), an
//! interval would also meet requests that were done before the stall, and on a host that
//! stalls often cover several times as much of a run (docs/history/results-2026-11-24-to-29.md, "What a probe's
//! interval covers"; `vernier validate --stall-coverage` measures what either does to the
//! tail without stalls).
//!
//! # The clock
//!
//! An interval's `start_ns` and `end_ns` are on the clock of the samples'
//! `departure_ns`: nanoseconds since the agent's engine started (its epoch), read on
//! `CLOCK_MONOTONIC`. A host probe reads `CLOCK_MONOTONIC` itself ([`monotonic_ns`]);
//! [`StallInterval::since`] puts its intervals on an engine's clock
//! ([`Engine::clock_origin_ns`](crate::Engine::clock_origin_ns)). With kernel timestamps
//! the departures are `CLOCK_REALTIME` stamps less the epoch's realtime: the same
//! clock but for a step of the wall clock during the run (NTP's slewing moves both).
//!
//! [`monotonic_ns`]: crate::sys::monotonic_ns

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The host probe's period: wake-ups 1 ms apart see every stall of 1.1 ms or more, half of
/// those of 0.6 ms, and place a stall's start to within 1 ms (the stalls that move a
/// microsecond server's tail on a virtual machine last 0.2 to 10 ms).
///
/// Not shorter, because on a virtual machine each wake-up of an idle vCPU costs a VM exit,
/// and probes waking more often disturb what they measure (docs/history/results-2026-11-24-to-29.md, "Why the probe
/// wakes every 1 ms anyway"). The price of 1 ms: stalls under 1.1 ms in which no wake-up was
/// due go unseen, the requests they held stay in the tail without stalls, and its CI then
/// covers less (`vernier validate --stall-coverage`, docs/history/results-2026-11-24-to-29.md, against a 200 µs
/// probe's).
pub const PROBE_PERIOD: Duration = Duration::from_micros(1000);

/// The period of a host probe beside a load of `rate` requests a second: [`PROBE_PERIOD`],
/// or the mean time between the load's requests when that is longer, so that no probe
/// wakes more often than the load sends (at 100 req/s a 1 ms probe would be ten wake-ups
/// a request, most of what the run costs the host). The detection limits above hold with
/// that period for P: at 100 req/s every stall of 10.1 ms or more is seen, and one of 2 ms
/// a fifth of the time; a request meets such a stall as rarely as the load is light.
pub fn probe_period(rate: f64) -> Duration {
    if rate.is_finite() && rate > 0.0 {
        PROBE_PERIOD.max(Duration::from_secs_f64(1.0 / rate))
    } else {
        PROBE_PERIOD
    }
}

/// A wake-up, or a spinning worker's poll, later (longer) than this is a stall: a timer
/// on a core that is ours fires within tens of µs, so what is beyond 100 µs is the host
/// (or another task) holding the core. The same figure as
/// [`NOT_OURS_NS`](crate::NOT_OURS_NS), the tallies' share of time not ours.
pub const STALL_THRESHOLD_NS: u64 = 100_000;

/// The stalls a batch (and a spinning worker's log) holds room for before it allocates:
/// a batch covers about 20 ms, and stalls over 100 µs come a few a second on a host that
/// stalls often.
pub const STALLS_PER_BATCH: usize = 64;

/// The most intervals one take (a probe's, or a worker's batch) keeps: a host that
/// stalls every period for a second gives 5,000; beyond the cap they are counted in
/// [`StallLog::dropped`], not kept (100,000 intervals are 3.2 MB).
pub const MAX_INTERVALS: usize = 100_000;

/// Which probe saw a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallSource {
    /// A host probe's late wake-up: from the deadline it was due at (the stall may have
    /// begun up to a period before) to the wake-up.
    Probe,
    /// A spinning worker's long poll: both ends known to the µs.
    Spin,
    /// A load request that left more than [`STALL_THRESHOLD_NS`] after its schedule while
    /// the point kept one request in several: its worker held (or its core taken) from the
    /// schedule to the send, both ends known to the µs.
    Late,
}

impl StallSource {
    /// Its name in files and messages (its serde name).
    pub fn name(self) -> &'static str {
        match self {
            StallSource::Probe => "probe",
            StallSource::Spin => "spin",
            StallSource::Late => "late",
        }
    }

    /// The source named `name` ([`StallSource::name`]), if there is one.
    pub fn from_name(name: &str) -> Option<StallSource> {
        [StallSource::Probe, StallSource::Spin, StallSource::Late]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// One stall: a core was not ours at `start_ns` and until (at the earliest) `end_ns`, on
/// the samples' clock; every request the stall held was in flight within it (see the
/// module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallInterval {
    /// A moment the core was not ours (a host probe's: the deadline its late wake-up was
    /// due at; a spin's: the poll's start), ns.
    pub start_ns: u64,
    /// When it was ours again, ns (after `start_ns`).
    pub end_ns: u64,
    /// The core (`None`: an unpinned probe, wherever the scheduler ran it).
    pub core: Option<u32>,
    /// Which probe saw it.
    pub source: StallSource,
}

impl StallInterval {
    /// Its length, ns.
    pub fn len_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// The same interval on a clock whose zero is `origin_ns` of this one's (an engine's
    /// epoch on `CLOCK_MONOTONIC`). A stall that ended before the origin is `None`; one
    /// that began before it starts at 0.
    pub fn since(&self, origin_ns: u64) -> Option<StallInterval> {
        (self.end_ns > origin_ns).then(|| StallInterval {
            start_ns: self.start_ns.saturating_sub(origin_ns),
            end_ns: self.end_ns - origin_ns,
            ..*self
        })
    }
}

/// The stall, if any, that a host probe's wake-up at `now` reveals, given its previous
/// wake-up at `previous` and the `deadline` it slept to (all on one clock, ns): a wake-up
/// later than [`STALL_THRESHOLD_NS`] after its deadline is a stall from the deadline (the
/// core was not ours then; see the module's doc for why not from `previous`, the start's
/// bound) to `now`.
pub fn stall_of_wakeup(
    previous: u64,
    deadline: u64,
    now: u64,
    core: Option<u32>,
) -> Option<StallInterval> {
    (now.saturating_sub(deadline) > STALL_THRESHOLD_NS).then_some(StallInterval {
        start_ns: deadline.max(previous).min(now),
        end_ns: now,
        core,
        source: StallSource::Probe,
    })
}

/// The stall, if any, that a spinning worker's zero-timeout poll reveals: called at
/// `before` and returned at `after` (ns), a poll that took longer than
/// [`STALL_THRESHOLD_NS`] (it asks the kernel only whether anything is ready) is a stall
/// of its core from `before` to `after`.
pub fn stall_of_spin(before: u64, after: u64, core: Option<u32>) -> Option<StallInterval> {
    (after.saturating_sub(before) > STALL_THRESHOLD_NS).then_some(StallInterval {
        start_ns: before,
        end_ns: after,
        core,
        source: StallSource::Spin,
    })
}

/// Intervals kept since the last take, at most [`MAX_INTERVALS`], and how many more were
/// seen and not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallLog {
    /// The intervals, in the order seen.
    pub intervals: Vec<StallInterval>,
    /// Intervals seen beyond the cap, not kept.
    pub dropped: u64,
}

impl StallLog {
    /// An empty log with room for `intervals` without allocating: a worker's hot loop
    /// pushes into it, and allocates nothing while the stalls of an interval fit.
    pub fn with_room(intervals: usize) -> StallLog {
        StallLog {
            intervals: Vec::with_capacity(intervals),
            dropped: 0,
        }
    }

    /// Keeps `interval`, or counts it when the log is full.
    pub fn push(&mut self, interval: StallInterval) {
        if self.intervals.len() < MAX_INTERVALS {
            self.intervals.push(interval);
        } else {
            self.dropped += 1;
        }
    }

    /// Keeps every interval of `other` there is room for, and counts the rest with
    /// `other`'s own dropped ones.
    pub fn append(&mut self, other: &StallLog) {
        let room = MAX_INTERVALS.saturating_sub(self.intervals.len());
        let kept = other.intervals.len().min(room);
        self.intervals.extend_from_slice(&other.intervals[..kept]);
        self.dropped += other.dropped + (other.intervals.len() - kept) as u64;
    }

    /// Whether it holds nothing, dropped ones included.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty() && self.dropped == 0
    }

    /// Empties it, keeping its buffer.
    pub fn clear(&mut self) {
        self.intervals.clear();
        self.dropped = 0;
    }

    /// The same log on a clock whose zero is `origin_ns` of this one's (see
    /// [`StallInterval::since`]).
    pub fn since(&self, origin_ns: u64) -> StallLog {
        StallLog {
            intervals: self
                .intervals
                .iter()
                .filter_map(|s| s.since(origin_ns))
                .collect(),
            dropped: self.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 200_000;

    /// The stalls a probe of period `P` records while the core is taken away over
    /// `stall` (ns), its deadlines on the grid k·P: the probe's loop, with the clock
    /// simulated (a wake-up comes at its deadline plus `timer` ns, or when the stall ends).
    fn simulate(stall: (u64, u64), timer: u64, until: u64) -> Vec<StallInterval> {
        let mut found = Vec::new();
        let mut previous = 0;
        let mut deadline = P;
        while deadline < until {
            let mut now = deadline + timer;
            if now >= stall.0 && now < stall.1 + timer {
                now = now.max(stall.1 + timer);
            }
            found.extend(stall_of_wakeup(previous, deadline, now, Some(3)));
            previous = now;
            deadline = crate::probe::next_deadline(deadline, P, now);
        }
        found
    }

    #[test]
    fn a_probe_records_the_stall_from_the_deadline_it_missed() {
        // 3 ms taken away from 1.05 ms on, the timer 20 µs late.
        let found = simulate((1_050_000, 4_050_000), 20_000, 10_000_000);
        assert_eq!(found.len(), 1, "{found:?}");
        let s = found[0];
        // The start: the deadline its late wake-up was due at (1.2 ms), within one period
        // of the stall's start, the core taken away then.
        assert_eq!(s.start_ns, 1_200_000);
        assert!(s.start_ns >= 1_050_000 && s.start_ns - 1_050_000 <= P);
        // The end: the core back, plus the timer's latency.
        assert_eq!(s.end_ns, 4_070_000);
        assert_eq!((s.core, s.source), (Some(3), StallSource::Probe));
    }

    #[test]
    fn detection_follows_the_stated_limits() {
        let seen = |d: u64, phase: u64| {
            let start = 1_000_000 + phase;
            !simulate((start, start + d), 0, 5_000_000).is_empty()
        };
        let phases: Vec<u64> = (0..P).step_by(1_000).collect();
        let share =
            |d: u64| phases.iter().filter(|&&ph| seen(d, ph)).count() as f64 / phases.len() as f64;
        // Never below the threshold, always from period + threshold, (D - T)/P between.
        assert_eq!(share(STALL_THRESHOLD_NS - 1_000), 0.0);
        assert_eq!(share(P + STALL_THRESHOLD_NS + 1_000), 1.0);
        assert!((share(200_000) - 0.5).abs() < 0.02, "{}", share(200_000));
        assert!((share(150_000) - 0.25).abs() < 0.02, "{}", share(150_000));
        // And every interval recorded lies in its stall from a deadline in it, and ends
        // when the core is back: a request the stall held (in flight from before its end
        // to after it) meets it.
        for &ph in &phases {
            let (a, b) = (1_000_000 + ph, 1_000_000 + ph + 250_000);
            for s in simulate((a, b), 0, 5_000_000) {
                assert!(s.start_ns >= a && s.start_ns < b, "{s:?} vs {a}..{b}");
                assert!(s.start_ns % P == 0 && s.end_ns == b, "{s:?} vs {a}..{b}");
            }
        }
    }

    #[test]
    fn a_probe_wakes_no_more_often_than_the_load_sends() {
        assert_eq!(probe_period(10_000.0), PROBE_PERIOD);
        assert_eq!(probe_period(1_000.0), PROBE_PERIOD);
        assert_eq!(probe_period(100.0), Duration::from_millis(10));
        assert_eq!(probe_period(0.0), PROBE_PERIOD);
        assert_eq!(probe_period(f64::NAN), PROBE_PERIOD);
    }

    #[test]
    fn a_long_spin_poll_is_a_stall_known_to_its_ends() {
        assert_eq!(stall_of_spin(1_000, 101_000, Some(1)), None);
        let s = stall_of_spin(1_000, 2_001_000, Some(1)).unwrap();
        assert_eq!(
            (s.start_ns, s.end_ns, s.len_ns()),
            (1_000, 2_001_000, 2_000_000)
        );
        assert_eq!(s.source, StallSource::Spin);
    }

    #[test]
    fn intervals_move_to_an_engines_clock_and_the_log_is_capped() {
        let s = stall_of_spin(5_000, 505_000, None).unwrap();
        assert_eq!(
            s.since(4_000).map(|s| (s.start_ns, s.end_ns)),
            Some((1_000, 501_000))
        );
        assert_eq!(s.since(10_000).map(|s| s.start_ns), Some(0));
        assert_eq!(s.since(505_000), None);

        let mut log = StallLog::default();
        for _ in 0..MAX_INTERVALS + 3 {
            log.push(s);
        }
        assert_eq!((log.intervals.len(), log.dropped), (MAX_INTERVALS, 3));
        let mut other = StallLog::default();
        other.push(s);
        other.dropped = 2;
        log.append(&other);
        assert_eq!((log.intervals.len(), log.dropped), (MAX_INTERVALS, 6));
        log.clear();
        assert!(log.is_empty());
        log.append(&other);
        assert_eq!((log.intervals.len(), log.dropped), (1, 2));
        for source in [StallSource::Probe, StallSource::Spin] {
            assert_eq!(StallSource::from_name(source.name()), Some(source));
        }
        assert_eq!(StallSource::from_name("other"), None);
    }
}
