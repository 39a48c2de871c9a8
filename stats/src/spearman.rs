//! Spearman rank correlation of a series with itself at a lag: are consecutive latency
//! samples independent, and if not, how far apart must kept samples be?

use serde::Serialize;
use statrs::function::beta::beta_reg;

use crate::error::{StatsError, check_finite};

const TEST: &str = "Spearman correlation";

/// A rank correlation and its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correlation {
    /// The lag between the paired values (0 for two separate series).
    pub lag: usize,
    /// Spearman's ρ.
    pub rho: f64,
    /// Two-sided p-value of ρ = 0, from Student's t with n − 2 degrees of freedom, as SciPy.
    pub pvalue: f64,
    /// Number of pairs.
    pub n: usize,
}

/// A series ranked once, in send order, from which the correlation at any lag is one
/// sequential pass over the sorted order instead of two fresh sorts.
#[derive(Debug, Clone)]
pub struct SendOrder<'a> {
    x: &'a [f64],
    /// Indices of `x` in ascending order of value.
    order: Vec<u32>,
    /// `x` in ascending order (so tie detection reads memory in sequence).
    sorted: Vec<f64>,
    /// Whether any two values are equal (if not, ranks need no averaging).
    has_ties: bool,
}

impl<'a> SendOrder<'a> {
    /// Ranks the series (O(n log n), once).
    pub fn new(x: &'a [f64]) -> Result<Self, StatsError> {
        check_finite(x)?;
        if u32::try_from(x.len()).is_err() {
            return Err(StatsError::InvalidParameter {
                name: "series length",
                value: x.len() as f64,
                expected: "at most 2^32 - 1 values",
            });
        }
        let mut pairs: Vec<(f64, u32)> =
            x.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
        pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let has_ties = pairs.windows(2).any(|w| w[0].0 == w[1].0);
        let (sorted, order) = pairs.into_iter().unzip();
        Ok(Self {
            x,
            order,
            sorted,
            has_ties,
        })
    }

    /// Number of values in the series.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether the series is empty.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Twice the average ranks (1-based; ties share their mean, so doubling keeps them
    /// integral) of `x[..n-lag]` into `a` and of `x[lag..]` into `b`, in one pass.
    fn doubled_window_ranks(&self, lag: usize, a: &mut [u32], b: &mut [u32]) {
        let n = self.len();
        let head_end = n - lag; // window a is [0, head_end), window b is [lag, n)
        let (mut ra, mut rb) = (0u32, 0u32); // ranks handed out so far in each window
        if !self.has_ties {
            for &i in &self.order {
                let i = i as usize;
                if i < head_end {
                    ra += 1;
                    a[i] = 2 * ra;
                }
                if i >= lag {
                    rb += 1;
                    b[i - lag] = 2 * rb;
                }
            }
            return;
        }
        let mut start = 0;
        while start < n {
            let v = self.sorted[start];
            let mut end = start + 1;
            while end < n && self.sorted[end] == v {
                end += 1;
            }
            let group = &self.order[start..end];
            let in_a = group.iter().filter(|&&i| (i as usize) < head_end).count() as u32;
            let in_b = group.iter().filter(|&&i| (i as usize) >= lag).count() as u32;
            // Average of ranks r+1 ..= r+c is r + (c+1)/2; doubled, 2r + c + 1.
            let (da, db) = (2 * ra + in_a + 1, 2 * rb + in_b + 1);
            for &i in group {
                let i = i as usize;
                if i < head_end {
                    a[i] = da;
                }
                if i >= lag {
                    b[i - lag] = db;
                }
            }
            ra += in_a;
            rb += in_b;
            start = end;
        }
    }

    /// Spearman's ρ between `x[..n-lag]` and `x[lag..]`, as
    /// `scipy.stats.spearmanr(x[:-lag], x[lag:])`.
    pub fn lag(&self, lag: usize) -> Result<Correlation, StatsError> {
        self.lag_with(lag, &mut Vec::new(), &mut Vec::new())
    }

