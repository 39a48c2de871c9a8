use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::*;
use crate::stalls::untouched_sent;

/// A FIFO server at about 45% load (arrivals 33 µs apart, service 15 µs, both
/// exponential) that stops for 300 µs every 7 ms or so: each request as its client sent
/// it (some late, after the stalls that held the client), with its stretch from a sweep
/// over them all, and the stalls.
fn queue(n: usize, seed: u64) -> (Vec<Kept>, Vec<Stall>) {
    queue_of(n, seed, 1)
}

/// [`queue`] with its requests sent in turn by `workers` workers of one client, each
/// request's stretch from a sweep over its own worker's requests only (what each worker
/// of an agent sees).
fn queue_of(n: usize, seed: u64, workers: usize) -> (Vec<Kept>, Vec<Stall>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut exp = |mean: f64| -mean * (1.0 - rng.random::<f64>()).ln();
    let mut stalls = Vec::new();
    let mut at = 0.0;
    while at < n as f64 * 40_000.0 {
        at += exp(7e6).round();
        stalls.push(Stall {
            start: at,
            end: at + 300_000.0,
        });
    }
    let held = |t: f64| stalls.iter().find(|s| s.start <= t && t < s.end);
    let (mut scheduled, mut free) = (0.0, 0.0_f64);
    let mut out = Vec::new();
    let (mut busy_until, mut since) = (vec![0.0_f64; workers], vec![0.0; workers]);
    for i in 0..n {
        let w = i % workers;
        // Whole ns, as a client records them.
        scheduled += exp(33_000.0).round();
        // A client held by a stall sends when it ends.
        let departure = held(scheduled).map_or(scheduled, |s| s.end);
        let mut done = departure.max(free) + exp(15_000.0).round();
        if let Some(s) = stalls
            .iter()
            .find(|s| s.start < done && s.end > free.max(departure))
        {
            done += s.end - s.start;
        }
        free = done;
        if busy_until[w] <= scheduled {
            since[w] = scheduled;
        }
        busy_until[w] = busy_until[w].max(done);
        out.push(Kept {
            sent: Sent {
                departure_ns: departure as u64,
                late_ns: (departure - scheduled) as u64,
                latency_ns: (done - departure) as u64,
            },
            busy_ns: (scheduled - since[w]) as u64,
        });
    }
    (out, stalls)
}

/// The sends more than 100 µs late, as stalls (as an agent passes those it did not keep).
fn late_sends(all: &[Kept]) -> Vec<Stall> {
    all.iter()
        .filter(|k| k.sent.late_ns > 100_000)
        .map(|k| Stall {
            start: k.scheduled(),
            end: k.sent.departure_ns as f64,
        })
        .collect()
}

fn sent(kept: &[Kept]) -> Vec<Sent> {
    kept.iter().map(|k| k.sent).collect()
}

/// Kept whole, the stretches mark and weigh every request as the sweep over them all does.
#[test]
fn every_request_kept_marks_and_weighs_as_the_whole_sample() {
    let (mut kept, stalls) = queue(20_000, 1);
    let whole = untouched_sent(&mut sent(&kept), stalls.clone(), 100_000).unwrap();
    let part = untouched_kept(&mut kept, stalls, 100_000).unwrap();
    assert!(whole.touched_share > 0.02, "{}", whole.touched_share);
    assert_eq!(part.touched, whole.touched);
    assert_eq!(part.latency_us, whole.latency_us);
    for (a, b) in part.weights.iter().zip(&whole.weights) {
        assert!((a - b).abs() < 1e-9 * b, "{a} against {b}");
    }
}

