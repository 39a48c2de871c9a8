//! The session: the I/O around the coordinator. It starts or reaches the agents (an
//! in-process engine for `local`, gRPC for the others), turns their batch streams into
//! the coordinator's inputs, carries out its actions on every agent, records the run, and
//! hands every event to whoever watches (the headless printer, the TUI).
//!
//! Its files: `interface`, what a session is given and gives back; `target`, the check
//! of the targets before anything starts; `host`, this host's cores (the affinity check,
//! the confinement, the stall probes); `link`, the agents' links; `run`, the run's setup,
//! loop and teardown; `threads`, where vernier's own threads ran; `policy`, its timing.

mod host;
mod interface;
mod link;
mod policy;
mod run;
mod target;
mod target_cores;
mod threads;

pub(crate) use host::{check_affinity, check_spin, start_probes};
pub use interface::{Keep, SessionOptions, SessionResult, Update};
pub(crate) use link::read_pem;
pub use run::{default_record_dir, run, runtime};
pub use target::check_targets;
pub(crate) use target_cores::with_found_cores;

#[cfg(test)]
mod tests;
