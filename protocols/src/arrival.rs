//! Inter-arrival processes: when an open-loop worker sends its next request.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::dist::Dist;
use crate::spec::{SpecError, serde_as_spec_string};

/// The process of gaps between request departures, independent of the rate, which the
/// coordinator may change during a run (a sweep, a search for the SLO load, the user's key).
///
/// Spec: `exp` (Poisson arrivals, the open-loop default), `fixed` (evenly spaced), or any
/// [`Dist`] spec, whose *shape* is kept and whose scale is set by the rate (so
/// `lognormal:1us:2` means "log-normal gaps with sigma 2", at whatever rate is asked).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InterArrival {
    /// Exponential gaps: a Poisson process.
    Exp,
    /// Evenly spaced departures.
    Fixed,
    /// Gaps with this distribution's shape, rescaled to the rate's mean.
    Dist(Dist),
}

impl InterArrival {
    /// The distribution of gaps at `rate_per_s` requests per second: mean 1/rate.
    ///
    /// A rate that is zero, negative or NaN means no arrivals and gives the longest gap a
    /// `Duration` of whole nanoseconds holds (584 years); validate rates where they are read.
    /// Gaps are whole nanoseconds, so at 1 M/s the mean is within 0.05% of 1/rate.
    pub fn for_rate(&self, rate_per_s: f64) -> Dist {
        let gap_ns = if rate_per_s > 0.0 {
            1e9 / rate_per_s
        } else {
            f64::INFINITY
        };
        // The float-to-int cast saturates, so an infinite gap becomes u64::MAX ns.
        let gap = Duration::from_nanos(gap_ns.round() as u64);
        self.shape().with_mean(gap)
    }

    /// A distribution of the process's shape, at an arbitrary scale.
    fn shape(&self) -> Dist {
        const ONE_NS: Duration = Duration::from_nanos(1);
        match *self {
            InterArrival::Exp => Dist::Exp { mean: ONE_NS },
            InterArrival::Fixed => Dist::Fixed { value: ONE_NS },
            InterArrival::Dist(dist) => dist,
        }
    }
}

const WHAT: &str = "inter-arrival process";

impl FromStr for InterArrival {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<InterArrival, SpecError> {
        match spec.trim() {
            "exp" => Ok(InterArrival::Exp),
            "fixed" => Ok(InterArrival::Fixed),
            // A distribution spec: its own error says what is wrong with it.
            trimmed if trimmed.contains(':') => {
                let dist: Dist = trimmed
                    .parse()
                    .map_err(|e: SpecError| SpecError::new(WHAT, spec, e.expected()))?;
                if dist.mean_ns() > 0.0 {
                    Ok(InterArrival::Dist(dist))
                } else {
                    Err(SpecError::new(
                        WHAT,
                        spec,
                        "expected a distribution with a mean > 0, whose shape is then scaled \
                         to the rate, as in lognormal:1us:0.5",
                    ))
                }
            }
            _ => Err(SpecError::new(
                WHAT,
                spec,
                "expected exp (Poisson), fixed, or a distribution spec whose shape is scaled \
                 to the rate, as in lognormal:1us:0.5",
            )),
        }
    }
}

impl fmt::Display for InterArrival {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterArrival::Exp => f.write_str("exp"),
            InterArrival::Fixed => f.write_str("fixed"),
            InterArrival::Dist(dist) => dist.fmt(f),
        }
    }
}

serde_as_spec_string!(
    InterArrival,
    "an inter-arrival spec: exp, fixed, or a distribution"
);

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(spec: &str) -> InterArrival {
        spec.parse()
            .unwrap_or_else(|e| panic!("{spec:?} should parse: {e}"))
    }

    #[test]
    fn parses_and_prints() {
        assert_eq!(parse("exp"), InterArrival::Exp);
        assert_eq!(parse("fixed"), InterArrival::Fixed);
        let spec = "lognormal:1us:0.5";
        assert_eq!(parse(spec), InterArrival::Dist(spec.parse().unwrap()));
        for spec in ["exp", "fixed", "lognormal:1us:0.5", "exp:3us"] {
            assert_eq!(parse(spec).to_string(), spec);
        }
    }

    #[test]
    fn errors_quote_the_spec() {
        let error = |spec: &str| spec.parse::<InterArrival>().unwrap_err().to_string();
        assert_eq!(
            error("poisson"),
            r#"invalid inter-arrival process "poisson": expected exp (Poisson), fixed, or a distribution spec whose shape is scaled to the rate, as in lognormal:1us:0.5"#
        );
        assert_eq!(
            error("exp:10"),
            r#"invalid inter-arrival process "exp:10": expected a duration with a unit (ns, us, ms, s), as in exp:10us"#
        );
        assert_eq!(
            error("fixed:0us"),
            r#"invalid inter-arrival process "fixed:0us": expected a distribution with a mean > 0, whose shape is then scaled to the rate, as in lognormal:1us:0.5"#
        );
    }

    #[test]
    fn gaps_have_mean_one_over_the_rate() {
        assert_eq!(parse("exp").for_rate(100_000.0).to_string(), "exp:10us");
        assert_eq!(parse("fixed").for_rate(1_000.0).to_string(), "fixed:1ms");
        assert_eq!(
            parse("bimodal:1us:3us:0.5").for_rate(250_000.0).to_string(),
            "bimodal:2us:6us:0.5"
        );
        assert_eq!(
            parse("lognormal:7us:2").for_rate(1e6).to_string(),
            "lognormal:1us:2"
        );
        // Rounded to whole nanoseconds.
        assert_eq!(parse("exp").for_rate(3e6).to_string(), "exp:333ns");
    }

    #[test]
    fn degenerate_rates_give_degenerate_but_valid_gaps() {
        let longest = Duration::from_nanos(u64::MAX);
        for rate in [0.0, -5.0, f64::NAN] {
            assert_eq!(parse("fixed").for_rate(rate), Dist::fixed(longest));
            assert_eq!(parse("exp").for_rate(rate), Dist::exp(longest).unwrap());
        }
        // An infinite rate cannot give a zero exponential mean, which has no sampler.
        assert_eq!(parse("exp").for_rate(f64::INFINITY).mean_ns(), 1.0);
        assert_eq!(parse("fixed").for_rate(f64::INFINITY).mean_ns(), 0.0);
    }

    #[test]
    fn serde_is_the_spec_string() {
        assert_eq!(
            serde_json::from_str::<InterArrival>(r#""exp""#).unwrap(),
            InterArrival::Exp
        );
        assert_eq!(
            serde_json::to_string(&InterArrival::Fixed).unwrap(),
            r#""fixed""#
        );
    }
}
