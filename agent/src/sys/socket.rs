//! [`TsSocket`]: a non-blocking connected socket that reports when the kernel or the NIC
//! saw each of its packets leave and arrive.
//!
//! # What a TX timestamp's id means
//!
//! Transmit timestamps come back on the socket's error queue, each with an id
//! (`SOF_TIMESTAMPING_OPT_ID`, the `ee_data` of its `sock_extended_err`), measured on
//! loopback and veth by the tests in `agent/tests/timestamps.rs`:
//!
//! - **TCP**: the byte offset of the **last byte** of the `send` that was stamped,
//!   counting the connection's first payload byte as 0 and wrapping at 2³² — i.e. the
//!   cumulative number of bytes sent up to and including that call, minus one. A request
//!   whose last byte sits at cumulative offset `o` left when the first timestamp with an
//!   id at or past `o` (in wrapping order) was taken. The kernel keeps one stamp per
//!   buffer it transmits: when a later `send` appends to a buffer still queued, only the
//!   later send's last byte is reported, so one timestamp can cover several requests;
//!   a `send` accepted only in part is keyed by the last byte it accepted; a
//!   retransmission may report an id again (keep the first).
//! - **UDP**: the datagram's number, counting the socket's first datagram as 0.
//!
//! TCP ids are anchored with `SOF_TIMESTAMPING_OPT_ID_TCP` (Linux 6.2+), which keys them
//! on the bytes written rather than the bytes acknowledged, so they do not depend on
//! whether the handshake finished before the option was set. On older kernels the socket
//! waits for the handshake instead, before any byte is written, which gives the same ids.
//!
//! # Polling
//!
//! The socket is non-blocking; register [`as_raw_fd`](TsSocket::as_raw_fd) with epoll
//! or mio (it implements [`mio::event::Source`]). Pending TX timestamps make it poll with
//! `EPOLLERR` until [`drain_tx_timestamps`](TsSocket::drain_tx_timestamps) empties the
//! error queue, so a poller must drain on error readiness.

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{
    ControlMessageOwned, MsgFlags, TimestampingFlag, Timestamps, recvmsg, send, setsockopt, sockopt,
};
use nix::sys::time::TimeSpec;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::error::SysError;
use super::ethtool::enable_hardware_timestamping;
use super::mode::TimestampMode;
use super::transport::Transport;

/// How long [`TsSocket::connect`] waits for a TCP handshake on a kernel too old for
/// `SOF_TIMESTAMPING_OPT_ID_TCP` (the only case in which it waits at all).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// `SCM_TSTAMP_SND` from `<linux/errqueue.h>`: the stamp taken as the packet left
/// (libc does not export it).
const SCM_TSTAMP_SND: u32 = 0;

/// Room for the control messages of one `recvmsg`: `SCM_TIMESTAMPING` (a 16-byte header
/// and three timespecs, 64 bytes) and, on the error queue, `IP_RECVERR`/`IPV6_RECVERR`
/// (header, `sock_extended_err` and the offender's `sockaddr_in6`, 64 bytes), with room
/// to spare for a control message we did not ask for. A message that still does not fit
/// is reported by the kernel as truncated (`MSG_CTRUNC`) and its timestamp is dropped,
/// never misread.
const CMSG_CAPACITY: usize = 256;

/// A control-message buffer on the stack: `recv` and `drain_tx_timestamps` take `&self`
/// and must not allocate, so each call gets its own. `cmsghdr` holds `size_t` fields,
/// hence the alignment.
#[repr(C, align(8))]
struct CmsgBuffer([u8; CMSG_CAPACITY]);

impl CmsgBuffer {
    fn new() -> Self {
        CmsgBuffer([0; CMSG_CAPACITY])
    }
}

/// Which of `SCM_TIMESTAMPING`'s three timestamps this socket reads, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// User timestamps: the socket asks the kernel for nothing.
    None,
    /// `ts[0]`, the kernel's software stamp in `CLOCK_REALTIME`.
    Software,
    /// `ts[2]`, the NIC's raw PTP hardware clock.
    Hardware,
}

