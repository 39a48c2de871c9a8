//! Independent replications of a measurement: the CI of their mean, and how much of their
//! spread their own CIs explain.
//!
//! Runs with fresh connections, seeds and processes are independent, so their estimates of
//! a percentile are independent draws around the percentile the system shows *across*
//! runs (TailBench repeats runs until this CI is narrow, Kasture & Sanchez, IISWC 2016).
//! A run's estimate is asymptotically normal (Bahadur), so the Student t-interval of the
//! runs' mean is valid on a few runs, whatever the dependence within each run.
//!
//! Whether the runs disagree *beyond their own CIs* is the heterogeneity question of
//! meta-analysis: Cochran's Q weighs each run's deviation from the precision-weighted mean
//! by its own standard error, and I² = (Q − df)/Q (Higgins & Thompson, Statistics in
//! Medicine 21(11), 2002) is the share of the spread that the runs' CIs do not explain: an
//! effect size, not a p-value, so more samples per run do not make it fire on a
//! difference too small to matter. τ is the between-run standard deviation
//! (DerSimonian & Laird, Controlled Clinical Trials 7(3), 1986).

use crate::dependent::t_quantile;
use crate::error::{StatsError, check_finite};
use crate::percentile::check_fraction;
use serde::Serialize;

/// The mean of replicated estimates with its t-interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanCi {
    /// Estimates used.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (n − 1).
    pub sd: f64,
    /// mean − t·sd/√n.
    pub low: f64,
    /// mean + t·sd/√n.
    pub high: f64,
}

/// The `confidence` t-interval of the mean of `estimates` (at least two, finite).
pub fn mean_ci(estimates: &[f64], confidence: f64) -> Result<MeanCi, StatsError> {
    check_fraction("confidence", confidence)?;
    check_finite(estimates)?;
    let n = estimates.len();
    if n < 2 {
        return Err(StatsError::TooFew {
            test: "a CI across replications",
            needed: 2,
            got: n,
        });
    }
    let mean = estimates.iter().sum::<f64>() / n as f64;
    let sd = (estimates.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let t = t_quantile(confidence, n - 1);
    let half = t * sd / (n as f64).sqrt();
    Ok(MeanCi {
        n,
        mean,
        sd,
        low: mean - half,
        high: mean + half,
    })
}

/// How much replicated estimates disagree beyond their own standard errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Heterogeneity {
    /// Cochran's Q.
    pub q: f64,
    /// Its degrees of freedom (runs − 1).
    pub df: usize,
    /// I² in [0, 1): the share of the spread beyond what the standard errors explain.
    pub i2: f64,
    /// The between-run standard deviation (DerSimonian-Laird), in the estimates' unit.
    pub tau: f64,
}

/// Cochran's Q, I² and τ of `estimates` with their `std_errors` (same length, at least
/// two, finite; a standard error of zero is taken as a millionth of the largest one, or of
/// 1 when all are zero, so that a degenerate CI weighs heavily without dividing by zero).
pub fn heterogeneity(estimates: &[f64], std_errors: &[f64]) -> Result<Heterogeneity, StatsError> {
    check_finite(estimates)?;
    check_finite(std_errors)?;
    if estimates.len() != std_errors.len() {
        return Err(StatsError::InvalidParameter {
            name: "std_errors",
            value: std_errors.len() as f64,
            expected: "one standard error per estimate",
        });
    }
    if let Some((index, &value)) = std_errors.iter().enumerate().find(|(_, s)| **s < 0.0) {
        return Err(StatsError::OutOfDomain {
            index,
            value,
            expected: "a standard error, not negative",
        });
    }
    let k = estimates.len();
    if k < 2 {
        return Err(StatsError::TooFew {
            test: "heterogeneity across replications",
            needed: 2,
            got: k,
        });
    }
    let floor = std_errors.iter().copied().fold(0.0, f64::max).max(1.0) * 1e-6;
    let w: Vec<f64> = std_errors
        .iter()
        .map(|s| 1.0 / s.max(floor).powi(2))
        .collect();
    let sw: f64 = w.iter().sum();
    let sw2: f64 = w.iter().map(|x| x * x).sum();
    let mean = w.iter().zip(estimates).map(|(w, x)| w * x).sum::<f64>() / sw;
    let q: f64 = w
        .iter()
        .zip(estimates)
        .map(|(w, x)| w * (x - mean).powi(2))
        .sum();
    let df = k - 1;
    let i2 = if q > 0.0 {
        ((q - df as f64) / q).max(0.0)
    } else {
        0.0
    };
    let tau2 = ((q - df as f64) / (sw - sw2 / sw)).max(0.0);
    Ok(Heterogeneity {
        q,
        df,
        i2,
        tau: tau2.sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t_interval_matches_scipy() {
        // scipy.stats.t.interval(0.95, 2, loc=2, scale=stats.sem([1, 2, 3]))
        // = (-0.4841377118437, 4.4841377118437)
        let ci = mean_ci(&[1.0, 2.0, 3.0], 0.95).unwrap();
        assert_eq!(ci.n, 3);
        assert!((ci.mean - 2.0).abs() < 1e-12);
        assert!((ci.sd - 1.0).abs() < 1e-12);
        assert!((ci.low + 0.484_137_711_843_7).abs() < 1e-9, "{ci:?}");
        assert!((ci.high - 4.484_137_711_843_7).abs() < 1e-9, "{ci:?}");
    }

    #[test]
    fn agreeing_runs_have_no_heterogeneity_and_biased_ones_do() {
        // Estimates within their standard errors of each other: Q below its df.
        let h = heterogeneity(&[100.0, 101.0, 99.5], &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(h.df, 2);
        assert!(h.q < 2.0, "{h:?}");
        assert_eq!(h.i2, 0.0);
        assert_eq!(h.tau, 0.0);
        // Runs 20 apart with standard errors of 1: nearly all the spread is between runs.
        // Q = Σ (x − 120)² / 1 = 800; I² = 798/800; τ² = 798 / (3 − 1) = 399.
        let h = heterogeneity(&[100.0, 120.0, 140.0], &[1.0, 1.0, 1.0]).unwrap();
        assert!((h.q - 800.0).abs() < 1e-9, "{h:?}");
        assert!((h.i2 - 798.0 / 800.0).abs() < 1e-12, "{h:?}");
        assert!((h.tau - 399f64.sqrt()).abs() < 1e-9, "{h:?}");
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(mean_ci(&[1.0], 0.95).is_err());
        assert!(mean_ci(&[1.0, 2.0], 1.0).is_err());
        assert!(mean_ci(&[1.0, f64::NAN], 0.95).is_err());
        assert!(heterogeneity(&[1.0, 2.0], &[1.0]).is_err());
        assert!(heterogeneity(&[1.0, 2.0], &[1.0, -1.0]).is_err());
        assert!(heterogeneity(&[1.0], &[1.0]).is_err());
        // A zero standard error weighs heavily, without a division by zero.
        // Q = (5 − 1)²/1² = 16 (the precise run holds the mean), I² = 15/16.
        let h = heterogeneity(&[1.0, 5.0], &[0.0, 1.0]).unwrap();
        assert!(h.q.is_finite() && h.i2 > 0.9, "{h:?}");
    }
}
