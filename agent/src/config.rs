//! What an agent is asked to do: the load's orthogonal values (protocol × workload ×
//! transport × timestamps × kind), validated once before any thread starts.

use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;
use vernier_protocols::{Dist, KvWorkload, Protocol, WorkloadKind};

use crate::sys::{TimestampMode, Transport};

/// What each request asks of the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// The synthetic protocol: the service time each request carries, drawn here.
    Synthetic {
        /// Service-time distribution.
        service: Dist,
        /// The path probe: requests asking for no service time, as a share of the rate on
        /// top of it (0: none), sent among the load's over its connections and reported
        /// apart from it ([`crate::Batch::probes`]), so that what a request meets on the way
        /// and in the server's queue is measured while the load runs, without its service.
        probe: f64,
    },
    /// Key-value requests (memcached, Redis, HTTP `GET /key`), or the keys a declared
    /// protocol's requests carry.
    KeyValue(KvWorkload),
    /// The echo protocol: every request is the same size, content irrelevant.
    Echo,
}

/// Lancet's agent kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AgentKind {
    /// Loads and measures.
    #[default]
    Symmetric,
    /// Loads only: no samples are kept (counters and histograms still are).
    Throughput,
    /// One outstanding request per connection, busy-polling the socket (SO_BUSY_POLL), for
    /// low-rate precise measurement beside throughput agents.
    Latency,
}

/// How a worker waits between departures and replies. A reply that lands while the worker
/// sleeps waits for the thread, and on a virtual machine for its vCPU, to wake: tens of
/// µs on a host like this one, added to every latency the worker measures with user
/// stamps and to the kernel's RX path with kernel stamps. Spinning removes the wake-up
/// and costs a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PollMode {
    /// Sleep in the poller, woken by a reply or by a timer just before the next departure
    /// (then spin its last few µs): the core is free between requests.
    #[default]
    Sleep,
    /// Poll without ever sleeping: no wake-up on any reply, a core at 100% for the run.
    Spin,
    /// Spin while a reply is due (a request in flight, sent less than the spin window ago),
    /// sleep otherwise: the wake-up is spared where it is measured, and the core is busy
    /// only about the round trip's share of the time.
    Adaptive,
}

impl PollMode {
    /// Every mode, in the order the scenario's documentation lists them.
    pub const ALL: [PollMode; 3] = [PollMode::Sleep, PollMode::Spin, PollMode::Adaptive];

    /// The scenario's spelling.
    pub fn name(self) -> &'static str {
        match self {
            PollMode::Sleep => "sleep",
            PollMode::Spin => "spin",
            PollMode::Adaptive => "adaptive",
        }
    }
}

impl std::str::FromStr for PollMode {
    type Err = String;

    fn from_str(s: &str) -> Result<PollMode, String> {
        PollMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("{s:?}: expected sleep, spin or adaptive"))
    }
}

impl std::fmt::Display for PollMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A whole load description.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    /// The server.
    pub target: SocketAddr,
    /// TCP or UDP.
    pub transport: Transport,
    /// What is spoken.
    pub protocol: Protocol,
    /// What is asked.
    pub workload: Workload,
    /// Worker threads.
    pub workers: usize,
    /// Cores to pin the workers to, in order (empty: not pinned).
    pub cpus: Vec<usize>,
    /// Connections, in all, split across the workers.
    pub connections: usize,
    /// Outstanding requests allowed per connection.
    pub depth: usize,
    /// Kind of agent.
    pub kind: AgentKind,
    /// Where timestamps come from.
    pub timestamps: TimestampMode,
    /// How the workers wait between departures and replies.
    pub poll: PollMode,
    /// The scenario's seed; each worker derives its own.
    pub seed: u64,
    /// A request unanswered for this long fails (and, on TCP, its connection is replaced).
    pub timeout: Duration,
    /// A duet's second server and what it is asked (`vernier compare`): every connection
    /// is opened twice, once to `target` and once to it, and each request goes to one or
    /// the other by a fair coin, so that both are measured at the same moments. A
    /// sample's connection says which ([`LoadSpec::to_duet`]). In-process engines only:
    /// the control plane's Configure carries no duet.
    pub duet: Option<Duet>,
}

/// The second server of a duet.
#[derive(Debug, Clone, PartialEq)]
pub struct Duet {
    /// Where its connections go.
    pub server: SocketAddr,
    /// What its requests ask (the same as the target's, or a variant: a synthetic
    /// server's service time).
    pub workload: Workload,
}

