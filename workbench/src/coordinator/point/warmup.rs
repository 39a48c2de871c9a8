//! Warm-up: windows of achieved rate and mean latency until the rate is within tolerance
//! and the latency series is stationary, or the diagnosis of why it never will be.

use std::time::Duration;

use vernier_agent::histogram;

use super::super::check_next::{CheckNext, Found, RateFinding};
use super::super::checks;
use super::super::decision::{Action, Decision};
use super::super::event::{Check, CheckKind, CheckRole, EventKind};
use super::super::policy::{
    Beyond, LoadSeen, SLOT_MARGIN_SIGMAS, WARMUP_GAPS_FACTOR, backlog_is_closed_loop, load_problem,
    rate_error_allowed, send_lag_hopeless, warmup_judgeable,
};
use super::super::reason::{
    ClosedLoop, HeldClosedLoop, NotReached, Reason, ReasonKind, WarmupStationarity, Why,
};
use super::agent::WindowTally;
use super::state::{Point, Stage, WarmupState, WarmupWindow};

impl Point {
    /// The sampling rate during warm-up: enough kept gaps for the inter-arrival test soon,
    /// never less than the measurement's rate.
    pub(super) fn warmup_sampling(&self) -> f64 {
        let per_agent = self.per_agent_rate();
        (WARMUP_GAPS_FACTOR * self.config.sampling.interarrival_samples as f64 / per_agent.max(1.0))
            .clamp(self.measure_sampling(), 1.0)
    }

