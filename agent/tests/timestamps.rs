//! Kernel TX and RX timestamps over real loopback sockets, against small peers each test
//! runs in a thread: what the ids of TX timestamps mean (TCP byte offsets, UDP datagram
//! numbers), that every read carries an RX timestamp, that replies coalesced into one
//! read carry one, and that hardware timestamps are refused clearly where there are none.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use vernier_agent::sys::{
    SysError, TimestampMode, Transport, TsSocket, interface_timestamping, realtime_ns,
};

/// Generous bound for anything that happens on loopback.
const PATIENCE: Duration = Duration::from_secs(5);

/// A loopback round trip takes tens of microseconds: the median must be far below this.
const LOOPBACK_MAX_NS: u64 = 10_000_000;

/// No single loopback round trip may take this long, even on a host busy with builds
/// (where a peer thread can wait a few scheduler slices to run).
const LOOPBACK_SANE_NS: u64 = 1_000_000_000;

/// Checks RX−TX differences: each positive and sane, their median small.
fn assert_loopback_rtts(mut rtts: Vec<u64>) {
    assert!(!rtts.is_empty());
    rtts.sort_unstable();
    assert!(
        rtts[0] > 0 && rtts[rtts.len() - 1] < LOOPBACK_SANE_NS,
        "RX−TX (ns): {rtts:?}"
    );
    let median = rtts[rtts.len() / 2];
    assert!(
        median < LOOPBACK_MAX_NS,
        "median RX−TX {median} ns: {rtts:?}"
    );
}

fn connect(addr: SocketAddr, transport: Transport) -> TsSocket {
    let socket = TsSocket::connect(addr, transport, &TimestampMode::Kernel, None).unwrap();
    socket.wait_connected(PATIENCE).unwrap();
    socket
}

/// Sends all of `buf`, spinning on WouldBlock.
fn send_all(socket: &TsSocket, mut buf: &[u8]) {
    let deadline = Instant::now() + PATIENCE;
    while !buf.is_empty() {
        match socket.send(buf) {
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline, "send stalled");
                thread::yield_now();
            }
            Err(e) => panic!("send: {e}"),
        }
    }
}

/// One `recv` that returns data (spinning until there is some).
fn recv_once(socket: &TsSocket, buf: &mut [u8]) -> (usize, Option<u64>) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match socket.recv(buf) {
            Ok(got) => return got,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline, "nothing to read");
                thread::yield_now();
            }
            Err(e) => panic!("recv: {e}"),
        }
    }
}

/// Drains TX timestamps until `want` have arrived (they are queued as the packets leave,
/// which on loopback is within the send call, but a poll loop must not assume that).
fn tx_timestamps(socket: &TsSocket, want: usize) -> Vec<(u32, u64)> {
    let deadline = Instant::now() + PATIENCE;
    let mut got = Vec::new();
    while got.len() < want {
        socket
            .drain_tx_timestamps(|id, ns| got.push((id, ns)))
            .unwrap();
        assert!(
            Instant::now() < deadline,
            "only {got:?} of {want} TX timestamps arrived"
        );
        thread::yield_now();
    }
    got
}

/// A TCP peer that answers each `message_len`-byte message with itself, until EOF.
fn tcp_echo(message_len: usize) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        let mut buf = vec![0u8; message_len];
        while stream.read_exact(&mut buf).is_ok() {
            if stream.write_all(&buf).is_err() {
                break;
            }
        }
    });
    addr
}

#[test]
fn tcp_request_reply_has_tx_and_rx_kernel_timestamps() {
    let socket = connect(tcp_echo(8), Transport::Tcp);
    let mut buf = [0u8; 64];
    let mut sent = 0u64;
    let mut rtts = Vec::new();
    for round in 0..20u64 {
        let before = realtime_ns();
        send_all(&socket, &round.to_le_bytes());
        sent += 8;
        let (n, rx) = recv_once(&socket, &mut buf);
        assert_eq!(n, 8, "round {round}");
        assert_eq!(buf[..8], round.to_le_bytes());
        let rx = rx.expect("every read carries an RX timestamp");
        let tx = tx_timestamps(&socket, 1);
        assert_eq!(tx.len(), 1, "round {round}: {tx:?}");
        let (id, tx) = tx[0];
        // The offset of the request's last byte in the stream.
        assert_eq!(u64::from(id), sent - 1, "round {round}");
        assert!(tx >= before, "TX {tx} before the send began at {before}");
        assert!(rx > tx, "round {round}: RX {rx} not after TX {tx}");
        rtts.push(rx - tx);
    }
    assert_loopback_rtts(rtts);
}

