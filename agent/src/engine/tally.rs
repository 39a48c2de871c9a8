//! What a worker measures over one report interval, and which requests it keeps.
//!
//! The interval's measurements (kept samples, path probes, inter-departure gaps and the
//! histograms of every request) are filled in place in the [`Batch`] that will report
//! them, and handed over whole at each report for a spare one: the worker allocates no
//! buffer or histogram once its spares circulate.

use rand::RngExt;
use rand::rngs::SmallRng;

use super::inflight::Completed;
use super::stretch::Stretches;
use crate::measure::{Batch, Counters, Few, RequestKind, Sample};
use crate::stall::{StallInterval, StallSource};

/// The high bit of a path probe's sequence number: probes are numbered apart from the
/// load's requests, whose sequence (and so the kept samples' thinning and the
/// inter-departure gaps) they leave as it would be without them.
pub(super) const PROBE_SEQ: u64 = 1 << 63;

/// Departure ring for inter-departure gaps from TX timestamps (which arrive out of order
/// across connections).
const DEPARTURE_RING: usize = 4096;

/// The order a worker's departures are known in, which decides how their gaps are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DepartureOrder {
    /// In send order (user timestamps, read as each request is written): each gap is to
    /// the departure before.
    Sent,
    /// Out of order across connections (TX timestamps, read from each socket's error
    /// queue): each gap is to the previous sequence number, found in a ring.
    Stamped,
}

/// What a fresh tally keeps until it is given a sampling rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FirstSampling {
    /// Every request's sample: a latency agent's.
    Every,
    /// No sample at all: a throughput agent's, which only loads.
    Nothing,
}

/// One worker's measurements of the current interval, and the sampling they are kept
/// under.
pub(super) struct Tally {
    /// The interval's measurements so far, in the batch that reports them; its worker,
    /// generation, elapsed time and counts are set when it is taken (see
    /// [`Tally::swap`]).
    batch: Batch,
    /// Whether departures come from TX timestamps, out of order, or in send order.
    order: DepartureOrder,
    sampling: f64,
    /// Keep every this-many-th request, from `sample_from` on.
    sample_every: u64,
    /// A random offset: a request is kept when its sequence number plus this is a multiple
    /// of `sample_every`.
    sample_phase: u64,
    /// The first request sampling applies to (the first sent under the current generation).
    sample_from: u64,
    /// The sampling generation the current batch is kept under.
    generation: u64,
    /// The last departure, in send order (user timestamps).
    last_departure: Option<u64>,
    /// Recent departures by sequence number (TX timestamps).
    departures: Box<[(u64, u64); DEPARTURE_RING]>,
    /// The load's requests until those before them are answered, and their stretches.
    stretches: Stretches,
}

impl Tally {
    /// An empty tally of `worker`, keeping `first` until told otherwise, its departures
    /// known in `order`.
    pub(super) fn new(worker: u32, first: FirstSampling, order: DepartureOrder) -> Tally {
        Tally {
            batch: Batch::empty(worker),
            order,
            sampling: match first {
                FirstSampling::Every => 1.0,
                FirstSampling::Nothing => 0.0,
            },
            sample_every: 1,
            sample_phase: 0,
            sample_from: 0,
            generation: 0,
            last_departure: None,
            departures: Box::new([(u64::MAX, 0); DEPARTURE_RING]),
            stretches: Stretches::default(),
        }
    }

    /// The sampling generation the current batch is kept under.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Keeps every round(1/`rate`)-th request from request `from` on (none at a rate of
    /// 0), from a phase drawn from `rng`, in batches of `generation`.
    pub(super) fn set_sampling(
        &mut self,
        rate: f64,
        generation: u64,
        from: u64,
        rng: &mut SmallRng,
    ) {
        self.generation = generation;
        self.sample_from = from;
        self.sampling = rate;
        self.sample_every = if rate > 0.0 {
            (1.0 / rate).round().max(1.0) as u64
        } else {
            1
        };
        self.sample_phase = rng.random::<u64>() % self.sample_every;
    }

    /// The interval's measurements, handed over in their batch, `spare` (emptied) taking
    /// its place for the next interval. Kept samples whose stretch waits on a request
    /// still in flight go in a later batch, or, `flush`ed (before a change of sampling or
    /// the last batch), in this one, those requests taken as answered now (`now`).
    pub(super) fn swap(&mut self, spare: Batch, flush: Option<u64>) -> Batch {
        if let Some(now) = flush {
            self.stretches.flush(now, &mut self.batch.samples);
        }
        std::mem::replace(&mut self.batch, spare)
    }

    /// Request `seq` of the load was refused (to be sent again as another) or given up at
    /// `at`.
    pub(super) fn gone(&mut self, seq: u64, at: u64) {
        self.stretches.gone(seq, at, &mut self.batch.samples);
    }

    /// At `now`, the load's requests that have waited over `timeout` for their reply no
    /// longer hold back the samples after them.
    pub(super) fn expire(&mut self, now: u64, timeout: u64) {
        self.stretches.expire(now, timeout, &mut self.batch.samples);
    }