impl Source {
    /// The `SO_TIMESTAMPING` flags that make the kernel take and report this source's
    /// stamps, with TX ids and without looping the packet back (`OPT_TSONLY`).
    fn flags(self) -> Option<TimestampingFlag> {
        let common = TimestampingFlag::SOF_TIMESTAMPING_OPT_ID
            | TimestampingFlag::SOF_TIMESTAMPING_OPT_TSONLY;
        match self {
            Source::None => None,
            Source::Software => Some(
                common
                    | TimestampingFlag::SOF_TIMESTAMPING_TX_SOFTWARE
                    | TimestampingFlag::SOF_TIMESTAMPING_RX_SOFTWARE
                    | TimestampingFlag::SOF_TIMESTAMPING_SOFTWARE,
            ),
            Source::Hardware => Some(
                common
                    | TimestampingFlag::SOF_TIMESTAMPING_TX_HARDWARE
                    | TimestampingFlag::SOF_TIMESTAMPING_RX_HARDWARE
                    | TimestampingFlag::SOF_TIMESTAMPING_RAW_HARDWARE,
            ),
        }
    }

    /// This source's timestamp among the three, in nanoseconds; `None` when the kernel
    /// left it zero (no stamp of this kind was taken).
    fn pick(self, ts: &Timestamps) -> Option<u64> {
        match self {
            Source::None => None,
            Source::Software => timespec_ns(&ts.system),
            Source::Hardware => timespec_ns(&ts.hw_raw),
        }
    }
}

fn timespec_ns(ts: &TimeSpec) -> Option<u64> {
    let secs = u64::try_from(ts.tv_sec()).ok()?;
    let nanos = u64::try_from(ts.tv_nsec()).ok()?;
    let ns = secs.checked_mul(1_000_000_000)?.checked_add(nanos)?;
    (ns != 0).then_some(ns)
}

/// What became of the `SO_BUSY_POLL` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyPoll {
    /// None was asked for.
    Off,
    /// The socket busy-polls the device queue for up to this many µs on a blocking read.
    On(u32),
    /// The kernel refused the value (`EPERM`: above `net.core.busy_read` without
    /// CAP_NET_ADMIN; `EINVAL`: no busy-poll support); the socket works without it.
    Refused {
        /// The µs asked for.
        requested: u32,
        /// The kernel's answer.
        errno: Errno,
    },
}

impl BusyPoll {
    /// A line for the user when busy-polling was asked for and refused.
    pub fn note(&self) -> Option<String> {
        match self {
            BusyPoll::Refused { requested, errno } => Some(format!(
                "SO_BUSY_POLL {requested} µs refused ({}: {}); continuing without it{}",
                errno,
                errno.desc(),
                if *errno == Errno::EPERM {
                    " (raising it above net.core.busy_read needs CAP_NET_ADMIN)"
                } else {
                    ""
                }
            )),
            BusyPoll::Off | BusyPoll::On(_) => None,
        }
    }
}

/// A non-blocking connected TCP or UDP socket with kernel or NIC timestamps.
///
/// TCP sockets have `TCP_NODELAY` set: a request must leave when it is sent, not when
/// Nagle's algorithm decides.
#[derive(Debug)]
pub struct TsSocket {
    socket: Socket,
    peer: SocketAddr,
    transport: Transport,
    source: Source,
    busy_poll: BusyPoll,
}

