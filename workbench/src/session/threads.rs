//! Where vernier's own threads run while the agents run: each thread's cores, CPU time and
//! wake-ups, read from /proc at the session's host ticks, so that a run says where its
//! threads were (a coordinator on the server's core, or beside a spinning worker, is part
//! of the result).

use std::time::Instant;

use crate::procfs::{CpuWindow, Usage, clock_ticks_per_s, read_snapshot};

/// This process's threads over the session.
pub(super) struct Threads {
    /// When the first snapshot was taken, and the window since (`None`: /proc unreadable).
    started: Instant,
    window: Option<CpuWindow>,
}

impl Threads {
    /// Starts watching now.
    pub(super) fn new() -> Threads {
        Threads {
            started: Instant::now(),
            window: read_snapshot(std::process::id())
                .ok()
                .flatten()
                .map(CpuWindow::start),
        }
    }

    /// Takes a snapshot: the cores each thread is on now join those it was seen on.
    pub(super) fn look(&mut self) {
        if let Some(window) = self.window.as_mut()
            && let Ok(Some(snapshot)) = read_snapshot(std::process::id())
        {
            window.observe(snapshot, self.started.elapsed());
        }
    }

    /// What each thread used from the start to the last look.
    pub(super) fn usage(&self) -> Option<Usage> {
        self.window.as_ref()?.usage(clock_ticks_per_s())
    }
}
