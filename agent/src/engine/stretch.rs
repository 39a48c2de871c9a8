//! A worker's busy stretches, which its kept samples carry: each kept request says how
//! long before its scheduled send its stretch began (from the last scheduled send that
//! found none of the worker's load in flight) and how many were in flight when it left,
//! so that a point that keeps one request in several can still tell which kept requests
//! a stall touched and weigh them against the selection (`vernier_stats::untouched_kept`):
//! a stall anywhere from its stretch's start to its reply may have changed its latency.
//!
//! A send is idle when every request sent before it had its reply by the send's schedule,
//! the replies' times being their RX stamps where the worker has them: what a sweep over
//! every request in send order finds (`vernier_stats::mark`). The worker cannot know that
//! as a request leaves (a napping worker reads the replies that came during its nap after
//! it sends), so requests wait here, in send order, until every one before them has its
//! reply; a kept sample goes to its batch then, its stretch known.
//!
//! Each worker sweeps only its own requests; an agent of several workers has its workers'
//! stretches joined where they meet (`vernier_stats::joined_since`), which is the sweep
//! over all of them.

use std::collections::VecDeque;

use crate::measure::Sample;

/// The most requests held at once: past it, the oldest is taken as answered now (a
/// stretch can only come out longer for it).
const MAX_OPEN: usize = 1 << 16;

/// Room for this many held requests from the start (about 80 kB): more than the
/// connections and depths of a load as a rule hold in flight, so that a loaded worker
/// allocates nothing once it runs.
const OPEN_ROOM: usize = 1024;

/// A request sent and not yet swept.
#[derive(Debug, Clone, Copy)]
struct Open {
    seq: u64,
    scheduled: u64,
    /// When it left: what its wait for a reply is timed from.
    sent: u64,
    /// Requests awaiting their reply when it left.
    in_flight: u32,
    /// When its reply came (or it was given up), ns since the epoch.
    reply: Option<u64>,
    /// Its sample, when it is kept and has its reply.
    sample: Option<Sample>,
}

/// The requests of the load not yet swept, and the sweep's state.
#[derive(Debug)]
pub(super) struct Stretches {
    open: VecDeque<Open>,
    /// Requests of `open` without a reply.
    awaiting: u32,
    /// The latest reply of the requests swept.
    busy_until: u64,
    /// The scheduled send that began the current stretch.
    since: u64,
}

impl Default for Stretches {
    fn default() -> Stretches {
        Stretches {
            open: VecDeque::with_capacity(OPEN_ROOM),
            awaiting: 0,
            busy_until: 0,
            since: 0,
        }
    }
}

impl Stretches {
    /// Request `seq` (numbered in send order), due at `scheduled`, left at `sent`.
    pub(super) fn sent(&mut self, seq: u64, (scheduled, sent): (u64, u64), out: &mut Vec<Sample>) {
        if self.open.len() >= MAX_OPEN {
            self.give_up_front(sent, out);
        }
        self.open.push_back(Open {
            seq,
            scheduled,
            sent,
            in_flight: self.awaiting,
            reply: None,
            sample: None,
        });
        self.awaiting += 1;
    }

    /// Request `seq`'s reply came at `at`; `sample` is its kept sample, if it is kept.
    /// Samples go to `out` as the requests before them are answered.
    pub(super) fn replied(
        &mut self,
        seq: u64,
        at: u64,
        sample: Option<Sample>,
        out: &mut Vec<Sample>,
    ) {
        match self.open.binary_search_by_key(&seq, |o| o.seq) {
            Ok(i) if self.open[i].reply.is_none() => {
                let open = &mut self.open[i];
                open.reply = Some(at);
                open.sample = sample.map(|s| Sample {
                    in_flight: open.in_flight,
                    ..s
                });
                self.awaiting -= 1;
                self.sweep(out);
            }
            // Swept already (given up, or across a change of sampling): its stretch is
            // not known, and taken to be as long as a sample can say.
            _ => out.extend(sample.map(|s| Sample {
                busy_ns: u32::MAX,
                ..s
            })),
        }
    }

    /// Request `seq` was refused or given up at `at`, without a sample.
    pub(super) fn gone(&mut self, seq: u64, at: u64, out: &mut Vec<Sample>) {
        if let Ok(i) = self.open.binary_search_by_key(&seq, |o| o.seq)
            && self.open[i].reply.is_none()
        {
            self.open[i].reply = Some(at);
            self.awaiting -= 1;
            self.sweep(out);
        }
    }

    /// At `now`, requests sent over `timeout` ago still without a reply are taken as
    /// answered now: the connection that held them was lost, or they timed out. (Timed from
    /// the send, not the schedule: a backlogged request leaves long after it was due.)
    pub(super) fn expire(&mut self, now: u64, timeout: u64, out: &mut Vec<Sample>) {
        while let Some(front) = self.open.front()
            && front.reply.is_none()
            && now.saturating_sub(front.sent) > timeout
        {
            self.give_up_front(now, out);
        }
    }

    /// Every request still waiting is taken as answered at `now`, and every sample held
    /// goes to `out`: before a batch that must hold all of its generation's samples.
    pub(super) fn flush(&mut self, now: u64, out: &mut Vec<Sample>) {
        while !self.open.is_empty() {
            self.give_up_front(now, out);
        }
    }

