//! The requests in flight on one connection and the stamps that complete them, as a
//! sans-I/O state machine: the worker feeds it what the socket said (a request handed
//! over, a TX timestamp from the error queue, a parsed reply, the time) and takes
//! completed requests out; no socket, no clock read, so every ordering of events can be
//! replayed in a unit test.
//!
//! A request is complete when it has its reply and, with kernel or NIC timestamps, its
//! TX stamp; the two come in either order. Requests complete in send order: replies come
//! in that order, and a TX stamp covers every request up to the byte (or datagram) it
//! names, so the requests with a stamp are always a prefix of the queue and those without
//! a reply always its tail.

use std::collections::VecDeque;
use std::ops::Range;

use thiserror::Error;

use crate::measure::{Outcome, RequestKind};
use crate::sys::{ClockMap, Transport};

/// Where departures and latencies are read from, per the worker's timestamp mode. Every
/// departure comes out in ns since the engine's epoch, the clock round cutoffs are on.
#[derive(Debug, Clone)]
pub(super) enum StampClock {
    /// User timestamps: the worker's own reads of the engine's clock around `send` and
    /// `recv`; no TX stamps are waited for.
    User,
    /// Kernel software stamps, on `CLOCK_REALTIME`.
    Kernel {
        /// `CLOCK_REALTIME` at the engine's epoch.
        epoch_realtime_ns: u64,
    },
    /// NIC stamps, on the NIC's PTP hardware clock, put on the engine's clock by a map
    /// measured against it (the worker refreshes it). Boxed: the map keeps its readings.
    Nic(Box<ClockMap>),
}

impl StampClock {
    /// Whether requests wait for a TX stamp.
    pub(super) fn stamps(&self) -> bool {
        !matches!(self, StampClock::User)
    }

    /// When a request whose TX stamp is `tx` left, ns since the engine's epoch.
    pub(super) fn departure(&self, tx: u64) -> u64 {
        match self {
            StampClock::User => tx,
            StampClock::Kernel { epoch_realtime_ns } => tx.saturating_sub(*epoch_realtime_ns),
            StampClock::Nic(map) => map.to_host(tx),
        }
    }

    /// The latency between a TX and an RX stamp, in the host clock's ns.
    fn latency(&self, tx: u64, rx: u64) -> u64 {
        let span = rx.saturating_sub(tx);
        match self {
            StampClock::Nic(map) => map.span_to_host(span),
            StampClock::User | StampClock::Kernel { .. } => span,
        }
    }
}

/// A request handed to the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Outgoing {
    /// Worker-wide sequence number, in send order.
    pub(super) seq: u64,
    /// When it was due, ns since the epoch.
    pub(super) scheduled: u64,
    /// When it was handed to the socket, ns since the epoch.
    pub(super) sent: u64,
    pub(super) kind: RequestKind,
    /// The service time it asked for, ns (synthetic requests; 0 for the others).
    pub(super) service_ns: u64,
}

/// A request on the wire.
#[derive(Debug, Clone, Copy)]
struct Pending {
    request: Outgoing,
    /// The TX timestamp id that covers it: for TCP the stream offset of its last byte,
    /// for UDP its datagram number, both as the kernel counts them with
    /// SOF_TIMESTAMPING_OPT_ID (from 0, wrapping at 2³²).
    tx_id: u32,
    /// Its TX stamp, on the stamps' clock, once known.
    tx: Option<u64>,
    reply: Option<Received>,
}

/// A parsed reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Received {
    /// When the recv that completed it returned, ns since the epoch.
    pub(super) at: u64,
    /// That recv's RX stamp, on the stamps' clock.
    pub(super) rx: Option<u64>,
    pub(super) outcome: Outcome,
    /// The time the server says it served the request, ns (synthetic replies).
    pub(super) served_ns: Option<u64>,
}

/// A request with its reply and, where stamps are used, its TX stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Completed {
    pub(super) request: Outgoing,
    /// When its reply arrived, ns since the epoch: its RX stamp on the engine's clock where
    /// it has one (a sleeping worker reads replies at its next wake-up, after they came),
    /// else when it was read.
    pub(super) replied: u64,
    /// When it left, ns since the epoch: its TX stamp on the engine's clock, or `sent`
    /// with user timestamps.
    pub(super) departure: u64,
    /// Reply minus departure, ns; `None` when the reply's recv carried no RX stamp.
    pub(super) latency: Option<u64>,
    pub(super) outcome: Outcome,
    /// The time the server says it served it, ns (synthetic replies).
    pub(super) served_ns: Option<u64>,
}

/// A reply came when no request was waiting for one: the stream is out of step with the
/// requests, and nothing read from it can be matched any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("a reply arrived with no request waiting for one")]
pub(super) struct OutOfStep;

