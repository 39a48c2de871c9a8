//! Where a point goes after a look of `method: vernier`'s confidence step that did not
//! stop: the stopping rule's next look, planned within the samples the time left can give;
//! one last look at the limit when the rule's own stop does not fit but the precision asked
//! still can (a look the clock chose needs no confirmation); or the answer now, from this
//! look's CI, when no time left could narrow it enough (far beyond the limit, beyond it at
//! two looks in a row, or no look left that could), with what more time would buy.

use std::time::Duration;

use vernier_stats::{DependentCi, NeedMore, Percentile, Plan, Step};

use super::super::check_next::Ending;
use super::super::decision::Decision;
use super::super::policy::{
    COLLECT_SHARE_OF_TIME, STOPPING_RULE, beyond_reach_holds, far_beyond_reach,
};
use super::super::reason::Reason;
use super::state::{PastLimit, Point};

impl Point {
    /// The samples per agent the point can hold by its time limit at the current rate,
    /// with a tenth of the time left kept back for the last evaluation.
    pub(super) fn reachable(&self, at: Duration) -> usize {
        let fewest = self.fewest_samples();
        let left = self.seconds_left(at);
        let per_agent = self.kept_per_agent();
        fewest + (COLLECT_SHARE_OF_TIME * left * per_agent) as usize
    }

    /// Where the point goes after `look`, which did not stop, planned within the samples
    /// the time left can give ([`vernier_stats::Rule::plan`]): the rule's next look; one
    /// last look at the limit, whose CI is the answer as it comes, when the rule's stop and
    /// its confirmation do not fit but the precision asked can still come by then (or, with
    /// an SLO, when its CI may still lie wholly on one side); the answer now when the
    /// precision asked needs far more than the limit holds
    /// ([`FAR_BEYOND_REACH`](crate::coordinator::policy::FAR_BEYOND_REACH)), when it is
    /// beyond the limit at this look and the one before ([`Point::beyond_reach`]), or when
    /// no look is left that could narrow it. The need is counted without the confirming
    /// look, which the limit's look makes moot.
    pub(super) fn plan(&mut self, at: Duration, look: &Look<'_>) -> Next {
        let reach = self.reachable(at);
        // In the samples the look counts (the untouched ones, for the tail without
        // stalls); the next look comes at a count of those kept.
        let limit = (reach as f64 / self.stage.round().per_counted.max(1.0)) as usize * look.count;
        let needed =
            STOPPING_RULE.needed_at_limit(look.n, look.p.fraction(), look.ci, look.target_us);
        if far_beyond_reach(needed, limit) {
            return Next::FarBeyond { limit };
        }
        let step = match self.beyond_reach(look.n, needed, limit) {
            Reach::Within => look.step,
            Reach::Beyond => return Next::Beyond { limit },
            Reach::LookAgain(step) => step,
        };
        let plan = STOPPING_RULE.plan(
            step,
            look.n,
            look.p.fraction(),
            look.ci,
            look.target_us,
            limit,
        );
        let last = match plan {
            Plan::Look(total) => {
                return Next::Look(self.kept_for(total).div_ceil(look.count).max(look.floor));
            }
            Plan::AtLimit => true,
            Plan::Now => self.config.slo.is_some(),
        };
        if !last || reach < look.floor {
            return Next::NoRoom;
        }
        if let Some(looks) = self.stage.looks_mut() {
            looks.at_limit = true;
        }
        Next::AtLimit(reach)
    }

    /// Whether the samples the precision asked needs, `needed` in all, fit in the `limit`
    /// the time left allows. Planned beyond it once, the next look comes at the rule's
    /// largest step (half its samples new) to see whether the need holds; beyond it again
    /// with a need that held
    /// ([`BEYOND_REACH_HOLDS`](crate::coordinator::policy::BEYOND_REACH_HOLDS)), the
    /// precision asked can come only if the prediction was wrong twice, and the point
    /// answers now rather than at the limit.
    fn beyond_reach(&mut self, n: usize, needed: usize, limit: usize) -> Reach {
        let before = self.stage.looks_mut().and_then(|l| l.past_limit.take());
        if needed <= limit {
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
            looks.past_limit = Some(PastLimit {
                needed,
                without_stalls,
            });
        }
        let largest = (n as f64 * STOPPING_RULE.max_growth).ceil() as usize;
        Reach::LookAgain(Step::More {
            samples: largest.max(n + 1),
            narrow: false,
            confirming: false,
        })
    }

    /// The check's decision when `next` ends the point, `needed` samples in all doing;
    /// `None` when it looks again.
    pub(super) fn ending(next: &Next, needed: usize) -> Option<Ending> {
        match *next {
            Next::Look(_) | Next::AtLimit(_) => None,
            Next::FarBeyond { limit } => Some(Ending::FarBeyond { needed, limit }),
            Next::Beyond { limit } => Some(Ending::Beyond { needed, limit }),
            Next::NoRoom => Some(Ending::NoRoom),
        }
    }

    /// Goes on to the next look, or ends the point with the CI at hand of the look whose
    /// estimate is `value_us` ([`Point::end_unsettled`]: wide when `reason` leaves a valid
    /// CI, else N/A with it, and the time the samples the precision asked needs would take)
    /// when `next` says no look could narrow it enough.
    pub(super) fn follow(
        &mut self,
        at: Duration,
        next: Next,
        value_us: f64,
        reason: Reason,
        out: &mut Decision,
    ) {
        match next {
            Next::Look(wanted) | Next::AtLimit(wanted) => {
                self.extend_look(at, wanted, value_us, reason, out);
            }
            Next::FarBeyond { .. } | Next::Beyond { .. } | Next::NoRoom => {
                self.end_unsettled(at, value_us, reason, out);
            }
        }
    }
}

/// Whether the precision asked fits in the time left ([`Point::beyond_reach`]).
enum Reach {
    /// It fits: the rule's own step.
    Within,
    /// Beyond at this look and the one before, the need held: the answer now.
    Beyond,
    /// Beyond at this look: look again at this step to see whether the need holds.
    LookAgain(Step),
}

/// Where the point goes after a look that did not stop.
pub(super) enum Next {
    /// Look again once every agent holds this many samples.
    Look(usize),
    /// One last look, at the limit, once every agent holds this many samples: its CI is
    /// the answer as it comes.
    AtLimit(usize),
    /// The precision asked needs more than
    /// [`FAR_BEYOND_REACH`](crate::coordinator::policy::FAR_BEYOND_REACH) times the samples
    /// (in all) the time left allows, `limit`: the answer now.
    FarBeyond {
        /// The samples in all the point can hold by its limit.
        limit: usize,
    },
    /// The precision asked is beyond the samples the time left allows, `limit`, at this
    /// look and the one before: the answer now.
    Beyond {
        /// The samples in all the point can hold by its limit.
        limit: usize,
    },
    /// No look is left that could narrow it enough before the limit: the answer now.
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
    /// Its CI, or why there is none.
    pub(super) ci: Result<&'a DependentCi, &'a NeedMore>,
    /// The look's number (from 1).
    pub(super) look: u32,
    /// The width asked, µs.
    pub(super) target_us: f64,
    /// What the stopping rule decided.
    pub(super) step: Step,
    /// Whether it is the limit's look ([`Next::AtLimit`], or the time limit itself): its
    /// CI is the answer as it comes.
    pub(super) at_limit: bool,
    /// Whether every request's latency drifts at this look and the one before
    /// ([`crate::coordinator::DriftSeen`]): the CI no longer shrinks as 1/√n, and no time
    /// would narrow it as that predicts.
    pub(super) drifts: bool,
}
