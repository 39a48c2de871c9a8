//! Percentiles of weighted samples and their confidence intervals, iid and under
//! dependence: the estimator of the tail without the host's stalls, whose samples carry
//! inverse-probability weights ([`crate::without_stalls`]).
//!
//! With weights wᵢ (scaled to mean 1, so that they sum to n), the p-th percentile is the
//! smallest sample whose cumulative weight, in ascending order, reaches n·p (the inverse of
//! the weighted distribution function). Its interval is the unweighted method's with ranks
//! counted in weight: the share of weight at or below q has, under dependence, the variance
//! of the batch sums of wᵢ·1\[xᵢ ≤ q\] (the linearisation of the ratio estimator; the
//! Bahadur argument of [`crate::percentile_ci_dependent`] holds for it unchanged), and the
//! bounds are the samples at weighted ranks n·p ∓ t·√(n·p(1−p)·VIF). With all weights 1 it
//! is that method exactly, but for the estimate's rank (the inverse distribution function
//! rather than NumPy's interpolation).

use crate::dependent::{
    DependentCi, NeedMore, TAIL_PER_BATCH, Weighted, check_fractions, interval, too_short,
};
use crate::error::{StatsError, check_finite};
use crate::percentile::{min_samples_for_ci, order_statistic_ranks};

/// Samples in the order they were produced, each with a weight, and their weighted order.
#[derive(Debug, Clone)]
pub struct WeightedSamples {
    series: Vec<f64>,
    /// Weights scaled to mean 1, in the series' order.
    weights: Vec<f64>,
    /// Values ascending.
    sorted: Vec<f64>,
    /// Cumulative weight (of mean-1 weights) up to and including each sorted value.
    cumulative: Vec<f64>,
}

impl WeightedSamples {
    /// `series` in the order produced and a positive, finite weight per sample.
    pub fn new(series: Vec<f64>, weights: &[f64]) -> Result<WeightedSamples, StatsError> {
        check_finite(&series)?;
        check_finite(weights)?;
        if weights.len() != series.len() {
            return Err(StatsError::InvalidParameter {
                name: "weights",
                value: weights.len() as f64,
                expected: "one weight per sample",
            });
        }
        if let Some(&w) = weights.iter().find(|&&w| w <= 0.0) {
            return Err(StatsError::InvalidParameter {
                name: "weights",
                value: w,
                expected: "positive weights",
            });
        }
        let n = series.len();
        let total: f64 = weights.iter().sum();
        let scale = if total > 0.0 { n as f64 / total } else { 1.0 };
        let weights: Vec<f64> = weights.iter().map(|w| w * scale).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| series[a].total_cmp(&series[b]));
        let sorted: Vec<f64> = order.iter().map(|&i| series[i]).collect();
        let mut sum = 0.0;
        let cumulative = order
            .iter()
            .map(|&i| {
                sum += weights[i];
                sum
            })
            .collect();
        Ok(WeightedSamples {
            series,
            weights,
            sorted,
            cumulative,
        })
    }

    /// The samples, ascending (unweighted).
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.series.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// The sample at weighted rank `rank` (1 ≤ rank ≤ n, fractional allowed): the smallest
    /// whose cumulative weight reaches it.
    fn at_rank(&self, rank: f64) -> f64 {
        let i = self.cumulative.partition_point(|&c| c < rank - 1e-9);
        self.sorted[i.min(self.sorted.len() - 1)]
    }

    /// The weighted `p`-th percentile; `None` when there are no samples or `p` is outside
    /// (0, 1].
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.is_empty() || !(p > 0.0 && p <= 1.0) {
            return None;
        }
        Some(self.at_rank(self.len() as f64 * p))
    }

    /// The order-statistic interval for independent samples, with ranks counted in weight;
    /// `None` when the samples are too few for it.
    pub fn percentile_ci(&self, p: f64, confidence: f64) -> Option<(f64, f64)> {
        let n = self.len();
        let ranks = order_statistic_ranks(n, p, confidence);
        ranks
            .in_range(n)
            .then(|| (self.at_rank(ranks.j as f64), self.at_rank(ranks.k as f64)))
    }

    /// The interval valid under dependence ([`crate::percentile_ci_dependent`]'s method
    /// with weighted counts). `Ok(Err(NeedMore))` when the samples are too few for the
    /// dependence they show; `Err` only for a `p` or `confidence` outside (0, 1).
    pub fn percentile_ci_dependent(
        &self,
        p: f64,
        confidence: f64,
    ) -> Result<Result<DependentCi, NeedMore>, StatsError> {
        check_fractions(p, confidence)?;
        let n = self.len();
        let iid_min = min_samples_for_ci(p, confidence)?;
        let tail = p.min(1.0 - p);
        let m_min = (TAIL_PER_BATCH / tail).ceil() as usize;
        if let Some(more) = too_short(n, p, tail, iid_min, m_min) {
            return Ok(Err(more));
        }
        let q = self.at_rank(n as f64 * p);
        Ok(interval(
            Weighted {
                series: &self.series,
                weights: Some(&self.weights),
                q,
            },
            p,
            confidence,
            m_min,
            |rank| self.at_rank(rank as f64),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dependent::tests::exp_series;
    use crate::percentile::{percentile_ci, sort_samples};
    use crate::percentile_ci_dependent;

    #[test]
    fn equal_weights_give_the_unweighted_intervals() {
        let x = exp_series(3, 40_000);
        let sorted = sort_samples(&x).unwrap();
        let w = WeightedSamples::new(x.clone(), &vec![2.0; x.len()]).unwrap();
        for p in [0.5, 0.9, 0.99] {
            let plain = percentile_ci_dependent(&x, &sorted, p, 0.95)
                .unwrap()
                .unwrap();
            let weighted = w.percentile_ci_dependent(p, 0.95).unwrap().unwrap();
            assert_eq!(
                (plain.low, plain.high),
                (weighted.low, weighted.high),
                "p{p}"
            );
            assert_eq!(plain.batch_size, weighted.batch_size);
            assert_eq!(
                percentile_ci(&sorted, p, 0.95).unwrap(),
                w.percentile_ci(p, 0.95).unwrap()
            );
        }
    }

    #[test]
    fn weights_move_the_percentile_toward_the_heavier_samples() {
        // Half the samples at 1, half at 2: weighting the 2s three times moves the median.
        let series: Vec<f64> = (0..1_000).map(|i| 1.0 + (i % 2) as f64).collect();
        let weights: Vec<f64> = series
            .iter()
            .map(|&x| if x > 1.5 { 3.0 } else { 1.0 })
            .collect();
        let w = WeightedSamples::new(series.clone(), &weights).unwrap();
        assert_eq!(w.percentile(0.2), Some(1.0));
        assert_eq!(w.percentile(0.3), Some(2.0));
        let even = WeightedSamples::new(series, &[1.0; 1_000]).unwrap();
        assert_eq!(even.percentile(0.3), Some(1.0));
    }

    #[test]
    fn rejects_bad_weights() {
        assert!(WeightedSamples::new(vec![1.0, 2.0], &[1.0]).is_err());
        assert!(WeightedSamples::new(vec![1.0, 2.0], &[1.0, 0.0]).is_err());
        assert!(WeightedSamples::new(vec![1.0, 2.0], &[1.0, f64::NAN]).is_err());
        assert!(WeightedSamples::new(vec![1.0, f64::INFINITY], &[1.0, 1.0]).is_err());
    }
}
