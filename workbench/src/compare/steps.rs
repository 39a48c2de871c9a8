//! What the blocks' loop and the duet's share: each side's samples, a look at the CI of
//! B − A after a pair and the line shown for it, the verdict's last steps, the host probes,
//! and the comparison before its first pair.

use std::time::Instant;

use vernier_agent::HostProbe;
use vernier_stats::{
    DifferenceCi, MIN_PAIRS_TO_LOOK, Pair, StatsError, StoppingRule, WeightedBlock, WeightedPair,
    difference_ci, weighted_difference_ci,
};

use super::block::Measured;
use super::comparison::{
    Block, CompareOptions, CompareVerdict, Comparison, Design, Finding, Look, Steer,
};
use super::verdict::{Ending, conclude, judge};
use crate::error::Error;
use crate::scenario::{LoadPlan, Scenario, Tail};
use crate::session::{start_probes, with_found_cores};

/// One side's samples, per block.
pub(super) type Samples = Vec<Measured>;

/// The one rate `scenario` loads at: a comparison measures at one load, and says so (the
/// command before it opens the live view, and [`compare`] itself).
pub fn fixed_rate(scenario: &Scenario) -> Result<f64, Error> {
    match scenario.load {
        LoadPlan::Fixed(rate) => Ok(rate),
        _ => Err(Error::Usage(
            "vernier compare measures at one load: give --load RATE (a sweep or an SLO search is for vernier run)".into(),
        )),
    }
}

/// What a block's progress line says after it, and whether it completed a pair.
pub(super) struct Shown {
    /// The line so far.
    pub(super) line: String,
    /// When the comparison started.
    pub(super) started: Instant,
    /// Whether the block (or window) completed a pair, after which the CI is looked at.
    pub(super) complete: bool,
}

/// What a look is judged by: A's scenario (its percentile, confidence and width), the
/// comparison's options, and the stopping rule's count of narrow looks.
pub(super) struct Looking<'l> {
    /// A's scenario.
    pub(super) a: &'l Scenario,
    /// How the comparison is run.
    pub(super) options: &'l CompareOptions,
    /// The stopping rule so far.
    pub(super) rule: &'l mut StoppingRule,
}

/// After a block or a window: from the [`MIN_PAIRS_TO_LOOK`]-th complete pair on, a look
/// at the CI of B − A on the pairs `sides` measured; then the progress line shown to
/// `observe`. How the comparison ends there (the rule's stop, or the watcher's), if it
/// does.
pub(super) fn after_pair(
    comparison: &mut Comparison,
    sides: (&Samples, &Samples),
    Looking { a, options, rule }: Looking<'_>,
    Shown {
        mut line,
        started,
        complete,
    }: Shown,
    observe: &mut impl FnMut(&Comparison, &str) -> Steer,
) -> Option<Ending> {
    let looks = complete && sides.0.len().min(sides.1.len()) >= MIN_PAIRS_TO_LOOK;
    comparison.seconds = started.elapsed().as_secs_f64();
    let p = a.ci.percentile.fraction();
    let found = || difference_of(comparison.tail, sides.0, sides.1, p, a.ci.confidence);
    let stop = looks && look(comparison, found(), a, options, rule);
    if looks {
        line += &look_line(comparison);
    }
    comparison.seconds = started.elapsed().as_secs_f64();
    if observe(comparison, &line) == Steer::Stop {
        return Some(Ending::ByWatcher);
    }
    stop.then_some(Ending::ByRule)
}

/// The comparison's other percentiles on the pairs `sides` measured, and its verdict
/// unless a block or a window already gave it.
pub(super) fn finish(
    comparison: &mut Comparison,
    (side_a, side_b): (&Samples, &Samples),
    a: &Scenario,
    options: &CompareOptions,
    ending: Ending,
) {
    let tail = comparison.tail;
    comparison.percentiles = a
        .percentiles
        .iter()
        .filter_map(|q| difference_of(tail, side_a, side_b, q.fraction(), a.ci.confidence).ok())
        .collect();
    if comparison.finding == Finding::Unjudged {
        judge(comparison, options, ending);
    }
}

/// The last look's figures for the progress line (nothing when it found no CI).
pub(super) fn look_line(comparison: &Comparison) -> String {
    match comparison.ci {
        Some(ci) if comparison.finding == Finding::Unjudged => format!(
            "; B − A {:+.1} µs [{:+.1}, {:+.1}], {:.1} µs wide (asked {:.1}) on {} pairs",
            ci.difference,
            ci.low,
            ci.high,
            ci.width(),
            comparison.width_us,
            ci.pairs
        ),
        _ => String::new(),
    }
}