/// What [`Inflight::expire`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Expired {
    /// Answered requests whose TX stamp did not come within the grace.
    pub(super) stamps_missing: u64,
    /// The oldest request waiting for a reply, if it waited past the timeout.
    pub(super) timeout: Option<Timeout>,
}

/// A request that waited too long for its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timeout {
    /// A datagram (or its reply) was lost: that request alone is dropped.
    Datagram,
    /// A stream stopped answering: the connection must go, with the `awaiting` requests
    /// still waiting on it ([`Inflight::lose`] fails them).
    Stream { awaiting: u64 },
}

/// What [`Inflight::lose`] dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Lost {
    /// Requests without a reply: failed.
    pub(super) unanswered: u64,
    /// Answered requests not yet complete: waiting for their TX stamp, or behind an
    /// older request that was.
    pub(super) answered: u64,
}

/// The requests in flight on one connection, in send order.
#[derive(Debug)]
pub(super) struct Inflight {
    transport: Transport,
    queue: VecDeque<Pending>,
    /// The first `stamped` requests of `queue` have their TX stamp, the others not.
    stamped: usize,
    /// Requests of `queue` without a reply.
    awaiting: usize,
    /// The unanswered requests are the last `awaiting` of `queue` (always so when replies
    /// are matched in order; matched by id, until a reply overtakes an older request).
    in_order: bool,
    /// Bytes (TCP) or datagrams (UDP) handed to the socket since it opened: the kernel's
    /// TX timestamp ids count the same way.
    stream: u64,
}

impl Inflight {
    /// An empty queue with room for `capacity` requests before it grows.
    pub(super) fn new(transport: Transport, capacity: usize) -> Inflight {
        Inflight {
            transport,
            queue: VecDeque::with_capacity(capacity),
            stamped: 0,
            awaiting: 0,
            in_order: true,
            stream: 0,
        }
    }

    /// Requests waiting for their reply.
    pub(super) fn awaiting(&self) -> usize {
        self.awaiting
    }

    /// Requests handed to the socket whose TX stamp has not come yet.
    pub(super) fn unstamped(&self) -> usize {
        self.queue.len() - self.stamped
    }

    /// Whether nothing is in flight.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// `request`, `len` bytes long (one datagram on UDP), was handed to the socket.
    /// `len` bytes that are no request's went into the stream (a session's preface or
    /// acknowledgements): the requests after them end that much further on.
    pub(super) fn skip(&mut self, len: u64) {
        if self.transport == Transport::Tcp {
            self.stream += len;
        }
    }

    pub(super) fn sent(&mut self, request: Outgoing, len: u64) {
        self.stream += match self.transport {
            Transport::Tcp => len,
            Transport::Udp => 1,
        };
        self.queue.push_back(Pending {
            request,
            // OPT_ID counts from 0: the offset of the last byte, the datagram's index.
            tx_id: self.stream.wrapping_sub(1) as u32,
            tx: None,
            reply: None,
        });
        self.awaiting += 1;
    }

    /// A TX stamp `ts` with id `id` came off the error queue. It covers every request
    /// ending at or before `id`, in the kernel's wrapping order: one stamp may cover
    /// several requests (sends coalesced into one buffer) and a request may need a later
    /// stamp than its own send's (a send accepted in part is stamped at the last byte
    /// accepted). A repeated or stale id (a retransmission, a request given up) stamps
    /// nothing. Returns the queue positions it stamped, for [`stamp`](Inflight::stamp).
    pub(super) fn on_tx(&mut self, id: u32, ts: u64) -> Range<usize> {
        let from = self.stamped;
        for p in self.queue.range_mut(from..) {
            // Ids are 32-bit and wrap: within 2 GB of each other, the wrapped difference
            // says which is later.
            if (id.wrapping_sub(p.tx_id) as i32) < 0 {
                break;
            }
            p.tx = Some(ts);
            self.stamped += 1;
        }
        from..self.stamped
    }

    /// The request at queue position `position` and its TX stamp, if it has one.
    pub(super) fn stamp(&self, position: usize) -> Option<(u64, u64)> {
        let p = self.queue.get(position)?;
        Some((p.request.seq, p.tx?))
    }

    /// A reply was parsed: it answers the oldest request still waiting for one (its RX
    /// stamp is that of the recv that completed it: exact for the last reply of a recv,
    /// an upper bound for the others).
    pub(super) fn on_reply(&mut self, reply: Received) -> Result<(), OutOfStep> {
        if self.awaiting == 0 {
            return Err(OutOfStep);
        }
        let index = self.oldest_awaiting().ok_or(OutOfStep)?;
        self.answer(index, reply);
        Ok(())
    }

