//! `vernier compare`: is B's percentile lower than A's, and by how much. A and B are
//! measured in pairs of short blocks, each pair's order drawn at random, each block a fresh
//! in-process agent with fresh connections (randomized multiple interleaved trials, Abedi &
//! Brecht, ICPE 2017), so that a host whose speed drifts over minutes reaches both alike.
//! After each pair from the [`MIN_PAIRS_TO_LOOK`]-th on, the difference B − A of the
//! percentile gets its CI by sectioning ([`vernier_stats::difference_ci`]), and the
//! comparison stops when the CI has been narrower than asked at two looks in a row
//! ([`vernier_stats::StoppingRule`]); `cargo run --release --example compare_coverage`
//! measures the coverage of both, as they run here.
//!
//! The verdict: `faster` or `slower` when the CI of B − A excludes zero, `no difference`
//! when it lies within ± the width asked, N/A otherwise (the CI still wider than asked when
//! the pairs run out) or when a block measured nothing.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use vernier_stats::{DifferenceCi, Pair, StoppingRule, difference_ci, percentile};

use crate::error::Error;
use crate::load::{resolve, run_load};
use crate::scenario::{LoadPlan, Scenario};

pub use vernier_stats::MIN_PAIRS_TO_LOOK;

/// How a comparison is run.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Each block's measuring time (after the load's own 300 ms warm-up).
    pub block: Duration,
    /// The most pairs of blocks before the verdict.
    pub max_pairs: usize,
    /// The seed of the pairs' orders.
    pub seed: u64,
}

/// What one block measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// `"A"` or `"B"`.
    pub side: &'static str,
    /// The pair it belongs to, from 0.
    pub pair: usize,
    /// Its place in time, from 0.
    pub order: usize,
    /// Requests answered and kept (every one).
    pub samples: usize,
    /// The block's percentile, µs.
    pub value_us: f64,
    /// The p99 of how late its requests left against their schedule, µs.
    pub send_lag_p99_us: f64,
    /// Requests that failed or timed out.
    pub failed: u64,
}

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareVerdict {
    /// B's percentile is lower than A's: the CI of B − A lies below zero.
    Faster,
    /// B's percentile is higher: the CI lies above zero.
    Slower,
    /// The CI holds zero and lies within ± the width asked.
    NoDifference,
    /// No honest answer (see the reason).
    #[serde(rename = "n/a")]
    NotAvailable,
}

impl CompareVerdict {
    /// As tables write it.
    pub fn text(self) -> &'static str {
        match self {
            CompareVerdict::Faster => "faster",
            CompareVerdict::Slower => "slower",
            CompareVerdict::NoDifference => "no difference",
            CompareVerdict::NotAvailable => "n/a",
        }
    }
}

/// A finished comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// A's target.
    pub a: String,
    /// B's target.
    pub b: String,
    /// The load, req/s.
    pub rate: f64,
    /// The percentile compared, in percent.
    pub percentile: f64,
    /// The widest CI of B − A asked for, µs (from the scenario's width, of A's value when
    /// relative).
    pub width_us: f64,
    /// The verdict.
    pub verdict: CompareVerdict,
    /// Why, in a sentence.
    pub reason: String,
    /// The difference and ratio with their CIs (none before enough pairs).
    pub ci: Option<DifferenceCi>,
    /// The same at the scenario's other reported percentiles, on the same pairs (the
    /// stop was decided on the compared one).
    pub percentiles: Vec<DifferenceCi>,
    /// Every block, in the order measured.
    pub blocks: Vec<Block>,
    /// The comparison's time, seconds.
    pub seconds: f64,
}

/// One side's samples, per pair, sorted, µs.
type Side = Vec<Vec<f64>>;