    fn give_up_front(&mut self, at: u64, out: &mut Vec<Sample>) {
        if let Some(front) = self.open.front_mut()
            && front.reply.is_none()
        {
            front.reply = Some(at);
            self.awaiting -= 1;
        }
        self.sweep(out);
    }

    /// Sweeps the requests at the front whose replies are in, in send order.
    fn sweep(&mut self, out: &mut Vec<Sample>) {
        while let Some(&Open {
            scheduled,
            reply: Some(reply),
            sample,
            ..
        }) = self.open.front()
        {
            self.open.pop_front();
            if self.busy_until <= scheduled {
                self.since = scheduled;
            }
            self.busy_until = self.busy_until.max(reply);
            if let Some(s) = sample {
                let busy = scheduled
                    .saturating_sub(self.since)
                    .min(u64::from(u32::MAX));
                out.push(Sample {
                    busy_ns: busy as u32,
                    ..s
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(latency_ns: u64) -> Option<Sample> {
        Some(Sample {
            latency_ns,
            ..Sample::default()
        })
    }

    /// (latency, busy_ns, in_flight) of each sample out.
    fn seen(out: &[Sample]) -> Vec<(u64, u32, u32)> {
        out.iter()
            .map(|s| (s.latency_ns, s.busy_ns, s.in_flight))
            .collect()
    }

    #[test]
    fn stretches_are_found_in_send_order_whatever_order_the_replies_come_in() {
        let (mut s, mut out) = (Stretches::default(), Vec::new());
        // 0 at 100 (answered at 160), 1 at 150 while 0 is in flight (answered at 140, on
        // another connection: first), 2 at 200 with both answered by then, 3 at 210.
        s.sent(0, (100, 100), &mut out);
        s.sent(1, (150, 150), &mut out);
        s.replied(1, 140, kept(1), &mut out);
        assert!(out.is_empty(), "1 waits for 0");
        s.sent(2, (200, 200), &mut out);
        s.replied(0, 160, kept(0), &mut out);
        assert_eq!(seen(&out), [(0, 0, 0), (1, 50, 1)]);
        s.sent(3, (210, 210), &mut out);
        s.replied(2, 230, None, &mut out);
        s.replied(3, 240, kept(3), &mut out);
        // 2 began a stretch (nothing in flight at 200); 3 joined it.
        assert_eq!(seen(&out[2..]), [(3, 10, 1)]);
    }

    #[test]
    fn a_reply_read_late_but_come_before_the_schedule_ends_the_stretch() {
        let (mut s, mut out) = (Stretches::default(), Vec::new());
        s.sent(0, (100, 100), &mut out);
        // 1 leaves at 200 before 0's reply (come at 150) is read.
        s.sent(1, (200, 200), &mut out);
        s.replied(0, 150, None, &mut out);
        s.replied(1, 220, kept(1), &mut out);
        assert_eq!(seen(&out), [(1, 0, 1)]);
    }

    #[test]
    fn requests_given_up_count_as_answered_when_given_up() {
        let (mut s, mut out) = (Stretches::default(), Vec::new());
        s.sent(0, (100, 100), &mut out);
        s.sent(1, (110, 110), &mut out);
        s.replied(1, 130, kept(1), &mut out);
        // 0 never answers: given up at 5,000 (past a 1,000 timeout), it ends then.
        s.expire(900, 1_000, &mut out);
        assert!(out.is_empty());
        s.expire(5_000, 1_000, &mut out);
        assert_eq!(seen(&out), [(1, 10, 1)]);
        s.sent(2, (4_000, 4_000), &mut out);
        s.replied(2, 4_100, kept(2), &mut out);
        assert_eq!(seen(&out[1..]), [(2, 3_900, 0)]);
        // Refused: gone at once.
        s.sent(3, (6_000, 6_000), &mut out);
        s.gone(3, 6_010, &mut out);
        s.sent(4, (7_000, 7_000), &mut out);
        s.replied(4, 7_100, kept(4), &mut out);
        assert_eq!(seen(&out[2..]), [(4, 0, 0)]);
    }

    #[test]
    fn a_backlogged_request_waits_for_its_reply_from_when_it_left() {
        let (mut s, mut out) = (Stretches::default(), Vec::new());
        // Due at 100, sent at 5,000 (a backlog): at 5,500 it has waited 500, not 5,400.
        s.sent(0, (100, 5_000), &mut out);
        s.sent(1, (200, 5_010), &mut out);
        s.replied(1, 5_100, kept(1), &mut out);
        s.expire(5_500, 1_000, &mut out);
        assert!(out.is_empty(), "{out:?}");
        s.replied(0, 5_050, None, &mut out);
        assert_eq!(seen(&out), [(1, 100, 1)]);
    }

    #[test]
    fn a_flush_hands_over_every_sample_held() {
        let (mut s, mut out) = (Stretches::default(), Vec::new());
        s.sent(0, (100, 100), &mut out);
        s.sent(1, (110, 110), &mut out);
        s.replied(1, 130, kept(1), &mut out);
        s.flush(500, &mut out);
        assert_eq!(seen(&out), [(1, 10, 1)]);
        // A reply after the flush still gives its sample, its stretch unknown.
        s.replied(0, 600, kept(0), &mut out);
        assert_eq!(seen(&out[1..]), [(0, u32::MAX, 0)]);
    }
}
