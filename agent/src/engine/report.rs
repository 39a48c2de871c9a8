//! A worker's reports: every [`REPORT_EVERY`] (longer at low rates, see
//! [`Reports::follow`]) the interval's measurements go to the reader as one [`Batch`]
//! with the counts since the batch before, in a read batch the reader gave back when
//! there is one, so that the worker's loop allocates none.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use super::conn::Conn;
use super::epoch::Epoch;
use super::tally::Tally;
use crate::measure::{Batch, Counters};

/// How often a worker reports a batch, at the least.
pub(super) const REPORT_EVERY: Duration = Duration::from_millis(20);
/// At low rates a worker reports when about this many requests have gone out, not every
/// [`REPORT_EVERY`]: the reader's work for a batch (merging its histograms, a few tens of
/// µs whatever they hold) and the worker's wake-up to send it then follow the load. At
/// 100 req/s a batch of 20 ms held two requests, and the reports alone cost more than
/// the load's sends.
const REPORT_REQUESTS: f64 = 5.0;
/// The longest a worker goes without reporting, whatever its rate: the default warm-up
/// window (`warmup.window: 50ms`), so that each of its windows still sees a report (a
/// window without one repeats the last one's latency in the series its stationarity test
/// reads); a paused worker reports at this pace.
pub(super) const REPORT_EVERY_MAX: Duration = Duration::from_millis(50);

/// How often a worker sending `rate_per_s` requests a second (none: paused) reports.
pub(super) fn report_every(rate_per_s: Option<f64>) -> Duration {
    match rate_per_s {
        Some(rate) if rate > 0.0 => {
            Duration::from_secs_f64(REPORT_REQUESTS / rate).clamp(REPORT_EVERY, REPORT_EVERY_MAX)
        }
        _ => REPORT_EVERY_MAX,
    }
}

/// What a worker's reports need between two of them.
pub(super) struct Reports {
    /// The worker reporting.
    worker: u32,
    /// Read batches given back for reuse (see [`Reports::take`]).
    spares: Receiver<Batch>,
    /// A batch the reader had no room for yet: sent before any other.
    unsent: Option<Batch>,
    /// The counters as of the last batch sent, and the backlog's mark since.
    reported: Counters,
    backlog_max_since: u64,
    /// How often to report at the load's rate, ns.
    every_ns: u64,
}

impl Reports {
    /// The reports of `worker`, whose read batches come back through `spares`.
    pub(super) fn new(worker: u32, spares: Receiver<Batch>) -> Reports {
        Reports {
            worker,
            spares,
            unsent: None,
            reported: Counters::default(),
            backlog_max_since: 0,
            every_ns: REPORT_EVERY.as_nanos() as u64,
        }
    }

    /// Reports at the pace of a load of `rate_per_s` requests a second (none: paused).
    pub(super) fn follow(&mut self, rate_per_s: Option<f64>) {
        self.every_ns = report_every(rate_per_s).as_nanos() as u64;
    }

    /// How often to report now, ns.
    pub(super) fn every_ns(&self) -> u64 {
        self.every_ns
    }

    /// Notes that `waiting` requests wait in the backlog: the most since the last batch
    /// is its `backlog_max`.
    pub(super) fn backlog(&mut self, waiting: u64) {
        self.backlog_max_since = self.backlog_max_since.max(waiting);
    }

    /// The batch the reader had no room for, if one waits.
    pub(super) fn take_unsent(&mut self) -> Option<Batch> {
        self.unsent.take()
    }

    /// Holds `batch` until the reader has room: it goes before any other.
    pub(super) fn hold(&mut self, batch: Batch) {
        self.unsent = Some(batch);
    }

    /// The interval's batch: `tally`'s measurements, swapped for a spare (a read batch
    /// the engine gave back, emptied), after the first few reports the worker allocates
    /// none; with the counts since the last batch, `counters` first brought up to date
    /// with the thread's CPU time and `conns`' socket calls; `flush` as [`Tally::swap`]'s.
    pub(super) fn take(
        &mut self,
        tally: &mut Tally,
        counters: &mut Counters,
        (conns, flush): (&[Conn], Option<u64>),
        epoch: Epoch,
    ) -> Batch {
        let spare = self
            .spares
            .try_recv()
            .unwrap_or_else(|_| Batch::empty(self.worker));
        let mut batch = tally.swap(spare, flush);
        counters.cpu_ns = thread_cpu_ns();
        counters.send_calls = conns.iter().map(|c| c.calls().sends).sum();
        counters.read_calls = conns.iter().map(|c| c.calls().reads).sum();
        let mut counts = counters.since(&self.reported);
        counts.backlog_max = self.backlog_max_since.max(counters.backlog);
        self.backlog_max_since = counters.backlog;
        self.reported = *counters;
        batch.worker = self.worker;
        batch.generation = tally.generation();
        batch.elapsed = epoch.mono.elapsed();
        batch.counts = counts;
        batch
    }
}

/// The calling thread's CPU time, ns (0 if the clock cannot be read).
fn thread_cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| Duration::from(t).as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_follow_the_load_between_their_bounds() {
        assert_eq!(report_every(Some(100_000.0)), REPORT_EVERY);
        assert_eq!(report_every(Some(250.0)), REPORT_EVERY);
        assert_eq!(report_every(Some(125.0)), Duration::from_millis(40));
        assert_eq!(report_every(Some(100.0)), REPORT_EVERY_MAX);
        assert_eq!(report_every(Some(1.0)), REPORT_EVERY_MAX);
        assert_eq!(report_every(Some(0.0)), REPORT_EVERY_MAX);
        assert_eq!(report_every(None), REPORT_EVERY_MAX);
    }
}
