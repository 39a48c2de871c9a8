//! Where a point goes after a look of `method: vernier`'s confidence step that did not
//! stop: the stopping rule's next look, planned within the samples the time left can give,
//! or N/A now when no stop can come before the limit (far beyond it, beyond it at two looks
//! in a row, or no look left whose stop fits), with what more time would buy.

use std::time::Duration;

use vernier_stats::{Percentile, Step};

use super::super::check_next::Ending;
use super::super::decision::Decision;
use super::super::policy::{
    COLLECT_SHARE_OF_TIME, STOPPING_RULE, beyond_reach_holds, far_beyond_reach,
};
use super::super::reason::Reason;
use super::state::{Beyond, Point};

impl Point {
    /// The samples per agent the point can hold by its time limit at the current rate,
    /// with a tenth of the time left kept back for the last evaluation.
    pub(super) fn reachable(&self, at: Duration) -> usize {
        let fewest = self.fewest_samples();
        let left = self.seconds_left(at);
        let per_agent = self.config.rate / self.live_count() as f64 * self.rounds.sampling;
        fewest + (COLLECT_SHARE_OF_TIME * left * per_agent) as usize
    }

    /// Where the point goes after `look`, which did not stop, planned within the samples
    /// the time left can give: the rule's next look, taken earlier when the full step
    /// would leave no room for the look that confirms it (a need predicted from the
    /// samples so far is noisy, so judge again on what can be had); N/A now when the
    /// precision asked needs far more than the limit holds ([`FAR_BEYOND_REACH`](crate::coordinator::policy::FAR_BEYOND_REACH)), when
    /// the stop is planned beyond the limit at this look and the one before
    /// ([`Point::beyond_reach`]), or when no look is left whose stop fits. With an SLO a
    /// last look at the limit can still decide: its CI may lie wholly on one side.
    pub(super) fn plan(&mut self, at: Duration, look: &Look<'_>) -> Next {
        let reach = self.reachable(at);
        // In the samples the look counts (the untouched ones, for the tail without
        // stalls); the next look comes at a count of those kept.
        let limit = (reach as f64 / self.stage.round().per_counted.max(1.0)) as usize * look.count;
        let needed = self.stage.round().needed.unwrap_or(0);
        if far_beyond_reach(needed, limit) {
            return Next::FarBeyond { limit };
        }
        let step = match self.beyond_reach(look, needed, limit) {
            Reach::Within => look.step,
            Reach::Beyond => return Next::Beyond { limit },
            Reach::LookAgain(step) => step,
        };
        match STOPPING_RULE.within(step, look.n, limit) {
            Some(total) => Next::Look(self.kept_for(total).div_ceil(look.count).max(look.floor)),
            None if self.config.slo.is_some() && reach >= look.floor => Next::Look(reach),
            None => Next::NoRoom,
        }
    }

    /// Whether the rule's stop, at `needed` samples in all (and the look that confirms it,
    /// when that is still to come), fits in the `limit` the time left allows. Planned
    /// beyond it once, the next look comes at the rule's largest step (half its samples
    /// new) to see whether the need holds; beyond it again with a need that held
    /// ([`BEYOND_REACH_HOLDS`](crate::coordinator::policy::BEYOND_REACH_HOLDS)), the point can stop only if the prediction was wrong twice,
    /// and it ends N/A now rather than at the limit.
    fn beyond_reach(&mut self, look: &Look<'_>, needed: usize, limit: usize) -> Reach {
        let confirming = matches!(
            look.step,
            Step::More {
                confirming: true,
                ..
            }
        );
        let end = if STOPPING_RULE.confirm && !confirming {
            needed as f64 * STOPPING_RULE.min_growth
        } else {
            needed as f64
        };
        let before = self.stage.looks_mut().and_then(|l| l.beyond.take());
        if end <= limit as f64 {
            return Reach::Within;
        }
        let without_stalls = self.looks.without_stalls;
        let held = before.is_some_and(|b| {
            b.without_stalls == without_stalls && beyond_reach_holds(needed, b.needed)
        });
        if held {
            return Reach::Beyond;
        }
        if let Some(looks) = self.stage.looks_mut() {
            looks.beyond = Some(Beyond {
                needed,
                without_stalls,
            });
        }
        let largest = (look.n as f64 * STOPPING_RULE.max_growth).ceil() as usize;
        Reach::LookAgain(Step::More {
            samples: largest.max(look.n + 1),
            narrow: false,
            confirming: false,
        })
    }

    /// The check's decision when `next` ends the point, `needed` samples in all doing;
    /// `None` when it looks again.
    pub(super) fn ending(next: &Next, needed: usize) -> Option<Ending> {
        match *next {
            Next::Look(_) => None,
            Next::FarBeyond { limit } => Some(Ending::FarBeyond { needed, limit }),
            Next::Beyond { limit } => Some(Ending::Beyond { needed, limit }),
            Next::NoRoom => Some(Ending::NoRoom),
        }
    }

    /// Goes on to the next look, or ends the point N/A with `reason` (and the time the
    /// samples the precision asked needs would take) when `next` says no stop can come.
    pub(super) fn follow(&mut self, at: Duration, next: Next, reason: Reason, out: &mut Decision) {
        match next {
            Next::Look(wanted) => self.extend_look(at, wanted, vec![reason], out),
            Next::FarBeyond { .. } | Next::Beyond { .. } | Next::NoRoom => {
                self.end_unsettled(at, reason, out);
            }
        }
    }
}

/// Whether a look's planned stop fits in the time left ([`Point::beyond_reach`]).
enum Reach {
    /// It fits: the rule's own step.
    Within,
    /// Beyond at this look and the one before, the need held: N/A now.
    Beyond,
    /// Beyond at this look: look again at this step to see whether the need holds.
    LookAgain(Step),
}

/// Where the point goes after a look that did not stop.
pub(super) enum Next {
    /// Look again once every agent holds this many samples.
    Look(usize),
    /// The precision asked needs more than [`FAR_BEYOND_REACH`](crate::coordinator::policy::FAR_BEYOND_REACH) times the samples (in all)
    /// the time left allows, `limit`: N/A now.
    FarBeyond {
        /// The samples in all the point can hold by its limit.
        limit: usize,
    },
    /// The stop (with its confirmation) is planned beyond the samples the time left allows,
    /// `limit`, at this look and the one before: N/A now.
    Beyond {
        /// The samples in all the point can hold by its limit.
        limit: usize,
    },
    /// No look is left whose stop fits before the limit: N/A now.
    NoRoom,
}

/// One look of `method: vernier`'s confidence step: what its outcomes share.
pub(super) struct Look<'a> {
    /// The target percentile.
    pub(super) p: Percentile,
    /// The confidence asked.
    pub(super) conf: f64,
    /// The measuring agents (at least 1).
    pub(super) count: usize,
    /// The fewest samples per agent the next look may ask for.
    pub(super) floor: usize,
    /// The combined samples, ascending, µs.
    pub(super) sorted: &'a [f64],
    /// How many there are.
    pub(super) n: usize,
    /// The combined estimate of the percentile, µs.
    pub(super) value: f64,
    /// The look's number (from 1).
    pub(super) look: u32,
    /// The width asked, µs.
    pub(super) target_us: f64,
    /// What the stopping rule decided.
    pub(super) step: Step,
}
