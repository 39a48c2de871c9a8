//! What the workers measure and hand to the control plane: kept samples, sampled
//! inter-departure gaps, HDR histograms of every request, and counters.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::stall::StallLog;

/// A request left on schedule when it left within this of its scheduled departure, or
/// within the tolerance asked where that is wider: the agent's own send path costs 4-7 µs
/// on loopback, so a tighter bound would call every request of a burst late. The
/// coordinator's departure check and the pacer's aim before the coordinator gives a
/// tolerance both start from it.
pub const ON_SCHEDULE_NS: u32 = 10_000;

/// One kept request. 32 bytes: a million kept samples cost 32 MB. Plain old data with no
/// padding, so that a batch's samples go on the wire as their own bytes (little-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Sample {
    /// When it left, ns since the engine started (kernel TX time in kernel/hw modes).
    pub departure_ns: u64,
    /// Reply received minus request departed, ns.
    pub latency_ns: u64,
    /// Actual minus scheduled departure, ns (client-side queueing: send lag and backlog).
    pub queueing_ns: u32,
    /// Connection index within the agent.
    pub conn: u16,
    /// What was asked ([`RequestKind`] as u8).
    pub request: u8,
    /// What came back ([`Outcome`] as u8).
    pub outcome: u8,
    /// From the start of the worker's busy stretch it joined (the last scheduled send by
    /// which every request sent before it had its reply) to its own scheduled send, ns, at
    /// most `u32::MAX` (4.3 s; also when not known): with the latency, the window in which
    /// a stall may have changed it, known for a kept request however many were not kept.
    pub busy_ns: u32,
    /// The worker's requests whose reply it had not yet read when this one left (itself
    /// not counted): a reply come during a nap is read after the send that ends it.
    pub in_flight: u32,
}

const _: () = assert!(
    std::mem::size_of::<Sample>() == 32,
    "a kept sample is 32 bytes, with no padding"
);

/// The request's kind, as stored in a [`Sample`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RequestKind {
    /// A read.
    Get = 0,
    /// A write.
    Set = 1,
    /// A synthetic spin or an echo.
    Other = 2,
    /// A path probe: a synthetic request asking for no service time (see
    /// [`crate::Workload::Synthetic`]'s `probe`), kept in [`Batch::probes`] only.
    Probe = 3,
}

/// What the reply meant, as stored in a [`Sample`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    /// A read that found its key.
    Hit = 0,
    /// A read that did not.
    Miss = 1,
    /// Any other success.
    Ok = 2,
    /// The server answered with an error.
    Error = 3,
}

impl Outcome {
    /// What a reply of `kind` meant: a hit, a miss, an error, or any other success.
    pub(crate) fn of(kind: vernier_protocols::ReplyKind) -> Outcome {
        use vernier_protocols::ReplyKind;
        match kind {
            ReplyKind::Hit => Outcome::Hit,
            ReplyKind::Miss => Outcome::Miss,
            ReplyKind::Error => Outcome::Error,
            _ => Outcome::Ok,
        }
    }
}

