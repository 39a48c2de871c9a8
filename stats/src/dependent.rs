//! Percentile confidence intervals that stay valid when the samples are autocorrelated.
//!
//! The order-statistic interval ([`crate::percentile_ci`]) assumes independent samples.
//! Latencies in send order are not: a queue that builds up, or a host that stalls for a
//! millisecond, lifts many consecutive requests at once, and the iid interval then covers
//! the true percentile far less often than its nominal 95% (12% for p99 of an M/M/1 queue
//! at ρ = 0.8 over 100,000 samples).
//!
//! The method here is batching, as the steady-state simulation literature does it for
//! quantiles (Heidelberger & Lewis, "Quantile estimation in dependent sequences",
//! Operations Research 32(1), 1984; the batch-size search of Fishman & Yarberry's LBATCH,
//! INFORMS J. Computing 9(3), 1997; the correlation adjustment of Alexopoulos, Goldsman,
//! Mokashi, Tien & Wilson's Sequest, Operations Research 67(4), 2019), applied to the
//! quantile's *indicator*:
//!
//! 1. q̂ is the sample p-quantile. By the Bahadur representation, q̂ − q ≈ (p − F̂(q))/f(q):
//!    the estimator's uncertainty is that of the share of samples at or below q, whose
//!    variance under dependence is p(1−p)·VIF/n, with VIF the variance inflation (the
//!    integrated autocorrelation of the indicator 1\[x ≤ q\], 1 for iid samples).
//! 2. VIF is estimated by non-overlapping batch means of the indicator. The batch size m
//!    starts at the smallest that holds a few tail samples per batch and doubles while the
//!    batch counts are still correlated at lag 1 (LBATCH), down to [`MIN_BATCHES`]
//!    batches, where a residual r₁ up to [`MAX_RESIDUAL_R1`] is accepted whether the lag-1
//!    test passes or not (as Sequest does at its fewest batches);
//!    the residual lag-1 correlation r₁ then inflates the variance by
//!    (1 + r₁)/(1 − r₁) (Sequest's adjustment), or by the Bartlett-weighted sum of the
//!    first ∛b lags when larger (Newey & West 1987: a queue's correlation decays slower
//!    than geometrically), and VIF is never taken below 1: dependence can only widen the
//!    interval. The accepted batch size is doubled once more while enough batches remain
//!    ([`SAFETY_DOUBLINGS`]): the lag-1 test accepts batches still a little too small.
//! 3. The interval is inverted through the order statistics, as the iid one is (Le Boudec,
//!    thm. 2.1): ranks np ∓ t·√(np(1−p)·VIF), with t Student's quantile on b − 1 degrees of
//!    freedom. No density estimate is needed, the bounds are samples, and on iid data the
//!    interval is the order-statistic one widened only by t/z and the noise of VIF (a few
//!    per cent).
//! 4. Samples beyond a high quantile come in clusters, so the batch counts are skewed;
//!    Hall's Cornish-Fisher correction of the studentized mean moves the interval toward
//!    the skew, and neither side is ever narrower than the iid interval's.
//! 5. An interval is given only on at least [`MIN_EFFECTIVE_TAIL`] effective tail
//!    samples; short of that, the answer is how many samples would do.
//!
//! [`percentile_ci_dependent_with`] builds the same interval on batches whose count grows
//! with n ([`Batching::Growing`]) or on overlapping batch means ([`BatchMeans::Overlapping`]):
//! alternatives the coverage harness measures against the stopping rule's cost, which the
//! methodology does not use.
//!
//! Its coverage is measured, not assumed: `vernier validate --coverage` replicates iid,
//! M/M/1 and stalling-server series with known quantiles (docs/RESULTS.md).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::error::{StatsError, check_finite};
use crate::percentile::{min_samples_for_ci, percentile};