#[test]
fn tcp_tx_ids_are_offsets_of_each_sends_last_byte() {
    let socket = connect(tcp_echo(1), Transport::Tcp);
    let mut ends = Vec::new();
    let mut total = 0u64;
    for len in [1usize, 100, 7, 1000] {
        send_all(&socket, &vec![b'x'; len]);
        total += len as u64;
        ends.push(total - 1);
    }
    let ids: Vec<u64> = tx_timestamps(&socket, ends.len())
        .iter()
        .map(|&(id, _)| u64::from(id))
        .collect();
    assert_eq!(ids, ends);
}

/// A send too large for the socket buffer is accepted in parts; each part's timestamp is
/// keyed by the last byte that call accepted, and the last one by the last byte of all.
#[test]
fn tcp_partial_sends_are_keyed_by_the_last_byte_accepted() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // More than the send buffer (at most 4 MiB by default) and the peer's initial
    // receive window hold together, while the peer is not reading.
    const TOTAL: usize = 8 << 20;
    let (go, wait) = mpsc::channel::<()>();
    let sink = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        wait.recv().unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut read = 0;
        while read < TOTAL {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
        read
    });
    let socket = connect(addr, Transport::Tcp);
    let data = vec![7u8; TOTAL];
    let mut ends = Vec::new();
    let mut offset = 0;
    let mut stamps = Vec::new();
    let deadline = Instant::now() + PATIENCE;
    while offset < TOTAL {
        match socket.send(&data[offset..]) {
            Ok(n) => {
                offset += n;
                ends.push(offset as u64 - 1);
                if ends.len() == 1 {
                    assert!(offset < TOTAL, "8 MiB taken at once by a peer not reading");
                    go.send(()).unwrap();
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => thread::yield_now(),
            Err(e) => panic!("send: {e}"),
        }
        socket
            .drain_tx_timestamps(|id, ns| stamps.push((u64::from(id), ns)))
            .unwrap();
        assert!(Instant::now() < deadline, "8 MiB did not go out");
    }
    assert_eq!(sink.join().unwrap(), TOTAL);
    let last = (TOTAL - 1) as u64;
    while stamps.last().is_none_or(|&(id, _)| id != last) {
        socket
            .drain_tx_timestamps(|id, ns| stamps.push((u64::from(id), ns)))
            .unwrap();
        assert!(
            Instant::now() < deadline,
            "no stamp for the last byte: {stamps:?}"
        );
        thread::yield_now();
    }
    assert!(
        stamps.len() > 1,
        "one stamp for {} sends: {stamps:?}",
        ends.len()
    );
    // Ids never go back, but for a retransmission, which stamps an id already stamped
    // again, possibly after later ones (seen on a loaded host: ..., 4252778, 4348010,
    // 4252778, ...): a matcher must take a repeated id as covering nothing new.
    let mut highest = None;
    for (i, &(id, _)) in stamps.iter().enumerate() {
        let repeat = stamps[..i].iter().any(|&(seen, _)| seen == id);
        assert!(
            repeat || highest.is_none_or(|h| id >= h),
            "id {id} goes back without repeating one: {stamps:?}"
        );
        highest = highest.max(Some(id));
    }
    for pair in stamps.windows(2) {
        assert!(pair[0].1 <= pair[1].1, "stamps not in order: {stamps:?}");
    }
    for (id, _) in &stamps {
        assert!(
            ends.contains(id),
            "id {id} is not the end of a send: {ends:?}"
        );
    }
}

/// Two sends appended to one buffer that has not left yet (the peer's tiny receive
/// window is full) get one timestamp, keyed by the later send's last byte: the earlier
/// request is covered by it, which is why a request is matched to the first id at or
/// past its own last byte.
#[test]
fn tcp_sends_coalesced_into_one_packet_get_one_timestamp() {
    let listener =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    // The kernel's minimum receive buffer: a window of about a kilobyte.
    listener.set_recv_buffer_size(1).unwrap();
    listener
        .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    listener.listen(1).unwrap();
    let listener: TcpListener = listener.into();
    let addr = listener.local_addr().unwrap();
    let (go, wait) = mpsc::channel::<()>();
    let sink = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        wait.recv().unwrap();
        let mut all = Vec::new();
        stream.read_to_end(&mut all).map(|_| all.len())
    });
    let socket = connect(addr, Transport::Tcp);
    // More than the window: the tail of it stays queued in this socket.
    let filler = vec![0u8; 16 << 10];
    send_all(&socket, &filler);
    send_all(&socket, b"first");
    send_all(&socket, b"second");
    let filler_end = filler.len() as u64 - 1;
    let first_end = filler_end + 5;
    let second_end = first_end + 6;
    go.send(()).unwrap();
    let mut stamps = Vec::new();
    let deadline = Instant::now() + PATIENCE;
    while stamps.last().is_none_or(|&id| id != second_end) {
        socket
            .drain_tx_timestamps(|id, _| stamps.push(u64::from(id)))
            .unwrap();
        assert!(
            Instant::now() < deadline,
            "no stamp for {second_end}: {stamps:?}"
        );
        thread::yield_now();
    }
    assert!(
        !stamps.contains(&first_end),
        "{first_end} stamped on its own: {stamps:?}"
    );
    drop(socket);
    assert_eq!(sink.join().unwrap().unwrap() as u64, second_end + 1);
}

