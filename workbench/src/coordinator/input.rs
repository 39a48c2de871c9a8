//! What the coordinator is fed: the agents' batches, the clock's ticks, the user's
//! commands, a lost agent and the host probes' reports.

use vernier_agent::{Batch, StallReport};

/// What the coordinator is fed.
// A batch is moved once from its agent to the coordinator: boxing it would only add an
// allocation per batch.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Input {
    /// A batch from agent `agent` (its index in the scenario).
    Batch {
        /// The agent.
        agent: usize,
        /// What it reported.
        batch: Batch,
    },
    /// Time passed (the session ticks every few tens of milliseconds).
    Tick,
    /// The user asked for something.
    Command(UserCommand),
    /// An agent stopped answering.
    AgentLost {
        /// The agent.
        agent: usize,
        /// Why, in words.
        detail: String,
    },
    /// How late the session's host probes' timer wake-ups came since the last such input
    /// (one report per probe, always in the same order): the host's stalls, measured beside
    /// the load. The current point keeps what arrives while it measures.
    Host(Vec<StallReport>),
}

/// What the user can ask at any time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UserCommand {
    /// Stop the load, keep what was collected.
    Pause,
    /// Resume after a pause (the methodology restarts at warm-up).
    Resume,
    /// Change the load, req/s over all agents (restarts at warm-up).
    SetLoad(f64),
    /// End the current point with the result so far.
    Accept,
    /// Give the current point another allowance of its limits (time and tries): a
    /// measurement that needs longer than the scenario allows goes on.
    Continue,
    /// End the run; what was collected is kept.
    Quit,
}

impl std::fmt::Display for UserCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserCommand::Pause => f.write_str("pause"),
            UserCommand::Resume => f.write_str("resume"),
            UserCommand::SetLoad(r) => write!(f, "set load {r:.0} req/s"),
            UserCommand::Accept => f.write_str("accept"),
            UserCommand::Continue => f.write_str("continue past the limits"),
            UserCommand::Quit => f.write_str("quit"),
        }
    }
}
