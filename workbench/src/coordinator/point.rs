//! One load point through the methodology: warm-up → inter-arrival check → measure →
//! independence → stationarity → confidence → a verdict.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use vernier_agent::{Batch, Counters, Sample, StallReport, histogram};
use vernier_stats::min_samples_for_ci;

use super::checks::{self, Interval};
use super::event::*;
use super::policy::*;
use super::{Action, Decision, PointConfig};
use crate::scenario::{Limits, Method};

mod confidence;
mod departures;
mod warmup;

use confidence::{Estimate, Snapshot};

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
    /// Each worker's cumulative counters as last reported.
    workers: BTreeMap<u32, Counters>,
    /// The latest batch's end, ns on the agent's clock.
    last_elapsed_ns: u64,
    /// Samples sent before this are not part of the current round.
    cutoff_ns: u64,
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
            workers: BTreeMap::new(),
            last_elapsed_ns: 0,
            cutoff_ns: u64::MAX,
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
    tries: u32,
    interarrival_tries: u32,
    /// Samples per agent the current round waits for.
    wanted: usize,
    /// The measurement round (the `round` column of the record); 0 is warm-up.
    round: u32,
    /// Whether the current round has passed the independence test.
    independent: bool,
    measure_started: Duration,
    measure_received: u64,
    ci_width_us: Option<f64>,
    /// Failed checks the scenario asked only to report (`interarrival_check: report`).
    waived: Vec<Reason>,
    /// The host's stalls while the current round measures, per probe (merged deltas).
    host: Vec<StallReport>,
    result: Option<PointResult>,
}

impl Point {
    /// Starts the point at `at`: sets the warm-up sampling rate and the load.
    pub(crate) fn start(
        config: PointConfig,
        index: usize,
        at: Duration,
        out: &mut Decision,
    ) -> Point {
        let mut point = Point {
            agents: (0..config.agents).map(|_| AgentState::new()).collect(),
            sampling: config.sampling.rate,
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
            round: 0,
            independent: false,
            measure_started: at,
            measure_received: 0,
            ci_width_us: None,
            waived: Vec::new(),
            host: Vec::new(),
            result: None,
        };
        point.begin_warmup(at, "load applied", out);
        point
    }

    /// The result, once the point is done.
    pub(crate) fn result(&self) -> Option<&PointResult> {
        self.result.as_ref()
    }

    /// Adds the host probes' latest reports (one per probe, in the session's order) to the
    /// current round's, while it measures: the host's stalls beside the samples they may
    /// explain.
    pub(crate) fn add_host(&mut self, reports: &[StallReport]) {
        if self.state != Phase::Measure {
            return;
        }
        if self.host.len() < reports.len() {
            self.host.resize_with(reports.len(), StallReport::default);
        }
        for (sum, report) in self.host.iter_mut().zip(reports) {
            sum.merge(report);
        }
    }

    /// The host's stalls seen by each probe while the current round measured: what a
    /// verdict can cite when the tail may be the host's.
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