impl TsSocket {
    /// Opens a socket to `addr` with `mode`'s timestamps, and starts connecting.
    ///
    /// The connect is non-blocking: a TCP socket may still be in its handshake when this
    /// returns. [`connected`](TsSocket::connected) tells when it is done (or failed) and
    /// [`wait_connected`](TsSocket::wait_connected) blocks until then; a `send` before
    /// then fails with `WouldBlock`. A refusal the kernel knows at once (loopback) is
    /// returned here as [`SysError::Connect`].
    ///
    /// For [`TimestampMode::Hardware`] the interface is checked first (it must exist and
    /// its NIC must stamp every packet both ways; otherwise the error says what
    /// `ethtool -T` shows) and switched on with `SIOCSHWTSTAMP`, which needs
    /// CAP_NET_ADMIN. The socket is not bound to the interface: the route to `addr` must
    /// go through it, or no hardware stamps arrive.
    ///
    /// `busy_poll_us` sets `SO_BUSY_POLL`; a refusal does not fail the connect, it is
    /// reported by [`busy_poll`](TsSocket::busy_poll).
    ///
    /// The first kernel-mode connect of a process takes some 20 ms more: it makes sure
    /// the kernel is stamping received packets before any reply arrives
    /// (`keep_rx_software_timestamping_on`).
    pub fn connect(
        addr: SocketAddr,
        transport: Transport,
        mode: &TimestampMode,
        busy_poll_us: Option<u32>,
    ) -> Result<TsSocket, SysError> {
        Self::connect_with(addr, transport, mode, busy_poll_us, true)
    }

