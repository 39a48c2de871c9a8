//! The tail a look of the confidence step judges: without the host's stalls when asked
//! and it can be judged, else every request; each measuring agent's estimate and interval,
//! and the combined estimate.

use std::borrow::Cow;

use vernier_stats::Percentile;

use super::super::checks::Interval;
use super::estimate::{Estimate, Snapshot};
use super::state::Point;

/// Each measuring agent's estimate, as `(agent, samples, interval)`.
pub(super) type AgentIntervals = Vec<(usize, usize, Option<Interval>)>;

impl Point {
    /// The tail the CI target is for at one look: without the host's stalls when asked and
    /// it can be judged, else every request.
    pub(super) fn asked_estimates<'s>(
        &mut self,
        snapshot: &'s Snapshot,
        p: Percentile,
        conf: f64,
    ) -> Option<Asked<'s>> {
        if let Some(own) = self.without_stalls_look(p, conf) {
            return Some(Asked {
                intervals: own.agents,
                estimate: own.estimate,
                sorted: Cow::Owned(own.sorted),
                without_stalls: true,
            });
        }
        let (intervals, estimate) = self.whole_estimates(snapshot, p, conf)?;
        Some(Asked {
            intervals,
            estimate,
            sorted: Cow::Borrowed(&snapshot.combined()?.sorted[..]),
            without_stalls: false,
        })
    }

    /// Every request's tail at one look: each measuring agent's estimate and interval
    /// ([`Point::agent_estimates`]) and the combined estimate; `None` when no agent
    /// measures.
    fn whole_estimates(
        &mut self,
        snapshot: &Snapshot,
        p: Percentile,
        conf: f64,
    ) -> Option<(AgentIntervals, Estimate)> {
        let (intervals, one) = self.agent_estimates(snapshot, p, conf);
        let combined = snapshot.combined()?;
        // With one agent its estimate is the combined one.
        let estimate = match one.filter(|_| snapshot.agents.len() == 1) {
            Some(e) => e,
            None => Estimate::of_sorted(&combined.in_order, &combined.sorted, p, conf)?,
        };
        Some((intervals, estimate))
    }

    /// Each measuring agent's estimate and its interval (whose width the agent's row
    /// shows), as `(agent, samples, interval)`, and the last agent's estimate: with one
    /// agent, the combined one.
    fn agent_estimates(
        &mut self,
        snapshot: &Snapshot,
        p: Percentile,
        conf: f64,
    ) -> (AgentIntervals, Option<Estimate>) {
        let mut intervals = Vec::new();
        let mut one = None;
        for a in &snapshot.agents {
            let estimate = Estimate::of_sorted(&a.in_order, &a.sorted, p, conf);
            let iv = estimate.as_ref().and_then(Estimate::interval);
            self.agents[a.agent].found.ci_width_us = iv.map(|c| c.width());
            self.agents[a.agent].found.ci_need = estimate.as_ref().and_then(|e| e.ci.clone().err());
            intervals.push((a.agent, a.in_order.len(), iv));
            one = estimate;
        }
        (intervals, one)
    }
}

/// The tail a look judges ([`Point::asked_estimates`]).
pub(super) struct Asked<'s> {
    /// Each measuring agent's estimate, as `(agent, samples, interval)`.
    pub(super) intervals: AgentIntervals,
    /// The combined estimate.
    pub(super) estimate: Estimate,
    /// The samples it counts, ascending, µs.
    pub(super) sorted: Cow<'s, [f64]>,
    /// Whether it is the tail without stalls.
    pub(super) without_stalls: bool,
}
