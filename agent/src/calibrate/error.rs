//! Why a calibration could not be completed, and joining its measurement threads.

use std::time::Duration;

use thiserror::Error;

use super::options::WARMUP_ROUND_TRIPS;
use crate::sys::SysError;

/// Why a calibration could not be completed.
#[derive(Debug, Error)]
pub enum CalibrateError {
    /// A figure the options ask for cannot be measured (e.g. no round trips at all).
    #[error("{0}")]
    Options(String),
    /// A thread could not be pinned to a core asked for (or another system call failed).
    #[error(transparent)]
    Sys(#[from] SysError),
    /// A socket or thread of the measurement failed; `what` says which.
    #[error("{what}: {source}")]
    Io {
        /// The step that failed.
        what: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A measurement thread panicked (a bug).
    #[error("the {0} thread panicked")]
    Panicked(&'static str),
    /// The ping-pong reached its time limit still warming up: the host is too slow (or
    /// stalls too often) for a floor.
    #[error(
        "the ping-pong reached its limit of {limit:?} after {done} of its {} warm-up round trips",
        WARMUP_ROUND_TRIPS
    )]
    Limit {
        /// The limit.
        limit: Duration,
        /// Warm-up round trips done by then.
        done: u64,
    },
}

impl CalibrateError {
    /// Whether the error is the options' fault (a bad core, a zero duration) rather than
    /// the host's.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            CalibrateError::Options(_) | CalibrateError::Sys(SysError::Pin { .. })
        )
    }
}

/// Joins a measurement thread, turning its panic into an error.
pub(super) fn join<T>(
    handle: std::thread::JoinHandle<Result<T, CalibrateError>>,
    name: &'static str,
) -> Result<T, CalibrateError> {
    handle.join().map_err(|_| CalibrateError::Panicked(name))?
}
