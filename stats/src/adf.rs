//! The Augmented Dickey-Fuller test: is the latency series stationary, or is it still
//! drifting (warming caches, a queue that keeps growing)?
//!
//! The regression of Δx_t on x_{t−1} (the level), up to `maxlag` lagged differences and
//! optional constant and trend is solved from its cross-product matrix. Every column is a
//! shifted copy of one of two series, so the whole (maxlag + 3)² matrix costs
//! O(n·maxlag): one row of lagged dot products, the rest by sliding the window one step at
//! a time. A Cholesky factor of the augmented matrix [X y]'[X y] then gives the residual
//! sum of squares of every nested lag model at once, which is all AIC/BIC selection needs.

mod mackinnon;
mod regression;

pub use regression::Regression;

use nalgebra::DMatrix;
use serde::Serialize;

use crate::error::{StatsError, check_finite};
use crate::kernels::{dot, sum};

const TEST: &str = "ADF";

/// How many lagged differences enter the regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LagSelection {
    /// The lag in 0..=maxlag that minimises Akaike's criterion (the default).
    #[default]
    Aic,
    /// The lag in 0..=maxlag that minimises the Bayesian criterion.
    Bic,
    /// Exactly maxlag lags.
    Fixed,
}

/// Options of [`adf`]; the default is statsmodels' `adfuller` default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdfOptions {
    /// Deterministic terms.
    pub regression: Regression,
    /// Lag selection.
    pub lags: LagSelection,
    /// The largest lag; `None` for Schwert's ⌈12·(n/100)^¼⌉ capped at n/2 − ntrend − 1.
    pub maxlag: Option<usize>,
}

/// MacKinnon critical values of the ADF statistic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CriticalValues {
    /// At 1%.
    #[serde(rename = "1%")]
    pub one: f64,
    /// At 5%.
    #[serde(rename = "5%")]
    pub five: f64,
    /// At 10%.
    #[serde(rename = "10%")]
    pub ten: f64,
}

/// The result of an ADF test, field for field as statsmodels' `adfuller`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Adf {
    /// The t statistic of the level's coefficient.
    pub stat: f64,
    /// MacKinnon's approximate p-value (of a unit root: small means stationary).
    pub pvalue: f64,
    /// Lagged differences in the final regression.
    pub usedlag: usize,
    /// Observations in the final regression.
    pub nobs: usize,
    /// MacKinnon's critical values for `nobs`.
    pub critical_values: CriticalValues,
    /// The best information criterion, when the lag was selected by one.
    pub icbest: Option<f64>,
    /// The largest lag considered.
    pub maxlag: usize,
    /// The deterministic terms used.
    pub regression: Regression,
}

/// The Augmented Dickey-Fuller unit-root test of `x`, matching
/// `statsmodels.tsa.stattools.adfuller(x, maxlag, regression, autolag)`: the same lag
/// search on a common sample, the final regression re-run on the longest sample for the
/// chosen lag, MacKinnon (1994) p-values and (2010) critical values.
pub fn adf(x: &[f64], options: &AdfOptions) -> Result<Adf, StatsError> {
    check_finite(x)?;
    let n = x.len();
    let regression = options.regression;
    let ntrend = regression.ntrend();
    let (lo, hi) = x
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if n > 0 && lo == hi {
        return Err(StatsError::Constant {
            test: TEST,
            value: lo,
        });
    }
    let maxlag = max_lag(n, ntrend, options.maxlag)?;

    // With a constant in the model the level's coefficient (and its t) do not change when
    // the level is shifted, so centre it: the cross-products are then far better conditioned.
    let level: Vec<f64> = match regression {
        Regression::N => x.to_vec(),
        Regression::C | Regression::Ct => {
            let mean = sum(x) / n as f64;
            x.iter().map(|v| v - mean).collect()
        }
    };
    let diff: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();

    let (usedlag, icbest) = match options.lags {
        LagSelection::Fixed => (maxlag, None),
        LagSelection::Aic | LagSelection::Bic => {
            let (lag, ic) = best_lag(&level, &diff, maxlag, regression, options.lags)?;
            (lag, Some(ic))
        }
    };

    // The final regression on the longest sample for `usedlag`, with the level moved last
    // so that its t statistic is read straight off the Cholesky factor.
    let design = Design::new(&level, &diff, usedlag, regression);
    let p = design.dim();
    let mut order: Vec<usize> = (0..ntrend).chain(ntrend + 1..p - 1).collect();
    order.push(ntrend);
    order.push(p - 1);
    let l = design.cholesky(&order)?;
    let q = p - 1;
    let dof = design.rows as f64 - q as f64;
    let ssr = l[(p - 1, p - 1)] * l[(p - 1, p - 1)];
    let stat = l[(p - 1, p - 2)] / (ssr / dof).sqrt();
    let nobs = design.rows;
    let [one, five, ten] = mackinnon::critical_values(regression, nobs);
    Ok(Adf {
        stat,
        pvalue: mackinnon::pvalue(stat, regression),
        usedlag,
        nobs,
        critical_values: CriticalValues { one, five, ten },
        icbest,
        maxlag,
        regression,
    })
}