/// Fewest batches an interval is built from: fewer, and the variance estimate is too noisy
/// (Student's t on 9 degrees of freedom is already 15% wider than the normal).
pub const MIN_BATCHES: usize = 10;
/// Most batches the search starts from: more only adds work, not precision.
const MAX_BATCHES: usize = 256;
/// Tail samples (beyond the quantile, on its rarer side) expected per batch at the smallest
/// batch size. One is enough for the variance of the batch counts (what the method uses),
/// and smaller batches leave more of them to estimate it from.
pub(crate) const TAIL_PER_BATCH: f64 = 1.0;
/// The fewest tail samples the interval is built on, counted at their effective number
/// (n·min(p, 1−p)/VIF). The textbook condition for the normal approximation of a
/// proportion is np ≥ 10, but tail samples of a queue come in clusters: at 10 the share
/// below a queue's true p99 is skewed, and the series that stop first are those whose
/// variance was underestimated; at 30 the skew is about halved and the coverage holds
/// (docs/history/results-2026-11-24-to-29.md, "Figures behind the code's constants"). A 20%-wide p99 CI of an
/// exponential tail needs about 18 effective samples anyway, so the methodology seldom
/// waits for this one.
pub const MIN_EFFECTIVE_TAIL: f64 = 30.0;
/// Once the lag-1 search accepts a batch size, it is doubled this many times more while
/// [`SAFE_MIN_BATCHES`] batches remain. Batch means underestimate the variance by a term
/// that shrinks as 1/m, and a queue's correlation decays slowly: on M/M/1 at ρ = 0.9 the
/// p99 indicator's batch-means inflation is 289 at m = 2,000, 309 at 4,000 and 344 at
/// 64,000, while the search accepts m ≈ 2,000 (its lag-1 test cannot see a correlation
/// that small per lag). Sequest's AR(1) adjustment recovers part of it, one doubling halves
/// what is left; on independent samples it costs half the batches, and t on fewer degrees of
/// freedom (a few per cent of width).
pub const SAFETY_DOUBLINGS: u32 = 1;
/// The fewest batches a safety doubling may leave.
const SAFE_MIN_BATCHES: usize = 20;
/// One-sided normal quantile of the lag-1 test on batch counts (LBATCH tests at 10%).
const LAG1_Z: f64 = 1.2816;
/// The residual lag-1 correlation the adjustment accepts; beyond it the batches are
/// doubled again.
pub const MAX_RESIDUAL_R1: f64 = 0.5;

/// A percentile's confidence interval under dependence, with how it was obtained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DependentCi {
    /// Lower bound (a sample).
    pub low: f64,
    /// Upper bound (a sample).
    pub high: f64,
    /// How it was made (its name in records and `vernier analyze`'s JSON).
    pub method: CiMethod,
    /// Samples per batch.
    pub batch_size: usize,
    /// Batches used.
    pub batches: usize,
    /// The variance inflation applied (≥ 1; 1 for independent samples).
    pub variance_inflation: f64,
    /// The lag-1 correlation of the batch counts that was left.
    pub batch_lag1: f64,
}

impl DependentCi {
    /// high − low.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// How a dependence-valid interval was made ([`DependentCi::method`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CiMethod {
    /// Batch means of the quantile's indicator, inverted through the order statistics
    /// (this module's method).
    #[serde(rename = "batched-indicator")]
    BatchedIndicator,
}

impl std::fmt::Display for CiMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CiMethod::BatchedIndicator => "batched-indicator",
        })
    }
}

/// How the batch size is chosen. The methodology's is [`Batching::Searched`]; the other
/// exists so that the coverage harness can measure what a consistent variance estimate
/// buys the stopping rule.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub enum Batching {
    /// The lag-1 search from the smallest batch (LBATCH) with its safety doubling: the
    /// module's step 2.
    #[default]
    Searched,
    /// ⌊n^`exponent`⌋ batches of n/⌊n^`exponent`⌋ samples (at least the smallest batch),
    /// with no search: batch size and count both grow with n, which keeps the batch-means
    /// variance consistent (Glynn & Whitt, Operations Research Letters 10(8), 1991; Flegal
    /// & Jones, Annals of Statistics 38(2), 2010, with batch sizes n^(1/2) and n^(1/3)).
    /// Batches still correlated at lag 1 beyond `MAX_RESIDUAL_R1` (0.5) give no interval.
    Growing {
        /// The batch count's exponent, between 0 and 1.
        exponent: f64,
    },
}

