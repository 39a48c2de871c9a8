//! The host's stalls, measured during every run: a thread that sleeps for a fixed period
//! and notes how late each wake-up comes.
//!
//! A hypervisor may take a vCPU away from its guest for milliseconds at a time; nothing
//! in the guest sees it happen, yet every request in flight on that core waits it out,
//! and the run's tail carries it. The calibration's spin
//! ([`CoreJitter`](crate::calibrate::CoreJitter)) finds such gaps, but only by taking a
//! core for itself and only before the run. This probe costs one wake-up per period (a
//! few microseconds a millisecond) and runs beside the load, so that a run can say how
//! much of its tail the host accounts for, with a figure measured at the same time.
//!
//! A wake-up is late by the time from its deadline (an absolute `CLOCK_MONOTONIC` time,
//! so that lateness does not accumulate into drift) to the moment the thread runs again:
//! the timer's own latency (tens of µs on a quiet core, the timer slack set to 1 ns) plus
//! any time the core was not the guest's, or was busy with other work.
//!
//! Each stall is also kept as an interval ([`StallInterval`](crate::StallInterval): from
//! the deadline the late wake-up was due at to the wake-up), on the probe's clock
//! (`CLOCK_MONOTONIC`);
//! [`crate::stall`]'s doc states what a probe of [`PROBE_PERIOD`] sees and how well.
//!
//! ```no_run
//! use std::time::Duration;
//! use vernier_agent::{HostProbe, PROBE_PERIOD};
//!
//! let probe = HostProbe::start(Some(1), PROBE_PERIOD)?;
//! std::thread::sleep(Duration::from_secs(1));
//! let (report, stalls) = probe.take_all();
//! // wake-ups 200 µs apart came p50 55 µs, p99 1.2 ms, max 3.4 ms late; ...
//! println!("{report}; {} stalls over 100 µs", stalls.intervals.len());
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::measure::histogram;
use crate::stall::{PROBE_PERIOD, StallLog, stall_of_wakeup};
use crate::sys::{monotonic_ns, pin_current_thread, set_thread_realtime, sleep_until};

/// A wake-up later than this is a stall: ten times the tails of the microsecond services
/// vernier measures, and far beyond what a timer on a core of its own needs.
pub const STALL_NS: u64 = 1_000_000;

/// Lateness beyond this is time the core was not the probe's: a timer on a core that is
/// ours fires within tens of µs, so what a wake-up is later than 100 µs is the host (or
/// another task) holding the core.
pub const NOT_OURS_NS: u64 = 100_000;

/// The probe's `SCHED_FIFO` priority: above every ordinary thread, low among real-time
/// ones (the kernel's own run at 50 and up), and harmless since it sleeps all but a few
/// microseconds a period.
pub const REALTIME_PRIORITY: i32 = 10;

/// The period [`HostProbe::start`] is usually given: [`PROBE_PERIOD`], chosen from the
/// detection limits its intervals need (see [`crate::stall`]).
pub const DEFAULT_PERIOD: Duration = PROBE_PERIOD;

/// A thread measuring how late its timer wake-ups come, on one core or wherever the
/// scheduler puts it. Dropping it stops the thread (within a period) and waits for it.
pub struct HostProbe {
    cpu: Option<usize>,
    /// The period, ns, read by the probe's thread at each wake-up.
    period_ns: Arc<AtomicU64>,
    realtime: bool,
    tally: Arc<Mutex<Tally>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for HostProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostProbe")
            .field("cpu", &self.cpu)
            .field("period_ns", &self.period_ns)
            .field("realtime", &self.realtime)
            .finish_non_exhaustive()
    }
}

/// What the probe saw since the last take.
struct Tally {
    late: Histogram<u64>,
    wakeups: u64,
    stalls: u64,
    not_ours_ns: u64,
    max_ns: u64,
    since_ns: u64,
    /// The stalls as intervals (a wake-up more than [`NOT_OURS_NS`] late).
    intervals: StallLog,
}

impl Tally {
    fn new(since_ns: u64) -> Tally {
        Tally {
            late: histogram(),
            wakeups: 0,
            stalls: 0,
            not_ours_ns: 0,
            max_ns: 0,
            since_ns,
            intervals: StallLog::default(),
        }
    }

