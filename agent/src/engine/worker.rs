//! A worker thread: open-loop arrivals, sends, replies, timestamps, measurements.
//!
//! The loop never waits for a reply to decide when to send: the next departure is drawn
//! from the inter-arrival distribution, and a request that is due goes out on the first
//! connection with a free slot, or waits in the backlog (counted: the workload is turning
//! closed-loop). Between departures the loop sleeps in the poller, woken by a reply or by
//! a timerfd armed just before the next departure is due, then spins the last few
//! microseconds: precise departures without holding a core. A host that shares its cores
//! (a VM, or agent and server on two cores) punishes a spinning thread: the hypervisor
//! takes time from both cores, and a synthetic server spinning out its service times
//! slows down with them.

mod replies;
mod wait;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError, TrySendError};
use std::time::Duration;

use mio::{Events, Poll, Token};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use vernier_protocols::{KeySpace, Matching, Protocol, Request, worker_seed};

use super::arrivals::{Arrival, Arrivals, Due};
use super::command::Command;
use super::conn::{Conn, TxDrain, dial, register};
use super::epoch::Epoch;
use super::error::EngineError;
use super::inflight::{Outgoing, StampClock, Timeout};
use super::nic_clock::NicClock;
use super::pacer::{Pacer, Replies};
use super::report::Reports;
use super::requests::Generator;
use super::tally::{DepartureOrder, FirstSampling, PROBE_SEQ, Tally};
use super::watch::Watch;
use crate::config::{AgentKind, LoadSpec};
use crate::measure::{Batch, Counters};
use crate::sys::{TimestampMode, Transport, pin_current_thread};

/// The nice value a pinned worker asks for (see `run`).
const WORKER_NICE: i32 = -10;
/// What a duet's second server's request draws are seeded apart by.
const SECOND_SEED: u64 = 0xd0e7_5eed;
/// How long an answered request may wait for its TX timestamp before it is given up.
const TX_TIMESTAMP_GRACE: Duration = Duration::from_millis(100);
/// The longest reconnect back-off.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long the first connections may take to open.
const CONNECT_PATIENCE: Duration = Duration::from_secs(5);
/// How long a worker may stall on a reconnect (it is not generating meanwhile).
const RECONNECT_PATIENCE: Duration = Duration::from_millis(20);
/// Sends per turn of the loop at most, so that replies, reports and commands are served
/// even when the worker has fallen far behind.
const SENDS_PER_TURN: usize = 256;
/// Arrivals drawn per turn of the loop at most, for the same reason: a worker asked for
/// far more than it can send (50 million a second) once drew every arrival due since its
/// last turn, each turn longer than the one before, until it went seconds without a report
/// and the coordinator saw it send nothing. Arrivals not yet drawn keep their scheduled
/// times, so their send lag still says how late they left.
const ARRIVALS_PER_TURN: usize = 4 * SENDS_PER_TURN;

/// What the engine gives a worker thread at its start.
pub(super) struct Setup {
    pub(super) index: u32,
    /// Where its wake-ups are tallied for the session.
    pub(super) watch: crate::probe::CoreWatch,
    pub(super) spec: Arc<LoadSpec>,
    pub(super) conns: std::ops::Range<usize>,
    /// The key spaces of the target's requests and of a duet's second server's.
    pub(super) keys: [Option<Arc<KeySpace>>; 2],
    pub(super) epoch: Epoch,
    pub(super) commands: Receiver<Command>,
    pub(super) batches: SyncSender<Batch>,
    pub(super) spares: Receiver<Batch>,
    pub(super) ready: Sender<Result<(), EngineError>>,
    pub(super) counters: Arc<std::sync::Mutex<Vec<Counters>>>,
}

/// What a worker keeps of the engine's: the read batches it gets back, and the tally of
/// its wake-ups the session reads.
struct Ends {
    spares: Receiver<Batch>,
    watch: crate::probe::CoreWatch,
}