    /// A reply carrying `id` was parsed: it answers the oldest request waiting for one
    /// whose sequence number's `mask` bits are `id`, wherever it is in the queue (a server
    /// that answers out of order). A reply whose id matches no request is out of step.
    pub(super) fn on_reply_id(
        &mut self,
        reply: Received,
        id: u32,
        mask: u32,
    ) -> Result<(), OutOfStep> {
        let index = self
            .queue
            .iter()
            .position(|p| p.reply.is_none() && (p.request.seq as u32) & mask == id & mask)
            .ok_or(OutOfStep)?;
        self.answer(index, reply);
        Ok(())
    }

    /// The server refused the request carrying `id` (its sequence number's `mask` bits)
    /// unprocessed: it leaves the queue without a reply, to be sent again, and is returned.
    pub(super) fn refuse(&mut self, id: u32, mask: u32) -> Result<Outgoing, OutOfStep> {
        let index = self
            .queue
            .iter()
            .position(|p| p.reply.is_none() && (p.request.seq as u32) & mask == id & mask)
            .ok_or(OutOfStep)?;
        if index < self.stamped {
            self.stamped -= 1;
        }
        let pending = self.queue.remove(index).ok_or(OutOfStep)?;
        // Unanswered requests that were the last of the queue still are.
        self.awaiting -= 1;
        Ok(pending.request)
    }

    fn answer(&mut self, index: usize, reply: Received) {
        if self.in_order && index != self.queue.len() - self.awaiting {
            self.in_order = false;
        }
        if let Some(p) = self.queue.get_mut(index) {
            p.reply = Some(reply);
            self.awaiting -= 1;
        }
        if self.awaiting == 0 {
            self.in_order = true;
        }
    }

    /// The position of the oldest request without a reply. Replies matched in order
    /// leave the unanswered ones at the back; matched by id they may be anywhere.
    fn oldest_awaiting(&self) -> Option<usize> {
        if self.awaiting == 0 {
            return None;
        }
        if self.in_order {
            return Some(self.queue.len() - self.awaiting);
        }
        self.queue.iter().position(|p| p.reply.is_none())
    }

    /// The oldest request if it is complete (answered and, with stamps, stamped): later
    /// ones wait behind it, so that requests complete in send order.
    pub(super) fn pop_completed(&mut self, clock: &StampClock) -> Option<Completed> {
        let p = self.queue.front()?;
        let reply = p.reply?;
        let (departure, latency) = if clock.stamps() {
            let tx = p.tx?;
            (
                clock.departure(tx),
                reply.rx.map(|rx| clock.latency(tx, rx)),
            )
        } else {
            let sent = p.request.sent;
            (sent, Some(reply.at.saturating_sub(sent)))
        };
        let done = Completed {
            request: p.request,
            replied: latency.map_or(reply.at, |l| departure + l),
            departure,
            latency,
            outcome: reply.outcome,
            served_ns: reply.served_ns,
        };
        self.pop_front();
        Some(done)
    }

    /// Gives up, at `now`, what has waited too long: answered requests at the front whose
    /// TX stamp has not come `grace` after their reply (the kernel drops stamps under
    /// pressure), and the oldest request without a reply once `timeout` has passed since
    /// it was sent (one per call: a lost datagram is dropped, a stalled stream reported).
    pub(super) fn expire(
        &mut self,
        now: u64,
        clock: &StampClock,
        grace: u64,
        timeout: u64,
    ) -> Expired {
        let mut expired = Expired::default();
        while clock.stamps()
            && let Some(p) = self.queue.front()
            && let Some(reply) = p.reply
            && p.tx.is_none()
            && now.saturating_sub(reply.at) > grace
        {
            self.pop_front();
            expired.stamps_missing += 1;
        }
        let Some(oldest) = self.oldest_awaiting() else {
            return expired;
        };
        if self
            .queue
            .get(oldest)
            .is_some_and(|p| now.saturating_sub(p.request.sent) > timeout)
        {
            expired.timeout = Some(match self.transport {
                Transport::Udp => {
                    if oldest < self.stamped {
                        self.stamped -= 1;
                    }
                    self.queue.remove(oldest);
                    self.awaiting -= 1;
                    Timeout::Datagram
                }
                Transport::Tcp => Timeout::Stream {
                    awaiting: self.awaiting as u64,
                },
            });
        }
        expired
    }

    /// The connection is gone: everything in flight is dropped, and the stream's count
    /// starts again from 0 for the next socket, as the kernel's ids do.
    pub(super) fn lose(&mut self) -> Lost {
        let lost = Lost {
            unanswered: self.awaiting as u64,
            answered: (self.queue.len() - self.awaiting) as u64,
        };
        self.queue.clear();
        self.stamped = 0;
        self.awaiting = 0;
        self.in_order = true;
        self.stream = 0;
        lost
    }

    fn pop_front(&mut self) {
        if self.queue.pop_front().is_some_and(|p| p.tx.is_some()) {
            self.stamped -= 1;
        }
    }
}

#[cfg(test)]
mod tests;