    /// The round a sample belongs to (0: none).
    pub(crate) fn round_of(&self, agent: usize, departure_ns: u64) -> u32 {
        match self.agents.get(agent) {
            Some(a) if self.state == Phase::Measure && departure_ns >= a.cutoff_ns => self.round,
            _ => 0,
        }
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

    /// The sampling rate during warm-up: enough kept gaps for the inter-arrival test soon,
    /// never less than the measurement's rate.
    fn warmup_sampling(&self) -> f64 {
        let per_agent = self.config.rate / self.live_count() as f64;
        (4.0 * self.config.sampling.interarrival_samples as f64 / per_agent.max(1.0))
            .clamp(self.measure_sampling(), 1.0)
    }

    fn begin_warmup(&mut self, at: Duration, why: &str, out: &mut Decision) {
        for a in &mut self.agents {
            a.gaps.clear();
            a.samples.clear();
            a.round_latency.reset();
            a.cutoff_ns = u64::MAX;
            a.win_sent = 0;
            a.win_received = 0;
            a.win_latency_ns = 0.0;
            a.win_replies = 0;
            a.warmup_send_lag.reset();
        }
        self.windows.clear();
        self.window_started = at;
        self.interarrival_tries = 0;
        self.waived.clear();
        self.host.clear();
        self.independent = false;
        self.sampling = self.measure_sampling();
        self.wanted = self.config.sampling.samples;
        out.actions.push(Action::Sampling(self.warmup_sampling()));
        out.actions.push(Action::Load {
            rate: self.config.rate,
        });
        self.phase(
            at,
            Phase::Warmup,
            format!(
                "{why}: {:.0} req/s over {} agent(s); warm-up ends when the rate is within {:.0}% and {} windows of {:?} are stationary",
                self.config.rate,
                self.live_count(),
                self.config.warmup.tolerance * 100.0,
                self.config.warmup.windows,
                self.config.warmup.window
            ),
            out,
        );
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

    /// Feeds one batch of agent `agent`.
    pub(crate) fn batch(&mut self, at: Duration, agent: usize, batch: &Batch, out: &mut Decision) {
        if self.state == Phase::Done || agent >= self.agents.len() || self.is_lost(agent) {
            return;
        }
        let a = &mut self.agents[agent];
        let before = a
            .workers
            .insert(batch.worker, batch.counters)
            .unwrap_or_default();
        let sent = batch.counters.sent.saturating_sub(before.sent);
        let received = batch.counters.received.saturating_sub(before.received);
        let errors = (batch.counters.failed + batch.counters.error_replies)
            .saturating_sub(before.failed + before.error_replies);
        // A worker seen for the first time has counted since the engine started: its
        // deltas are only trusted from its second batch on.
        let (sent, received, errors) = if before == Counters::default() {
            (0, 0, 0)
        } else {
            (sent, received, errors)
        };
        a.errors += errors;
        a.received_in_point += received;
        // A target that stopped answering: failures and no reply at all.
        let connect_failures = batch
            .counters
            .connect_failures
            .saturating_sub(before.connect_failures);
        if before != Counters::default() {
            if received > 0 {
                a.failing_since = None;
            } else if errors + connect_failures > 0 {
                let (since, e, c) = a.failing_since.unwrap_or((at, 0, 0));
                a.failing_since = Some((since, e + errors, c + connect_failures));
            }
        }
        a.recent_sent += sent;
        a.recent_received += received;
        let _ = a.recent_latency.add(&batch.latency);
        let _ = a.recent_send_lag.add(&batch.send_lag);
        a.last_elapsed_ns = a.last_elapsed_ns.max(batch.elapsed.as_nanos() as u64);
        a.backlog_now = a.workers.values().map(|c| c.backlog).sum();
        a.backlog_max = a.backlog_max.max(a.backlog_now);
        a.win_sent += sent;
        a.win_received += received;
        a.win_latency_ns += batch.latency.mean() * batch.latency.len() as f64;
        a.win_replies += batch.latency.len();
        match self.state {
            // Each merge walks the whole histogram: only where its figure is used.
            Phase::Warmup => {
                let _ = a.warmup_send_lag.add(&batch.send_lag);
            }
            Phase::Interarrival => a.gaps.extend_from_slice(&batch.interarrivals),
            Phase::Measure => {
                let cutoff = a.cutoff_ns;
                for s in batch.samples.iter().filter(|s| s.departure_ns >= cutoff) {
                    a.samples.push(*s);
                    a.round_latency.saturating_record(s.latency_ns.max(1));
                }
                let _ = a.send_lag.add(&batch.send_lag);
                let _ = a.intended.add(&batch.intended);
                let _ = a.latency.add(&batch.latency);
                self.measure_received += received;
            }
            Phase::Paused | Phase::Done => {}
        }
        self.tick(at, out);
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

    /// Ends the point N/A when an agent has seen only failures, no reply, for
    /// [`TARGET_FAILED_AFTER`]: the target died or restarted; what was measured before is
    /// kept in the record, and the reason says when.
    fn target_failed(&mut self, at: Duration, out: &mut Decision) -> bool {
        let Some((agent, since, errors, connects)) = self.live().find_map(|i| {
            let (since, e, c) = self.agents[i].failing_since?;
            (at.saturating_sub(since) >= TARGET_FAILED_AFTER).then_some((i, since, e, c))
        }) else {
            return false;
        };
        let reason = Reason {
            check: ReasonKind::TargetFailed,
            detail: format!(
                "the target stopped answering agent {agent} at {:.2}s: {errors} failed requests and {connects} failed connects since, and no reply for {:.1}s",
                since.as_secs_f64(),
                at.saturating_sub(since).as_secs_f64()
            ),
            figures: figures(&[
                ("at_s", since.as_secs_f64()),
                ("failed", errors as f64),
                ("connect_failures", connects as f64),
            ]),
        };
        self.finish_na(at, vec![reason], out);
        true
    }

    /// The target percentile of this round's samples so far, µs (NaN before any).
    fn live_value_us(&self) -> f64 {
        let mut all = histogram();
        for a in &self.agents {
            let _ = all.add(&a.round_latency);
        }
        if all.is_empty() {
            return f64::NAN;
        }
        all.value_at_quantile(self.config.ci.percentile / 100.0) as f64 / 1e3
    }

    fn progress(&mut self, at: Duration, out: &mut Decision) {
        let dt = at
            .saturating_sub(self.last_progress)
            .as_secs_f64()
            .max(1e-9);
        self.last_progress = at;
        let us = |h: &Histogram<u64>, q: f64| {
            (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1e3)
        };
        let lost: Vec<bool> = (0..self.agents.len()).map(|i| self.is_lost(i)).collect();
        let agents: Vec<AgentProgress> = self
            .agents
            .iter_mut()
            .zip(lost)
            .map(|(a, lost)| {
                let p = AgentProgress {
                    lost,
                    sent_rate: a.recent_sent as f64 / dt,
                    achieved_rate: a.recent_received as f64 / dt,
                    p50_us: us(&a.recent_latency, 0.5),
                    p99_us: us(&a.recent_latency, 0.99),
                    send_lag_p99_us: us(&a.recent_send_lag, 0.99),
                    backlog: a.backlog_now,
                    errors: a.errors,
                    interarrival_pvalue: a.interarrival.as_ref().and_then(|r| r.pvalue),
                    independence_lag: a.lag,
                    ci_width_us: a.ci_width_us,
                    samples: a.samples.len(),
                };
                a.recent_sent = 0;
                a.recent_received = 0;
                a.recent_latency.reset();
                a.recent_send_lag.reset();
                p
            })
            .collect();
        let samples: usize = self.agents.iter().map(|a| a.samples.len()).sum();
        let eta_s = (self.state == Phase::Measure).then(|| self.seconds_to_collect(self.wanted));
        let phase = self.state;
        let progress = Progress {
            phase,
            agents,
            samples,
            samples_wanted: self.wanted,
            sampling_rate: self.sampling,
            ci_width_us: self.ci_width_us,
            // A relative target is a share of the live estimate (this round's samples).
            ci_target_us: Some(self.config.ci.width.target_us(self.live_value_us()))
                .filter(|t| t.is_finite()),
            tries: self.tries,
            eta_s,
            max_duration_s: self.config.limits.max_duration.as_secs_f64(),
            elapsed_s: self.active(at).as_secs_f64(),
            ccdf: if self.state == Phase::Measure || self.state == Phase::Done {
                let mut all = histogram();
                for a in &self.agents {
                    let _ = all.add(&a.round_latency);
                }
                ccdf(&all)
            } else {
                Vec::new()
            },
            host: self
                .host()
                .iter()
                .map(StallReport::without_histogram)
                .collect(),
        };
        self.event(at, EventKind::Progress(progress), out);
    }

    // ---- inter-arrival ----

    fn interarrival_tick(&mut self, at: Duration, out: &mut Decision) {
        let wanted = self.config.sampling.interarrival_samples;
        // Throughput agents keep no samples, so no gaps either: the measuring agents' gaps
        // are tested.
        if self.measuring().any(|i| self.agents[i].gaps.len() < wanted) {
            return;
        }
        let per_worker = self.config.rate / (self.live_count() * self.config.workers) as f64;
        let target_mean_ns = 1e9 / per_worker;
        // Under `method: vernier` the departures are judged by their effect on the answer
        // at the verdict (departures.rs); Anderson-Darling is computed and reported.
        let vernier = self.config.method == Method::Vernier;
        let enforced = self.config.interarrival_enforced && !vernier;
        let mut failed = Vec::new();
        for i in self.measuring().collect::<Vec<_>>() {
            let gaps: Vec<u64> = {
                let g = &self.agents[i].gaps;
                g[g.len() - wanted..].to_vec()
            };
            let (mut check, result) = checks::interarrival(
                i,
                &gaps,
                &self.config.interarrival,
                target_mean_ns,
                self.config.alpha,
                self.config.warmup.tolerance,
            );
            if !check.pass {
                failed.push((i, check.detail.clone(), result.statistic, result.pvalue));
            }
            check.decision = if check.pass {
                "fits".into()
            } else if vernier {
                "reported: the departures' effect on the answer is judged at the verdict".into()
            } else if !enforced {
                "not enforced (interarrival_check: report): measure anyway, and say so".into()
            } else if self.interarrival_tries + 1 < INTERARRIVAL_TRIES {
                "test fresh gaps".into()
            } else {
                "give up: the agent cannot generate this process".into()
            };
            self.agents[i].interarrival = Some(result);
            self.check(at, check, out);
        }
        self.interarrival_tries += 1;
        if failed.is_empty() {
            self.begin_round(at, "the inter-arrival times fit", out);
        } else if vernier {
            self.begin_round(
                at,
                "Anderson-Darling rejects the departures (reported; their effect on the answer is judged at the verdict)",
                out,
            );
        } else if !enforced {
            self.waived = failed
                .iter()
                .map(|(agent, detail, statistic, pvalue)| Reason {
                    check: ReasonKind::Interarrival,
                    detail: format!(
                        "agent {agent}'s departures are not {} (not enforced: interarrival_check: report): {detail}",
                        self.config.interarrival
                    ),
                    figures: figures(&[
                        ("agent", *agent as f64),
                        ("statistic", *statistic),
                        ("pvalue", pvalue.unwrap_or(f64::NAN)),
                    ]),
                })
                .collect();
            self.begin_round(
                at,
                "the inter-arrival test failed and is only reported (interarrival_check: report)",
                out,
            );
        } else if self.interarrival_tries < INTERARRIVAL_TRIES {
            for a in &mut self.agents {
                a.gaps.clear();
            }
        } else {
            let reasons = failed
                .into_iter()
                .map(|(agent, detail, statistic, pvalue)| Reason {
                    check: ReasonKind::Interarrival,
                    detail: format!(
                        "agent {agent} cannot generate the {} inter-arrival process after {INTERARRIVAL_TRIES} tries: {detail} (too few connections, or an overloaded client?)",
                        self.config.interarrival
                    ),
                    figures: figures(&[
                        ("agent", agent as f64),
                        ("statistic", statistic),
                        ("pvalue", pvalue.unwrap_or(f64::NAN)),
                    ]),
                })
                .collect();
            self.finish_na(at, reasons, out);
        }
    }

    // ---- measure ----

    /// Starts a measurement round: fresh samples at the current sampling rate.
    fn begin_round(&mut self, at: Duration, why: &str, out: &mut Decision) {
        self.round += 1;
        self.tries += 1;
        self.independent = false;
        self.host.clear();
        for a in &mut self.agents {
            a.samples.clear();
            a.round_latency.reset();
            a.send_lag.reset();
            a.intended.reset();
            a.latency.reset();
            a.cutoff_ns = a.last_elapsed_ns + SAMPLING_SETTLE_NS;
        }
        self.measure_started = at;
        self.measure_received = 0;
        out.actions.push(Action::Sampling(self.sampling));
        self.phase(
            at,
            Phase::Measure,
            format!(
                "{why}: round {}, {} samples per agent at {:.3}% sampling",
                self.round,
                self.wanted,
                self.sampling * 100.0
            ),
            out,
        );
    }

    fn measure_tick(&mut self, at: Duration, out: &mut Decision) {
        if self
            .measuring()
            .any(|i| self.agents[i].samples.len() < self.wanted)
        {
            return;
        }
        match self.config.method {
            Method::Lancet => {
                if !self.independent && !self.check_independence(at, out) {
                    return;
                }
                let snapshot = self.snapshot();
                if !self.check_stationarity(at, &snapshot, out) {
                    return;
                }
                self.check_confidence(at, out);
            }
            Method::Vernier => {
                // Copied and sorted once for the whole evaluation.
                let snapshot = self.snapshot();
                self.report_independence(at, &snapshot, out);
                if !self.check_stationarity(at, &snapshot, out) {
                    return;
                }
                self.check_confidence_dependent(at, &snapshot, out);
            }
        }
    }

    /// True when every agent's samples are independent; otherwise thins the sampling and
    /// starts a new round (or ends the point).
    fn check_independence(&mut self, at: Duration, out: &mut Decision) -> bool {
        let mut worst = 1usize;
        let mut stuck = None;
        for i in self.measuring().collect::<Vec<_>>() {
            let x = self.agents[i].latencies_in_send_order();
            let (mut check, lag) = checks::independence(i, &x, self.config.alpha);
            self.agents[i].lag = lag;
            match lag {
                Some(l) => worst = worst.max(l),
                None => stuck = Some((i, check.detail.clone())),
            }
            check.decision = match lag {
                Some(1) => "independent".into(),
                Some(l) => format!("keep one request in {l}"),
                None => "correlated at every lag tried".into(),
            };
            self.check(at, check, out);
        }
        if let Some((agent, detail)) = stuck {
            let reason = Reason {
                check: ReasonKind::Independence,
                detail: format!("agent {agent}'s samples stay correlated: {detail}"),
                figures: figures(&[("sampling_rate", self.sampling)]),
            };
            self.finish_na(at, vec![reason], out);
            return false;
        }
        if worst == 1 {
            self.independent = true;
            return true;
        }
        let thinned = self.sampling / worst as f64;
        let per_agent = self.config.rate / self.live_count() as f64;
        let seconds = self.wanted as f64 / (per_agent * thinned);
        let left = self.seconds_left(at);
        if thinned < MIN_SAMPLING || seconds > left || self.tries >= self.config.limits.max_tries {
            let reason = Reason {
                check: ReasonKind::Independence,
                detail: format!(
                    "samples are independent only one in {worst}: {} samples at {:.4}% sampling would take {seconds:.0}s, {}",
                    self.wanted,
                    thinned * 100.0,
                    if self.tries >= self.config.limits.max_tries {
                        format!("and the {} tries are used up", self.config.limits.max_tries)
                    } else {
                        format!("beyond the {left:.0}s left")
                    }
                ),
                figures: figures(&[
                    ("lag", worst as f64),
                    ("sampling_rate", thinned),
                    ("seconds_needed", seconds),
                ]),
            };
            self.finish_na(at, vec![reason], out);
            return false;
        }
        self.sampling = thinned;
        self.begin_round(
            at,
            &format!("samples correlated up to lag {worst}: sampling ÷ {worst}"),
            out,
        );
        false
    }

    /// True when every agent's samples are stationary; otherwise asks for more.
    fn check_stationarity(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        out: &mut Decision,
    ) -> bool {
        let mut failed = Vec::new();
        let mut all = Vec::new();
        for a in &snapshot.agents {
            let i = a.agent;
            let check = checks::stationarity(
                CheckKind::Stationarity,
                Some(i),
                &a.in_order,
                self.config.alpha,
                None,
            );
            if !check.pass {
                failed.push((i, check.detail.clone(), check.pvalue));
            }
            all.push(check);
        }
        let more = self.wanted * 2;
        for mut check in all {
            check.decision = if check.pass {
                "stationary".into()
            } else {
                format!("collect more: {more} per agent")
            };
            self.check(at, check, out);
        }
        if failed.is_empty() {
            return true;
        }
        let reasons: Vec<Reason> = failed
            .into_iter()
            .map(|(agent, detail, p)| Reason {
                check: ReasonKind::Stationarity,
                detail: format!("agent {agent}'s latencies are not stationary: {detail}"),
                figures: figures(&[("agent", agent as f64), ("pvalue", p.unwrap_or(f64::NAN))]),
            })
            .collect();
        self.extend(at, more, reasons, out);
        false
    }

    /// Seconds until every agent has `wanted` samples at the current rate and sampling.
    fn seconds_to_collect(&self, wanted: usize) -> f64 {
        let fewest = self.fewest_samples();
        let per_agent = self.config.rate / self.live_count() as f64 * self.sampling;
        wanted.saturating_sub(fewest) as f64 / per_agent.max(1e-9)
    }

    /// The kept samples of the measuring agent that has fewest.
    fn fewest_samples(&self) -> usize {
        self.measuring()
            .map(|i| self.agents[i].samples.len())
            .min()
            .unwrap_or(0)
    }

    /// Asks for `wanted` samples per agent in the same round, or ends the point N/A with
    /// `reasons` when the tries or the time are used up.
    fn extend(&mut self, at: Duration, wanted: usize, reasons: Vec<Reason>, out: &mut Decision) {
        let seconds = self.seconds_to_collect(wanted);
        let left = self.seconds_left(at);
        if self.tries >= self.config.limits.max_tries || seconds > left {
            self.finish_na(at, reasons, out);
            return;
        }
        self.tries += 1;
        self.wanted = wanted;
    }

    fn check_confidence(&mut self, at: Duration, out: &mut Decision) {
        let p = self.config.ci.percentile;
        let conf = self.config.ci.confidence;
        let min_n = min_samples_for_ci(p / 100.0, conf).unwrap_or(usize::MAX);
        // Each agent's interval.
        let mut intervals = Vec::new();
        let measuring: Vec<usize> = self.measuring().collect();
        let measuring_count = measuring.len().max(1);
        for i in measuring {
            let mut x = self.agents[i].latencies_in_send_order();
            x.sort_by(f64::total_cmp);
            let iv = checks::interval(&x, p, conf);
            let ci = iv.and_then(|(v, ci)| {
                ci.map(|(lo, hi)| Interval {
                    value: v,
                    low: lo,
                    high: hi,
                })
            });
            self.agents[i].ci_width_us = ci.map(|c| c.width());
            intervals.push((i, x.len(), ci));
        }
        let all = self.merged_sorted();
        let n = all.len();
        let combined = checks::interval(&all, p, conf).and_then(|(v, ci)| {
            ci.map(|(lo, hi)| Interval {
                value: v,
                low: lo,
                high: hi,
            })
        });
        let Some(combined) = combined else {
            // Too few samples for any CI of this percentile.
            let wanted = (min_n as f64 * 1.1).ceil() as usize / measuring_count + 1;
            let reason = Reason {
                check: ReasonKind::TooFewSamples,
                detail: format!(
                    "too few samples for the p{p} CI at {:.0}%: it needs at least {min_n}, there are {n}",
                    conf * 100.0
                ),
                figures: figures(&[("samples", n as f64), ("min_samples", min_n as f64)]),
            };
            let check = Check {
                check: CheckKind::Confidence,
                agent: None,
                pass: false,
                statistic: None,
                pvalue: None,
                n,
                detail: reason.detail.clone(),
                decision: format!("collect {wanted} per agent"),
                data: None,
            };
            self.check(at, check, out);
            self.extend(at, wanted.max(self.wanted + 1), vec![reason], out);
            return;
        };
        let target_us = self.config.ci.width.target_us(combined.value);
        self.ci_width_us = Some(combined.width());
        if !self.agents_agree(at, p, n, &intervals, out) {
            return;
        }
        let narrow = combined.width() <= target_us;
        let slo = self.config.slo.map(|s| s.as_secs_f64() * 1e6);
        let decided = slo.is_some_and(|s| combined.high < s || combined.low > s);
        let mut check = Check {
            check: CheckKind::Confidence,
            agent: None,
            pass: narrow || decided,
            statistic: Some(combined.width()),
            pvalue: None,
            n,
            detail: format!(
                "p{p} = {:.1} µs, {:.0}% CI [{:.1}, {:.1}], width {:.1} µs (target {target_us:.1}) from {n} samples",
                combined.value,
                conf * 100.0,
                combined.low,
                combined.high,
                combined.width()
            ),
            decision: String::new(),
            data: None,
        };
        if narrow || decided {
            check.decision = if narrow {
                "converged".into()
            } else {
                format!(
                    "the CI lies {} the SLO of {:.0} µs: decided",
                    if combined.high < slo.unwrap_or(0.0) {
                        "below"
                    } else {
                        "above"
                    },
                    slo.unwrap_or(0.0)
                )
            };
            self.check(at, check, out);
            self.finish(at, Verdict::Converged, Vec::new(), out);
            return;
        }
        // The width shrinks as 1/√n: predict the samples needed rather than step blindly.
        let per_agent_n = n / measuring_count;
        let predicted =
            (per_agent_n as f64 * (combined.width() / target_us).powi(2) * 1.1).ceil() as usize;
        let wanted = predicted.max(self.wanted + self.wanted / 4);
        check.decision = format!("collect {wanted} per agent (the width narrows as 1/√n)");
        self.check(at, check, out);
        let heaviness =
            vernier_stats::tail_heaviness(combined.value, combined.width(), p / 100.0, n, conf)
                .unwrap_or(f64::NAN);
        let total_needed = wanted * measuring_count;
        let mut figures = figures(&[
            ("ci_width_us", combined.width()),
            ("target_us", target_us),
            ("samples", n as f64),
            ("samples_needed", total_needed as f64),
        ]);
        let found = format!(
            "the p{p} CI is still {:.1} µs wide after {n} samples (target {target_us:.1} µs)",
            combined.width()
        );
        let beyond = format!("at 1/√n it needs about {total_needed} samples, beyond the limits");
        let reason = if heaviness > 2.0 {
            figures.insert("heaviness".into(), heaviness);
            Reason {
                check: ReasonKind::HeavyTail,
                detail: format!(
                    "heavy tail: {found}, {heaviness:.1}× wider than an exponential tail's; {beyond}"
                ),
                figures,
            }
        } else {
            Reason {
                check: ReasonKind::Confidence,
                detail: format!("{found}; {beyond}"),
                figures,
            }
        };
        self.extend(at, wanted, vec![reason], out);
    }

    fn merged_sorted(&self) -> Vec<f64> {
        let mut all: Vec<f64> = self
            .agents
            .iter()
            .flat_map(|a| a.samples.iter().map(|s| s.latency_ns as f64 / 1e3))
            .collect();
        all.sort_by(f64::total_cmp);
        all
    }

    fn out_of_time(&mut self, at: Duration, out: &mut Decision) {
        match self.state {
            Phase::Warmup => self.warmup_failed(at, out),
            _ => {
                let reason = Reason {
                    check: match self.state {
                        Phase::Interarrival => ReasonKind::Interarrival,
                        _ => ReasonKind::Confidence,
                    },
                    detail: format!(
                        "out of time: max_duration {:?} reached in the {} phase{}",
                        self.config.limits.max_duration,
                        match self.state {
                            Phase::Interarrival => "inter-arrival",
                            _ => "measurement",
                        },
                        self.ci_width_us
                            .map_or(String::new(), |w| format!(" with the CI {w:.1} µs wide"))
                    ),
                    figures: figures(&[("ci_width_us", self.ci_width_us.unwrap_or(f64::NAN))]),
                };
                self.finish_na(at, vec![reason], out);
            }
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

    /// Adds the scenario's allowance to this point's limits once more; the new limits.
    pub(crate) fn extend_limits(&mut self) -> Limits {
        let limits = &mut self.config.limits;
        limits.max_duration += self.base_limits.max_duration;
        limits.max_tries += self.base_limits.max_tries;
        *limits
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

    // ---- the end ----

    fn finish_na(&mut self, at: Duration, reasons: Vec<Reason>, out: &mut Decision) {
        self.finish(at, Verdict::NotAvailable, reasons, out);
    }

    fn finish(&mut self, at: Duration, verdict: Verdict, reasons: Vec<Reason>, out: &mut Decision) {
        let conf = self.config.ci.confidence;
        let all = self.merged_sorted();
        let mut percentiles: Vec<f64> = self.config.percentiles.clone();
        if !percentiles
            .iter()
            .any(|&p| (p - self.config.ci.percentile).abs() < 1e-9)
        {
            percentiles.push(self.config.ci.percentile);
            percentiles.sort_by(f64::total_cmp);
        }
        // Lancet's samples were thinned until independent: order-statistic CIs. vernier's
        // keep their dependence, and their CIs allow for it.
        let vernier = self.config.method == Method::Vernier;
        let every: Vec<usize> = (0..self.agents.len()).collect();
        let series = if vernier {
            self.concatenated(&every)
        } else {
            Vec::new()
        };
        let estimate = |series: &[f64], sorted: &[f64], p: f64| {
            if vernier {
                Estimate::of_sorted(series, sorted, p, conf).map(|e| e.result(p))
            } else {
                checks::interval(sorted, p, conf).map(|(value, ci)| PercentileResult {
                    p,
                    value,
                    ci_low: ci.map(|c| c.0),
                    ci_high: ci.map(|c| c.1),
                    dependence: None,
                })
            }
        };
        let percentiles: Vec<PercentileResult> = percentiles
            .iter()
            .filter_map(|&p| estimate(&series, &all, p))
            .collect();
        let measured_s = at.saturating_sub(self.measure_started).as_secs_f64();
        let point_s = self.active(at).as_secs_f64().max(1e-9);
        let p = self.config.ci.percentile;
        let agents: Vec<AgentResult> = self
            .agents
            .iter_mut()
            .enumerate()
            .map(|(i, a)| AgentResult {
                percentile: {
                    let x = a.latencies_in_send_order();
                    let mut sorted = x.clone();
                    sorted.sort_by(f64::total_cmp);
                    estimate(&x, &sorted, p)
                },
                lost: self.config.lost.get(i).cloned().flatten(),
                achieved_rate: a.received_in_point as f64 / point_s,
                interarrival: a.interarrival.clone(),
                send_lag_p99_us: (!a.send_lag.is_empty())
                    .then(|| a.send_lag.value_at_quantile(0.99) as f64 / 1e3),
                backlog_max: a.backlog_max,
                errors: a.errors,
                samples: a.samples.len(),
            })
            .collect();
        let achieved_rate = if self.measure_received > 0 && measured_s > 0.0 {
            self.measure_received as f64 / measured_s
        } else {
            agents.iter().map(|a| a.achieved_rate).sum()
        };
        let result = PointResult {
            verdict,
            reasons,
            waived: self.waived.clone(),
            target_rate: self.config.rate,
            achieved_rate,
            timestamps: self.config.timestamps.clone(),
            samples: all.len(),
            sampling_rate: self.sampling,
            duration_s: self.active(at).as_secs_f64(),
            ci_width_us: percentiles
                .iter()
                .find(|r| (r.p - self.config.ci.percentile).abs() < 1e-9)
                .and_then(|r| Some(r.ci_high? - r.ci_low?)),
            from_schedule: super::schedule::from_schedule(
                self.measuring()
                    .map(|i| (&self.agents[i].intended, &self.agents[i].latency)),
                percentiles.iter().map(|q| q.p),
            ),
            percentiles,
            target_percentile: self.config.ci.percentile,
            tries: self.tries,
            min_samples: min_samples_for_ci(self.config.ci.percentile / 100.0, conf).unwrap_or(0),
            round: self.round,
            agents,
            host: self
                .host()
                .iter()
                .map(StallReport::without_histogram)
                .collect(),
            record: None,
        };
        self.progress(at, out);
        self.phase(
            at,
            Phase::Done,
            match verdict {
                Verdict::NotAvailable => format!(
                    "N/A: {}",
                    result
                        .reasons
                        .iter()
                        .map(|r| r.check.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                v => v.name().to_string(),
            },
            out,
        );
        self.event(at, EventKind::Verdict(Box::new(result.clone())), out);
        self.result = Some(result);
    }
}

/// The exceedance levels the live CCDF is drawn at: 1-2-5 steps down from 50%.
const CCDF_LEVELS: [f64; 14] = [
    0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5,
];

/// (latency µs, share above it) at each of [`CCDF_LEVELS`] that at least ten samples lie
/// beyond: the histogram's quantile at 1 − level (to its 3 significant digits).
fn ccdf(latency_ns: &Histogram<u64>) -> Vec<(f64, f64)> {
    let n = latency_ns.len() as f64;
    CCDF_LEVELS
        .iter()
        .filter(|&&level| level * n >= 10.0)
        .map(|&level| {
            (
                latency_ns.value_at_quantile(1.0 - level) as f64 / 1e3,
                level,
            )
        })
        .collect()
}

fn figures(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs
        .iter()
        .filter(|(_, v)| v.is_finite())
        .map(|(k, v)| ((*k).to_string(), *v))
        .collect()
}
