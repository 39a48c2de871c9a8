//! Pacing by the answer asked: the agents are told the send lag that could move the
//! answer (the departure check's tolerance), so that their workers spin before a
//! departure only as long as that needs on this host.

use std::time::Duration;

use super::super::decision::{Action, Decision};
use super::super::policy::{OnSchedule, lateness_allowed_us, pace_changed};
use super::state::Point;

impl Point {
    /// The send lag within which a request counts as on schedule, for an estimate
    /// `value_us` of the target percentile (NaN: none yet, so an absolute width's or the
    /// send path's floor): half the CI width asked, as the departure check judges it.
    pub(super) fn on_time(&self, value_us: f64) -> OnSchedule {
        OnSchedule::within_us(lateness_allowed_us(
            self.config.ci.width.target_us(value_us),
        ))
    }

    /// Tells the agents the tolerance for the estimate `value_us` when it is the first, or
    /// differs from the last told by more than [`PACE_CHANGE`](crate::coordinator::policy::PACE_CHANGE).
    pub(super) fn pace(&mut self, value_us: f64, out: &mut Decision) {
        let ns = self.on_time(value_us).limit_ns();
        let changed = self.paced_ns.is_none_or(|was| pace_changed(ns, was));
        if changed {
            self.paced_ns = Some(ns);
            out.actions.push(Action::Pace {
                tolerance: Duration::from_nanos(u64::from(ns)),
            });
        }
    }
}
