//! Whether a series drifts: a slow change of level that the dependence-valid interval takes
//! for dependence, and whose percentile is then that of the mixture the run happened to hold.
//!
//! The estimator is the batch-means variance of the percentile's indicator as a function of
//! the batch size, over the binomial variance: the variance inflation VIF(m) that
//! [`crate::percentile_ci_dependent`] takes at one batch size, here at every doubling of it
//! (the non-overlapping batch-means variance plot; Schmeiser, Operations Research 30(3),
//! 1982; the variance-time plot of Leland, Taqqu, Willinger & Wilson, IEEE/ACM Transactions
//! on Networking 2(1), 1994). For a stationary series with short memory, VIF(m) levels off
//! at the integrated autocorrelation of the indicator once m is past the correlation's
//! reach, which is why batch means are consistent when the batches grow (Glynn & Whitt,
//! Operations Research Letters 10(8), 1991). A level that shifts over a period longer than
//! the batches adds to every batch count a share that does not average out within the
//! batch, so its variance grows as m² and VIF(m) as m: the plot keeps climbing.
//!
//! The percentile over consecutive windows of the series says by how much the level moves,
//! and where.

use serde::Serialize;

use crate::dependent::{TAIL_PER_BATCH, batch_inflation};
use crate::error::{StatsError, check_finite};
use crate::percentile::percentile;

/// The fewest batches a point of the plot rests on: the variance of 20 batch counts is known
/// to about ±32% (√(2/19)), enough to tell a level from a fourfold climb.
pub const DRIFT_MIN_BATCHES: usize = 20;
/// Doublings of the batch size the climb is measured over, ending at the largest batch size
/// that leaves [`DRIFT_MIN_BATCHES`] batches.
pub const DRIFT_DOUBLINGS: u32 = 3;
/// The growth of VIF over [`DRIFT_DOUBLINGS`] doublings (eightfold batches) that names a
/// drift. A linear climb multiplies it by up to 8; a stationary series levels off at 1, and
/// the noise of the ratio of a 20-batch estimate to a 160-batch one is about ±35% (one
/// standard deviation of its logarithm), so 3 is more than three of them above a level
/// plot. A queue whose correlation reaches past the smallest of the batches still climbs a
/// little (M/M/1 at ρ = 0.9: 289 at 2,000 samples, 344 at 64,000, dependent.rs), far below 3.
pub const DRIFT_GROWTH: f64 = 3.0;

/// The variance inflation at one batch size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InflationAt {
    /// Samples per batch.
    pub batch_size: usize,
    /// Batches.
    pub batches: usize,
    /// The batch counts' variance over the binomial one (before any adjustment for the
    /// correlation left between batches).
    pub inflation: f64,
}

/// The percentile of one window of the series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WindowValue {
    /// The window's index, from 0 at the start of the series.
    pub window: usize,
    /// The percentile over that window.
    pub value: f64,
}

/// What the plot says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum DriftVerdict {
    /// VIF kept growing with the batch size: grew this much over the last eightfold batches.
    Drifting {
        /// VIF at the largest batch over VIF at an eighth of it.
        growth: f64,
    },
    /// VIF levelled off.
    Steady {
        /// VIF at the largest batch over VIF at an eighth of it.
        growth: f64,
    },
    /// Too few samples for [`DRIFT_DOUBLINGS`] doublings above the smallest batch with
    /// [`DRIFT_MIN_BATCHES`] batches left.
    TooShort,
}

/// Whether a series drifts at one percentile ([`drift`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// The percentile, as a fraction.
    pub p: f64,
    /// VIF at each batch size, doubling from the smallest that holds one tail sample per
    /// batch on average, while [`DRIFT_MIN_BATCHES`] batches remain.
    pub plot: Vec<InflationAt>,
    /// What the plot says.
    pub verdict: DriftVerdict,
    /// Samples per window.
    pub window_size: usize,
    /// The window of the lowest percentile.
    pub low: WindowValue,
    /// The window of the highest percentile.
    pub high: WindowValue,
}

/// Whether `series` (in the order produced) drifts at the `p`-th percentile: the
/// non-overlapping batch-means variance plot of its indicator (see the module), and the
/// percentile (Hyndman-Fan type 7) over `windows` consecutive windows of equal size (the
/// remainder joins the last).
pub fn drift(series: &[f64], p: f64, windows: usize) -> Result<Drift, StatsError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(StatsError::InvalidParameter {
            name: "percentile",
            value: p,
            expected: "a fraction strictly between 0 and 1",
        });
    }
    let n = series.len();
    if windows == 0 || windows > n {
        return Err(StatsError::InvalidParameter {
            name: "windows",
            value: windows as f64,
            expected: "at least 1 and at most the samples",
        });
    }
    check_finite(series)?;
    let mut sorted = series.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let q = percentile(&sorted, p).ok_or(StatsError::TooFew {
        test: "drift",
        needed: 1,
        got: 0,
    })?;
    let tail = p.min(1.0 - p);
    let mut m = (TAIL_PER_BATCH / tail).ceil() as usize;
    let mut plot = Vec::new();
    while m > 0 && n / m >= DRIFT_MIN_BATCHES {
        let counts: Vec<f64> = series
            .chunks_exact(m)
            .map(|c| c.iter().filter(|&&x| x <= q).count() as f64)
            .collect();
        plot.push(InflationAt {
            batch_size: m,
            batches: counts.len(),
            inflation: batch_inflation(&counts, m),
        });
        m *= 2;
    }
    let verdict = judge(&plot);
    let window_size = n / windows;
    let values: Vec<f64> = (0..windows)
        .map(|w| {
            let end = if w + 1 == windows {
                n
            } else {
                (w + 1) * window_size
            };
            let mut part = series[w * window_size..end].to_vec();
            part.sort_unstable_by(f64::total_cmp);
            percentile(&part, p).unwrap_or(f64::NAN)
        })
        .collect();
    let pick = |better: fn(f64, f64) -> bool| {
        values.iter().enumerate().fold(
            WindowValue {
                window: 0,
                value: values[0],
            },
            |best, (window, &value)| {
                if better(value, best.value) {
                    WindowValue { window, value }
                } else {
                    best
                }
            },
        )
    };
    Ok(Drift {
        p,
        plot,
        verdict,
        window_size,
        low: pick(|a, b| a < b),
        high: pick(|a, b| a > b),
    })
}

