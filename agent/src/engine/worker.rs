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

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::Duration;

use hdrhistogram::Histogram;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::os::fd::{AsFd, AsRawFd};
use vernier_protocols::{
    KeySpace, KvGenerator, Protocol, ReplyKind, Request, Sampler, worker_seed,
};

use super::conn::{Conn, Pending, ReadError, Received};
use super::{Command, EngineError, Epoch};
use crate::config::{AgentKind, LoadSpec, Workload};
use crate::measure::{Batch, Counters, Outcome, RequestKind, Sample, histogram};
use crate::sys::{TimestampMode, Transport, TsSocket, pin_current_thread};

/// How often a worker reports a batch.
const REPORT_EVERY: Duration = Duration::from_millis(20);
/// The nice value a pinned worker asks for (see `run`).
const WORKER_NICE: i32 = -10;
/// How often timeouts and reconnects are checked.
const HOUSEKEEPING_EVERY: Duration = Duration::from_millis(1);
/// How long an answered request may wait for its TX timestamp before it is given up.
const TX_TIMESTAMP_GRACE: Duration = Duration::from_millis(100);
/// The longest reconnect back-off.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Due requests held at most; beyond, the client is hopelessly overloaded and the oldest
/// are dropped (and counted as failed) rather than growing without bound.
const MAX_BACKLOG: usize = 1 << 20;
/// Departure ring for inter-departure gaps from TX timestamps (which arrive out of order
/// across connections).
const DEPARTURE_RING: usize = 4096;
/// How long the first connections may take to open.
const CONNECT_PATIENCE: Duration = Duration::from_secs(5);
/// How long a worker may stall on a reconnect (it is not generating meanwhile).
const RECONNECT_PATIENCE: Duration = Duration::from_millis(20);
/// The loop spins, rather than sleeps, when the next departure is this close: a timer's
/// wake-up takes a few tens of µs on a busy or virtual host.
const SPIN_BEFORE_DUE: Duration = Duration::from_micros(60);
/// The poller's token of the departure timer (sockets use their slot index).
const TIMER: Token = Token(usize::MAX - 1);
/// Sends per turn of the loop at most, so that replies, reports and commands are served
/// even when the worker has fallen far behind.
const SENDS_PER_TURN: usize = 256;
/// SO_BUSY_POLL budget for latency agents, µs.
const LATENCY_AGENT_BUSY_POLL_US: u32 = 50;

pub(super) struct Setup {
    pub(super) index: u32,
    pub(super) spec: Arc<LoadSpec>,
    pub(super) conns: std::ops::Range<usize>,
    pub(super) keys: Option<Arc<KeySpace>>,
    pub(super) epoch: Epoch,
    pub(super) commands: Receiver<Command>,
    pub(super) batches: Sender<Batch>,
    pub(super) ready: Sender<Result<(), EngineError>>,
    pub(super) counters: Arc<std::sync::Mutex<Vec<Counters>>>,
}

/// Where each request's content comes from.
enum Generator {
    Synthetic(Sampler),
    KeyValue(KvGenerator),
    Echo,
}

/// The arrival process while loading.
struct Arrivals {
    gaps: Sampler,
    next_due: u64,
}

struct Worker {
    index: u32,
    spec: Arc<LoadSpec>,
    protocol: Protocol,
    depth: usize,
    kernel_timestamps: bool,
    epoch: Epoch,
    poll: Poll,
    /// Armed for the next departure while the loop sleeps.
    timer: TimerFd,
    conns: Vec<Conn>,
    next_conn: usize,
    generator: Generator,
    rng: SmallRng,
    arrivals: Option<Arrivals>,
    backlog: VecDeque<u64>,
    seq: u64,
    sampling: f64,
    /// Keep every this-many-th request ...
    sample_every: u64,
    /// ... starting here.
    sample_phase: u64,
    // Measurements of the current interval.
    samples: Vec<Sample>,
    interarrivals: Vec<u64>,
    latency: Histogram<u64>,
    intended: Histogram<u64>,
    send_lag: Histogram<u64>,
    counters: Counters,
    last_departure: Option<u64>,
    departures: Box<[(u64, u64); DEPARTURE_RING]>,
}

