//! Percentiles and their order-statistic confidence intervals.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::{StatsError, check_finite};
use crate::percent::percent_text;

/// Sorts a copy of the samples for [`percentile`] and [`percentile_ci`], rejecting NaN
/// and infinities, which have no place in a latency distribution.
pub fn sort_samples(samples: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_finite(samples)?;
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    Ok(sorted)
}

/// The `p`-th quantile (`p` in \[0, 1\]) of ascending-sorted samples, by linear
/// interpolation between order statistics: Hyndman and Fan's type 7, NumPy's default
/// (`numpy.percentile(x, 100 * p)`).
///
/// Returns `None` for an empty slice or a `p` outside \[0, 1\].
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 || !(0.0..=1.0).contains(&p) {
        return None;
    }
    // NumPy's `_compute_virtual_index` with alpha = beta = 1, in the same operation order.
    let virtual_index = (n as f64 * p + (1.0 - p)) - 1.0;
    let lo = virtual_index.floor().clamp(0.0, (n - 1) as f64);
    let gamma = virtual_index - lo;
    let lo = lo as usize;
    let hi = (lo + 1).min(n - 1);
    let (a, b) = (sorted[lo], sorted[hi]);
    // NumPy's `_lerp`: interpolate from whichever end is nearer, for monotonicity.
    let diff = b - a;
    Some(if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    })
}

/// The 1-based ranks of the order statistics that bound a percentile's confidence interval.
///
/// Either rank may fall outside `1..=n`; then the interval does not exist for `n` samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OrderStatRanks {
    /// Rank of the lower bound: the j-th smallest sample.
    pub j: i64,
    /// Rank of the upper bound: the k-th smallest sample.
    pub k: i64,
}

impl OrderStatRanks {
    /// Whether both ranks name a sample among `n`.
    pub fn in_range(&self, n: usize) -> bool {
        let n = n as i64;
        (1..=n).contains(&self.j) && (1..=n).contains(&self.k)
    }
}

/// The two-sided standard normal quantile for a confidence level (1.96 for 0.95).
fn eta(confidence: f64) -> f64 {
    Normal::standard().inverse_cdf((1.0 + confidence) / 2.0)
}

/// Ranks of the distribution-free confidence interval for the `p`-th quantile from `n`
/// samples, as Le Boudec gives it (Performance Evaluation of Computer and Communication
/// Systems, 2010, thm. 2.1 with the normal approximation) and Lancet uses it:
/// j = ⌊np − η√(np(1−p))⌋, k = ⌈np + η√(np(1−p))⌉ + 1, with η the normal quantile of
/// (1 + confidence)/2.
pub fn order_statistic_ranks(n: usize, p: f64, confidence: f64) -> OrderStatRanks {
    ranks_with_eta(n, p, eta(confidence))
}

fn ranks_with_eta(n: usize, p: f64, eta: f64) -> OrderStatRanks {
    let np = n as f64 * p;
    let h = eta * (np * (1.0 - p)).sqrt();
    OrderStatRanks {
        j: (np - h).floor() as i64,
        k: (np + h).ceil() as i64 + 1,
    }
}

pub(crate) fn check_fraction(name: &'static str, value: f64) -> Result<(), StatsError> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name,
            value,
            expected: "a fraction strictly between 0 and 1",
        })
    }
}

/// The smallest sample count for which the order-statistic interval of the `p`-th
/// quantile at `confidence` lies within the samples (p99.99 at 95% needs tens of
/// thousands).
pub fn min_samples_for_ci(p: f64, confidence: f64) -> Result<usize, StatsError> {
    check_fraction("percentile", p)?;
    check_fraction("confidence", confidence)?;
    let eta = eta(confidence);
    let fits = |n: usize| ranks_with_eta(n, p, eta).in_range(n);
    // Grow until it fits, then bisect; beyond the bisection point, walk up to the first
    // n that fits after which every larger one fits too (the ranks move in unit steps).
    let mut hi = 1usize;
    while !fits(hi) {
        hi = hi.checked_mul(2).ok_or(StatsError::InvalidParameter {
            name: "percentile",
            value: p,
            expected: "a percentile whose interval fits in a usize sample count",
        })?;
    }
    let mut lo = hi / 2;
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) { hi = mid } else { lo = mid }
    }
    Ok(hi)
}