    fn lag_with(
        &self,
        lag: usize,
        a: &mut Vec<u32>,
        b: &mut Vec<u32>,
    ) -> Result<Correlation, StatsError> {
        let n = self.len();
        if lag == 0 || n < lag + 3 {
            return Err(StatsError::TooFew {
                test: TEST,
                needed: lag.max(1) + 3,
                got: n,
            });
        }
        let m = n - lag;
        a.resize(m, 0);
        b.resize(m, 0);
        self.doubled_window_ranks(lag, a, b);
        let rho = pearson_of_ranks(a, b).ok_or(StatsError::Constant {
            test: TEST,
            value: self.x[0],
        })?;
        Ok(Correlation {
            lag,
            rho,
            pvalue: two_sided_pvalue(rho, m),
            n: m,
        })
    }
}

/// Pearson's r of two vectors of doubled ranks, whose means are both m + 1. `None` when
/// either is constant.
fn pearson_of_ranks(a: &[u32], b: &[u32]) -> Option<f64> {
    let mean = a.len() as f64 + 1.0;
    let (mut sab, mut saa, mut sbb) = ([0.0f64; 4], [0.0f64; 4], [0.0f64; 4]);
    let chunks = a.len() / 4;
    for c in 0..chunks {
        for l in 0..4 {
            let dx = a[c * 4 + l] as f64 - mean;
            let dy = b[c * 4 + l] as f64 - mean;
            sab[l] += dx * dy;
            saa[l] += dx * dx;
            sbb[l] += dy * dy;
        }
    }
    for i in chunks * 4..a.len() {
        let (dx, dy) = (a[i] as f64 - mean, b[i] as f64 - mean);
        sab[0] += dx * dy;
        saa[0] += dx * dx;
        sbb[0] += dy * dy;
    }
    let total = |s: [f64; 4]| (s[0] + s[1]) + (s[2] + s[3]);
    let (sab, saa, sbb) = (total(sab), total(saa), total(sbb));
    if saa == 0.0 || sbb == 0.0 {
        return None;
    }
    Some((sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0))
}

/// P(|T| ≥ |t|) for t = ρ·√((n−2)/((1+ρ)(1−ρ))) with n − 2 degrees of freedom, as the
/// regularised incomplete beta I_{ν/(ν+t²)}(ν/2, 1/2), which keeps its precision in the
/// far tail where 1 − CDF would not.
fn two_sided_pvalue(rho: f64, n: usize) -> f64 {
    let df = (n - 2) as f64;
    if rho.abs() >= 1.0 {
        return 0.0;
    }
    let t2 = rho * rho * df / ((1.0 + rho) * (1.0 - rho));
    beta_reg(df / 2.0, 0.5, df / (df + t2))
}

/// Spearman's ρ between two series of the same length (average ranks for ties).
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Correlation, StatsError> {
    if x.len() != y.len() {
        return Err(StatsError::InvalidParameter {
            name: "second series length",
            value: y.len() as f64,
            expected: "the same length as the first series",
        });
    }
    if x.len() < 3 {
        return Err(StatsError::TooFew {
            test: TEST,
            needed: 3,
            got: x.len(),
        });
    }
    let rank = |s: &[f64]| -> Result<Vec<u32>, StatsError> {
        let order = SendOrder::new(s)?;
        let mut out = vec![0; s.len()];
        // Lag 0: both windows are the whole series.
        order.doubled_window_ranks(0, &mut out, &mut vec![0; s.len()]);
        Ok(out)
    };
    let (a, b) = (rank(x)?, rank(y)?);
    let rho = pearson_of_ranks(&a, &b).ok_or(StatsError::Constant {
        test: TEST,
        value: x[0],
    })?;
    Ok(Correlation {
        lag: 0,
        rho,
        pvalue: two_sided_pvalue(rho, x.len()),
        n: x.len(),
    })
}

