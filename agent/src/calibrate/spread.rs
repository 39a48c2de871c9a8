//! The spread of a contributor's figures, and the units they are written in.

use serde::Serialize;

/// The spread of one contributor's figure.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Spread {
    /// The least seen: the nearest the figures come to this contributor's floor on this
    /// host.
    pub min: f64,
    /// The typical value, nearest rank.
    pub p50: f64,
    /// The value one in a hundred exceeds, nearest rank: what this contributor adds to a
    /// tail.
    pub p99: f64,
    /// The most seen: one stall or interrupt can set it, so it is read beside the p99.
    pub max: f64,
    /// How many values the spread is of.
    pub count: u64,
}

impl Spread {
    /// The spread of ascending values (nearest rank); zeros when empty.
    pub fn of_sorted(sorted: &[f64]) -> Spread {
        let Some((&min, &max)) = sorted.first().zip(sorted.last()) else {
            return Spread::default();
        };
        let rank =
            |q: f64| sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
        Spread {
            min,
            p50: rank(0.5),
            p99: rank(0.99),
            max,
            count: sorted.len() as u64,
        }
    }
}

/// Nanoseconds as microseconds (exact to the nanosecond).
pub(super) fn us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

/// Nanoseconds as microseconds, rounded to the nanosecond.
pub(super) fn us_f(ns: f64) -> f64 {
    ns.round() / 1_000.0
}