    /// [`connect`](TsSocket::connect), with the choice of `SOF_TIMESTAMPING_OPT_ID_TCP`
    /// open so the tests can exercise the path taken on kernels without it.
    pub(crate) fn connect_with(
        addr: SocketAddr,
        transport: Transport,
        mode: &TimestampMode,
        busy_poll_us: Option<u32>,
        opt_id_tcp: bool,
    ) -> Result<TsSocket, SysError> {
        let source = match mode {
            TimestampMode::Hardware { interface } if interface.is_empty() => {
                return Err(TimestampMode::no_interface_error());
            }
            TimestampMode::Hardware { interface } => {
                enable_hardware_timestamping(interface)?;
                Source::Hardware
            }
            TimestampMode::Kernel => {
                keep_rx_software_timestamping_on();
                Source::Software
            }
            TimestampMode::User => Source::None,
        };
        let fail = |what: &'static str| {
            move |source: io::Error| SysError::Socket {
                what,
                addr,
                transport,
                source,
            }
        };
        let (ty, protocol) = match transport {
            Transport::Tcp => (Type::STREAM, Protocol::TCP),
            Transport::Udp => (Type::DGRAM, Protocol::UDP),
        };
        // socket2 sets close-on-exec on Linux.
        let socket = Socket::new(Domain::for_address(addr), ty.nonblocking(), Some(protocol))
            .map_err(fail("socket"))?;
        if transport == Transport::Tcp {
            socket
                .set_tcp_nodelay(true)
                .map_err(fail("setsockopt(TCP_NODELAY)"))?;
        }
        let busy_poll = match busy_poll_us {
            None => BusyPoll::Off,
            Some(us) => match socket.set_busy_poll(us) {
                Ok(()) => BusyPoll::On(us),
                Err(e) => match Errno::from_raw(e.raw_os_error().unwrap_or(0)) {
                    errno @ (Errno::EPERM | Errno::EINVAL) => BusyPoll::Refused {
                        requested: us,
                        errno,
                    },
                    _ => return Err(fail("setsockopt(SO_BUSY_POLL)")(e)),
                },
            },
        };
        match socket.connect(&SockAddr::from(addr)) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(source) => {
                return Err(SysError::Connect {
                    addr,
                    transport,
                    source,
                });
            }
        }
        let socket = TsSocket {
            socket,
            peer: addr,
            transport,
            source,
            busy_poll,
        };
        // TCP refuses OPT_ID before connect() (the socket has no sequence numbers yet),
        // hence after.
        if let Some(flags) = source.flags() {
            socket.enable_timestamping(flags, opt_id_tcp)?;
        }
        Ok(socket)
    }

    /// A UDP socket to `addr` with software RX stamping, made without
    /// [`keep_rx_software_timestamping_on`] (which it serves).
    fn udp_keeper(addr: SocketAddr) -> io::Result<TsSocket> {
        let socket = Socket::new(Domain::IPV4, Type::DGRAM.nonblocking(), Some(Protocol::UDP))?;
        socket.bind(&SockAddr::from(SocketAddr::from(([127, 0, 0, 1], 0))))?;
        socket.connect(&SockAddr::from(addr))?;
        let flags = TimestampingFlag::SOF_TIMESTAMPING_RX_SOFTWARE
            | TimestampingFlag::SOF_TIMESTAMPING_SOFTWARE;
        setsockopt(&socket, sockopt::Timestamping, &flags)?;
        Ok(TsSocket {
            socket,
            peer: addr,
            transport: Transport::Udp,
            source: Source::Software,
            busy_poll: BusyPoll::Off,
        })
    }

    /// Sets `SO_TIMESTAMPING`, anchoring TCP ids at the first payload byte (see the
    /// module's docs).
    fn enable_timestamping(
        &self,
        flags: TimestampingFlag,
        opt_id_tcp: bool,
    ) -> Result<(), SysError> {
        let fail = |source: io::Error| SysError::Socket {
            what: "setsockopt(SO_TIMESTAMPING)",
            addr: self.peer,
            transport: self.transport,
            source,
        };
        if self.transport == Transport::Udp {
            return setsockopt(&self.socket, sockopt::Timestamping, &flags)
                .map_err(|e| fail(e.into()));
        }
        let with_id_tcp =
            TimestampingFlag::from_bits_retain(flags.bits() | libc::SOF_TIMESTAMPING_OPT_ID_TCP);
        let first = if opt_id_tcp {
            setsockopt(&self.socket, sockopt::Timestamping, &with_id_tcp)
        } else {
            Err(Errno::EINVAL)
        };
        match first {
            Ok(()) => Ok(()),
            Err(Errno::EINVAL) => {
                // Either the connection already failed (a closed socket refuses OPT_ID)
                // or the kernel predates OPT_ID_TCP (before 6.2). Plain OPT_ID keys on
                // the first unacknowledged byte, which is the first payload byte once the
                // handshake is done and before anything is written: wait for that.
                self.connect_error()?;
                self.wait_connected(HANDSHAKE_TIMEOUT)
                    .map_err(|source| SysError::Connect {
                        addr: self.peer,
                        transport: self.transport,
                        source,
                    })?;
                setsockopt(&self.socket, sockopt::Timestamping, &flags).map_err(|e| fail(e.into()))
            }
            Err(e) => Err(fail(e.into())),
        }
    }

    /// The pending connection error, if the connect has failed.
    fn connect_error(&self) -> Result<(), SysError> {
        match self.socket.take_error() {
            Ok(None) => Ok(()),
            Ok(Some(source)) | Err(source) => Err(SysError::Connect {
                addr: self.peer,
                transport: self.transport,
                source,
            }),
        }
    }

    /// Whether the connection is established: `Ok(false)` while a TCP handshake is in
    /// progress, the connection's error once it failed. A UDP socket is connected from
    /// the start.
    pub fn connected(&self) -> io::Result<bool> {
        if let Some(e) = self.socket.take_error()? {
            return Err(e);
        }
        match self.socket.peer_addr() {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Blocks until the connection is established, failed, or `timeout` passed
    /// (`TimedOut`). For set-up, not for the hot path.
    pub fn wait_connected(&self, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.connected()? {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "connection to {} not established within {timeout:?}",
                        self.peer
                    ),
                ));
            }
            // Writable means the handshake is over, either way; a signal just loops.
            let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(self.socket.as_fd(), PollFlags::POLLOUT)];
            match poll(&mut fds, PollTimeout::from(ms)) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
            let hung_up = fds[0]
                .revents()
                .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR));
            if hung_up && !self.connected()? {
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    format!(
                        "connection to {} closed before it was established",
                        self.peer
                    ),
                ));
            }
        }
    }

    /// Sends what the socket takes of `buf` without blocking: the count written, which
    /// for TCP may be less than `buf.len()` (send the rest later; its TX timestamp is
    /// keyed by the last byte accepted), or `WouldBlock`. A closed peer is an `EPIPE`
    /// error, never a SIGPIPE. Retries on EINTR.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        let flags = MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT;
        loop {
            match send(self.socket.as_raw_fd(), buf, flags) {
                Err(Errno::EINTR) => continue,
                result => return result.map_err(io::Error::from),
            }
        }
    }

    /// Reads what is there into `buf` without blocking: the byte count (0 is a TCP
    /// peer's orderly close) and the RX timestamp in nanoseconds — the kernel's software
    /// stamp (`CLOCK_REALTIME`) or the NIC's raw hardware clock, per the mode; `None`
    /// in user mode, or when the kernel attached none (which it can do for software
    /// stamps while its host-wide switch for them flips, see
    /// `keep_rx_software_timestamping_on`: count such reads rather than assume).
    ///
    /// For TCP, one read may hold several replies, and parts of them, that arrived in
    /// different packets: the timestamp is that of the last packet read, so it belongs to
    /// the last reply this read completes. For UDP, it is the datagram's; a datagram
    /// larger than `buf` is an `InvalidData` error (its excess would be lost silently).
    /// `WouldBlock` when nothing is there; retries on EINTR.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
        let mut cmsg = CmsgBuffer::new();
        let capacity = buf.len();
        let mut iov = [IoSliceMut::new(buf)];
        loop {
            let msg = match recvmsg::<()>(
                self.socket.as_raw_fd(),
                &mut iov,
                Some(&mut cmsg.0),
                MsgFlags::MSG_DONTWAIT,
            ) {
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
                Ok(msg) => msg,
            };
            if self.transport == Transport::Udp && msg.flags.contains(MsgFlags::MSG_TRUNC) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a datagram from {} did not fit in {capacity} bytes",
                        self.peer
                    ),
                ));
            }
            let mut rx = None;
            if self.source != Source::None {
                // A truncated control buffer (ENOBUFS) loses the stamp, not the data.
                for c in msg.cmsgs().into_iter().flatten() {
                    if let ControlMessageOwned::ScmTimestampsns(ts) = c {
                        rx = self.source.pick(&ts);
                    }
                }
            }
            return Ok((msg.bytes, rx));
        }
    }

    /// Reads the error queue until it is empty, calling `f(id, tx_ns)` for each transmit
    /// timestamp, in the order the kernel queued them; returns how many it called `f`
    /// with. `id` is the byte offset of the stamped send's last byte (TCP) or the
    /// datagram's number (UDP), as the module's docs explain; `tx_ns` is on the same
    /// clock as [`recv`](TsSocket::recv)'s timestamps. Other error-queue messages are
    /// consumed and skipped. In user mode there is nothing to read and it returns 0.
    pub fn drain_tx_timestamps(&self, mut f: impl FnMut(u32, u64)) -> io::Result<usize> {
        self.drain_tx_timestamps_while(|id, tx| {
            f(id, tx);
            true
        })
        .map(|(delivered, _)| delivered)
    }

    /// As [`drain_tx_timestamps`](TsSocket::drain_tx_timestamps), but stops as soon as
    /// `f` answers false, leaving the rest queued: a caller that knows how many stamps
    /// it waits for saves the read that would only find the queue empty (one `recvmsg`
    /// per request on the hot path). What is left raises no new `EPOLLERR` edge by
    /// itself; the next stamp queued does, and the next drain reads the older ones first.
    /// Returns the stamps delivered and the `recvmsg` calls made.
    pub fn drain_tx_timestamps_while(
        &self,
        mut f: impl FnMut(u32, u64) -> bool,
    ) -> io::Result<(usize, usize)> {
        if self.source == Source::None {
            return Ok((0, 0));
        }
        let (mut delivered, mut calls) = (0, 0);
        loop {
            calls += 1;
            let mut cmsg = CmsgBuffer::new();
            // OPT_TSONLY: the queued message carries no payload to read.
            let mut no_payload: [IoSliceMut<'_>; 0] = [];
            let msg = match recvmsg::<()>(
                self.socket.as_raw_fd(),
                &mut no_payload,
                Some(&mut cmsg.0),
                MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT,
            ) {
                Ok(msg) => msg,
                Err(Errno::EAGAIN) => return Ok((delivered, calls)),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            };
            let (mut id, mut tx) = (None, None);
            for c in msg.cmsgs().into_iter().flatten() {
                match c {
                    ControlMessageOwned::ScmTimestampsns(ts) => tx = self.source.pick(&ts),
                    ControlMessageOwned::Ipv4RecvErr(err, _)
                    | ControlMessageOwned::Ipv6RecvErr(err, _)
                        if is_tx_timestamp(&err) =>
                    {
                        id = Some(err.ee_data);
                    }
                    _ => {}
                }
            }
            if let (Some(id), Some(tx)) = (id, tx) {
                delivered += 1;
                if !f(id, tx) {
                    return Ok((delivered, calls));
                }
            }
        }
    }

    /// The file descriptor, for registering with epoll or mio.
    pub fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// The local address the kernel bound the socket to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()?.as_socket().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "the socket's address is not IP")
        })
    }

    /// The address it connects to.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// TCP or UDP.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// What became of the `SO_BUSY_POLL` asked for.
    pub fn busy_poll(&self) -> BusyPoll {
        self.busy_poll
    }
}

