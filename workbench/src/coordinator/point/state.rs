//! The point's state: what it knows of each agent, of the warm-up's windows and of the
//! methodology's progress, and the few helpers every phase uses (the live and measuring
//! agents, the clock without pauses, events out). Every phase's file works on it.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use vernier_agent::{Sample, StallReport, histogram};

use super::super::config::PointConfig;
use super::super::decision::{Action, Decision};
use super::super::event::{Check, Event, EventKind, Phase};
use super::super::reason::Reason;
use super::super::result::{InterarrivalResult, PointResult};
use crate::scenario::Limits;

/// One closed warm-up window, all agents.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) dt: f64,
    pub(super) sent: u64,
    pub(super) received: u64,
    pub(super) latency_mean_us: Option<f64>,
}

/// What the point knows of one agent.
#[derive(Debug)]
pub(super) struct AgentState {
    /// Each worker's backlog as last reported (a gauge: the agent's is their sum).
    pub(super) backlogs: BTreeMap<u32, u64>,
    pub(super) gaps: Vec<u64>,
    pub(super) samples: Vec<Sample>,
    /// The latencies of `samples`, for the live CCDF without sorting them at every
    /// progress event.
    pub(super) round_latency: Histogram<u64>,
    pub(super) send_lag: Histogram<u64>,
    /// Reply received minus *scheduled* departure of every request completed in the
    /// round, ns: the wait coordinated omission hides.
    pub(super) intended: Histogram<u64>,
    /// Latency of every request completed in the round (not only the kept samples), ns:
    /// what `intended` is compared with.
    pub(super) latency: Histogram<u64>,
    pub(super) interarrival: Option<InterarrivalResult>,
    pub(super) lag: Option<usize>,
    pub(super) ci_width_us: Option<f64>,
    pub(super) backlog_now: u64,
    pub(super) backlog_max: u64,
    /// The measuring round's reports (a worker's batch), and those in which some request
    /// waited for a free slot.
    pub(super) reports: u64,
    pub(super) backlogged_reports: u64,
    pub(super) errors: u64,
    pub(super) received_in_point: u64,
    // Since the last progress event.
    pub(super) recent_sent: u64,
    pub(super) recent_received: u64,
    pub(super) recent_latency: Histogram<u64>,
    pub(super) recent_send_lag: Histogram<u64>,
    // The open warm-up window (the send lag: since warm-up began).
    pub(super) win_sent: u64,
    /// Since when requests only fail (no reply at all), and how many failed since.
    pub(super) failing_since: Option<(Duration, u64, u64)>,
    pub(super) win_received: u64,
    pub(super) win_latency_ns: f64,
    pub(super) win_replies: u64,
    pub(super) warmup_send_lag: Histogram<u64>,
}

impl AgentState {
    pub(super) fn new() -> AgentState {
        AgentState {
            backlogs: BTreeMap::new(),
            gaps: Vec::new(),
            samples: Vec::new(),
            send_lag: histogram(),
            intended: histogram(),
            latency: histogram(),
            interarrival: None,
            lag: None,
            ci_width_us: None,
            backlog_now: 0,
            backlog_max: 0,
            reports: 0,
            backlogged_reports: 0,
            errors: 0,
            received_in_point: 0,
            recent_sent: 0,
            recent_received: 0,
            recent_latency: histogram(),
            round_latency: histogram(),
            recent_send_lag: histogram(),
            failing_since: None,
            win_sent: 0,
            win_received: 0,
            win_latency_ns: 0.0,
            win_replies: 0,
            warmup_send_lag: histogram(),
        }
    }

    /// Latencies in µs, in send order.
    pub(super) fn latencies_in_send_order(&mut self) -> Vec<f64> {
        self.samples.sort_by_key(|s| s.departure_ns);
        self.samples
            .iter()
            .map(|s| s.latency_ns as f64 / 1e3)
            .collect()
    }
}

