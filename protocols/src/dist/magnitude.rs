//! What a [`Dist`](super::Dist) is a distribution of: durations or byte counts.

use std::fmt;
use std::time::Duration;

use crate::spec::{format_duration, parse_duration};

/// A quantity a [`Dist`](super::Dist) draws: [`Duration`] (whole nanoseconds) for service
/// times and gaps, `u64` (bytes) for key and value sizes.
///
/// Sealed: the spec syntax, the examples in error messages and the rounding rules of each
/// magnitude live in this crate.
pub trait Magnitude: sealed::Sealed + Copy + PartialOrd + fmt::Debug {}

impl Magnitude for Duration {}
impl Magnitude for u64 {}

pub(crate) mod sealed {
    use std::fmt;

    /// The operations [`Dist`](crate::Dist) needs of a magnitude.
    pub trait Sealed: Sized {
        /// What the spec is called in errors: "distribution", "size distribution".
        const WHAT: &'static str;
        /// Two values for the examples in error messages, the second the larger.
        const SMALL: &'static str;
        /// See [`Sealed::SMALL`].
        const LARGE: &'static str;
        /// The least positive value.
        const ONE: Self;

        /// Parses a value; the error completes "expected …".
        fn parse(text: &str) -> Result<Self, &'static str>;
        /// Prints the value so that [`Sealed::parse`] reads it back exactly.
        fn display(self) -> impl fmt::Display;
        /// The value in base units (nanoseconds, bytes).
        fn to_f64(self) -> f64;
        /// Rounds a non-negative count of base units, saturating; NaN becomes zero (the
        /// semantics of the float-to-integer `as` cast).
        fn from_f64(units: f64) -> Self;
        /// Whether this is zero.
        fn is_zero(&self) -> bool;
    }
}

impl sealed::Sealed for Duration {
    const WHAT: &'static str = "distribution";
    const SMALL: &'static str = "10us";
    const LARGE: &'static str = "100us";
    const ONE: Duration = Duration::from_nanos(1);

    fn parse(text: &str) -> Result<Duration, &'static str> {
        parse_duration(text)
    }

    fn display(self) -> impl fmt::Display {
        format_duration(self)
    }

    fn to_f64(self) -> f64 {
        self.as_nanos() as f64
    }

    fn from_f64(nanos: f64) -> Duration {
        Duration::from_nanos(nanos.round() as u64)
    }

    fn is_zero(&self) -> bool {
        Duration::is_zero(self)
    }
}

impl sealed::Sealed for u64 {
    const WHAT: &'static str = "size distribution";
    const SMALL: &'static str = "32";
    const LARGE: &'static str = "1024";
    const ONE: u64 = 1;

    fn parse(text: &str) -> Result<u64, &'static str> {
        const EXPECTED: &str = "a size as a whole number of bytes";
        // `u64::from_str` alone would also take a leading `+`.
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(EXPECTED);
        }
        text.parse().map_err(|_| EXPECTED)
    }

    fn display(self) -> impl fmt::Display {
        self
    }

    fn to_f64(self) -> f64 {
        self as f64
    }

    fn from_f64(bytes: f64) -> u64 {
        bytes.round() as u64
    }

    fn is_zero(&self) -> bool {
        *self == 0
    }
}
