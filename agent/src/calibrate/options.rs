//! What a calibration measures and for how long, and what a ping-pong alone is asked.

use std::time::Duration;

/// What to measure, and for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// The cores to use: the ping-pong client runs on the first and its server on the
    /// second, and the jitter spin runs on each. Empty: the first two CPUs this process
    /// may use (one, on a one-CPU host).
    pub cpus: Vec<usize>,
    /// Round trips of the ping-pong (after a warm-up of [`WARMUP_ROUND_TRIPS`]).
    pub round_trips: u64,
    /// Run the ping-pong for this long instead of a number of round trips.
    pub duration: Option<Duration>,
    /// How long to spin on each core for the jitter test.
    pub jitter: Duration,
    /// The interfaces whose timestamping to report. `None`: every interface.
    pub interfaces: Option<Vec<String>>,
}

/// Round trips run before the ping-pong's measured ones, to warm caches, branch
/// predictors and the TCP connection (the first round trips take the slow paths).
pub const WARMUP_ROUND_TRIPS: u64 = 1_000;

impl Default for CalibrateOptions {
    /// 100,000 round trips (about a second on loopback) and a 1 s spin per core: a few
    /// seconds in all.
    fn default() -> Self {
        CalibrateOptions {
            cpus: Vec::new(),
            round_trips: 100_000,
            duration: None,
            jitter: Duration::from_secs(1),
            interfaces: None,
        }
    }
}

/// A ping-pong for [`loopback`](super::loopback).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingPong {
    /// The client's core (it times the round trips).
    pub client_cpu: usize,
    /// The server's core; the client's own makes the ends block rather than spin.
    pub server_cpu: usize,
    /// Round trips measured after the warm-up of [`WARMUP_ROUND_TRIPS`].
    pub round_trips: u64,
    /// Stop after this long, warm-up included, with the round trips measured by then (a
    /// host that stalls): [`LoopbackRtt::stopped_at_limit`](super::LoopbackRtt::stopped_at_limit) says so.
    pub limit: Duration,
}