/// The verdict of a plot: the growth of VIF over its last [`DRIFT_DOUBLINGS`] doublings
/// against [`DRIFT_GROWTH`].
fn judge(plot: &[InflationAt]) -> DriftVerdict {
    let back = DRIFT_DOUBLINGS as usize;
    let (Some(last), Some(before)) = (
        plot.last(),
        plot.len().checked_sub(back + 1).and_then(|i| plot.get(i)),
    ) else {
        return DriftVerdict::TooShort;
    };
    let growth = last.inflation / before.inflation.max(f64::MIN_POSITIVE);
    if growth >= DRIFT_GROWTH {
        DriftVerdict::Drifting { growth }
    } else {
        DriftVerdict::Steady { growth }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dependent::tests::exp_series;

    /// M/M/1 sojourn times at load `rho` (service rate 1) by Lindley's recursion from an
    /// empty queue, from the fixed exponential streams of `seed`.
    fn mm1(seed: u64, n: usize, rho: f64) -> Vec<f64> {
        let service = exp_series(seed, n);
        let gaps = exp_series(seed ^ 0x00A1_1CE5, n);
        let mut wait = 0.0;
        service
            .iter()
            .zip(&gaps)
            .map(|(s, a)| {
                let sojourn = wait + s;
                wait = (sojourn - a / rho).max(0.0);
                sojourn
            })
            .collect()
    }

    /// Exponential samples whose mean is 1, then 2, alternating every `period`.
    fn alternating(seed: u64, n: usize, period: usize) -> Vec<f64> {
        exp_series(seed, n)
            .iter()
            .enumerate()
            .map(|(i, e)| if (i / period) % 2 == 1 { 2.0 * e } else { *e })
            .collect()
    }

    fn growth(d: &Drift) -> f64 {
        match d.verdict {
            DriftVerdict::Drifting { growth } | DriftVerdict::Steady { growth } => growth,
            DriftVerdict::TooShort => f64::NAN,
        }
    }

    /// A million samples each, five seeds, at p50 and p99. Independent samples and an
    /// M/M/1 queue at ρ = 0.8 (whose p99 indicator stays correlated over thousands of
    /// samples) level off; a mean that doubles every other 100,000 samples climbs.
    #[test]
    fn a_level_that_alternates_drifts_where_iid_and_a_queue_do_not() {
        for seed in 0..5 {
            for p in [0.5, 0.99] {
                let iid = drift(&exp_series(seed, 1_000_000), p, 10).unwrap();
                assert!(
                    matches!(iid.verdict, DriftVerdict::Steady { .. }),
                    "iid {p} {seed} {iid:?}"
                );
                let queue = drift(&mm1(seed, 1_000_000, 0.8), p, 10).unwrap();
                assert!(
                    matches!(queue.verdict, DriftVerdict::Steady { .. }),
                    "M/M/1 {p} {seed} {queue:?}"
                );
                let drifting = drift(&alternating(seed, 1_000_000, 100_000), p, 10).unwrap();
                assert!(
                    matches!(drifting.verdict, DriftVerdict::Drifting { .. }),
                    "alternating {p} {seed} {drifting:?}"
                );
                eprintln!(
                    "seed {seed} p{p}: growth iid {:.2}, M/M/1 {:.2}, alternating {:.2}",
                    growth(&iid),
                    growth(&queue),
                    growth(&drifting)
                );
                // The windows of 100,000 are each one half-cycle: the slow ones (odd) hold
                // the highest percentile, the fast ones (even) the lowest.
                assert_eq!(drifting.window_size, 100_000);
                assert_eq!(drifting.high.window % 2, 1, "{drifting:?}");
                assert_eq!(drifting.low.window % 2, 0, "{drifting:?}");
                assert!(
                    drifting.high.value > 1.7 * drifting.low.value,
                    "{drifting:?}"
                );
                assert!(iid.high.value < 1.2 * iid.low.value, "{iid:?}");
            }
        }
    }

    #[test]
    fn a_short_series_is_too_short_and_bad_input_is_refused() {
        let short = drift(&exp_series(1, 2_000), 0.99, 2).unwrap();
        assert_eq!(short.verdict, DriftVerdict::TooShort);
        assert!(drift(&exp_series(1, 100), 1.0, 2).is_err());
        assert!(drift(&exp_series(1, 100), 0.5, 0).is_err());
        assert!(drift(&exp_series(1, 100), 0.5, 101).is_err());
        assert!(drift(&[1.0, f64::NAN], 0.5, 1).is_err());
    }
}
