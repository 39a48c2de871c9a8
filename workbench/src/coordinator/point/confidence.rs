//! The measurement's verdict under `method: vernier`: the samples' autocorrelation is
//! measured and reported (the Spearman lag search and correlogram), and enters the CI
//! instead of gating it: each percentile's CI is valid for autocorrelated, stationary
//! series ([`vernier_stats::percentile_ci_dependent`]), the point converges on that CI's
//! width, and the samples needed are predicted from how it shrinks. The agreement of the
//! agents' intervals is shared with `method: lancet`.

use std::time::Duration;

use vernier_agent::StallReport;
use vernier_stats::{DependentCi, NeedMore, Percentile, Step, effective_tail, percentile};

use super::super::check_next::{Batches, CheckNext, Ending, Found, IntervalFinding};
use super::super::decision::Decision;
use super::super::event::{Check, CheckKind, CheckRole};
use super::super::policy::{HEAVY_TAIL_ALSO_AT, STOPPING_RULE, inflation_keeps_pace, is_heavy};
use super::super::reason::{
    Awaited, Confidence, HeavyTail, MoreTime, Narrow, Reason, TooFewForCi, TooFewSamples, Why, Wide,
};
use super::super::result::Verdict;
use super::asked::Asked;
use super::estimate::{Estimate, Snapshot};
use super::heavy::{heaviness_at, heavy_too_few};
use super::plan::{Look, Next};
use super::state::Point;
use super::verdict::drift_of;

impl Point {
    /// Every agent's latencies in send order, one agent after another (the combined CI's).
    pub(super) fn concatenated(&mut self, agents: &[usize]) -> Vec<f64> {
        agents
            .iter()
            .flat_map(|&i| self.latencies_in_send_order(i))
            .collect()
    }

    /// `method: vernier`'s confidence step: dependence-valid CIs per agent and combined,
    /// agreement, the width against the target, the departures by effect size.
    pub(super) fn check_confidence_dependent(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        out: &mut Decision,
    ) {
        if self.touched_beyond(at, out) {
            return;
        }
        let (p, conf) = (self.config.ci.percentile, self.config.ci.confidence);
        let count = snapshot.agents.len().max(1);
        let Some(Asked {
            intervals,
            estimate,
            sorted,
            without_stalls: asked_without_stalls,
        }) = self.asked_estimates(snapshot, p, conf)
        else {
            return;
        };
        let sorted = &sorted[..];
        let n = sorted.len();
        let kept: usize = snapshot.agents.iter().map(|a| a.in_order.len()).sum();
        self.looks.without_stalls = asked_without_stalls;
        if let Some(round) = self.stage.round_mut() {
            round.per_counted = if asked_without_stalls {
                kept as f64 / n.max(1) as f64
            } else {
                1.0
            };
        }
        let Some(looks) = self.stage.looks_mut() else {
            return;
        };
        looks.count += 1;
        let look = looks.count;
        let at_limit = std::mem::take(&mut looks.at_limit);
        let target_us = self.config.ci.width.target_us(estimate.value);
        let step = STOPPING_RULE.step(
            look,
            n,
            p.fraction(),
            estimate.ci.as_ref(),
            target_us,
            looks.confirming,
        );
        looks.confirming = matches!(
            step,
            Step::More {
                confirming: true,
                ..
            }
        );
        let this = Look {
            p,
            conf,
            count,
            // Per agent, what the rule's next look asks for in all.
            floor: self.rounds.wanted + 1,
            sorted,
            n,
            value: estimate.value,
            look,
            ci: estimate.ci.as_ref(),
            target_us,
            step,
            at_limit,
            drifts: false,
        };
        let combined = match &estimate.ci {
            Ok(ci) => ci.clone(),
            Err(need) => {
                self.too_few_for_ci(at, &this, need, out);
                return;
            }
        };
        self.looks.ci_width_us = Some(combined.width());
        if !self.agents_agree(at, p, n, &intervals, out) {
            return;
        }
        self.judge_interval(at, snapshot, this, &combined, asked_without_stalls, out);
    }

