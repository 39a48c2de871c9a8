//! The blocks' loop: blocks in the design's order, a look at the CI of B − A after each
//! pair, the stop, and the verdict.

use std::collections::VecDeque;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use vernier_stats::StoppingRule;

use super::block::{self, Place, TouchedBound};
use super::comparison::{CompareOptions, CompareVerdict, Comparison, Design, Finding, Side, Steer};
use super::steps::{
    Looking, Samples, Shown, after_pair, block_line, finish, fixed_rate, nanoseconds, probes_for,
    unmeasured,
};
use super::text::render_problem;
use super::verdict::{Ending, conclude};
use crate::error::Error;
use crate::report::ccdf_points;
use crate::scenario::{Scenario, Tail};

/// Compares `a` and `b` in blocks (`--design blocks` or `sequential`), as
/// `vernier compare` lays them out.
pub(super) fn in_blocks(
    a: &Scenario,
    b: &Scenario,
    options: &CompareOptions,
    mut observe: impl FnMut(&Comparison, &str) -> Steer,
) -> Result<Comparison, Error> {
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
        let problem = block::judge(&measured, rate, a.warmup.tolerance, TouchedBound::Held);
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
            Looking {
                a,
                options,
                rule: &mut rule,
            },
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