    pub(super) fn begin_warmup(&mut self, at: Duration, why: &str, out: &mut Decision) {
        self.host.stale = true;
        self.rounds.sampling = self.measure_sampling();
        self.rounds.wanted = self.config.sampling.samples;
        self.ask_sampling(self.warmup_sampling(), out);
        // Before this point's own estimate: an absolute width, or the floor.
        self.pace(f64::NAN, out);
        out.actions.push(Action::Load {
            rate: self.config.rate,
        });
        let mut last = self.stage.take_round();
        for t in &mut last.tallies {
            t.drop_samples();
        }
        self.phase(
            at,
            Stage::Warmup(WarmupState {
                windows: Vec::new(),
                window_started: at,
                open: (0..self.agents.len()).map(|_| WindowTally::new()).collect(),
                last,
            }),
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

    pub(super) fn warmup_tick(&mut self, at: Duration, out: &mut Decision) {
        let window = self.config.warmup.window;
        while let Stage::Warmup(w) = &self.stage
            && at.saturating_sub(w.window_started) >= window
        {
            self.close_window(out);
            if self.judge_warmup(at, out) {
                return;
            }
        }
        if at.saturating_sub(self.clock.phase_started) > self.config.warmup.max {
            self.warmup_failed(at, out);
        }
    }

    /// Closes the open warm-up window: its figures kept and announced, the next one opened.
    pub(super) fn close_window(&mut self, out: &mut Decision) {
        let dt = self.config.warmup.window.as_secs_f64();
        let mut w = WarmupWindow {
            dt,
            sent: 0,
            received: 0,
            latency_mean_us: None,
        };
        let Stage::Warmup(warmup) = &mut self.stage else {
            return;
        };
        let (mut lat, mut replies) = (0.0, 0u64);
        for open in &mut warmup.open {
            let (sent, received, latency_ns, n) = open.close();
            w.sent += sent;
            w.received += received;
            lat += latency_ns;
            replies += n;
        }
        w.latency_mean_us = (replies > 0).then(|| lat / replies as f64 / 1e3);
        warmup.windows.push(w);
        warmup.window_started += self.config.warmup.window;
        let at = warmup.window_started;
        self.event(
            at,
            EventKind::Window {
                sent_rate: w.sent as f64 / dt,
                achieved_rate: w.received as f64 / dt,
                latency_mean_us: w.latency_mean_us,
            },
            out,
        );
    }

    /// Rates over the last `windows` windows: (sent, received) per second.
    pub(super) fn recent_rates(&self) -> (f64, f64) {
        let windows = self.stage.windows();
        let n = self.config.warmup.windows.min(windows.len());
        let recent = &windows[windows.len() - n..];
        let dt: f64 = recent.iter().map(|w| w.dt).sum::<f64>().max(1e-9);
        (
            recent.iter().map(|w| w.sent).sum::<u64>() as f64 / dt,
            recent.iter().map(|w| w.received).sum::<u64>() as f64 / dt,
        )
    }

    /// The relative rate error allowed: the tolerance plus three standard deviations of a
    /// Poisson count over the judged windows, so that low rates are not failed by chance.
    pub(super) fn rate_tolerance(&self) -> f64 {
        rate_error_allowed(self.config.warmup.tolerance, self.judged_count())
    }

    /// The requests the rate asks for over the judged windows.
    fn judged_count(&self) -> f64 {
        let span = self.config.warmup.window.as_secs_f64() * self.config.warmup.windows as f64;
        self.config.rate * span
    }

    /// The load as the last windows saw it, per second: what the methodology's rule
    /// ([`load_problem`]) judges, as it judges a comparison's block.
    pub(super) fn load_seen(&self) -> LoadSeen {
        let (sent, received) = self.recent_rates();
        LoadSeen {
            asked: self.config.rate,
            asked_count: self.judged_count(),
            sent,
            answered: received,
            rate: self.config.rate,
            backlog: self.agents.iter().map(|a| a.load.backlog_now).sum(),
            backlog_max: self
                .agents
                .iter()
                .map(|a| a.load.backlog_max)
                .max()
                .unwrap_or(0),
            tolerance: self.config.warmup.tolerance,
        }
    }

    /// Judges the warm-up once enough windows have closed; true when it has ended.
    pub(super) fn judge_warmup(&mut self, at: Duration, out: &mut Decision) -> bool {
        // Half the judged windows first, so that the rates quoted are not the ramp's.
        let closed = self.stage.windows().len();
        if warmup_judgeable(closed, self.config.warmup.windows)
            && let Some(reason) = self.hopeless()
        {
            self.finish_na(at, vec![reason], out);
            return true;
        }
        let n = self.config.warmup.windows;
        if closed < n {
            return false;
        }
        let (sent, received) = self.recent_rates();
        let tol = self.rate_tolerance();
        if load_problem(&self.load_seen(), Beyond::Unsettled).is_some() {
            return false;
        }
        let series = self.window_latencies();
        let maxlag = Some(((n as f64).cbrt() as usize).max(1));
        let (mut stat, _) = checks::stationarity(
            CheckKind::WarmupStationarity,
            None,
            &series,
            self.config.alpha,
            maxlag,
        );
        if !stat.pass {
            return false;
        }
        let rate = Check {
            check: CheckKind::Rate,
            agent: None,
            pass: true,
            role: CheckRole::Gate,
            statistic: Some(received),
            pvalue: None,
            n,
            found: Found::Rate(RateFinding {
                achieved: received,
                sent,
                target: self.config.rate,
                tolerance: tol,
            }),
            next: Some(CheckNext::RateReached),
            data: None,
        };
        stat.next = Some(CheckNext::WarmupOver);
        self.check(at, rate, out);
        self.check(at, stat, out);
        let windows = self.stage.take_windows();
        let last = self.stage.take_round();
        self.phase(
            at,
            Stage::Interarrival {
                windows,
                gaps: vec![Vec::new(); self.agents.len()],
                tries: 0,
                last,
            },
            format!(
                "warm-up took {:.1}s; collecting {} inter-departure gaps per agent",
                at.saturating_sub(self.clock.phase_started).as_secs_f64(),
                self.config.sampling.interarrival_samples
            ),
            out,
        );
        true
    }

    pub(super) fn window_latencies(&self) -> Vec<f64> {
        let windows = self.stage.windows();
        let n = self.config.warmup.windows.min(windows.len());
        let mut last = None;
        windows[windows.len() - n..]
            .iter()
            .filter_map(|w| {
                last = w.latency_mean_us.or(last);
                last
            })
            .collect()
    }

    /// A load that can no longer be reached whatever the wait: a backlog of half a second
    /// of requests, or requests leaving a fifth of a second late.
    pub(super) fn hopeless(&self) -> Option<Reason> {
        let backlog = self.load_seen().backlog;
        if backlog_is_closed_loop(backlog, self.config.rate) {
            return Some(Reason::new(Why::ClosedLoop(ClosedLoop::Held(
                self.closed_loop(),
            ))));
        }
        // Requests leaving late because every slot is taken is a closed loop too: the
        // waiting is in the backlog, not in the agent's CPU.
        let mut lag = histogram();
        for open in self.open_windows() {
            let _ = lag.add(&open.send_lag);
        }
        if !lag.is_empty() && send_lag_hopeless(lag.value_at_quantile(0.5)) {
            return Some(if backlog > 0 {
                Reason::new(Why::ClosedLoop(ClosedLoop::Held(self.closed_loop())))
            } else {
                Reason::new(Why::LoadNotReached(self.not_reached()))
            });
        }
        None
    }

    /// Each agent's open warm-up window: none outside warm-up.
    fn open_windows(&self) -> &[WindowTally] {
        match &self.stage {
            Stage::Warmup(w) => &w.open,
            _ => &[],
        }
    }

    pub(super) fn warmup_failed(&mut self, at: Duration, out: &mut Decision) {
        let reason = if let Some(kind) = load_problem(&self.load_seen(), Beyond::Unsettled) {
            if kind == ReasonKind::ClosedLoop {
                Reason::new(Why::ClosedLoop(ClosedLoop::Held(self.closed_loop())))
            } else {
                Reason::new(Why::LoadNotReached(self.not_reached()))
            }
        } else {
            let series = self.window_latencies();
            let (stat, adf) = checks::stationarity(
                CheckKind::WarmupStationarity,
                None,
                &series,
                self.config.alpha,
                None,
            );
            Reason::new(Why::WarmupStationarity(WarmupStationarity {
                adf_pvalue: stat.pvalue,
                warmup_max_s: self.config.warmup.max.as_secs_f64().into(),
                adf,
            }))
        };
        self.finish_na(at, vec![reason], out);
    }

    pub(super) fn mean_window_latency_us(&self) -> Option<f64> {
        let lat: Vec<f64> = self
            .stage
            .windows()
            .iter()
            .rev()
            .take(self.config.warmup.windows)
            .filter_map(|w| w.latency_mean_us)
            .collect();
        (!lat.is_empty()).then(|| lat.iter().sum::<f64>() / lat.len() as f64)
    }

    /// The load gone closed-loop, with Little's law's cure: the connections that would
    /// carry the rate at the latency seen (with a Poisson margin).
    pub(super) fn closed_loop(&self) -> HeldClosedLoop {
        let seen = self.load_seen();
        let latency_us = self.mean_window_latency_us().unwrap_or(0.0);
        let per_agent = self.config.rate / self.config.agents as f64;
        // Little's law: outstanding = rate × latency; a Poisson margin of 3σ over it.
        let outstanding = per_agent * latency_us / 1e6;
        let slots = outstanding + SLOT_MARGIN_SIGMAS * outstanding.sqrt() + 1.0;
        HeldClosedLoop {
            connections: self.config.connections,
            depth: self.config.depth,
            target_rate: self.config.rate.into(),
            achieved_rate: seen.answered.into(),
            sent_rate: seen.sent.into(),
            backlog: seen.backlog,
            backlog_max: seen.backlog_max,
            latency_mean_us: latency_us.into(),
            connections_needed: (slots / self.config.depth as f64).ceil() as usize,
            lateness: None,
        }
    }

    /// The load not reached: the rates of the last windows, and how late requests left.
    pub(super) fn not_reached(&self) -> NotReached {
        let (sent, received) = self.recent_rates();
        let mut lag = histogram();
        for a in &self.agents {
            let _ = lag.add(&a.recent.send_lag);
        }
        for open in self.open_windows() {
            let _ = lag.add(&open.send_lag);
        }
        NotReached {
            achieved_rate: received.into(),
            sent_rate: sent.into(),
            target_rate: self.config.rate.into(),
            agents: self.config.agents,
            send_lag_p50_us: (!lag.is_empty()).then(|| lag.value_at_quantile(0.5) as f64 / 1e3),
        }
    }
}
