//! What every part of the validation shares: the mean service time, the connections and
//! rates of part 2, and the timestamp sources the runs compare.

use vernier_agent::sys::TimestampMode;

/// The mean service time of every distribution, µs: capacity is 1/25 µs = 40,000 req/s.
pub(super) const MEAN_US: f64 = 25.0;

/// Connections of vernier against the real servers and of every other tool: none of those
/// can be asked for a rate, so they run as fast as this many connections go.
pub(super) const CONNECTIONS: usize = 16;

/// Rates vernier is asked for against each server of part 2, besides the other tool's
/// highest.
pub(super) const TOOL_RATES: [f64; 2] = [10_000.0, 50_000.0];

/// How much of the validation is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Depth {
    /// Every load, every distribution, limits long enough for the figures to be evidence.
    Full,
    /// One load per distribution and short limits (`--quick`): the harness end to end in
    /// a couple of minutes, its figures not evidence.
    Quick,
}

/// Where a run's timestamps come from (part 1 compares the two at 50% load).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timestamps {
    /// The kernel's software timestamps.
    Kernel,
    /// The agent's own clock reads around `send` and `recv`.
    User,
}

impl Timestamps {
    /// As scenarios and tables name it.
    pub fn name(self) -> &'static str {
        match self {
            Timestamps::Kernel => "kernel",
            Timestamps::User => "user",
        }
    }

    /// The agent's timestamp mode of that source.
    pub(super) fn mode(self) -> TimestampMode {
        match self {
            Timestamps::Kernel => TimestampMode::Kernel,
            Timestamps::User => TimestampMode::User,
        }
    }
}
