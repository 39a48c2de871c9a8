//! The typed scenario that phase 2 produces: every value typed and checked against the
//! others, as the session, the coordinator and the agents take it.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use vernier_agent::AgentKind;
use vernier_agent::Workload;
use vernier_agent::sys::{TimestampMode, Transport};
use vernier_protocols::{InterArrival, Protocol, WorkloadKind};
use vernier_stats::Percentile;

use super::defaults;

/// A validated scenario: every value typed and checked against the others.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Names the run (and its record directory).
    pub name: String,
    /// The file it was read from (`None` for built-in scenarios such as the demo's).
    pub source: Option<PathBuf>,
    /// The scenario as YAML text after overrides, kept verbatim in the record.
    pub yaml: String,
    /// The servers under test, `host:port`; agents are spread over them round-robin.
    pub targets: Vec<String>,
    /// What is spoken.
    pub protocol: Protocol,
    /// What is asked (the synthetic service time, a key-value workload, or echo).
    pub workload: Workload,
    /// The workload is the default one of its protocol (the scenario named none): said
    /// when the run starts, since it is what the result is of.
    pub default_workload: bool,
    /// TCP or UDP.
    pub transport: Transport,
    /// Where load comes from.
    pub agents: Vec<AgentSpec>,
    /// Worker threads per agent.
    pub workers: usize,
    /// Cores to pin each agent's workers to (empty: not pinned).
    pub cpus: Vec<usize>,
    /// Cores a local target runs on, probed for the host's stalls beside the workers' (a
    /// target whose core stalls, or wakes slowly from idle, makes a tail the workers' probe
    /// cannot see). Empty: not probed.
    pub target_cpus: Vec<usize>,
    /// Connections per agent.
    pub connections: usize,
    /// Outstanding requests per connection.
    pub depth: usize,
    /// The arrival process.
    pub interarrival: InterArrival,
    /// Which loads to measure.
    pub load: LoadPlan,
    /// The answer wanted.
    pub ci: CiTarget,
    /// Which methodology decides the verdict.
    pub method: Method,
    /// The percentiles reported besides the target, each with its CI, ascending.
    pub percentiles: Vec<Percentile>,
    /// Where timestamps come from.
    pub timestamps: TimestampMode,
    /// How the agents' workers wait between departures and replies.
    pub poll: vernier_agent::PollMode,
    /// How long this host's idle vCPUs poll before they halt, set for the run and put back
    /// after it (a KVM guest with the haltpoll cpuidle driver, as root); `None`: as the
    /// host has it.
    pub halt_poll: Option<Duration>,
    /// When to give up.
    pub limits: Limits,
    /// How the measurement starts.
    pub sampling: Sampling,
    /// When warm-up ends.
    pub warmup: Warmup,
    /// The significance level of every hypothesis test (inter-arrival fit, independence,
    /// stationarity).
    pub alpha: f64,
    /// A request unanswered this long fails.
    pub timeout: Duration,
    /// The one seed; each agent and worker derives its own.
    pub seed: u64,
    /// What a lost agent does to the run.
    pub on_agent_loss: OnAgentLoss,
    /// Whether a failed inter-arrival test ends the point (`enforce`, the default) or is
    /// only reported on the result (`report`).
    pub interarrival_enforced: bool,
    /// Each point run again and again against hysteresis (`None`: once).
    pub replications: Option<Replications>,
    /// The latency budget's path probe: the share of each point's rate that each agent's
    /// workers add to it as requests asking the target for no service time, among the
    /// load's requests and over its connections (`None`: the path is calibrated at the
    /// run's start only).
    pub budget_probe: Option<f64>,
}

/// Repeated runs of each load point (TailBench's defence against hysteresis: a run's
/// memory layout, connection placement and cores bias all of it, which no CI within the
/// run can see). Each run has fresh connections and a fresh seed and reaches its own
/// verdict; the point's answer is the CI across the runs' estimates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replications {
    /// Runs before the across-run CI is judged (≥ 2).
    pub min: u32,
    /// Runs before the point ends N/A.
    pub max: u32,
    /// The widest acceptable across-run CI of the target percentile.
    pub width: CiWidth,
    /// Idle time between runs (the load stopped, the connections closed).
    pub pause: Duration,
}