/// Spearman's ρ of a series with itself `lag` steps later (see [`SendOrder::lag`]; use
/// [`SendOrder`] directly to test several lags).
pub fn spearman_lag(x: &[f64], lag: usize) -> Result<Correlation, StatsError> {
    SendOrder::new(x)?.lag(lag)
}

/// The outcome of the search for the smallest lag at which samples look independent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LagSearch {
    /// The significance level of each test.
    pub alpha: f64,
    /// Every lag tested, in order, with its correlation.
    pub tested: Vec<Correlation>,
    /// The first lag whose correlation is not significant, if any on the ladder was.
    pub lag: Option<usize>,
}

/// The default ladder of lags for `n` samples: 1 to 10, then a 1-1.2-1.5-2-2.5-3-4-5-6-8
/// progression, up to n/10 (a lag needs enough pairs to mean anything).
pub fn default_lag_ladder(n: usize) -> Vec<usize> {
    const STEPS: [usize; 10] = [10, 12, 15, 20, 25, 30, 40, 50, 60, 80];
    let top = (n / 10).max(1);
    let mut ladder: Vec<usize> = (1..=10usize.min(top)).collect();
    let mut decade = 1usize;
    'outer: loop {
        for step in STEPS {
            let lag = step * decade;
            if lag > top {
                break 'outer;
            }
            if lag > 10 {
                ladder.push(lag);
            }
        }
        decade = match decade.checked_mul(10) {
            Some(d) => d,
            None => break,
        };
    }
    ladder
}

