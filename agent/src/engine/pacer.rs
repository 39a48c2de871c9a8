//! How a worker's loop waits between departures: as precise as the answer asked needs, at
//! the least CPU that buys it.
//!
//! A sleeping thread wakes late (on a virtual machine ~30 µs at the median, and far more
//! when the host takes its vCPU away); a spinning one is on time but holds its core. The
//! pacer sleeps until a *lead* before each departure and spins (reading the clock, no
//! system call) the rest of the way. The lead is what this host's measured wake-up
//! lateness requires for the share [`PACE_SHARE`] of departures to leave within the
//! *tolerance*: the lateness that could move the answer asked (the coordinator's
//! departure check: half the CI width asked, never under 10 µs). A wide answer spins
//! not at all; a tight one on a host that wakes late spins tens of µs a request.
//!
//! With kernel timestamps a reply is stamped when it arrives, not when it is read, so a
//! sleeping worker is not woken for replies: it reads them (and the TX stamps) at its
//! next wake-up, one `epoll_wait` for all. With user timestamps, or `poll: adaptive`, a
//! reply wakes the worker (a timerfd is armed for the departure, only when its deadline
//! changes). `poll: spin` never sleeps: it spins on the clock to each departure and polls
//! the sockets every [`SPIN_POLL_EVERY`].

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Poll, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

use super::error::EngineError;
use crate::config::PollMode;

/// The poller's token of the departure timer (sockets use their slot index).
pub(super) const TIMER: Token = Token(usize::MAX - 1);
/// `poll: adaptive` spins while a request is in flight and the last one left less than
/// this long ago: a fast server's replies (memcached's p99 on loopback is tens to a couple
/// of hundred µs) land on a thread that is already running, and a server that takes
/// longer, or a reply that is lost, does not hold the core.
pub(super) const SPIN_FOR_REPLY: Duration = Duration::from_micros(200);
/// How often a worker that spins (`poll: spin`) asks the kernel what its sockets have, when
/// its replies are stamped by the kernel: between polls it reads only the clock, so that
/// a departure leaves within the clock read's time of its schedule. With user timestamps
/// it polls on every turn (the reply's time is when it is read).
pub(super) const SPIN_POLL_EVERY: Duration = Duration::from_micros(20);
/// The tolerance until the coordinator gives one: what the send path itself costs, below
/// which no departure is called late ([`ON_SCHEDULE_NS`](crate::measure::ON_SCHEDULE_NS)).
pub(super) const DEFAULT_TOLERANCE: Duration =
    Duration::from_nanos(crate::measure::ON_SCHEDULE_NS as u64);
/// The share of departures a sleeping worker aims to send within the tolerance. The
/// departure check needs a fifth of the requests on schedule and their percentile to agree
/// with all requests'; more on schedule keeps the arrivals the process asked for. On this
/// project's 2-vCPU KVM guest at 10,000 req/s against memcached (a tolerance of 10 µs) the
/// worker's wake-ups came 7 µs late at the median and 36 µs at the 99th percentile, and
/// aiming for 95% rather than 75% sent 88% rather than 75% of the requests within 10 µs for
/// the same CPU (34.5 against 35.2 µs a request, the whole process): the spin it adds is
/// small beside the kernel's cost of a request (docs/history/results-2026-11-24-to-29.md, "Pacing").
pub(super) const PACE_SHARE: f64 = 0.95;
/// From the clock read after a wake-up to the kernel's TX stamp of the request sent then:
/// drawing, encoding and the socket call on loopback.
const SEND_PATH: Duration = Duration::from_micros(4);
/// The lead before enough wake-ups are measured: this host's median lateness.
const FIRST_LEAD: Duration = Duration::from_micros(30);
/// The longest lead: beyond it the lateness is the host's stalls, which no lead foresees,
/// and a spin that long costs more than the departures it saves.
const MAX_LEAD: Duration = Duration::from_micros(200);
/// A wait shorter than this is spun: a sleep's two system calls and wake-up cost more.
const MIN_SLEEP: Duration = Duration::from_micros(5);

/// Whether a reply may land any moment: a request is in flight that left within
/// [`SPIN_FOR_REPLY`]. An adaptive worker spins for it rather than sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reply {
    /// One may land any moment.
    Due,
    /// None is in flight, or the last left long enough ago not to hold the core for it.
    NotDue,
}

