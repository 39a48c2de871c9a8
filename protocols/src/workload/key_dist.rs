//! Which key each request asks for.

use std::fmt;
use std::str::FromStr;

use crate::spec::{SpecError, serde_as_spec_string};

/// How requests pick their key. Spec: `uniform`, `round-robin`, `zipf:THETA`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum KeyDist {
    /// Every key equally likely: no hot keys, the worst case for caches.
    #[default]
    Uniform,
    /// Each key in turn: every key touched once per cycle, as a scan or a cache warm-up.
    RoundRobin,
    /// Zipfian popularity as in YCSB: the key of rank k is chosen with probability
    /// ∝ 1/k^theta. YCSB's default skew is 0.99; 0 is uniform. Rank 1 is key 0 (YCSB's
    /// scrambling of ranks over the key space is not applied, since vernier's targets do not
    /// shard by key).
    Zipf {
        /// The skew exponent, ≥ 0.
        theta: f64,
    },
}

const WHAT: &str = "key distribution";

impl FromStr for KeyDist {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<KeyDist, SpecError> {
        match spec.trim() {
            "uniform" => Ok(KeyDist::Uniform),
            "round-robin" => Ok(KeyDist::RoundRobin),
            other => {
                let theta = other
                    .strip_prefix("zipf:")
                    .ok_or_else(|| {
                        SpecError::new(
                            WHAT,
                            spec,
                            "expected uniform, round-robin or zipf:THETA, as in zipf:0.99",
                        )
                    })?
                    .parse::<f64>()
                    .ok()
                    .filter(|theta| *theta >= 0.0 && theta.is_finite())
                    .ok_or_else(|| {
                        SpecError::new(
                            WHAT,
                            spec,
                            "expected THETA to be a number ≥ 0, as in zipf:0.99",
                        )
                    })?;
                Ok(KeyDist::Zipf { theta })
            }
        }
    }
}

impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::RoundRobin => f.write_str("round-robin"),
            KeyDist::Zipf { theta } => write!(f, "zipf:{theta}"),
        }
    }
}

serde_as_spec_string!(
    KeyDist,
    "a key distribution: uniform, round-robin or zipf:THETA"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip() {
        for spec in ["uniform", "round-robin", "zipf:0.99", "zipf:0", "zipf:1.5"] {
            let dist: KeyDist = spec.parse().unwrap();
            assert_eq!(dist.to_string(), spec);
        }
        assert_eq!(
            "zipf:0.99".parse::<KeyDist>().unwrap(),
            KeyDist::Zipf { theta: 0.99 }
        );
    }

    #[test]
    fn bad_specs_say_what_was_expected() {
        let error = |spec: &str| spec.parse::<KeyDist>().unwrap_err().to_string();
        assert_eq!(
            error("zipfian"),
            r#"invalid key distribution "zipfian": expected uniform, round-robin or zipf:THETA, as in zipf:0.99"#
        );
        for spec in ["zipf:", "zipf:-1", "zipf:inf", "zipf:NaN", "zipf:x"] {
            assert_eq!(
                error(spec),
                format!(
                    "invalid key distribution {spec:?}: expected THETA to be a number ≥ 0, \
                     as in zipf:0.99"
                )
            );
        }
    }
}
