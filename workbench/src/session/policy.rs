//! The session's timing policy: how often it ticks, reports the host and renews leases,
//! and how long it waits on agents and targets, each with the reason for its value.

use std::time::Duration;

/// How often the coordinator is told that time passed when no batch told it: every
/// worker reports at least every 50 ms while it runs, so at any rate a tick comes only
/// when an agent is silent (its decisions are timed in tenths of seconds and more).
pub(super) const TICK: Duration = Duration::from_millis(50);
/// How often the host probes' reports go to the coordinator: a few hundred wake-ups each,
/// enough for a p99, and few enough inputs to cost nothing.
pub(super) const HOST_EVERY: Duration = Duration::from_millis(500);
/// How often remote agents' leases are renewed (their lease is three times longer).
pub(super) const HEARTBEAT: Duration = Duration::from_secs(1);
/// The lease asked of remote agents: a coordinator that vanishes stops their load soon.
pub(super) const LEASE: Duration = Duration::from_secs(3);
/// How long a control call to a remote agent may take: a partitioned agent never answers,
/// and the session must neither hang on it nor on stopping it.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a target may take to accept the connection that checks it before a run: a
/// server on loopback or a lab network accepts within a millisecond, and the refusal of a
/// target that does not comes within the few seconds a user waits for an error.
pub(super) const TARGET_CHECK: Duration = Duration::from_secs(1);
/// How long a local agent's forwarder waits for a batch before it looks again whether the
/// link was closed: a stopped link's thread ends within this.
pub(super) const FORWARD_WAIT: Duration = Duration::from_millis(50);
