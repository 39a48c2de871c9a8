//! Anderson-Darling goodness of fit against the exponential distribution: are the
//! inter-departure times of an open-loop load generator those of a Poisson process?

use serde::Serialize;

use crate::error::{StatsError, check_finite};

/// The significance levels, in percent, of [`AndersonDarling::critical_values`]
/// (SciPy's table for the exponential).
pub const SIGNIFICANCE_LEVELS: [f64; 5] = [15.0, 10.0, 5.0, 2.5, 1.0];

/// Stephens' asymptotic critical values for the exponential with estimated scale, as
/// SciPy 1.17 tabulates them (`_Avals_expon`), before the finite-sample correction.
const AVALS_EXPON: [f64; 5] = [0.916, 1.062, 1.321, 1.591, 1.959];

/// The Anderson-Darling test of exponentiality with the scale estimated from the data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AndersonDarling {
    /// The A² statistic.
    pub statistic: f64,
    /// Critical values of A² at [`SIGNIFICANCE_LEVELS`].
    pub critical_values: [f64; 5],
    /// The significance levels, in percent, of the critical values.
    pub significance_levels: [f64; 5],
    /// The p-value interpolated in the critical-value table, clipped to \[0.01, 0.15\].
    pub pvalue: f64,
    /// The fitted scale (the sample mean; the location is fixed at 0).
    pub scale: f64,
}

impl AndersonDarling {
    /// Whether exponentiality is *not* rejected at `level_percent` (one of
    /// [`SIGNIFICANCE_LEVELS`]; other levels use the p-value).
    pub fn passes(&self, level_percent: f64) -> bool {
        match SIGNIFICANCE_LEVELS.iter().position(|&s| s == level_percent) {
            Some(i) => self.statistic <= self.critical_values[i],
            None => self.pvalue > level_percent / 100.0,
        }
    }
}

/// The Anderson-Darling test of exponentiality against a fully specified distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AndersonDarlingKnown {
    /// The A² statistic.
    pub statistic: f64,
    /// P(A² ≥ statistic) under the null, by Marsaglia and Marsaglia's approximation.
    pub pvalue: f64,
    /// The rate the data were tested against.
    pub rate: f64,
}

fn check_nonnegative(x: &[f64]) -> Result<(), StatsError> {
    check_finite(x)?;
    match x.iter().position(|&v| v < 0.0) {
        Some(index) => Err(StatsError::OutOfDomain {
            index,
            value: x[index],
            expected: "an inter-arrival time must not be negative",
        }),
        None => Ok(()),
    }
}

/// A² = −N − Σ (2i−1)/N · (ln F(w_i) + ln(1 − F(w_{N+1−i}))) for sorted standardised
/// values `w` of an exponential (F(w) = 1 − e^(−w)).
fn a_squared(sorted_w: impl ExactSizeIterator<Item = f64> + Clone) -> f64 {
    let n = sorted_w.len();
    let nf = n as f64;
    let logcdf = |w: f64| (-(-w).exp_m1()).ln();
    let logsf = |w: f64| -w;
    let ascending: Vec<f64> = sorted_w.collect();
    let mut sum = 0.0;
    for (i, (&lo, &hi)) in ascending.iter().zip(ascending.iter().rev()).enumerate() {
        sum += (2.0 * (i as f64 + 1.0) - 1.0) / nf * (logcdf(lo) + logsf(hi));
    }
    -nf - sum
}

/// Anderson-Darling test that `x` comes from an exponential distribution with unknown
/// scale, as `scipy.stats.anderson(x, dist="expon", method="interpolate")`: the scale is
/// the sample mean; critical values are Stephens' table divided by (1 + 0.6/N) and
/// rounded to three decimals; the p-value is interpolated linearly in that table.
pub fn anderson_exponential(x: &[f64]) -> Result<AndersonDarling, StatsError> {
    const TEST: &str = "Anderson-Darling";
    if x.len() < 2 {
        return Err(StatsError::TooFew {
            test: TEST,
            needed: 2,
            got: x.len(),
        });
    }
    check_nonnegative(x)?;
    let n = x.len() as f64;
    let scale = x.iter().sum::<f64>() / n;
    if scale == 0.0 {
        return Err(StatsError::Constant {
            test: TEST,
            value: 0.0,
        });
    }
    let mut sorted = x.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let statistic = a_squared(sorted.iter().map(|v| v / scale));
    let critical_values = AVALS_EXPON.map(|a| round_half_even(a / (1.0 + 0.6 / n), 3));
    let pvalue = interp(
        statistic,
        &critical_values,
        &SIGNIFICANCE_LEVELS.map(|s| s / 100.0),
    );
    Ok(AndersonDarling {
        statistic,
        critical_values,
        significance_levels: SIGNIFICANCE_LEVELS,
        pvalue,
        scale,
    })
}