/// The longest lag the test may try on `n` samples with `ntrend` trend terms: the one
/// `asked`, or Schwert's rule 12·(n/100)^¼, within n/2 − 1 − ntrend.
fn max_lag(n: usize, ntrend: usize, asked: Option<usize>) -> Result<usize, StatsError> {
    let limit = (n / 2) as i64 - ntrend as i64 - 1;
    Ok(match asked {
        None => {
            let schwert = (12.0 * (n as f64 / 100.0).powf(0.25)).ceil() as i64;
            let maxlag = schwert.min(limit);
            if maxlag < 0 {
                return Err(StatsError::TooFew {
                    test: TEST,
                    needed: 2 * (ntrend + 1),
                    got: n,
                });
            }
            maxlag as usize
        }
        Some(m) if m as i64 > limit => {
            return Err(StatsError::InvalidParameter {
                name: "maxlag",
                value: m as f64,
                expected: "at most n/2 - 1 - (number of trend terms)",
            });
        }
        Some(m) => m,
    })
}

/// The lag, up to `maxlag`, whose regression of `diff` on the `level` (with the trend
/// terms of `regression`) has the least information criterion (`lags`: AIC or BIC), on
/// the common sample `maxlag` leaves; and that criterion.
fn best_lag(
    level: &[f64],
    diff: &[f64],
    maxlag: usize,
    regression: Regression,
    lags: LagSelection,
) -> Result<(usize, f64), StatsError> {
    let ntrend = regression.ntrend();
    let n = level.len();
    let design = Design::new(level, diff, maxlag, regression);
    let l = design.cholesky(&(0..design.dim()).collect::<Vec<_>>())?;
    let rows = design.rows as f64;
    let y = design.dim() - 1;
    let mut best: Option<(f64, usize)> = None;
    for lag in 0..=maxlag {
        let q = ntrend + 1 + lag;
        let ssr = (q..=y).map(|i| l[(y, i)] * l[(y, i)]).sum::<f64>() * design.g[(y, y)];
        let neg2llf = rows * ((2.0 * std::f64::consts::PI).ln() + (ssr / rows).ln() + 1.0);
        let ic = match lags {
            LagSelection::Bic => neg2llf + rows.ln() * q as f64,
            _ => neg2llf + 2.0 * q as f64,
        };
        if best.is_none_or(|(b, _)| ic < b) {
            best = Some((ic, lag));
        }
    }
    let (ic, lag) = best.ok_or(StatsError::TooFew {
        test: TEST,
        needed: 4,
        got: n,
    })?;
    Ok((lag, ic))
}

/// The cross-product matrix of the ADF regression with `lags` lagged differences, on the
/// sample that a window of `lags` leaves: rows t = lags..n−1 of
/// Δx_t ~ [const, trend, x_t, Δx_{t−1} … Δx_{t−lags}], columns in that order, then y.
struct Design {
    g: DMatrix<f64>,
    rows: usize,
}

