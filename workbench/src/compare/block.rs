//! One block of a comparison: a fresh in-process agent loading one side at the rate, and
//! the block judged as the methodology judges a load point, by what a block alone shows.

use std::collections::BTreeMap;
use std::time::Instant;

use vernier_agent::{HostProbe, STALL_THRESHOLD_NS};
use vernier_stats::{
    MeanCi, Sent, Stall, Untouched, WeightedSamples, mean_ci, percentile, untouched_sent,
};

use super::comparison::{Block, CompareOptions, Finding, Side};
use crate::coordinator::ReasonKind;
use crate::coordinator::policy::{
    Beyond, LoadSeen, OnSchedule, enough_on_schedule, late_shift, lateness_allowed_us,
    lateness_matters, load_problem, too_touched,
};
use crate::error::Error;
use crate::load::{resolve, run_load};
use crate::samples::stall_of;
use crate::scenario::Scenario;

/// Where a block sits in the comparison, and the host probes whose stalls mark its
/// requests (none: every request's tail is compared).
pub(super) struct Place<'p> {
    pub(super) side: Side,
    pub(super) pair: usize,
    pub(super) order: usize,
    pub(super) started: Instant,
    pub(super) probes: Option<&'p [HostProbe]>,
}

/// A block's samples: every request's latency ascending, µs, and, when the tail without
/// stalls is compared, the requests no stall touched.
pub(super) struct Measured {
    pub(super) sorted: Vec<f64>,
    pub(super) without_stalls: Option<WithoutStalls>,
}

/// The requests of a block no stall touched: latencies (µs, send order) and their weights
/// against the selection, scaled to sum to every request of the block (so that pooled
/// blocks count by what they measured, not by what the stalls left).
pub(super) struct WithoutStalls {
    pub(super) values: Vec<f64>,
    pub(super) weights: Vec<f64>,
}

