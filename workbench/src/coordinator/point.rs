//! One load point through the methodology: warm-up → inter-arrival check → measure →
//! independence → stationarity → confidence → a verdict.
//!
//! One file per phase, as the TUI's step bar shows them: `warmup.rs`, `interarrival.rs`,
//! `measure.rs` (rounds, independence, stationarity, the samples wanted),
//! `confidence.rs` (`method: vernier`'s CI step; `lancet.rs` Lancet's), `departures.rs` (vernier's check of the
//! departures by their effect) and `verdict.rs` (the result, and an N/A's cause).
//! `intake.rs` takes the agents' batches in and sends the live figures out; this file
//! holds the point's state, its clock and the user's commands.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use vernier_agent::{Sample, StallReport, histogram};

use super::event::*;
use super::policy::*;
use super::{Action, Decision, PointConfig};
use crate::scenario::Limits;

mod confidence;
pub(crate) mod departures;
mod intake;
mod interarrival;
mod lancet;
mod measure;
mod verdict;
mod warmup;

/// One closed warm-up window, all agents.
#[derive(Debug, Clone, Copy)]
struct Window {
    dt: f64,
    sent: u64,
    received: u64,
    latency_mean_us: Option<f64>,
}

/// What the point knows of one agent.
#[derive(Debug)]
struct AgentState {
    /// Each worker's backlog as last reported (a gauge: the agent's is their sum).
    backlogs: BTreeMap<u32, u64>,
    gaps: Vec<u64>,
    samples: Vec<Sample>,
    /// The latencies of `samples`, for the live CCDF without sorting them at every
    /// progress event.
    round_latency: Histogram<u64>,
    send_lag: Histogram<u64>,
    /// Reply received minus *scheduled* departure of every request completed in the
    /// round, ns: the wait coordinated omission hides.
    intended: Histogram<u64>,
    /// Latency of every request completed in the round (not only the kept samples), ns:
    /// what `intended` is compared with.
    latency: Histogram<u64>,
    interarrival: Option<InterarrivalResult>,
    lag: Option<usize>,
    ci_width_us: Option<f64>,
    backlog_now: u64,
    backlog_max: u64,
    /// The measuring round's reports (a worker's batch), and those in which some request
    /// waited for a free slot.
    reports: u64,
    backlogged_reports: u64,
    errors: u64,
    received_in_point: u64,
    // Since the last progress event.
    recent_sent: u64,
    recent_received: u64,
    recent_latency: Histogram<u64>,
    recent_send_lag: Histogram<u64>,
    // The open warm-up window (the send lag: since warm-up began).
    win_sent: u64,
    /// Since when requests only fail (no reply at all), and how many failed since.
    failing_since: Option<(Duration, u64, u64)>,
    win_received: u64,
    win_latency_ns: f64,
    win_replies: u64,
    warmup_send_lag: Histogram<u64>,
}