    /// A look `this` whose CI is `combined` (of the tail without stalls when
    /// `without_stalls`): ends the point when it stops (as narrow as asked, or narrow at a
    /// look the clock chose) or an SLO decides, else says how it is still wide.
    fn judge_interval(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        this: Look<'_>,
        combined: &DependentCi,
        without_stalls: bool,
        out: &mut Decision,
    ) {
        self.keep_earned(at, &this, combined, without_stalls);
        let (n, step, at_limit, target_us) = (this.n, this.step, this.at_limit, this.target_us);
        let width = combined.width();
        // A look the clock chose (the limit's) stops as narrow as asked: it needs no
        // confirmation, since it stops nothing early. So does a narrow look whose variance
        // inflation has grown as fast as the samples since the last look: the latency
        // drifts, and more samples would not narrow the CI, nor confirm it (on redis at
        // 10,000 req/s here: ×34 at 169,000 samples, ×94 at 353,000, narrow; at the limit
        // the batches were still correlated and there was no CI at all).
        let inflating = self.inflation_keeps_pace(n, combined.variance_inflation);
        let clock_chose = at_limit || inflating;
        let stop = step == Step::Stop || clock_chose && width <= target_us;
        let slo = self.config.slo.map(|s| s.as_secs_f64() * 1e6);
        let decided = slo.is_some_and(|s| combined.high < s || combined.low > s);
        let mut check = interval_check(&this, combined, stop || decided);
        let this = Look {
            drifts: !(stop || decided) && self.drifts_again(snapshot),
            ..this
        };
        if stop || decided {
            check.next = Some(if stop && step != Step::Stop && at_limit {
                CheckNext::NarrowAtLimit
            } else if stop && step != Step::Stop {
                CheckNext::NarrowDrifting
            } else if stop {
                CheckNext::NarrowEnough
            } else {
                CheckNext::DecidedBySlo
            });
            self.check(at, check, out);
            let value = (!without_stalls).then_some(this.value);
            self.stopped(at, snapshot, this.count, value, out);
            return;
        }
        self.still_wide(at, &this, combined, check, out);
    }

    /// Ends the point on the CI at hand, its look chosen by the clock (the limit's, or the
    /// last when no look left could narrow it enough), with `reason` why it is not as
    /// narrow as asked; the look's estimate of the tail asked is `value_us`. When the look
    /// was at every request's tail, that tail is wide when `reason` leaves it a valid CI
    /// ([`Why::leaves_a_ci`]), else N/A. When it was at the tail without stalls, that
    /// tail's result says how it ended, and every request's tail is judged on what the
    /// point holds now. Either way the client's late departures must not move a CI that
    /// is the answer.
    pub(super) fn end_unsettled(
        &mut self,
        at: Duration,
        value_us: f64,
        reason: Reason,
        out: &mut Decision,
    ) {
        // A load gone closed-loop leaves no valid CI of either tail.
        if let Some(looks) = self.stage.looks_mut() {
            looks.answered = !matches!(reason.why, Why::ClosedLoop(_));
        }
        if !self.looks.without_stalls {
            // As narrow as asked at a look the clock chose: converged.
            if matches!(reason.why, Why::Confidence(Confidence::Narrow(_))) {
                self.conclude(at, Some(value_us), None, out);
                return;
            }
            let whole_us = reason.why.leaves_a_ci().then_some(value_us);
            self.conclude(at, whole_us, Some(reason), out);
            return;
        }
        let drifting = self.drift_seen().is_some_and(|d| d.drifting);
        let more = (self.more_time().zip(self.stage.round().needed))
            .filter(|_| !drifting)
            .map(|(seconds, samples)| MoreTime {
                samples,
                seconds: seconds.into(),
            });
        if let Some(looks) = self.stage.looks_mut() {
            looks.without_stalls_more = more;
        }
        let snapshot = self.snapshot();
        let count = snapshot.agents.len().max(1);
        match self.whole_at_stop(at, &snapshot, count) {
            (Some(whole_us), whole) => self.conclude(at, Some(whole_us), whole, out),
            // No estimate of every request's tail: the last look's reason stands.
            (None, _) => self.conclude(at, None, Some(reason), out),
        }
    }