/// One block of `scenario` at `rate`: its samples, and what it measured. The block's
/// problem is left for [`judge`], which needs the width asked.
pub(super) fn measure(
    scenario: &Scenario,
    place: Place<'_>,
    rate: f64,
    p: f64,
    options: &CompareOptions,
) -> Result<(Measured, Block), Error> {
    // Stalls seen before the block are not its own.
    for probe in place.probes.unwrap_or_default() {
        probe.take_all();
    }
    let target = scenario
        .targets
        .first()
        .ok_or_else(|| Error::Usage(format!("{} names no target", place.side)))?;
    let addr = resolve(target)?;
    let mut spec = scenario.load_spec(0, addr);
    // Each block its own requests' draws: the same seed would send the same keys at the
    // same times in every block.
    spec.seed = spec
        .seed
        .wrapping_add((place.order as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let started_s = place.started.elapsed().as_secs_f64();
    let window = run_load(spec, crate::load::Load::every_sample(rate, options.block))
        .map_err(|e| Error::Failed(format!("{}'s block {}: {e}", place.side, place.pair + 1)))?;
    let mut stalls: Vec<Stall> = window.stalls.intervals.iter().map(stall_of).collect();
    for probe in place.probes.unwrap_or_default() {
        let (_, seen) = probe.take_all();
        stalls.extend(seen.since(window.origin_ns).intervals.iter().map(stall_of));
    }
    let c = &window.counters;
    let taken = Taken {
        samples: &window.samples,
        before: &[],
        errors: c.error_replies,
        stalls: place.probes.map(|_| &stalls[..]),
        sent: c.sent,
        failed: c.failed + c.timeouts,
        backlog_max: c.backlog_max,
        seconds: options.block.as_secs_f64(),
    };
    Ok(of_requests(&taken, &place, started_s, rate, p))
}

/// What one side measured over a block (or a duet's window): its requests' departure,
/// latency and send lag (ns), and the stream's counts for it.
pub(super) struct Taken<'s> {
    /// Departure, latency and send lag of each request answered, ns.
    pub(super) samples: &'s [(u64, u64, u32)],
    /// The same of the requests just before (a duet's previous window, on the same clock):
    /// marked with these, so that a stall's drain across the boundary reaches them, and
    /// not kept.
    pub(super) before: &'s [(u64, u64, u32)],
    /// Replies that were the server's errors.
    pub(super) errors: u64,
    /// The stalls its requests are marked by, on the samples' clock (none: every request's
    /// tail is compared).
    pub(super) stalls: Option<&'s [Stall]>,
    /// Requests sent.
    pub(super) sent: u64,
    /// Requests that failed or timed out.
    pub(super) failed: u64,
    /// The largest backlog of requests due but not sent.
    pub(super) backlog_max: u64,
    /// How long it measured.
    pub(super) seconds: f64,
}

/// The block `taken` makes at `place`, started `started_s` into the comparison, at `rate`
/// and percentile `p`: its samples and its figures, its problem left for [`judge`].
pub(super) fn of_requests(
    taken: &Taken<'_>,
    place: &Place<'_>,
    started_s: f64,
    rate: f64,
    p: f64,
) -> (Measured, Block) {
    let mut samples = Vec::with_capacity(taken.samples.len());
    let mut on_time = Vec::new();
    let mut lags = Vec::with_capacity(taken.samples.len());
    for &(_, latency_ns, lag_ns) in taken.samples {
        let us = latency_ns as f64 / 1e3;
        samples.push(us);
        lags.push(f64::from(lag_ns) / 1e3);
        if OnSchedule::SEND_PATH.holds(u64::from(lag_ns)) {
            on_time.push(us);
        }
    }
    samples.sort_unstable_by(f64::total_cmp);
    on_time.sort_unstable_by(f64::total_cmp);
    lags.sort_unstable_by(f64::total_cmp);
    let value_us = percentile(&samples, p).unwrap_or(f64::NAN);
    let untouched = (taken.stalls)
        .and_then(|stalls| untouched_of(taken.before, taken.samples, stalls.to_vec()));
    let without_stalls_us = untouched.as_ref().map(|u| {
        WeightedSamples::new(u.latency_us.clone(), &u.weights)
            .ok()
            .and_then(|w| w.percentile(p))
            .unwrap_or(f64::NAN)
    });
    let block = Block {
        side: place.side,
        pair: place.pair,
        order: place.order,
        started_s,
        samples: samples.len(),
        value_us: value_us.into(),
        sent: taken.sent,
        asked: rate * taken.seconds,
        on_schedule: on_time.len() as f64 / samples.len().max(1) as f64,
        late_shift_us: late_shift(&samples, &on_time, p).unwrap_or(f64::NAN).into(),
        send_lag_p99_us: percentile(&lags, 0.99).unwrap_or(0.0),
        backlog_max: taken.backlog_max,
        failed: taken.failed,
        errors: taken.errors,
        without_stalls_us,
        touched_share: untouched.as_ref().map(|u| u.touched_share),
        problem: None,
    };
    let without_stalls = untouched.map(|u| {
        let scale = u.requests as f64 / u.latency_us.len().max(1) as f64;
        WithoutStalls {
            weights: u.weights.iter().map(|w| w * scale).collect(),
            values: u.latency_us,
        }
    });
    (
        Measured {
            sorted: samples,
            without_stalls,
        },
        block,
    )
}

/// The requests `samples` marked by `stalls` ([`untouched_sent`], late sends included),
/// together with the requests `before` them (a duet's previous window: the queue a stall
/// left at its end still drains into this one's first requests, which marked alone would
/// seem to find it empty), whose own marks are then dropped; `None` when the marks cannot
/// be made (a stall's figures out of order).
pub(super) fn untouched_of(
    before: &[(u64, u64, u32)],
    samples: &[(u64, u64, u32)],
    stalls: Vec<Stall>,
) -> Option<Untouched> {
    let sent = |&(departure_ns, latency_ns, late): &(u64, u64, u32)| Sent {
        departure_ns,
        late_ns: u64::from(late),
        latency_ns,
    };
    if before.is_empty() {
        let mut own: Vec<Sent> = samples.iter().map(sent).collect();
        return untouched_sent(&mut own, stalls, STALL_THRESHOLD_NS).ok();
    }
    // In send order (the order `untouched_sent` keeps, its sort being stable), each with
    // whether it is the window's own.
    let mut all: Vec<(Sent, bool)> = (before.iter().map(|s| (sent(s), false)))
        .chain(samples.iter().map(|s| (sent(s), true)))
        .collect();
    all.sort_by_key(|(s, _)| s.departure_ns);
    let (mut requests, own): (Vec<Sent>, Vec<bool>) = all.into_iter().unzip();
    let marked = untouched_sent(&mut requests, stalls, STALL_THRESHOLD_NS).ok()?;
    let mut kept = (marked.latency_us.iter()).zip(&marked.weights);
    let (mut latency_us, mut weights, mut touched) = (Vec::new(), Vec::new(), Vec::new());
    for (&is_own, &was_touched) in own.iter().zip(&marked.touched) {
        let value = if was_touched { None } else { kept.next() };
        if !is_own {
            continue;
        }
        touched.push(was_touched);
        if let Some((&latency, &weight)) = value {
            latency_us.push(latency);
            weights.push(weight);
        }
    }
    // Weights against the selection, scaled to mean 1 over the window's own.
    let mean = weights.iter().sum::<f64>() / weights.len().max(1) as f64;
    if mean > 0.0 {
        weights.iter_mut().for_each(|w| *w /= mean);
    }
    Some(Untouched {
        touched_share: touched.iter().filter(|&&t| t).count() as f64 / touched.len().max(1) as f64,
        requests: touched.len(),
        latency_us,
        weights,
        touched,
    })
}

/// Why `block` cannot stand for its side at `rate`, judged as a load point is, by the
/// methodology's own rules: nothing measured (`target_failed`); the load not as asked
/// ([`load_problem`] on its counts, with the scenario's warm-up `tolerance`: a closed loop,
/// or the load not reached); each of which ends the
/// comparison, since the side could not carry the load as asked; or the client so far
/// behind that too few requests left on schedule (`departures`), or the host's stalls
/// touching too many of the requests ([`too_touched`], as a point's) when the tail without
/// stalls is compared (`host_stalls`): the host rather than the side, for which the block
/// is measured again. None when it stands. A duet's window passes [`TouchedBound::Free`]:
/// its sides share their stalls, and what the stalls leave is judged by the CI's own needs.
/// A side that answered more than [`MAX_ERROR_SHARE`] of its requests with errors is
/// `target_failed` too: its latencies are those of its errors.
/// (How far the client's lateness moved the percentile is judged over both sides'
/// blocks, by [`late_sides`].)
pub(crate) fn judge(
    block: &Block,
    rate: f64,
    tolerance: f64,
    bound: TouchedBound,
) -> Option<ReasonKind> {
    if block.samples == 0 || block.errors as f64 > MAX_ERROR_SHARE * block.samples as f64 {
        return Some(ReasonKind::TargetFailed);
    }
    if let Some(kind) = load_problem(&load_seen(block, rate, tolerance), Beyond::Reached) {
        return Some(kind);
    }
    if !enough_on_schedule(block.on_schedule) {
        return Some(ReasonKind::Departures);
    }
    if bound == TouchedBound::Held && block.touched_share.is_some_and(too_touched) {
        return Some(ReasonKind::HostStalls);
    }
    None
}

/// Whether a block's share touched may make it a problem: held to the most the tail
/// without stalls is judged at, or free (a duet's window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TouchedBound {
    /// Beyond [`too_touched`]'s bound, the block is the host's `host_stalls`.
    Held,
    /// Not judged: the CI's own needs judge what the stalls leave.
    Free,
}