/// Which batch means estimate the variance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum BatchMeans {
    /// Consecutive batches that do not overlap, on b − 1 degrees of freedom.
    #[default]
    Nonoverlapping,
    /// Every batch of m consecutive samples, n − m + 1 of them (Meketon & Schmeiser,
    /// Winter Simulation Conference 1984): the same mean with about 2/3 of the variance,
    /// taken on ⌊1.5·(b − 1)⌋ degrees of freedom (Welch 1987's approximation).
    Overlapping,
}

/// How [`percentile_ci_dependent_with`] builds its interval; [`CiOptions::default`] is
/// [`percentile_ci_dependent`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CiOptions {
    /// How the batch size is chosen.
    pub batching: Batching,
    /// Which batch means estimate the variance.
    pub batch_means: BatchMeans,
}

/// Why a dependence-valid interval could not be built, with what would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NeedMore {
    /// What was missing, in words.
    pub reason: String,
    /// Samples (in the same series) that would do, at the dependence seen.
    pub needed: usize,
    /// Samples given.
    pub have: usize,
    /// When dependence is why: the batch size (samples) the batches were still correlated
    /// at, or the one the variance inflation was measured over, so that a caller can say
    /// over how long a time the samples depend on each other.
    pub correlated_over: Option<usize>,
}

/// The lag-1 sample autocorrelation of `x` (0 for fewer than 3 values or a constant).
fn lag1(x: &[f64]) -> f64 {
    lag_k(x, 1)
}

/// The lag-`k` sample autocorrelation of `x` (0 for fewer than k + 2 values or a
/// constant).
fn lag_k(x: &[f64], k: usize) -> f64 {
    let n = x.len();
    if n < k + 2 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let var: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    if var <= 0.0 {
        return 0.0;
    }
    let cov: f64 = x
        .iter()
        .zip(&x[k..])
        .map(|(a, b)| (a - mean) * (b - mean))
        .sum();
    cov / var
}

/// Counts of `series` at or below `q` in consecutive batches of `m` (the last partial
/// batch dropped): each sample counts its weight (weights of mean 1), or 1 without weights.
fn batch_counts(series: &[f64], weights: Option<&[f64]>, q: f64, m: usize) -> Vec<f64> {
    match weights {
        None => series
            .chunks_exact(m)
            .map(|c| c.iter().filter(|&&x| x <= q).count() as f64)
            .collect(),
        Some(w) => series
            .chunks_exact(m)
            .zip(w.chunks_exact(m))
            .map(|(c, w)| {
                c.iter()
                    .zip(w)
                    .filter(|(x, _)| **x <= q)
                    .map(|(_, w)| w)
                    .sum()
            })
            .collect(),
    }
}

/// The variance inflation of the indicator's batch `counts` of batches of `m`: their
/// variance over the binomial one, times Sequest's (1 + r₁)/(1 − r₁) for the lag-1
/// correlation `r1` left between batches (or the Bartlett sum of the first lags, when
/// larger), never below 1.
fn inflation(counts: &[f64], m: usize, r1: f64) -> f64 {
    let b = counts.len();
    if b < 2 {
        return 1.0;
    }
    let mean = counts.iter().sum::<f64>() / b as f64;
    let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (b - 1) as f64;
    let share = mean / m as f64;
    let iid_var = m as f64 * share * (1.0 - share);
    // Sequest's adjustment assumes the residual correlation decays geometrically (AR(1));
    // a queue's long busy periods leave it decaying slower, so the Bartlett-weighted sum of
    // the first ∛b lags (Newey & West, Econometrica 55(3), 1987) is taken when it is larger.
    if iid_var > 0.0 {
        (var * adjustment(counts, r1) / iid_var).max(1.0)
    } else {
        1.0
    }
}