/// Climbs `ladder` and stops at the first lag whose Spearman correlation is not
/// significant at `alpha` (p-value > alpha): keeping one sample in that many makes the
/// kept samples independent, which is how Lancet chooses its sampling rate.
pub fn decorrelation_lag(x: &[f64], alpha: f64, ladder: &[usize]) -> Result<LagSearch, StatsError> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(StatsError::InvalidParameter {
            name: "alpha",
            value: alpha,
            expected: "a fraction strictly between 0 and 1",
        });
    }
    let ranked = SendOrder::new(x)?;
    let mut search = LagSearch {
        alpha,
        tested: Vec::new(),
        lag: None,
    };
    let usable: Vec<usize> = ladder
        .iter()
        .copied()
        .take_while(|&l| l > 0 && x.len() >= l + 3)
        .collect();
    // Lags are tested two at a time, one per thread; the second is wasted at most once.
    let (mut a1, mut b1, mut a2, mut b2) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    'climb: for pair in usable.chunks(2) {
        let results: Vec<Result<Correlation, StatsError>> = match *pair {
            [l1, l2] if x.len() >= 100_000 => std::thread::scope(|s| {
                let second = s.spawn(|| ranked.lag_with(l2, &mut a2, &mut b2));
                let first = ranked.lag_with(l1, &mut a1, &mut b1);
                vec![first, second.join().unwrap_or_else(|_| ranked.lag(l2))]
            }),
            _ => pair
                .iter()
                .map(|&l| ranked.lag_with(l, &mut a1, &mut b1))
                .collect(),
        };
        for c in results {
            let c = c?;
            search.tested.push(c);
            if c.pvalue > alpha {
                search.lag = Some(c.lag);
                break 'climb;
            }
        }
    }
    if search.tested.is_empty() {
        return Err(StatsError::TooFew {
            test: TEST,
            needed: 4,
            got: x.len(),
        });
    }
    Ok(search)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_get_average_ranks() {
        let x = [3.0, 1.0, 3.0, 2.0];
        let order = SendOrder::new(&x).unwrap();
        let (mut a, mut b) = (vec![0; 4], vec![0; 4]);
        order.doubled_window_ranks(0, &mut a, &mut b);
        assert_eq!(a, vec![7, 2, 7, 4]);
        // Windows [3, 1, 3] and [1, 3, 2] of the same series, at lag 1.
        let (mut a, mut b) = (vec![0; 3], vec![0; 3]);
        order.doubled_window_ranks(1, &mut a, &mut b);
        assert_eq!(a, vec![5, 2, 5]);
        assert_eq!(b, vec![2, 6, 4]);
    }

    #[test]
    fn perfectly_monotone_series_has_rho_one() {
        let x: Vec<f64> = (0..50).map(f64::from).collect();
        let c = spearman_lag(&x, 1).unwrap();
        assert_eq!(c.rho, 1.0);
        assert_eq!(c.pvalue, 0.0);
        assert_eq!(c.n, 49);
    }

    #[test]
    fn ladder_is_increasing_and_bounded() {
        let ladder = default_lag_ladder(100_000);
        assert!(ladder.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(&ladder[..12], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15]);
        assert_eq!(*ladder.last().unwrap(), 10_000);
        assert_eq!(default_lag_ladder(30), vec![1, 2, 3]);
    }

    #[test]
    fn a_moving_average_decorrelates_past_its_window() {
        // MA(2) of a deterministic pseudo-random sequence: lags 1 and 2 correlated, 3+ not.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let e: Vec<f64> = (0..4002)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect();
        let x: Vec<f64> = e.windows(3).map(|w| w[0] + w[1] + w[2]).collect();
        let search = decorrelation_lag(&x, 0.01, &[1, 2, 3, 4, 5, 6]).unwrap();
        assert!(
            search.tested[0].rho > 0.5 && search.tested[1].rho > 0.2,
            "{search:?}"
        );
        assert!(search.lag.is_some_and(|l| l >= 3), "{search:?}");
    }

    /// Long series give large degrees of freedom, where a continued fraction that is cut
    /// short goes wrong: reference values from `2 * scipy.stats.t.sf(|t|, n - 2)`.
    #[test]
    fn pvalues_hold_for_large_samples() {
        let reference = [
            (100_000, 0.0005, 0.8743686107538764),
            (100_000, 0.01, 0.0015651897452783157),
            (1_000_000, 0.0001, 0.9203444244856606),
            (1_000_000, 0.001, 0.3173109918050285),
            (1_000_000, 0.002, 0.04550031788729119),
            (1_000_000, 0.004, 6.333953943469721e-05),
            (1_000_000, 0.01, 1.520319803992726e-23),
            (10_000_000, 0.0001, 0.7518296634468054),
            (10_000_000, 0.001, 0.0015654001329105398),
            (10_000_000, 0.002, 2.5395375809856394e-10),
        ];
        for (n, rho, want) in reference {
            let got = two_sided_pvalue(rho, n);
            assert!(
                ((got - want) / want).abs() < 1e-6,
                "n={n} rho={rho}: {got:e} vs {want:e}"
            );
        }
    }

    /// The two-threaded climb on a long series stops where a one-lag-at-a-time climb does.
    #[test]
    fn threaded_search_equals_sequential_climb() {
        // An AR(1)-like integer series with many ties: correlated for a few dozen lags.
        let mut state = 88172645463325252u64;
        let mut level = 0.0f64;
        let x: Vec<f64> = (0..150_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                level = 0.9 * level + ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
                (level * 10.0).round()
            })
            .collect();
        let ladder = default_lag_ladder(x.len());
        let search = decorrelation_lag(&x, 0.05, &ladder).unwrap();
        let ranked = SendOrder::new(&x).unwrap();
        let sequential = ladder
            .iter()
            .map(|&l| ranked.lag(l).unwrap())
            .find(|c| c.pvalue > 0.05)
            .map(|c| c.lag);
        assert_eq!(search.lag, sequential);
        assert!(search.tested.len() > 3, "{search:?}");
        assert_eq!(search.tested.last().map(|c| c.lag), search.lag);
    }

    #[test]
    fn constant_series_is_an_error() {
        assert!(matches!(
            spearman_lag(&[2.0; 10], 1),
            Err(StatsError::Constant { .. })
        ));
    }
}
