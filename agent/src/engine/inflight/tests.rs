use super::*;
use crate::sys::ClockReading;

const KERNEL: StampClock = StampClock::Kernel {
    epoch_realtime_ns: 1_000_000,
};
const GRACE: u64 = 100_000_000;
const TIMEOUT: u64 = 1_000_000_000;

/// A TCP queue with requests of these lengths sent (seq 0, 1, ...; sent at
/// 1000 × (seq + 1)).
fn tcp(lengths: &[u64]) -> Inflight {
    let mut q = Inflight::new(Transport::Tcp, 8);
    for (seq, &len) in (0u64..).zip(lengths) {
        q.sent(request(seq), len);
    }
    q
}

fn request(seq: u64) -> Outgoing {
    Outgoing {
        seq,
        scheduled: seq * 1000,
        sent: (seq + 1) * 1000,
        kind: RequestKind::Get,
        service_ns: 0,
    }
}

fn got(at: u64, rx: Option<u64>, outcome: Outcome) -> Received {
    Received {
        at,
        rx,
        outcome,
        served_ns: None,
    }
}

fn reply(q: &mut Inflight, at: u64, rx: u64) {
    q.on_reply(got(at, Some(rx), Outcome::Hit)).unwrap();
}

fn drain(q: &mut Inflight, clock: &StampClock) -> Vec<Completed> {
    std::iter::from_fn(|| q.pop_completed(clock)).collect()
}

#[test]
fn one_stamp_covers_sends_coalesced_into_one_buffer() {
    // Requests end at offsets 9, 19 and 29; the kernel stamped only the last send.
    let mut q = tcp(&[10, 10, 10]);
    assert_eq!(q.on_tx(29, 5_000_000), 0..3);
    let stamps: Vec<_> = (0..3).filter_map(|i| q.stamp(i)).collect();
    assert_eq!(stamps, [(0, 5_000_000), (1, 5_000_000), (2, 5_000_000)]);
    for rx in [5_000_100, 5_000_200, 5_000_300] {
        reply(&mut q, 9_000, rx);
    }
    let done = drain(&mut q, &KERNEL);
    let latencies: Vec<_> = done.iter().map(|c| c.latency).collect();
    assert_eq!(latencies, [Some(100), Some(200), Some(300)]);
    assert!(done.iter().all(|c| c.departure == 4_000_000));
    assert!(q.is_empty());
}

#[test]
fn a_refused_request_leaves_the_queue_and_the_rest_complete_in_order() {
    let mut q = tcp(&[10, 10, 10]);
    assert_eq!(q.on_tx(19, 5_000_000), 0..2);
    // The server refused the first (stamped) request unprocessed: it comes back whole.
    let refused = q.refuse(0, u32::MAX).unwrap();
    assert_eq!((refused.seq, refused.scheduled), (0, 0));
    assert_eq!((q.awaiting(), q.unstamped()), (2, 1));
    assert_eq!(q.refuse(0, u32::MAX), Err(OutOfStep), "already gone");
    // An answered request is not refused.
    q.on_reply_id(got(9_000, Some(5_000_100), Outcome::Ok), 1, u32::MAX)
        .unwrap();
    assert_eq!(q.refuse(1, u32::MAX), Err(OutOfStep));
    assert_eq!(q.on_tx(29, 5_000_050), 1..2);
    q.on_reply(got(9_500, Some(5_000_200), Outcome::Ok))
        .unwrap();
    let done: Vec<_> = drain(&mut q, &KERNEL)
        .iter()
        .map(|c| c.request.seq)
        .collect();
    assert_eq!(done, [1, 2]);
    assert!(q.is_empty());
}

#[test]
fn a_partial_send_stamps_only_what_it_carried_whole() {
    // 0..=99 and 100..=199; the socket took 130 bytes, then the rest.
    let mut q = tcp(&[100, 100]);
    assert_eq!(q.on_tx(129, 7_000_000), 0..1);
    reply(&mut q, 9_000, 7_000_500);
    reply(&mut q, 9_500, 7_000_900);
    let first = drain(&mut q, &KERNEL);
    assert_eq!(first.len(), 1, "the second waits for its stamp: {first:?}");
    // The first is gone from the queue: the second is now at its front.
    assert_eq!(q.on_tx(199, 7_000_050), 0..1);
    let second = drain(&mut q, &KERNEL);
    assert_eq!(second[0].request.seq, 1);
    assert_eq!(second[0].latency, Some(850));
}

