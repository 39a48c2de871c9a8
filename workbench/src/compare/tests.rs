#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use vernier_stats::DifferenceCi;

use super::block::TouchedBound;
use super::verdict::{Ending, judge};
use super::*;
use crate::coordinator::ReasonKind;
use crate::scenario::Tail;

fn options() -> CompareOptions {
    CompareOptions {
        block: Duration::from_secs(1),
        max_pairs: 10,
        seed: 1,
        design: Design::Blocks,
    }
}

/// A comparison of 8 pairs over 40 s whose CI of B − A is `[low, high]`, asked within
/// `width_us`.
fn comparison(low: f64, high: f64, width_us: f64) -> Comparison {
    let ci = DifferenceCi {
        p: 0.99,
        confidence: 0.95,
        pairs: 8,
        a: 100.0,
        b: 100.0 + (low + high) / 2.0,
        difference: (low + high) / 2.0,
        std_error: (high - low) / 4.0,
        low,
        high,
        ratio: 1.0 + (low + high) / 200.0,
        ratio_low: 1.0 + low / 100.0,
        ratio_high: 1.0 + high / 100.0,
    };
    Comparison {
        a: "127.0.0.1:1".into(),
        b: "127.0.0.1:2".into(),
        rate: 1000.0,
        percentile: 99.0,
        tail: Tail::WithStalls,
        width_us: width_us.into(),
        design: Design::Blocks,
        verdict: CompareVerdict::NotAvailable,
        finding: Finding::Unjudged,
        stopped_after: None,
        reason: String::new(),
        ci: Some(ci),
        percentiles: Vec::new(),
        looks: Vec::new(),
        blocks: Vec::new(),
        ccdf_a: Vec::new(),
        ccdf_b: Vec::new(),
        side_by_side: None,
        seconds: 40.0,
    }
}

#[test]
fn a_ci_below_zero_is_faster_above_is_slower() {
    let mut c = comparison(-14.0, -6.0, 20.0);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::Faster);
    assert_eq!(c.finding, Finding::Difference);
    assert_eq!(c.finding.kind(&c.blocks), None);
    let mut c = comparison(6.0, 14.0, 20.0);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::Slower);
    assert_eq!(c.finding, Finding::Difference);
}

#[test]
fn a_narrow_ci_round_zero_is_no_difference_a_wide_one_is_wide_with_the_pairs_it_needs() {
    let mut c = comparison(-3.0, 4.0, 5.0);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::NoDifference);
    assert_eq!(c.finding, Finding::Difference);
    // 20 µs wide where 5 were asked, on 8 pairs: (20/5)² × 8 = 128 pairs, 120 more at 5 s.
    // A valid CI, wider than asked: wide, not N/A.
    let mut c = comparison(-10.0, 10.0, 5.0);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::Wide);
    assert_eq!(
        c.finding,
        Finding::Confidence {
            pairs_needed: 128.0,
            more_s: 600.0,
            per_pair_s: 5.0
        }
    );
    assert_eq!(c.finding.kind(&c.blocks), Some(ReasonKind::Confidence));
}

#[test]
fn too_few_pairs_is_na_saying_so() {
    let mut c = comparison(-1.0, 1.0, 5.0);
    c.ci = None;
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::NotAvailable);
    assert_eq!(c.finding, Finding::TooFewPairs { max_pairs: 10 });
    assert_eq!(c.finding.kind(&c.blocks), Some(ReasonKind::TooFewPairs));
}

/// A block of A at 1,000 req/s over 2 s: 2,000 sent, 2,000 answered, all on schedule.
fn block() -> Block {
    Block {
        side: Side::A,
        pair: 2,
        order: 4,
        started_s: 10.0,
        samples: 2_000,
        value_us: 100.0.into(),
        sent: 2_000,
        asked: 2_000.0,
        on_schedule: 1.0,
        late_shift_us: 0.0.into(),
        send_lag_p99_us: 5.0,
        backlog_max: 0,
        failed: 0,
        errors: 0,
        without_stalls_us: None,
        touched_share: None,
        problem: None,
    }
}