    /// The rule stopped: the point ends, converged unless every request's tail says
    /// otherwise. Stopped on it, its estimate is `whole_us`; stopped on the tail without
    /// stalls (`None`), every request's tail is judged on what the point holds now (its
    /// CI as narrow as asked, or why not).
    pub(super) fn stopped(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        count: usize,
        whole_us: Option<f64>,
        out: &mut Decision,
    ) {
        if let Some(looks) = self.stage.looks_mut() {
            looks.answered = true;
        }
        let (whole_us, whole) = match whole_us {
            Some(value) => (Some(value), None),
            None => self.whole_at_stop(at, snapshot, count),
        };
        self.conclude(at, whole_us, whole, out);
    }

    /// Ends the point on every request's tail at `whole_us` (when it has an estimate) and
    /// `whole`, why that tail is not as narrow as asked (`None`: it is): converged, wide
    /// when every reason leaves a valid CI, else N/A; the client's late departures must not
    /// move it, or it is N/A.
    fn conclude(
        &mut self,
        at: Duration,
        whole_us: Option<f64>,
        whole: Option<Reason>,
        out: &mut Decision,
    ) {
        let p = self.config.ci.percentile;
        let departures = whole_us.and_then(|whole_us| {
            let asked_us = self.config.ci.width.target_us(whole_us);
            self.departures(at, p, whole_us, asked_us, out)
        });
        let mut reasons: Vec<Reason> = whole.into_iter().chain(departures).collect();
        // A latency that drifts: the needs its reasons give are 1/√n predictions no time
        // would meet, and they say so rather than how long they would take.
        if self.drift_seen().is_some_and(|d| d.drifting) {
            for r in reasons.iter_mut().filter(|r| r.kind().more_samples_help()) {
                r.drifts = true;
            }
        }
        let verdict = if reasons.is_empty() {
            Verdict::Converged
        } else if reasons.iter().all(|r| r.why.leaves_a_ci()) {
            Verdict::Wide
        } else {
            Verdict::NotAvailable
        };
        self.say_more_time(&mut reasons);
        self.finish(at, verdict, reasons, out);
    }

    /// Whether the variance inflation of this look's CI, `inflation` on `n` samples, has
    /// grown at least as fast as the samples since the last look that had a CI
    /// ([`inflation_keeps_pace`]); this look becomes the last.
    fn inflation_keeps_pace(&mut self, n: usize, inflation: f64) -> bool {
        let Some(looks) = self.stage.looks_mut() else {
            return false;
        };
        let before = looks.last_ci.replace((n, inflation));
        before.is_some_and(|(n0, vif0)| inflation_keeps_pace(n0, vif0, n, inflation))
    }

    /// Whether every request's latency drifts at this look (of the first measuring agent,
    /// in send order: [`drift_of`]) and did at the look before: one look's plot can
    /// climb by chance, two in a row on a growing series seldom do.
    fn drifts_again(&mut self, snapshot: &Snapshot) -> bool {
        let p = self.config.ci.percentile;
        let per_second = self.kept_per_agent();
        let now = (snapshot.agents.first())
            .and_then(|a| drift_of(&a.in_order, p, per_second))
            .is_some_and(|d| d.drifting);
        let Some(looks) = self.stage.looks_mut() else {
            return false;
        };
        let before = std::mem::replace(&mut looks.drifted, now);
        before && now
    }