impl Design {
    fn new(level: &[f64], d: &[f64], lags: usize, regression: Regression) -> Self {
        let n = level.len();
        let w = lags;
        let rows = n - 1 - w;
        let end = n - 1; // exclusive end of t, an index into d
        let y = &d[w..end];
        let xv = &level[w..end];

        // First rows: Σ d_t d_{t−j} and Σ x_t d_{t−j}, j = 0..=lags, the only O(n·lags) work.
        let (dd0, xd) = lagged_dots(y, xv, d, w, lags);
        // dd[i][j] = Σ_t d_{t−i} d_{t−j}, each diagonal slid from the first row.
        let k1 = lags + 1;
        let mut dd = vec![0.0; k1 * k1];
        dd[..k1].copy_from_slice(&dd0);
        for i in 0..lags {
            for j in i..lags {
                dd[(i + 1) * k1 + j + 1] =
                    dd[i * k1 + j] + d[w - 1 - i] * d[w - 1 - j] - d[end - 1 - i] * d[end - 1 - j];
            }
        }
        let dd_at = |i: usize, j: usize| {
            if i <= j {
                dd[i * k1 + j]
            } else {
                dd[j * k1 + i]
            }
        };

        let ntrend = regression.ntrend();
        let lvl = ntrend;
        let ycol = lvl + lags + 1;
        let p = ycol + 1;
        let mut g = DMatrix::<f64>::zeros(p, p);
        g[(lvl, lvl)] = dot(xv, xv);
        g[(lvl, ycol)] = xd[0];
        g[(ycol, ycol)] = dd_at(0, 0);
        for i in 1..=lags {
            g[(lvl, lvl + i)] = xd[i];
            g[(lvl + i, ycol)] = dd_at(0, i);
            for j in i..=lags {
                g[(lvl + i, lvl + j)] = dd_at(i, j);
            }
        }
        if ntrend >= 1 {
            // Σ_t d_{t−j}, slid like the diagonals.
            let mut sd = vec![0.0; k1];
            sd[0] = sum(y);
            for j in 0..lags {
                sd[j + 1] = sd[j] + d[w - 1 - j] - d[end - 1 - j];
            }
            let m = rows as f64;
            g[(0, 0)] = m;
            g[(0, lvl)] = sum(xv);
            g[(0, ycol)] = sd[0];
            for i in 1..=lags {
                g[(0, lvl + i)] = sd[i];
            }
            if ntrend == 2 {
                // Trend r = 1..=rows; Σ_t r·d_{t−j} slides as td[j+1] = td[j] − rows·d_{end−1−j} + sd[j+1].
                let trend: Vec<f64> = (1..=rows).map(|r| r as f64).collect();
                let mut td = vec![0.0; k1];
                td[0] = dot(&trend, y);
                for j in 0..lags {
                    td[j + 1] = td[j] - m * d[end - 1 - j] + sd[j + 1];
                }
                g[(0, 1)] = m * (m + 1.0) / 2.0;
                g[(1, 1)] = m * (m + 1.0) * (2.0 * m + 1.0) / 6.0;
                g[(1, lvl)] = dot(&trend, xv);
                g[(1, ycol)] = td[0];
                for i in 1..=lags {
                    g[(1, lvl + i)] = td[i];
                }
            }
        }
        g.fill_lower_triangle_with_upper_triangle();
        Design { g, rows }
    }

    fn dim(&self) -> usize {
        self.g.nrows()
    }

    /// Lower Cholesky factor of the cross-products of the columns in `order` (y last),
    /// each scaled to unit length first so the factorisation sees the matrix's intrinsic
    /// conditioning rather than the units of the data.
    fn cholesky(&self, order: &[usize]) -> Result<DMatrix<f64>, StatsError> {
        let p = order.len();
        let scale: Vec<f64> = order.iter().map(|&i| self.g[(i, i)].sqrt()).collect();
        if let Some(col) = scale.iter().position(|&s| !(s > 0.0 && s.is_finite())) {
            return Err(StatsError::Singular {
                test: TEST,
                detail: format!("regressor {col} is identically zero"),
            });
        }
        let gs = DMatrix::from_fn(p, p, |r, c| {
            self.g[(order[r], order[c])] / (scale[r] * scale[c])
        });
        gs.cholesky()
            .map(|c| c.unpack())
            .ok_or_else(|| StatsError::Singular {
                test: TEST,
                detail: "the regressors are collinear or fit the differences exactly".to_string(),
            })
    }
}

