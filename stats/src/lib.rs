//! vernier-stats: the statistics behind vernier's verdicts.
//!
//! Every function here is pure: slices in, numbers out, no I/O. The estimators follow the
//! reference implementations researchers already trust (NumPy, SciPy, statsmodels) and are
//! checked against their answers case by case (`fixtures/golden/`). They are also fast:
//! the whole [`analyze`] of a million samples runs in well under a second, where the
//! reference ADF alone takes over a minute on a tenth of that.
//!
//! | question | function | reference |
//! | --- | --- | --- |
//! | what is the p-th percentile? | [`percentile`] | NumPy's default (Hyndman-Fan type 7) |
//! | how sure are we of it? | [`percentile_ci`] | order statistics (Le Boudec) |
//! | ... when the samples are autocorrelated? | [`percentile_ci_dependent`] | batched indicators (Heidelberger & Lewis; LBATCH; Sequest's adjustment) |
//! | does the series drift? | [`drift`] | the batch-means variance plot (Schmeiser 1982; Glynn & Whitt 1991) |
//! | when is it narrow enough to stop? | [`Rule::step`] | fixed-width sequential rules (Chow & Robbins; Sequest; SQSTS) |
//! | are the inter-arrivals exponential? | [`anderson_exponential`], [`anderson_exponential_known`] | SciPy's `anderson`; Marsaglia & Marsaglia 2004 |
//! | are the samples independent? | [`spearman_lag`], [`decorrelation_lag`] | SciPy's `spearmanr` |
//! | is the series stationary? | [`adf`] | statsmodels' `adfuller`, MacKinnon p-values |
//! | what is the tail without the host's stalls? | [`without_stalls`] | reach to the drain (Lindley), inverse-probability weights (Horvitz & Thompson) |
//!
//! ```
//! use vernier_stats::{analyze, AnalysisOptions};
//!
//! // A latency series in microseconds, in send order.
//! let samples: Vec<f64> = (0..5000).map(|i| 100.0 + ((i * 7919) % 1000) as f64 / 10.0).collect();
//! let report = analyze(&samples, None, &AnalysisOptions::default()).unwrap();
//! let p99 = report.percentiles.iter().find(|p| p.p == 0.99).unwrap();
//! assert!(p99.value > 190.0 && p99.ci_low.unwrap() <= p99.value);
//! ```
#![deny(missing_docs)]

mod adf;
mod analysis;
mod anderson;
mod compare;
mod dependent;
mod drift;
mod error;
mod kernels;
mod percent;
mod percentile;
mod replicas;
mod sequential;
mod spearman;
mod stalls;
mod tail;
mod thinned;
mod weighted;

pub use adf::{Adf, AdfOptions, CriticalValues, LagSelection, Regression, adf};
pub use analysis::{
    Analysis, AnalysisOptions, Independence, Interarrival, PercentileEstimate, Section,
    Stationarity, analyze,
};
pub use anderson::{
    AndersonDarling, AndersonDarlingKnown, SIGNIFICANCE_LEVELS, anderson_exponential,
    anderson_exponential_known,
};
pub use compare::{
    DifferenceCi, MIN_PAIRS, MIN_PAIRS_TO_LOOK, MIN_TAIL_PER_BLOCK, NARROW_LOOKS_TO_STOP, Pair,
    StoppingRule, WeightedBlock, WeightedPair, difference_ci, weighted_difference_ci,
};
pub use dependent::{
    BatchMeans, Batching, CiMethod, CiOptions, DependentCi, MIN_BATCHES, MIN_EFFECTIVE_TAIL,
    NeedMore, SAFETY_DOUBLINGS, percentile_ci_dependent, percentile_ci_dependent_with,
};
pub use drift::{
    DRIFT_DOUBLINGS, DRIFT_GROWTH, DRIFT_MIN_BATCHES, Drift, DriftVerdict, InflationAt,
    WindowValue, drift,
};
pub use error::StatsError;
pub use percentile::{
    OrderStatRanks, Percentile, min_samples_for_ci, order_statistic_ranks, percentile,
    percentile_ci, sort_samples,
};
pub use replicas::{Heterogeneity, MeanCi, heterogeneity, mean_ci};
pub use sequential::{Confirmation, NO_CI_MAX_GROWTH, Plan, Rule, Step, effective_tail};
pub use spearman::{
    Correlation, LagSearch, SendOrder, decorrelation_lag, default_lag_ladder, spearman,
    spearman_lag,
};
pub use stalls::{
    Marks, Reach, Sent, Spans, Stall, Untouched, WithoutStalls, mark, untouched, untouched_sent,
    without_stalls, without_stalls_sent,
};
pub use tail::{coefficient_of_variation, exponential_relative_ci_width, tail_heaviness};
pub use thinned::{
    Kept, Stretches, joined_since, untouched_joined, untouched_kept, untouched_requests,
    without_stalls_requests,
};
pub use weighted::WeightedSamples;