/// Why a load description cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// A count that must be positive was zero, or a list too short.
    #[error("{field} = {value}: {expected}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        expected: String,
    },
    /// The protocol and the workload do not go together.
    #[error("protocol {protocol} cannot carry a {workload} workload: {expected}")]
    Mismatch {
        /// The protocol.
        protocol: String,
        /// The workload kind.
        workload: &'static str,
        /// What would.
        expected: &'static str,
    },
}

impl LoadSpec {
    /// Checks every field against the others, so that workers never meet a bad spec.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, value: String, expected: &str| ConfigError::Invalid {
            field,
            value,
            expected: expected.to_string(),
        };
        if self.workers == 0 {
            return Err(invalid("workers", "0".into(), "at least 1"));
        }
        if self.connections < self.workers {
            return Err(invalid(
                "connections",
                self.connections.to_string(),
                &format!("at least one per worker ({} workers)", self.workers),
            ));
        }
        let most = if self.duet.is_some() {
            u16::MAX as usize / 2
        } else {
            u16::MAX as usize
        };
        if self.connections > most {
            return Err(invalid(
                "connections",
                self.connections.to_string(),
                &format!("at most {most}"),
            ));
        }
        if self.depth == 0 {
            return Err(invalid("depth", "0".into(), "at least 1"));
        }
        if !self.cpus.is_empty() && self.cpus.len() < self.workers {
            return Err(invalid(
                "cpus",
                format!("{:?}", self.cpus),
                &format!("one core per worker ({} workers), or none", self.workers),
            ));
        }
        if self.timeout.is_zero() {
            return Err(invalid("timeout", "0s".into(), "a positive duration"));
        }
        if self.transport == Transport::Udp && self.protocol.keeps_state() {
            return Err(invalid(
                "transport",
                "udp".into(),
                &format!(
                    "tcp: {} keeps a session per connection",
                    self.protocol.name()
                ),
            ));
        }
        if let Some(duet) = &self.duet {
            // The second server's workload, checked as the target's is.
            let second = LoadSpec {
                workload: duet.workload.clone(),
                duet: None,
                ..self.clone()
            };
            second.validate()?;
        }
        let mismatch = |workload, expected| ConfigError::Mismatch {
            protocol: self.protocol.to_string(),
            workload,
            expected,
        };
        match (self.protocol.workload(), &self.workload) {
            (WorkloadKind::Service, Workload::Synthetic { probe, .. }) => {
                if probe.is_finite() && (0.0..=1.0).contains(probe) {
                    Ok(())
                } else {
                    Err(invalid(
                        "probe",
                        probe.to_string(),
                        "a share of the rate from 0 (none) to 1",
                    ))
                }
            }
            (WorkloadKind::Fixed, Workload::Echo) => Ok(()),
            (WorkloadKind::KeyValue | WorkloadKind::Keys, Workload::KeyValue(kv)) => kv
                .validate()
                .map_err(|e| invalid("workload", format!("{kv:?}"), &e.to_string())),
            (WorkloadKind::Service, w) => Err(mismatch(
                w.name(),
                "the synthetic protocol needs a service-time distribution",
            )),
            (WorkloadKind::Fixed, w) => Err(mismatch(
                w.name(),
                "echo sends fixed-size requests and takes no workload",
            )),
            (WorkloadKind::KeyValue, w) => Err(mismatch(
                w.name(),
                "a key-value protocol needs a key-value workload",
            )),
            (WorkloadKind::Keys, w) => Err(mismatch(
                w.name(),
                "a declared protocol or a gRPC method draws its keys from a key-value workload",
            )),
        }
    }

    /// Whether the request a sample of connection `conn` measured went to the duet's
    /// second server: a duet's connection `c + connections` is connection `c`'s twin there.
    pub fn to_duet(&self, conn: u16) -> bool {
        self.duet.is_some() && usize::from(conn) >= self.connections
    }

    /// Where connection slot `second` of a worker goes: the duet's second server, or the
    /// target.
    pub fn server(&self, second: bool) -> SocketAddr {
        match &self.duet {
            Some(duet) if second => duet.server,
            _ => self.target,
        }
    }

    /// The number of outstanding requests a connection may have for this kind of agent.
    pub fn effective_depth(&self) -> usize {
        match self.kind {
            AgentKind::Latency => 1,
            _ => self.depth,
        }
    }
}

impl Workload {
    fn name(&self) -> &'static str {
        match self {
            Workload::Synthetic { .. } => "synthetic",
            Workload::KeyValue(_) => "key-value",
            Workload::Echo => "echo",
        }
    }
}
