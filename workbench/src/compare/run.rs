//! The comparison's loop: blocks in the design's order, a look at the CI of B − A after
//! each pair, the stop, and the verdict.

use std::collections::VecDeque;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use vernier_agent::HostProbe;
use vernier_stats::{
    DifferenceCi, MIN_PAIRS_TO_LOOK, Pair, StatsError, StoppingRule, WeightedBlock, WeightedPair,
    difference_ci, weighted_difference_ci,
};

use super::block::{self, Measured, Place};
use super::comparison::{
    Block, CompareOptions, CompareVerdict, Comparison, Design, Finding, Look, Side, Steer,
};
use super::text::render_problem;
use super::verdict::{Ending, conclude, judge};
use crate::coordinator::policy::MAX_TOUCHED_SHARE;
use crate::error::Error;
use crate::report::ccdf_points;
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

/// Compares `a` and `b` at the load and percentile `a` asks for (B's scenario gives only
/// its target and workload; the load, CI and width are A's). After every block `observe`
/// is shown the comparison so far and a line saying what the block measured (and the look
/// that followed it); it answers [`Steer::Stop`] to end the comparison there, with the
/// verdict on the pairs measured. A watcher that pauses the comparison simply returns
/// later: nothing is measured while it holds the call.
pub fn compare(
    a: &Scenario,
    b: &Scenario,
    options: &CompareOptions,
    mut observe: impl FnMut(&Comparison, &str) -> Steer,
) -> Result<Comparison, Error> {
    if options.design == Design::Duet {
        return super::duet::compare(a, b, options, observe);
    }
    let rate = fixed_rate(a)?;
    let p = a.ci.percentile.fraction();
    let started = Instant::now();
    let probes = probes_for(a, b);
    let mut comparison = unmeasured(a, b, rate, options.design);
    // The blocks' workers run in this process and watch their own cores: the tail
    // without stalls needs no probe thread of its own.
    comparison.tail = a.ci.tail;
    let (mut side_a, mut side_b): (Samples, Samples) = (Vec::new(), Vec::new());
    let mut rule = StoppingRule::default();
    let mut ending = Ending::ByRule;
    let mut queue = schedule(options);
    let mut remeasured = 0;
    while let Some((name, pair)) = queue.pop_front() {
        let scenario = match name {
            Side::A => a,
            Side::B => b,
        };
        let place = Place {
            side: name,
            pair,
            order: comparison.blocks.len(),
            started,
            probes: (comparison.tail == Tail::WithoutStalls).then_some(&probes[..]),
        };
        let (samples, mut measured) = block::measure(scenario, place, rate, p, options)?;
        let problem = block::judge(&measured, rate, a.warmup.tolerance, Some(MAX_TOUCHED_SHARE));
        measured.problem = problem;
        let mut line = block_line(&measured, &comparison);
        // A stall of the host that left the client behind: the block again, right away,
        // so that its pair stays close in time (up to a share of the pairs).
        let index = comparison.blocks.len();
        comparison.blocks.push(measured);
        if let Some(kind) = problem
            && block::measured_again(kind)
            && remeasured < block::remeasures_allowed(options.max_pairs)
        {
            remeasured += 1;
            queue.push_front((name, pair));
            let late =
                render_problem(&comparison.blocks[index], options.design).unwrap_or_default();
            line += &format!("; {late}: measured again");
            comparison.seconds = started.elapsed().as_secs_f64();
            if observe(&comparison, &line) == Steer::Stop {
                ending = Ending::ByWatcher;
                break;
            }
            continue;
        }
        let (side, ccdf) = match name {
            Side::A => (&mut side_a, &mut comparison.ccdf_a),
            Side::B => (&mut side_b, &mut comparison.ccdf_b),
        };
        side.push(samples);
        *ccdf = ccdf_points(&nanoseconds(side));
        if let Some(kind) = problem {
            let finding = if block::measured_again(kind) {
                Finding::HostStallsTooOften {
                    block: index,
                    remeasured,
                }
            } else {
                Finding::Block { block: index }
            };
            conclude(&mut comparison, CompareVerdict::NotAvailable, finding);
            line += "; the block cannot stand for its side";
            comparison.seconds = started.elapsed().as_secs_f64();
            observe(&comparison, &line);
            break;
        }
        let completes_a_pair = match name {
            Side::A => side_a.len() <= side_b.len(),
            Side::B => side_b.len() <= side_a.len(),
        };
        let sides = (&side_a, &side_b);
        let shown = Shown {
            line,
            started,
            complete: completes_a_pair,
        };
        if let Some(end) = after_pair(
            &mut comparison,
            sides,
            a,
            options,
            &mut rule,
            shown,
            &mut observe,
        ) {
            ending = end;
            break;
        }
    }
    comparison.seconds = started.elapsed().as_secs_f64();
    finish(&mut comparison, (&side_a, &side_b), a, options, ending);
    Ok(comparison)
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

/// After a block or a window: from the [`MIN_PAIRS_TO_LOOK`]-th complete pair on, a look
/// at the CI of B − A on the pairs `sides` measured; then the progress line shown to
/// `observe`. How the comparison ends there (the rule's stop, or the watcher's), if it
/// does.
pub(super) fn after_pair(
    comparison: &mut Comparison,
    sides: (&Samples, &Samples),
    a: &Scenario,
    options: &CompareOptions,
    rule: &mut StoppingRule,
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
                m.own.as_ref().map(|o| WeightedBlock {
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
            comparison.width_us = a.ci.width.target_us(ci.a);
            comparison.ci = Some(ci);
            comparison.looks.push(Look {
                pairs: ci.pairs,
                at_s: comparison.seconds,
                difference: ci.difference,
                low: ci.low,
                high: ci.high,
            });
            rule.stops(&ci, comparison.width_us)
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
        width_us: f64::NAN,
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

/// The blocks in the order measured: (side, pair). Interleaved, each pair's order drawn
/// from the seed; sequential, every A then every B; a duet, none.
pub(super) fn schedule(options: &CompareOptions) -> VecDeque<(Side, usize)> {
    let n = options.max_pairs;
    match options.design {
        Design::Blocks => {
            let mut rng = SmallRng::seed_from_u64(options.seed);
            (0..n)
                .flat_map(|pair| {
                    if rng.random::<bool>() {
                        [(Side::B, pair), (Side::A, pair)]
                    } else {
                        [(Side::A, pair), (Side::B, pair)]
                    }
                })
                .collect()
        }
        Design::Sequential => (0..n)
            .map(|pair| (Side::A, pair))
            .chain((0..n).map(|pair| (Side::B, pair)))
            .collect(),
        // A duet measures both at once: no blocks to order.
        Design::Duet => VecDeque::new(),
    }
}

/// A side's latencies over all its blocks, ns, for its CCDF.
pub(super) fn nanoseconds(side: &Samples) -> Vec<u64> {
    side.iter()
        .flat_map(|m| &m.sorted)
        .map(|&us| (us * 1e3).round() as u64)
        .collect()
}
