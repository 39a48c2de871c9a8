//! What the coordinator answers to one input: actions for the agents, events for everyone
//! watching, and the batch it read, handed back.

use vernier_agent::Batch;

use super::event::Event;

/// What the session must do to the agents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Generate `rate` req/s over all agents (split equally).
    Load {
        /// req/s over all agents.
        rate: f64,
    },
    /// Keep this share of the requests sent from now on as samples, in batches marked with
    /// `generation`: the agents' acknowledgement that they apply it.
    Sampling {
        /// The share kept (every round(1/rate)-th request).
        rate: f64,
        /// The coordinator's name for this sampling, unique over the run.
        generation: u64,
    },
    /// Departures later than `tolerance` could move the answer asked (the departure
    /// check's bound): the agents' workers pace to send most within it, spinning no
    /// longer than this host's wake-ups need for that.
    Pace {
        /// The send lag allowed.
        tolerance: std::time::Duration,
    },
    /// Stop generating.
    Pause,
    /// Close every connection and open new ones, the workers reseeded for run `run` of a
    /// replicated point (the load stays stopped until the next `Load`).
    Renew {
        /// The run about to start (from 2).
        run: u32,
    },
    /// The run is over: stop the agents.
    Finished,
}

/// The coordinator's answer to one input.
#[derive(Debug, Default, Clone)]
pub struct Decision {
    /// For the agents, in order.
    pub actions: Vec<Action>,
    /// For the displays and the record, in order.
    pub events: Vec<Event>,
    /// The batch the input carried, once read, with the round it was counted in: for the
    /// record, and then back to its agent for reuse.
    pub taken: Option<Taken>,
}

/// A batch the coordinator has read, handed back with what it decided about it.
#[derive(Debug, Clone)]
pub struct Taken {
    /// The load point it arrived in (the record's `point` column).
    pub point: usize,
    /// The measurement round its samples were counted in, 0 for none (the record's
    /// `round` column): a batch is one sampling generation, so all its samples share it.
    pub round: u32,
    /// The agent it came from.
    pub agent: usize,
    /// The batch itself.
    pub batch: Batch,
}