/// A block a record wrote before its tail without stalls had that name (`own_us`) reads
/// back, and writes it by its name.
#[test]
fn a_block_of_an_older_record_reads_its_tail_without_stalls() {
    let mut written = serde_json::to_value(Block {
        without_stalls_us: Some(90.0),
        ..block()
    })
    .unwrap();
    let value = written["without_stalls_us"].take();
    let map = written.as_object_mut().unwrap();
    map.remove("without_stalls_us");
    map.insert("own_us".into(), value);
    let read: Block = serde_json::from_value(written).unwrap();
    assert_eq!(read.without_stalls_us, Some(90.0));
    let again = serde_json::to_value(&read).unwrap();
    assert_eq!(again["without_stalls_us"], 90.0);
    assert!(again.get("own_us").is_none());
}

#[test]
fn a_block_is_judged_as_a_load_point_is() {
    use super::block::measured_again;
    let judge_block = |block: &Block, rate: f64, tolerance: f64| {
        super::block::judge(block, rate, tolerance, TouchedBound::Held)
    };
    assert_eq!(judge_block(&block(), 1_000.0, 0.05), None);
    // A Poisson count: 1,880 of 2,000 is within 5% + 3/√2000 (11.7%), 1,700 is not.
    let sent = |sent| Block { sent, ..block() };
    assert_eq!(judge_block(&sent(1_880), 1_000.0, 0.05), None);
    assert_eq!(
        judge_block(&sent(1_700), 1_000.0, 0.05),
        Some(ReasonKind::LoadNotReached)
    );
    assert!(!measured_again(ReasonKind::LoadNotReached));
    // Sending more than the rate's count (catching up after a stall) is no load not
    // reached: its on-schedule share judges it. Answering short of it is.
    assert_eq!(judge_block(&sent(2_300), 1_000.0, 0.05), None);
    let answered = Block {
        samples: 1_700,
        ..block()
    };
    assert_eq!(
        judge_block(&answered, 1_000.0, 0.05),
        Some(ReasonKind::LoadNotReached)
    );
    // Half a second of requests waiting for a slot, and more than 100: a closed loop.
    let backlog = |backlog_max| Block {
        backlog_max,
        ..block()
    };
    assert_eq!(judge_block(&backlog(400), 1_000.0, 0.05), None);
    assert_eq!(
        judge_block(&backlog(600), 1_000.0, 0.05),
        Some(ReasonKind::ClosedLoop)
    );
    // Nothing measured ends it; a client far behind is the host's: measured again.
    let empty = Block {
        samples: 0,
        ..block()
    };
    assert_eq!(
        judge_block(&empty, 1_000.0, 0.05),
        Some(ReasonKind::TargetFailed)
    );
    let late = Block {
        on_schedule: 0.15,
        ..block()
    };
    assert_eq!(
        judge_block(&late, 1_000.0, 0.05),
        Some(ReasonKind::Departures)
    );
    assert!(measured_again(ReasonKind::Departures));
    // On the tail without stalls, a block whose requests the host's stalls touched beyond
    // what that tail is judged at is the host's too: measured again, and saying so.
    let touched = |share| Block {
        without_stalls_us: Some(90.0),
        touched_share: Some(share),
        ..block()
    };
    assert_eq!(judge_block(&touched(0.25), 1_000.0, 0.05), None);
    let problem = Block {
        problem: judge_block(&touched(0.4), 1_000.0, 0.05),
        ..touched(0.4)
    };
    assert_eq!(problem.problem, Some(ReasonKind::HostStalls));
    assert!(measured_again(ReasonKind::HostStalls));
    let said = super::render_problem(&problem, Design::Blocks).unwrap();
    assert!(
        said.contains("touched 40% of A's block 3") && said.contains("25%"),
        "{said}"
    );
    // A duet's window has no ceiling on the share touched (its sides share their
    // stalls): only a side left too few untouched requests is set aside, and says so.
    let duet = |block: &Block| super::block::judge(block, 1_000.0, 0.05, TouchedBound::Free);
    assert_eq!(duet(&touched(0.6)), None);
    let short = Block {
        problem: Some(ReasonKind::HostStalls),
        ..touched(0.6)
    };
    let said = super::render_problem(&short, Design::Duet).unwrap();
    assert!(
        said.contains("touched 60% of A's window 3") && said.contains("too few untouched"),
        "{said}"
    );
    // A side that answers with errors has failed: its latencies are its errors'.
    let erring = |errors| Block { errors, ..block() };
    assert_eq!(duet(&erring(20)), None);
    assert_eq!(duet(&erring(21)), Some(ReasonKind::TargetFailed));
    let said = super::render_problem(
        &Block {
            problem: duet(&erring(500)),
            ..erring(500)
        },
        Design::Duet,
    )
    .unwrap();
    assert!(
        said.contains("500 of its 2000 replies were the server's errors"),
        "{said}"
    );
    // The tail compared is the one each block's value is read from.
    assert_eq!(touched(0.1).value_of(Tail::WithoutStalls), 90.0);
    assert_eq!(touched(0.1).value_of(Tail::WithStalls), 100.0);
    assert_eq!(block().value_of(Tail::WithoutStalls), 100.0);
    assert_eq!(super::block::remeasures_allowed(30), 6);
    assert_eq!(super::block::remeasures_allowed(5), 3);
}