/// What wakes a sleeping worker besides its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Replies {
    /// A reply's time is read when the worker reads it (user timestamps): it wakes for
    /// each.
    WakeFor,
    /// The kernel stamps a reply when it arrives: it waits for the next wake-up.
    Stamped,
}

/// How the worker's loop waits this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// Read what the sockets have, without waiting.
    Poll,
    /// Read only the clock until `until` (ns since the epoch): a departure that is close,
    /// or a spinning worker's next poll.
    Spin { until: u64 },
    /// Read what the sockets have, then sleep until `until` without waking for them.
    Nap { until: u64 },
    /// Sleep until `until` or until a socket has something (the timer armed for it).
    Sleep { until: u64 },
}

/// What the pacer is told of the worker's state for one turn.
#[derive(Debug, Clone, Copy)]
pub(super) struct Turn {
    /// Now, ns since the epoch.
    pub(super) now: u64,
    /// Whether a reply may land any moment.
    pub(super) reply: Reply,
    /// Due requests wait for a free slot: only a reply frees one.
    pub(super) backlogged: bool,
    /// When the next request is due, while loading.
    pub(super) departure: Option<u64>,
    /// The next report or housekeeping.
    pub(super) chore: u64,
}

/// The timer that wakes a sleeping worker, and how far ahead of a departure to wake.
pub(super) struct Pacer {
    mode: PollMode,
    replies: Replies,
    /// Armed for `armed` while the loop sleeps with its sockets watched.
    timer: TimerFd,
    armed: Option<u64>,
    /// When the sockets were last polled.
    last_poll: u64,
    lead: Lead,
}

impl Pacer {
    /// Worker `index`'s poller, with the timer that wakes it registered as [`TIMER`], and
    /// its pacer waiting in `mode`.
    pub(super) fn new(
        index: u32,
        mode: PollMode,
        replies: Replies,
    ) -> Result<(Poll, Pacer), EngineError> {
        let os = |what: &'static str| {
            move |source: io::Error| EngineError::Os {
                worker: index,
                what,
                source,
            }
        };
        let poll = Poll::new().map_err(os("create poller"))?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(|e| os("create departure timer")(io::Error::from(e)))?;
        poll.registry()
            .register(
                &mut SourceFd(&timer.as_fd().as_raw_fd()),
                TIMER,
                Interest::READABLE,
            )
            .map_err(os("register departure timer"))?;
        let pacer = Pacer {
            mode,
            replies,
            timer,
            armed: None,
            last_poll: 0,
            lead: Lead::new(DEFAULT_TOLERANCE),
        };
        Ok((poll, pacer))
    }

    /// The lateness that could move the answer asked: departures within it are on
    /// schedule.
    pub(super) fn set_tolerance(&mut self, tolerance: Duration) {
        self.lead.set_tolerance(tolerance);
    }

    #[cfg(test)]
    /// The lead a sleeping worker wakes by before a departure, ns.
    pub(super) fn lead_ns(&self) -> u64 {
        self.lead.ns
    }

    /// How to wait this turn (see [`Wait`]).
    pub(super) fn plan(&self, turn: Turn) -> Wait {
        let Turn {
            now,
            reply,
            backlogged,
            departure,
            chore,
        } = turn;
        let spin_poll = match (self.mode, reply) {
            (PollMode::Spin, _) => Some(match self.replies {
                Replies::Stamped => SPIN_POLL_EVERY.as_nanos() as u64,
                Replies::WakeFor => 0,
            }),
            (PollMode::Adaptive, Reply::Due) => Some(0),
            _ => None,
        };
        if let Some(every) = spin_poll {
            let next_poll = self.last_poll + every;
            if now >= next_poll {
                return Wait::Poll;
            }
            let until = departure.map_or(next_poll, |d| d.min(next_poll));
            return Wait::Spin {
                until: until.min(chore),
            };
        }
        // Due requests wait for a slot: only a reply (or a chore) can move them.
        if backlogged {
            return Wait::Sleep { until: chore };
        }
        let lead = self.lead.ns;
        if let Some(due) = departure
            && due <= now + lead
        {
            return Wait::Spin { until: due };
        }
        let wake = departure.map_or(chore, |d| (d - lead).min(chore));
        if wake <= now + MIN_SLEEP.as_nanos() as u64 {
            return Wait::Spin { until: wake };
        }
        match (self.mode, self.replies) {
            (PollMode::Adaptive, _) | (_, Replies::WakeFor) => Wait::Sleep { until: wake },
            _ => Wait::Nap { until: wake },
        }
    }

    /// The poller's timeout for a [`Wait::Sleep`] until `until` at `now`: the timer armed
    /// for it (re-armed only when the deadline changes), woken by a reply or by it.
    pub(super) fn arm(&mut self, now: u64, until: u64) -> Option<Duration> {
        if until <= now {
            return Some(Duration::ZERO);
        }
        if self.armed == Some(until) {
            return Some(Duration::from_secs(1));
        }
        let delay = Duration::from_nanos(until - now);
        match self.timer.set(
            Expiration::OneShot(TimeSpec::from_duration(delay)),
            TimerSetTimeFlags::empty(),
        ) {
            Ok(()) => {
                self.armed = Some(until);
                Some(Duration::from_secs(1))
            }
            // No timer: the poller's own (millisecond) timeout, or a spin when closer.
            Err(_) if delay >= Duration::from_millis(1) => Some(Duration::from_millis(1)),
            Err(_) => Some(Duration::ZERO),
        }
    }

    /// The timer fired: its expiration read, so that the next arming raises a new edge.
    pub(super) fn fired(&mut self) {
        let _ = self.timer.wait();
        self.armed = None;
    }

    /// The sockets were polled at `now`.
    pub(super) fn polled(&mut self, now: u64) {
        self.last_poll = now;
    }

    /// A sleep to a deadline ended `late_ns` after it: the lead follows.
    pub(super) fn woke(&mut self, late_ns: u64) {
        self.lead.record(late_ns);
    }
}