/// What a lost agent (killed, partitioned) does to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnAgentLoss {
    /// The point ends N/A "agent lost", and the run with it.
    #[default]
    Stop,
    /// The other agents take over its share of the load; the point restarts at warm-up
    /// without it. With no agent left, the point ends N/A.
    Continue,
}

/// An agent as the scenario names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentSpec {
    /// An agent inside the `vernier` process.
    Local {
        /// Its kind.
        #[serde(skip)]
        kind: AgentKind,
    },
    /// An agent already running (`vernier agent --listen`), reached over gRPC.
    Remote {
        /// `host:port`.
        address: String,
        /// The environment variable holding its token (`VERNIER_TOKEN` if not given).
        token_env: String,
        /// The CA certificate (PEM) its TLS certificate must chain to; `None`: plain text
        /// unless `vernier run --tls-ca` is given.
        tls_ca: Option<PathBuf>,
        /// The name its certificate must carry, if not the address's host.
        tls_name: Option<String>,
        /// Its kind.
        #[serde(skip)]
        kind: AgentKind,
    },
    /// A host to deploy an agent to over SSH (`vernier deploy`).
    Ssh {
        /// The SSH destination (`user@host` or a `~/.ssh/config` alias).
        host: String,
        /// Its kind.
        #[serde(skip)]
        kind: AgentKind,
    },
}

impl AgentSpec {
    /// The agent's kind.
    pub fn kind(&self) -> AgentKind {
        match self {
            AgentSpec::Local { kind }
            | AgentSpec::Remote { kind, .. }
            | AgentSpec::Ssh { kind, .. } => *kind,
        }
    }
}

/// Which loads a run measures, in requests per second over all agents.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadPlan {
    /// One load.
    Fixed(f64),
    /// Each load in turn (a list, or a step sweep expanded).
    Sweep(Vec<f64>),
    /// The highest load whose `percentile` stays below `below`.
    Slo(SloSearch),
}

/// The search for the highest load meeting a service-level objective.
#[derive(Debug, Clone, PartialEq)]
pub struct SloSearch {
    /// The percentile the objective is about (p99).
    pub percentile: Percentile,
    /// Its bound.
    pub below: Duration,
    /// The lowest load tried, req/s.
    pub from: f64,
    /// The highest load tried, req/s.
    pub to: f64,
    /// The search stops when the bracket is narrower than this fraction of its low end.
    pub precision: f64,
}

/// The answer wanted: the CI of one percentile no wider than `width`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CiTarget {
    /// The percentile whose CI is wanted.
    pub percentile: Percentile,
    /// The largest acceptable CI width.
    pub width: CiWidth,
    /// The CI's confidence level, (0, 1).
    pub confidence: f64,
    /// Which tail the CI is for: what decides when a point stops, its verdict and the
    /// exit code.
    pub tail: Tail,
}

/// Which tail a point's CI target is for.
///
/// On a host whose vCPUs stall, every request in flight during a stall (and in the queue
/// it leaves behind) waits it out: the tail *with* stalls is what users of this host see,
/// the tail *without* them what the server itself does (the requests no stall touched,
/// [`vernier_stats::without_stalls`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tail {
    /// The requests no stall of the host touched: the server's own tail (the default).
    #[default]
    WithoutStalls,
    /// Every request, as users of this host see them (`method: lancet`'s only tail).
    WithStalls,
}

impl Tail {
    /// As a scenario and the JSON write it.
    pub fn name(self) -> &'static str {
        match self {
            Tail::WithoutStalls => "without_stalls",
            Tail::WithStalls => "with_stalls",
        }
    }
}

/// How wide the target percentile's CI may be.
///
/// A fixed width (`10us`) suits a known latency; a share of the value (`20%`, as TailBench
/// states its targets) asks for the same relative precision at every load of a sweep, where
/// the percentile may grow a hundredfold between the first and the last.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum CiWidth {
    /// At most this wide, whatever the percentile's value.
    Absolute(Duration),
    /// At most this fraction of the percentile's value wide, in (0, 1): 0.2 for `20%`.
    Relative(f64),
}

