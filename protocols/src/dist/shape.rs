//! What a distribution is: its family and parameters, for durations or sizes.

use std::time::Duration;

use super::magnitude::Magnitude;

/// A distribution of durations (`Dist`, the default) or of sizes in bytes ([`SizeDist`]).
///
/// Every variant is `#[non_exhaustive]`, so outside this crate a `Dist` comes only from
/// parsing a spec or from the checked constructors ([`Dist::exp`], ...): the parameters of
/// every `Dist` in existence are valid, and [`Dist::sampler`] cannot fail. Match on a variant
/// with `..`, e.g. `Dist::Fixed { value, .. }`.
///
/// Its serde form is the spec string, so a scenario says `service: exp:20us` or
/// `value_size: pareto:200:2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist<M: Magnitude = Duration> {
    /// Always `value`. Spec: `fixed:10us`.
    #[non_exhaustive]
    Fixed {
        /// The one value.
        value: M,
    },
    /// Exponential with the given mean (memoryless: Poisson gaps, M/M/k service). Spec:
    /// `exp:10us`.
    #[non_exhaustive]
    Exp {
        /// The mean, > 0.
        mean: M,
    },
    /// `first` with probability `p_first`, else `second`: a fast path and a slow path. Spec:
    /// `bimodal:10us:100us:0.9`.
    #[non_exhaustive]
    Bimodal {
        /// The value drawn with probability `p_first`.
        first: M,
        /// The value drawn otherwise.
        second: M,
        /// The probability of `first`, in [0, 1].
        p_first: f64,
    },
    /// Log-normal with the given mean; `sigma` is the standard deviation of the underlying
    /// normal (unitless), so the shape is set apart from the scale. Spec: `lognormal:10us:0.5`.
    #[non_exhaustive]
    Lognormal {
        /// The mean of the distribution itself (not of the underlying normal), > 0.
        mean: M,
        /// The sigma of the underlying normal, in [0, 10].
        sigma: f64,
    },
    /// Uniform on [`lo`, `hi`]. Spec: `uniform:10us:100us`.
    #[non_exhaustive]
    Uniform {
        /// The least value.
        lo: M,
        /// The greatest value, ≥ `lo`.
        hi: M,
    },
    /// Pareto (heavy-tailed) with shape `alpha` and the scale that gives the stated mean.
    /// Spec: `pareto:10us:2.5`.
    #[non_exhaustive]
    Pareto {
        /// The mean, > 0.
        mean: M,
        /// The shape (tail index), > 1 so that the mean exists.
        alpha: f64,
    },
}

/// A distribution of sizes in bytes (keys, values): the same forms with plain numbers,
/// `fixed:32`, `pareto:200:2`.
pub type SizeDist = Dist<u64>;