    /// A wake-up at `now` from a sleep to `deadline`, the one before at `previous`, of the
    /// probe on `core`: its lateness tallied, and its stall kept if it is one.
    fn wakeup(&mut self, previous: u64, deadline: u64, now: u64, core: Option<u32>) {
        self.record(now.saturating_sub(deadline));
        if let Some(stall) = stall_of_wakeup(previous, deadline, now, core) {
            self.intervals.push(stall);
        }
    }

    fn record(&mut self, late_ns: u64) {
        self.late.saturating_record(late_ns.max(1));
        self.wakeups += 1;
        self.max_ns = self.max_ns.max(late_ns);
        if late_ns > STALL_NS {
            self.stalls += 1;
        }
        self.not_ours_ns += late_ns.saturating_sub(NOT_OURS_NS);
    }

    fn report(
        self,
        cpu: Option<usize>,
        period: Duration,
        realtime: bool,
        now_ns: u64,
    ) -> StallReport {
        let seconds = now_ns.saturating_sub(self.since_ns) as f64 / 1e9;
        let us = |q: f64| {
            if self.late.is_empty() {
                0.0
            } else {
                self.late.value_at_quantile(q) as f64 / 1e3
            }
        };
        StallReport {
            cpu,
            realtime,
            period_us: period.as_secs_f64() * 1e6,
            seconds,
            wakeups: self.wakeups,
            late_p50_us: us(0.5),
            late_p99_us: us(0.99),
            late_max_us: self.max_ns as f64 / 1e3,
            stalls_over_1ms: self.stalls,
            stalled_share: if seconds > 0.0 {
                self.not_ours_ns as f64 / 1e9 / seconds
            } else {
                0.0
            },
            late: Lateness(Some(self.late)),
        }
    }
}

/// The tally, even if a thread panicked holding it (its figures are still counts).
fn lock(tally: &Mutex<Tally>) -> MutexGuard<'_, Tally> {
    tally.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What `tally` holds, swapped for a fresh one counting from now, and now
/// (`CLOCK_MONOTONIC`, ns). The fresh histogram is allocated before the lock, so that the
/// thread that records never waits for an allocation.
fn take_tally(tally: &Mutex<Tally>) -> (Tally, u64) {
    let mut fresh = Tally::new(0);
    let mut tally = lock(tally);
    let now = monotonic_ns();
    fresh.since_ns = now;
    std::mem::swap(&mut *tally, &mut fresh);
    (fresh, now)
}

/// A worker's own wake-ups as the stall probe of its core: a worker that sleeps until just
/// before each departure knows the deadline it asked for and when it ran again, as a
/// probe thread does, so a probe beside it would only add wake-ups (and their cost) to the
/// core it measures. Its figures come as a [`StallReport`] like a probe's, its `period_us`
/// the mean time between wake-ups; the stalls themselves ride in the worker's batches.
#[derive(Clone)]
pub struct CoreWatch {
    cpu: Option<usize>,
    tally: Arc<Mutex<Tally>>,
}

impl std::fmt::Debug for CoreWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreWatch")
            .field("cpu", &self.cpu)
            .finish_non_exhaustive()
    }
}

impl CoreWatch {
    /// The watch of a worker pinned to `cpu` (`None`: unpinned).
    pub fn new(cpu: Option<usize>) -> CoreWatch {
        CoreWatch {
            cpu,
            tally: Arc::new(Mutex::new(Tally::new(monotonic_ns()))),
        }
    }

    /// A wake-up `late_ns` after the deadline the worker slept to.
    pub fn wakeup(&self, late_ns: u64) {
        lock(&self.tally).record(late_ns);
    }

    /// The core watched (`None`: an unpinned worker, wherever the scheduler ran it).
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// What the wake-ups showed since the last take (or since the start), as a probe's
    /// report: a delta, counting afresh after it. Not real-time: a worker runs at an
    /// ordinary (raised) priority, so its lateness holds the threads that share its core.
    pub fn take(&self) -> StallReport {
        let (fresh, now) = take_tally(&self.tally);
        let seconds = now.saturating_sub(fresh.since_ns) as f64 / 1e9;
        let period = if fresh.wakeups > 0 {
            Duration::from_secs_f64(seconds / fresh.wakeups as f64)
        } else {
            Duration::ZERO
        };
        fresh.report(self.cpu, period, false, now)
    }
}

