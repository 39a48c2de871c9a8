//! MacKinnon's response-surface approximations for the Dickey-Fuller distribution, with
//! the coefficients statsmodels uses (`statsmodels.tsa.adfvalues`, N = 1).

use statrs::distribution::{ContinuousCDF, Normal};

use super::regression::Regression;

struct Surface {
    /// Above this statistic the p-value is 1.
    max: f64,
    /// Below this statistic the p-value is 0.
    min: f64,
    /// Where the small-p polynomial hands over to the large-p one.
    star: f64,
    /// MacKinnon (1994) small-p coefficients, lowest power first.
    small_p: [f64; 3],
    /// MacKinnon (1994) large-p coefficients, lowest power first (already scaled).
    large_p: [f64; 4],
    /// MacKinnon (2010) critical values at 1%, 5%, 10%: b∞ + b1/T + b2/T² + b3/T³.
    crit: [[f64; 4]; 3],
}

fn surface(regression: Regression) -> Surface {
    match regression {
        Regression::C => Surface {
            max: 2.74,
            min: -18.83,
            star: -1.61,
            small_p: [2.1659, 1.4412, 0.038269],
            large_p: [1.7339, 9.3202e-1, -1.2745e-1, -1.0368e-2],
            crit: [
                [-3.43035, -6.5393, -16.786, -79.433],
                [-2.86154, -2.8903, -4.234, -40.04],
                [-2.56677, -1.5384, -2.809, 0.0],
            ],
        },
        Regression::Ct => Surface {
            max: 0.7,
            min: -16.18,
            star: -2.89,
            small_p: [3.2512, 1.6047, 0.049588],
            large_p: [2.5261, 6.1654e-1, -3.7956e-1, -6.0285e-2],
            crit: [
                [-3.95877, -9.0531, -28.428, -134.155],
                [-3.41049, -4.3904, -9.036, -45.374],
                [-3.12705, -2.5856, -3.925, -22.38],
            ],
        },
        Regression::N => Surface {
            max: f64::INFINITY,
            min: -19.04,
            star: -1.04,
            small_p: [0.6344, 1.2378, 0.032496],
            large_p: [0.4797, 9.3557e-1, -0.06999, 3.3066e-2],
            crit: [
                [-2.56574, -2.2358, -3.627, 0.0],
                [-1.941, -0.2686, -3.365, 31.223],
                [-1.61682, 0.2656, -2.714, 25.364],
            ],
        },
    }
}

/// Horner evaluation of c0 + c1·x + c2·x² + …
fn poly(coef: &[f64], x: f64) -> f64 {
    coef.iter().rev().fold(0.0, |acc, &c| acc * x + c)
}

/// MacKinnon (1994) approximate p-value of a Dickey-Fuller t statistic.
pub(super) fn pvalue(stat: f64, regression: Regression) -> f64 {
    let s = surface(regression);
    if stat > s.max {
        return 1.0;
    }
    if stat < s.min {
        return 0.0;
    }
    let z = if stat <= s.star {
        poly(&s.small_p, stat)
    } else {
        poly(&s.large_p, stat)
    };
    Normal::standard().cdf(z)
}

/// MacKinnon (2010) critical values at 1%, 5% and 10% for `nobs` observations.
pub(super) fn critical_values(regression: Regression, nobs: usize) -> [f64; 3] {
    let inv = 1.0 / nobs as f64;
    surface(regression).crit.map(|c| poly(&c, inv))
}