    /// Every request's tail when the point stopped on the tail without stalls: its
    /// estimate (µs, for the departure check), and `None` when its CI is as narrow as
    /// asked, else why not (the same reasons a look gives, the samples it needs in
    /// the round's `needed`).
    pub(super) fn whole_at_stop(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        count: usize,
    ) -> (Option<f64>, Option<Reason>) {
        let (p, conf) = (self.config.ci.percentile, self.config.ci.confidence);
        let Some(series) = snapshot.combined() else {
            return (None, None);
        };
        let Some(estimate) = Estimate::of_sorted(&series.in_order, &series.sorted, p, conf) else {
            return (None, None);
        };
        let value = estimate.value;
        let target_us = self.config.ci.width.target_us(value);
        let n = series.sorted.len();
        // What this tail needs is counted in every request.
        if let Some(round) = self.stage.round_mut() {
            round.per_counted = 1.0;
        }
        let look = Look {
            p,
            conf,
            count,
            floor: 0,
            sorted: &series.sorted,
            n,
            value,
            ci: estimate.ci.as_ref(),
            look: self.stage.looks().map_or(0, |l| l.count),
            target_us,
            step: Step::Stop,
            at_limit: false,
            drifts: false,
        };
        let reason = match &estimate.ci {
            Ok(ci) if ci.width() <= target_us => None,
            Ok(ci) => {
                let needed = STOPPING_RULE.needed(look.look, n, p.fraction(), ci, target_us);
                if let Some(round) = self.stage.round_mut() {
                    round.needed = Some(needed);
                }
                Some(self.wide_reason(at, &look, ci, needed))
            }
            Err(need) => {
                if let Some(round) = self.stage.round_mut() {
                    round.needed = Some(need.needed);
                }
                let too_few = self.too_few_figures(p, n, need);
                let why = Why::TooFewSamples(TooFewSamples::Ci(too_few));
                Some(self.tail_cause(at, value, why))
            }
        };
        (Some(value), reason)
    }

    /// The figures of `n` samples too few for a dependence-valid interval of `p`, with how
    /// long, in time, they stay dependent (each agent's series is its kept requests in
    /// send order).
    pub(super) fn too_few_figures(&self, p: Percentile, n: usize, need: &NeedMore) -> TooFewForCi {
        let per_agent = self.kept_per_agent();
        TooFewForCi {
            p,
            confidence: self.config.ci.confidence.into(),
            samples: n,
            min_samples: need.needed,
            need: Some(need.reason.clone()),
            correlated_over: need.correlated_over,
            dependence_s: need.correlated_over.map(|m| m as f64 / per_agent.max(1e-9)),
        }
    }

    /// The samples are too few for a dependence-valid interval: the check says how many
    /// would do, and the next look is asked for with the cause named (the latencies' own
    /// heavy tail, the host's stalls, or their dependence).
    fn too_few_for_ci(
        &mut self,
        at: Duration,
        look: &Look<'_>,
        need: &NeedMore,
        out: &mut Decision,
    ) {
        let Look { p, n, .. } = *look;
        let sorted = look.sorted;
        if let Some(round) = self.stage.round_mut() {
            round.needed = Some(need.needed);
        }
        if let Some(looks) = self.stage.looks_mut() {
            looks.narrow = None;
        }
        // The need comes from the dependence seen so far, as noisy as the width's
        // prediction below. The limit's look has none after it.
        let next = if look.at_limit {
            Next::NoRoom
        } else {
            self.plan(at, look)
        };
        // No look after this one: an earlier look's valid CI is the answer, if one had it.
        let ends = look.at_limit || Self::ending(&next, 0).is_some();
        if ends && self.answer_earned(at, look, need, out) {
            return;
        }
        let too_few = self.too_few_figures(p, n, need);
        self.check(
            at,
            Check {
                check: CheckKind::Confidence,
                agent: None,
                pass: false,
                role: CheckRole::Gate,
                statistic: None,
                pvalue: None,
                n,
                found: Found::TooFew(too_few.clone()),
                next: match &next {
                    _ if look.at_limit => Some(CheckNext::Ending(Ending::Limit)),
                    Next::Look(wanted) => Some(CheckNext::Collect { per_agent: *wanted }),
                    Next::AtLimit(wanted) => Some(CheckNext::LastLook { per_agent: *wanted }),
                    ending => Self::ending(ending, need.needed).map(CheckNext::Ending),
                },
                data: None,
            },
            out,
        );
        // The latencies' own shape first: a heavy-tailed service needs many samples
        // for a valid interval because its slowest requests hold up those behind
        // them, and that is the cause to name, with the width the order statistics
        // alone give.
        // Unless the host's stalls reach inside the tail too: then its shape there
        // is theirs as much as the service's.
        let inside = p.min(HEAVY_TAIL_ALSO_AT);
        let host_inside =
            percentile(sorted, inside.fraction()).is_some_and(|v| self.host_reaches(inside, v));
        if !host_inside && let Some(heavy) = heavy_too_few(sorted, &too_few) {
            let reason = Reason::new(Why::HeavyTail(HeavyTail::TooFew(heavy)));
            self.follow(at, next, look.value, reason, out);
            return;
        }
        // Samples beyond the percentile that come in clusters are the host's doing
        // when its stalls reach that far.
        let why = Why::TooFewSamples(TooFewSamples::Ci(too_few));
        let reason = self.tail_cause(at, look.value, why);
        self.follow(at, next, look.value, reason, out);
    }