    /// Records the send lag of request `seq`, due at `scheduled`, that left at `sent` (ns),
    /// and (the load's) holds it until those before it are answered. While requests are
    /// thinned, one that left more than
    /// [`STALL_THRESHOLD_NS`](crate::stall::STALL_THRESHOLD_NS) late goes to the batch's
    /// stalls as a [`StallSource::Late`] interval (merged with the one before when they
    /// meet): the coordinator marks the kept requests by every late send, as it does by the
    /// kept ones' own lateness when it has them all.
    #[inline]
    pub(super) fn sent(&mut self, seq: u64, scheduled: u64, sent: u64) {
        let lag_ns = sent.saturating_sub(scheduled);
        let b = &mut self.batch;
        if seq & PROBE_SEQ == 0 {
            self.stretches.sent(seq, (scheduled, sent), &mut b.samples);
        }
        Few::record(&mut b.send_lag, &mut b.few.send_lag, lag_ns.max(1));
        if lag_ns > crate::stall::STALL_THRESHOLD_NS && self.sample_every > 1 {
            match b.stalls.intervals.last_mut() {
                Some(last) if last.source == StallSource::Late && last.end_ns >= scheduled => {
                    last.end_ns = last.end_ns.max(sent);
                }
                _ => b.stalls.push(StallInterval {
                    start_ns: scheduled,
                    end_ns: sent,
                    core: None,
                    source: StallSource::Late,
                }),
            }
        }
    }

    /// Records a departure; the gap to its predecessor or successor, once both are known,
    /// is an inter-departure sample.
    pub(super) fn departed(&mut self, seq: u64, at: u64) {
        // The gaps are the load's: a probe's departure is not one of them.
        if seq & PROBE_SEQ != 0 {
            return;
        }
        if self.order == DepartureOrder::Sent {
            if let Some(prev) = self.last_departure.replace(at)
                && self.keep(seq)
            {
                self.batch.interarrivals.push(at.saturating_sub(prev));
            }
            return;
        }
        // Requests that shared a send (see `dispatch`) share its stamp: the gaps are
        // between sends, and the zero between two requests of one send is none (an
        // exponential has no mass there, and one zero would make the fit test infinite).
        let ring = DEPARTURE_RING as u64;
        self.departures[(seq % ring) as usize] = (seq, at);
        if seq > 0 {
            let (s, t) = self.departures[((seq - 1) % ring) as usize];
            if s == seq - 1 && at != t && self.keep(seq) {
                self.batch.interarrivals.push(at.saturating_sub(t));
            }
        }
        let (s, t) = self.departures[((seq + 1) % ring) as usize];
        if s == seq + 1 && t != at && self.keep(seq + 1) {
            self.batch.interarrivals.push(t.saturating_sub(at));
        }
    }

    /// Whether request `seq` (or the gap ending at it) is kept: every k-th request, k =
    /// 1/sampling rounded, from a random phase. Systematic, not random, thinning: keeping
    /// each request with probability 1/k would leave a k-th of the kept samples next to
    /// each other, and the correlation the coordinator thins for would survive.
    #[inline]
    fn keep(&self, seq: u64) -> bool {
        self.sampling > 0.0
            && seq >= self.sample_from
            && (self.sample_every <= 1
                || (seq + self.sample_phase).is_multiple_of(self.sample_every))
    }

    /// Records a request completed on connection `conn`, counting in `counters` a probe's
    /// reply and a reply without the stamps a latency needs.
    pub(super) fn complete(&mut self, done: &Completed, conn: u16, counters: &mut Counters) {
        let p = &done.request;
        let sample = |latency_ns| Sample {
            departure_ns: done.departure,
            latency_ns,
            queueing_ns: p.sent.saturating_sub(p.scheduled).min(u32::MAX as u64) as u32,
            conn,
            request: p.kind as u8,
            outcome: done.outcome as u8,
            // Set as the requests before it are answered (`Stretches`).
            busy_ns: 0,
            in_flight: 0,
        };
        // A reply without an RX stamp has no latency to measure.
        if p.kind == RequestKind::Probe {
            counters.probes_received += 1;
            match done.latency {
                Some(latency) => self.batch.probes.push(sample(latency)),
                None => counters.tx_timestamps_missing += 1,
            }
            return;
        }
        let b = &mut self.batch;
        Few::record(
            &mut b.intended,
            &mut b.few.intended,
            done.replied.saturating_sub(p.scheduled).max(1),
        );
        let Some(latency) = done.latency else {
            counters.tx_timestamps_missing += 1;
            self.gone(p.seq, done.replied);
            return;
        };
        let b = &mut self.batch;
        Few::record(&mut b.latency, &mut b.few.latency, latency.max(1));
        if let Some(ns) = done.served_ns {
            let _ = self.batch.served.record(ns.max(1));
            let _ = self.batch.asked.record(p.service_ns.max(1));
        }
        let kept = self.keep(p.seq).then(|| sample(latency));
        (self.stretches).replied(p.seq, done.replied, kept, &mut self.batch.samples);
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// Thinned, a late send is a stall (those that meet, one); keeping every request, the
    /// coordinator reads each one's lateness from its sample, and none is logged.
    #[test]
    fn late_sends_are_stalls_only_while_thinned() {
        let mut t = Tally::new(0, FirstSampling::Every, DepartureOrder::Sent);
        t.sent(0, 1_000, 500_000);
        assert!(t.batch.stalls.is_empty());
        t.set_sampling(0.25, 1, 0, &mut SmallRng::seed_from_u64(1));
        t.sent(1, 2_000_000, 2_050_000);
        t.sent(2, 3_000_000, 3_200_000);
        t.sent(3, 3_100_000, 3_300_000);
        t.sent(4, 9_000_000, 9_150_000);
        let late: Vec<(u64, u64)> = (t.batch.stalls.intervals.iter())
            .map(|s| {
                assert_eq!(s.source, StallSource::Late);
                (s.start_ns, s.end_ns)
            })
            .collect();
        assert_eq!(late, [(3_000_000, 3_300_000), (9_000_000, 9_150_000)]);
    }
}
