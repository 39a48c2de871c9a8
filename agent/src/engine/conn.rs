//! One connection of a worker: its socket, its buffers, and the requests in flight on it
//! ([`Inflight`]), kept consistent with each other: nothing is in flight without a
//! socket, and a new socket starts a new stream (the kernel's TX timestamp ids count from
//! 0 again). The worker decides what to send and what to count; the socket calls that
//! feed the state machine are here.

use std::io;
use std::net::SocketAddr;
use std::ops::Range;
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use vernier_protocols::{EncodeError, Matching, ParseError, Parsed, Protocol, Request, Session};

use super::inflight::{
    Completed, Expired, Inflight, Lost, OutOfStep, Outgoing, Received, StampClock,
};
use super::roots::CONTEXT;
use crate::config::{AgentKind, LoadSpec};
use crate::sys::{SysError, Transport, TsSocket};

/// Largest reply buffer before a connection is declared broken: a reply parser that needs
/// more than this is facing a server gone wrong, not a slow one.
const MAX_READ_BUFFER: usize = 4 << 20;
const READ_CHUNK: usize = 64 << 10;
/// The first reconnect's back-off, doubled on each failure up to the worker's limit.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// SO_BUSY_POLL budget for latency agents, µs.
const LATENCY_AGENT_BUSY_POLL_US: u32 = 50;

/// Opens a connection to `addr` (`spec`'s target, or its duet's second server) and waits
/// (at most `patience`) for the handshake, so that a connection in the pool is always
/// usable.
pub(super) fn dial(
    spec: &LoadSpec,
    addr: SocketAddr,
    patience: Duration,
) -> Result<TsSocket, SysError> {
    let busy = (spec.kind == AgentKind::Latency).then_some(LATENCY_AGENT_BUSY_POLL_US);
    let socket = TsSocket::connect(addr, spec.transport, &spec.timestamps, busy)?;
    socket
        .wait_connected(patience)
        .map_err(|source| SysError::Socket {
            what: "connect",
            addr,
            transport: spec.transport,
            source,
        })?;
    Ok(socket)
}

/// Registers `socket`, the connection in `slot`, with the worker's poller for reading.
pub(super) fn register(registry: &Registry, slot: usize, socket: &TsSocket) -> io::Result<()> {
    let fd = socket.as_raw_fd();
    registry.register(&mut SourceFd(&fd), Token(slot), Interest::READABLE)
}

/// Why a read gave no bytes.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The input buffer is at its limit with no whole reply in it.
    Full,
    /// The socket's error (WouldBlock included).
    Io(io::Error),
}

/// When [`Conn::drain_tx`] reads the socket's error queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TxDrain {
    /// Only while a request waits for its stamp: after replies were read, so that a
    /// request costs one read for its stamp and no more.
    WhileUnstamped,
    /// Even with every request stamped: the poller reported the error queue, where a
    /// retransmission's repeated stamp, or a real error, may be.
    Always,
}

/// What one read got.
#[derive(Debug, Clone, Copy)]
pub(super) struct Read {
    /// Bytes read; 0 is a TCP peer's orderly close.
    pub(super) bytes: usize,
    /// The RX timestamp, see [`TsSocket::recv`].
    pub(super) rx: Option<u64>,
    /// The socket had nothing more: a TCP read that left room in the buffer took all
    /// that was queued, and anything arriving later raises a new readiness edge, so
    /// the read that would only say `WouldBlock` is saved. Never set for UDP (one
    /// datagram per read).
    pub(super) drained: bool,
}

#[derive(Debug)]
pub(super) struct Conn {
    /// Index within the agent (reported in samples).
    id: u16,
    socket: Option<TsSocket>,
    /// Encoded bytes not yet accepted by the socket, from `written`.
    out: Vec<u8>,
    written: usize,
    /// Received bytes not yet parsed: `input[..filled]`.
    input: Vec<u8>,
    filled: usize,
    inflight: Inflight,
    /// The protocol's state for this socket (HTTP/2's streams and windows; nothing, for a
    /// protocol whose connections are alike), through which every request is encoded and
    /// every reply parsed.
    session: Box<dyn Session>,
    /// When to try reconnecting, ns since the epoch, while `socket` is None.
    reconnect_at: u64,
    backoff: Duration,
    /// Whether the poller watches the socket for writability (bytes are waiting in `out`).
    wants_write: bool,
    /// Socket calls made, every socket of the connection's life counted.
    calls: SocketCalls,
}

/// Socket calls a connection made, for the worker's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct SocketCalls {
    pub(super) sends: u64,
    pub(super) reads: u64,
}