impl CiWidth {
    /// The widest acceptable interval in µs for a percentile whose estimate is `value_us`
    /// (ignored by an absolute width; NaN in, NaN out for a relative one).
    pub fn target_us(&self, value_us: f64) -> f64 {
        match *self {
            CiWidth::Absolute(width) => width.as_secs_f64() * 1e6,
            CiWidth::Relative(fraction) => fraction * value_us,
        }
    }
}

impl std::fmt::Display for CiWidth {
    /// `50 µs` or `20% of the value`, short enough for the TUI's header and log lines.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            // From nanoseconds, so that 1.5us prints as 1.5, not 1.4999999999999998.
            CiWidth::Absolute(width) => write!(f, "{} µs", width.as_nanos() as f64 / 1e3),
            // Rounded to a millionth of a percent: 7% is stored as 0.07, and 0.07 × 100 is
            // 7.000000000000001.
            CiWidth::Relative(fraction) => {
                let percent = (fraction * 1e8).round() / 1e6;
                write!(f, "{percent}% of the value")
            }
        }
    }
}

/// Which methodology decides the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Valid answers on noisy hosts: effect-size checks, dependence-valid CIs.
    #[default]
    Vernier,
    /// Lancet's procedure exactly (AD gate, thinning by the lag search, order-statistic
    /// CIs).
    Lancet,
}

/// When to give up on a load point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Measurement rounds (each resample or extension is one) before N/A.
    pub max_tries: u32,
    /// Wall time per load point, warm-up included, before N/A.
    pub max_duration: Duration,
}

/// How measuring starts (Lancet: 10,000 samples at 20%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// The initial share of requests kept, (0, 1].
    pub rate: f64,
    /// The initial number of samples per agent.
    pub samples: usize,
    /// Inter-departure gaps per agent for the Anderson-Darling check.
    pub interarrival_samples: usize,
}

/// When warm-up ends: the achieved rate within `tolerance` of the target over the last
/// `windows` windows of `window` each, and their latency series stationary (ADF).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Warmup {
    /// The length of one window.
    pub window: Duration,
    /// How many windows are judged together.
    pub windows: usize,
    /// The allowed relative shortfall or excess of the achieved rate.
    pub tolerance: f64,
    /// How long warm-up may last before the point is N/A.
    pub max: Duration,
}

impl Scenario {
    /// What a run says of its workload when it is its protocol's default, since the result
    /// is of it; `None` when the scenario names its own.
    pub fn default_workload_note(&self) -> Option<String> {
        let protocol = &self.protocol;
        self.default_workload.then(
            || match (protocol.workload(), protocol.entry().default_path) {
                (_, Some(path)) => format!(
                    "GET {path} on every request, {}'s default (a file's path: or workload:, or \
                     a URL's path, names another)",
                    protocol.name()
                ),
                (WorkloadKind::Keys, None) => format!(
                    "the default keys, {} (a file's workload:, or --keys, --key-size, \
                     --key-dist with a URL, names others)",
                    defaults::KEYS
                ),
                _ => format!(
                    "the default key-value workload, {} (a file's workload:, or --keys, \
                     --key-size, --value-size, --read-ratio, --key-dist with a URL, names \
                     another)",
                    defaults::KEY_VALUE
                ),
            },
        )
    }

    /// The load description of agent `agent` (its index in `agents`) against `target`.
    pub fn load_spec(&self, agent: usize, target: std::net::SocketAddr) -> vernier_agent::LoadSpec {
        vernier_agent::LoadSpec {
            target,
            transport: self.transport,
            protocol: self.protocol.clone(),
            // The budget's path probe rides with the load's requests (see `budget.probe`).
            workload: match &self.workload {
                Workload::Synthetic { service, .. } => Workload::Synthetic {
                    service: *service,
                    probe: self.budget_probe.unwrap_or(0.0),
                },
                other => other.clone(),
            },
            workers: self.workers,
            cpus: self.cpus.clone(),
            connections: self.connections,
            depth: self.depth,
            kind: self
                .agents
                .get(agent)
                .map(AgentSpec::kind)
                .unwrap_or_default(),
            timestamps: self.timestamps.clone(),
            poll: self.poll,
            // Agents must not draw the same requests at the same times.
            seed: self
                .seed
                .wrapping_add((agent as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            timeout: self.timeout,
            duet: None,
        }
    }
}