#[test]
fn lateness_both_sides_share_cancels_lateness_shown_to_differ_is_na() {
    // The blocks of a comparison whose pairs are A then B, moved by `shifts` in turn.
    let shifted = |shifts: &[f64]| -> Vec<Block> {
        shifts
            .iter()
            .enumerate()
            .map(|(order, &late_shift_us)| Block {
                side: if order % 2 == 0 { Side::A } else { Side::B },
                pair: order / 2,
                order,
                late_shift_us: late_shift_us.into(),
                ..block()
            })
            .collect()
    };
    // Both sides' p99 moved ~300 µs by the client's stalls, one block of A far more (a
    // stall): it cancels in B − A, and the stall is chance, already in the CI.
    let shifts = [300.0, 302.0, 2_000.0, 299.0, 301.0, 300.0, 299.0, 300.0];
    let mut c = comparison(-3.0, 4.0, 10.0);
    c.blocks = shifted(&shifts);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::NoDifference, "{}", c.reason);
    // Without the stall, and B's blocks moved 12 µs more in every pair, where ±5 µs was
    // asked: N/A, saying by how much.
    let shifts = [300.0, 312.0, 300.0, 311.0, 301.0, 313.0, 299.0, 312.0];
    c.blocks = shifted(&shifts);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::NotAvailable);
    let Finding::Departures {
        pairs,
        mean_us,
        low_us,
        high_us,
    } = c.finding
    else {
        panic!("{:?}", c.finding)
    };
    assert_eq!(pairs, 4);
    assert!((mean_us - 12.0).abs() < 1e-9, "{mean_us}");
    assert!((low_us - 10.7).abs() < 0.05 && (high_us - 13.3).abs() < 0.05);
    assert_eq!(c.finding.kind(&c.blocks), Some(ReasonKind::Departures));
    // The same 12 µs where a 25 µs width was asked is within half of it: it stands.
    let mut c = comparison(-3.0, 4.0, 25.0);
    c.blocks = shifted(&shifts);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::NoDifference, "{}", c.reason);
    // In a duet the coin draws each request's side apart from when it leaves: the 12 µs
    // is the servers' (B drains a stall's queue more slowly), and the verdict stands.
    let mut c = comparison(-3.0, 4.0, 10.0);
    c.design = Design::Duet;
    c.blocks = shifted(&shifts);
    judge(&mut c, &options(), Ending::ByRule);
    assert_eq!(c.verdict, CompareVerdict::NoDifference, "{}", c.reason);
}

#[test]
fn a_stop_by_the_watcher_says_so_in_the_reason() {
    let mut c = comparison(-14.0, -6.0, 20.0);
    judge(&mut c, &options(), Ending::ByWatcher);
    assert_eq!(c.verdict, CompareVerdict::Faster);
    assert_eq!(c.stopped_after, Some(0));
}