#[test]
fn stream_offsets_beyond_four_gigabytes_wrap_like_the_kernels_ids() {
    // The first request's last byte is at offset 2^32 - 41; the second crosses 2^32.
    let mut q = tcp(&[(1 << 32) - 40, 100]);
    // Its own stamp, just before the wrap, covers the first request only.
    assert_eq!(q.on_tx(u32::MAX - 40, 1_000), 0..1);
    // A stale id from far before (a retransmission) stamps nothing.
    assert_eq!(q.on_tx(u32::MAX - 1_000, 2_000), 1..1);
    // The second ends at offset 2^32 + 59: id 59 after the wrap.
    assert_eq!(q.on_tx(58, 3_000), 1..1);
    assert_eq!(q.on_tx(59, 4_000), 1..2);
    assert_eq!(q.stamp(1), Some((1, 4_000)));
}

#[test]
fn answered_requests_whose_stamp_never_comes_are_given_up_after_the_grace() {
    let mut q = tcp(&[10, 10, 10]);
    reply(&mut q, 50_000, 1);
    reply(&mut q, 60_000, 2);
    assert_eq!(
        q.expire(50_000 + GRACE, &KERNEL, GRACE, TIMEOUT),
        Expired::default()
    );
    let expired = q.expire(60_001 + GRACE, &KERNEL, GRACE, TIMEOUT);
    assert_eq!(expired.stamps_missing, 2);
    assert_eq!(expired.timeout, None);
    // The unanswered third stays, and its stamp still finds it.
    assert_eq!(q.awaiting(), 1);
    assert_eq!(q.on_tx(29, 8_000), 0..1);
    assert_eq!(q.stamp(0), Some((2, 8_000)));
}

#[test]
fn a_stamp_that_comes_after_its_request_was_given_up_stamps_nothing_else() {
    let mut q = tcp(&[10, 10]);
    reply(&mut q, 50_000, 1);
    assert_eq!(
        q.expire(60_000 + GRACE, &KERNEL, GRACE, TIMEOUT)
            .stamps_missing,
        1
    );
    assert_eq!(
        q.on_tx(9, 8_000),
        0..0,
        "the late stamp is not the second's"
    );
    assert_eq!(q.stamp(0), None);
}

#[test]
fn a_reply_before_its_tx_stamp_completes_when_the_stamp_comes() {
    let mut q = tcp(&[10]);
    reply(&mut q, 9_000, 5_000_700);
    assert_eq!(q.pop_completed(&KERNEL), None);
    assert_eq!(q.on_tx(9, 5_000_000), 0..1);
    let done = q.pop_completed(&KERNEL).unwrap();
    assert_eq!(done.latency, Some(700));
    assert_eq!(done.departure, 4_000_000);
    // Arrived at its RX stamp, whenever it was read.
    assert_eq!(done.replied, 4_000_700);
}

#[test]
fn a_reply_without_an_rx_stamp_completes_without_a_latency() {
    let mut q = tcp(&[10]);
    q.on_tx(9, 5_000_000);
    q.on_reply(got(9_000, None, Outcome::Ok)).unwrap();
    assert_eq!(q.pop_completed(&KERNEL).unwrap().latency, None);
}

#[test]
fn a_reply_to_nothing_is_out_of_step() {
    let mut q = tcp(&[]);
    assert_eq!(q.on_reply(got(1, None, Outcome::Ok)), Err(OutOfStep));
    let mut q = tcp(&[10]);
    reply(&mut q, 1, 1);
    assert_eq!(q.on_reply(got(2, Some(2), Outcome::Ok)), Err(OutOfStep));
}

