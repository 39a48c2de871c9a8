//! The content of run.json: the run, where it ran, its events and its points' results.

use std::fs;

use serde::{Deserialize, Serialize};

use super::shown::{ShownEvent, ShownPoint};
use crate::coordinator::Verdict;

/// The format name written in every run.json. Format 2 writes a point's answer (the tail
/// asked) as `verdict` and every request's as `every_request`; every older format is
/// read into today's types ([`super::read_record`]).
pub const FORMAT: &str = "vernier-run/2";

/// The content of run.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// [`FORMAT`].
    pub format: String,
    /// The scenario's name.
    pub name: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// `running` while it goes on (a record left `running` was killed), then `finished`.
    pub status: String,
    /// The scenario file, if there was one.
    pub scenario_file: Option<String>,
    /// The scenario as run (overrides applied), YAML.
    pub scenario: String,
    /// Where the run ran.
    pub machine: Machine,
    /// The timestamp source in use.
    pub timestamps: String,
    /// Every event, in order.
    pub events: Vec<ShownEvent>,
    /// Each load point's result, in the order measured.
    pub points: Vec<ShownPoint>,
    /// For an SLO search: the highest rate found meeting the objective.
    pub slo_rate: Option<f64>,
    /// The run's verdict (a sweep's is N/A if any point is).
    pub verdict: Option<Verdict>,
}

/// The coordinating host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Its name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    /// CPUs online.
    pub cpus: usize,
    /// The vernier version.
    pub vernier: String,
    /// How idle cores waited at the start of the run (a virtual machine's halt polling
    /// decides what a sleeping server's wake-up costs).
    #[serde(default)]
    pub idle: vernier_agent::sys::IdleState,
}

/// The binary's version with its commit (`0.1.0 (abc1234)`), when the binary said it
/// ([`set_version`]): records and `vernier validate`'s page then name the build.
static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets the version records name (the binary's, with its commit, which only its `main.rs`
/// reads, so that a new commit relinks the binary rather than rebuilding the library).
/// The first call wins.
pub fn set_version(version: &str) {
    let _ = VERSION.set(version.to_string());
}

impl Machine {
    /// This host.
    pub fn this() -> Machine {
        let read = |p: &str| {
            fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        Machine {
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            vernier: VERSION
                .get()
                .cloned()
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
            idle: vernier_agent::sys::IdleState::read(),
        }
    }
}