/// The share of a block's replies that may be the server's errors: beyond it, the side
/// is failing rather than answering.
pub(crate) const MAX_ERROR_SHARE: f64 = 0.01;

/// The load as `block` saw it, counted over the block: what the methodology's rule judges,
/// as it judges a load point's warm-up.
pub(crate) fn load_seen(block: &Block, rate: f64, tolerance: f64) -> LoadSeen {
    LoadSeen {
        asked: block.asked,
        asked_count: block.asked,
        sent: block.sent as f64,
        answered: block.samples as f64,
        rate,
        backlog: block.backlog_max,
        backlog_max: block.backlog_max,
        tolerance,
    }
}

/// Whether a block with `problem` is measured again (the client fell behind, or the
/// host's stalls touched too many of its requests: the host's doing, not the side's)
/// rather than ending the comparison.
pub(super) fn measured_again(problem: ReasonKind) -> bool {
    matches!(problem, ReasonKind::Departures | ReasonKind::HostStalls)
}

/// The fewest pairs whose lateness is judged: fewer say nothing of it.
const MIN_LATE_PAIRS: usize = 3;

/// Blocks measured again for the client's lateness, as a share of the pairs allowed (at
/// least [`MIN_REMEASURED`]): beyond it the host stalls too often for the comparison, and it
/// ends N/A saying so.
const REMEASURED_SHARE: f64 = 0.2;
/// The fewest blocks that may be measured again, whatever [`REMEASURED_SHARE`] gives.
const MIN_REMEASURED: usize = 3;

/// How many blocks may be measured again in a comparison of at most `max_pairs` pairs.
pub(super) fn remeasures_allowed(max_pairs: usize) -> usize {
    ((max_pairs as f64 * REMEASURED_SHARE).ceil() as usize).max(MIN_REMEASURED)
}

/// Whether the client's lateness moved one side's percentile more than the other's: in
/// each pair, how far B's block was moved by its late requests (its percentile less that
/// of its requests sent on schedule) less how far A's was, and the mean of these over the
/// pairs with its Student-t interval at `confidence`. Lateness both sides share (the
/// host's stalls reach A's blocks and B's alike) cancels in B − A, and lateness that
/// differs only by chance is already in its CI; lateness shown to differ by more than
/// [`DEPARTURE_SHARE_OF_WIDTH`](crate::coordinator::policy::DEPARTURE_SHARE_OF_WIDTH) of `width_us` (the point's rule, [`lateness_matters`])
/// would be part of the difference.
pub(super) fn late_sides(blocks: &[Block], width_us: f64, confidence: f64) -> Option<Finding> {
    let mut shifts: BTreeMap<usize, [Option<f64>; 2]> = BTreeMap::new();
    for b in blocks
        .iter()
        .filter(|b| b.problem.is_none() && b.late_shift_us.is_finite())
    {
        shifts.entry(b.pair).or_default()[usize::from(b.side == Side::B)] =
            Some(b.late_shift_us.get());
    }
    let gaps: Vec<f64> = shifts
        .values()
        .filter_map(|&[a, b]| Some(b? - a?))
        .collect();
    if gaps.len() < MIN_LATE_PAIRS {
        return None;
    }
    let MeanCi {
        n, mean, low, high, ..
    } = mean_ci(&gaps, confidence).ok()?;
    lateness_matters(mean, low, high, lateness_allowed_us(width_us)).then_some(
        Finding::Departures {
            pairs: n,
            mean_us: mean,
            low_us: low,
            high_us: high,
        },
    )
}