/// How long the first kernel-mode socket of the process waits for the kernel to stamp
/// received packets steadily, at most.
const RX_STAMPING_PATIENCE: Duration = Duration::from_secs(1);

/// How long received packets must have been stamped without a miss before stamping is
/// taken to be on for good.
const RX_STAMPING_STEADY: Duration = Duration::from_millis(20);

/// Makes sure the kernel stamps received packets in software before the first
/// kernel-mode socket talks, and keeps it doing so for the life of the process.
///
/// Software RX stamps are taken host-wide only while some socket wants them, behind a
/// static key that the kernel flips from a workqueue (`net_enable_timestamp`,
/// `net_disable_timestamp`): on after the first such socket appears, off after the last
/// one closes. Packets that arrive before the flip carry no stamp, so a connection's
/// first replies would have none. Worse, a flip to off that was already under way when
/// this process asked (another process's last stamping socket just closed) can land
/// after stamps were seen, and a loaded host can take hundreds of milliseconds to run
/// the next flip back on.
///
/// So the first call opens a UDP socket with RX stamping and keeps it open for good (the
/// key stays on while it lives), then sends it a datagram every millisecond until they
/// have arrived stamped, without a miss, for [`RX_STAMPING_STEADY`] (or
/// [`RX_STAMPING_PATIENCE`] ran out: the kernel then stamps some packets and not others,
/// and `recv` reports the misses as `None`). Later calls return at once.
fn keep_rx_software_timestamping_on() {
    static KEEPER: OnceLock<Option<TsSocket>> = OnceLock::new();
    KEEPER.get_or_init(|| {
        let probe = std::net::UdpSocket::bind(("127.0.0.1", 0)).ok()?;
        let keeper = TsSocket::udp_keeper(probe.local_addr().ok()?).ok()?;
        let keeper_addr = keeper.local_addr().ok()?;
        let start = Instant::now();
        let mut steady_since: Option<Instant> = None;
        let mut buf = [0u8; 8];
        while start.elapsed() < RX_STAMPING_PATIENCE {
            probe.send_to(b"stamped?", keeper_addr).ok()?;
            std::thread::sleep(Duration::from_millis(1));
            while let Ok((_, rx)) = keeper.recv(&mut buf) {
                steady_since = match (rx, steady_since) {
                    (None, _) => None,
                    (Some(_), None) => Some(Instant::now()),
                    (Some(_), since) => since,
                };
            }
            if steady_since.is_some_and(|since| since.elapsed() >= RX_STAMPING_STEADY) {
                break;
            }
        }
        Some(keeper)
    });
}

/// Whether an error-queue message is a transmit timestamp (not an ICMP error or a
/// zero-copy completion): `ENOMSG` from the timestamping origin, taken at send.
fn is_tx_timestamp(err: &libc::sock_extended_err) -> bool {
    err.ee_errno == libc::ENOMSG as u32
        && err.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING
        && err.ee_info == SCM_TSTAMP_SND
}

impl AsRawFd for TsSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}

impl AsFd for TsSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

impl mio::event::Source for TsSocket {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        mio::unix::SourceFd(&self.as_raw_fd()).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        mio::unix::SourceFd(&self.as_raw_fd()).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        mio::unix::SourceFd(&self.as_raw_fd()).deregister(registry)
    }
}

#[cfg(test)]
mod tests;
