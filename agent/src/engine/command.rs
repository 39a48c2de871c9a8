//! What the engine tells a worker through its command channel.

use std::time::Duration;

use vernier_protocols::InterArrival;

/// A command to a worker.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    /// Generate load at this rate (this worker's share) with these gaps.
    Load {
        rate_per_s: f64,
        interarrival: InterArrival,
    },
    /// Stop generating (connections stay open; requests in flight are still measured).
    Pause,
    /// Keep every round(1/rate)-th request sent from now on, in batches of this
    /// generation (the worker first ends the batch of the previous one).
    Sampling { rate: f64, generation: u64 },
    /// Departures later than this could move the answer asked: the pacer spins as much
    /// as this host's wake-ups need for most to leave within it.
    Tolerance(Duration),
    /// Report and exit.
    Stop,
}
