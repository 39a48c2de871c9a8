//! Is B's percentile lower than A's, and by how much: the difference and the ratio of a
//! percentile between two systems measured in interleaved blocks, with a CI valid under
//! the dependence within each block and a drift of the host shared by both.
//!
//! The two systems are measured in pairs of blocks, one block of each, their order within
//! each pair drawn at random, the pairs one after another (randomized multiple interleaved
//! trials: Abedi & Brecht, "Conducting Repeatable Experiments in Highly Variable Cloud
//! Computing Environments", ICPE 2017). A slow change of the host's speed then reaches
//! both systems alike, and a pair's difference carries little of it.
//!
//! The interval is by *sectioning* (Asmussen & Glynn, *Stochastic Simulation*, 2007,
//! §III.5a; for quantiles, Nakayama, "Confidence intervals for quantiles using sectioning
//! when applying variance-reduction techniques", ACM TOMACS 24(4), 2014): the estimate is
//! the difference of the two pooled percentiles (every sample of A against every sample
//! of B), and its standard error comes from the spread of the pairs' own differences
//! around it, with Student's t on pairs − 1 degrees of freedom. Each pair is a section:
//! its blocks are long against the latencies' correlation, and fresh connections start
//! each block, so the pairs are close to independent, and a block's percentile is close to
//! normal (Bahadur) whatever the dependence inside it. Centring on the pooled estimate
//! rather than on the mean of the pairs' (plain batching) keeps out the small-sample bias
//! of a percentile taken from one block (of order 1/m at block size m), which the mean of
//! the pairs keeps however many pairs there are. The two-sample binomial intervals (Eaton,
//! Moore & MacKenzie, *Earth Surface Processes and Landforms* 44(2), 2019) and the
//! likelihood-ratio ones assume independent samples, which a queue's latencies are not.
//!
//! The ratio B / A has its interval the same way on the logarithm of the ratio, so that it
//! stays positive and its two sides are those of a factor.

use serde::{Deserialize, Serialize};

use crate::dependent::t_quantile;
use crate::error::{StatsError, check_finite};
use crate::percentile::{check_fraction, percentile};
use crate::weighted::WeightedSamples;

/// The fewest pairs of blocks an interval is built on: with fewer, Student's t on one
/// degree of freedom makes the interval ±12.7 standard errors wide.
pub const MIN_PAIRS: usize = 3;

/// Pairs measured before a comparison first looks at its interval to stop on it: the
/// pairs' spread estimated on fewer is itself too noisy to stop on (Student's t on 4
/// degrees of freedom is 2.78). `vernier compare` and its coverage harness both use it.
pub const MIN_PAIRS_TO_LOOK: usize = 5;

/// Narrow looks in a row a comparison stops on: the first interval narrower than asked is,
/// more often than its level says, one whose pairs happened to spread little. Stopping on
/// the first, the p99's coverage under stopping was 0.897 on a drifting host and a false
/// difference was called 7.2% of the time; on a second in a row, 0.932 and at most 6.0%
/// (400 replications, `cargo run --release --example compare_coverage -- pairs=30`).
pub const NARROW_LOOKS_TO_STOP: usize = 2;

/// `vernier compare`'s stopping rule, the one its coverage harness runs: look after every
/// pair from [`MIN_PAIRS_TO_LOOK`] on, stop after [`NARROW_LOOKS_TO_STOP`] narrow looks in
/// a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoppingRule {
    narrow_in_a_row: usize,
}

impl StoppingRule {
    /// Whether the comparison stops at this look, whose interval `ci` is to be at most
    /// `asked` wide.
    pub fn stops(&mut self, ci: &DifferenceCi, asked: f64) -> bool {
        if ci.width() <= asked {
            self.narrow_in_a_row += 1;
        } else {
            self.narrow_in_a_row = 0;
        }
        self.narrow_in_a_row >= NARROW_LOOKS_TO_STOP
    }
}

/// The fewest samples beyond the percentile in every block: with fewer, a block's
/// percentile is one or two samples' and far from normal.
pub const MIN_TAIL_PER_BLOCK: f64 = 10.0;

/// The difference B − A and the ratio B / A of one percentile, with their intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DifferenceCi {
    /// The percentile, as a fraction.
    pub p: f64,
    /// The confidence level.
    pub confidence: f64,
    /// Pairs of blocks.
    pub pairs: usize,
    /// A's percentile over all its blocks.
    pub a: f64,
    /// B's percentile over all its blocks.
    pub b: f64,
    /// B − A, from the pooled percentiles.
    pub difference: f64,
    /// The difference's standard error, from the pairs' spread.
    pub std_error: f64,
    /// The interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// B / A, from the pooled percentiles (`NaN` when either is not positive).
    pub ratio: f64,
    /// The ratio's interval's low end.
    pub ratio_low: f64,
    /// Its high end.
    pub ratio_high: f64,
}

impl DifferenceCi {
    /// Whether the interval of B − A holds `d`.
    pub fn holds(&self, d: f64) -> bool {
        self.low <= d && d <= self.high
    }

    /// The interval's width.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// One pair of blocks: A's samples and B's, each ascending-sorted.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    /// A's block, sorted.
    pub a: &'a [f64],
    /// B's block, sorted.
    pub b: &'a [f64],
}