/// One worker's state: its connections, its arrivals and backlog, and what it measures.
struct Worker {
    index: u32,
    spec: Arc<LoadSpec>,
    protocol: Protocol,
    matching: Matching,
    depth: usize,
    kernel_timestamps: bool,
    /// Whether requests due together share a send (TCP: a datagram is one request).
    coalesce: bool,
    /// Where departures and latencies are read from (the map from the NIC's clock to the
    /// engine's with hardware timestamps).
    clock: StampClock,
    /// With hardware timestamps, the NIC's clock that `clock`'s map is refreshed from.
    nic: Option<NicClock>,
    epoch: Epoch,
    poll: Poll,
    /// Wakes the loop for the next departure.
    pacer: Pacer,
    conns: Vec<Conn>,
    /// The first slot whose connection goes to a duet's second server (all of them
    /// without a duet): the target's connections come first.
    second_from: usize,
    /// The next connection to try, round-robin, among the target's and among the second
    /// server's.
    next_conn: [usize; 2],
    generator: Generator,
    /// A duet's second server's requests.
    second: Option<Generator>,
    rng: SmallRng,
    arrivals: Option<Arrivals>,
    /// Requests due and not sent: the target's, and a duet's second server's (each
    /// waits for its own server's connections only).
    backlog: [VecDeque<Due>; 2],
    seq: u64,
    /// Path probes sent so far (their sequence numbers, under [`PROBE_SEQ`]).
    probe_seq: u64,
    /// When the last request was handed to the socket, monotonic ns since the epoch.
    last_sent: u64,
    /// The batches sent and to send, and the counts as of the last.
    reports: Reports,
    /// The measurements of the current interval, and which requests they keep.
    tally: Tally,
    /// Cumulative counts since the start.
    counters: Counters,
    /// Its waits, the stall probe of its core.
    watch: Watch,
}