/// The factor for the correlation `r1` left between batch `counts`: Sequest's
/// (1 + r₁)/(1 − r₁), or the Bartlett sum of the first ∛b lags when larger.
fn adjustment(counts: &[f64], r1: f64) -> f64 {
    let b = counts.len();
    let r1 = r1.clamp(0.0, MAX_RESIDUAL_R1);
    let ar1 = (1.0 + r1) / (1.0 - r1);
    let lags = (b as f64).cbrt().floor().max(1.0) as usize;
    let bartlett = 1.0
        + 2.0
            * (1..=lags)
                .map(|k| (1.0 - k as f64 / (lags + 1) as f64) * lag_k(counts, k))
                .sum::<f64>();
    ar1.max(bartlett)
}

/// The batch-means variance of the indicator's batch `counts` of batches of `m` over the
/// binomial one, before any adjustment (1 when the binomial variance is 0): the variance
/// inflation at batch size `m`, which for a stationary series levels off as `m` grows.
pub(crate) fn batch_inflation(counts: &[f64], m: usize) -> f64 {
    let b = counts.len();
    if b < 2 {
        return 1.0;
    }
    let mean = counts.iter().sum::<f64>() / b as f64;
    let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (b - 1) as f64;
    let share = mean / m as f64;
    let iid_var = m as f64 * share * (1.0 - share);
    if iid_var > 0.0 { var / iid_var } else { 1.0 }
}

/// The sample skewness (g₁) of `x`, clamped to ±2: from a few batches it is noisy, and a
/// larger correction than that is no longer an expansion's small term.
fn skewness(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if n < 3.0 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / n;
    let m2 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let m3 = x.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / n;
    if m2 <= 0.0 {
        return 0.0;
    }
    (m3 / m2.powf(1.5)).clamp(-2.0, 2.0)
}

/// Student's t quantile at (1 + confidence)/2 on `dof` degrees of freedom (infinite for
/// none).
pub(crate) fn t_quantile(confidence: f64, dof: usize) -> f64 {
    StudentsT::new(0.0, 1.0, dof as f64)
        .map(|t| t.inverse_cdf((1.0 + confidence) / 2.0))
        .unwrap_or(f64::INFINITY)
}

/// Checks that the percentile `p` and the `confidence` are fractions strictly between 0
/// and 1.
pub(crate) fn check_fractions(p: f64, confidence: f64) -> Result<(), StatsError> {
    for (name, v) in [("percentile", p), ("confidence", confidence)] {
        if !(v > 0.0 && v < 1.0) {
            return Err(StatsError::InvalidParameter {
                name,
                value: v,
                expected: "a fraction strictly between 0 and 1",
            });
        }
    }
    Ok(())
}

/// Checks the fractions and that `sorted` holds the series' samples, all finite.
fn check_input(series: &[f64], sorted: &[f64], p: f64, confidence: f64) -> Result<(), StatsError> {
    check_fractions(p, confidence)?;
    if series.len() != sorted.len() {
        return Err(StatsError::InvalidParameter {
            name: "sorted",
            value: sorted.len() as f64,
            expected: "the same samples as the series, sorted",
        });
    }
    check_finite(series)
}

/// What `n` samples lack before their dependence can even be looked at: [`MIN_BATCHES`]
/// batches of `m_min`, the iid interval's `iid_min`, and [`MIN_EFFECTIVE_TAIL`] samples
/// beyond the `p`-th percentile (`tail` its rarer side's share); `None` when enough.
pub(crate) fn too_short(
    n: usize,
    p: f64,
    tail: f64,
    iid_min: usize,
    m_min: usize,
) -> Option<NeedMore> {
    let batched = iid_min.max(m_min * MIN_BATCHES);
    let tail_min = (MIN_EFFECTIVE_TAIL / tail).ceil() as usize;
    if n < batched.max(tail_min) {
        let reason = if tail_min > batched {
            format!(
                "{MIN_EFFECTIVE_TAIL} samples beyond p{} are needed at the least (more when they depend on each other)",
                crate::percent::format_percentile(p)
            )
        } else {
            format!(
                "{MIN_BATCHES} batches of at least {m_min} samples are needed to see the dependence"
            )
        };
        return Some(NeedMore {
            reason,
            needed: batched.max(tail_min),
            have: n,
            correlated_over: None,
        });
    }
    None
}