impl Conn {
    /// A connection on `socket`, speaking `protocol` (whose session opens with what it
    /// sends first, if anything).
    pub(super) fn new(id: u16, socket: TsSocket, depth: usize, protocol: &Protocol) -> Conn {
        let transport = socket.transport();
        let mut conn = Conn {
            id,
            socket: Some(socket),
            out: Vec::with_capacity(16 << 10),
            written: 0,
            input: vec![0; READ_CHUNK],
            filled: 0,
            inflight: Inflight::new(transport, depth * 2 + 4),
            session: protocol.session_with(&CONTEXT),
            reconnect_at: 0,
            backoff: FIRST_BACKOFF,
            wants_write: false,
            calls: SocketCalls::default(),
        };
        conn.open_session();
        conn
    }

    /// A new socket's session: what it sends first is queued, and counted as no request's.
    fn open_session(&mut self) {
        let before = self.out.len();
        self.session.open(&mut self.out);
        self.inflight.skip((self.out.len() - before) as u64);
    }

    /// Index within the agent.
    pub(super) fn id(&self) -> u16 {
        self.id
    }

    /// Whether another request may go out on this connection.
    #[inline]
    pub(super) fn has_slot(&self, depth: usize) -> bool {
        self.socket.is_some() && self.inflight.awaiting() < depth && self.session.ready()
    }

