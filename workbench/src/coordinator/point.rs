//! One load point through the methodology: warm-up → inter-arrival check → measure →
//! independence → stationarity → confidence → a verdict.
//!
//! One file per phase, as the TUI's step bar shows them: `warmup.rs`, `interarrival.rs`,
//! `measure.rs` (rounds, stationarity, the samples wanted), `sampling.rs` (the share of
//! requests kept), `independence.rs` (Lancet's gate, vernier's report), `confidence.rs`
//! (`method: vernier`'s CI step; `lancet.rs` Lancet's; `plan.rs` where its looks go, or
//! when they end the point), `departures.rs` (vernier's check
//! of the departures by their effect) and `verdict.rs` (the result, and an N/A's cause).
//! `intake.rs` takes the agents' batches in and sends the live figures out; `state.rs`
//! holds the point's state (the `Stage` it is in, each variant with what only its phase
//! uses, and what every phase shares) and the helpers every phase uses,
//! `estimate.rs` a percentile's estimate from a series; this file starts the point, runs
//! its clock and takes the user's commands.

use std::time::Duration;

use vernier_agent::StallReport;

use super::config::PointConfig;
use super::decision::{Action, Decision};
use super::policy::{COLLECT_SHARE_OF_TIME, progress_due};
use super::reason::{Nothing, Reason, Why};
use super::result::{PointResult, Verdict};
use crate::scenario::Limits;
use agent::{AgentFound, AgentState};
use state::{Clock, HostSeen, Looks, RoundFigures, Rounds, Stage, WarmupState};

mod agent;
mod agreement;
mod asked;
mod confidence;
pub(crate) mod departures;
mod earned;
mod estimate;
mod heavy;
mod independence;
mod intake;
mod interarrival;
mod lancet;
mod measure;
mod pacing;
mod plan;
mod sampling;
mod state;
mod verdict;
mod warmup;
mod without_stalls;

pub(crate) use state::Point;

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
        let rounds = Rounds {
            sampling: config.sampling.rate,
            // Unique over the run: the point's index in the high half, the run's number
            // and a count below.
            generation: ((index as u64 + 1) << 32) | (u64::from(run.unwrap_or(0)) << 24),
            tries: 0,
            wanted: config.sampling.samples,
            round: first_round,
        };
        let agents = config.agents;
        let mut point = Point {
            agents: (0..agents).map(|_| AgentState::new()).collect(),
            base_limits: config.limits,
            config,
            index,
            run,
            stage: Stage::Warmup(WarmupState {
                windows: Vec::new(),
                window_started: at,
                open: Vec::new(),
                last: RoundFigures::new(at, agents),
            }),
            clock: Clock::new(at),
            rounds,
            looks: Looks::default(),
            host: HostSeen::default(),
            paced_ns: None,
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
        match &self.stage {
            Stage::Done(result) => Some(result),
            _ => None,
        }
    }

    /// Adds the host probes' latest reports (one per probe, in the session's order) to the
    /// current phase's while the load runs: the host's stalls beside the samples they may
    /// explain, or, for a point that never measured, beside the warm-up they slowed.
    pub(crate) fn add_host(&mut self, reports: &[StallReport]) {
        if !matches!(
            self.stage,
            Stage::Warmup(_) | Stage::Interarrival { .. } | Stage::Measure { .. }
        ) {
            return;
        }
        if std::mem::take(&mut self.host.stale) {
            self.host.reports.clear();
        }
        if self.host.reports.len() < reports.len() {
            self.host
                .reports
                .resize_with(reports.len(), StallReport::default);
        }
        for (sum, report) in self.host.reports.iter_mut().zip(reports) {
            sum.merge(report);
        }
    }

    /// The round whose samples are being collected (0: none are).
    pub(crate) fn round(&self) -> u32 {
        if matches!(self.stage, Stage::Measure { .. }) {
            self.rounds.round
        } else {
            0
        }
    }

    /// The point's target rate.
    pub(crate) fn rate(&self) -> f64 {
        self.config.rate
    }

    /// Per agent: why it was lost, if it was.
    pub(crate) fn lost(&self) -> &[Option<String>] {
        &self.config.lost
    }

    /// Whether the point can go on without agent `agent`: another live agent measures.
    pub(crate) fn can_lose(&self, agent: usize) -> bool {
        !matches!(self.stage, Stage::Done(_)) && self.measuring().any(|i| i != agent)
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
        self.clock.unpause(at);
        for a in &mut self.agents {
            a.found = AgentFound::default();
        }
        self.looks.ci_width_us = None;
        self.begin_warmup(at, why, out);
    }

    /// Advances time: closes windows, runs the checks that are due, enforces the limits.
    pub(crate) fn tick(&mut self, at: Duration, out: &mut Decision) {
        if matches!(self.stage, Stage::Done(_) | Stage::Paused { .. }) {
            return;
        }
        if self.target_failed(at, out) {
            return;
        }
        if progress_due(at.saturating_sub(self.clock.last_progress)) {
            self.progress(at, out);
        }
        match self.stage {
            Stage::Warmup(_) => self.warmup_tick(at, out),
            Stage::Interarrival { .. } => self.interarrival_tick(at, out),
            Stage::Measure { .. } => self.measure_tick(at, out),
            Stage::Paused { .. } | Stage::Done(_) => {}
        }
        if !matches!(self.stage, Stage::Done(_))
            && self.active(at) > self.config.limits.max_duration
        {
            self.out_of_time(at, out);
        }
    }

    // ---- the user's commands ----

    /// Stops the load, keeping what was collected.
    pub(crate) fn pause(&mut self, at: Duration, out: &mut Decision) {
        if matches!(self.stage, Stage::Done(_) | Stage::Paused { .. }) {
            return;
        }
        self.clock.paused_at = Some(at);
        out.actions.push(Action::Pause);
        let waived = self.stage.take_waived();
        let last = self.stage.take_round();
        self.phase(
            at,
            Stage::Paused { waived, last },
            "paused by the user".into(),
            out,
        );
    }

    /// Resumes after a pause: the methodology restarts at warm-up.
    pub(crate) fn resume(&mut self, at: Duration, out: &mut Decision) {
        if !matches!(self.stage, Stage::Paused { .. }) {
            return;
        }
        self.clock.unpause(at);
        self.begin_warmup(at, "resumed", out);
    }

    /// Changes the load: the methodology restarts at warm-up.
    pub(crate) fn set_load(&mut self, at: Duration, rate: f64, out: &mut Decision) {
        if matches!(self.stage, Stage::Done(_)) {
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
        let wanted =
            predicted.map(|s| active + Duration::from_secs_f64((s / COLLECT_SHARE_OF_TIME).ceil()));
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
        if matches!(self.stage, Stage::Done(_)) {
            return;
        }
        if self.stage.tallies().iter().all(|t| t.samples.is_empty()) {
            let reason = Reason::new(Why::AcceptedEmpty(Nothing {}));
            self.finish_na(at, vec![reason], out);
        } else {
            self.finish(at, Verdict::Accepted, Vec::new(), out);
        }
    }

    /// Ends the point N/A with `reasons` (the user quit, an agent was lost...).
    pub(crate) fn abort(&mut self, at: Duration, reason: Reason, out: &mut Decision) {
        if !matches!(self.stage, Stage::Done(_)) {
            self.finish_na(at, vec![reason], out);
        }
    }
}