/// The order-statistic confidence interval `(low, high)` of the `p`-th quantile of
/// ascending-sorted samples (see [`order_statistic_ranks`]).
///
/// When the ranks fall outside the samples the answer is
/// [`StatsError::NotEnoughSamples`] with the count that would do, never a clamped bound.
pub fn percentile_ci(sorted: &[f64], p: f64, confidence: f64) -> Result<(f64, f64), StatsError> {
    check_fraction("percentile", p)?;
    check_fraction("confidence", confidence)?;
    let n = sorted.len();
    let ranks = order_statistic_ranks(n, p, confidence);
    if !ranks.in_range(n) {
        return Err(StatsError::NotEnoughSamples {
            p,
            confidence,
            needed: min_samples_for_ci(p, confidence)?.max(n + 1),
            have: n,
        });
    }
    Ok((sorted[ranks.j as usize - 1], sorted[ranks.k as usize - 1]))
}

/// A percentile, strictly between the 0th and the 100th: 99.9 for p99.9.
///
/// Scenarios, records and reports write percentiles in percent (`ci: {percentile: 99.9}`)
/// and the statistics here take fractions (`percentile(sorted, 0.999)`); this type is
/// the one place one becomes the other. It keeps the percent as it was written, so that
/// a record says `99.9` and not `99.90000000000001`, and it serializes as that bare number.
///
/// ```
/// use vernier_stats::Percentile;
///
/// let p = Percentile::from_percent(99.9).unwrap();
/// assert_eq!((p.percent(), p.to_string()), (99.9, "p99.9".to_string()));
/// assert_eq!(p, Percentile::from_fraction(0.999).unwrap());
/// assert!(Percentile::from_percent(100.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentile(f64);

// Never NaN (the constructors refuse it), so the order is total.
impl Eq for Percentile {}

impl Ord for Percentile {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl PartialOrd for Percentile {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Percentile {
    /// The median.
    pub const P50: Percentile = Percentile(50.0);
    /// p90.
    pub const P90: Percentile = Percentile(90.0);
    /// p99, the usual tail target.
    pub const P99: Percentile = Percentile(99.0);
    /// p99.9.
    pub const P99_9: Percentile = Percentile(99.9);

    /// From percent (99 for p99); [`StatsError::InvalidParameter`] unless strictly between
    /// 0 and 100: p0 and p100 are the extremes, which no sample size pins down.
    pub fn from_percent(percent: f64) -> Result<Percentile, StatsError> {
        if percent > 0.0 && percent < 100.0 {
            Ok(Percentile(percent))
        } else {
            Err(StatsError::InvalidParameter {
                name: "percentile",
                value: percent,
                expected: "a percent strictly between 0 and 100",
            })
        }
    }

    /// From a fraction (0.99 for p99), strictly between 0 and 1.
    pub fn from_fraction(fraction: f64) -> Result<Percentile, StatsError> {
        if fraction > 0.0 && fraction < 1.0 {
            Percentile::from_percent(fraction * 100.0)
        } else {
            Err(StatsError::InvalidParameter {
                name: "percentile",
                value: fraction,
                expected: "a fraction strictly between 0 and 1",
            })
        }
    }

    /// In percent: 99.9 for p99.9.
    pub fn percent(self) -> f64 {
        self.0
    }

    /// As the statistics take it: 0.999 for p99.9 (the percent over 100).
    pub fn fraction(self) -> f64 {
        self.0 / 100.0
    }

    /// The share of the distribution above it: 0.001 for p99.9, the CCDF's level.
    pub fn tail(self) -> f64 {
        1.0 - self.fraction()
    }