/// Counts of one worker: cumulative (from the start, as [`crate::Engine::counters`] gives
/// them) or over one interval (as a [`Batch`] carries them: the totals counted in it, the
/// gauges `in_flight` and `backlog` as at its end, `backlog_max` the most in it). Every
/// send is, at any instant, exactly one of received, failed, retried or in flight: from
/// the start, `sent = received + failed + retried + in_flight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Requests handed to the socket.
    pub sent: u64,
    /// Replies parsed (of any kind, errors included).
    pub received: u64,
    /// Requests that will never be answered: timed out, or lost with their connection.
    pub failed: u64,
    /// Requests sent and not yet answered or failed.
    pub in_flight: u64,
    /// Of `received`, replies that reported an error.
    pub error_replies: u64,
    /// Of `failed`, those that timed out.
    pub timeouts: u64,
    /// Sends the server refused unprocessed (an HTTP/2 stream above a GOAWAY's last stream
    /// id, or reset with REFUSED_STREAM), each sent again with its original schedule (and
    /// counted in `sent` again): neither answered nor failed.
    pub retried: u64,
    /// Bytes written.
    pub bytes_sent: u64,
    /// Bytes read.
    pub bytes_received: u64,
    /// Connections re-established after being lost.
    pub reconnects: u64,
    /// Attempts to connect that failed.
    pub connect_failures: u64,
    /// Connections closed for a reply that could not be parsed.
    pub parse_errors: u64,
    /// Due requests waiting for a free slot now.
    pub backlog: u64,
    /// The most that ever waited at once.
    pub backlog_max: u64,
    /// Requests answered whose kernel/NIC TX timestamp never came (not in the samples).
    pub tx_timestamps_missing: u64,
    /// CPU time the worker thread used, ns (as of its last report): divided by `sent`,
    /// what a request costs the agent.
    pub cpu_ns: u64,
    /// Time the worker spent sending requests (drawing, encoding, the socket call, the
    /// bookkeeping), ns: divided by `sent`, a request's send cost, whether or not the
    /// worker spins between requests.
    pub send_ns: u64,
    /// Socket calls that sent (partial and refused sends included): divided by `sent`,
    /// how many requests share a send.
    pub send_calls: u64,
    /// Socket calls that read, replies and TX stamps, those that found nothing included.
    pub read_calls: u64,
    /// Of `sent`, path probes (see [`crate::Workload::Synthetic`]'s `probe`): the load's
    /// own requests are `sent - probes_sent`.
    pub probes_sent: u64,
    /// Of `received`, replies to path probes (counted as they complete: with kernel
    /// stamps, once the TX stamp is in).
    pub probes_received: u64,
}

/// What one worker reports for one interval. Batches go back to their worker through
/// [`crate::Engine::recycle`] once read, so that the worker's loop allocates none.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The worker.
    pub worker: u32,
    /// The sampling generation in force over the whole interval (the one of the last
    /// [`crate::Engine::set_sampling`] the worker applied, 0 before any): every sample and
    /// gap in the batch was kept under it, from a request sent after the worker applied
    /// it. A worker ends its batch when a new generation arrives, so a batch never mixes
    /// two: the generation is the agent's acknowledgement of the change.
    pub generation: u64,
    /// Since the engine started, at the end of the interval.
    pub elapsed: Duration,
    /// Samples kept in the interval (the load's requests only).
    pub samples: Vec<Sample>,
    /// Every path probe completed in the interval with a latency (none without a probe):
    /// kept apart from the load's samples and histograms, which they would otherwise
    /// bias toward no service time.
    pub probes: Vec<Sample>,
    /// Inter-departure gaps kept in the interval, ns.
    pub interarrivals: Vec<u64>,
    /// Latency of every request completed in the interval, ns.
    pub latency: Histogram<u64>,
    /// Reply received minus *scheduled* departure, ns: what a user waiting on a backlogged
    /// client would see.
    pub intended: Histogram<u64>,
    /// Actual minus scheduled departure of every request sent in the interval, ns.
    pub send_lag: Histogram<u64>,
    /// The time the server says it served each of the load's requests completed in the
    /// interval, ns, where its replies say (the synthetic protocol; empty otherwise).
    pub served: Histogram<u64>,
    /// The service time those same requests asked for, ns: with `served`, what the server
    /// took beyond what it was asked.
    pub asked: Histogram<u64>,
    /// The values recorded into `latency`, `intended` and `send_lag` while they are few:
    /// what a reader merges a batch of few requests with (see [`Recorded`]). Not sent
    /// over the wire: a remote agent's batch merges whole.
    pub few: Few,
    /// What was counted in the interval (totals as deltas, gauges at its end), like the
    /// histograms: a batch stands on its own.
    pub counts: Counters,
    /// The stalls seen in the interval, on the samples' clock: the worker's own, when it
    /// spins (a zero-timeout poll that took longer than
    /// [`STALL_THRESHOLD_NS`](crate::STALL_THRESHOLD_NS)), and those of host probes that
    /// the agent (or, for an agent in its process, the session) runs, added on the way.
    pub stalls: StallLog,
}

