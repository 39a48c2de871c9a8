//! One block of a comparison: a fresh in-process agent loading one side at the rate, and
//! the block judged as the methodology judges a load point, by what a block alone shows.

use std::collections::BTreeMap;
use std::time::Instant;

use statrs::distribution::{ContinuousCDF, StudentsT};

use vernier_stats::percentile;

use super::comparison::{Block, CompareOptions};
use crate::coordinator::policy::{
    CHANCE_SIGMAS, DEPARTURE_SHARE_OF_WIDTH, HOPELESS_BACKLOG_MIN, HOPELESS_BACKLOG_S,
    MIN_ON_SCHEDULE_SHARE, ON_SCHEDULE_NS,
};
use crate::error::Error;
use crate::load::{resolve, run_load};
use crate::scenario::Scenario;

/// Where a block sits in the comparison.
pub(super) struct Place {
    pub(super) side: &'static str,
    pub(super) pair: usize,
    pub(super) order: usize,
    pub(super) started: Instant,
}

/// One block of `scenario` at `rate`: its samples sorted (µs), and what it measured. The
/// block's problem is left for [`judge`], which needs the width asked.
pub(super) fn measure(
    scenario: &Scenario,
    place: Place,
    rate: f64,
    p: f64,
    options: &CompareOptions,
) -> Result<(Vec<f64>, Block), Error> {
    let Place {
        side,
        pair,
        order,
        started,
    } = place;
    let target = scenario
        .targets
        .first()
        .ok_or_else(|| Error::Usage(format!("{side} names no target")))?;
    let addr = resolve(target)?;
    let mut spec = scenario.load_spec(0, addr);
    // Each block its own requests' draws: the same seed would send the same keys at the
    // same times in every block.
    spec.seed = spec
        .seed
        .wrapping_add((order as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let started_s = started.elapsed().as_secs_f64();
    let window = run_load(spec, crate::load::Load::every_sample(rate, options.block))
        .map_err(|e| Error::Failed(format!("{side}'s block {}: {e}", pair + 1)))?;
    let mut samples = Vec::with_capacity(window.samples.len());
    let mut on_time = Vec::new();
    for &(_, latency_ns, lag_ns) in &window.samples {
        let us = latency_ns as f64 / 1e3;
        samples.push(us);
        if lag_ns <= ON_SCHEDULE_NS {
            on_time.push(us);
        }
    }
    samples.sort_unstable_by(f64::total_cmp);
    on_time.sort_unstable_by(f64::total_cmp);
    let value_us = percentile(&samples, p).unwrap_or(f64::NAN);
    let block = Block {
        side: side.to_string(),
        pair,
        order,
        started_s,
        samples: samples.len(),
        value_us,
        sent: window.counters.sent,
        asked: rate * options.block.as_secs_f64(),
        on_schedule: on_time.len() as f64 / samples.len().max(1) as f64,
        late_shift_us: percentile(&on_time, p).map_or(f64::NAN, |v| value_us - v),
        send_lag_p99_us: window.send_lag.value_at_quantile(0.99) as f64 / 1e3,
        backlog_max: window.counters.backlog_max,
        failed: window.counters.failed + window.counters.timeouts,
        problem: None,
    };
    Ok((samples, block))
}

/// Why `block` cannot stand for its side at `rate`, judged as a load point is: nothing
/// measured; the load not reached (fewer departures than the rate's Poisson count allows,
/// with the scenario's warm-up `tolerance`); a closed loop (a backlog of half a second of
/// requests); each of which ends the comparison, since the side could not carry the load
/// as asked; or the client so far behind that fewer than a fifth of the requests left on
/// schedule, a stall of the host rather than of the side, for which the block is measured
/// again. None when it stands. (How far the client's lateness moved the percentile is
/// judged over both sides' blocks, by [`late_sides`].)
pub(super) fn judge(block: &Block, rate: f64, tolerance: f64) -> Option<Problem> {
    let name = format!("{}'s block {}", block.side, block.pair + 1);
    if block.samples == 0 {
        return Some(Problem::Ends(format!(
            "{name} measured nothing ({} sent, {} failed)",
            block.sent, block.failed
        )));
    }
    if block.backlog_max as f64 > rate * HOPELESS_BACKLOG_S
        && block.backlog_max > HOPELESS_BACKLOG_MIN
    {
        return Some(Problem::Ends(format!(
            "{name} went closed-loop: {} requests waited for a free connection slot (closed_loop: more --connections or --depth)",
            block.backlog_max
        )));
    }
    let allowed = tolerance + CHANCE_SIGMAS / block.asked.max(1.0).sqrt();
    if (block.sent as f64) < block.asked * (1.0 - allowed) {
        return Some(Problem::Ends(format!(
            "{name} sent {} of the {:.0} requests its rate asks for (load_not_reached: the client or the target could not keep up)",
            block.sent, block.asked
        )));
    }
    if block.on_schedule < MIN_ON_SCHEDULE_SHARE {
        return Some(Problem::Late(format!(
            "{name} sent {:.0}% of its requests on schedule (departures: the client fell behind its load)",
            block.on_schedule * 100.0
        )));
    }
    None
}

/// Blocks measured again for the client's lateness, as a share of the pairs allowed (at
/// least [`MIN_REMEASURED`]): beyond it the host stalls too often for the comparison, and it
/// ends N/A saying so.
const REMEASURED_SHARE: f64 = 0.2;
/// ... and never fewer than this.
const MIN_REMEASURED: usize = 3;

/// How many blocks may be measured again in a comparison of at most `max_pairs` pairs.
pub(super) fn remeasures_allowed(max_pairs: usize) -> usize {
    ((max_pairs as f64 * REMEASURED_SHARE).ceil() as usize).max(MIN_REMEASURED)
}

/// Why a block cannot stand for its side.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Problem {
    /// The side could not be measured at the load asked: the comparison ends N/A.
    Ends(String),
    /// The client fell behind (a stall of the host): the block is measured again.
    Late(String),
}

impl Problem {
    /// What went wrong, in a sentence.
    pub(super) fn text(&self) -> &str {
        match self {
            Problem::Ends(text) | Problem::Late(text) => text,
        }
    }
}

/// Whether the client's lateness moved one side's percentile more than the other's: in
/// each pair, how far B's block was moved by its late requests (its percentile less that
/// of its requests sent on schedule) less how far A's was, and the mean of these over the
/// pairs with its Student-t interval at `confidence`. Lateness both sides share (the
/// host's stalls reach A's blocks and B's alike) cancels in B − A, and lateness that
/// differs only by chance is already in its CI; lateness shown to differ (the interval
/// excludes zero) by more than [`DEPARTURE_SHARE_OF_WIDTH`] of `width_us` would be part of
/// the difference.
pub(super) fn late_sides(blocks: &[Block], width_us: f64, confidence: f64) -> Option<String> {
    let mut shifts: BTreeMap<usize, [Option<f64>; 2]> = BTreeMap::new();
    for b in blocks
        .iter()
        .filter(|b| b.problem.is_none() && b.late_shift_us.is_finite())
    {
        shifts.entry(b.pair).or_default()[usize::from(b.side == "B")] = Some(b.late_shift_us);
    }
    let gaps: Vec<f64> = shifts
        .values()
        .filter_map(|&[a, b]| Some(b? - a?))
        .collect();
    let n = gaps.len();
    if n < 3 {
        return None;
    }
    let mean = gaps.iter().sum::<f64>() / n as f64;
    let variance = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    let half = t * (variance / n as f64).sqrt();
    let (low, high) = (mean - half, mean + half);
    let shown = low > 0.0 || high < 0.0;
    (shown && mean.abs() > DEPARTURE_SHARE_OF_WIDTH * width_us).then(|| {
        format!(
            "the client's lateness moved B's blocks by {mean:+.1} µs [{low:+.1}, {high:+.1}] more than A's (over {n} pairs), more than half the {width_us:.1} µs asked: part of B − A would be the client's (departures: pin the workers with --cpus, or ask a wider --width)"
        )
    })
}