/// The methodology for one load point.
#[derive(Debug)]
pub(crate) struct Point {
    pub(super) config: PointConfig,
    /// The scenario's limits: what the user's "continue" adds again.
    pub(super) base_limits: Limits,
    pub(super) index: usize,
    /// Where the methodology is (the phase the events name).
    pub(super) state: Phase,
    pub(super) started: Duration,
    /// Paused time, which does not count against the limits.
    pub(super) paused_for: Duration,
    pub(super) paused_at: Option<Duration>,
    pub(super) phase_started: Duration,
    pub(super) agents: Vec<AgentState>,
    pub(super) windows: Vec<Window>,
    pub(super) window_started: Duration,
    pub(super) last_progress: Duration,
    pub(super) sampling: f64,
    /// The sampling generation last asked of the agents (see [`Point::ask_sampling`]):
    /// only their batches of it count in the phase that asked.
    pub(super) generation: u64,
    pub(super) tries: u32,
    pub(super) interarrival_tries: u32,
    /// Samples per agent the current round waits for.
    pub(super) wanted: usize,
    /// The measurement round (the `round` column of the record); 0 is warm-up.
    pub(super) round: u32,
    /// Which run of a replicated point this is (from 1).
    pub(super) run: Option<u32>,
    /// Whether the current round has passed the independence test.
    pub(super) independent: bool,
    /// The sequential rule's looks at the current round's interval (`method: vernier`).
    pub(super) looks: u32,
    /// Whether the last look was narrow and steady: the next one confirms it.
    pub(super) confirming: bool,
    /// The samples (in all) the rule's last look predicted the target needs, beyond its
    /// next step: what the time left is judged against, and what "continue" asks for.
    pub(super) needed: Option<usize>,
    pub(super) measure_started: Duration,
    pub(super) measure_received: u64,
    pub(super) ci_width_us: Option<f64>,
    /// Failed checks the scenario asked only to report (`interarrival_check: report`).
    pub(super) waived: Vec<Reason>,
    /// The host's stalls while the current phase loads (warm-up, or a measuring round), per
    /// probe (merged deltas); the previous phase's until the current one's first report
    /// comes (`host_stale`).
    pub(super) host: Vec<StallReport>,
    pub(super) host_stale: bool,
    pub(super) result: Option<PointResult>,
}

impl Point {
    /// The host's stalls seen by each probe while the current round measured (while the
    /// point warmed up, when it never measured): what a verdict can cite when the tail, or
    /// the warm-up, may be the host's. A phase that ends before the probes' first report
    /// (they come every half second) has the previous phase's, so that a verdict never
    /// goes without the host's figures for lack of a report's timing.
    pub(super) fn host(&self) -> &[StallReport] {
        &self.host
    }

    /// Asks the agents to keep `rate` of the requests they send from now on, under a new
    /// generation: their batches of it are the first to count in the phase that asks.
    pub(super) fn ask_sampling(&mut self, rate: f64, out: &mut Decision) {
        self.generation += 1;
        out.actions.push(Action::Sampling {
            rate,
            generation: self.generation,
        });
    }

    /// The agents still with us (not lost), which share the load.
    pub(super) fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.agents.len()).filter(|&i| !self.is_lost(i))
    }

    /// The live agents that measure (not throughput-only): the samples' checks are theirs.
    pub(super) fn measuring(&self) -> impl Iterator<Item = usize> + '_ {
        self.live()
            .filter(|&i| self.config.measures.get(i).copied().unwrap_or(true))
    }

    /// How many agents share the load.
    pub(super) fn live_count(&self) -> usize {
        self.live().count().max(1)
    }

    /// Whether agent `agent` was lost earlier.
    pub(crate) fn is_lost(&self, agent: usize) -> bool {
        self.config.lost.get(agent).is_some_and(Option::is_some)
    }

    pub(super) fn event(&self, at: Duration, kind: EventKind, out: &mut Decision) {
        out.events.push(Event {
            at: at.as_secs_f64(),
            point: self.index,
            rate: self.config.rate,
            kind,
        });
    }

    pub(super) fn phase(&mut self, at: Duration, state: Phase, detail: String, out: &mut Decision) {
        self.state = state;
        self.phase_started = at;
        self.event(
            at,
            EventKind::Phase {
                phase: state,
                detail,
            },
            out,
        );
    }

    pub(super) fn check(&self, at: Duration, check: Check, out: &mut Decision) {
        self.event(at, EventKind::Check(check), out);
    }

    /// Time spent on the point, pauses excluded.
    pub(super) fn active(&self, at: Duration) -> Duration {
        let paused = self.paused_for
            + self
                .paused_at
                .map_or(Duration::ZERO, |p| at.saturating_sub(p));
        at.saturating_sub(self.started).saturating_sub(paused)
    }

    /// Seconds of the point's time limit still left at `at`.
    pub(super) fn seconds_left(&self, at: Duration) -> f64 {
        self.config
            .limits
            .max_duration
            .saturating_sub(self.active(at))
            .as_secs_f64()
    }
}
