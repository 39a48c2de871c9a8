//! A worker waiting: the pacer's plan carried out (a nap, a sleep watched by the sockets,
//! a spin of the clock, or a poll), what the sockets had handled, and each sleep's
//! lateness taught to the core's watch and to the pacer's lead.

use std::io;
use std::time::Duration;

use mio::Events;

use super::Worker;
use crate::engine::arrivals::Arrivals;
use crate::engine::pacer::{Reply, SPIN_FOR_REPLY, TIMER, Turn, Wait};

/// A nap whose deadline is closer than this once the sockets are read is skipped: the
/// next turn spins or sends.
const MIN_NAP: Duration = Duration::from_micros(2);

impl Worker {
    /// Waits as the pacer plans (see [`Wait`]), for the next departure or `next_chore` (a
    /// report or housekeeping), and handles what the sockets had. False when the poller
    /// failed.
    pub(super) fn wait(&mut self, events: &mut Events, next_chore: u64) -> bool {
        let now = self.epoch.now_ns();
        let reply = if self.counters.in_flight > 0
            && now.saturating_sub(self.last_sent) < SPIN_FOR_REPLY.as_nanos() as u64
        {
            Reply::Due
        } else {
            Reply::NotDue
        };
        let plan = self.pacer.plan(Turn {
            now,
            reply,
            // Every server's requests wait for a slot: only a reply moves them. In a duet
            // with one server's waiting, the next departure may be the other's.
            backlogged: !self.backlog[0].is_empty()
                && (self.second.is_none() || !self.backlog[1].is_empty()),
            departure: self.arrivals.as_ref().map(Arrivals::next),
            chore: next_chore,
        });
        match plan {
            Wait::Spin { until } => {
                self.spin_until(now, until);
                true
            }
            Wait::Poll => self.poll(events, Some(Duration::ZERO)),
            Wait::Nap { until } => {
                // Replies and stamps first: they free slots and end requests; then
                // asleep, not woken by the next ones (the kernel stamps them).
                if !self.poll(events, Some(Duration::ZERO)) {
                    return false;
                }
                let asleep = self.epoch.now_ns();
                if asleep + MIN_NAP.as_nanos() as u64 >= until {
                    return true;
                }
                crate::sys::sleep_until(self.epoch.mono_ns + until);
                let woke = self.epoch.now_ns();
                self.woke(asleep, until, woke);
                true
            }
            Wait::Sleep { until } => {
                let timeout = self.pacer.arm(now, until);
                let ok = self.poll(events, timeout);
                let woke = self.epoch.now_ns();
                if woke >= until && timeout != Some(Duration::ZERO) {
                    self.woke(now, until, woke);
                }
                ok
            }
        }
    }

    /// A sleep from `asleep` to `deadline` ended at `woke`: the core's watch and the
    /// pacer's lead learn its lateness.
    fn woke(&mut self, asleep: u64, deadline: u64, woke: u64) {
        self.watch.slept(asleep, deadline, woke);
        self.pacer.woke(woke.saturating_sub(deadline));
    }

    /// Reads the clock, and nothing else, until `until`: a departure leaves within a
    /// clock read of its schedule. A gap between two reads longer than a stall's threshold
    /// is the core taken away.
    fn spin_until(&mut self, now: u64, until: u64) {
        let mut before = now;
        while before < until {
            std::hint::spin_loop();
            let after = self.epoch.now_ns();
            self.watch.spun(before, after);
            before = after;
        }
    }

    /// Polls the sockets for `timeout` and handles what they had. False when the poller
    /// failed.
    fn poll(&mut self, events: &mut Events, timeout: Option<Duration>) -> bool {
        if let Err(e) = (self.watch).poll(&mut self.poll, events, timeout, self.epoch)
            && e.kind() != io::ErrorKind::Interrupted
        {
            return false;
        }
        self.pacer.polled(self.epoch.now_ns());
        for event in events.iter() {
            // A departure that came due while replies were read goes first: reading a
            // burst of them takes longer than the precision a spinning worker keeps.
            if self
                .arrivals
                .as_ref()
                .is_some_and(|a| a.next() <= self.epoch.now_ns())
            {
                self.generate(self.epoch.now_ns());
                self.dispatch();
            }
            if event.token() == TIMER {
                self.pacer.fired();
                continue;
            }
            let slot = event.token().0;
            if event.is_writable() {
                self.flush(slot);
            }
            let readable = event.is_readable() || event.is_read_closed();
            if readable || event.is_error() {
                self.on_readable(slot, readable);
            }
        }
        true
    }
}
