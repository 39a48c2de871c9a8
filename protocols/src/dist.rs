//! Random distributions of durations (service times, inter-arrival gaps) and of sizes (keys,
//! values), written in scenario files as spec strings such as `exp:10us` or
//! `bimodal:10us:100us:0.9`.

mod magnitude;
mod sampler;
mod shape;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub use magnitude::Magnitude;
pub use sampler::Sampler;
pub use shape::{Dist, SizeDist};

use crate::spec::{SpecError, serde_as_spec_string};

/// The largest lognormal sigma accepted. Beyond it exp(sigma·z) overflows f64 for the normal
/// deviates a long run draws, and no service time in practice is that skewed.
const MAX_SIGMA: f64 = 10.0;

/// The forms of spec, for their usage and example in messages.
#[derive(Clone, Copy)]
enum Form {
    Fixed,
    Exp,
    Bimodal,
    Lognormal,
    Uniform,
    Pareto,
}

impl Form {
    fn usage(self) -> &'static str {
        match self {
            Form::Fixed => "fixed:VALUE",
            Form::Exp => "exp:MEAN",
            Form::Bimodal => "bimodal:FIRST:SECOND:P_FIRST",
            Form::Lognormal => "lognormal:MEAN:SIGMA",
            Form::Uniform => "uniform:LO:HI",
            Form::Pareto => "pareto:MEAN:ALPHA",
        }
    }

    /// A valid spec of this form for magnitudes `M`, such as `exp:10us`.
    fn example<M: Magnitude>(self) -> String {
        let (small, large) = (M::SMALL, M::LARGE);
        match self {
            Form::Fixed => format!("fixed:{small}"),
            Form::Exp => format!("exp:{small}"),
            Form::Bimodal => format!("bimodal:{small}:{large}:0.9"),
            Form::Lognormal => format!("lognormal:{small}:0.5"),
            Form::Uniform => format!("uniform:{small}:{large}"),
            Form::Pareto => format!("pareto:{small}:2.5"),
        }
    }
}

impl<M: Magnitude> Dist<M> {
    /// Always `value`.
    pub fn fixed(value: M) -> Dist<M> {
        Dist::Fixed { value }
    }

    /// Exponential with mean `mean` (> 0).
    pub fn exp(mean: M) -> Result<Dist<M>, SpecError> {
        Dist::Exp { mean }.validated()
    }

    /// `first` with probability `p_first` (in [0, 1]), else `second`.
    pub fn bimodal(first: M, second: M, p_first: f64) -> Result<Dist<M>, SpecError> {
        Dist::Bimodal {
            first,
            second,
            p_first,
        }
        .validated()
    }

    /// Log-normal with mean `mean` (> 0) and underlying-normal sigma `sigma` (in [0, 10]).
    pub fn lognormal(mean: M, sigma: f64) -> Result<Dist<M>, SpecError> {
        Dist::Lognormal { mean, sigma }.validated()
    }

    /// Uniform on [`lo`, `hi`] (`lo` ≤ `hi`).
    pub fn uniform(lo: M, hi: M) -> Result<Dist<M>, SpecError> {
        Dist::Uniform { lo, hi }.validated()
    }

    /// Pareto with mean `mean` (> 0) and shape `alpha` (> 1).
    pub fn pareto(mean: M, alpha: f64) -> Result<Dist<M>, SpecError> {
        Dist::Pareto { mean, alpha }.validated()
    }

    /// The mean in the magnitude's unit (nanoseconds, bytes): exact, not estimated.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed { value: mean }
            | Dist::Exp { mean }
            | Dist::Lognormal { mean, .. }
            | Dist::Pareto { mean, .. } => mean.to_f64(),
            Dist::Bimodal {
                first,
                second,
                p_first,
            } => p_first * first.to_f64() + (1.0 - p_first) * second.to_f64(),
            Dist::Uniform { lo, hi } => (lo.to_f64() + hi.to_f64()) / 2.0,
        }
    }

    /// A sampler drawing from this distribution, in the magnitude's unit. Build it once,
    /// outside the hot loop: it precomputes the distribution's constants so each draw costs a
    /// few arithmetic operations and no allocation.
    pub fn sampler(&self) -> Sampler {
        Sampler::new(self)
    }

    /// The same shape scaled to mean `mean`: every magnitude parameter is multiplied by
    /// `mean / self.mean()`, and the unitless ones (`p_first`, `sigma`, `alpha`) are kept.
    ///
    /// Magnitudes are whole units (nanoseconds, bytes), so the new mean is `mean` within
    /// rounding (a bimodal's or uniform's two values are each rounded). A distribution whose
    /// mean is zero has no shape to scale and becomes `fixed:mean`.
    pub fn with_mean(&self, mean: M) -> Dist<M> {
        let old_mean = self.mean();
        if old_mean <= 0.0 {
            return Dist::fixed(mean);
        }
        let factor = mean.to_f64() / old_mean;
        let scale = |m: M| M::from_f64(m.to_f64() * factor);
        // Scaling keeps every constraint (mean > 0, lo ≤ hi), except that a positive mean
        // could be zero; a mean is therefore kept at least one unit.
        let positive = |m: M| if m.is_zero() { M::ONE } else { m };
        match *self {
            Dist::Fixed { .. } => Dist::Fixed { value: mean },
            Dist::Exp { .. } => Dist::Exp {
                mean: positive(mean),
            },
            Dist::Bimodal {
                first,
                second,
                p_first,
            } => Dist::Bimodal {
                first: scale(first),
                second: scale(second),
                p_first,
            },
            Dist::Lognormal { sigma, .. } => Dist::Lognormal {
                mean: positive(mean),
                sigma,
            },
            Dist::Uniform { lo, hi } => Dist::Uniform {
                lo: scale(lo),
                hi: scale(hi),
            },
            Dist::Pareto { alpha, .. } => Dist::Pareto {
                mean: positive(mean),
                alpha,
            },
        }
    }

    /// Checks the constraints the variants document, returning the spec's error if one fails.
    fn validated(self) -> Result<Dist<M>, SpecError> {
        let fail = |form: Form, expected: &str| {
            Err(SpecError::new(
                M::WHAT,
                &self.to_string(),
                format!("expected {expected}, as in {}", form.example::<M>()),
            ))
        };
        match self {
            Dist::Fixed { .. } => Ok(self),
            Dist::Exp { mean } if mean.is_zero() => fail(Form::Exp, "MEAN > 0"),
            Dist::Exp { .. } => Ok(self),
            Dist::Bimodal { p_first, .. } if !(0.0..=1.0).contains(&p_first) => {
                fail(Form::Bimodal, "P_FIRST to be a probability, from 0 to 1")
            }
            Dist::Bimodal { .. } => Ok(self),
            Dist::Lognormal { mean, .. } if mean.is_zero() => fail(Form::Lognormal, "MEAN > 0"),
            Dist::Lognormal { sigma, .. } if !(0.0..=MAX_SIGMA).contains(&sigma) => {
                fail(Form::Lognormal, "SIGMA to be a number from 0 to 10")
            }
            Dist::Lognormal { .. } => Ok(self),
            Dist::Uniform { lo, hi } if lo > hi => fail(Form::Uniform, "LO ≤ HI"),
            Dist::Uniform { .. } => Ok(self),
            Dist::Pareto { mean, .. } if mean.is_zero() => fail(Form::Pareto, "MEAN > 0"),
            // `!(alpha > 1.0)` rather than `alpha <= 1.0` so that NaN is refused too.
            Dist::Pareto { alpha, .. } if !(alpha > 1.0 && alpha.is_finite()) => fail(
                Form::Pareto,
                "ALPHA to be a number > 1 (the mean is infinite otherwise)",
            ),
            Dist::Pareto { .. } => Ok(self),
        }
    }
}

