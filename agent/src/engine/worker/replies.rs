//! A worker reading what its connections received: the bytes off the socket, the replies
//! parsed out of them and matched to their requests (in order, or by the id a reply
//! carries), and the TX stamps that complete them.

use std::io;

use vernier_protocols::{Parsed, ReplyKind};

use super::Worker;
use crate::engine::arrivals::{Arrival, Due};
use crate::engine::conn::{Read, ReadError, TxDrain};
use crate::engine::inflight::{Outgoing, Received};
use crate::measure::{Outcome, RequestKind};

impl Worker {
    /// The poller reported the socket: `readable` (data, or the peer's close), or only
    /// its error queue (a TX stamp, on loopback queued within the send itself). Each
    /// request costs one read for its reply and one for its stamp: a short TCP read ends
    /// the reading, the stamps are read only while a request waits for one, and a
    /// report of the error queue alone reads no data unless the queue held no stamp.
    pub(super) fn on_readable(&mut self, slot: usize, readable: bool) {
        if self.kernel_timestamps && !readable && self.drain_tx(slot, TxDrain::Always) > 0 {
            return;
        }
        loop {
            let got = match self.conns[slot].read() {
                None => return,
                Some(Err(ReadError::Full)) => {
                    // A reply larger than any protocol here allows: the server is confused.
                    self.counters.parse_errors += 1;
                    return self.lose(slot);
                }
                Some(Ok(Read { bytes: 0, .. })) => return self.lose(slot),
                Some(Ok(got)) => got,
                Some(Err(ReadError::Io(e))) if e.kind() == io::ErrorKind::WouldBlock => break,
                Some(Err(ReadError::Io(e))) if e.kind() == io::ErrorKind::Interrupted => continue,
                Some(Err(ReadError::Io(_))) => return self.lose(slot),
            };
            let at = self.epoch.now_ns();
            self.counters.bytes_received += got.bytes as u64;
            if !self.parse_replies(slot, at, got.rx) {
                self.counters.parse_errors += 1;
                return self.lose(slot);
            }
            if got.drained {
                break;
            }
        }
        if self.kernel_timestamps {
            self.drain_tx(slot, TxDrain::WhileUnstamped);
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
            match conn.parse(used) {
                Ok(Parsed::Consumed(n)) => used += n,
                Ok(Parsed::Reply(reply, n)) if reply.kind == ReplyKind::Refused => {
                    used += n;
                    let Ok(request) = conn.refuse(self.matching, reply.opaque) else {
                        conn.consume(used);
                        return false;
                    };
                    self.tally.gone(request.seq, at);
                    self.retry(slot, request);
                }
                Ok(Parsed::Reply(reply, n)) => {
                    used += n;
                    let outcome = Outcome::of(reply.kind);
                    let received = Received {
                        at,
                        rx: kernel_rx,
                        outcome,
                        served_ns: reply.served_ns,
                    };
                    if conn
                        .on_reply(received, self.matching, reply.opaque)
                        .is_err()
                    {
                        // A reply to nothing we asked: the stream is out of step.
                        conn.consume(used);
                        return false;
                    }
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
                Ok(Parsed::Incomplete) => break,
                Err(_) => {
                    self.conns[slot].consume(used);
                    return false;
                }
            }
        }
        self.conns[slot].consume(used);
        self.finish_front(slot);
        if self.conns[slot].spent() {
            self.replace(slot);
            return true;
        }
        // A session's answers (acknowledgements, window updates) go out at once.
        if self.conns[slot].has_output() {
            self.flush(slot);
        }
        true
    }

    /// A request the server refused unprocessed goes back into the backlog at its place in
    /// the schedule, to leave again on a connection that takes it: its latency still runs
    /// from when it was scheduled.
    fn retry(&mut self, slot: usize, request: Outgoing) {
        self.counters.retried += 1;
        self.counters.in_flight -= 1;
        let arrival = match request.kind {
            RequestKind::Probe => Arrival::Probe,
            _ => Arrival::Load,
        };
        let second = slot >= self.second_from;
        let due = Due {
            at: request.scheduled,
            arrival,
            second,
        };
        let backlog = &mut self.backlog[usize::from(second)];
        backlog.insert(backlog.partition_point(|d| d.at <= due.at), due);
    }

    /// The connection's session is spent (its GOAWAY's streams are done): it is closed,
    /// what is still open on it failing with it, and replaced at once, so that the next
    /// requests need not wait for the housekeeping's reconnect.
    fn replace(&mut self, slot: usize) {
        if self.kernel_timestamps {
            self.drain_tx(slot, TxDrain::WhileUnstamped);
        }
        self.lose(slot);
        self.reconnect(slot, self.epoch.now_ns());
    }
}
