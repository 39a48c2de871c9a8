//! Drawing from a [`Dist`]: rand_distr's samplers where it has the distribution.

use rand::RngExt;
use rand::distr::{Distribution, Uniform};
use rand_distr::{Exp, LogNormal, Pareto};

use super::magnitude::Magnitude;
use super::shape::Dist;

/// Draws values, in base units (nanoseconds for durations, bytes for sizes), from a
/// [`Dist`]; made by [`Dist::sampler`].
///
/// The constants of the distribution are computed once here, so a draw is a few arithmetic
/// operations on the caller's RNG and never allocates: it is meant for the agent's hot loop.
/// It is also a [`rand::distr::Distribution<f64>`], for `sample_iter` and friends.
#[derive(Debug, Clone, Copy)]
pub struct Sampler(Inner);

#[derive(Debug, Clone, Copy)]
enum Inner {
    Fixed(f64),
    Exp(Exp<f64>),
    Bimodal {
        first: f64,
        second: f64,
        p_first: f64,
    },
    Lognormal(LogNormal<f64>),
    Uniform(Uniform<f64>),
    Pareto(Pareto<f64>),
}

impl Sampler {
    pub(super) fn new<M: Magnitude>(dist: &Dist<M>) -> Sampler {
        let units = |m: M| m.to_f64();
        // A `Dist` outside this module is always valid (its variants are non-exhaustive and
        // its constructors check), and these are the same checks rand_distr makes, so the
        // constructors below do not fail. Should one ever, the sampler draws the mean: a
        // wrong figure the tests would catch, rather than a panic in a measuring thread.
        let inner = match *dist {
            Dist::Fixed { value } => Some(Inner::Fixed(units(value))),
            Dist::Exp { mean } => Exp::new(1.0 / units(mean)).map(Inner::Exp).ok(),
            Dist::Bimodal {
                first,
                second,
                p_first,
            } => Some(Inner::Bimodal {
                first: units(first),
                second: units(second),
                p_first,
            }),
            // If ln X ~ N(mu, sigma²) then E[X] = exp(mu + sigma²/2), hence mu.
            Dist::Lognormal { mean, sigma } => {
                LogNormal::new(units(mean).ln() - sigma * sigma / 2.0, sigma)
                    .map(Inner::Lognormal)
                    .ok()
            }
            Dist::Uniform { lo, hi } => Uniform::new_inclusive(units(lo), units(hi))
                .map(Inner::Uniform)
                .ok(),
            // The Pareto mean is scale·alpha/(alpha−1), hence the scale.
            Dist::Pareto { mean, alpha } => Pareto::new(units(mean) * (alpha - 1.0) / alpha, alpha)
                .map(Inner::Pareto)
                .ok(),
        };
        Sampler(inner.unwrap_or(Inner::Fixed(dist.mean())))
    }

    /// Draws one value in base units: never negative, always finite.
    #[inline]
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match &self.0 {
            Inner::Fixed(value) => *value,
            Inner::Exp(d) => d.sample(rng),
            Inner::Bimodal {
                first,
                second,
                p_first,
            } => {
                // A uniform draw in [0, 1) is below p with probability p, exactly.
                if rng.random::<f64>() < *p_first {
                    *first
                } else {
                    *second
                }
            }
            Inner::Lognormal(d) => d.sample(rng),
            Inner::Uniform(d) => d.sample(rng),
            Inner::Pareto(d) => d.sample(rng),
        }
    }
}

impl Distribution<f64> for Sampler {
    #[inline]
    fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        Sampler::sample(self, rng)
    }
}
