//! The CI a run earned: a look that ends the point (the limit's, or one that finds no time
//! left for the samples a CI needs) may have no valid CI of its own when the batches its
//! dependence asks for outgrow the samples, as under a latency that drifts over the run.
//! An earlier look's valid CI is then the answer, not an N/A, when it holds the ending
//! look's estimate: converged when it was as narrow as asked (the clock, not that look's
//! width, ended the point), else wide. When the estimate has moved out of it, that CI is
//! not the run's: in the coverage harness's drifting runs such CIs held the run's own
//! percentile in none of 89 (seed 1; docs/RESULTS.md). The result names the look either way
//! ([`crate::coordinator::EarlierLook`]).

use std::time::Duration;

use vernier_stats::{DependentCi, NeedMore};

use super::super::check_next::{CheckNext, Ending, Found};
use super::super::decision::Decision;
use super::super::event::{Check, CheckKind, CheckRole};
use super::super::policy::STOPPING_RULE;
use super::super::reason::{Confidence, Why, Wide};
use super::super::result::{EarlierLook, PercentileResult};
use super::plan::Look;
use super::state::{Earned, EndedWithoutCi, Point};

impl Point {
    /// Keeps `look`'s valid CI `ci` (of the tail without stalls when `without_stalls`) as
    /// the one the run has earned so far.
    pub(super) fn keep_earned(
        &mut self,
        at: Duration,
        look: &Look<'_>,
        ci: &DependentCi,
        without_stalls: bool,
    ) {
        let started = self.stage.round().started;
        if let Some(looks) = self.stage.looks_mut() {
            looks.earned = Some(Earned {
                look: look.look,
                at: at.saturating_sub(started),
                n: look.n,
                without_stalls,
                value: look.value,
                ci: ci.clone(),
                target_us: look.target_us,
            });
        }
    }

    /// Ends the point at `look`, which has no CI (`need` says why) and after which none
    /// will come, on the CI an earlier look of the same tail earned, when that CI holds
    /// this look's estimate: converged when as narrow as asked, else wide. `false` when
    /// no look earned one, or its CI does not hold the estimate (kept for the result).
    pub(super) fn answer_earned(
        &mut self,
        at: Duration,
        look: &Look<'_>,
        need: &NeedMore,
        out: &mut Decision,
    ) -> bool {
        let without_stalls = self.looks.without_stalls;
        let Some(earned) = (self.stage.looks())
            .and_then(|l| l.earned.clone())
            .filter(|e| e.without_stalls == without_stalls)
        else {
            return false;
        };
        let answered = earned.ci.low <= look.value && look.value <= earned.ci.high;
        if let Some(looks) = self.stage.looks_mut() {
            looks.ended_without_ci = Some(EndedWithoutCi {
                samples: look.n,
                value: look.value,
                answered,
            });
        }
        if !answered {
            return false;
        }
        let narrow = earned.ci.width() <= earned.target_us;
        let too_few = self.too_few_figures(look.p, look.n, need);
        self.check(
            at,
            Check {
                check: CheckKind::Confidence,
                agent: None,
                pass: narrow,
                role: CheckRole::Gate,
                statistic: None,
                pvalue: None,
                n: look.n,
                found: Found::TooFew(too_few),
                next: Some(CheckNext::Ending(Ending::Earlier {
                    look: earned.look,
                    samples: earned.n,
                })),
                data: None,
            },
            out,
        );
        // The departures are judged against the estimate on the samples in hand, whose
        // on-schedule share they compare with it: this look's, not the earned one's.
        if narrow {
            let snapshot = self.snapshot();
            let whole_us = (!without_stalls).then_some(look.value);
            self.stopped(at, &snapshot, look.count, whole_us, out);
            return true;
        }
        let p = look.p;
        let needed =
            STOPPING_RULE.needed_at_limit(earned.n, p.fraction(), Ok(&earned.ci), earned.target_us);
        if let Some(round) = self.stage.round_mut() {
            round.needed = Some(needed);
        }
        let wide = Wide {
            p,
            ci_width_us: earned.ci.width().into(),
            target_us: earned.target_us.into(),
            samples: earned.n,
            samples_needed: needed,
            variance_inflation: Some(earned.ci.variance_inflation),
            batch_size: Some(earned.ci.batch_size),
            heaviness: None,
            heaviness_inside: None,
            inside: None,
            stalls: None,
        };
        let reason = self.tail_cause(at, earned.value, Why::Confidence(Confidence::Wide(wide)));
        self.end_unsettled(at, look.value, reason, out);
        true
    }

    /// The earned look, when the point ended on one without a CI, with that look's
    /// figures.
    pub(super) fn earned_at_end(&self) -> Option<(&Earned, EndedWithoutCi)> {
        let looks = self.stage.looks()?;
        Some((looks.earned.as_ref()?, looks.ended_without_ci?))
    }

    /// The earned look that answers the point ([`Point::earned_at_end`], holding the
    /// ending look's estimate).
    pub(super) fn answering_earned(&self) -> Option<&Earned> {
        self.earned_at_end()
            .filter(|(_, end)| end.answered)
            .map(|(e, _)| e)
    }
}

impl Earned {
    /// The percentile `p`'s entry of a result, as this look saw it.
    pub(super) fn result(&self, p: vernier_stats::Percentile) -> PercentileResult {
        PercentileResult::of(p, self.value, Some(&self.ci))
    }

    /// What the result says of it, the point having ended at `end`.
    pub(super) fn said(&self, end: EndedWithoutCi) -> EarlierLook {
        EarlierLook {
            look: self.look,
            at_s: self.at.as_secs_f64(),
            samples: self.n,
            value_us: self.value,
            low_us: self.ci.low,
            high_us: self.ci.high,
            ending_samples: end.samples,
            ending_value_us: end.value,
            answers: end.answered,
        }
    }
}
