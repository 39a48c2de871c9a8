//! How a worker's loop waits between departures: it sleeps in the poller, woken by a
//! reply or by a timerfd armed just before the next departure is due, then spins the
//! last few microseconds: precise departures without holding a core.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Poll, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

use super::EngineError;
use super::arrivals::Arrivals;
use crate::config::PollMode;

/// The poller's token of the departure timer (sockets use their slot index).
pub(super) const TIMER: Token = Token(usize::MAX - 1);
/// The loop spins, rather than sleeps, when the next departure is this close: a timer's
/// wake-up takes a few tens of µs on a busy or virtual host.
const SPIN_BEFORE_DUE: Duration = Duration::from_micros(60);
/// `poll: adaptive` spins while a request is in flight and the last one left less than
/// this long ago: a fast server's replies (memcached's p99 on loopback is tens to a couple
/// of hundred µs) land on a thread that is already running, and a server that takes
/// longer, or a reply that is lost, does not hold the core.
pub(super) const SPIN_FOR_REPLY: Duration = Duration::from_micros(200);

/// Whether a reply may land any moment: a request is in flight that left within
/// [`SPIN_FOR_REPLY`]. An adaptive worker spins for it rather than sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reply {
    /// One may land any moment.
    Due,
    /// None is in flight, or the last left long enough ago not to hold the core for it.
    NotDue,
}

/// The timer that wakes a sleeping worker for its next departure.
pub(super) struct Pacer {
    /// Armed for the next departure while the loop sleeps.
    timer: TimerFd,
}

impl Pacer {
    /// Worker `index`'s poller, with the timer that wakes it for the next departure
    /// registered as [`TIMER`].
    pub(super) fn new(index: u32) -> Result<(Poll, Pacer), EngineError> {
        let poll = Poll::new().map_err(|source| EngineError::Os {
            worker: index,
            what: "create poller",
            source,
        })?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(|e| EngineError::Os {
            worker: index,
            what: "create departure timer",
            source: io::Error::from(e),
        })?;
        poll.registry()
            .register(
                &mut SourceFd(&timer.as_fd().as_raw_fd()),
                TIMER,
                Interest::READABLE,
            )
            .map_err(|source| EngineError::Os {
                worker: index,
                what: "register departure timer",
                source,
            })?;
        Ok((poll, Pacer { timer }))
    }

    /// Drains the timer's expiration so that the next arming raises a new edge.
    pub(super) fn drain(&self) {
        let _ = self.timer.wait();
    }

    /// How long the poller may sleep at `now`: never with `poll: spin`, nor with `poll:
    /// adaptive` while a `reply` is due (see [`SPIN_FOR_REPLY`]); otherwise
    /// not at all when a departure of `arrivals` is due within [`SPIN_BEFORE_DUE`];
    /// otherwise until a reply arrives or the timer, armed that long before the
    /// departure (or for `next_chore`, a report or housekeeping), fires.
    pub(super) fn timeout(
        &self,
        poll: PollMode,
        now: u64,
        reply: Reply,
        arrivals: Option<&Arrivals>,
        next_chore: u64,
    ) -> Option<Duration> {
        match poll {
            PollMode::Spin => return Some(Duration::ZERO),
            PollMode::Adaptive if reply == Reply::Due => return Some(Duration::ZERO),
            PollMode::Adaptive | PollMode::Sleep => {}
        }
        let spin = SPIN_BEFORE_DUE.as_nanos() as u64;
        let wake = match arrivals {
            Some(a) => a.next().saturating_sub(spin).min(next_chore),
            None => next_chore,
        };
        if wake <= now + spin / 4 {
            return Some(Duration::ZERO);
        }
        let delay = Duration::from_nanos(wake - now);
        match self.timer.set(
            Expiration::OneShot(TimeSpec::from_duration(delay)),
            TimerSetTimeFlags::empty(),
        ) {
            // Woken by the timer or by a reply, whichever comes first.
            Ok(()) => Some(Duration::from_secs(1)),
            // No timer: the poller's own (millisecond) timeout, or a spin when closer.
            Err(_) if delay >= Duration::from_millis(1) => Some(Duration::from_millis(1)),
            Err(_) => Some(Duration::ZERO),
        }
    }
}