impl AgentState {
    fn new() -> AgentState {
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
    fn latencies_in_send_order(&mut self) -> Vec<f64> {
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
    config: PointConfig,
    /// The scenario's limits: what the user's "continue" adds again.
    base_limits: Limits,
    index: usize,
    /// Where the methodology is (the phase the events name).
    state: Phase,
    started: Duration,
    /// Paused time, which does not count against the limits.
    paused_for: Duration,
    paused_at: Option<Duration>,
    phase_started: Duration,
    agents: Vec<AgentState>,
    windows: Vec<Window>,
    window_started: Duration,
    last_progress: Duration,
    sampling: f64,
    /// The sampling generation last asked of the agents (see [`Point::ask_sampling`]):
    /// only their batches of it count in the phase that asked.
    generation: u64,
    tries: u32,
    interarrival_tries: u32,
    /// Samples per agent the current round waits for.
    wanted: usize,
    /// The measurement round (the `round` column of the record); 0 is warm-up.
    round: u32,
    /// Which run of a replicated point this is (from 1).
    run: Option<u32>,
    /// Whether the current round has passed the independence test.
    independent: bool,
    /// The sequential rule's looks at the current round's interval (`method: vernier`).
    looks: u32,
    /// Whether the last look was narrow and steady: the next one confirms it.
    confirming: bool,
    /// The samples (in all) the rule's last look predicted the target needs, beyond its
    /// next step: what the time left is judged against, and what "continue" asks for.
    needed: Option<usize>,
    measure_started: Duration,
    measure_received: u64,
    ci_width_us: Option<f64>,
    /// Failed checks the scenario asked only to report (`interarrival_check: report`).
    waived: Vec<Reason>,
    /// The host's stalls while the current phase loads (warm-up, or a measuring round), per
    /// probe (merged deltas); the previous phase's until the current one's first report
    /// comes (`host_stale`).
    host: Vec<StallReport>,
    host_stale: bool,
    result: Option<PointResult>,
}

impl Point {
    /// Starts the point at `at`: sets the warm-up sampling rate and the load. `run`, for
    /// a replicated point: which run (from 1), its measurement rounds numbered after those
    /// of the earlier runs (the second figure), so that the record's (point, round) stays a
    /// key.
    pub(crate) fn start(
        config: PointConfig,
        index: usize,
        run: Option<(u32, u32)>,
        at: Duration,
        out: &mut Decision,
    ) -> Point {
        let (run, first_round) = run.map_or((None, 0), |(r, first)| (Some(r), first));
        let mut point = Point {
            agents: (0..config.agents).map(|_| AgentState::new()).collect(),
            sampling: config.sampling.rate,
            // Unique over the run: the point's index in the high half, the run's number
            // and a count below.
            generation: ((index as u64 + 1) << 32) | (u64::from(run.unwrap_or(0)) << 24),
            wanted: config.sampling.samples,
            base_limits: config.limits,
            config,
            index,
            state: Phase::Warmup,
            started: at,
            paused_for: Duration::ZERO,
            paused_at: None,
            phase_started: at,
            windows: Vec::new(),
            window_started: at,
            last_progress: at,
            tries: 0,
            interarrival_tries: 0,
            round: first_round,
            run,
            independent: false,
            looks: 0,
            confirming: false,
            needed: None,
            measure_started: at,
            measure_received: 0,
            ci_width_us: None,
            waived: Vec::new(),
            host: Vec::new(),
            host_stale: false,
            result: None,
        };
        let why = match run {
            Some(r) => format!("run {r}: fresh connections, load applied"),
            None => "load applied".to_string(),
        };
        point.begin_warmup(at, &why, out);
        point
    }

    /// The result, once the point is done.
    pub(crate) fn result(&self) -> Option<&PointResult> {
        self.result.as_ref()
    }

    /// Adds the host probes' latest reports (one per probe, in the session's order) to the
    /// current phase's while the load runs: the host's stalls beside the samples they may
    /// explain, or, for a point that never measured, beside the warm-up they slowed.
    pub(crate) fn add_host(&mut self, reports: &[StallReport]) {
        if !matches!(
            self.state,
            Phase::Warmup | Phase::Interarrival | Phase::Measure
        ) {
            return;
        }
        if std::mem::take(&mut self.host_stale) {
            self.host.clear();
        }
        if self.host.len() < reports.len() {
            self.host.resize_with(reports.len(), StallReport::default);
        }
        for (sum, report) in self.host.iter_mut().zip(reports) {
            sum.merge(report);
        }
    }

    /// The host's stalls seen by each probe while the current round measured (while the
    /// point warmed up, when it never measured): what a verdict can cite when the tail, or
    /// the warm-up, may be the host's. A phase that ends before the probes' first report
    /// (they come every half second) has the previous phase's, so that a verdict never
    /// goes without the host's figures for lack of a report's timing.
    pub(super) fn host(&self) -> &[StallReport] {
        &self.host
    }

    /// The round whose samples are being collected (0: none are).
    pub(crate) fn round(&self) -> u32 {
        if self.state == Phase::Measure {
            self.round
        } else {
            0
        }
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

    /// The point's target rate.
    pub(crate) fn rate(&self) -> f64 {
        self.config.rate
    }

    /// The agents still with us (not lost), which share the load.
    fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.agents.len()).filter(|&i| !self.is_lost(i))
    }

    /// The live agents that measure (not throughput-only): the samples' checks are theirs.
    fn measuring(&self) -> impl Iterator<Item = usize> + '_ {
        self.live()
            .filter(|&i| self.config.measures.get(i).copied().unwrap_or(true))
    }

    /// How many agents share the load.
    fn live_count(&self) -> usize {
        self.live().count().max(1)
    }

    /// Whether agent `agent` was lost earlier.
    pub(crate) fn is_lost(&self, agent: usize) -> bool {
        self.config.lost.get(agent).is_some_and(Option::is_some)
    }

    /// Whether the point can go on without agent `agent`: another live agent measures.
    pub(crate) fn can_lose(&self, agent: usize) -> bool {
        self.state != Phase::Done && self.measuring().any(|i| i != agent)
    }

    /// Goes on without agent `agent` (`on_agent_loss: continue`): the others take over its
    /// share, and the methodology restarts at warm-up, since each agent's rate changed.
    pub(crate) fn lose_agent(
        &mut self,
        at: Duration,
        agent: usize,
        detail: &str,
        out: &mut Decision,
    ) {
        if let Some(slot) = self.config.lost.get_mut(agent) {
            *slot = Some(detail.to_string());
        }
        let why = format!(
            "agent {agent} was lost ({detail}); on_agent_loss: continue, so {} agent(s) take over its load",
            self.live_count()
        );
        self.restart(at, &why, out);
    }

    /// Starts the methodology again at warm-up after the load changed (a new rate, or an
    /// agent fewer): what was concluded at the old load no longer holds, and a pause ends.
    fn restart(&mut self, at: Duration, why: &str, out: &mut Decision) {
        if let Some(p) = self.paused_at.take() {
            self.paused_for += at.saturating_sub(p);
        }
        for a in &mut self.agents {
            a.interarrival = None;
            a.lag = None;
            a.ci_width_us = None;
        }
        self.ci_width_us = None;
        self.begin_warmup(at, why, out);
    }