/// The batch size the lag-1 search accepts for the indicator of `q` over `series`
/// (starting from `m_min` samples, or [`MAX_BATCHES`] batches), then doubled
/// [`SAFETY_DOUBLINGS`] times more while [`SAFE_MIN_BATCHES`] batches remain; with the
/// batch counts at that size and their lag-1 correlation. `Err` when the batches are still
/// correlated beyond [`MAX_RESIDUAL_R1`] at the fewest batches.
fn batches(
    series: &[f64],
    weights: Option<&[f64]>,
    q: f64,
    m_min: usize,
    batching: Batching,
) -> Result<(usize, Vec<f64>, f64), NeedMore> {
    let n = series.len();
    if let Batching::Growing { exponent } = batching {
        return grown_batches(series, weights, q, m_min, exponent);
    }
    let mut m = (n / MAX_BATCHES).max(m_min);
    let (mut counts, mut r1) = loop {
        let counts = batch_counts(series, weights, q, m);
        let b = counts.len();
        let r1 = lag1(&counts);
        let accepted = r1 <= LAG1_Z / (b as f64).sqrt() || r1 <= 0.0;
        if accepted && r1 <= MAX_RESIDUAL_R1 {
            break (counts, r1);
        }
        let last = n / (2 * m) < MIN_BATCHES;
        // At the fewest batches the lag-1 test is weakest (r₁'s standard error is 1/√b,
        // 0.25 on 16 batches) and Sequest's rule applies: the correlation left is
        // adjusted for, (1 + r₁)/(1 − r₁), rather than declared out of reach, as long as
        // it is moderate.
        if last && r1 <= MAX_RESIDUAL_R1 {
            break (counts, r1);
        }
        if last {
            // At least MIN_BATCHES batches twice the size.
            return Err(still_correlated(m, r1, b, n, 2 * m * MIN_BATCHES));
        }
        m *= 2;
    };
    for _ in 0..SAFETY_DOUBLINGS {
        if n / (2 * m) < SAFE_MIN_BATCHES {
            break;
        }
        m *= 2;
        counts = batch_counts(series, weights, q, m);
        r1 = lag1(&counts);
    }
    Ok((m, counts, r1))
}

/// Why `b` batches of `m` (of `n` samples), correlated at lag 1 by `r1`, give no interval,
/// with the samples `needed` for batches long enough.
fn still_correlated(m: usize, r1: f64, b: usize, n: usize, needed: usize) -> NeedMore {
    NeedMore {
        reason: format!(
            "batches of {m} samples are still correlated (lag-1 r = {r1:.2} over {b} batches): \
             the samples depend on each other over more than {m} requests"
        ),
        needed,
        have: n,
        correlated_over: Some(m),
    }
}

/// The batches of [`Batching::Growing`]: ⌊n^`exponent`⌋ of them (at least [`MIN_BATCHES`]),
/// each of at least `m_min`; `Err` when their lag-1 correlation is beyond
/// [`MAX_RESIDUAL_R1`], with the samples whose batches would be twice as long.
fn grown_batches(
    series: &[f64],
    weights: Option<&[f64]>,
    q: f64,
    m_min: usize,
    exponent: f64,
) -> Result<(usize, Vec<f64>, f64), NeedMore> {
    let n = series.len();
    let exponent = exponent.clamp(0.0, 1.0);
    let count = ((n as f64).powf(exponent).floor() as usize).max(MIN_BATCHES);
    let m = (n / count).max(m_min).max(1);
    let counts = batch_counts(series, weights, q, m);
    let r1 = lag1(&counts);
    if r1 > MAX_RESIDUAL_R1 {
        // The batch size grows as n^(1 − exponent): twice the batch takes 2^(1/(1 − e)) n.
        let scale = 2f64.powf(1.0 / (1.0 - exponent).max(0.25));
        let needed = ((n as f64 * scale).ceil() as usize).max(n + 1);
        return Err(still_correlated(m, r1, counts.len(), n, needed));
    }
    Ok((m, counts, r1))
}