    /// Appends one request to the output, through the connection's session: its length,
    /// or the error with the output as it was.
    pub(super) fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
    ) -> Result<u64, EncodeError> {
        let before = self.out.len();
        match self.session.encode(request, opaque, &mut self.out) {
            Ok(()) => Ok((self.out.len() - before) as u64),
            Err(e) => {
                self.out.truncate(before);
                Err(e)
            }
        }
    }

    /// Parses the next unit of the input from `from`, through the connection's session:
    /// a reply, bytes of the session's own (a control frame, whose answer is queued and
    /// counted as no request's), or incomplete. The caller advances `from` by what was
    /// taken and [consumes](Conn::consume) the input once per read, not per unit.
    #[inline]
    pub(super) fn parse(&mut self, from: usize) -> Result<Parsed, ParseError> {
        let buf = &self.input[from..self.filled];
        let before = self.out.len();
        let parsed = self.session.parse(buf, &mut self.out);
        let answered = self.out.len() - before;
        if answered > 0 {
            self.inflight.skip(answered as u64);
        }
        parsed
    }

    /// Whether bytes wait to be handed to the socket.
    pub(super) fn has_output(&self) -> bool {
        self.written < self.out.len()
    }

    /// The request just encoded (`len` bytes) is on its way; see [`Inflight::sent`].
    pub(super) fn sent(&mut self, request: Outgoing, len: u64) {
        self.inflight.sent(request, len);
    }

    /// Hands buffered bytes to the socket (one datagram per send on UDP), and asks
    /// `registry` to report writability while some are left. An error is the
    /// connection's end: the caller loses it.
    pub(super) fn flush(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let Some(socket) = self.socket.as_ref() else {
            return Ok(());
        };
        let udp = socket.transport() == Transport::Udp;
        while self.written < self.out.len() {
            self.calls.sends += 1;
            match socket.send(&self.out[self.written..]) {
                Ok(n) => {
                    self.written += if udp {
                        self.out.len() - self.written
                    } else {
                        n
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        if self.written == self.out.len() {
            self.out.clear();
            self.written = 0;
        }
        let want = self.written < self.out.len();
        if want != self.wants_write {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let fd = socket.as_raw_fd();
            // A failed reregistration is tried again on the next flush.
            if registry
                .reregister(&mut SourceFd(&fd), token, interest)
                .is_ok()
            {
                self.wants_write = want;
            }
        }
        Ok(())
    }

    /// Reads what the socket has into the input buffer, growing it up to
    /// [`MAX_READ_BUFFER`]: the byte count and the RX timestamp; `None` without a socket.
    pub(super) fn read(&mut self) -> Option<Result<Read, ReadError>> {
        let socket = self.socket.as_ref()?;
        if self.input.len() - self.filled < READ_CHUNK / 4 {
            if self.input.len() >= MAX_READ_BUFFER {
                return Some(Err(ReadError::Full));
            }
            let grown = (self.input.len() * 2).min(MAX_READ_BUFFER);
            self.input.resize(grown, 0);
        }
        let room = self.input.len() - self.filled;
        self.calls.reads += 1;
        let tcp = socket.transport() == Transport::Tcp;
        let got = socket
            .recv(&mut self.input[self.filled..])
            .map_err(ReadError::Io)
            .map(|(bytes, rx)| Read {
                bytes,
                rx,
                drained: tcp && bytes < room,
            });
        if let Ok(r) = &got {
            self.filled += r.bytes;
        }
        Some(got)
    }

    /// Drops `used` parsed bytes from the front of the input.
    pub(super) fn consume(&mut self, used: usize) {
        if used == 0 {
            return;
        }
        self.input.copy_within(used..self.filled, 0);
        self.filled -= used;
    }

    /// A reply was parsed: matched in order ([`Inflight::on_reply`]) or by the id it
    /// carries, as the protocol matches.
    pub(super) fn on_reply(
        &mut self,
        reply: Received,
        matching: Matching,
        opaque: Option<u32>,
    ) -> Result<(), OutOfStep> {
        match (matching, opaque) {
            // By the id the reply carries: the request whose sequence number's `mask`
            // bits it is (see [`Inflight::on_reply_id`]).
            (Matching::ById { mask }, Some(id)) => self.inflight.on_reply_id(reply, id, mask),
            _ => self.inflight.on_reply(reply),
        }
    }

    /// The server refused the request that `opaque` names, unprocessed (see
    /// [`Inflight::refuse`]): the request, to be sent again. Only a protocol matched by id
    /// refuses requests (HTTP/2); for another, a refusal is out of step.
    pub(super) fn refuse(
        &mut self,
        matching: Matching,
        opaque: Option<u32>,
    ) -> Result<Outgoing, OutOfStep> {
        match (matching, opaque) {
            (Matching::ById { mask }, Some(id)) => self.inflight.refuse(id, mask),
            _ => Err(OutOfStep),
        }
    }

    /// Whether the connection's session is of no more use (see [`Session::spent`]).
    pub(super) fn spent(&self) -> bool {
        self.session.spent()
    }

    /// Matches the TX timestamps on the socket's error queue to the requests they cover,
    /// reading until no request waits for one (or the queue is empty): the queue
    /// positions stamped, for [`stamp`](Conn::stamp), and how many stamps were read. With
    /// every request stamped it reads nothing unless `when` is [`TxDrain::Always`].
    pub(super) fn drain_tx(&mut self, when: TxDrain) -> (Range<usize>, usize) {
        let Some(socket) = self.socket.as_ref() else {
            return (0..0, 0);
        };
        let inflight = &mut self.inflight;
        if when == TxDrain::WhileUnstamped && inflight.unstamped() == 0 {
            return (0..0, 0);
        }
        let mut stamped: Option<Range<usize>> = None;
        // An error reading the queue leaves the stamps to the next drain or the grace.
        let (read, calls) = socket
            .drain_tx_timestamps_while(|id, ts| {
                let got = inflight.on_tx(id, ts);
                stamped = Some(stamped.as_ref().map_or(got.clone(), |s| s.start..got.end));
                inflight.unstamped() > 0
            })
            .unwrap_or((0, 1));
        self.calls.reads += calls as u64;
        (stamped.unwrap_or(0..0), read)
    }

    /// The socket calls made so far.
    pub(super) fn calls(&self) -> SocketCalls {
        self.calls
    }

    /// The request at queue position `position` and its TX stamp; see
    /// [`Inflight::stamp`].
    pub(super) fn stamp(&self, position: usize) -> Option<(u64, u64)> {
        self.inflight.stamp(position)
    }

    /// The oldest request, if complete; see [`Inflight::pop_completed`].
    pub(super) fn pop_completed(&mut self, clock: &StampClock) -> Option<Completed> {
        self.inflight.pop_completed(clock)
    }

    /// Gives up what waited too long; see [`Inflight::expire`].
    pub(super) fn expire(
        &mut self,
        now: u64,
        clock: &StampClock,
        grace: Duration,
        timeout: Duration,
    ) -> Expired {
        self.inflight.expire(
            now,
            clock,
            grace.as_nanos() as u64,
            timeout.as_nanos() as u64,
        )
    }

    /// Whether the socket is gone and its back-off has passed at `now`.
    pub(super) fn reconnect_due(&self, now: u64) -> bool {
        self.socket.is_none() && now >= self.reconnect_at
    }

    /// The connection is gone at `now`: the socket leaves the poller and is closed, what
    /// was in flight is dropped (and returned to be counted), and a reconnect is due after
    /// the back-off.
    pub(super) fn lose(&mut self, now: u64, registry: &Registry) -> Lost {
        if let Some(socket) = self.socket.take() {
            let fd = socket.as_raw_fd();
            let _ = registry.deregister(&mut SourceFd(&fd));
        }
        self.reconnect_at = now + self.backoff.as_nanos() as u64;
        self.inflight.lose()
    }

    /// A reconnect failed at `now`: the next waits twice as long, up to `max_backoff`.
    pub(super) fn retry_later(&mut self, now: u64, max_backoff: Duration) {
        self.backoff = (self.backoff * 2).min(max_backoff);
        self.reconnect_at = now + self.backoff.as_nanos() as u64;
    }

    /// Takes a fresh socket after [`lose`](Conn::lose): empty buffers, a new stream, a
    /// new session.
    pub(super) fn reopen(&mut self, socket: TsSocket, protocol: &Protocol) {
        debug_assert!(self.inflight.is_empty(), "reopened with requests in flight");
        self.inflight.lose();
        self.socket = Some(socket);
        self.out.clear();
        self.written = 0;
        self.filled = 0;
        self.wants_write = false;
        self.backoff = FIRST_BACKOFF;
        self.session = protocol.session_with(&CONTEXT);
        self.open_session();
    }
}
