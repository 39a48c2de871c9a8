//! What one load point is run with: the scenario's values for every point, and the rate.

use std::time::Duration;

use vernier_agent::sys::TimestampMode;
use vernier_protocols::InterArrival;
use vernier_stats::Percentile;

use crate::scenario::{
    CiTarget, Limits, LoadPlan, Method, OnAgentLoss, Replications, Sampling, Scenario, Warmup,
};

/// What one load point is run with (the scenario's values, and the rate).
#[derive(Debug, Clone, PartialEq)]
pub struct PointConfig {
    /// req/s over all agents.
    pub rate: f64,
    /// Agents sharing the load equally (the lost ones excepted).
    pub agents: usize,
    /// Per agent: whether it measures (symmetric and latency agents) or only loads.
    pub measures: Vec<bool>,
    /// Per agent: why it was lost, if it was (with `on_agent_loss: continue`).
    pub lost: Vec<Option<String>>,
    /// What losing an agent does.
    pub on_agent_loss: OnAgentLoss,
    /// Whether a failed inter-arrival test ends the point, or is only reported.
    pub interarrival_enforced: bool,
    /// Worker threads per agent (each generates its share of the agent's rate).
    pub workers: usize,
    /// Connections per agent.
    pub connections: usize,
    /// Outstanding requests per connection.
    pub depth: usize,
    /// The arrival process.
    pub interarrival: InterArrival,
    /// Which methodology decides.
    pub method: Method,
    /// The answer wanted.
    pub ci: CiTarget,
    /// Percentiles reported.
    pub percentiles: Vec<Percentile>,
    /// When to give up.
    pub limits: Limits,
    /// How measuring starts.
    pub sampling: Sampling,
    /// When warm-up ends.
    pub warmup: Warmup,
    /// Significance level of the tests.
    pub alpha: f64,
    /// In an SLO search, the bound: a CI wholly on one side of it decides the point.
    pub slo: Option<Duration>,
    /// The timestamp source, as reported.
    pub timestamps: TimestampMode,
    /// Each point run again and again (`None`: once).
    pub replications: Option<Replications>,
    /// Whether the target runs on this host, whose cores the session probes: then the tail
    /// without stalls is without the host's, else without the client's only.
    pub target_probed: bool,
}

impl PointConfig {
    /// The scenario's values for every point (the rate is set per point).
    pub fn from_scenario(scenario: &Scenario, timestamps: &TimestampMode) -> PointConfig {
        let mut ci = scenario.ci;
        let slo = match &scenario.load {
            LoadPlan::Slo(s) => {
                // The search is about the SLO's percentile.
                ci.percentile = s.percentile;
                Some(s.below)
            }
            _ => None,
        };
        PointConfig {
            rate: 0.0,
            agents: scenario.agents.len(),
            measures: scenario
                .agents
                .iter()
                .map(|a| a.kind() != vernier_agent::AgentKind::Throughput)
                .collect(),
            lost: vec![None; scenario.agents.len()],
            on_agent_loss: scenario.on_agent_loss,
            interarrival_enforced: scenario.interarrival_enforced,
            workers: scenario.workers,
            connections: scenario.connections,
            depth: scenario.depth,
            interarrival: scenario.interarrival,
            method: scenario.method,
            ci,
            percentiles: scenario.percentiles.clone(),
            limits: scenario.limits,
            sampling: scenario.sampling,
            warmup: scenario.warmup,
            alpha: scenario.alpha,
            slo,
            timestamps: timestamps.clone(),
            replications: scenario.replications,
            target_probed: scenario.targets.iter().all(|t| on_this_host(t)),
        }
    }
}

/// Whether a target's address (`host:port`) names this host: a loopback address or
/// `localhost`.
fn on_this_host(target: &str) -> bool {
    let host = target
        .rsplit_once(':')
        .map_or(target, |(host, _)| host)
        .trim_matches(['[', ']']);
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