impl Batch {
    /// An empty batch of `worker`, its buffers sized for an interval's samples.
    pub fn empty(worker: u32) -> Batch {
        Batch {
            worker,
            generation: 0,
            elapsed: Duration::ZERO,
            samples: Vec::with_capacity(SAMPLES_PER_BATCH),
            probes: Vec::new(),
            interarrivals: Vec::with_capacity(GAPS_PER_BATCH),
            latency: histogram(),
            intended: histogram(),
            send_lag: histogram(),
            served: histogram(),
            asked: histogram(),
            few: Few {
                latency: Vec::with_capacity(FEW),
                intended: Vec::with_capacity(FEW),
                send_lag: Vec::with_capacity(FEW),
            },
            counts: Counters::default(),
            stalls: StallLog::with_room(crate::stall::STALLS_PER_BATCH),
        }
    }

    /// The latency of every request completed in the interval, with its values while few.
    pub fn recorded_latency(&self) -> Recorded<'_> {
        Recorded {
            whole: &self.latency,
            few: &self.few.latency,
        }
    }

    /// Reply received minus scheduled departure, with its values while few.
    pub fn recorded_intended(&self) -> Recorded<'_> {
        Recorded {
            whole: &self.intended,
            few: &self.few.intended,
        }
    }

    /// Actual minus scheduled departure of every request sent, with its values while few.
    pub fn recorded_send_lag(&self) -> Recorded<'_> {
        Recorded {
            whole: &self.send_lag,
            few: &self.few.send_lag,
        }
    }

    /// Empties the batch for reuse, keeping its buffers' capacity.
    pub(crate) fn clear(&mut self) {
        self.samples.clear();
        self.probes.clear();
        self.interarrivals.clear();
        // A reset writes every counter (28,672 of them): only a histogram that holds
        // something needs one (the served and asked ones stay empty but for the synthetic
        // protocol, and all do while the load is paused).
        for h in [
            &mut self.latency,
            &mut self.intended,
            &mut self.send_lag,
            &mut self.served,
            &mut self.asked,
        ] {
            if !h.is_empty() {
                h.reset();
            }
        }
        self.few.clear();
        self.counts = Counters::default();
        self.stalls.clear();
        self.generation = 0;
    }
}

/// How many values of a histogram a [`Batch`] keeps beside it: a batch of 20 ms at up
/// to 3,200 requests a second, or of 50 ms at 100 (see the worker's reports).
pub const FEW: usize = 64;

/// The values recorded into a [`Batch`]'s `latency`, `intended` and `send_lag`, each
/// while it holds at most [`FEW`] (then no more are kept, and the histogram is read whole).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Few {
    /// Of [`Batch::latency`], ns.
    pub latency: Vec<u64>,
    /// Of [`Batch::intended`], ns.
    pub intended: Vec<u64>,
    /// Of [`Batch::send_lag`], ns.
    pub send_lag: Vec<u64>,
}

impl Few {
    /// Records `value` into `histogram` and, while they are few, into `few`.
    #[inline]
    pub(crate) fn record(histogram: &mut Histogram<u64>, few: &mut Vec<u64>, value: u64) {
        if histogram.record(value).is_ok() && few.len() < FEW {
            few.push(value);
        }
    }

    fn clear(&mut self) {
        self.latency.clear();
        self.intended.clear();
        self.send_lag.clear();
    }
}

/// One of a batch's histograms and, when it holds few, every value recorded into it.
/// Merging it records those few values (nanoseconds) rather than walking the 28,672
/// counters of the histogram (tens of µs, whatever it holds): a reader's work for a
/// batch then follows the requests in it. The result is the same histogram either way.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    whole: &'a Histogram<u64>,
    few: &'a [u64],
}

impl<'a> Recorded<'a> {
    /// A histogram whose values are not known one by one.
    pub fn whole(histogram: &'a Histogram<u64>) -> Recorded<'a> {
        Recorded {
            whole: histogram,
            few: &[],
        }
    }

    /// Its values, when they are all known.
    fn values(&self) -> Option<&'a [u64]> {
        (self.few.len() as u64 == self.whole.len()).then_some(self.few)
    }