    /// The interval is valid but not yet narrow enough (or narrow, and the rule wants it
    /// on more tail samples or confirmed): the next look is sized from the samples the
    /// width predicts, and the check and the reason say why.
    fn still_wide(
        &mut self,
        at: Duration,
        look: &Look<'_>,
        combined: &DependentCi,
        mut check: Check,
        out: &mut Decision,
    ) {
        let Look {
            p, n, target_us, ..
        } = *look;
        let width = combined.width();
        let narrow = width <= target_us;
        // The width shrinks as 1/√n (the dependence is in it): the rule's next look is sized
        // from the samples that predicts, within its steps.
        let rule_needed = STOPPING_RULE.needed(look.look, n, p.fraction(), combined, target_us);
        // A width from few tail samples is noisy, and its prediction more so. The limit's
        // look has none after it: its CI is the answer; nor has a look at a latency that
        // drifts, whose CI more time would not narrow as 1/√n predicts.
        let next = if look.at_limit || look.drifts {
            Next::NoRoom
        } else {
            self.plan(at, look)
        };
        // The point ends on this look's CI: what more time would buy is the precision
        // asked, without the confirmation a look at the limit does not need; under a
        // drift, no time would do, and none is said.
        let ends = Self::ending(&next, 0).is_some();
        let total_needed = if ends {
            STOPPING_RULE.needed_at_limit(n, p.fraction(), Ok(combined), target_us)
        } else {
            rule_needed
        };
        if let Some(round) = self.stage.round_mut() {
            round.needed = (!look.drifts).then_some(total_needed);
        }
        let confirming = self.stage.looks().is_some_and(|l| l.confirming);
        // Narrow, but the rule's stop needs more: what an N/A says, now or at the limit.
        let figures = narrow.then(|| Narrow {
            p,
            ci_width_us: width.into(),
            target_us: target_us.into(),
            samples: n,
            samples_needed: total_needed,
            look: look.look,
            effective_tail: effective_tail(n, p.fraction(), combined).into(),
            tail_needed: STOPPING_RULE.tail_needed(look.look).into(),
            waits: if confirming {
                Awaited::Confirmation
            } else {
                Awaited::Tail
            },
        });
        if let Some(looks) = self.stage.looks_mut() {
            looks.narrow = figures.clone();
        }
        let wanted = match next {
            Next::Look(wanted) | Next::AtLimit(wanted) => wanted,
            _ => 0,
        };
        check.next = Some(if look.drifts {
            CheckNext::Ending(Ending::Drifts)
        } else if look.at_limit {
            CheckNext::Ending(Ending::Limit)
        } else if let Some(ending) = Self::ending(&next, total_needed) {
            CheckNext::Ending(ending)
        } else if let Next::AtLimit(per_agent) = next {
            CheckNext::LastLook { per_agent }
        } else if confirming {
            CheckNext::Confirming { per_agent: wanted }
        } else if narrow {
            CheckNext::NarrowOnFewTail {
                effective_tail: effective_tail(n, p.fraction(), combined),
                look: look.look,
                tail_needed: STOPPING_RULE.tail_needed(look.look),
                per_agent: wanted,
            }
        } else {
            CheckNext::CollectForLook {
                per_agent: wanted,
                in_all: total_needed,
                look: look.look + 1,
            }
        });
        self.check(at, check, out);
        let reason = match figures {
            Some(narrow) => {
                self.tail_cause(at, look.value, Why::Confidence(Confidence::Narrow(narrow)))
            }
            None => self.wide_reason(at, look, combined, total_needed),
        };
        let reason = Reason {
            drifts: look.drifts,
            ..reason
        };
        self.follow(at, next, look.value, reason, out);
    }

