//! The kinds of reason a point or a comparison has no honest number for, each named once
//! (by serde).

use serde::{Deserialize, Serialize};

/// What a [`Reason`] is about. Records, JSON and the printed verdicts name it by its
/// snake_case serde name (`closed_loop`, `heavy_tail`, …), which [`ReasonKind::name`]
/// reads from serde itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    /// The agents could not send the rate asked.
    LoadNotReached,
    /// Too few request slots: the load turned closed-loop.
    ClosedLoop,
    /// The departures do not follow the arrival process (`method: lancet`'s gate).
    Interarrival,
    /// The client's late departures move the answer beyond the tolerance asked.
    Departures,
    /// The samples stay correlated (`method: lancet`'s gate).
    Independence,
    /// The latency series drifts while measuring.
    Stationarity,
    /// The latency never settled during warm-up.
    WarmupStationarity,
    /// The agents' intervals do not overlap.
    AgentsDisagree,
    /// Too few samples for the interval by the time limit.
    TooFewSamples,
    /// The service's own tail is too heavy for the samples the limit allows.
    HeavyTail,
    /// The host's stalls keep the interval wide.
    HostStalls,
    /// The interval did not reach the width asked by the limit.
    Confidence,
    /// The user quit.
    Quit,
    /// An agent was lost.
    AgentLost,
    /// The target stopped answering.
    TargetFailed,
    /// Accepted with nothing measured.
    AcceptedEmpty,
    /// Replicated runs disagree beyond their own CIs, more than the width asked allows.
    Hysteresis,
    /// The runs' estimates are too spread for the across-run CI asked by the last run.
    Replications,
    /// A comparison measured fewer pairs of blocks than its first look needs.
    TooFewPairs,
    /// Stalls touched more requests than the tail without them is judged at.
    Touched,
    /// No probe recorded stalls, so no request can be called untouched.
    NoProbe,
    /// The samples were thinned, so the requests a stall touched cannot be told.
    Thinned,
}

impl ReasonKind {
    /// The stable name, as records and JSON carry it: serde's, read from serde.
    pub fn name(self) -> &'static str {
        serde_variant::to_variant_name(&self).unwrap_or("unknown")
    }

    /// Whether more samples (more time) can answer an N/A of this kind. Every kind is
    /// named, so that a new one must say.
    pub fn more_samples_help(self) -> bool {
        match self {
            ReasonKind::TooFewSamples
            | ReasonKind::Confidence
            | ReasonKind::HeavyTail
            | ReasonKind::HostStalls => true,
            ReasonKind::LoadNotReached
            | ReasonKind::ClosedLoop
            | ReasonKind::Interarrival
            | ReasonKind::Departures
            | ReasonKind::Independence
            | ReasonKind::Stationarity
            | ReasonKind::WarmupStationarity
            | ReasonKind::AgentsDisagree
            | ReasonKind::Quit
            | ReasonKind::AgentLost
            | ReasonKind::TargetFailed
            | ReasonKind::AcceptedEmpty
            | ReasonKind::Hysteresis
            | ReasonKind::Replications
            | ReasonKind::TooFewPairs
            | ReasonKind::Touched
            | ReasonKind::NoProbe
            | ReasonKind::Thinned => false,
        }
    }
}

impl std::fmt::Display for ReasonKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
