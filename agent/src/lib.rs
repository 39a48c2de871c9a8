//! vernier-agent: the data plane that generates open-loop load and timestamps every
//! request, and the gRPC control service the workbench drives it through.
//!
//! - [`sys`]: the only place with `unsafe`: sockets with SO_TIMESTAMPING (kernel and NIC
//!   timestamps), the error queue, hardware-timestamping ioctls, thread pinning.
//! - [`Engine`]: W worker threads, each pinned, owning its connections and its arrival
//!   process; open loop; every request timestamped and histogrammed, a sampled subset kept.
//! - [`control`] and [`client`]: the gRPC control plane (tonic; proto/agent.proto), with a
//!   bearer token on every call, one coordinator at a time, and a lease.
//! - [`calibrate`]: this host's floor: clock cost, loopback ping-pong RTT, timestamp
//!   sources, and the host's own jitter.
//! - [`HostProbe`]: the host's stalls during a run, from how late a sleeping thread's
//!   timer wake-ups come (no spinning), as a [`StallReport`], and each stall as a
//!   [`StallInterval`] on the samples' clock (with a spinning worker's own, in its
//!   [`Batch`]'s `stalls`).

#![deny(missing_docs)]

pub mod calibrate;
#[allow(unsafe_code)]
pub mod sys;

pub mod client;
pub mod control;
pub mod wire;

mod config;
mod engine;
mod measure;
mod probe;
mod stall;

pub use config::{AgentKind, ConfigError, Duet, LoadSpec, PollMode, Workload};
pub use engine::{Engine, EngineError, system_roots};
pub use measure::{
    Batch, Counters, Few, ON_SCHEDULE_NS, Outcome, Recorded, RequestKind, Sample, histogram,
};
pub use probe::{
    CoreWatch, DEFAULT_PERIOD, HostProbe, NOT_OURS_NS, STALL_NS, StallReport, fmt_late,
};
pub use stall::{
    MAX_INTERVALS, PROBE_PERIOD, STALL_THRESHOLD_NS, StallInterval, StallLog, StallSource,
    probe_period, stall_of_spin, stall_of_wakeup,
};
