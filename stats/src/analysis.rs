//! The whole analysis of one latency series, as `vernier analyze` prints it.

use serde::Serialize;

use crate::adf::{Adf, AdfOptions, CriticalValues, Regression, adf};
use crate::anderson::{AndersonDarling, anderson_exponential};
use crate::dependent::{DependentCi, percentile_ci_dependent};
use crate::error::StatsError;
use crate::percentile::{percentile, percentile_ci, sort_samples};
use crate::spearman::{Correlation, decorrelation_lag, default_lag_ladder};

/// What to compute; the default is vernier's: p50 to p99.99 at 95% confidence, tests at 5%,
/// ADF with a constant and AIC lag selection.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisOptions {
    /// Percentiles as fractions (0.99 for p99).
    pub percentiles: Vec<f64>,
    /// Confidence of the percentile intervals.
    pub confidence: f64,
    /// Significance level of the independence, stationarity and inter-arrival tests.
    pub alpha: f64,
    /// Options of the stationarity test.
    pub adf: AdfOptions,
    /// Lags to try in the decorrelation search; `None` for [`default_lag_ladder`].
    pub lag_ladder: Option<Vec<usize>>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        Self {
            percentiles: vec![0.5, 0.9, 0.95, 0.99, 0.999, 0.9999],
            confidence: 0.95,
            alpha: 0.05,
            adf: AdfOptions::default(),
            lag_ladder: None,
        }
    }
}

/// A percentile with its order-statistic confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PercentileEstimate {
    /// The percentile as a fraction.
    pub p: f64,
    /// Its value (NumPy's linear interpolation).
    pub value: f64,
    /// Lower bound of the interval, when the samples suffice.
    pub ci_low: Option<f64>,
    /// Upper bound of the interval, when the samples suffice.
    pub ci_high: Option<f64>,
    /// Why there is no interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_note: Option<String>,
    /// The interval valid for autocorrelated, stationary samples
    /// ([`crate::percentile_ci_dependent`]); `None` when the samples are too few for the
    /// dependence they show.
    pub ci_under_dependence: Option<DependentCi>,
    /// Why there is no such interval, with the samples that would do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_under_dependence_reason: Option<String>,
}

/// A part of the analysis that either ran or says why it could not.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Section<T> {
    /// The test ran.
    Done(T),
    /// The test could not run on these data.
    Failed {
        /// Why.
        error: String,
    },
}

impl<T> Section<T> {
    fn from_result(r: Result<T, StatsError>) -> Self {
        match r {
            Ok(v) => Section::Done(v),
            Err(e) => Section::Failed {
                error: e.to_string(),
            },
        }
    }

    /// The result, if the test ran.
    pub fn done(&self) -> Option<&T> {
        match self {
            Section::Done(v) => Some(v),
            Section::Failed { .. } => None,
        }
    }
}

/// Are the samples, in send order, independent?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Independence {
    /// Significance level.
    pub alpha: f64,
    /// Spearman's ρ at lag 1.
    pub lag1_rho: f64,
    /// Its two-sided p-value.
    pub lag1_pvalue: f64,
    /// Whether lag-1 correlation is not significant.
    pub iid: bool,
    /// The smallest lag on the ladder with no significant correlation (1 when iid).
    pub decorrelation_lag: Option<usize>,
    /// Every lag tested.
    pub tested: Vec<Correlation>,
}

/// Is the series stationary (ADF)?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stationarity {
    /// The ADF t statistic.
    pub adf_stat: f64,
    /// MacKinnon p-value.
    pub pvalue: f64,
    /// Lags used.
    pub usedlag: usize,
    /// Observations in the regression.
    pub nobs: usize,
    /// Critical values.
    pub critical_values: CriticalValues,
    /// Whether the unit root is rejected at alpha.
    pub stationary: bool,
    /// Deterministic terms.
    pub regression: Regression,
    /// Best information criterion of the lag search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icbest: Option<f64>,
}

impl Stationarity {
    fn new(a: Adf, alpha: f64) -> Self {
        Self {
            adf_stat: a.stat,
            pvalue: a.pvalue,
            usedlag: a.usedlag,
            nobs: a.nobs,
            critical_values: a.critical_values,
            stationary: a.pvalue < alpha,
            regression: a.regression,
            icbest: a.icbest,
        }
    }
}

/// Are the inter-departure times exponential (a Poisson process)?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interarrival {
    /// Number of inter-arrival times.
    pub n: usize,
    /// Anderson-Darling A².
    pub statistic: f64,
    /// Critical values at the significance levels.
    pub critical_values: [f64; 5],
    /// Significance levels in percent.
    pub significance_levels: [f64; 5],
    /// Interpolated p-value (clipped to \[0.01, 0.15\]).
    pub pvalue: f64,
    /// Fitted scale (mean inter-arrival time).
    pub scale: f64,
    /// Whether exponentiality is not rejected at alpha.
    pub exponential: bool,
}