/// Compares `a` and `b` at the load and percentile `a` asks for (B's scenario gives only
/// its target and workload; the load, CI and width are A's), saying each pair's progress
/// through `say`.
pub fn compare(
    a: &Scenario,
    b: &Scenario,
    options: &CompareOptions,
    mut say: impl FnMut(String),
) -> Result<Comparison, Error> {
    let LoadPlan::Fixed(rate) = a.load else {
        return Err(Error::Usage(
            "vernier compare measures at one load: give --load RATE (a sweep or an SLO search is for vernier run)".into(),
        ));
    };
    let p = a.ci.percentile.fraction();
    let started = Instant::now();
    let mut rng = SmallRng::seed_from_u64(options.seed);
    let (mut side_a, mut side_b): (Side, Side) = (Vec::new(), Vec::new());
    let mut comparison = Comparison {
        a: a.targets.join(","),
        b: b.targets.join(","),
        rate,
        percentile: a.ci.percentile.percent(),
        width_us: f64::NAN,
        verdict: CompareVerdict::NotAvailable,
        reason: String::new(),
        ci: None,
        percentiles: Vec::new(),
        blocks: Vec::new(),
        seconds: 0.0,
    };
    let mut rule = StoppingRule::default();
    for pair in 0..options.max_pairs {
        let b_first = rng.random::<bool>();
        let order = if b_first {
            [(b, "B"), (a, "A")]
        } else {
            [(a, "A"), (b, "B")]
        };
        for (scenario, name) in order {
            let (samples, block) =
                measure_block(scenario, name, pair, rate, p, options, &comparison.blocks)?;
            if samples.is_empty() {
                comparison.reason = format!(
                    "{name}'s block {} measured nothing at {rate:.0} req/s ({} failed): is {} answering?",
                    pair + 1,
                    block.failed,
                    scenario.targets.join(",")
                );
                comparison.blocks.push(block);
                comparison.seconds = started.elapsed().as_secs_f64();
                return Ok(comparison);
            }
            comparison.blocks.push(block);
            if name == "A" {
                side_a.push(samples)
            } else {
                side_b.push(samples)
            }
        }
        if pair + 1 < MIN_PAIRS_TO_LOOK {
            say(format!(
                "pair {}: {}",
                pair + 1,
                last_pair(&comparison.blocks)
            ));
            continue;
        }
        let pairs: Vec<Pair<'_>> = side_a
            .iter()
            .zip(&side_b)
            .map(|(a, b)| Pair { a, b })
            .collect();
        let ci = match difference_ci(&pairs, p, a.ci.confidence) {
            Ok(ci) => ci,
            // Blocks too short for the percentile: no honest answer, and why.
            Err(e) => {
                comparison.reason = format!(
                    "{e}: each block of {:.1} s at {rate:.0} req/s holds too few requests for p{}; a longer --block would",
                    options.block.as_secs_f64(),
                    comparison.percentile
                );
                comparison.seconds = started.elapsed().as_secs_f64();
                return Ok(comparison);
            }
        };
        comparison.width_us = a.ci.width.target_us(ci.a);
        comparison.ci = Some(ci);
        say(format!(
            "pair {}: {}; B − A {:+.1} µs [{:+.1}, {:+.1}], {:.1} µs wide (asked {:.1})",
            pair + 1,
            last_pair(&comparison.blocks),
            ci.difference,
            ci.low,
            ci.high,
            ci.width(),
            comparison.width_us
        ));
        if rule.stops(&ci, comparison.width_us) {
            break;
        }
    }
    comparison.seconds = started.elapsed().as_secs_f64();
    let pairs: Vec<Pair<'_>> = side_a
        .iter()
        .zip(&side_b)
        .map(|(a, b)| Pair { a, b })
        .collect();
    comparison.percentiles = a
        .percentiles
        .iter()
        .filter_map(|q| difference_ci(&pairs, q.fraction(), a.ci.confidence).ok())
        .collect();
    judge(&mut comparison, options);
    Ok(comparison)
}