/// The variance inflation from every overlapping batch of `m` (Meketon & Schmeiser's
/// estimator of the indicator's asymptotic variance, over the binomial p(1 − p)), times the
/// same adjustment for the correlation left as the non-overlapping `counts` get, never
/// below 1.
fn overlapping_inflation(
    series: &[f64],
    weights: Option<&[f64]>,
    q: f64,
    m: usize,
    counts: &[f64],
    r1: f64,
) -> f64 {
    let n = series.len();
    if m == 0 || n <= m {
        return 1.0;
    }
    // Prefix sums of the (weighted) indicator: every batch's count in one pass.
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    let mut sum = 0.0;
    for (i, &x) in series.iter().enumerate() {
        if x <= q {
            sum += weights.map_or(1.0, |w| w[i]);
        }
        prefix.push(sum);
    }
    let share = sum / n as f64;
    let iid = share * (1.0 - share);
    if iid <= 0.0 {
        return 1.0;
    }
    let mf = m as f64;
    let squares: f64 = (0..=n - m)
        .map(|j| ((prefix[j + m] - prefix[j]) / mf - share).powi(2))
        .sum();
    let nf = n as f64;
    let sigma2 = nf * mf / ((nf - mf + 1.0) * (nf - mf)) * squares;
    (sigma2 * adjustment(counts, r1) / iid).max(1.0)
}

/// The `p`-th percentile's confidence interval from `series` (in the order it was
/// produced, e.g. send order) and the same values sorted ascending, valid for stationary,
/// autocorrelated series (see the module's documentation for the method and references).
///
/// `Ok(Err(NeedMore))` when the series is too short for the dependence it shows (the
/// batches are still correlated beyond [`MAX_RESIDUAL_R1`] at [`MIN_BATCHES`], or the inflated ranks fall outside the
/// samples); `Err` only for invalid input.
pub fn percentile_ci_dependent(
    series: &[f64],
    sorted: &[f64],
    p: f64,
    confidence: f64,
) -> Result<Result<DependentCi, NeedMore>, StatsError> {
    percentile_ci_dependent_with(series, sorted, p, confidence, &CiOptions::default())
}

/// [`percentile_ci_dependent`] with the batches chosen and used as `options` say: what the
/// coverage harness measures the alternatives with (the methodology's is the default).
pub fn percentile_ci_dependent_with(
    series: &[f64],
    sorted: &[f64],
    p: f64,
    confidence: f64,
    options: &CiOptions,
) -> Result<Result<DependentCi, NeedMore>, StatsError> {
    check_input(series, sorted, p, confidence)?;
    let n = series.len();
    let iid_min = min_samples_for_ci(p, confidence)?;
    let Some(q) = percentile(sorted, p) else {
        return Ok(Err(NeedMore {
            reason: "no samples".into(),
            needed: iid_min.max(MIN_BATCHES),
            have: 0,
            correlated_over: None,
        }));
    };
    let tail = p.min(1.0 - p);
    let m_min = (TAIL_PER_BATCH / tail).ceil() as usize;
    if let Some(more) = too_short(n, p, tail, iid_min, m_min) {
        return Ok(Err(more));
    }
    Ok(interval_with(
        Weighted {
            series,
            weights: None,
            q,
        },
        p,
        confidence,
        m_min,
        |rank| sorted[rank - 1],
        options,
    ))
}

/// A series in the order it was produced, with a weight per sample (of mean 1) or none,
/// and the percentile estimate `q` its interval is built around.
pub(crate) struct Weighted<'a> {
    /// The samples, in the order produced.
    pub(crate) series: &'a [f64],
    /// Each sample's weight, of mean 1; `None` for all 1.
    pub(crate) weights: Option<&'a [f64]>,
    /// The percentile's estimate.
    pub(crate) q: f64,
}