impl HostProbe {
    /// Starts the probe's thread, pinned to `cpu` if given (the core whose stalls matter:
    /// a worker's), waking every `period`, at a real-time priority when the process may
    /// set one ([`REALTIME_PRIORITY`]; then no ordinary thread, vernier's own included,
    /// delays it, and what it measures is the host's). Fails for a zero period, a CPU this
    /// process may not run on, or a thread that cannot be spawned.
    pub fn start(cpu: Option<usize>, period: Duration) -> io::Result<HostProbe> {
        let period_ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        if period_ns == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a host probe needs a period above zero",
            ));
        }
        let tally = Arc::new(Mutex::new(Tally::new(monotonic_ns())));
        let stop = Arc::new(AtomicBool::new(false));
        let period = Arc::new(AtomicU64::new(period_ns));
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(cpu.map_or("vernier-probe".into(), |c| format!("vernier-probe-{c}")))
            .spawn({
                let (tally, stop, period) =
                    (Arc::clone(&tally), Arc::clone(&stop), Arc::clone(&period));
                move || {
                    if let Some(cpu) = cpu
                        && let Err(e) = pin_current_thread(cpu)
                    {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                    // The default slack (50 µs) would make every wake-up that late by design.
                    // Best effort: without it the lateness is only higher.
                    let _ = nix::sys::prctl::set_timerslack(1);
                    // Best effort too: without it (not root) the figure also holds the
                    // ordinary threads that share the core, and says so.
                    let realtime = set_thread_realtime(REALTIME_PRIORITY).is_ok();
                    lock(&tally).since_ns = monotonic_ns();
                    let _ = ready_tx.send(Ok(realtime));
                    drop(ready_tx);
                    let core = cpu.and_then(|c| u32::try_from(c).ok());
                    run(&period, core, &tally, &stop);
                }
            })?;
        let started = ready_rx.recv();
        let realtime = match started {
            Ok(Ok(realtime)) => realtime,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(io::Error::other(e));
            }
            Err(_) => {
                let _ = thread.join();
                return Err(io::Error::other(
                    "the host probe's thread ended before it started",
                ));
            }
        };
        Ok(HostProbe {
            cpu,
            period_ns: period,
            realtime,
            tally,
            stop,
            thread: Some(thread),
        })
    }

    /// The core probed (`None`: unpinned).
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// The time between wake-ups now.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns.load(Ordering::Relaxed))
    }

    /// Wakes every `period` from the next wake-up on (a zero period is ignored): a run
    /// whose load sends rarely probes no more often than it sends (see
    /// [`probe_period`](crate::probe_period)).
    pub fn set_period(&self, period: Duration) {
        let ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        if ns > 0 {
            self.period_ns.store(ns, Ordering::Relaxed);
        }
    }

    /// Whether the probe runs at a real-time priority (see [`HostProbe::start`]).
    pub fn realtime(&self) -> bool {
        self.realtime
    }

    /// What was seen since the last take (or since the start): a delta; the probe starts
    /// counting afresh. The stalls' intervals are dropped: [`HostProbe::take_all`] keeps
    /// them.
    pub fn take(&self) -> StallReport {
        self.take_all().0
    }

    /// The stalls kept since the last take, as [`HostProbe::take_all`] gives them, without
    /// taking the tallies (no histogram is made: cheap enough for every batch).
    pub fn take_stalls(&self) -> StallLog {
        std::mem::take(&mut lock(&self.tally).intervals)
    }

    /// A probe on each of `cpus` (each once; one unpinned when there are none), at
    /// [`DEFAULT_PERIOD`]: what an agent runs beside its workers. A probe that cannot start
    /// is left out (its core's stalls then go unseen; the workers' own spins still tell).
    pub fn on_cores(cpus: &[usize]) -> Vec<HostProbe> {
        let mut cores: Vec<Option<usize>> = Vec::new();
        for &cpu in cpus {
            if !cores.contains(&Some(cpu)) {
                cores.push(Some(cpu));
            }
        }
        if cores.is_empty() {
            cores.push(None);
        }
        cores
            .into_iter()
            .filter_map(|cpu| HostProbe::start(cpu, DEFAULT_PERIOD).ok())
            .collect()
    }

    /// What was seen since the last take, as [`HostProbe::take`] gives it, and each stall
    /// as an interval on `CLOCK_MONOTONIC` ([`StallLog::since`] moves them to an engine's
    /// clock), at most [`MAX_INTERVALS`](crate::MAX_INTERVALS) of them.
    pub fn take_all(&self) -> (StallReport, StallLog) {
        let (mut fresh, now) = take_tally(&self.tally);
        let intervals = std::mem::take(&mut fresh.intervals);
        (
            fresh.report(self.cpu, self.period(), self.realtime, now),
            intervals,
        )
    }
}