    /// Why the interval is still too wide, for an N/A: the latencies' own heavy tail, the
    /// host's stalls, or their dependence (with the slowest few percent set apart from the
    /// rest when they are).
    fn wide_reason(
        &self,
        at: Duration,
        look: &Look<'_>,
        combined: &DependentCi,
        total_needed: usize,
    ) -> Reason {
        let Look {
            p,
            conf,
            n,
            target_us,
            ..
        } = *look;
        let sorted = look.sorted;
        let heaviness = heaviness_at(sorted, p, n, conf);
        let inside = p.min(HEAVY_TAIL_ALSO_AT);
        let body = heaviness_at(sorted, inside, n, conf);
        let wide = Wide {
            p,
            ci_width_us: combined.width().into(),
            target_us: target_us.into(),
            samples: n,
            samples_needed: total_needed,
            variance_inflation: Some(combined.variance_inflation),
            batch_size: Some(combined.batch_size),
            heaviness,
            heaviness_inside: None,
            inside: None,
            stalls: None,
        };
        // Heavy at the percentile alone is a few percent of requests set apart from the
        // rest (by the host, or by the server's own periodic work), not a heavy-tailed
        // service: memcached and nginx at 10,000 req/s here were 2-3× an exponential at p99
        // and about 1× at p90.
        let apart = heaviness.filter(|&h| is_heavy(h));
        let host_inside =
            percentile(sorted, inside.fraction()).is_some_and(|v| self.host_reaches(inside, v));
        let heavy = apart.filter(|_| !host_inside && body.is_some_and(is_heavy));
        // The latencies' own shape first: heavy at the percentile and inside the tail too
        // is the service's, whatever the host adds.
        if heavy.is_some() {
            return Reason::new(Why::HeavyTail(HeavyTail::Wide(wide)));
        }
        let correlated = match (apart, body) {
            (Some(_), Some(b)) => Wide {
                heaviness_inside: Some(b),
                inside: Some(inside),
                // Stalls too few to be named the cause are still a part of it: say so.
                stalls: self
                    .worst_host()
                    .filter(|h| h.stalls_over_1ms > 0)
                    .map(StallReport::without_histogram),
                ..wide
            },
            _ => Wide {
                heaviness: None,
                ..wide
            },
        };
        self.tail_cause(
            at,
            look.value,
            Why::Confidence(Confidence::Wide(correlated)),
        )
    }
}

/// The confidence check of `look`, whose interval is `combined`: passed when the point
/// stops on it (or an SLO decides), what comes next left to the caller.
fn interval_check(look: &Look<'_>, combined: &DependentCi, pass: bool) -> Check {
    let width = combined.width();
    Check {
        check: CheckKind::Confidence,
        agent: None,
        pass,
        role: CheckRole::Gate,
        statistic: Some(width),
        pvalue: None,
        n: look.n,
        found: Found::Interval(IntervalFinding {
            p: look.p,
            value: look.value,
            confidence: look.conf,
            low: combined.low,
            high: combined.high,
            width,
            target_us: look.target_us,
            n: look.n,
            batches: Some(Batches {
                size: combined.batch_size,
                variance_inflation: combined.variance_inflation,
            }),
        }),
        next: None,
        data: None,
    }
}
