//! One connection of a worker: its socket, buffers, and the requests in flight on it in
//! send order, each waiting for its reply and (with kernel or NIC timestamps) for its TX
//! timestamp.

use std::collections::VecDeque;
use std::time::Duration;

use crate::measure::RequestKind;
use crate::sys::TsSocket;

/// Largest reply buffer before a connection is declared broken: a reply parser that needs
/// more than this is facing a server gone wrong, not a slow one.
pub(super) const MAX_READ_BUFFER: usize = 4 << 20;
const READ_CHUNK: usize = 64 << 10;

/// A request on the wire.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    /// Worker-wide sequence number, in send order.
    pub(super) seq: u64,
    /// When it was due, monotonic ns since the epoch.
    pub(super) scheduled: u64,
    /// When it was handed to the socket, monotonic ns since the epoch.
    pub(super) sent: u64,
    /// TX timestamp id that covers it: for TCP the stream offset of its last byte, for UDP
    /// its datagram number (both as the kernel counts them with SOF_TIMESTAMPING_OPT_ID).
    pub(super) tx_id: u32,
    /// Kernel/NIC TX timestamp, realtime ns, once known.
    pub(super) tx: Option<u64>,
    /// The reply, once parsed.
    pub(super) reply: Option<Received>,
    pub(super) kind: RequestKind,
}

/// A parsed reply.
#[derive(Debug, Clone, Copy)]
pub(super) struct Received {
    /// Monotonic ns since the epoch when the recv that completed it returned.
    pub(super) at: u64,
    /// The kernel/NIC RX timestamp of that recv, realtime ns.
    pub(super) kernel: Option<u64>,
    pub(super) outcome: crate::measure::Outcome,
}

/// Why a read gave no bytes.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The input buffer is at its limit with no whole reply in it.
    Full,
    /// The socket's error (WouldBlock included).
    Io(std::io::Error),
}

#[derive(Debug)]
pub(super) struct Conn {
    /// Index within the agent (reported in samples).
    pub(super) id: u16,
    pub(super) socket: Option<TsSocket>,
    /// Encoded bytes not yet accepted by the socket (TCP), from `written`.
    pub(super) out: Vec<u8>,
    pub(super) written: usize,
    pub(super) input: Vec<u8>,
    pub(super) filled: usize,
    /// Bytes (TCP) or datagrams (UDP) handed to the stream since the socket opened, for
    /// matching TX timestamp ids.
    pub(super) stream_count: u64,
    pub(super) in_flight: VecDeque<Pending>,
    /// Of `in_flight`, those still waiting for a reply (they are its tail).
    pub(super) awaiting: usize,
    /// When to try reconnecting, monotonic ns, while `socket` is None.
    pub(super) reconnect_at: u64,
    pub(super) backoff: Duration,
    pub(super) wants_write: bool,
}

impl Conn {
    pub(super) fn new(id: u16, socket: TsSocket, depth: usize) -> Conn {
        Conn {
            id,
            socket: Some(socket),
            out: Vec::with_capacity(16 << 10),
            written: 0,
            input: vec![0; READ_CHUNK],
            filled: 0,
            stream_count: 0,
            in_flight: VecDeque::with_capacity(depth * 2 + 4),
            awaiting: 0,
            reconnect_at: 0,
            backoff: Duration::from_millis(1),
            wants_write: false,
        }
    }

    /// Whether another request may go out on this connection.
    #[inline]
    pub(super) fn has_slot(&self, depth: usize) -> bool {
        self.socket.is_some() && self.awaiting < depth
    }

    /// Reads what the socket has into the input buffer, growing it up to
    /// [`MAX_READ_BUFFER`]: the byte count and the RX timestamp; `None` without a socket.
    pub(super) fn read(&mut self) -> Option<Result<(usize, Option<u64>), ReadError>> {
        let socket = self.socket.as_ref()?;
        if self.input.len() - self.filled < READ_CHUNK / 4 {
            if self.input.len() >= MAX_READ_BUFFER {
                return Some(Err(ReadError::Full));
            }
            let grown = (self.input.len() * 2).min(MAX_READ_BUFFER);
            self.input.resize(grown, 0);
        }
        Some(
            socket
                .recv(&mut self.input[self.filled..])
                .map_err(ReadError::Io),
        )
    }

    /// Drops `used` parsed bytes from the front of the input.
    pub(super) fn consume(&mut self, used: usize) {
        if used == 0 {
            return;
        }
        self.input.copy_within(used..self.filled, 0);
        self.filled -= used;
    }

    /// The first request still waiting for its reply.
    pub(super) fn first_awaiting(&mut self) -> Option<&mut Pending> {
        let index = self.in_flight.len().checked_sub(self.awaiting)?;
        self.in_flight.get_mut(index)
    }

    /// Resets the stream state for a fresh socket.
    pub(super) fn reopen(&mut self, socket: TsSocket) {
        self.socket = Some(socket);
        self.out.clear();
        self.written = 0;
        self.filled = 0;
        self.stream_count = 0;
        self.wants_write = false;
        self.backoff = Duration::from_millis(1);
    }
}
