//! The shape of a sample beyond its mean: how heavy a latency tail is, and how dispersed a
//! series of gaps is.
//!
//! A percentile's order-statistic CI is about 2·z·√(p(1−p)/n) / f(q) wide, and an
//! exponential distribution has f(q)·q = (1−p)·ln(1/(1−p)), so its CI's width relative to
//! the percentile is 2·z·√(p/((1−p)·n)) / ln(1/(1−p)), whatever its rate. A sample whose
//! CI is many times that wide (relative to its own percentile) has a tail heavier than
//! exponential: its CI narrows as 1/√n too, but from so far out that no affordable n
//! reaches a width the user can use.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::{StatsError, check_finite};
use crate::percentile::check_fraction;

/// The width of an exponential sample's `p`-quantile CI at `confidence` from `n` samples,
/// relative to the quantile (the same for every rate).
pub fn exponential_relative_ci_width(p: f64, n: usize, confidence: f64) -> Result<f64, StatsError> {
    check_fraction("percentile", p)?;
    check_fraction("confidence", confidence)?;
    if n == 0 {
        return Err(StatsError::InvalidParameter {
            name: "n",
            value: 0.0,
            expected: "at least one sample",
        });
    }
    let z = Normal::standard().inverse_cdf(0.5 + confidence / 2.0);
    Ok(2.0 * z * (p / ((1.0 - p) * n as f64)).sqrt() / (1.0 / (1.0 - p)).ln())
}

/// How many times wider, relative to the percentile, a CI of `width` around `value` (the
/// `p`-quantile of `n` samples at `confidence`) is than an exponential tail's: about 1 for
/// an exponential tail, well above 1 for a heavy one (2–4 for a lognormal with σ = 1 at
/// p99).
pub fn tail_heaviness(
    value: f64,
    width: f64,
    p: f64,
    n: usize,
    confidence: f64,
) -> Result<f64, StatsError> {
    check_finite(&[value, width])?;
    let exp = exponential_relative_ci_width(p, n, confidence)?;
    Ok(width / value.max(f64::MIN_POSITIVE) / exp)
}

/// The coefficient of variation of `x` (sample standard deviation over the mean): 1 for
/// exponential gaps, near 0 for fixed ones.
pub fn coefficient_of_variation(x: &[f64]) -> Result<f64, StatsError> {
    if x.len() < 2 {
        return Err(StatsError::TooFew {
            test: "the coefficient of variation",
            needed: 2,
            got: x.len(),
        });
    }
    check_finite(x)?;
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Ok(var.sqrt() / mean.abs().max(f64::MIN_POSITIVE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::percentile::{percentile, percentile_ci};

    /// Uniforms from a fixed-seed xorshift: the tests need no rand dependency.
    fn uniforms(seed: u64, n: usize) -> Vec<f64> {
        let mut s = seed.max(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
            })
            .collect()
    }

    fn heaviness_of(mut x: Vec<f64>) -> f64 {
        x.sort_by(f64::total_cmp);
        let value = percentile(&x, 0.99).unwrap_or_else(|| panic!("no samples"));
        let (low, high) = percentile_ci(&x, 0.99, 0.95).unwrap_or_else(|e| panic!("{e}"));
        tail_heaviness(value, high - low, 0.99, x.len(), 0.95).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn an_exponential_tail_has_heaviness_near_one_and_a_lognormal_far_above() {
        let u = uniforms(4, 40_000);
        let exp: Vec<f64> = u[..20_000].iter().map(|v| -(1.0 - v).ln()).collect();
        let h = heaviness_of(exp);
        assert!((0.6..1.5).contains(&h), "{h}");
        let logn: Vec<f64> = u[..20_000]
            .iter()
            .zip(&u[20_000..])
            .map(|(a, b)| {
                // Box-Muller, σ = 2.
                (2.0 * (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()).exp()
            })
            .collect();
        let h = heaviness_of(logn);
        assert!(h > 2.0, "{h}");
    }

    #[test]
    fn the_exponential_width_is_the_closed_form_and_shrinks_as_one_over_root_n() {
        // p99, 95%, n = 10,000: 2·1.95996·√(0.99/(0.01·10⁴))/ln 100 = 0.084693.
        let w = exponential_relative_ci_width(0.99, 10_000, 0.95).unwrap_or(f64::NAN);
        assert!((w - 0.084_693).abs() < 1e-5, "{w}");
        let w4 = exponential_relative_ci_width(0.99, 40_000, 0.95).unwrap_or(f64::NAN);
        assert!((w / w4 - 2.0).abs() < 1e-12);
        assert!(exponential_relative_ci_width(1.0, 10, 0.95).is_err());
        assert!(exponential_relative_ci_width(0.99, 0, 0.95).is_err());
        assert!(tail_heaviness(f64::NAN, 1.0, 0.99, 10, 0.95).is_err());
    }

    #[test]
    fn dispersion_of_fixed_and_exponential_gaps() {
        let fixed: Vec<f64> = (0..1000)
            .map(|i| 50_000.0 + (i % 7) as f64 * 100.0)
            .collect();
        assert!(coefficient_of_variation(&fixed).unwrap_or(f64::NAN) < 0.01);
        let exp: Vec<f64> = uniforms(2, 20_000)
            .iter()
            .map(|v| -(1.0 - v).ln())
            .collect();
        let cv = coefficient_of_variation(&exp).unwrap_or(f64::NAN);
        assert!((cv - 1.0).abs() < 0.03, "{cv}");
        assert!(coefficient_of_variation(&[1.0]).is_err());
        assert!(coefficient_of_variation(&[1.0, f64::INFINITY]).is_err());
    }
}