/// `(Σ_t y_t d_{t−j}, Σ_t x_t d_{t−j})` for j = 0..=lags, where `y` and `x` start at
/// index `w` of the full series. Blocked over t so each block's slices stay in cache
/// while every lag passes over them, and split across two threads for long series.
fn lagged_dots(y: &[f64], x: &[f64], d: &[f64], w: usize, lags: usize) -> (Vec<f64>, Vec<f64>) {
    const BLOCK: usize = 4096;
    let rows = y.len();
    let run = |js: std::ops::Range<usize>| {
        let mut dy = vec![0.0; js.len()];
        let mut dx = vec![0.0; js.len()];
        let mut start = 0;
        while start < rows {
            let stop = (start + BLOCK).min(rows);
            let (yb, xb) = (&y[start..stop], &x[start..stop]);
            for (slot, j) in js.clone().enumerate() {
                let db = &d[w + start - j..w + stop - j];
                dy[slot] += dot(yb, db);
                dx[slot] += dot(xb, db);
            }
            start = stop;
        }
        (dy, dx)
    };
    let k1 = lags + 1;
    if rows * k1 < 4_000_000 {
        return run(0..k1);
    }
    let mid = k1 / 2;
    let ((mut dy, mut dx), (dy2, dx2)) = std::thread::scope(|s| {
        let hi = s.spawn(|| run(mid..k1));
        let lo = run(0..mid);
        (lo, hi.join().unwrap_or_else(|_| run(mid..k1)))
    });
    dy.extend(dy2);
    dx.extend(dx2);
    (dy, dx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cross-products must equal those of the explicit design matrix.
    #[test]
    fn sliding_cross_products_equal_the_explicit_design() {
        let x: Vec<f64> = (0..200)
            .map(|i| ((i * 7919) % 113) as f64 * 0.1 + (i as f64 * 0.3).sin())
            .collect();
        let d: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
        for regression in [Regression::N, Regression::C, Regression::Ct] {
            let lags = 5;
            let design = Design::new(&x, &d, lags, regression);
            let ntrend = regression.ntrend();
            let rows: Vec<Vec<f64>> = (lags..x.len() - 1)
                .map(|t| {
                    let mut row = Vec::new();
                    if ntrend >= 1 {
                        row.push(1.0);
                    }
                    if ntrend == 2 {
                        row.push((t - lags + 1) as f64);
                    }
                    row.push(x[t]);
                    row.extend((1..=lags).map(|j| d[t - j]));
                    row.push(d[t]);
                    row
                })
                .collect();
            let p = design.dim();
            for a in 0..p {
                for b in 0..p {
                    let explicit: f64 = rows.iter().map(|r| r[a] * r[b]).sum();
                    let got = design.g[(a, b)];
                    assert!(
                        (got - explicit).abs() <= 1e-9 * explicit.abs().max(1.0),
                        "{regression:?} ({a},{b}) {got} vs {explicit}"
                    );
                }
            }
        }
    }

    #[test]
    fn refuses_constant_and_short_series() {
        assert!(matches!(
            adf(&[3.0; 50], &AdfOptions::default()),
            Err(StatsError::Constant { .. })
        ));
        assert!(matches!(
            adf(&[1.0, 2.0, 1.5], &AdfOptions::default()),
            Err(StatsError::TooFew { .. })
        ));
        let opts = AdfOptions {
            maxlag: Some(40),
            lags: LagSelection::Fixed,
            ..AdfOptions::default()
        };
        assert!(matches!(
            adf(
                &(0..50).map(f64::from).map(f64::sin).collect::<Vec<_>>(),
                &opts
            ),
            Err(StatsError::InvalidParameter { .. })
        ));
    }
}