impl Drop for HostProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The probe's loop: sleep to the deadline, note how late the wake-up came (and the
/// stall, from the deadline missed, when it is one), next deadline.
fn run(period: &AtomicU64, core: Option<u32>, tally: &Mutex<Tally>, stop: &AtomicBool) {
    let mut previous = monotonic_ns();
    let mut deadline = previous.saturating_add(period.load(Ordering::Relaxed));
    while !stop.load(Ordering::Relaxed) {
        sleep_until(deadline);
        let now = monotonic_ns();
        lock(tally).wakeup(previous, deadline, now, core);
        previous = now;
        deadline = next_deadline(deadline, period.load(Ordering::Relaxed), now);
    }
}

/// The first deadline after `now` on the grid `deadline + k·period`. Deadlines missed in a
/// stall are skipped rather than fired at once: a stall counts once, by its length, not
/// again in each deadline it swallowed.
pub(crate) fn next_deadline(deadline: u64, period_ns: u64, now: u64) -> u64 {
    let next = deadline.saturating_add(period_ns);
    if next > now {
        next
    } else {
        next.saturating_add((now - next) / period_ns * period_ns + period_ns)
    }
}

/// How late a probe's wake-ups came over some time: the host's stalls of one core (or of
/// the unpinned coordinator).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StallReport {
    /// The core probed (`None`: unpinned, wherever the scheduler ran the probe).
    pub cpu: Option<usize>,
    /// Whether the probe ran at a real-time priority: then its lateness is the host's (a
    /// vCPU taken away) and the kernel's; otherwise it also holds the ordinary threads that
    /// shared its core, vernier's own among them.
    #[serde(default)]
    pub realtime: bool,
    /// The wake-ups' period, µs.
    pub period_us: f64,
    /// How long the report covers, seconds.
    pub seconds: f64,
    /// Wake-ups seen.
    pub wakeups: u64,
    /// Median lateness, µs.
    pub late_p50_us: f64,
    /// 99th percentile of the lateness, µs.
    pub late_p99_us: f64,
    /// The latest wake-up's lateness, µs.
    pub late_max_us: f64,
    /// Wake-ups more than [`STALL_NS`] (1 ms) late.
    pub stalls_over_1ms: u64,
    /// The lateness beyond [`NOT_OURS_NS`] (100 µs), summed, as a share of
    /// [`seconds`](StallReport::seconds): the share of time the core was not ours.
    pub stalled_share: f64,
    /// The lateness histogram (ns), so that merged reports have exact percentiles. Not
    /// serialized: a report read back has its figures only.
    #[serde(skip)]
    late: Lateness,
}

/// The histogram a [`StallReport`] keeps for merging. It takes no part in comparisons (two
/// reports are equal when their figures are, and a report read back from JSON has none)
/// and shows only its count in `Debug` (its tens of thousands of buckets say nothing).
#[derive(Clone, Default)]
struct Lateness(Option<Histogram<u64>>);

impl PartialEq for Lateness {
    fn eq(&self, _: &Lateness) -> bool {
        true
    }
}

impl std::fmt::Debug for Lateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(h) => write!(f, "Lateness({} wake-ups)", h.len()),
            None => f.write_str("Lateness(none)"),
        }
    }
}

impl StallReport {
    /// Which core the report is of, as displays name it: `cpu 1` (a probe or a worker
    /// pinned there) or `unpinned` (unpinned workers, or the session's probe wherever the
    /// scheduler ran it).
    pub fn name(&self) -> String {
        self.cpu
            .map_or("unpinned".to_string(), |c| format!("cpu {c}"))
    }