impl Dist<Duration> {
    /// The mean in nanoseconds (exact, not estimated from samples).
    pub fn mean_ns(&self) -> f64 {
        self.mean()
    }
}

impl<M: Magnitude> FromStr for Dist<M> {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<Dist<M>, SpecError> {
        let error = |expected: String| SpecError::new(M::WHAT, spec, expected);
        let trimmed = spec.trim();
        let (kind, args): (&str, Vec<&str>) = match trimmed.split_once(':') {
            Some((kind, args)) => (kind, args.split(':').collect()),
            None => (trimmed, Vec::new()),
        };
        let form = match kind {
            "fixed" => Form::Fixed,
            "exp" => Form::Exp,
            "bimodal" => Form::Bimodal,
            "lognormal" => Form::Lognormal,
            "uniform" => Form::Uniform,
            "pareto" => Form::Pareto,
            _ => {
                return Err(error(format!(
                    "expected fixed:, exp:, bimodal:, lognormal:, uniform: or pareto:, as in {}",
                    Form::Exp.example::<M>()
                )));
            }
        };
        let example = form.example::<M>();
        let magnitude = |text: &str| {
            M::parse(text)
                .map_err(|expected| error(format!("expected {expected}, as in {example}")))
        };
        let number = |text: &str, name: &str| {
            text.parse::<f64>()
                .map_err(|_| error(format!("expected {name} to be a number, as in {example}")))
        };
        let dist = match (form, args.as_slice()) {
            (Form::Fixed, &[value]) => Dist::Fixed {
                value: magnitude(value)?,
            },
            (Form::Exp, &[mean]) => Dist::Exp {
                mean: magnitude(mean)?,
            },
            (Form::Bimodal, &[first, second, p_first]) => Dist::Bimodal {
                first: magnitude(first)?,
                second: magnitude(second)?,
                p_first: number(p_first, "P_FIRST")?,
            },
            (Form::Lognormal, &[mean, sigma]) => Dist::Lognormal {
                mean: magnitude(mean)?,
                sigma: number(sigma, "SIGMA")?,
            },
            (Form::Uniform, &[lo, hi]) => Dist::Uniform {
                lo: magnitude(lo)?,
                hi: magnitude(hi)?,
            },
            (Form::Pareto, &[mean, alpha]) => Dist::Pareto {
                mean: magnitude(mean)?,
                alpha: number(alpha, "ALPHA")?,
            },
            _ => return Err(error(format!("expected {}, as in {example}", form.usage()))),
        };
        // Quote the spec as written, not as it would print.
        dist.validated()
            .map_err(|e| SpecError::new(M::WHAT, spec, e.expected()))
    }
}

impl<M: Magnitude> fmt::Display for Dist<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Dist::Fixed { value } => write!(f, "fixed:{}", value.display()),
            Dist::Exp { mean } => write!(f, "exp:{}", mean.display()),
            Dist::Bimodal {
                first,
                second,
                p_first,
            } => write!(
                f,
                "bimodal:{}:{}:{p_first}",
                first.display(),
                second.display()
            ),
            Dist::Lognormal { mean, sigma } => {
                write!(f, "lognormal:{}:{sigma}", mean.display())
            }
            Dist::Uniform { lo, hi } => write!(f, "uniform:{}:{}", lo.display(), hi.display()),
            Dist::Pareto { mean, alpha } => write!(f, "pareto:{}:{alpha}", mean.display()),
        }
    }
}

serde_as_spec_string!(Dist<Duration>, "a distribution spec such as exp:10us");
serde_as_spec_string!(Dist<u64>, "a size distribution spec such as fixed:32");

#[cfg(test)]
mod tests;
