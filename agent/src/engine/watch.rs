//! A worker's watch on its own core: the worker is the stall probe of the core it runs on.
//!
//! Every wait of the worker's loop is a measurement. A sleep to a deadline that ends more
//! than [`STALL_THRESHOLD_NS`](crate::STALL_THRESHOLD_NS) after it is a stall from the
//! deadline to the wake-up, as a host probe's is ([`stall_of_wakeup`]); a zero-timeout poll
//! (a microsecond's work) or a gap between two clock reads of a spin that long is a stall
//! known to the µs at both ends ([`stall_of_spin`]). The sleeps' lateness also goes to the
//! [`CoreWatch`] the session reads as it reads a probe, so that no probe thread need wake
//! on a worker's core. Stalls that fall while the worker sends or parses are seen by the
//! next wait that the core's absence delays.

use std::io;
use std::time::Duration;

use mio::{Events, Poll};

use super::epoch::Epoch;
use crate::probe::CoreWatch;
use crate::stall::{StallLog, stall_of_spin, stall_of_wakeup};

/// The stalls a worker's waits found since its last batch, and its wake-ups' figures.
pub(super) struct Watch {
    /// The worker's core (`None`: unpinned).
    core: Option<u32>,
    log: StallLog,
    /// The wake-ups' lateness, for the session's reports.
    shared: CoreWatch,
    /// The current window of [`SPIN_WINDOW`]: when it began, its longest gap between two
    /// clock reads, and whether the worker slept in it.
    window_start: u64,
    window_gap: u64,
    slept: bool,
}

/// A worker that does not sleep (it spins) reports, for each window this long, its longest
/// gap between two clock reads as a wake-up's lateness: what a probe waking once a window
/// ([`PROBE_PERIOD`](crate::PROBE_PERIOD)) would have been delayed by.
const SPIN_WINDOW: Duration = crate::stall::PROBE_PERIOD;

impl Watch {
    /// The watch of a worker on `shared`'s core (pinned there, or unpinned), whose
    /// wake-ups it tallies.
    pub(super) fn new(shared: CoreWatch) -> Watch {
        Watch {
            core: shared.cpu().and_then(|c| u32::try_from(c).ok()),
            log: StallLog::with_room(crate::stall::STALLS_PER_BATCH),
            shared,
            window_start: 0,
            window_gap: 0,
            slept: false,
        }
    }

    /// Polls `poll` for `timeout`; when that is zero, a poll that took longer than the
    /// threshold is kept as a stall, on `epoch`'s clock (the samples').
    pub(super) fn poll(
        &mut self,
        poll: &mut Poll,
        events: &mut Events,
        timeout: Option<Duration>,
        epoch: Epoch,
    ) -> io::Result<()> {
        if timeout != Some(Duration::ZERO) {
            return poll.poll(events, timeout);
        }
        let before = epoch.now_ns();
        let polled = poll.poll(events, timeout);
        self.spun(before, epoch.now_ns());
        polled
    }

    /// Two reads of the clock, at `before` and `after`, with nothing but a spin (or a
    /// zero-timeout poll) between them: a gap over the threshold is a stall.
    #[inline]
    pub(super) fn spun(&mut self, before: u64, after: u64) {
        let gap = after.saturating_sub(before);
        self.window_gap = self.window_gap.max(gap);
        if after.saturating_sub(self.window_start) >= SPIN_WINDOW.as_nanos() as u64 {
            if !self.slept && self.window_start > 0 {
                self.shared.wakeup(self.window_gap);
            }
            self.window_start = after;
            self.window_gap = 0;
            self.slept = false;
        }
        if let Some(stall) = stall_of_spin(before, after, self.core) {
            self.log.push(stall);
        }
    }

    /// A sleep from `asleep` to the `deadline` asked ended at `now` (all on the samples'
    /// clock): its lateness tallied, and kept as a stall when it is one.
    pub(super) fn slept(&mut self, asleep: u64, deadline: u64, now: u64) {
        self.shared.wakeup(now.saturating_sub(deadline));
        self.slept = true;
        if let Some(stall) = stall_of_wakeup(asleep, deadline, now, self.core) {
            self.log.push(stall);
        }
    }

    /// Moves the stalls found since the last call into `into` (a batch's).
    pub(super) fn drain_into(&mut self, into: &mut StallLog) {
        into.append(&self.log);
        self.log.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stall::StallSource;

    #[test]
    fn a_late_wake_up_is_a_stall_from_its_deadline_and_every_one_is_tallied() {
        let mut w = Watch::new(CoreWatch::new(Some(3)));
        // Asleep at 0 until 1 ms: woken 20 µs late (no stall), then 2 ms late (a stall).
        w.slept(0, 1_000_000, 1_020_000);
        w.slept(1_100_000, 2_000_000, 4_000_000);
        let mut log = StallLog::default();
        w.drain_into(&mut log);
        assert_eq!(log.intervals.len(), 1, "{log:?}");
        let s = log.intervals[0];
        assert_eq!(
            (s.start_ns, s.end_ns, s.core),
            (2_000_000, 4_000_000, Some(3))
        );
        assert_eq!(s.source, StallSource::Probe);
        let report = w.shared.take();
        assert_eq!((report.wakeups, report.stalls_over_1ms), (2, 1));
        assert_eq!(report.cpu, Some(3));
    }

    #[test]
    fn a_spinning_worker_reports_its_longest_gap_each_window_as_a_wake_up() {
        let mut w = Watch::new(CoreWatch::new(None));
        let ms = SPIN_WINDOW.as_nanos() as u64;
        // Clock reads 1 µs apart for 4.5 ms, with one gap of 300 µs (a stall) in the second
        // millisecond: the first window (from the first read) is not reported whole, the
        // next three are.
        let mut t = 1;
        let mut gapped = false;
        while t < 4 * ms + ms / 2 {
            let next = if !gapped && t > ms + ms / 2 {
                gapped = true;
                t + 300_000
            } else {
                t + 1_000
            };
            w.spun(t, next);
            t = next;
        }
        let report = w.shared.take();
        assert_eq!(report.wakeups, 3, "{report:?}");
        assert!((299.0..301.0).contains(&report.late_max_us), "{report:?}");
        let mut log = StallLog::default();
        w.drain_into(&mut log);
        assert_eq!(log.intervals.len(), 1);
        assert_eq!(log.intervals[0].source, StallSource::Spin);
        // A window in which it slept reports its sleeps, not its spins.
        w.slept(t, t + 10, t + 20);
        w.spun(t + 20, t + ms + 30);
        assert_eq!(w.shared.take().wakeups, 1);
    }
}