    /// Adds it to `into`, a [`histogram`] (the same buckets).
    pub fn add_to(&self, into: &mut Histogram<u64>) {
        match self.values() {
            Some(values) => {
                for &v in values {
                    into.saturating_record(v);
                }
            }
            None => {
                let _ = into.add(self.whole);
            }
        }
    }

    /// Its mean, as [`Histogram::mean`] computes it (each value at the middle of its
    /// bucket), 0 when empty.
    pub fn mean(&self) -> f64 {
        match self.values() {
            Some([]) => 0.0,
            Some(values) => {
                values
                    .iter()
                    .map(|&v| self.whole.median_equivalent(v) as f64)
                    .sum::<f64>()
                    / values.len() as f64
            }
            None => self.whole.mean(),
        }
    }

    /// How many values it holds.
    pub fn len(&self) -> u64 {
        self.whole.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.whole.is_empty()
    }
}

/// Samples a batch has room for before its buffer grows: 20 ms at 800,000 kept a second.
const SAMPLES_PER_BATCH: usize = 1 << 14;
/// Gaps likewise.
const GAPS_PER_BATCH: usize = 1 << 12;

/// A histogram of nanoseconds from 1 ns to 100 s at three significant digits: the shape of
/// every latency, intended and send-lag histogram a [`Batch`] carries.
#[allow(clippy::expect_used)]
pub fn histogram() -> Histogram<u64> {
    // Constant bounds that hdrhistogram documents as valid: this cannot fail at run time.
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid constant histogram bounds")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch's latency after recording `values` the way a worker does.
    fn batch_of(values: &[u64]) -> Batch {
        let mut b = Batch::empty(0);
        for &v in values {
            Few::record(&mut b.latency, &mut b.few.latency, v);
        }
        b
    }

    /// What merging the whole histogram gives: the reference.
    fn merged_whole(into: &Histogram<u64>, b: &Batch) -> Histogram<u64> {
        let mut h = into.clone();
        h.add(&b.latency).unwrap();
        h
    }

    #[test]
    fn a_few_values_merge_as_their_histogram_would() {
        let mut into = histogram();
        into.record(7_000).unwrap();
        // Few (recorded one by one), many (past FEW: the histogram whole), none, and a
        // value beyond the histogram's range (recorded in neither).
        let spread: Vec<u64> = (0..FEW as u64 * 3).map(|i| 1 + i * i * 977).collect();
        for values in [
            vec![15_000, 15_001, 230_000, 1],
            spread,
            vec![],
            vec![20_000, 200_000_000_000],
        ] {
            let b = batch_of(&values);
            assert_eq!(
                b.recorded_latency().values().is_some(),
                values.iter().filter(|&&v| v <= 100_000_000_000).count() <= FEW,
                "{values:?}"
            );
            let mut sparse = into.clone();
            b.recorded_latency().add_to(&mut sparse);
            let whole = merged_whole(&into, &b);
            assert_eq!(sparse, whole, "{values:?}");
            assert_eq!(
                (sparse.min_nz(), sparse.max(), sparse.len()),
                (whole.min_nz(), whole.max(), whole.len())
            );
            let (mean, reference) = (b.recorded_latency().mean(), b.latency.mean());
            assert!(
                (mean - reference).abs() <= 1e-9 * reference.max(1.0),
                "{mean} against {reference}"
            );
        }
    }

    #[test]
    fn a_reused_batch_keeps_no_values_of_the_last() {
        let mut b = batch_of(&[10_000, 20_000]);
        b.clear();
        Few::record(&mut b.latency, &mut b.few.latency, 30_000);
        assert_eq!(b.recorded_latency().values(), Some(&[30_000][..]));
        // A batch that came over the wire knows no values: it merges whole.
        let mut remote = batch_of(&[10_000]);
        remote.few = Few::default();
        assert_eq!(remote.recorded_latency().values(), None);
        let mut into = histogram();
        remote.recorded_latency().add_to(&mut into);
        assert_eq!(into.len(), 1);
    }
}