pub(super) fn run(setup: Setup) {
    let Setup {
        index,
        spec,
        conns,
        keys,
        epoch,
        commands,
        batches,
        ready,
        counters,
    } = setup;
    let pinned = !spec.cpus.is_empty();
    let mut worker = match Worker::new(index, spec, conns, keys, epoch) {
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
    fn new(
        index: u32,
        spec: Arc<LoadSpec>,
        conn_ids: std::ops::Range<usize>,
        keys: Option<Arc<KeySpace>>,
        epoch: Epoch,
    ) -> Result<Worker, EngineError> {
        if let Some(&cpu) = spec.cpus.get(index as usize) {
            pin_current_thread(cpu).map_err(|source| EngineError::Pin {
                worker: index,
                cpu,
                source,
            })?;
        }
        let seed = worker_seed(spec.seed, index);
        let generator = match (&spec.workload, keys) {
            (Workload::Synthetic { service }, _) => Generator::Synthetic(service.sampler()),
            (Workload::KeyValue(_), Some(keys)) => Generator::KeyValue(keys.generator(seed)),
            _ => Generator::Echo,
        };
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
        let depth = spec.effective_depth();
        let mut worker = Worker {
            timer,
            index,
            protocol: spec.protocol,
            depth,
            kernel_timestamps: !matches!(spec.timestamps, TimestampMode::User),
            epoch,
            poll,
            conns: Vec::with_capacity(conn_ids.len()),
            next_conn: 0,
            generator,
            rng: SmallRng::seed_from_u64(seed ^ 0x5a5a_5a5a),
            arrivals: None,
            backlog: VecDeque::with_capacity(1024),
            seq: 0,
            sampling: if spec.kind == AgentKind::Throughput {
                0.0
            } else {
                1.0
            },
            sample_every: 1,
            sample_phase: 0,
            samples: Vec::with_capacity(1 << 14),
            interarrivals: Vec::with_capacity(1 << 12),
            latency: histogram(),
            intended: histogram(),
            send_lag: histogram(),
            counters: Counters::default(),
            last_departure: None,
            departures: Box::new([(u64::MAX, 0); DEPARTURE_RING]),
            spec,
        };
        for id in conn_ids {
            let socket =
                worker
                    .connect(CONNECT_PATIENCE)
                    .map_err(|source| EngineError::Connect {
                        worker: index,
                        target: worker.spec.target,
                        source,
                    })?;
            let slot = worker.conns.len();
            worker
                .register(slot, &socket)
                .map_err(|source| EngineError::Os {
                    worker: index,
                    what: "register socket",
                    source,
                })?;
            worker.conns.push(Conn::new(id as u16, socket, depth));
        }
        Ok(worker)
    }

    /// Opens a connection and waits (at most `patience`) for the handshake, so that a
    /// connection in the pool is always usable.
    fn connect(&self, patience: Duration) -> Result<TsSocket, crate::sys::SysError> {
        let busy = (self.spec.kind == AgentKind::Latency).then_some(LATENCY_AGENT_BUSY_POLL_US);
        let socket = TsSocket::connect(
            self.spec.target,
            self.spec.transport,
            &self.spec.timestamps,
            busy,
        )?;
        socket
            .wait_connected(patience)
            .map_err(|source| crate::sys::SysError::Socket {
                what: "connect",
                addr: self.spec.target,
                transport: self.spec.transport,
                source,
            })?;
        Ok(socket)
    }

    fn register(&self, slot: usize, socket: &TsSocket) -> io::Result<()> {
        let fd = socket.as_raw_fd();
        self.poll
            .registry()
            .register(&mut SourceFd(&fd), Token(slot), Interest::READABLE)
    }

    fn run(
        &mut self,
        commands: &Receiver<Command>,
        batches: &Sender<Batch>,
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
        let mut next_report = self.epoch.now_ns() + REPORT_EVERY.as_nanos() as u64;
        let mut next_housekeeping = 0;
        loop {
            match commands.try_recv() {
                Ok(Command::Stop) | Err(TryRecvError::Disconnected) => break,
                Ok(command) => self.apply(command),
                Err(TryRecvError::Empty) => {}
            }
            let now = self.epoch.now_ns();
            self.generate(now);
            self.dispatch();
            let timeout = self.wait(next_report.min(next_housekeeping));
            if let Err(e) = self.poll.poll(&mut events, timeout)
                && e.kind() != io::ErrorKind::Interrupted
            {
                // The poller itself failing leaves nothing to measure with; report and stop.
                break;
            }
            for event in events.iter() {
                if event.token() == TIMER {
                    // Drain the expiration so that the next arming raises a new edge.
                    let _ = self.timer.wait();
                    continue;
                }
                let slot = event.token().0;
                if event.is_writable() {
                    self.flush(slot);
                }
                if event.is_readable() || event.is_error() || event.is_read_closed() {
                    self.on_readable(slot);
                }
            }
            let now = self.epoch.now_ns();
            if now >= next_housekeeping {
                self.housekeeping(now);
                next_housekeeping = now + HOUSEKEEPING_EVERY.as_nanos() as u64;
            }
            if now >= next_report {
                publish(self.counters);
                if batches.send(self.take_batch()).is_err() {
                    return;
                }
                next_report = now + REPORT_EVERY.as_nanos() as u64;
            }
        }
        // Final report: whatever is still in flight stays counted as such.
        publish(self.counters);
        let _ = batches.send(self.take_batch());
    }

    fn set_sampling(&mut self, rate: f64) {
        self.sampling = rate;
        self.sample_every = if rate > 0.0 {
            (1.0 / rate).round().max(1.0) as u64
        } else {
            1
        };
        self.sample_phase = self.rng.random::<u64>() % self.sample_every;
    }

    /// How long the poller may sleep: not at all when a departure is due within
    /// [`SPIN_BEFORE_DUE`]; otherwise until a reply arrives or the timer, armed that long
    /// before the departure (or for `next_chore`, a report or housekeeping), fires.
    fn wait(&mut self, next_chore: u64) -> Option<Duration> {
        let now = self.epoch.now_ns();
        let spin = SPIN_BEFORE_DUE.as_nanos() as u64;
        let wake = match &self.arrivals {
            Some(a) => a.next_due.saturating_sub(spin).min(next_chore),
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

    fn apply(&mut self, command: Command) {
        match command {
            Command::Load {
                rate_per_s,
                interarrival,
            } => {
                let gaps = interarrival.for_rate(rate_per_s).sampler();
                let now = self.epoch.now_ns();
                let first = now + gaps.sample(&mut self.rng) as u64;
                self.arrivals = Some(Arrivals {
                    gaps,
                    next_due: first,
                });
            }
            Command::Pause => {
                self.arrivals = None;
                self.backlog.clear();
                self.counters.backlog = 0;
            }
            Command::Sampling(rate) => {
                if self.spec.kind != AgentKind::Throughput {
                    self.set_sampling(rate);
                }
            }
            Command::Stop => {}
        }
    }

    /// Moves every request that has come due into the backlog.
    fn generate(&mut self, now: u64) {
        let Some(arrivals) = self.arrivals.as_mut() else {
            return;
        };
        while arrivals.next_due <= now {
            if self.backlog.len() >= MAX_BACKLOG {
                self.backlog.pop_front();
                self.counters.failed += 1;
            }
            self.backlog.push_back(arrivals.next_due);
            arrivals.next_due += (arrivals.gaps.sample(&mut self.rng) as u64).max(1);
        }
    }

    /// Sends backlogged requests, oldest first, while connections have free slots.
    fn dispatch(&mut self) {
        let mut no_slot = false;
        for _ in 0..SENDS_PER_TURN {
            let Some(&scheduled) = self.backlog.front() else {
                break;
            };
            let Some(slot) = self.free_slot() else {
                no_slot = true;
                break;
            };
            self.backlog.pop_front();
            self.send(slot, scheduled);
        }
        // Only requests kept waiting by a lack of slots are the closed-loop backlog; those
        // left by the cap are late because the worker cannot keep up (their send lag says).
        let waiting = if no_slot {
            self.backlog.len() as u64
        } else {
            0
        };
        self.counters.backlog = waiting;
        self.counters.backlog_max = self.counters.backlog_max.max(waiting);
    }

    /// The next connection, round-robin, with room for another request.
    fn free_slot(&mut self) -> Option<usize> {
        let n = self.conns.len();
        for i in 0..n {
            let slot = (self.next_conn + i) % n;
            if self.conns[slot].has_slot(self.depth) {
                self.next_conn = (slot + 1) % n;
                return Some(slot);
            }
        }
        None
    }

    fn send(&mut self, slot: usize, scheduled: u64) {
        let seq = self.seq;
        self.seq += 1;
        let conn = &mut self.conns[slot];
        let before = conn.out.len();
        let (request, kind) = match &mut self.generator {
            Generator::Synthetic(service) => (
                Request::Spin {
                    service_ns: service.sample(&mut self.rng) as u64,
                },
                RequestKind::Other,
            ),
            Generator::KeyValue(g) => {
                let r = g.next_request();
                let kind = if matches!(r, Request::Set { .. }) {
                    RequestKind::Set
                } else {
                    RequestKind::Get
                };
                (r, kind)
            }
            Generator::Echo => (Request::Get { key: b"" }, RequestKind::Other),
        };
        if self
            .protocol
            .encode(&request, seq as u32, &mut conn.out)
            .is_err()
        {
            // The workload was validated, so this is a key or value the protocol cannot
            // carry; count it rather than send garbage.
            conn.out.truncate(before);
            self.counters.failed += 1;
            return;
        }
        let len = (conn.out.len() - before) as u64;
        conn.stream_count += match self.spec.transport {
            Transport::Tcp => len,
            Transport::Udp => 1,
        };
        // OPT_ID counts from 0: the last byte of a TCP request, the datagram's index for UDP.
        let tx_id = conn.stream_count.wrapping_sub(1) as u32;
        let sent = self.epoch.now_ns();
        conn.in_flight.push_back(Pending {
            seq,
            scheduled,
            sent,
            tx_id,
            tx: None,
            reply: None,
            kind,
        });
        conn.awaiting += 1;
        self.counters.sent += 1;
        self.counters.in_flight += 1;
        self.counters.bytes_sent += len;
        let _ = self.send_lag.record(sent.saturating_sub(scheduled).max(1));
        if !self.kernel_timestamps {
            self.departed(seq, sent);
        }
        self.flush(slot);
    }

    /// Hands buffered bytes to the socket (one datagram per request on UDP).
    fn flush(&mut self, slot: usize) {
        let udp = self.spec.transport == Transport::Udp;
        let conn = &mut self.conns[slot];
        let Some(socket) = conn.socket.as_ref() else {
            return;
        };
        while conn.written < conn.out.len() {
            match socket.send(&conn.out[conn.written..]) {
                Ok(n) => {
                    conn.written += if udp {
                        conn.out.len() - conn.written
                    } else {
                        n
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.lose(slot),
            }
        }
        let conn = &mut self.conns[slot];
        if conn.written == conn.out.len() {
            conn.out.clear();
            conn.written = 0;
        }
        let want = conn.written < conn.out.len();
        if want != conn.wants_write
            && let Some(socket) = conn.socket.as_ref()
        {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let fd = socket.as_raw_fd();
            if self
                .poll
                .registry()
                .reregister(&mut SourceFd(&fd), Token(slot), interest)
                .is_ok()
            {
                conn.wants_write = want;
            }
        }
    }

    fn on_readable(&mut self, slot: usize) {
        if self.kernel_timestamps {
            self.drain_tx(slot);
        }
        loop {
            let got = match self.conns[slot].read() {
                None => return,
                Some(Err(ReadError::Full)) => {
                    // A reply larger than any protocol here allows: the server is confused.
                    self.counters.parse_errors += 1;
                    return self.lose(slot);
                }
                Some(Ok((0, _))) => return self.lose(slot),
                Some(Ok(got)) => got,
                Some(Err(ReadError::Io(e))) if e.kind() == io::ErrorKind::WouldBlock => break,
                Some(Err(ReadError::Io(e))) if e.kind() == io::ErrorKind::Interrupted => continue,
                Some(Err(ReadError::Io(_))) => return self.lose(slot),
            };
            let (n, kernel_rx) = got;
            let at = self.epoch.now_ns();
            let conn = &mut self.conns[slot];
            conn.filled += n;
            self.counters.bytes_received += n as u64;
            if !self.parse_replies(slot, at, kernel_rx) {
                self.counters.parse_errors += 1;
                return self.lose(slot);
            }
        }
        if self.kernel_timestamps {
            self.drain_tx(slot);
        }
        self.finish_front(slot);
    }

    /// Parses every whole reply in the input; an RX timestamp belongs to every reply that
    /// this recv completed (it is exact for the last and an upper bound for the others).
    /// Returns false on a malformed reply.
    fn parse_replies(&mut self, slot: usize, at: u64, kernel_rx: Option<u64>) -> bool {
        let mut used = 0;
        loop {
            let conn = &mut self.conns[slot];
            match self.protocol.parse(&conn.input[used..conn.filled]) {
                Ok(Some((reply, n))) => {
                    used += n;
                    let outcome = match reply.kind {
                        ReplyKind::Hit => Outcome::Hit,
                        ReplyKind::Miss => Outcome::Miss,
                        ReplyKind::Error => Outcome::Error,
                        _ => Outcome::Ok,
                    };
                    let Some(pending) = conn.first_awaiting() else {
                        // A reply to nothing we asked: the stream is out of step.
                        conn.consume(used);
                        return false;
                    };
                    pending.reply = Some(Received {
                        at,
                        kernel: kernel_rx,
                        outcome,
                    });
                    conn.awaiting -= 1;
                    self.counters.received += 1;
                    self.counters.in_flight -= 1;
                    if outcome == Outcome::Error {
                        self.counters.error_replies += 1;
                    }
                    if reply.close {
                        conn.consume(used);
                        self.finish_front(slot);
                        self.lose(slot);
                        return true;
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    self.conns[slot].consume(used);
                    return false;
                }
            }
        }
        self.conns[slot].consume(used);
        self.finish_front(slot);
        true
    }

    /// Matches TX timestamps from the error queue to the requests they cover.
    fn drain_tx(&mut self, slot: usize) {
        let conn = &mut self.conns[slot];
        let Some(socket) = conn.socket.as_ref() else {
            return;
        };
        let mut stamped: [(u64, u64); 64] = [(0, 0); 64];
        let mut count = 0;
        let in_flight = &mut conn.in_flight;
        let _ = socket.drain_tx_timestamps(|id, ts| {
            // A timestamp for stream position `id` covers every request ending at or
            // before it (coalesced or partial sends stamp only the last byte written).
            for p in in_flight.iter_mut().filter(|p| p.tx.is_none()) {
                if (id.wrapping_sub(p.tx_id) as i32) < 0 {
                    break;
                }
                p.tx = Some(ts);
                if count < stamped.len() {
                    stamped[count] = (p.seq, ts);
                    count += 1;
                }
            }
        });
        for &(seq, ts) in &stamped[..count] {
            self.departed(seq, ts.saturating_sub(self.epoch.realtime_ns));
        }
        self.finish_front(slot);
    }

    /// Records a departure; the gap to its predecessor or successor, once both are known,
    /// is an inter-departure sample.
    fn departed(&mut self, seq: u64, at: u64) {
        if !self.kernel_timestamps {
            if let Some(prev) = self.last_departure.replace(at)
                && self.keep(seq)
            {
                self.interarrivals.push(at.saturating_sub(prev));
            }
            return;
        }
        let ring = DEPARTURE_RING as u64;
        self.departures[(seq % ring) as usize] = (seq, at);
        if seq > 0 {
            let (s, t) = self.departures[((seq - 1) % ring) as usize];
            if s == seq - 1 && self.keep(seq) {
                self.interarrivals.push(at.saturating_sub(t));
            }
        }
        let (s, t) = self.departures[((seq + 1) % ring) as usize];
        if s == seq + 1 && self.keep(seq + 1) {
            self.interarrivals.push(t.saturating_sub(at));
        }
    }

    /// Whether request `seq` (or the gap ending at it) is kept: every k-th request, k =
    /// 1/sampling rounded, from a random phase. Systematic, not random, thinning: keeping
    /// each request with probability 1/k would leave a k-th of the kept samples next to
    /// each other, and the correlation the coordinator thins for would survive.
    #[inline]
    fn keep(&self, seq: u64) -> bool {
        self.sampling > 0.0
            && (self.sample_every <= 1
                || (seq + self.sample_phase).is_multiple_of(self.sample_every))
    }

    /// Completes answered requests at the front whose timestamps are all in.
    fn finish_front(&mut self, slot: usize) {
        while let Some(p) = self.conns[slot].in_flight.front().copied() {
            let Some(reply) = p.reply else { break };
            let latency = if self.kernel_timestamps {
                match (p.tx, reply.kernel) {
                    (Some(tx), Some(rx)) => Some(rx.saturating_sub(tx)),
                    (None, _) => break,
                    (Some(_), None) => None,
                }
            } else {
                Some(reply.at.saturating_sub(p.sent))
            };
            self.conns[slot].in_flight.pop_front();
            self.complete(slot, &p, &reply, latency);
        }
    }

    fn complete(&mut self, slot: usize, p: &Pending, reply: &Received, latency: Option<u64>) {
        let _ = self
            .intended
            .record(reply.at.saturating_sub(p.scheduled).max(1));
        let Some(latency) = latency else {
            self.counters.tx_timestamps_missing += 1;
            return;
        };
        let _ = self.latency.record(latency.max(1));
        if self.keep(p.seq) {
            let departure = match p.tx {
                Some(tx) if self.kernel_timestamps => tx.saturating_sub(self.epoch.realtime_ns),
                _ => p.sent,
            };
            self.samples.push(Sample {
                departure_ns: departure,
                latency_ns: latency,
                queueing_ns: p.sent.saturating_sub(p.scheduled).min(u32::MAX as u64) as u32,
                conn: self.conns[slot].id,
                request: p.kind as u8,
                outcome: reply.outcome as u8,
            });
        }
    }

    /// The connection is gone: what awaited a reply has failed; reconnect with back-off.
    fn lose(&mut self, slot: usize) {
        let now = self.epoch.now_ns();
        let conn = &mut self.conns[slot];
        if let Some(socket) = conn.socket.take() {
            let fd = socket.as_raw_fd();
            let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        }
        let failed = conn.awaiting as u64;
        let answered_unstamped = conn.in_flight.iter().filter(|p| p.reply.is_some()).count() as u64;
        conn.in_flight.clear();
        conn.awaiting = 0;
        conn.reconnect_at = now + conn.backoff.as_nanos() as u64;
        self.counters.failed += failed;
        self.counters.in_flight -= failed;
        self.counters.tx_timestamps_missing += answered_unstamped;
    }

    fn housekeeping(&mut self, now: u64) {
        let timeout = self.spec.timeout.as_nanos() as u64;
        let grace = TX_TIMESTAMP_GRACE.as_nanos() as u64;
        for slot in 0..self.conns.len() {
            let conn = &mut self.conns[slot];
            if conn.socket.is_none() {
                if now >= conn.reconnect_at {
                    self.reconnect(slot, now);
                }
                continue;
            }
            // Answered requests whose TX timestamp never came.
            while let Some(p) = conn.in_flight.front()
                && let Some(reply) = p.reply
                && p.tx.is_none()
                && now.saturating_sub(reply.at) > grace
            {
                conn.in_flight.pop_front();
                self.counters.tx_timestamps_missing += 1;
            }
            let expired = conn
                .first_awaiting()
                .is_some_and(|p| now.saturating_sub(p.sent) > timeout);
            if expired {
                let conn = &mut self.conns[slot];
                match self.spec.transport {
                    // A lost datagram costs one request.
                    Transport::Udp => {
                        let index = conn.in_flight.len() - conn.awaiting;
                        conn.in_flight.remove(index);
                        conn.awaiting -= 1;
                        self.counters.failed += 1;
                        self.counters.timeouts += 1;
                        self.counters.in_flight -= 1;
                    }
                    // A TCP stream that stopped answering is replaced.
                    Transport::Tcp => {
                        self.counters.timeouts += conn.awaiting as u64;
                        self.lose(slot);
                    }
                }
            }
            self.finish_front(slot);
        }
    }

    fn reconnect(&mut self, slot: usize, now: u64) {
        match self.connect(RECONNECT_PATIENCE) {
            Ok(socket) if self.register(slot, &socket).is_ok() => {
                self.conns[slot].reopen(socket);
                self.counters.reconnects += 1;
            }
            _ => {
                self.counters.connect_failures += 1;
                let conn = &mut self.conns[slot];
                conn.backoff = (conn.backoff * 2).min(MAX_BACKOFF);
                conn.reconnect_at = now + conn.backoff.as_nanos() as u64;
            }
        }
    }

    fn take_batch(&mut self) -> Batch {
        // Hand the filled histogram over and start an empty one of the same shape, rather
        // than copying its ~440 KB of counts and then zeroing them.
        let take_hist = |h: &mut Histogram<u64>| std::mem::replace(h, Histogram::new_from(h));
        Batch {
            worker: self.index,
            elapsed: self.epoch.mono.elapsed(),
            samples: std::mem::replace(&mut self.samples, Vec::with_capacity(1 << 14)),
            interarrivals: std::mem::replace(&mut self.interarrivals, Vec::with_capacity(1 << 12)),
            latency: take_hist(&mut self.latency),
            intended: take_hist(&mut self.intended),
            send_lag: take_hist(&mut self.send_lag),
            counters: self.counters,
        }
    }
}