/// What a block measured, for the progress line: the compared tail's percentile, and
/// with the tail without stalls every request's beside it and the share touched.
pub(super) fn block_line(block: &Block, comparison: &Comparison) -> String {
    let mut line = format!(
        "{} block {}: p{} {:.1} µs ({} samples",
        block.side,
        block.pair + 1,
        comparison.percentile,
        block.value_of(comparison.tail),
        block.samples
    );
    if let (Tail::WithoutStalls, Some(touched)) = (comparison.tail, block.touched_share) {
        line += &format!(
            ", {:.1}% touched by a stall; every request's {:.1} µs",
            touched * 100.0,
            block.value_us
        );
    }
    line + ")"
}

/// The CI of B − A at `p` on the pairs both sides have, on `tail`: every request's
/// blocks, or the untouched requests' weighted ones.
pub(super) fn difference_of(
    tail: Tail,
    a: &Samples,
    b: &Samples,
    p: f64,
    confidence: f64,
) -> Result<DifferenceCi, StatsError> {
    match tail {
        Tail::WithStalls => {
            let pairs: Vec<Pair<'_>> = a
                .iter()
                .zip(b)
                .map(|(a, b)| Pair {
                    a: &a.sorted,
                    b: &b.sorted,
                })
                .collect();
            difference_ci(&pairs, p, confidence)
        }
        Tail::WithoutStalls => {
            fn block(m: &Measured) -> Option<WeightedBlock<'_>> {
                m.without_stalls.as_ref().map(|o| WeightedBlock {
                    values: &o.values,
                    weights: &o.weights,
                })
            }
            let pairs: Vec<WeightedPair<'_>> = a
                .iter()
                .zip(b)
                .filter_map(|(a, b)| {
                    Some(WeightedPair {
                        a: block(a)?,
                        b: block(b)?,
                    })
                })
                .collect();
            weighted_difference_ci(&pairs, p, confidence)
        }
    }
}

/// The host probes whose stalls mark a block's requests, beside the workers' own, when A's
/// scenario asks for the tail without stalls (`ci.tail`, the default): on either side's
/// target cores (named, or found as a run finds a pinned local target's), as a run probes
/// them. A probe that cannot start leaves its core to the workers' own watch.
pub(super) fn probes_for(a: &Scenario, b: &Scenario) -> Vec<HostProbe> {
    if a.ci.tail != Tail::WithoutStalls {
        return Vec::new();
    }
    let (mut cores, _) = with_found_cores(a);
    cores
        .target_cpus
        .extend(with_found_cores(b).0.target_cpus.iter().copied());
    start_probes(&cores, &vernier_agent::sys::available_cpus()).0
}

/// A look at the CI of B − A, `found` on the pairs so far, at the comparison's `seconds`:
/// the CI and the look kept in `comparison`; true when the comparison should stop there
/// (the rule says narrow enough, or blocks too short for the percentile, which is then its
/// finding).
pub(super) fn look(
    comparison: &mut Comparison,
    found: Result<DifferenceCi, StatsError>,
    a: &Scenario,
    options: &CompareOptions,
    rule: &mut StoppingRule,
) -> bool {
    match found {
        Ok(ci) => {
            comparison.width_us = a.ci.width.target_us(ci.a).into();
            comparison.ci = Some(ci);
            comparison.looks.push(Look {
                pairs: ci.pairs,
                at_s: comparison.seconds,
                difference: ci.difference,
                low: ci.low,
                high: ci.high,
            });
            rule.stops(&ci, comparison.width_us.get())
        }
        // Blocks too short for the percentile: no honest answer, and why.
        Err(e) => {
            let finding = Finding::BlocksTooShort {
                error: e.to_string(),
                block_s: options.block.as_secs_f64(),
            };
            conclude(comparison, CompareVerdict::NotAvailable, finding);
            true
        }
    }
}

/// A comparison of `a` and `b` at `rate` before its first block: no width until the first
/// look gives A's value to take it from, and N/A until judged.
pub(super) fn unmeasured(a: &Scenario, b: &Scenario, rate: f64, design: Design) -> Comparison {
    Comparison {
        a: a.targets.join(","),
        b: b.targets.join(","),
        rate,
        percentile: a.ci.percentile.percent(),
        tail: Tail::WithStalls,
        width_us: f64::NAN.into(),
        design,
        verdict: CompareVerdict::NotAvailable,
        finding: Finding::Unjudged,
        stopped_after: None,
        reason: String::new(),
        ci: None,
        percentiles: Vec::new(),
        looks: Vec::new(),
        blocks: Vec::new(),
        ccdf_a: Vec::new(),
        ccdf_b: Vec::new(),
        side_by_side: None,
        seconds: 0.0,
    }
}

/// A side's latencies over all its blocks, ns, for its CCDF.
pub(super) fn nanoseconds(side: &Samples) -> Vec<u64> {
    side.iter()
        .flat_map(|m| &m.sorted)
        .map(|&us| (us * 1e3).round() as u64)
        .collect()
}
