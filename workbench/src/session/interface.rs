//! What a session is given (its options) and what it gives back: updates for whoever
//! watches as it goes, and its outcome at the end.

use std::path::PathBuf;

use vernier_agent::sys::TimestampMode;

use crate::coordinator::{Event, PointResult, Verdict};

/// How a session is run.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// The run directory (`None`: runs/DATE-NAME under the current directory).
    pub record: Option<PathBuf>,
    /// The CA (PEM) for remote agents' TLS certificates, for agents whose scenario entry
    /// names none (`None`: those are reached in plain text).
    pub tls_ca: Option<PathBuf>,
    /// Serve live figures at `/metrics` on this address for the run (OpenMetrics text;
    /// see [`crate::metrics`]).
    pub metrics: Option<std::net::SocketAddr>,
}

/// What a finished session measured.
#[derive(Debug, Clone)]
pub struct SessionResult {
    /// Each load point's result.
    pub points: Vec<PointResult>,
    /// For an SLO search, the highest load that met it.
    pub slo_rate: Option<f64>,
    /// The run's verdict.
    pub verdict: Verdict,
    /// The run directory.
    pub record: PathBuf,
    /// The timestamp source in use.
    pub timestamps: TimestampMode,
    /// Writing the record failed (the measurement itself went on): why.
    pub record_error: Option<String>,
    /// Where each of vernier's threads ran while the agents ran, its CPU and its wake-ups
    /// (read from /proc; `None` where it cannot be read).
    pub threads: Option<crate::procfs::Usage>,
}

/// Where vernier's own threads were kept when the scenario pins its workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// On the workers' cores, off the others (the target's): workers that sleep keep
    /// their core at a raised priority.
    #[default]
    WithWorkers,
    /// Off the workers' cores: workers that spin (`poll: spin`) have theirs alone.
    OffWorkers,
    /// On the cores neither the workers nor the target hold, where this host has them:
    /// sleeping workers have theirs alone too.
    Spare,
}

/// What a session tells its watcher.
#[derive(Debug, Clone)]
pub enum Update {
    /// The agents are connected; the record is at this path.
    Started {
        /// The run directory.
        record: PathBuf,
        /// The timestamp source in use (`None`: a replayed record that does not say).
        timestamps: Option<TimestampMode>,
        /// The cores vernier's own threads (all but the pinned workers) were confined to
        /// when the scenario pins them (empty: not confined), and whether beside the
        /// workers or off their cores.
        confined: Vec<usize>,
        /// Where `confined` lies, beside the workers or off their cores.
        keep: Keep,
        /// Where the live figures are served (`--metrics`), the port chosen.
        metrics: Option<std::net::SocketAddr>,
    },
    /// The coordinator said something.
    Event(Event),
    /// What the session is about to do before the load or beside it (a start-of-run
    /// measurement, the host probes), in a line for people.
    Preparing(String),
}