    /// Whether `self` and `other` name the same percentile, however each was computed.
    pub fn same(self, other: Percentile) -> bool {
        (self.0 - other.0).abs() < 1e-9
    }
}

/// p99: the tail most targets are set on, where nothing else says which.
impl Default for Percentile {
    fn default() -> Percentile {
        Percentile::P99
    }
}

impl std::fmt::Display for Percentile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "p{}", percent_text(self.0))
    }
}

/// The bare percent, as records held percentiles before the type existed.
impl Serialize for Percentile {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Percentile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let percent = f64::deserialize(deserializer)?;
        Percentile::from_percent(percent).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_like_numpy_on_small_cases() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&x, 0.5), Some(2.5));
        assert_eq!(percentile(&x, 0.0), Some(1.0));
        assert_eq!(percentile(&x, 1.0), Some(4.0));
        assert!((percentile(&x, 0.9).unwrap() - 3.7).abs() < 1e-12);
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&x, 1.5), None);
    }

    #[test]
    fn ci_refuses_to_clamp() {
        let sorted: Vec<f64> = (0..100).map(f64::from).collect();
        let err = percentile_ci(&sorted, 0.9999, 0.95).unwrap_err();
        let StatsError::NotEnoughSamples { needed, have, .. } = err else {
            panic!("unexpected {err:?}")
        };
        assert_eq!(have, 100);
        assert!(order_statistic_ranks(needed, 0.9999, 0.95).in_range(needed));
        assert!(!order_statistic_ranks(needed - 1, 0.9999, 0.95).in_range(needed - 1));
        assert_eq!(
            err.to_string(),
            format!("not enough samples: p99.99 at 95% needs at least {needed}, have 100")
        );
    }

    #[test]
    fn ci_brackets_the_median() {
        let sorted: Vec<f64> = (1..=1000).map(f64::from).collect();
        let (lo, hi) = percentile_ci(&sorted, 0.5, 0.95).unwrap();
        let mid = percentile(&sorted, 0.5).unwrap();
        assert!(lo < mid && mid < hi, "{lo} {mid} {hi}");
    }

    #[test]
    fn a_percentile_is_written_in_percent_and_used_as_a_fraction() {
        let p = Percentile::from_percent(99.9).unwrap();
        assert_eq!(p.percent(), 99.9);
        // The fraction the statistics were always given: the percent over 100.
        assert_eq!(p.fraction(), 99.9 / 100.0);
        assert_eq!(p.to_string(), "p99.9");
        assert_eq!(
            Percentile::from_fraction(0.999).unwrap().to_string(),
            "p99.9"
        );
        assert_eq!(Percentile::from_percent(50.0).unwrap().to_string(), "p50");
        assert_eq!(
            Percentile::from_percent(99.999).unwrap().to_string(),
            "p99.999"
        );
        assert!((Percentile::from_percent(99.0).unwrap().tail() - 0.01).abs() < 1e-15);
        assert!(p.same(Percentile::from_fraction(0.999).unwrap()));
        for bad in [0.0, 100.0, -1.0, 150.0, f64::NAN, f64::INFINITY] {
            let err = Percentile::from_percent(bad).unwrap_err();
            assert!(
                err.to_string().contains("strictly between 0 and 100"),
                "{err}"
            );
        }
        assert!(Percentile::from_fraction(1.0).is_err());
        assert!(Percentile::from_fraction(99.0).is_err());
    }

    #[test]
    fn a_percentile_serializes_as_its_bare_percent() {
        let p = Percentile::from_percent(99.0).unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), "99.0");
        let back: Percentile = serde_json::from_str("99.9").unwrap();
        assert_eq!(back.percent(), 99.9);
        let err = serde_json::from_str::<Percentile>("100").unwrap_err();
        assert!(
            err.to_string().contains("strictly between 0 and 100"),
            "{err}"
        );
    }

    #[test]
    fn rejects_nan() {
        assert!(matches!(
            sort_samples(&[1.0, f64::NAN]),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
    }
}
