//! What the agents send, taken in: each batch's counters, samples, gaps and histograms go
//! to the phase that uses them; a target that only fails is noticed here; and the live
//! figures (rates, latencies, the round's CCDF) go out as progress events.

use std::borrow::Cow;
use std::time::Duration;

use hdrhistogram::Histogram;
use vernier_agent::{Batch, StallReport, histogram};

use super::super::decision::Decision;
use super::super::event::{AgentProgress, EventKind, Phase, Progress};
use super::super::policy::{tail_estimate_stands, target_failed_after};
use super::super::reason::{Reason, TargetFailed, Why};
use super::state::{Point, Stage};

impl Point {
    /// Feeds one batch of agent `agent`; the measurement round its samples were counted
    /// in (0: none). Its samples count only when it is of the generation the current phase
    /// asked for: all were then kept from requests sent after the agent applied it.
    pub(crate) fn batch(
        &mut self,
        at: Duration,
        agent: usize,
        batch: &Batch,
        out: &mut Decision,
    ) -> u32 {
        if self.stage.phase() == Phase::Done || agent >= self.agents.len() || self.is_lost(agent) {
            return 0;
        }
        let current = batch.generation == self.rounds.generation;
        let a = &mut self.agents[agent];
        a.add_stalls(&batch.stalls);
        let c = &batch.counts;
        // The load's requests: the budget's path probes ride with them, apart.
        let sent = c.sent.saturating_sub(c.probes_sent);
        let received = c.received.saturating_sub(c.probes_received);
        a.load
            .answered(at, received, c.failed + c.error_replies, c.connect_failures);
        a.load.backlog(batch.worker, c.backlog);
        a.load.retried += c.retried;
        a.recent.sent += sent;
        a.recent.received += received;
        // The live figures from the kept samples, a few µs for a batch's worth, rather
        // than a walk of every request's histograms (tens of µs, whatever the batch holds);
        // an agent that keeps none (throughput only) has only those.
        if batch.samples.is_empty() {
            batch.recorded_latency().add_to(&mut a.recent.latency);
            batch.recorded_send_lag().add_to(&mut a.recent.send_lag);
        } else {
            for s in &batch.samples {
                a.recent.latency.saturating_record(s.latency_ns.max(1));
                a.recent
                    .send_lag
                    .saturating_record(u64::from(s.queueing_ns).max(1));
            }
        }
        match &mut self.stage {
            Stage::Warmup(warmup) => {
                if let Some(open) = warmup.open.get_mut(agent) {
                    open.sent += sent;
                    open.received += received;
                    let latency = batch.recorded_latency();
                    open.latency_ns += latency.mean() * latency.len() as f64;
                    open.replies += latency.len();
                    // Each merge walks the whole histogram: only where its figure is used.
                    batch.recorded_send_lag().add_to(&mut open.send_lag);
                }
            }
            Stage::Interarrival { gaps, .. } if current => {
                if let Some(gaps) = gaps.get_mut(agent) {
                    gaps.extend_from_slice(&batch.interarrivals);
                }
            }
            Stage::Measure { round, .. } if current => {
                if let Some(tally) = round.tallies.get_mut(agent) {
                    tally.add(batch, c.backlog_max > 0);
                }
                round.received += received;
            }
            Stage::Interarrival { .. }
            | Stage::Measure { .. }
            | Stage::Paused { .. }
            | Stage::Done(_) => {}
        }
        let round = if self.stage.phase() == Phase::Measure && current {
            self.rounds.round
        } else {
            0
        };
        self.tick(at, out);
        round
    }

    /// Ends the point N/A when an agent has seen only failures, no reply, for
    /// [`TARGET_FAILED_AFTER`](crate::coordinator::policy::TARGET_FAILED_AFTER): the target died or restarted; what was measured before is
    /// kept in the record, and the reason says when.
    pub(super) fn target_failed(&mut self, at: Duration, out: &mut Decision) -> bool {
        let Some((agent, failing)) = self.live().find_map(|i| {
            let f = self.agents[i].load.failing?;
            target_failed_after(at.saturating_sub(f.since)).then_some((i, f))
        }) else {
            return false;
        };
        let reason = Reason::new(Why::TargetFailed(TargetFailed {
            agent,
            at_s: failing.since.as_secs_f64().into(),
            for_s: at.saturating_sub(failing.since).as_secs_f64().into(),
            failed: failing.failed,
            connect_failures: failing.connect_failures,
        }));
        self.finish_na(at, vec![reason], out);
        true
    }