#[test]
fn the_designs_order_blocks_in_pairs_or_side_by_side() {
    let interleaved: Vec<_> = super::run::schedule(&options()).into_iter().collect();
    assert_eq!(interleaved.len(), 20);
    for (pair, two) in interleaved.chunks(2).enumerate() {
        let mut sides = [two[0].0, two[1].0];
        sides.sort_unstable();
        assert_eq!(sides, [Side::A, Side::B]);
        assert_eq!((two[0].1, two[1].1), (pair, pair));
    }
    // The seed draws each pair's order: both orders occur in ten pairs.
    assert!(interleaved.chunks(2).any(|t| t[0].0 == Side::A));
    assert!(interleaved.chunks(2).any(|t| t[0].0 == Side::B));
    let sequential: Vec<_> = super::run::schedule(&CompareOptions {
        design: Design::Sequential,
        ..options()
    })
    .into_iter()
    .collect();
    assert!(sequential[..10].iter().all(|&(side, _)| side == Side::A));
    assert!(sequential[10..].iter().all(|&(side, _)| side == Side::B));
}

/// A duet's answer says what it compared: side by side, the stream's rate, the cores, and
/// one server carrying both when A and B are one; a side that could not be reached is
/// named.
#[test]
fn a_duet_says_its_sides_were_side_by_side() {
    let mut c = comparison(5.0, 15.0, 30.0);
    c.design = Design::Duet;
    c.side_by_side = Some(SideBySide {
        stream_rate: 10_000.0,
        client_cpus: vec![1],
        server_cpus: vec![0],
        same_server: false,
        set_aside: 2,
    });
    let table = super::report::render_table(&c);
    assert!(
        table.contains("side by side (a duet): one stream of 10000 req/s")
            && table.contains("the client on cores 1, the servers on cores 0")
            && table.contains("each server takes time from the other")
            && table.contains("2 windows set aside"),
        "{table}"
    );
    c.side_by_side.as_mut().unwrap().same_server = true;
    let table = super::report::render_table(&c);
    assert!(table.contains("one server, which carried both"), "{table}");
    super::verdict::conclude(
        &mut c,
        CompareVerdict::NotAvailable,
        Finding::Refused {
            side: Side::B,
            error: "connection refused".into(),
        },
    );
    assert!(
        c.reason
            .starts_with("B's server could not be reached (connection refused)")
    );
    assert_eq!(c.finding.kind(&c.blocks), Some(ReasonKind::TargetFailed));
    // A record of the old design's name reads back as blocks.
    let old: Design = serde_json::from_str("\"interleaved\"").unwrap();
    assert_eq!(old, Design::Blocks);
}

/// A duet's window is marked together with the window before it: a stall that ended just
/// before the window still drains into its first requests (the request sent at 150 µs is
/// in flight until 250 µs, so the queue has not emptied when the window's first leaves at
/// 210 µs). Marked alone, the window would see nothing in flight at its first send and
/// take the drain to be over.
#[test]
fn a_window_is_marked_with_the_one_before_it() {
    use super::block::untouched_of;
    use vernier_stats::Stall;
    let us = |t: u64| t * 1_000;
    let before = [(0, us(20), 0), (us(50), us(20), 0), (us(150), us(100), 0)];
    let window = [
        (us(210), us(60), 0),
        (us(400), us(20), 0),
        (us(500), us(20), 0),
    ];
    let stall = || {
        vec![Stall {
            start: 100_000.0,
            end: 180_000.0,
        }]
    };
    let with = untouched_of(&before, &window, stall()).unwrap();
    assert_eq!(with.touched, [true, false, false]);
    assert_eq!(with.requests, 3);
    assert_eq!(with.latency_us, [20.0, 20.0]);
    assert!((with.touched_share - 1.0 / 3.0).abs() < 1e-12);
    let mean = with.weights.iter().sum::<f64>() / with.weights.len() as f64;
    assert!((mean - 1.0).abs() < 1e-12, "{:?}", with.weights);
    let alone = untouched_of(&[], &window, stall()).unwrap();
    assert_eq!(alone.touched, [false, false, false]);
}