/// The `confidence` interval of B − A (and of B / A) at percentile `p` from `pairs` of
/// blocks measured in turn, by sectioning (see the module's documentation).
///
/// Needs at least [`MIN_PAIRS`] pairs, each block with at least [`MIN_TAIL_PER_BLOCK`]
/// samples beyond `p` on the side of the nearer end, and finite samples, sorted.
pub fn difference_ci(
    pairs: &[Pair<'_>],
    p: f64,
    confidence: f64,
) -> Result<DifferenceCi, StatsError> {
    let least = checked(p, confidence, pairs.len())?;
    let mut sections = Vec::with_capacity(pairs.len());
    for pair in pairs {
        for block in [pair.a, pair.b] {
            check_finite(block)?;
            check_block(block.len(), least)?;
        }
        let (a, b) = (percentile(pair.a, p), percentile(pair.b, p));
        sections.push((a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)));
    }
    let a = pooled(pairs.iter().map(|pair| pair.a), p);
    let b = pooled(pairs.iter().map(|pair| pair.b), p);
    Ok(sectioned(&sections, (a, b), p, confidence))
}

/// One block of weighted samples (the tail without stalls: the requests no stall
/// touched, each weighted against the selection): its values in any order, and a
/// positive weight each, scaled so that the weights sum to the requests the block stands
/// for (so that pooled blocks count by what they measured, not by what the stalls left).
#[derive(Debug, Clone, Copy)]
pub struct WeightedBlock<'a> {
    /// The values.
    pub values: &'a [f64],
    /// One weight per value.
    pub weights: &'a [f64],
}

/// One pair of weighted blocks.
#[derive(Debug, Clone, Copy)]
pub struct WeightedPair<'a> {
    /// A's block.
    pub a: WeightedBlock<'a>,
    /// B's block.
    pub b: WeightedBlock<'a>,
}

/// [`difference_ci`] of weighted blocks: each block's percentile and the pooled ones are
/// the weighted percentiles ([`WeightedSamples`]); the sectioning is the same. Needs the
/// same pairs and the same samples per block (counted unweighted) as [`difference_ci`],
/// and one positive, finite weight per value.
pub fn weighted_difference_ci(
    pairs: &[WeightedPair<'_>],
    p: f64,
    confidence: f64,
) -> Result<DifferenceCi, StatsError> {
    let least = checked(p, confidence, pairs.len())?;
    let mut sections = Vec::with_capacity(pairs.len());
    let (mut all_a, mut all_b) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    for pair in pairs {
        let mut values = [f64::NAN; 2];
        for (i, (block, all)) in [(pair.a, &mut all_a), (pair.b, &mut all_b)]
            .into_iter()
            .enumerate()
        {
            check_block(block.values.len(), least)?;
            let samples = WeightedSamples::new(block.values.to_vec(), block.weights)?;
            values[i] = samples.percentile(p).unwrap_or(f64::NAN);
            all.0.extend_from_slice(block.values);
            all.1.extend_from_slice(block.weights);
        }
        sections.push((values[0], values[1]));
    }
    let pooled = |(values, weights): (Vec<f64>, Vec<f64>)| {
        WeightedSamples::new(values, &weights).map(|s| s.percentile(p).unwrap_or(f64::NAN))
    };
    let (a, b) = (pooled(all_a)?, pooled(all_b)?);
    Ok(sectioned(&sections, (a, b), p, confidence))
}

/// Refuses a `p` or `confidence` outside (0, 1), or fewer than [`MIN_PAIRS`] pairs; the
/// fewest samples a block needs for `p` otherwise ([`MIN_TAIL_PER_BLOCK`] beyond it).
fn checked(p: f64, confidence: f64, pairs: usize) -> Result<usize, StatsError> {
    check_fraction("p", p)?;
    check_fraction("confidence", confidence)?;
    if pairs < MIN_PAIRS {
        return Err(StatsError::TooFew {
            test: "a CI of a difference from pairs of blocks",
            needed: MIN_PAIRS,
            got: pairs,
        });
    }
    Ok((MIN_TAIL_PER_BLOCK / p.min(1.0 - p)).ceil() as usize)
}

/// Refuses a block of `len` samples when `least` are needed.
fn check_block(len: usize, least: usize) -> Result<(), StatsError> {
    if len < least {
        return Err(StatsError::TooFew {
            test: "a block's percentile in a comparison",
            needed: least,
            got: len,
        });
    }
    Ok(())
}

/// The interval by sectioning: centred on the pooled `(a, b)`, its standard error from
/// the spread of the `sections`' (pairs') own differences around it.
fn sectioned(sections: &[(f64, f64)], (a, b): (f64, f64), p: f64, confidence: f64) -> DifferenceCi {
    let difference = b - a;
    let n = sections.len();
    let t = t_quantile(confidence, n - 1);
    let spread = |centre: f64, values: &mut dyn Iterator<Item = f64>| {
        let sum: f64 = values.map(|v| (v - centre).powi(2)).sum();
        (sum / (n - 1) as f64).sqrt() / (n as f64).sqrt()
    };
    let std_error = spread(difference, &mut sections.iter().map(|(a, b)| b - a));
    let half = t * std_error;
    let (ratio, ratio_low, ratio_high) =
        if a > 0.0 && b > 0.0 && sections.iter().all(|&(a, b)| a > 0.0 && b > 0.0) {
            let log_ratio = (b / a).ln();
            let se = spread(log_ratio, &mut sections.iter().map(|(a, b)| (b / a).ln()));
            (
                b / a,
                (log_ratio - t * se).exp(),
                (log_ratio + t * se).exp(),
            )
        } else {
            (f64::NAN, f64::NAN, f64::NAN)
        };
    DifferenceCi {
        p,
        confidence,
        pairs: n,
        a,
        b,
        difference,
        std_error,
        low: difference - half,
        high: difference + half,
        ratio,
        ratio_low,
        ratio_high,
    }
}

/// The percentile `p` of every block together (each sorted): their merge, sorted.
fn pooled<'a>(blocks: impl Iterator<Item = &'a [f64]>, p: f64) -> f64 {
    let mut all: Vec<f64> = blocks.flatten().copied().collect();
    all.sort_unstable_by(f64::total_cmp);
    percentile(&all, p).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests;