#[test]
fn udp_ids_count_datagrams_and_a_lost_one_is_dropped_alone() {
    let mut q = Inflight::new(Transport::Udp, 4);
    for seq in 0..3 {
        q.sent(request(seq), 300);
    }
    assert_eq!(q.on_tx(0, 10), 0..1);
    assert_eq!(q.on_tx(1, 20), 1..2);
    reply(&mut q, 5_000, 30);
    // The second datagram's reply was lost: past the timeout it goes, alone.
    let expired = q.expire(2_001 + TIMEOUT, &KERNEL, GRACE, TIMEOUT);
    assert_eq!(expired.timeout, Some(Timeout::Datagram));
    assert_eq!(q.awaiting(), 1);
    assert_eq!(q.on_tx(2, 40), 1..2);
    reply(&mut q, 6_000, 70);
    let seqs: Vec<_> = drain(&mut q, &KERNEL)
        .iter()
        .map(|c| c.request.seq)
        .collect();
    assert_eq!(seqs, [0, 2]);
}

#[test]
fn a_stalled_stream_is_reported_and_losing_it_counts_and_restarts_ids() {
    let mut q = tcp(&[10, 10, 10]);
    reply(&mut q, TIMEOUT, 1);
    let expired = q.expire(2_001 + TIMEOUT, &KERNEL, GRACE, TIMEOUT);
    assert_eq!(
        expired.stamps_missing, 0,
        "the answered one is within its grace"
    );
    assert_eq!(expired.timeout, Some(Timeout::Stream { awaiting: 2 }));
    assert_eq!(
        q.lose(),
        Lost {
            unanswered: 2,
            answered: 1
        }
    );
    assert!(q.is_empty());
    // A new socket's ids start from 0 again.
    q.sent(request(3), 10);
    assert_eq!(q.on_tx(9, 1), 0..1);
}

#[test]
fn user_timestamps_complete_on_the_reply_alone() {
    let mut q = tcp(&[10, 10]);
    // The time the server says it served the request comes through with it.
    let reply = Received {
        served_ns: Some(2_017),
        ..got(4_500, None, Outcome::Miss)
    };
    q.on_reply(reply).unwrap();
    let done = q.pop_completed(&StampClock::User).unwrap();
    assert_eq!(
        done,
        Completed {
            request: request(0),
            replied: 4_500,
            departure: 1_000,
            latency: Some(3_500),
            outcome: Outcome::Miss,
            served_ns: Some(2_017),
        }
    );
    // No stamp is waited for, so none is given up either.
    q.on_reply(got(5_000, None, Outcome::Hit)).unwrap();
    let expired = q.expire(5_001 + GRACE, &StampClock::User, GRACE, TIMEOUT);
    assert_eq!(expired, Expired::default());
    assert_eq!(
        q.pop_completed(&StampClock::User).map(|c| c.request.seq),
        Some(1)
    );
}

#[test]
fn nic_stamps_come_out_on_the_engines_clock() {
    // The NIC's clock is on TAI, 100 ppm fast: NIC time 1.7e18 was engine time 0.
    // Read at engine times 0, 1 s and 2 s: the second reading measures the drift and
    // finds the map 100 µs ahead, which it slews away by the third.
    let nic0 = 1_700_000_000_000_000_000;
    let reading = |s: u64| ClockReading {
        nic_ns: nic0 + s * 1_000_100_000,
        host_ns: s * 1_000_000_000,
        window_ns: 0,
    };
    let mut map = ClockMap::new(reading(0));
    map.update(reading(1));
    assert_eq!(
        map.to_host(nic0 + 1_000_100_000),
        1_000_100_000,
        "slewed, not stepped"
    );
    map.update(reading(2));
    let clock = StampClock::Nic(Box::new(map));
    let mut q = tcp(&[10]);
    // Sent at engine time 2.0 s, answered 50 µs (50.005 NIC µs) later.
    q.on_tx(9, nic0 + 2_000_200_000);
    reply(&mut q, 2_000_060_000, nic0 + 2_000_250_005);
    let done = q.pop_completed(&clock).unwrap();
    assert!(
        done.departure.abs_diff(2_000_000_000) <= 1,
        "{}",
        done.departure
    );
    assert_eq!(done.latency, Some(50_000));
}