/// Buckets of the recent lateness, each this wide.
const BUCKET_NS: u64 = 1_000;
/// Buckets: lateness up to 1 ms (beyond, the last bucket: a stall).
const BUCKETS: usize = 1024;
/// Wake-ups before the measured lateness sets the lead.
const FIRST_WAKEUPS: u32 = 64;
/// Every this many wake-ups the counts are halved, so that the lead follows the host's
/// hour (about 2 s of wake-ups at 10,000 a second).
const HALVE_EVERY: u32 = 16_384;
/// The lead is recomputed every this many wake-ups.
const RECOMPUTE_EVERY: u32 = 64;

/// The lead from the recent wake-ups' lateness: its [`PACE_SHARE`] quantile plus the send
/// path, less the tolerance, within [0, [`MAX_LEAD`]].
struct Lead {
    counts: Box<[u32; BUCKETS]>,
    total: u32,
    since_halved: u32,
    since_computed: u32,
    tolerance_ns: u64,
    ns: u64,
}

impl Lead {
    fn new(tolerance: Duration) -> Lead {
        Lead {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            since_halved: 0,
            since_computed: 0,
            tolerance_ns: tolerance.as_nanos() as u64,
            ns: FIRST_LEAD.as_nanos() as u64,
        }
    }

    fn set_tolerance(&mut self, tolerance: Duration) {
        self.tolerance_ns = tolerance.as_nanos() as u64;
        self.compute();
    }

    fn record(&mut self, late_ns: u64) {
        let bucket = ((late_ns / BUCKET_NS) as usize).min(BUCKETS - 1);
        self.counts[bucket] += 1;
        self.total += 1;
        self.since_halved += 1;
        self.since_computed += 1;
        if self.since_halved >= HALVE_EVERY {
            self.total = 0;
            for c in self.counts.iter_mut() {
                *c /= 2;
                self.total += *c;
            }
            self.since_halved = 0;
        }
        if self.since_computed >= RECOMPUTE_EVERY {
            self.compute();
        }
    }