/// Two replies written by the peer in one write arrive in one packet and are read by one
/// `recv`, which carries one RX timestamp: the engine gives it to the last reply.
#[test]
fn tcp_two_replies_in_one_write_are_one_read_with_one_timestamp() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 8];
        stream.read_exact(&mut request).unwrap();
        stream.write_all(b"reply-1\nreply-2\n").unwrap();
        stream.read_exact(&mut request).ok();
    });
    let socket = connect(addr, Transport::Tcp);
    send_all(&socket, b"requests");
    let (_, tx) = tx_timestamps(&socket, 1)[0];
    let mut buf = [0u8; 64];
    let (n, rx) = recv_once(&socket, &mut buf);
    assert_eq!(&buf[..n], b"reply-1\nreply-2\n", "one read takes both");
    let rx = rx.expect("the read carries the packet's RX timestamp");
    assert!(rx > tx, "RX {rx} not after TX {tx}");
    assert!(rx - tx < LOOPBACK_SANE_NS, "RX−TX {} ns", rx - tx);
}

/// Two replies written apart in time but read by one `recv` carry the timestamp of the
/// later packet: the read's timestamp belongs to the last reply it completes.
#[test]
fn tcp_replies_in_two_packets_read_at_once_carry_the_later_stamp() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let gap = Duration::from_millis(20);
    let (done, written) = mpsc::channel();
    thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        let mut request = [0u8; 8];
        stream.read_exact(&mut request).unwrap();
        stream.write_all(b"reply-1\n").unwrap();
        thread::sleep(gap);
        stream.write_all(b"reply-2\n").unwrap();
        done.send(()).unwrap();
        stream.read_exact(&mut request).ok();
    });
    let socket = connect(addr, Transport::Tcp);
    send_all(&socket, b"requests");
    let (_, tx) = tx_timestamps(&socket, 1)[0];
    written.recv_timeout(PATIENCE).unwrap();
    thread::sleep(Duration::from_millis(5));
    let mut buf = [0u8; 64];
    let (n, rx) = recv_once(&socket, &mut buf);
    assert_eq!(&buf[..n], b"reply-1\nreply-2\n", "one read takes both");
    let rx = rx.unwrap();
    let gap_ns = u64::try_from(gap.as_nanos()).unwrap();
    assert!(
        rx - tx >= gap_ns,
        "stamp {} ns after TX: the first packet's",
        rx - tx
    );
    assert!(rx - tx < gap_ns + LOOPBACK_SANE_NS, "{} ns", rx - tx);
}

/// A UDP peer that echoes every datagram.
fn udp_echo() -> SocketAddr {
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = peer.local_addr().unwrap();
    thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = peer.recv_from(&mut buf) {
            if peer.send_to(&buf[..n], from).is_err() {
                break;
            }
        }
    });
    addr
}

#[test]
fn udp_tx_ids_count_datagrams_and_every_reply_is_stamped() {
    let socket = connect(udp_echo(), Transport::Udp);
    let mut buf = [0u8; 2048];
    let mut rtts = Vec::new();
    for round in 0..10u32 {
        let datagram = vec![round as u8; 1 + round as usize * 100];
        send_all(&socket, &datagram);
        let (n, rx) = recv_once(&socket, &mut buf);
        assert_eq!(&buf[..n], &datagram[..]);
        let tx = tx_timestamps(&socket, 1);
        assert_eq!(tx.len(), 1);
        let (id, tx) = tx[0];
        assert_eq!(id, round, "the datagram's number");
        let rx = rx.expect("every datagram carries an RX timestamp");
        assert!(rx > tx, "round {round}: RX {rx} not after TX {tx}");
        rtts.push(rx - tx);
    }
    assert_loopback_rtts(rtts);
}