    /// Adds `other`, a later report of the same probe (or of another: the percentiles are
    /// then the pooled wake-ups'). Counts and seconds add up, the maximum is the larger,
    /// the share is weighted by seconds. The percentiles come from the merged histogram
    /// when both reports have theirs; otherwise (reports read back from JSON) the median is
    /// the wake-up-weighted mean of the two and the p99 the larger one, an upper bound of
    /// the pooled p99.
    pub fn merge(&mut self, other: &StallReport) {
        if self.wakeups == 0 && self.seconds == 0.0 {
            // Nothing yet (a default report): the other, as it is.
            *self = other.clone();
            return;
        }
        self.realtime &= other.realtime;
        let late = match (self.late.0.take(), other.late.0.as_ref()) {
            (Some(mut mine), Some(theirs)) => mine.add(theirs).ok().map(|()| mine),
            (None, Some(theirs)) if self.wakeups == 0 => Some(theirs.clone()),
            (Some(mine), None) if other.wakeups == 0 => Some(mine),
            _ => None,
        };
        match &late {
            Some(h) if !h.is_empty() => {
                self.late_p50_us = h.value_at_quantile(0.5) as f64 / 1e3;
                self.late_p99_us = h.value_at_quantile(0.99) as f64 / 1e3;
            }
            _ if other.wakeups == 0 => {}
            _ if self.wakeups == 0 => {
                self.late_p50_us = other.late_p50_us;
                self.late_p99_us = other.late_p99_us;
            }
            _ => {
                let (a, b) = (self.wakeups as f64, other.wakeups as f64);
                self.late_p50_us = (self.late_p50_us * a + other.late_p50_us * b) / (a + b);
                self.late_p99_us = self.late_p99_us.max(other.late_p99_us);
            }
        }
        self.late = Lateness(late);
        let seconds = self.seconds + other.seconds;
        let not_ours = self.stalled_share * self.seconds + other.stalled_share * other.seconds;
        self.stalled_share = if seconds > 0.0 {
            not_ours / seconds
        } else {
            0.0
        };
        self.seconds = seconds;
        self.wakeups += other.wakeups;
        self.late_max_us = self.late_max_us.max(other.late_max_us);
        self.stalls_over_1ms += other.stalls_over_1ms;
    }

    /// The same figures without the histogram: what events and results carry (a report
    /// is then a few dozen bytes rather than a couple of hundred kilobytes).
    pub fn without_histogram(&self) -> StallReport {
        StallReport {
            cpu: self.cpu,
            realtime: self.realtime,
            period_us: self.period_us,
            seconds: self.seconds,
            wakeups: self.wakeups,
            late_p50_us: self.late_p50_us,
            late_p99_us: self.late_p99_us,
            late_max_us: self.late_max_us,
            stalls_over_1ms: self.stalls_over_1ms,
            stalled_share: self.stalled_share,
            late: Lateness(None),
        }
    }

    /// In a few words, for a table's line: `p99 1.2 ms, max 3.4 ms, 7 stalls > 1 ms, 1.3%
    /// stalled` (the lateness of the wake-ups; the share of time the core was not ours).
    pub fn short(&self) -> String {
        if self.wakeups == 0 {
            return "no wake-ups measured".into();
        }
        format!(
            "p99 {}, max {}, {} stall{} > 1 ms, {} stalled",
            fmt_late(self.late_p99_us),
            fmt_late(self.late_max_us),
            self.stalls_over_1ms,
            if self.stalls_over_1ms == 1 { "" } else { "s" },
            percent(self.stalled_share)
        )
    }
}

/// `wake-ups 1 ms apart came p50 55 µs, p99 1.2 ms, max 3.4 ms late; 7 stalls > 1 ms in
/// 10.0 s (1.3% of the time)`.
impl std::fmt::Display for StallReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.wakeups == 0 {
            return write!(f, "no wake-ups measured in {:.1} s", self.seconds);
        }
        write!(
            f,
            "wake-ups {} apart came p50 {}, p99 {}, max {} late; {} stall{} > 1 ms in {:.1} s ({} of the time)",
            fmt_late(self.period_us),
            fmt_late(self.late_p50_us),
            fmt_late(self.late_p99_us),
            fmt_late(self.late_max_us),
            self.stalls_over_1ms,
            if self.stalls_over_1ms == 1 { "" } else { "s" },
            self.seconds,
            percent(self.stalled_share)
        )?;
        if !self.realtime {
            f.write_str(" (an ordinary-priority probe: other threads on its core delay it too)")?;
        }
        Ok(())
    }
}

/// A lateness (or period) in µs as people read it: `55 µs`, `1.2 ms`, `3 ms`, `14 ms`,
/// `1.25 s`.
pub fn fmt_late(us: f64) -> String {
    let trim = |s: String| s.replace(".0 ", " ");
    if us < 999.5 {
        format!("{us:.0} µs")
    } else if us < 9_950.0 {
        trim(format!("{:.1} ms", us / 1e3))
    } else if us < 999_500.0 {
        format!("{:.0} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A share as a percentage, with a second decimal below 0.1%.
fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct > 0.0 && pct < 0.1 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.1}%")
    }
}

#[cfg(test)]
mod tests;