    /// The lateness at quantile `q` of the recent wake-ups, ns (a bucket's upper edge).
    fn quantile(&self, q: f64) -> u64 {
        let rank = (q * f64::from(self.total)).ceil() as u32;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank.max(1) {
                return (i as u64 + 1) * BUCKET_NS;
            }
        }
        BUCKETS as u64 * BUCKET_NS
    }

    fn compute(&mut self) {
        self.since_computed = 0;
        if self.total < FIRST_WAKEUPS {
            return;
        }
        let late = self.quantile(PACE_SHARE) + SEND_PATH.as_nanos() as u64;
        self.ns = late
            .saturating_sub(self.tolerance_ns)
            .min(MAX_LEAD.as_nanos() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacer(mode: PollMode, replies: Replies) -> Pacer {
        Pacer::new(0, mode, replies).unwrap().1
    }

    fn turn(now: u64, departure: Option<u64>) -> Turn {
        Turn {
            now,
            reply: Reply::NotDue,
            backlogged: false,
            departure,
            chore: now + 20_000_000,
        }
    }

    #[test]
    fn the_lead_is_the_lateness_quantile_less_the_tolerance() {
        let mut lead = Lead::new(Duration::from_micros(10));
        assert_eq!(lead.ns, 30_000, "the first lead, before any wake-up");
        // Wake-ups 10 to 200 µs late, each of the 20 tens equally often: the 95% quantile
        // is 190 µs (the bucket's upper edge, 191), plus the send path (4), less the
        // tolerance (10).
        assert_eq!(PACE_SHARE, 0.95);
        for i in 0..2_000u64 {
            lead.record(10_000 + (i % 20) * 10_000);
        }
        assert_eq!(lead.ns, 185_000);
        // A wide tolerance asks for no spin at all.
        lead.set_tolerance(Duration::from_micros(300));
        assert_eq!(lead.ns, 0);
        // Stalls alone do not make the spin longer than the limit.
        lead.set_tolerance(Duration::ZERO);
        for _ in 0..4_000 {
            lead.record(5_000_000);
        }
        assert_eq!(lead.ns, MAX_LEAD.as_nanos() as u64);
    }

    #[test]
    fn the_lead_follows_the_host_as_old_wake_ups_are_halved_away() {
        let mut lead = Lead::new(Duration::ZERO);
        for _ in 0..HALVE_EVERY {
            lead.record(80_000);
        }
        assert!(lead.ns > 80_000);
        for _ in 0..5 * HALVE_EVERY {
            lead.record(10_000);
        }
        assert!(lead.ns <= 15_000, "{}", lead.ns);
    }

    #[test]
    fn a_sleeper_naps_to_the_lead_then_spins_to_the_departure() {
        let p = pacer(PollMode::Sleep, Replies::Stamped);
        let lead = p.lead_ns();
        let due = 1_000_000;
        assert_eq!(p.plan(turn(0, Some(due))), Wait::Nap { until: due - lead });
        assert_eq!(
            p.plan(turn(due - lead + 1, Some(due))),
            Wait::Spin { until: due }
        );
        // Nothing to send: asleep until the chore, replies or not.
        let t = turn(0, None);
        assert_eq!(p.plan(t), Wait::Nap { until: t.chore });
        // A backlog waits for a reply, woken by it.
        let t = Turn {
            backlogged: true,
            ..turn(0, Some(10))
        };
        assert_eq!(p.plan(t), Wait::Sleep { until: t.chore });
        // User timestamps: replies wake the sleeper.
        let p = pacer(PollMode::Sleep, Replies::WakeFor);
        assert_eq!(
            p.plan(turn(0, Some(due))),
            Wait::Sleep { until: due - lead }
        );
    }

    #[test]
    fn a_spinner_reads_the_clock_between_polls() {
        let mut p = pacer(PollMode::Spin, Replies::Stamped);
        let every = SPIN_POLL_EVERY.as_nanos() as u64;
        p.polled(1_000);
        assert_eq!(
            p.plan(turn(1_500, Some(5_000))),
            Wait::Spin { until: 5_000 }
        );
        assert_eq!(
            p.plan(turn(1_500, Some(1_000_000))),
            Wait::Spin {
                until: 1_000 + every
            }
        );
        assert_eq!(p.plan(turn(1_000 + every, Some(1_000_000))), Wait::Poll);
        // With user timestamps every turn polls.
        let p = pacer(PollMode::Spin, Replies::WakeFor);
        assert_eq!(p.plan(turn(1, Some(1_000_000))), Wait::Poll);
    }

    #[test]
    fn the_timer_is_armed_only_when_its_deadline_changes() {
        let mut p = pacer(PollMode::Sleep, Replies::WakeFor);
        assert_eq!(p.arm(100, 50), Some(Duration::ZERO));
        assert_eq!(p.arm(0, 5_000_000_000), Some(Duration::from_secs(1)));
        assert_eq!(p.armed, Some(5_000_000_000));
        assert_eq!(p.arm(10, 5_000_000_000), Some(Duration::from_secs(1)));
        p.fired();
        assert_eq!(p.armed, None);
    }
}