/// One block of `scenario` at `rate`: its samples sorted (µs), and what it measured.
fn measure_block(
    scenario: &Scenario,
    side: &'static str,
    pair: usize,
    rate: f64,
    p: f64,
    options: &CompareOptions,
    before: &[Block],
) -> Result<(Vec<f64>, Block), Error> {
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
        .wrapping_add((before.len() as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let window = run_load(spec, rate, options.block, 1.0, true)
        .map_err(|e| Error::Failed(format!("{side}'s block {}: {e}", pair + 1)))?;
    let mut samples: Vec<f64> = window
        .samples
        .iter()
        .map(|&(_, ns, _)| ns as f64 / 1e3)
        .collect();
    samples.sort_unstable_by(f64::total_cmp);
    let block = Block {
        side,
        pair,
        order: before.len(),
        samples: samples.len(),
        value_us: percentile(&samples, p).unwrap_or(f64::NAN),
        send_lag_p99_us: window.send_lag.value_at_quantile(0.99) as f64 / 1e3,
        failed: window.counters.failed + window.counters.timeouts,
    };
    Ok((samples, block))
}

/// The last pair's two blocks, for the progress line.
fn last_pair(blocks: &[Block]) -> String {
    blocks[blocks.len().saturating_sub(2)..]
        .iter()
        .map(|b| format!("{} {:.1} µs ({} samples)", b.side, b.value_us, b.samples))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The verdict of a comparison whose pairs are measured.
fn judge(comparison: &mut Comparison, options: &CompareOptions) {
    let Some(ci) = comparison.ci else {
        comparison.reason = format!(
            "fewer than {MIN_PAIRS_TO_LOOK} pairs of blocks were measured (--pairs {})",
            options.max_pairs
        );
        return;
    };
    let w = comparison.width_us;
    let pairs = ci.pairs as f64;
    let ratio = format!(
        "B / A {:.3} [{:.3}, {:.3}]",
        ci.ratio, ci.ratio_low, ci.ratio_high
    );
    let (verdict, reason) = if ci.high < 0.0 || ci.low > 0.0 {
        let (verdict, word) = if ci.high < 0.0 {
            (CompareVerdict::Faster, "lower")
        } else {
            (CompareVerdict::Slower, "higher")
        };
        (
            verdict,
            format!(
                "B's p{} is {word} than A's by {:.1} µs [{:.1}, {:.1}] ({ratio}), over {} pairs",
                comparison.percentile,
                ci.difference.abs(),
                ci.low.abs().min(ci.high.abs()),
                ci.low.abs().max(ci.high.abs()),
                ci.pairs
            ),
        )
    } else if ci.low >= -w && ci.high <= w {
        (
            CompareVerdict::NoDifference,
            format!(
                "no difference larger than {w:.1} µs: B − A {:+.1} µs [{:+.1}, {:+.1}] ({ratio}), over {} pairs",
                ci.difference, ci.low, ci.high, ci.pairs
            ),
        )
    } else {
        // The CI narrows as 1/√pairs: the pairs its width asks for.
        let needed = (pairs * (ci.width() / w).powi(2)).ceil();
        let per_pair = comparison.seconds / pairs;
        (
            CompareVerdict::NotAvailable,
            format!(
                "the CI of B − A, {:+.1} µs [{:+.1}, {:+.1}], holds zero and is {:.1} µs wide after {} pairs, where {w:.1} µs was asked: about {needed:.0} pairs would do ({:.0} s more at {per_pair:.1} s a pair; --pairs)",
                ci.difference,
                ci.low,
                ci.high,
                ci.width(),
                ci.pairs,
                (needed - pairs).max(0.0) * per_pair
            ) + &spread(&comparison.blocks),
        )
    };
    comparison.verdict = verdict;
    comparison.reason = reason;
}

/// How far each side's blocks spread, for an N/A whose CI stayed wide: `; the blocks'
/// p99 ranged 410.2-5872.5 µs (A) and 395.0-6011.0 µs (B)`, or nothing without blocks.
fn spread(blocks: &[Block]) -> String {
    let range = |side: &str| {
        let values = blocks.iter().filter(|b| b.side == side).map(|b| b.value_us);
        let lo = values.clone().fold(f64::INFINITY, f64::min);
        let hi = values.fold(f64::NEG_INFINITY, f64::max);
        (lo.is_finite() && hi.is_finite()).then(|| format!("{lo:.1}-{hi:.1} µs ({side})"))
    };
    match (range("A"), range("B")) {
        (Some(a), Some(b)) => format!("; the blocks' values ranged {a} and {b}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests;