#[test]
fn udp_burst_ids_are_consecutive_and_replies_are_stamped_one_by_one() {
    let socket = connect(udp_echo(), Transport::Udp);
    for i in 0..5u8 {
        send_all(&socket, &[i; 32]);
    }
    let ids: Vec<u32> = tx_timestamps(&socket, 5)
        .iter()
        .map(|&(id, _)| id)
        .collect();
    assert_eq!(ids, [0, 1, 2, 3, 4]);
    let mut buf = [0u8; 64];
    let mut stamps = Vec::new();
    for i in 0..5u8 {
        let (n, rx) = recv_once(&socket, &mut buf);
        assert_eq!(&buf[..n], &[i; 32], "datagrams are not coalesced");
        stamps.push(rx.unwrap());
    }
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
}

#[test]
fn udp_datagram_larger_than_the_buffer_is_an_error_not_a_silent_cut() {
    let socket = connect(udp_echo(), Transport::Udp);
    send_all(&socket, &[1u8; 100]);
    let deadline = Instant::now() + PATIENCE;
    let mut small = [0u8; 10];
    let err = loop {
        match socket.recv(&mut small) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline);
                thread::yield_now();
            }
            other => break other.unwrap_err(),
        }
    };
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(err.to_string().contains("did not fit in 10 bytes"), "{err}");
}

#[test]
fn user_mode_reports_no_kernel_timestamps() {
    let socket =
        TsSocket::connect(tcp_echo(4), Transport::Tcp, &TimestampMode::User, None).unwrap();
    socket.wait_connected(PATIENCE).unwrap();
    send_all(&socket, b"ping");
    let mut buf = [0u8; 4];
    let (n, rx) = recv_once(&socket, &mut buf);
    assert_eq!((n, rx), (4, None));
    assert_eq!(socket.drain_tx_timestamps(|_, _| {}).unwrap(), 0);
}