/// One request in three kept, the others' late sends passed as stalls (as an agent does):
/// each kept request is marked as the whole sample marks it, and the weighted
/// percentiles stay within the thinning's own noise of the whole sample's.
#[test]
fn one_in_three_kept_marks_each_as_the_whole_sample() {
    let (all, stalls) = queue(60_000, 2);
    let whole = untouched_sent(&mut sent(&all), stalls.clone(), 100_000).unwrap();
    let late = late_sends(&all);
    let mut kept: Vec<Kept> = all.iter().copied().step_by(3).collect();
    let part = untouched_kept(&mut kept, [stalls, late].concat(), 100_000).unwrap();
    let expected: Vec<bool> = whole.touched.iter().copied().step_by(3).collect();
    assert_eq!(part.touched, expected);
    let whole_w = crate::WeightedSamples::new(whole.latency_us, &whole.weights).unwrap();
    let part_w = crate::WeightedSamples::new(part.latency_us, &part.weights).unwrap();
    for p in [0.5, 0.9, 0.99] {
        let (a, b) = (
            part_w.percentile(p).unwrap(),
            whole_w.percentile(p).unwrap(),
        );
        // Thinning alone moves a percentile by its sampling noise; the weights must not
        // add a bias beyond it.
        assert!((a / b - 1.0).abs() < 0.03, "p{p}: {a} against {b}");
    }
}

/// Two workers, each with its own stretches: kept whole, the joined stretches mark and
/// weigh every request as the sweep over the client's every request does; one in three
/// kept, a request is never marked less than its own worker's stretch marks it, and
/// nearly always as the whole sample marks it.
#[test]
fn two_workers_stretches_join_into_the_client_s() {
    let (mut kept, stalls) = queue_of(20_000, 4, 2);
    let whole = untouched_sent(&mut sent(&kept), stalls.clone(), 100_000).unwrap();
    let own: Vec<f64> = kept.iter().map(Kept::since).collect();
    let joined = joined_since(&kept);
    let longer = own.iter().zip(&joined).filter(|(o, j)| j < o).count();
    // Each worker alone sees half the load: many of its sends idle that the client's
    // sweep finds busy.
    assert!(longer > kept.len() / 20, "{longer} of {}", kept.len());
    let part = untouched_joined(&mut kept, stalls.clone(), 100_000).unwrap();
    assert_eq!(part.touched, whole.touched);
    for (a, b) in part.weights.iter().zip(&whole.weights) {
        assert!((a - b).abs() < 1e-9 * b, "{a} against {b}");
    }
    // Each worker's own stretches alone mark fewer.
    let own = untouched_kept(&mut kept, stalls.clone(), 100_000).unwrap();
    let count = |u: &Untouched| u.touched.iter().filter(|&&t| t).count();
    assert!(
        count(&own) < count(&part),
        "{} against {}",
        count(&own),
        count(&part)
    );

    let (all, stalls) = queue_of(60_000, 5, 2);
    let whole = untouched_sent(&mut sent(&all), stalls.clone(), 100_000).unwrap();
    let late = late_sends(&all);
    let stalls = [stalls, late].concat();
    let mut kept: Vec<Kept> = all.iter().copied().step_by(3).collect();
    let part = untouched_joined(&mut kept, stalls.clone(), 100_000).unwrap();
    let expected: Vec<bool> = whole.touched.iter().copied().step_by(3).collect();
    let merged_stalls = crate::stalls::merged(stalls);
    for (i, k) in kept.iter().enumerate() {
        let by_own = merged_stalls
            .iter()
            .any(|s| s.start < k.reply() && s.end > k.since());
        assert!(
            part.touched[i] || !by_own,
            "request {i} marked less than its own stretch"
        );
    }
    let agree = part
        .touched
        .iter()
        .zip(&expected)
        .filter(|(a, b)| a == b)
        .count();
    assert!(
        agree as f64 >= 0.99 * kept.len() as f64,
        "{agree} of {}",
        kept.len()
    );
}

#[test]
fn a_stall_that_ends_before_it_starts_is_an_error() {
    let (mut kept, _) = queue(10, 3);
    let bad = vec![Stall {
        start: 5.0,
        end: 1.0,
    }];
    assert!(untouched_kept(&mut kept, bad, 100_000).is_err());
}