/// The interval around `at.q` from the batched (weighted) indicator: steps 2 to 5 of the
/// module's method. `at_rank(r)` is the sample at (weighted) rank `r`, 1 ≤ r ≤ n: the r-th
/// smallest, or the smallest whose cumulative weight reaches r.
pub(crate) fn interval(
    at: Weighted<'_>,
    p: f64,
    confidence: f64,
    m_min: usize,
    at_rank: impl Fn(usize) -> f64,
) -> Result<DependentCi, NeedMore> {
    interval_with(at, p, confidence, m_min, at_rank, &CiOptions::default())
}

/// [`interval`] with the batches chosen and used as `options` say.
fn interval_with(
    at: Weighted<'_>,
    p: f64,
    confidence: f64,
    m_min: usize,
    at_rank: impl Fn(usize) -> f64,
    options: &CiOptions,
) -> Result<DependentCi, NeedMore> {
    let Weighted { series, weights, q } = at;
    let n = series.len();
    let tail = p.min(1.0 - p);
    let (m, counts, r1) = batches(series, weights, q, m_min, options.batching)?;
    let b = counts.len();
    let (vif, dof) = match options.batch_means {
        BatchMeans::Nonoverlapping => (inflation(&counts, m, r1), b - 1),
        BatchMeans::Overlapping => (
            overlapping_inflation(series, weights, q, m, &counts, r1),
            (1.5 * (b - 1) as f64).floor() as usize,
        ),
    };
    let t = t_quantile(confidence, dof);
    let np = n as f64 * p;
    let sd = (np * (1.0 - p) * vif).sqrt();
    // Skewness: samples beyond a high quantile come in clusters (a long busy period, a
    // stall), so the count per batch of samples above q is right-skewed, and a series that
    // happened to hold few clusters has both a low estimate and a low variance. Hall's
    // Cornish-Fisher correction of the studentized mean (The Bootstrap and Edgeworth
    // Expansion, 1992, §3.5), as Sequest applies it, moves the interval toward the side the
    // skew points to; neither side is ever narrower than the iid interval's.
    let skew = skewness(&counts);
    let shift = -skew * (2.0 * t * t + 1.0) / (6.0 * (b as f64).sqrt());
    let iid = t * (np * (1.0 - p)).sqrt();
    // Counts of samples at or below q skewed left (tail counts skewed right) push q up.
    let h_low = ((t - shift) * sd).max(iid);
    let h_high = ((t + shift) * sd).max(iid);
    let h = h_low.max(h_high);
    let j = (np - h_low).floor() as i64;
    let k = (np + h_high).ceil() as i64 + 1;
    let effective_tail = n as f64 * tail / vif;
    if j < 1 || k > n as i64 || effective_tail < MIN_EFFECTIVE_TAIL {
        // The rank half-width grows as √n while the room beyond it grows as n; the
        // effective tail count grows as n.
        let room = if j < 1 { np } else { n as f64 - np };
        let scale = (h / room.max(1.0))
            .powi(2)
            .max(MIN_EFFECTIVE_TAIL / effective_tail);
        return Err(NeedMore {
            reason: format!(
                "{effective_tail:.1} effective samples beyond p{} (variance inflated {vif:.1}× by dependence; {MIN_EFFECTIVE_TAIL} needed)",
                crate::percent::format_percentile(p)
            ),
            needed: ((n as f64 * scale * 1.1).ceil() as usize).max(n + 1),
            have: n,
            // The inflation was measured over batches of m: the dependence reaches that far.
            correlated_over: (vif > 1.0).then_some(m),
        });
    }
    Ok(DependentCi {
        low: at_rank(j as usize),
        high: at_rank(k as usize),
        method: CiMethod::BatchedIndicator,
        batch_size: m,
        batches: b,
        variance_inflation: vif,
        batch_lag1: r1,
    })
}

#[cfg(test)]
pub(crate) mod tests;