impl Interarrival {
    fn new(n: usize, a: AndersonDarling, alpha: f64) -> Self {
        Self {
            n,
            statistic: a.statistic,
            critical_values: a.critical_values,
            significance_levels: a.significance_levels,
            pvalue: a.pvalue,
            scale: a.scale,
            exponential: a.passes(alpha * 100.0),
        }
    }
}

/// Everything vernier can say about one latency series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Confidence of the percentile intervals.
    pub confidence: f64,
    /// The percentiles asked for.
    pub percentiles: Vec<PercentileEstimate>,
    /// Spearman lag search on the samples in send order.
    pub independence: Section<Independence>,
    /// ADF on the samples in send order.
    pub stationarity: Section<Stationarity>,
    /// Anderson-Darling on the inter-arrival times, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interarrival: Option<Section<Interarrival>>,
}

fn panicked() -> StatsError {
    StatsError::Singular {
        test: "analysis",
        detail: "a worker thread panicked".into(),
    }
}

fn check_options(o: &AnalysisOptions) -> Result<(), StatsError> {
    let fraction = |name, v: f64| {
        if v > 0.0 && v < 1.0 {
            Ok(())
        } else {
            Err(StatsError::InvalidParameter {
                name,
                value: v,
                expected: "a fraction strictly between 0 and 1",
            })
        }
    };
    for &p in &o.percentiles {
        fraction("percentile", p)?;
    }
    fraction("confidence", o.confidence)?;
    fraction("alpha", o.alpha)
}

/// Analyses `samples` (latencies in send order) and, optionally, `interarrivals`.
///
/// Fails only on input no analysis can use (empty, NaN, bad options); a test that cannot
/// run on these particular data (a constant series, too few samples) reports why in its
/// [`Section`]. The order statistics and the dependence tests run on separate threads.
pub fn analyze(
    samples: &[f64],
    interarrivals: Option<&[f64]>,
    options: &AnalysisOptions,
) -> Result<Analysis, StatsError> {
    check_options(options)?;
    if samples.is_empty() {
        return Err(StatsError::TooFew {
            test: "analysis",
            needed: 1,
            got: 0,
        });
    }
    let (sorted, (independence, stationarity)) = std::thread::scope(|s| {
        let dependence = s.spawn(|| {
            let ladder = options
                .lag_ladder
                .clone()
                .unwrap_or_else(|| default_lag_ladder(samples.len()));
            let independence = decorrelation_lag(samples, options.alpha, &ladder).map(|search| {
                let first = search.tested[0];
                Independence {
                    alpha: options.alpha,
                    lag1_rho: first.rho,
                    lag1_pvalue: first.pvalue,
                    iid: first.lag == 1 && first.pvalue > options.alpha,
                    decorrelation_lag: search.lag,
                    tested: search.tested,
                }
            });
            let stationarity =
                adf(samples, &options.adf).map(|a| Stationarity::new(a, options.alpha));
            (independence, stationarity)
        });
        let sorted = sort_samples(samples);
        let dependence = dependence
            .join()
            .unwrap_or_else(|_| (Err(panicked()), Err(panicked())));
        (sorted, dependence)
    });
    let sorted = sorted?;
    let n = sorted.len();
    let percentiles = options
        .percentiles
        .iter()
        .map(|&p| {
            let value = percentile(&sorted, p).unwrap_or(f64::NAN);
            let (ci_under_dependence, ci_under_dependence_reason) =
                match percentile_ci_dependent(samples, &sorted, p, options.confidence) {
                    Ok(Ok(ci)) => (Some(ci), None),
                    Ok(Err(need)) => (
                        None,
                        Some(format!(
                            "{}: about {} samples needed, have {}",
                            need.reason, need.needed, need.have
                        )),
                    ),
                    Err(e) => (None, Some(e.to_string())),
                };
            let (ci_low, ci_high, ci_note) = match percentile_ci(&sorted, p, options.confidence) {
                Ok((lo, hi)) => (Some(lo), Some(hi), None),
                Err(e) => (None, None, Some(e.to_string())),
            };
            PercentileEstimate {
                p,
                value,
                ci_low,
                ci_high,
                ci_note,
                ci_under_dependence,
                ci_under_dependence_reason,
            }
        })
        .collect();
    let interarrival = match interarrivals {
        None => None,
        Some(ia) => {
            crate::error::check_finite(ia)?;
            Some(Section::from_result(
                anderson_exponential(ia).map(|a| Interarrival::new(ia.len(), a, options.alpha)),
            ))
        }
    };
    Ok(Analysis {
        n,
        mean: crate::kernels::sum(&sorted) / n as f64,
        min: sorted[0],
        max: sorted[n - 1],
        confidence: options.confidence,
        percentiles,
        independence: Section::from_result(independence),
        stationarity: Section::from_result(stationarity),
        interarrival,
    })
}
