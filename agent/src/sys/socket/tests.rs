//! Unit tests of the timestamping socket: OPT_ID ids without OPT_ID_TCP, timestamp
//! sources, which error-queue entries count, busy-poll notes.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpListener;

use super::*;

/// The path taken on kernels without `SOF_TIMESTAMPING_OPT_ID_TCP` (before 6.2):
/// waiting for the handshake and setting plain `OPT_ID` gives the same ids.
#[test]
fn without_opt_id_tcp_ids_are_still_last_byte_offsets() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 30];
        stream.read_exact(&mut buf).unwrap();
        stream.write_all(&buf).unwrap();
    });
    let socket =
        TsSocket::connect_with(addr, Transport::Tcp, &TimestampMode::Kernel, None, false).unwrap();
    assert!(
        socket.connected().unwrap(),
        "the fallback waits for the handshake"
    );
    for chunk in [&[1u8; 10][..], &[2u8; 20][..]] {
        assert_eq!(socket.send(chunk).unwrap(), chunk.len());
    }
    let mut ids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while ids.len() < 2 && Instant::now() < deadline {
        socket.drain_tx_timestamps(|id, _| ids.push(id)).unwrap();
    }
    assert_eq!(ids, [9, 29]);
    let mut buf = [0u8; 30];
    let mut got = 0;
    while got < 30 && Instant::now() < deadline {
        match socket.recv(&mut buf[got..]) {
            Ok((n, rx)) => {
                assert!(rx.is_some(), "read {n} bytes at {got} without a stamp");
                got += n;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got, 30);
    peer.join().unwrap();
}

#[test]
fn zero_timestamps_are_absent_and_sources_pick_their_own() {
    let ts = Timestamps {
        system: TimeSpec::new(1, 5),
        hw_trans: TimeSpec::new(0, 0),
        hw_raw: TimeSpec::new(0, 0),
    };
    assert_eq!(Source::Software.pick(&ts), Some(1_000_000_005));
    assert_eq!(Source::Hardware.pick(&ts), None);
    assert_eq!(Source::None.pick(&ts), None);
    assert_eq!(timespec_ns(&TimeSpec::new(-1, 0)), None);
}

#[test]
fn only_send_timestamps_count() {
    let mut err = libc::sock_extended_err {
        ee_errno: libc::ENOMSG as u32,
        ee_origin: libc::SO_EE_ORIGIN_TIMESTAMPING,
        ee_type: 0,
        ee_code: 0,
        ee_pad: 0,
        ee_info: SCM_TSTAMP_SND,
        ee_data: 7,
    };
    assert!(is_tx_timestamp(&err));
    err.ee_info = 2; // SCM_TSTAMP_ACK
    assert!(!is_tx_timestamp(&err));
    err.ee_info = SCM_TSTAMP_SND;
    err.ee_origin = libc::SO_EE_ORIGIN_ICMP;
    assert!(!is_tx_timestamp(&err));
}

#[test]
fn busy_poll_refusals_explain_themselves() {
    let refused = BusyPoll::Refused {
        requested: 50,
        errno: Errno::EPERM,
    };
    let note = refused.note().unwrap();
    assert!(
        note.starts_with("SO_BUSY_POLL 50 µs refused (EPERM"),
        "{note}"
    );
    assert!(note.contains("CAP_NET_ADMIN"), "{note}");
    assert_eq!(BusyPoll::On(50).note(), None);
}