/// Anderson-Darling test that `x` comes from the exponential distribution with the given
/// `rate` (no parameter estimated, so the classical A² null distribution applies): the
/// p-value is 1 − AD(n, A²) with Marsaglia and Marsaglia's `adinf` and `errfix`
/// ("Evaluating the Anderson-Darling Distribution", J. Stat. Software 9(2), 2004),
/// accurate to about 1e-5.
pub fn anderson_exponential_known(
    x: &[f64],
    rate: f64,
) -> Result<AndersonDarlingKnown, StatsError> {
    if x.is_empty() {
        return Err(StatsError::TooFew {
            test: "Anderson-Darling",
            needed: 1,
            got: 0,
        });
    }
    if !(rate.is_finite() && rate > 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "rate",
            value: rate,
            expected: "a positive, finite rate",
        });
    }
    check_nonnegative(x)?;
    let mut sorted = x.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let statistic = a_squared(sorted.iter().map(|v| v * rate));
    let pvalue = if statistic.is_finite() {
        (1.0 - ad_cdf(x.len(), statistic)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Ok(AndersonDarlingKnown {
        statistic,
        pvalue,
        rate,
    })
}

/// NumPy's `around(v, decimals)`: round half to even at the given decimal.
fn round_half_even(v: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (v * scale).round_ties_even() / scale
}

/// NumPy's `interp` for increasing `xp`: linear inside, the end values outside.
fn interp(x: f64, xp: &[f64], fp: &[f64]) -> f64 {
    if x <= xp[0] {
        return fp[0];
    }
    let last = xp.len() - 1;
    if x >= xp[last] {
        return fp[last];
    }
    let i = xp.partition_point(|&v| v <= x) - 1;
    let t = (x - xp[i]) / (xp[i + 1] - xp[i]);
    fp[i] + t * (fp[i + 1] - fp[i])
}

/// Marsaglia and Marsaglia's `adinf`: the limiting CDF of A².
fn adinf(z: f64) -> f64 {
    if z < 2.0 {
        (-1.2337141 / z).exp() / z.sqrt()
            * (2.00012
                + (0.247105 - (0.0649821 - (0.0347962 - (0.011672 - 0.00168691 * z) * z) * z) * z)
                    * z)
    } else {
        (-(1.0776
            - (2.30695 - (0.43424 - (0.082433 - (0.008056 - 0.0003146 * z) * z) * z) * z) * z)
            .exp())
        .exp()
    }
}

/// Marsaglia and Marsaglia's `errfix`: the finite-n correction to `adinf`.
fn errfix(n: usize, x: f64) -> f64 {
    let n = n as f64;
    if x > 0.8 {
        return (-130.2137
            + (745.2337 - (1705.091 - (1950.646 - (1116.360 - 255.7844 * x) * x) * x) * x) * x)
            / n;
    }
    let c = 0.01265 + 0.1757 / n;
    if x < c {
        let t = x / c;
        let t = t.sqrt() * (1.0 - t) * (49.0 * t - 102.0);
        return t * (0.0037 / (n * n) + 0.00078 / n + 0.00006) / n;
    }
    let x = (x - c) / (0.8 - c);
    let t = -0.00022633 + (6.54034 - (14.6538 - (14.458 - (8.259 - 1.91864 * x) * x) * x) * x) * x;
    t * (0.04213 / n + 0.01365 / n / n)
}

/// P(A² < z) for n observations.
fn ad_cdf(n: usize, z: f64) -> f64 {
    if z <= 0.0 {
        return 0.0;
    }
    let x = adinf(z);
    x + errfix(n, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_rate_pvalues_match_marsaglia_table() {
        // Marsaglia & Marsaglia (2004), asymptotic percentage points of A²:
        // P(A² < 2.492) = 0.95, P(A² < 3.878) = 0.99, P(A² < 1.933) = 0.90 (Stephens 1974, case 0).
        assert!((adinf(2.492) - 0.95).abs() < 2e-4, "{}", adinf(2.492));
        assert!((adinf(3.878) - 0.99).abs() < 2e-4, "{}", adinf(3.878));
        assert!((adinf(1.933) - 0.90).abs() < 2e-4, "{}", adinf(1.933));
    }

    #[test]
    fn known_rate_rejects_the_wrong_rate() {
        // Quantiles of Exp(1): a perfect fit at rate 1, a poor one at rate 3.
        let n = 400;
        let x: Vec<f64> = (0..n)
            .map(|i| -(1.0 - (i as f64 + 0.5) / n as f64).ln())
            .collect();
        let right = anderson_exponential_known(&x, 1.0).unwrap();
        let wrong = anderson_exponential_known(&x, 3.0).unwrap();
        assert!(right.pvalue > 0.5, "{right:?}");
        assert!(wrong.pvalue < 1e-3, "{wrong:?}");
    }

    #[test]
    fn negative_times_are_refused() {
        let err = anderson_exponential(&[1.0, -2.0, 3.0]).unwrap_err();
        assert!(
            matches!(err, StatsError::OutOfDomain { index: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn interp_clamps_like_numpy() {
        let xp = [1.0, 2.0, 3.0];
        let fp = [0.15, 0.10, 0.05];
        assert_eq!(interp(0.5, &xp, &fp), 0.15);
        assert_eq!(interp(3.5, &xp, &fp), 0.05);
        assert!((interp(1.5, &xp, &fp) - 0.125).abs() < 1e-15);
        assert_eq!(interp(2.0, &xp, &fp), 0.10);
    }
}
