//! Why the engine could not start or run.

use std::time::Duration;

use thiserror::Error;
use vernier_protocols::WorkloadError;

use crate::config::ConfigError;
use crate::sys::SysError;

/// Why the engine could not start or run.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The load description is invalid.
    #[error("invalid load: {0}")]
    Config(#[from] ConfigError),
    /// The key-value workload could not be generated.
    #[error("invalid workload: {0}")]
    Workload(#[from] WorkloadError),
    /// A connection to the target could not be opened at start.
    #[error("worker {worker}: cannot connect to {target}: {source}")]
    Connect {
        /// The worker.
        worker: u32,
        /// The target.
        target: std::net::SocketAddr,
        /// Why.
        source: SysError,
    },
    /// A worker could not be pinned to its core.
    #[error("worker {worker}: cannot pin to cpu {cpu}: {source}")]
    Pin {
        /// The worker.
        worker: u32,
        /// The core.
        cpu: usize,
        /// Why.
        source: SysError,
    },
    /// The operating system refused a thread or a poller.
    #[error("worker {worker}: {what}: {source}")]
    Os {
        /// The worker.
        worker: u32,
        /// What was being done.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A worker did not report ready in time.
    #[error("worker {0} did not start within {1:?}")]
    StartTimeout(u32, Duration),
    /// The protocol's connections cannot start on this host (a server to be checked
    /// against the system's CA certificates, on a system with none).
    #[error("the protocol cannot start on this host: {0}")]
    Unusable(String),
    /// A worker thread panicked (a bug: please report it).
    #[error("worker {0} stopped unexpectedly")]
    WorkerDied(u32),
}