    fn event(&self, at: Duration, kind: EventKind, out: &mut Decision) {
        out.events.push(Event {
            at: at.as_secs_f64(),
            point: self.index,
            rate: self.config.rate,
            kind,
        });
    }

    fn phase(&mut self, at: Duration, state: Phase, detail: String, out: &mut Decision) {
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

    fn check(&self, at: Duration, check: Check, out: &mut Decision) {
        self.event(at, EventKind::Check(check), out);
    }

    /// Time spent on the point, pauses excluded.
    fn active(&self, at: Duration) -> Duration {
        let paused = self.paused_for
            + self
                .paused_at
                .map_or(Duration::ZERO, |p| at.saturating_sub(p));
        at.saturating_sub(self.started).saturating_sub(paused)
    }

    /// Seconds of the point's time limit still left at `at`.
    fn seconds_left(&self, at: Duration) -> f64 {
        self.config
            .limits
            .max_duration
            .saturating_sub(self.active(at))
            .as_secs_f64()
    }

    /// Advances time: closes windows, runs the checks that are due, enforces the limits.
    pub(crate) fn tick(&mut self, at: Duration, out: &mut Decision) {
        if matches!(self.state, Phase::Done | Phase::Paused) {
            return;
        }
        if self.target_failed(at, out) {
            return;
        }
        if at.saturating_sub(self.last_progress) >= PROGRESS_EVERY {
            self.progress(at, out);
        }
        match self.state {
            Phase::Warmup => self.warmup_tick(at, out),
            Phase::Interarrival => self.interarrival_tick(at, out),
            Phase::Measure => self.measure_tick(at, out),
            Phase::Paused | Phase::Done => {}
        }
        if self.state != Phase::Done && self.active(at) > self.config.limits.max_duration {
            self.out_of_time(at, out);
        }
    }

    // ---- the user's commands ----

    /// Stops the load, keeping what was collected.
    pub(crate) fn pause(&mut self, at: Duration, out: &mut Decision) {
        if matches!(self.state, Phase::Done | Phase::Paused) {
            return;
        }
        self.paused_at = Some(at);
        out.actions.push(Action::Pause);
        self.phase(at, Phase::Paused, "paused by the user".into(), out);
    }

    /// Resumes after a pause: the methodology restarts at warm-up.
    pub(crate) fn resume(&mut self, at: Duration, out: &mut Decision) {
        if self.state != Phase::Paused {
            return;
        }
        if let Some(p) = self.paused_at.take() {
            self.paused_for += at.saturating_sub(p);
        }
        self.begin_warmup(at, "resumed", out);
    }

    /// Changes the load: the methodology restarts at warm-up.
    pub(crate) fn set_load(&mut self, at: Duration, rate: f64, out: &mut Decision) {
        if self.state == Phase::Done {
            return;
        }
        self.config.rate = rate;
        self.restart(at, "load changed by the user", out);
    }

    /// Gives the point more time: what the methodology's last look predicted the precision
    /// asked needs at this rate (with the tenth of the time a last evaluation keeps back),
    /// when that is beyond the limit; otherwise the scenario's allowance once more. The
    /// tries get the scenario's allowance once more. The new limits, and the predicted
    /// seconds when they were what was given.
    pub(crate) fn extend_limits(&mut self, at: Duration) -> (Limits, Option<f64>) {
        let active = self.active(at);
        let predicted = self.more_time().filter(|s| s.is_finite());
        let limits = &mut self.config.limits;
        limits.max_tries += self.base_limits.max_tries;
        let wanted = predicted.map(|s| active + Duration::from_secs_f64((s / 0.9).ceil()));
        match wanted {
            Some(w) if w > limits.max_duration => {
                limits.max_duration = w;
                (*limits, predicted)
            }
            _ => {
                limits.max_duration += self.base_limits.max_duration;
                (*limits, None)
            }
        }
    }

    /// Ends the point with what was measured so far.
    pub(crate) fn accept(&mut self, at: Duration, out: &mut Decision) {
        if self.state == Phase::Done {
            return;
        }
        if self.agents.iter().all(|a| a.samples.is_empty()) {
            let reason = Reason {
                check: ReasonKind::AcceptedEmpty,
                detail: "accepted before any sample was measured".into(),
                figures: BTreeMap::new(),
            };
            self.finish_na(at, vec![reason], out);
        } else {
            self.finish(at, Verdict::Accepted, Vec::new(), out);
        }
    }

    /// Ends the point N/A with `reasons` (the user quit, an agent was lost...).
    pub(crate) fn abort(&mut self, at: Duration, reason: Reason, out: &mut Decision) {
        if self.state != Phase::Done {
            self.finish_na(at, vec![reason], out);
        }
    }
}

fn figures(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs
        .iter()
        .filter(|(_, v)| v.is_finite())
        .map(|(k, v)| ((*k).to_string(), *v))
        .collect()
}
