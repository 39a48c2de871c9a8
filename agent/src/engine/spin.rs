//! A spinning worker's watch on its own core: a poll with a zero timeout asks the kernel
//! only whether anything is ready, a microsecond's work, so one that takes longer than
//! [`STALL_THRESHOLD_NS`](crate::STALL_THRESHOLD_NS) is time the core was not the
//! worker's, known to the µs at both ends (the two clock reads around the poll). Stalls
//! that fall elsewhere in the loop (while it sends or parses) are the host probe's to see.

use std::io;
use std::time::Duration;

use mio::{Events, Poll};

use super::Epoch;
use crate::stall::{StallLog, stall_of_spin};

/// The stalls a worker's spins found since its last batch.
pub(super) struct SpinWatch {
    /// The worker's core (`None`: unpinned).
    core: Option<u32>,
    log: StallLog,
}

impl SpinWatch {
    /// The watch of a worker pinned to `core`, if it is.
    pub(super) fn new(core: Option<usize>) -> SpinWatch {
        SpinWatch {
            core: core.and_then(|c| u32::try_from(c).ok()),
            log: StallLog::with_room(crate::stall::STALLS_PER_BATCH),
        }
    }

    /// Polls `poll` for `timeout`; when that is a spin (zero), a poll that took longer
    /// than the threshold is kept as a stall, on `epoch`'s clock (the samples').
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
        if let Some(stall) = stall_of_spin(before, epoch.now_ns(), self.core) {
            self.log.push(stall);
        }
        polled
    }

    /// Moves the stalls found since the last call into `into` (a batch's).
    pub(super) fn drain_into(&mut self, into: &mut StallLog) {
        into.append(&self.log);
        self.log.clear();
    }
}
