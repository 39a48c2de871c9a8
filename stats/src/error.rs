use thiserror::Error;

/// Why a statistic could not be computed. Each variant carries the figures that explain it.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// The series was empty, or shorter than the test needs.
    #[error("{test} needs at least {needed} values, got {got}")]
    TooFew {
        /// The test that was asked for.
        test: &'static str,
        /// The smallest usable length.
        needed: usize,
        /// The length given.
        got: usize,
    },
    /// A value was NaN or infinite.
    #[error("value {value} at index {index} is not a finite number")]
    NonFinite {
        /// Zero-based position in the series.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A value was outside the domain of the test (e.g. a negative inter-arrival time).
    #[error("value {value} at index {index} is out of range: {expected}")]
    OutOfDomain {
        /// Zero-based position in the series.
        index: usize,
        /// The offending value.
        value: f64,
        /// What the test accepts.
        expected: &'static str,
    },
    /// Every value was the same, so the test has nothing to work with.
    #[error("{test} is undefined on a constant series (every value is {value})")]
    Constant {
        /// The test that was asked for.
        test: &'static str,
        /// The one value.
        value: f64,
    },
    /// A parameter was outside its range.
    #[error("{name} = {value} is invalid: {expected}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is allowed.
        expected: &'static str,
    },
    /// The order-statistic interval needs more samples than there are.
    #[error(
        "not enough samples: p{} at {}% needs at least {needed}, have {have}",
        crate::percent::format_percentile(*p),
        crate::percent::format_percentile(*confidence)
    )]
    NotEnoughSamples {
        /// The percentile asked for, as a fraction (0.99).
        p: f64,
        /// The confidence asked for, as a fraction (0.95).
        confidence: f64,
        /// The smallest sample count whose interval lies within the samples.
        needed: usize,
        /// The sample count given.
        have: usize,
    },
    /// The regression's design matrix is singular (collinear regressors).
    #[error("the {test} regression is singular: {detail}")]
    Singular {
        /// The test that was asked for.
        test: &'static str,
        /// What was singular.
        detail: String,
    },
}

/// Checks that every value is finite, naming the first one that is not.
pub(crate) fn check_finite(x: &[f64]) -> Result<(), StatsError> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            index,
            value: x[index],
        }),
        None => Ok(()),
    }
}