#[test]
fn hardware_timestamps_on_loopback_are_refused_naming_it() {
    let mode = TimestampMode::Hardware {
        interface: "lo".into(),
    };
    let err = TsSocket::connect(tcp_echo(1), Transport::Tcp, &mode, None).unwrap_err();
    assert!(
        matches!(err, SysError::NoHardwareTimestamping { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    for needle in [
        "interface lo has no hardware timestamping",
        "`ethtool -T lo` shows",
        "software-transmit",
        "hardware-transmit",
        "--timestamps kernel",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
}

#[test]
fn hardware_timestamps_need_an_interface() {
    let mode: TimestampMode = "hw".parse().unwrap();
    let err = TsSocket::connect(tcp_echo(1), Transport::Tcp, &mode, None).unwrap_err();
    assert!(err.to_string().contains("--interface"), "{err}");
    assert!(err.to_string().contains("lo"), "{err}");
}

#[test]
fn a_missing_interface_is_its_own_error() {
    let mode = TimestampMode::Hardware {
        interface: "vernier-nope0".into(),
    };
    let err = TsSocket::connect(tcp_echo(1), Transport::Tcp, &mode, None).unwrap_err();
    assert!(matches!(err, SysError::InterfaceNotFound { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("no network interface named \"vernier-nope0\""),
        "{text}"
    );
    assert!(
        text.contains("lo"),
        "lists the interfaces that exist: {text}"
    );
    let err = interface_timestamping("vernier-nope0").unwrap_err();
    assert!(matches!(err, SysError::InterfaceNotFound { .. }), "{err:?}");
}

#[test]
fn a_refused_connection_is_reported() {
    // A port nobody listens on: bind one, note it, close it.
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    match TsSocket::connect(addr, Transport::Tcp, &TimestampMode::Kernel, None) {
        Err(err) => {
            assert!(matches!(err, SysError::Connect { .. }), "{err:?}");
            assert!(err.to_string().contains(&addr.to_string()), "{err}");
        }
        Ok(socket) => {
            let err = socket.wait_connected(PATIENCE).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
        }
    }
}

#[test]
fn busy_poll_is_applied_or_explained() {
    let socket = TsSocket::connect(
        tcp_echo(1),
        Transport::Tcp,
        &TimestampMode::Kernel,
        Some(50),
    )
    .unwrap();
    match socket.busy_poll() {
        vernier_agent::sys::BusyPoll::On(us) => assert_eq!(us, 50),
        refused => assert!(
            refused
                .note()
                .unwrap()
                .contains("SO_BUSY_POLL 50 µs refused")
        ),
    }
    let local = socket.local_addr().unwrap();
    assert!(local.ip().is_loopback() && local.port() != 0, "{local}");
}

/// A veth pair whose far end lives in a network namespace of its own, so that traffic
/// to it really crosses the pair (between two local addresses it would take loopback).
/// Dropping it deletes both (deleting the namespace deletes the far end, and with it the
/// pair).
struct VethPair {
    namespace: String,
    near: String,
    near_addr: std::net::Ipv4Addr,
    far_addr: std::net::Ipv4Addr,
}

impl VethPair {
    /// Makes the pair, or says why it cannot (not root, no `ip`).
    fn create() -> Result<VethPair, String> {
        let id = std::process::id();
        let subnet = u8::try_from(id % 250).unwrap();
        let pair = VethPair {
            namespace: format!("vernier-ts-{id}"),
            near: format!("vts-a-{id}"),
            near_addr: std::net::Ipv4Addr::new(10, 213, subnet, 1),
            far_addr: std::net::Ipv4Addr::new(10, 213, subnet, 2),
        };
        let far = format!("vts-b-{id}");
        let (ns, near) = (pair.namespace.as_str(), pair.near.as_str());
        let near_cidr = format!("{}/30", pair.near_addr);
        let far_cidr = format!("{}/30", pair.far_addr);
        ip(&["netns", "add", ns])?;
        // From here on, dropping `pair` cleans up whatever was made.
        ip(&[
            "link", "add", near, "type", "veth", "peer", "name", &far, "netns", ns,
        ])?;
        ip(&["addr", "add", &near_cidr, "dev", near])?;
        ip(&["link", "set", near, "up"])?;
        ip(&["-n", ns, "addr", "add", &far_cidr, "dev", &far])?;
        ip(&["-n", ns, "link", "set", &far, "up"])?;
        Ok(pair)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.near]);
        let _ = ip(&["netns", "del", &self.namespace]);
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Kernel timestamps work on veth too (the driver stamps in its transmit path), while
/// hardware timestamps are refused naming the veth. Needs root; skipped otherwise.
#[test]
fn kernel_timestamps_cross_a_veth_pair_and_hardware_is_refused() {
    let pair = match VethPair::create() {
        Ok(pair) => pair,
        Err(why) => {
            // Said where the person running the tests sees it (libtest keeps a passing
            // test's eprintln! to itself): this test did not run.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "NOT RUN: kernel_timestamps_cross_a_veth_pair_and_hardware_is_refused: cannot make a veth pair: {why}"
            );
            return;
        }
    };
    let caps = interface_timestamping(&pair.near).unwrap();
    assert!(caps.has_software(), "{caps:?}");
    assert!(caps.hardware_missing().is_some(), "{caps:?}");

    // The echo peer binds inside the namespace: setns moves only its own thread.
    let namespace = std::fs::File::open(format!("/var/run/netns/{}", pair.namespace)).unwrap();
    let far = SocketAddr::from((pair.far_addr, 0));
    let (ready, listening) = mpsc::channel();
    thread::spawn(move || {
        nix::sched::setns(&namespace, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
        let listener = TcpListener::bind(far).unwrap();
        ready.send(listener.local_addr().unwrap()).unwrap();
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 8];
        while stream.read_exact(&mut buf).is_ok() && stream.write_all(&buf).is_ok() {}
    });
    let peer = listening.recv_timeout(PATIENCE).unwrap();

    let socket = connect(peer, Transport::Tcp);
    assert_eq!(socket.local_addr().unwrap().ip(), pair.near_addr);
    let mut rtts = Vec::new();
    let mut buf = [0u8; 8];
    for round in 0..10u64 {
        send_all(&socket, &round.to_le_bytes());
        let (n, rx) = recv_once(&socket, &mut buf);
        assert_eq!(n, 8);
        let (id, tx) = tx_timestamps(&socket, 1)[0];
        assert_eq!(u64::from(id), round * 8 + 7);
        let rx = rx.expect("every read carries an RX timestamp");
        assert!(rx > tx, "round {round}: RX {rx} not after TX {tx}");
        rtts.push(rx - tx);
    }
    assert_loopback_rtts(rtts);

    let mode = TimestampMode::Hardware {
        interface: pair.near.clone(),
    };
    let err = TsSocket::connect(peer, Transport::Tcp, &mode, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "interface {} has no hardware timestamping",
            pair.near
        )),
        "{err}"
    );
}
