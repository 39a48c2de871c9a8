//! The blocks' loop: blocks in the design's order, a look at the CI of B − A after each
//! pair, the stop, and the verdict.

use std::collections::VecDeque;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use vernier_agent::HostProbe;
use vernier_stats::StoppingRule;

use super::block::{self, Measured, Place, TouchedBound};
use super::comparison::{
    Block, CompareOptions, CompareVerdict, Comparison, Design, Finding, Side, Steer,
};
use super::steps::{
    Looking, Samples, Shown, after_pair, block_line, finish, fixed_rate, nanoseconds, probes_for,
    unmeasured,
};
use super::text::render_problem;
use super::verdict::{Ending, conclude};
use crate::coordinator::ReasonKind;
use crate::error::Error;
use crate::report::ccdf_points;
use crate::scenario::{Scenario, Tail};

/// What every block of a comparison is measured with.
struct Bench<'b> {
    /// A's scenario.
    a: &'b Scenario,
    /// B's scenario.
    b: &'b Scenario,
    /// How the comparison is run.
    options: &'b CompareOptions,
    /// The one rate both sides load at.
    rate: f64,
    /// The percentile compared, as a fraction.
    p: f64,
    /// When the comparison started.
    started: Instant,
    /// The host's probes (none unless the tail without stalls is compared).
    probes: Vec<HostProbe>,
}

/// Compares `a` and `b` in blocks (`--design blocks` or `sequential`), as
/// `vernier compare` lays them out.
pub(super) fn in_blocks(
    a: &Scenario,
    b: &Scenario,
    options: &CompareOptions,
    mut observe: impl FnMut(&Comparison, &str) -> Steer,
) -> Result<Comparison, Error> {
    let bench = Bench::new(a, b, options)?;
    let started = bench.started;
    let mut comparison = unmeasured(a, b, bench.rate, options.design);
    // The blocks' workers run in this process and watch their own cores: the tail
    // without stalls needs no probe thread of its own.
    comparison.tail = a.ci.tail;
    let (mut side_a, mut side_b): (Samples, Samples) = (Vec::new(), Vec::new());
    let mut rule = StoppingRule::default();
    let mut ending = Ending::ByRule;
    let mut queue = schedule(options);
    let mut remeasured = 0;
    while let Some((name, pair)) = queue.pop_front() {
        let (samples, measured) = bench.measure(name, pair, &comparison)?;
        let problem = measured.problem;
        let line = block_line(&measured, &comparison);
        let index = comparison.blocks.len();
        comparison.blocks.push(measured);
        // A stall of the host that left the client behind: the block again, right away,
        // so that its pair stays close in time (up to a share of the pairs).
        if let Some(kind) = problem
            && block::measured_again(kind)
            && remeasured < block::remeasures_allowed(options.max_pairs)
        {
            remeasured += 1;
            queue.push_front((name, pair));
            if bench.again(&mut comparison, index, line, &mut observe) == Steer::Stop {
                ending = Ending::ByWatcher;
                break;
            }
            continue;
        }
        add_samples(&mut comparison, (&mut side_a, &mut side_b), name, samples);
        if let Some(kind) = problem {
            let finding = finding_of(kind, index, remeasured);
            bench.give_up(&mut comparison, finding, line, &mut observe);
            break;
        }
        let shown = Shown {
            line,
            started,
            complete: completes_a_pair(name, (&side_a, &side_b)),
        };
        if let Some(end) = after_pair(
            &mut comparison,
            (&side_a, &side_b),
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

impl<'b> Bench<'b> {
    /// What the blocks of `a` and `b` are measured with: the one rate, the percentile, the
    /// comparison's start (now), and the host's probes, started.
    fn new(
        a: &'b Scenario,
        b: &'b Scenario,
        options: &'b CompareOptions,
    ) -> Result<Bench<'b>, Error> {
        let rate = fixed_rate(a)?;
        let p = a.ci.percentile.fraction();
        let started = Instant::now();
        let probes = probes_for(a, b);
        Ok(Bench {
            a,
            b,
            options,
            rate,
            p,
            started,
            probes,
        })
    }

    /// Measures side `name`'s block of `pair`, the comparison's next, and judges it: its
    /// samples, and the block with its problem, if it has one.
    fn measure(
        &self,
        name: Side,
        pair: usize,
        comparison: &Comparison,
    ) -> Result<(Measured, Block), Error> {
        let scenario = match name {
            Side::A => self.a,
            Side::B => self.b,
        };
        let place = Place {
            side: name,
            pair,
            order: comparison.blocks.len(),
            started: self.started,
            probes: (comparison.tail == Tail::WithoutStalls).then_some(&self.probes[..]),
        };
        let (samples, mut measured) =
            block::measure(scenario, place, self.rate, self.p, self.options)?;
        let problem = block::judge(
            &measured,
            self.rate,
            self.a.warmup.tolerance,
            TouchedBound::Held,
        );
        measured.problem = problem;
        Ok((samples, measured))
    }

    /// Shows the block at `index`, to be measured again: its `line`, with why, to
    /// `observe`, whose answer is returned.
    fn again(
        &self,
        comparison: &mut Comparison,
        index: usize,
        mut line: String,
        observe: &mut impl FnMut(&Comparison, &str) -> Steer,
    ) -> Steer {
        let late =
            render_problem(&comparison.blocks[index], self.options.design).unwrap_or_default();
        line += &format!("; {late}: measured again");
        comparison.seconds = self.started.elapsed().as_secs_f64();
        observe(comparison, &line)
    }

    /// Ends the comparison on a block that cannot stand for its side: no verdict, with
    /// `finding`, and its last `line` shown to `observe`.
    fn give_up(
        &self,
        comparison: &mut Comparison,
        finding: Finding,
        mut line: String,
        observe: &mut impl FnMut(&Comparison, &str) -> Steer,
    ) {
        conclude(comparison, CompareVerdict::NotAvailable, finding);
        line += "; the block cannot stand for its side";
        comparison.seconds = self.started.elapsed().as_secs_f64();
        observe(comparison, &line);
    }
}

/// Adds a block's `samples` to its side's (`name`), and draws that side's CCDF again.
fn add_samples(
    comparison: &mut Comparison,
    (side_a, side_b): (&mut Samples, &mut Samples),
    name: Side,
    samples: Measured,
) {
    let (side, ccdf) = match name {
        Side::A => (side_a, &mut comparison.ccdf_a),
        Side::B => (side_b, &mut comparison.ccdf_b),
    };
    side.push(samples);
    *ccdf = ccdf_points(&nanoseconds(side));
}

/// Why the block at `index`, with the problem `kind`, cannot stand for its side: the host
/// stalled too often, for a problem that is measured again; the block's own otherwise.
fn finding_of(kind: ReasonKind, index: usize, remeasured: usize) -> Finding {
    if block::measured_again(kind) {
        Finding::HostStallsTooOften {
            block: index,
            remeasured,
        }
    } else {
        Finding::Block { block: index }
    }
}

/// Whether side `name`'s block just added completed a pair: its side has no more blocks
/// than the other.
fn completes_a_pair(name: Side, (side_a, side_b): (&Samples, &Samples)) -> bool {
    match name {
        Side::A => side_a.len() <= side_b.len(),
        Side::B => side_b.len() <= side_a.len(),
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
