//! What the workers measure and hand to the control plane: kept samples, sampled
//! inter-departure gaps, HDR histograms of every request, and counters.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::stall::StallLog;

/// One kept request. 24 bytes: a million kept samples cost 24 MB. Plain old data with no
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
}

const _: () = assert!(
    std::mem::size_of::<Sample>() <= 32,
    "the issue allows 32 bytes per kept sample"
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
/// request sent is, at any instant, exactly one of received, failed or in flight: from
/// the start, `sent = received + failed + in_flight`.
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
            counts: Counters::default(),
            stalls: StallLog::with_room(crate::stall::STALLS_PER_BATCH),
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
        self.counts = Counters::default();
        self.stalls.clear();
        self.generation = 0;
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