pub(super) fn run(setup: Setup) {
    let Setup {
        index,
        watch,
        spec,
        conns,
        keys,
        epoch,
        commands,
        batches,
        spares,
        ready,
        counters,
    } = setup;
    let pinned = !spec.cpus.is_empty();
    let mut worker = match Worker::new(index, spec, conns, keys, epoch, Ends { spares, watch }) {
        Ok(w) => w,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    drop(ready);
    // The kernel may fire a sleeping thread's timers up to its slack late (50 µs by
    // default), grouping wake-ups; a late wake-up is a late departure and bunches the
    // next ones. Best effort: without it departures are only less punctual.
    let _ = nix::sys::prctl::set_timerslack(1);
    // A pinned worker shares its core with whatever else runs there: the coordinator's
    // analysis and recorder when the agent is local, the control plane, the kernel's work.
    // At nice -10 the scheduler gives it about nine tenths of the core against a nice-0
    // thread and lets it preempt one when its timer fires; on a two-core host, without it,
    // 4-6% of requests to memcached at 10,000 req/s left over 25 µs late. Best effort:
    // raising priority needs CAP_SYS_NICE.
    if pinned {
        let _ = crate::sys::set_thread_nice(WORKER_NICE);
    }
    worker.run(&commands, &batches, &counters);
}

impl Worker {
    /// Worker `index`: pinned to its core if the spec names one, its poller and departure
    /// timer, its connections `conn_ids` open, and the clock its timestamps are read on.
    fn new(
        index: u32,
        spec: Arc<LoadSpec>,
        conn_ids: std::ops::Range<usize>,
        keys: [Option<Arc<KeySpace>>; 2],
        epoch: Epoch,
        Ends { spares, watch }: Ends,
    ) -> Result<Worker, EngineError> {
        if let Some(&cpu) = spec.cpus.get(index as usize) {
            pin_current_thread(cpu).map_err(|source| EngineError::Pin {
                worker: index,
                cpu,
                source,
            })?;
        }
        let seed = worker_seed(spec.seed, index);
        let [keys, keys_second] = keys;
        let generator = Generator::new(&spec.protocol, &spec.workload, keys, seed);
        // A duet's second server's requests are drawn apart, from their own seed.
        let second = (spec.duet.as_ref()).map(|duet| {
            let seed = worker_seed(spec.seed ^ SECOND_SEED, index);
            Generator::new(&spec.protocol, &duet.workload, keys_second, seed)
        });
        let depth = spec.effective_depth();
        let kernel_timestamps = !matches!(spec.timestamps, TimestampMode::User);
        let replies = if kernel_timestamps {
            Replies::Stamped
        } else {
            Replies::WakeFor
        };
        let (poll, pacer) = Pacer::new(index, spec.poll, replies)?;
        let first = match spec.kind {
            AgentKind::Throughput => FirstSampling::Nothing,
            AgentKind::Symmetric | AgentKind::Latency => FirstSampling::Every,
        };
        let order = if kernel_timestamps {
            DepartureOrder::Stamped
        } else {
            DepartureOrder::Sent
        };
        let mut worker = Worker {
            pacer,
            index,
            matching: spec.protocol.matching(),
            protocol: spec.protocol.clone(),
            depth,
            kernel_timestamps,
            coalesce: spec.transport == Transport::Tcp,
            // Set once the sockets are up (see below).
            clock: StampClock::User,
            nic: None,
            epoch,
            poll,
            conns: Vec::with_capacity(conn_ids.len()),
            second_from: 0,
            next_conn: [0; 2],
            generator,
            second,
            rng: SmallRng::seed_from_u64(seed ^ 0x5a5a_5a5a),
            arrivals: None,
            backlog: [VecDeque::with_capacity(1024), VecDeque::new()],
            seq: 0,
            probe_seq: 0,
            last_sent: 0,
            reports: Reports::new(index, spares),
            tally: Tally::new(index, first, order),
            counters: Counters::default(),
            watch: Watch::new(watch),
            spec,
        };
        worker.open_connections(conn_ids)?;
        // After the sockets, whose connect explains best what a NIC without hardware
        // timestamping lacks.
        (worker.clock, worker.nic) = NicClock::for_mode(index, &worker.spec.timestamps, epoch)?;
        Ok(worker)
    }

    /// Opens the connections `conn_ids`, waiting for each (at most [`CONNECT_PATIENCE`]);
    /// in a duet, then their twins to the second server (ids `connections` on).
    fn open_connections(&mut self, conn_ids: std::ops::Range<usize>) -> Result<(), EngineError> {
        let index = self.index;
        let shift = self.spec.connections;
        let twins = conn_ids.start + shift..conn_ids.end + shift;
        let to_target = conn_ids.map(|id| (id, false));
        let to_second = (self
            .spec
            .duet
            .is_some()
            .then_some(twins)
            .into_iter()
            .flatten())
        .map(|id| (id, true));
        for (id, second) in to_target.chain(to_second) {
            let addr = self.spec.server(second);
            let socket = dial(&self.spec, addr, CONNECT_PATIENCE).map_err(|source| {
                EngineError::Connect {
                    worker: index,
                    target: addr,
                    source,
                }
            })?;
            let slot = self.conns.len();
            register(self.poll.registry(), slot, &socket).map_err(|source| EngineError::Os {
                worker: index,
                what: "register socket",
                source,
            })?;
            (self.conns).push(Conn::new(id as u16, socket, self.depth, &self.protocol));
            if !second {
                self.second_from = self.conns.len();
            }
            // What a session sends first (a TLS ClientHello) goes now: it may be what the
            // first request waits for.
            self.flush(slot);
        }
        Ok(())
    }

    fn run(
        &mut self,
        commands: &Receiver<Command>,
        batches: &SyncSender<Batch>,
        shared: &std::sync::Mutex<Vec<Counters>>,
    ) {
        let index = self.index as usize;
        let publish = |c: Counters| {
            let mut all = shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(slot) = all.get_mut(index) {
                *slot = c;
            }
        };
        let mut events = Events::with_capacity(256);
        let mut next_report = self.epoch.now_ns() + self.reports.every_ns();
        loop {
            match commands.try_recv() {
                Ok(Command::Stop) | Err(TryRecvError::Disconnected) => break,
                Ok(command @ Command::Sampling { .. }) => {
                    // The batch so far belongs to the old generation: it goes first, even
                    // if that means waiting for room (a reader 80 s behind), so that no
                    // batch mixes two generations. The counters published are the ones
                    // the batches add up to, so after the batch is taken.
                    let sent = self
                        .reports
                        .take_unsent()
                        .is_none_or(|u| batches.send(u).is_ok());
                    let batch = self.take_batch(true);
                    publish(self.counters);
                    if !sent || batches.send(batch).is_err() {
                        return;
                    }
                    self.apply(command);
                }
                Ok(command) => {
                    self.apply(command);
                    // A faster load reports sooner from its start.
                    next_report = next_report.min(self.epoch.now_ns() + self.reports.every_ns());
                }
                Err(TryRecvError::Empty) => {}
            }
            let now = self.epoch.now_ns();
            self.generate(now);
            self.dispatch();
            if !self.wait(&mut events, next_report) {
                // The poller itself failing leaves nothing to measure with; report and stop.
                break;
            }
            let now = self.epoch.now_ns();
            if now >= next_report {
                // Timeouts, late TX stamps and reconnects are checked with the reports
                // (every 20 to 50 ms): a request's timeout is a second by default and a
                // stamp's grace 100 ms, and a sleeping worker then wakes for both at
                // once. Checked every 20 ms on its own while a request was in flight, at
                // 100 req/s it woke a third as often again as its load asked.
                self.housekeeping(now);
                let reader = self.report(batches);
                publish(self.counters);
                if !reader {
                    return;
                }
                next_report = now + self.reports.every_ns();
            }
        }
        // Final report: whatever is still in flight stays counted as such. The engine
        // reads batches while it waits for its workers, so these blocking sends end.
        if let Some(unsent) = self.reports.take_unsent() {
            let _ = batches.send(unsent);
        }
        let last = self.take_batch(true);
        publish(self.counters);
        let _ = batches.send(last);
    }

    /// Sends the interval's batch without waiting. When the reader's queue is full, the
    /// batch waits in `unsent` and the next ones extend the current interval until it is
    /// sent: nothing is lost. False when the reader is gone.
    fn report(&mut self, batches: &SyncSender<Batch>) -> bool {
        if let Some(unsent) = self.reports.take_unsent() {
            match batches.try_send(unsent) {
                Ok(()) => {}
                Err(TrySendError::Full(unsent)) => {
                    self.reports.hold(unsent);
                    return true;
                }
                Err(TrySendError::Disconnected(_)) => return false,
            }
        }
        match batches.try_send(self.take_batch(false)) {
            Ok(()) => true,
            Err(TrySendError::Full(batch)) => {
                self.reports.hold(batch);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }

    fn apply(&mut self, command: Command) {
        match command {
            Command::Load {
                rate_per_s,
                interarrival,
            } => {
                let now = self.epoch.now_ns();
                self.arrivals = Some(Arrivals::start(
                    rate_per_s,
                    interarrival,
                    &self.spec.workload,
                    self.spec.duet.is_some(),
                    now,
                    &mut self.rng,
                ));
                self.reports.follow(Some(rate_per_s));
            }
            Command::Pause => {
                self.arrivals = None;
                self.reports.follow(None);
                self.backlog.iter_mut().for_each(VecDeque::clear);
                self.counters.backlog = 0;
            }
            Command::Sampling { rate, generation } => {
                let rate = if self.spec.kind == AgentKind::Throughput {
                    0.0
                } else {
                    rate
                };
                self.tally
                    .set_sampling(rate, generation, self.seq, &mut self.rng);
            }
            Command::Tolerance(tolerance) => self.pacer.set_tolerance(tolerance),
            Command::Stop => {}
        }
    }

    /// Moves the requests that have come due into the backlog, [`ARRIVALS_PER_TURN`] at most.
    fn generate(&mut self, now: u64) {
        let Some(arrivals) = self.arrivals.as_mut() else {
            return;
        };
        self.counters.failed +=
            arrivals.generate(now, ARRIVALS_PER_TURN, &mut self.rng, &mut self.backlog);
    }

    /// Sends backlogged requests, oldest first, while connections have free slots. On
    /// TCP, requests due together go out together: the next connection takes as many
    /// as its depth allows in one send, which costs the kernel's whole loopback path
    /// (the peer's receive and its wake-up included) once instead of once each. A
    /// worker that keeps up has one due at a time, so this changes nothing for it;
    /// one that falls behind catches up with fewer system calls. In a duet each request
    /// goes to its own server's connections, the older of the two servers' first first: a
    /// server whose connections are all busy (or gone) holds back its own requests only.
    fn dispatch(&mut self) {
        let mut no_slot = [false; 2];
        let mut turn = 0;
        while turn < SENDS_PER_TURN {
            let front = |side: usize| self.backlog[side].front().filter(|_| !no_slot[side]);
            let side = match (front(0), front(1)) {
                (Some(a), Some(b)) => usize::from(b.at < a.at),
                (Some(_), None) => 0,
                (None, Some(_)) => 1,
                (None, None) => break,
            };
            let Some(slot) = self.free_slot(side == 1) else {
                no_slot[side] = true;
                continue;
            };
            let other = 1 - side;
            let began = self.epoch.now_ns();
            while let Some(due) = self.backlog[side].pop_front() {
                self.enqueue(slot, due);
                turn += 1;
                let next = self.backlog[side].front().map(|d| d.at);
                let older_other = self.backlog[other]
                    .front()
                    .is_some_and(|o| !no_slot[other] && next.is_some_and(|n| o.at < n));
                if !self.coalesce
                    || turn >= SENDS_PER_TURN
                    || !self.conns[slot].has_slot(self.depth)
                    || older_other
                {
                    break;
                }
            }
            self.flush(slot);
            self.counters.send_ns += self.epoch.now_ns().saturating_sub(began);
        }
        // Only requests kept waiting by a lack of slots are the closed-loop backlog; those
        // left by the cap are late because the worker cannot keep up (their send lag says).
        let waiting = (0..2)
            .filter(|&side| no_slot[side])
            .map(|side| self.backlog[side].len() as u64)
            .sum();
        self.counters.backlog = waiting;
        self.counters.backlog_max = self.counters.backlog_max.max(waiting);
        self.reports.backlog(waiting);
    }

    /// The next connection, round-robin, with room for another request: among those to
    /// the duet's `second` server, or to the target.
    fn free_slot(&mut self, second: bool) -> Option<usize> {
        let slots = if second {
            self.second_from..self.conns.len()
        } else {
            0..self.second_from
        };
        let cursor = &mut self.next_conn[usize::from(second)];
        let n = slots.len();
        for i in 0..n {
            let slot = slots.start + (*cursor + i) % n;
            if self.conns[slot].has_slot(self.depth) {
                *cursor = (slot - slots.start + 1) % n;
                return Some(slot);
            }
        }
        None
    }

    /// Encodes the request `due` into `slot`'s output and counts it as sent;
    /// [`flush`](Worker::flush) hands it to the socket.
    fn enqueue(&mut self, slot: usize, due: Due) {
        let scheduled = due.at;
        let probe = due.arrival == Arrival::Probe;
        let seq = if probe {
            self.probe_seq += 1;
            PROBE_SEQ | (self.probe_seq - 1)
        } else {
            self.seq += 1;
            self.seq - 1
        };
        let generator = match &mut self.second {
            Some(second) if due.second => second,
            _ => &mut self.generator,
        };
        let (request, kind) = generator.next(due.arrival, &mut self.rng);
        let conn = &mut self.conns[slot];
        let Ok(len) = conn.encode(&request, seq as u32) else {
            // The workload was validated, so this is a key or value the protocol cannot
            // carry; count it rather than send garbage.
            self.counters.failed += 1;
            return;
        };
        let sent = self.epoch.now_ns();
        self.last_sent = sent;
        conn.sent(
            Outgoing {
                seq,
                scheduled,
                sent,
                kind,
                service_ns: match request {
                    Request::Spin { service_ns } => service_ns,
                    _ => 0,
                },
            },
            len,
        );
        self.counters.sent += 1;
        self.counters.probes_sent += u64::from(probe);
        self.counters.in_flight += 1;
        self.counters.bytes_sent += len;
        self.tally.sent(seq, scheduled, sent);
        if !self.kernel_timestamps {
            self.tally.departed(seq, sent);
        }
    }

    /// Hands buffered bytes to the socket (one datagram per request on UDP).
    fn flush(&mut self, slot: usize) {
        if self.conns[slot]
            .flush(self.poll.registry(), Token(slot))
            .is_err()
        {
            self.lose(slot);
        }
    }

    /// Matches TX timestamps from the error queue to the requests they cover, and records
    /// their departures.
    /// Returns how many stamps it read; `when` says whether to read the queue even when no
    /// request waits for a stamp (see [`Conn::drain_tx`]).
    fn drain_tx(&mut self, slot: usize, when: TxDrain) -> usize {
        let (stamped, read) = self.conns[slot].drain_tx(when);
        for position in stamped {
            if let Some((seq, tx)) = self.conns[slot].stamp(position) {
                self.tally.departed(seq, self.clock.departure(tx));
            }
        }
        self.finish_front(slot);
        read
    }

    /// Completes answered requests at the front whose timestamps are all in.
    fn finish_front(&mut self, slot: usize) {
        while let Some(done) = self.conns[slot].pop_completed(&self.clock) {
            let conn = self.conns[slot].id();
            self.tally.complete(&done, conn, &mut self.counters);
        }
    }

    /// The connection is gone: what awaited a reply has failed; reconnect with back-off.
    fn lose(&mut self, slot: usize) {
        let now = self.epoch.now_ns();
        let lost = self.conns[slot].lose(now, self.poll.registry());
        self.counters.failed += lost.unanswered;
        self.counters.in_flight -= lost.unanswered;
        // Answered but not complete: waiting for a TX stamp, or behind one that was.
        self.counters.tx_timestamps_missing += lost.answered;
    }

    fn housekeeping(&mut self, now: u64) {
        self.refresh_clock(now);
        for slot in 0..self.conns.len() {
            if self.conns[slot].reconnect_due(now) {
                self.reconnect(slot, now);
                continue;
            }
            let expired =
                self.conns[slot].expire(now, &self.clock, TX_TIMESTAMP_GRACE, self.spec.timeout);
            self.counters.tx_timestamps_missing += expired.stamps_missing;
            match expired.timeout {
                // A lost datagram costs one request.
                Some(Timeout::Datagram) => {
                    self.counters.failed += 1;
                    self.counters.timeouts += 1;
                    self.counters.in_flight -= 1;
                }
                // A TCP stream that stopped answering is replaced.
                Some(Timeout::Stream { awaiting }) => {
                    self.counters.timeouts += awaiting;
                    self.lose(slot);
                }
                None => {}
            }
            self.finish_front(slot);
        }
        // What a lost connection, a timeout or a missing TX stamp gave up holds back no
        // sample past the stamps' grace.
        self.tally.expire(now, TX_TIMESTAMP_GRACE.as_nanos() as u64);
    }

    /// With NIC timestamps, re-reads the NIC's clock against the engine's every
    /// [`PHC_REFRESH`](crate::sys::PHC_REFRESH), so that its drift is followed.
    fn refresh_clock(&mut self, now: u64) {
        if let (Some(nic), StampClock::Nic(map)) = (self.nic.as_mut(), &mut self.clock) {
            nic.refresh(now, self.epoch, map);
        }
    }

    fn reconnect(&mut self, slot: usize, now: u64) {
        let addr = self.spec.server(slot >= self.second_from);
        match dial(&self.spec, addr, RECONNECT_PATIENCE) {
            Ok(socket) if register(self.poll.registry(), slot, &socket).is_ok() => {
                self.conns[slot].reopen(socket, &self.protocol);
                self.flush(slot);
                self.counters.reconnects += 1;
            }
            _ => {
                self.counters.connect_failures += 1;
                self.conns[slot].retry_later(now, MAX_BACKOFF);
            }
        }
    }

    /// The interval's batch (see [`Reports::take`]), with the stalls its spins found; with
    /// every kept sample held for its stretch when `flush` (the last of a generation).
    fn take_batch(&mut self, flush: bool) -> Batch {
        let flush = flush.then(|| self.epoch.now_ns());
        let mut batch = (self.reports).take(
            &mut self.tally,
            &mut self.counters,
            (&self.conns, flush),
            self.epoch,
        );
        self.watch.drain_into(&mut batch.stalls);
        batch
    }
}