    /// The target percentile of this round's samples so far, µs (NaN before any).
    pub(super) fn live_value_us(&self) -> f64 {
        let all = self.kept_latency();
        if all.is_empty() {
            return f64::NAN;
        }
        all.value_at_quantile(self.config.ci.percentile.fraction()) as f64 / 1e3
    }

    /// This round's kept latencies over the agents: one agent's own histogram as it is,
    /// several merged (a merge walks every counter of each).
    fn kept_latency(&self) -> Cow<'_, Histogram<u64>> {
        match self.stage.tallies() {
            [one] => Cow::Borrowed(&one.latency_kept),
            tallies => {
                let mut all = histogram();
                for t in tallies {
                    let _ = all.add(&t.latency_kept);
                }
                Cow::Owned(all)
            }
        }
    }

    pub(super) fn progress(&mut self, at: Duration, out: &mut Decision) {
        let dt = at
            .saturating_sub(self.clock.last_progress)
            .as_secs_f64()
            .max(1e-9);
        self.clock.last_progress = at;
        let us = |h: &Histogram<u64>, q: f64| {
            (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1e3)
        };
        // The agents pace by the answer asked, once its value is seen: this round's kept
        // samples while measuring, the recent requests' before.
        let fraction = self.config.ci.percentile.fraction();
        let live_us = self.live_value_us();
        let phase = self.stage.phase();
        let estimate = if phase == Phase::Measure {
            live_us
        } else {
            self.agents
                .iter()
                .filter_map(|a| us(&a.recent.latency, fraction))
                .fold(f64::NAN, f64::max)
        };
        if matches!(phase, Phase::Warmup | Phase::Interarrival | Phase::Measure) {
            self.pace(estimate, out);
        }
        let lost: Vec<bool> = (0..self.agents.len()).map(|i| self.is_lost(i)).collect();
        let samples: Vec<usize> = (0..self.agents.len())
            .map(|i| self.samples(i).len())
            .collect();
        let agents: Vec<AgentProgress> = self
            .agents
            .iter_mut()
            .zip(lost)
            .zip(&samples)
            .map(|((a, lost), &samples)| {
                let p = AgentProgress {
                    lost,
                    sent_rate: a.recent.sent as f64 / dt,
                    achieved_rate: a.recent.received as f64 / dt,
                    p50_us: us(&a.recent.latency, 0.5),
                    p99_us: us(&a.recent.latency, 0.99),
                    send_lag_p99_us: us(&a.recent.send_lag, 0.99),
                    backlog: a.load.backlog_now,
                    errors: a.load.errors,
                    interarrival_pvalue: a.found.interarrival.as_ref().and_then(|r| r.pvalue),
                    independence_lag: a.found.lag,
                    ci_width_us: a.found.ci_width_us,
                    samples,
                };
                a.recent.sent = 0;
                a.recent.received = 0;
                a.recent.latency.reset();
                a.recent.send_lag.reset();
                p
            })
            .collect();
        let samples: usize = samples.iter().sum();
        let eta_s = (phase == Phase::Measure).then(|| self.seconds_to_collect(self.rounds.wanted));
        let progress = Progress {
            phase,
            agents,
            samples,
            samples_wanted: self.rounds.wanted,
            sampling_rate: self.rounds.sampling,
            ci_width_us: self.looks.ci_width_us,
            // A relative target is a share of the live estimate (this round's samples).
            ci_target_us: Some(self.config.ci.width.target_us(live_us)).filter(|t| t.is_finite()),
            tries: self.rounds.tries,
            eta_s,
            max_duration_s: self.config.limits.max_duration.as_secs_f64(),
            elapsed_s: self.active(at).as_secs_f64(),
            ccdf: if phase == Phase::Measure || phase == Phase::Done {
                ccdf(&self.kept_latency())
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
        .filter(|&&level| tail_estimate_stands(level * n))
        .map(|&level| {
            (
                latency_ns.value_at_quantile(1.0 - level) as f64 / 1e3,
                level,
            )
        })
        .collect()
}
