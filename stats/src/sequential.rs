//! When to look at a percentile's interval again, and when to stop: the methodology's
//! sequential rule. The coordinator calls it at every look of a load point, and the coverage
//! harness (`vernier validate --coverage`) drives the same function over processes whose
//! quantiles are known, so that the coverage it measures is that of the rule as it runs.
//!
//! A fixed-width interval cannot be had from a sample size fixed in advance when the
//! variance is unknown (Stein, 1945): the procedure must look, and collect more until the
//! interval is as narrow as asked. Looking at every sample and stopping at the first narrow
//! interval is consistent as the width asked shrinks (Chow & Robbins, Annals of Mathematical
//! Statistics 36, 1965), but at a finite width it favours intervals whose variance happened
//! to be underestimated: of many looks, the first that is narrow enough is more often one
//! whose estimate is low. Sequest (Alexopoulos et al., Operations Research 67(4), 2019) and
//! SQSTS (Lolos et al., Journal of Simulation, 2024) bound that with few looks, each
//! growing the sample by a factor sized from the precision still missing. The rule here does
//! the same, and adds two guards for the looks it allows:
//!
//! 1. **Steps sized from the measured variance.** An interval's width shrinks as 1/√n (the
//!    dependence is in it), so a width `w` against a target `t` predicts n·(w/t)² samples;
//!    the next look asks for that times [`Rule::margin`], but at least [`Rule::min_growth`]
//!    and at most [`Rule::max_growth`] times the samples of this look. The lower bound
//!    keeps the looks few (from 10⁴ to 10⁷ samples in at most 31 looks at 1.25, every look
//!    sorting and testing all it holds: the looks cost at most five times the last); the
//!    upper bound keeps one noisy width from leaping to the limit (the last stop's
//!    61,000 → 218,000 samples, whose width came out five times narrower than asked).
//! 2. **No CI yet.** When the interval cannot be built (too few effective tail samples,
//!    batches still correlated), the samples its own estimate names are asked for, between
//!    `min_growth` and [`NO_CI_MAX_GROWTH`] times this look's: no stop can follow from such
//!    a look, so it cannot bias the answer, only cost an evaluation.
//! 3. **A stop needs steadier variance the more looks came before it.** A look stops when its
//!    interval is narrow enough *and* it rests on at least
//!    [`MIN_EFFECTIVE_TAIL`]·(1 + [`Rule::tail_growth`]·ln k) effective tail samples at
//!    look k. The chance that one of k looks catches a variance estimate low by a given
//!    amount grows with k, roughly as √(2 ln k) of its standard deviations; the variance of
//!    a tail share's estimate falls as its effective count grows, so the count needed grows
//!    with ln k. At the first look this is the interval's own condition.
//! 4. **A narrow interval is confirmed.** A look that is narrow and steady does not stop
//!    the point: the next look, on [`Rule::min_growth`] times the samples, must be too, and
//!    its interval is the answer (a final check on a confirmatory batch). A series whose
//!    first stretch held few of the clusters that make the tail has both a low estimate and
//!    a low variance, and is the one the first narrow look lets through; a quarter more of
//!    the series gives the clusters it missed a chance to show.
//!
//! 5. **The looks fit within the limit.** With a confirmation to come, a look whose
//!    confirmation would not fit in the samples the limit allows cannot end in a stop:
//!    [`Rule::within`] plans the next look no later than the limit over
//!    [`Rule::min_growth`] (a smaller step when the full one would pass it), so that a
//!    narrow look's confirmation fits, and says when no stop can come before the limit.
//!
//! What each part buys (`cargo run --release --example stopping_rule` in fixtures/), and the
//! rule's coverage at 5%, 10% and 20% of the value with the samples at the stop and how
//! often the limit came first, are in docs/history/results-2026-11-24-to-29.md ("Time to a verdict").

use crate::dependent::{DependentCi, MIN_EFFECTIVE_TAIL, NeedMore};

/// The most a look without an interval may grow the sample by.
pub const NO_CI_MAX_GROWTH: f64 = 4.0;

/// The sequential rule's parameters. [`Rule::default`] is the methodology's; the others
/// exist so that the coverage harness can show what each part of it buys.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rule {
    /// The smallest step: the next look holds at least this many times the samples.
    pub min_growth: f64,
    /// The largest step when an interval was given.
    pub max_growth: f64,
    /// The 1/√n prediction times this, so that the noise of the width does not leave the
    /// next look just short.
    pub margin: f64,
    /// How the effective tail a stop needs grows with the look (0: the interval's own
    /// minimum at every look).
    pub tail_growth: f64,
    /// Whether a narrow, steady interval must be confirmed by the next look (on
    /// `min_growth` times the samples) before the point stops on that next look's.
    pub confirm: bool,
    /// How many samples the confirming look holds.
    pub confirmation: Confirmation,
}

/// The size of the look that confirms a narrow, steady one.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub enum Confirmation {
    /// [`Rule::min_growth`] times the samples, however narrow the interval.
    #[default]
    Fixed,
    /// Sized from the precision the interval used: 1 + (`min_growth` − 1)·(w/t)² times the
    /// samples for a width w against the target t (the full step for an interval just
    /// narrow enough, a sixteenth of it for one half as wide as asked), since a low
    /// variance estimate has that much less room to be low by before the interval is
    /// wider than asked.
    ByWidth,
}

impl Rule {
    /// The methodology's rule: what the coordinator runs, and what the coverage harness
    /// measures by default.
    pub const METHODOLOGY: Rule = Rule {
        min_growth: 1.25,
        max_growth: 2.0,
        margin: 1.1,
        tail_growth: 1.0,
        confirm: true,
        confirmation: Confirmation::Fixed,
    };
}

impl Default for Rule {
    fn default() -> Self {
        Rule::METHODOLOGY
    }
}

/// What a look decides.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Step {
    /// The interval is narrow enough and steady enough: it is the answer.
    Stop,
    /// Look again once this many samples (in all) are in.
    More {
        /// Samples in all at the next look.
        samples: usize,
        /// Whether the interval was already narrow enough (but rests on fewer effective
        /// tail samples than a stop at this look needs, or awaits its confirmation).
        narrow: bool,
        /// Whether it was narrow and steady, and the next look is its confirmation: pass it
        /// as that look's `confirmed`.
        confirming: bool,
    },
}

impl Rule {
    /// The effective tail samples a stop at look `look` (from 1) needs.
    pub fn tail_needed(&self, look: u32) -> f64 {
        MIN_EFFECTIVE_TAIL * (1.0 + self.tail_growth * f64::from(look.max(1)).ln())
    }

    /// The decision of look `look` (from 1) on `n` samples, whose `p`-quantile interval is
    /// `ci` (or why there is none), against a width of `target` (same unit as the interval).
    /// `confirmed`: the look before was narrow and steady ([`Step::More::confirming`]).
    pub fn step(
        &self,
        look: u32,
        n: usize,
        p: f64,
        ci: Result<&DependentCi, &NeedMore>,
        target: f64,
        confirmed: bool,
    ) -> Step {
        let at_least = grow(n, self.min_growth);
        match ci {
            Err(need) => Step::More {
                samples: need
                    .needed
                    .clamp(at_least, grow(n, NO_CI_MAX_GROWTH).max(at_least)),
                narrow: false,
                confirming: false,
            },
            Ok(ci) => {
                let narrow = ci.width() <= target;
                let steady = narrow && effective_tail(n, p, ci) >= self.tail_needed(look);
                if steady && (confirmed || !self.confirm) {
                    return Step::Stop;
                }
                if steady {
                    return Step::More {
                        samples: self.confirming(n, ci.width(), target),
                        narrow,
                        confirming: true,
                    };
                }
                let at_most = grow(n, self.max_growth).max(at_least);
                Step::More {
                    samples: self.needed(look, n, p, ci, target).clamp(at_least, at_most),
                    narrow,
                    confirming: false,
                }
            }
        }
    }

    /// The samples (in all) that would make look `look`'s interval `ci`, on `n` samples,
    /// stop: the 1/√n prediction from its width against `target`, times the margin, or
    /// what gives the effective tail a stop needs, whichever is more, and for a narrow,
    /// steady interval that awaits its confirmation, the confirming look's; not bounded by
    /// the steps, so that a caller can say what the whole precision asked would take. Always
    /// more than `n`: the look it is asked of did not stop.
    pub fn needed(&self, look: u32, n: usize, p: f64, ci: &DependentCi, target: f64) -> usize {
        let width = ci.width();
        let narrow = width <= target;
        let tail = effective_tail(n, p, ci);
        // The effective count grows as n.
        let by_tail = n as f64 * self.tail_needed(look) / tail.max(f64::MIN_POSITIVE);
        let by_width = if narrow {
            0.0
        } else if target > 0.0 {
            n as f64 * (width / target).powi(2) * self.margin
        } else {
            f64::INFINITY
        };
        let wanted = by_tail.max(by_width).ceil();
        let wanted = if wanted.is_finite() && wanted < usize::MAX as f64 {
            wanted as usize
        } else {
            usize::MAX
        };
        // A look that did not stop needs at least its next one: a narrow, steady look its
        // confirmation.
        let next = if narrow && tail >= self.tail_needed(look) && self.confirm {
            self.confirming(n, width, target)
        } else {
            grow(n, self.min_growth)
        };
        wanted.max(next)
    }

    /// The samples (in all) of the look that confirms a narrow, steady look on `n` samples
    /// whose interval is `width` wide against `target` ([`Rule::confirmation`]).
    pub fn confirming(&self, n: usize, width: f64, target: f64) -> usize {
        match self.confirmation {
            Confirmation::Fixed => grow(n, self.min_growth),
            Confirmation::ByWidth => {
                let used = if target > 0.0 {
                    (width / target).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                grow(n, 1.0 + (self.min_growth - 1.0) * used * used)
            }
        }
    }

    /// Where the next look goes when at most `limit` samples (in all) can be had: `step`'s
    /// (a [`Step::More`] of the look on `n`), or earlier when that would leave no room for
    /// the look that confirms it; `None` when no stop can come within `limit`. A
    /// confirming look must fit whole: a smaller one is not the confirmation the rule
    /// measured. Any other look is taken no later than `limit / min_growth` (with
    /// [`Rule::confirm`]), the last whose confirmation fits, and still a step of at least
    /// `min_growth` (a smaller one sorts everything again for a width barely different);
    /// a look too near that to step has no stop ahead of it within the limit.
    pub fn within(&self, step: Step, n: usize, limit: usize) -> Option<usize> {
        let Step::More {
            samples,
            confirming,
            ..
        } = step
        else {
            return None;
        };
        if confirming {
            return (samples <= limit).then_some(samples);
        }
        let last = if self.confirm {
            (limit as f64 / self.min_growth).floor() as usize
        } else {
            limit
        };
        let next = samples.min(last);
        (next >= grow(n, self.min_growth)).then_some(next)
    }

    /// The samples (in all) the precision asked needs when the look that gets them is the
    /// limit's: [`Rule::needed`] without the confirmation and the effective tail that grows
    /// with the looks, which a look the clock chose does not need (it stops nothing early),
    /// but with the effective tail the interval itself rests on ([`MIN_EFFECTIVE_TAIL`]). A
    /// narrow interval needs none more (`n`); an interval still missing asks for what its
    /// own estimate names.
    pub fn needed_at_limit(
        &self,
        n: usize,
        p: f64,
        ci: Result<&DependentCi, &NeedMore>,
        target: f64,
    ) -> usize {
        match ci {
            Err(need) => need.needed.max(n),
            Ok(ci) if ci.width() <= target => n,
            Ok(ci) if target > 0.0 => {
                let by_width = n as f64 * (ci.width() / target).powi(2) * self.margin;
                let tail = effective_tail(n, p, ci).max(f64::MIN_POSITIVE);
                let wanted = by_width.max(n as f64 * MIN_EFFECTIVE_TAIL / tail).ceil();
                if wanted.is_finite() && wanted < usize::MAX as f64 {
                    (wanted as usize).max(n)
                } else {
                    usize::MAX
                }
            }
            Ok(_) => usize::MAX,
        }
    }

    /// Where a look that did not stop goes when at most `limit` samples (in all) can be had:
    /// the rule's next look when one whose stop fits is left ([`Rule::within`]); else one
    /// last look at the limit, whose interval is the answer as it comes (as narrow as asked,
    /// or not), when the precision asked can still come by then
    /// ([`Rule::needed_at_limit`]) or the interval is already narrow; else the answer now,
    /// from this look's interval: no time left would narrow it enough, and waiting for the
    /// limit would only say so later.
    pub fn plan(
        &self,
        step: Step,
        n: usize,
        p: f64,
        ci: Result<&DependentCi, &NeedMore>,
        target: f64,
        limit: usize,
    ) -> Plan {
        if let Some(at) = self.within(step, n, limit) {
            return Plan::Look(at);
        }
        if limit <= n {
            return Plan::Now;
        }
        if self.needed_at_limit(n, p, ci, target) <= limit {
            Plan::AtLimit
        } else {
            Plan::Now
        }
    }
}

/// Where a look that did not stop goes within a limit ([`Rule::plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Plan {
    /// The rule's next look, at this many samples in all.
    Look(usize),
    /// One last look at the limit: its interval is the answer, converged when as narrow as
    /// asked (no confirmation: the clock chose that look), else wide.
    AtLimit,
    /// No look left can bring the precision asked: this look's interval is the answer.
    Now,
}

/// The tail samples the interval rests on, at their effective number: n·min(p, 1 − p)
/// over the variance inflation.
pub fn effective_tail(n: usize, p: f64, ci: &DependentCi) -> f64 {
    n as f64 * p.min(1.0 - p) / ci.variance_inflation.max(1.0)
}

/// ⌈n·factor⌉, and always more than n.
fn grow(n: usize, factor: f64) -> usize {
    let grown = (n as f64 * factor).ceil();
    let grown = if grown >= usize::MAX as f64 {
        usize::MAX
    } else {
        grown as usize
    };
    grown.max(n.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci(low: f64, high: f64, vif: f64) -> DependentCi {
        DependentCi {
            low,
            high,
            method: crate::dependent::CiMethod::BatchedIndicator,
            batch_size: 100,
            batches: 100,
            variance_inflation: vif,
            batch_lag1: 0.0,
        }
    }

    #[test]
    fn a_narrow_interval_on_enough_tail_stops() {
        let rule = Rule::default();
        // 100,000 samples at p99 with no inflation: 1,000 effective tail samples.
        let step = rule.step(5, 100_000, 0.99, Ok(&ci(90.0, 100.0, 1.0)), 10.0, true);
        assert_eq!(step, Step::Stop);
    }

    #[test]
    fn a_wide_interval_asks_for_the_1_over_root_n_prediction_within_the_steps() {
        let rule = Rule::default();
        // Width 12 against 10: 1.44 × 1.1 = 1.584 times the samples.
        match rule.step(1, 100_000, 0.99, Ok(&ci(88.0, 100.0, 1.0)), 10.0, true) {
            Step::More {
                samples,
                narrow: false,
                confirming: false,
            } => assert!((158_400..=158_401).contains(&samples), "{samples}"),
            other => panic!("{other:?}"),
        }
        // Five times too wide: at most twice the samples, not the 27.5 times predicted.
        let step = rule.step(1, 100_000, 0.99, Ok(&ci(50.0, 100.0, 1.0)), 10.0, true);
        assert_eq!(
            step,
            Step::More {
                samples: 200_000,
                narrow: false,
                confirming: false
            }
        );
        // Barely too wide: at least a quarter more.
        let step = rule.step(1, 100_000, 0.99, Ok(&ci(89.9, 100.0, 1.0)), 10.0, true);
        assert_eq!(
            step,
            Step::More {
                samples: 125_000,
                narrow: false,
                confirming: false
            }
        );
    }

    #[test]
    fn a_later_stop_needs_more_effective_tail() {
        let rule = Rule::default();
        assert_eq!(rule.tail_needed(1), MIN_EFFECTIVE_TAIL);
        assert!(rule.tail_needed(8) > 2.5 * MIN_EFFECTIVE_TAIL);
        // 10,000 samples at p99 inflated 2×: 50 effective tail samples, enough at look 1
        // (30) but not at look 8 (92): narrow, and asked for the samples that make 92.
        let narrow = ci(90.0, 95.0, 2.0);
        assert_eq!(
            rule.step(1, 10_000, 0.99, Ok(&narrow), 10.0, true),
            Step::Stop
        );
        match rule.step(8, 10_000, 0.99, Ok(&narrow), 10.0, true) {
            Step::More {
                samples,
                narrow: true,
                confirming: false,
            } => {
                let tail = effective_tail(samples, 0.99, &narrow);
                assert!(tail >= rule.tail_needed(8) - 1e-9, "{samples} {tail}");
                assert!(samples <= 20_000, "{samples}");
            }
            other => panic!("{other:?}"),
        }
        // Without the guard the same look stops.
        let plain = Rule {
            tail_growth: 0.0,
            ..Rule::default()
        };
        assert_eq!(
            plain.step(8, 10_000, 0.99, Ok(&narrow), 10.0, true),
            Step::Stop
        );
    }

    #[test]
    fn a_narrow_steady_interval_is_confirmed_by_the_next_look_before_the_stop() {
        let rule = Rule::default();
        let narrow = ci(90.0, 100.0, 1.0);
        assert_eq!(
            rule.step(5, 100_000, 0.99, Ok(&narrow), 10.0, false),
            Step::More {
                samples: 125_000,
                narrow: true,
                confirming: true
            }
        );
        assert_eq!(
            rule.step(6, 125_000, 0.99, Ok(&narrow), 10.0, true),
            Step::Stop
        );
        // A confirming look that is wide again goes on as any wide look.
        let wide = ci(80.0, 100.0, 1.0);
        assert!(matches!(
            rule.step(6, 125_000, 0.99, Ok(&wide), 10.0, true),
            Step::More {
                narrow: false,
                confirming: false,
                ..
            }
        ));
        let unconfirmed = Rule {
            confirm: false,
            ..Rule::default()
        };
        assert_eq!(
            unconfirmed.step(5, 100_000, 0.99, Ok(&narrow), 10.0, false),
            Step::Stop
        );
    }

    #[test]
    fn a_confirmation_sized_from_the_width_is_smaller_the_narrower_the_interval() {
        let rule = Rule {
            confirmation: Confirmation::ByWidth,
            ..Rule::default()
        };
        // Just narrow enough: the full quarter; half as wide as asked: a sixteenth of it.
        let step = |high| rule.step(5, 100_000, 0.99, Ok(&ci(90.0, high, 1.0)), 10.0, false);
        assert_eq!(
            step(100.0),
            Step::More {
                samples: 125_000,
                narrow: true,
                confirming: true
            }
        );
        assert_eq!(
            step(95.0),
            Step::More {
                samples: 106_250,
                narrow: true,
                confirming: true
            }
        );
        // The need of such a look is its confirmation.
        assert_eq!(
            rule.needed(5, 100_000, 0.99, &ci(90.0, 95.0, 1.0), 10.0),
            106_250
        );
        assert_eq!(Rule::default().confirmation, Confirmation::Fixed);
    }

    #[test]
    fn without_an_interval_the_estimate_of_the_need_is_taken_within_bounds() {
        let rule = Rule::default();
        let need = |needed| NeedMore {
            reason: String::new(),
            needed,
            have: 10_000,
            correlated_over: None,
        };
        let more = |needed| match rule.step(3, 10_000, 0.99, Err(&need(needed)), 10.0, true) {
            Step::More { samples, .. } => samples,
            Step::Stop => panic!("stopped without an interval"),
        };
        assert_eq!(more(30_000), 30_000);
        assert_eq!(more(10_001), 12_500);
        assert_eq!(more(1_000_000), 40_000);
        assert_eq!(more(usize::MAX), 40_000);
    }

    #[test]
    fn a_look_is_planned_so_that_its_confirmation_fits_within_the_limit() {
        let rule = Rule::default();
        let wide = |samples| Step::More {
            samples,
            narrow: false,
            confirming: false,
        };
        // Room for the whole step and its confirmation: the step.
        assert_eq!(rule.within(wide(20_000), 10_000, 100_000), Some(20_000));
        // A step past limit / 1.25 is taken there, so that a narrow look's confirmation
        // fits: 80,000 × 1.25 = 100,000.
        assert_eq!(rule.within(wide(95_000), 60_000, 100_000), Some(80_000));
        // Already there, or too near it for a step of a quarter: no look left whose
        // confirmation fits.
        assert_eq!(rule.within(wide(100_000), 80_000, 100_000), None);
        assert_eq!(rule.within(wide(100_000), 70_000, 100_000), None);
        // A confirmation fits whole, or not at all (the demo's 54,361 → 67,952 in 30 s).
        let confirm = |samples| Step::More {
            samples,
            narrow: true,
            confirming: true,
        };
        assert_eq!(rule.within(confirm(67_952), 54_361, 70_000), Some(67_952));
        assert_eq!(rule.within(confirm(67_952), 54_361, 60_000), None);
        assert_eq!(rule.within(Step::Stop, 54_361, 60_000), None);
        // Without confirmations the last look is the limit's.
        let unconfirmed = Rule {
            confirm: false,
            ..Rule::default()
        };
        assert_eq!(
            unconfirmed.within(wide(120_000), 60_000, 100_000),
            Some(100_000)
        );
    }

    #[test]
    fn a_narrow_steady_look_needs_its_confirmation_and_every_need_exceeds_the_samples() {
        let rule = Rule::default();
        // The demo's 2,000 req/s point: 39.6 µs wide against 88.3 asked on 54,361 samples
        // at p99, inflated 2× (272 effective tail samples): its confirmation's 67,952.
        let narrow = ci(100.0, 139.6, 2.0);
        assert_eq!(rule.needed(6, 54_361, 0.99, &narrow, 88.3), 67_952);
        for (low, high) in [(100.0, 139.6), (100.0, 200.0), (100.0, 100.5)] {
            for n in [1_000, 54_361, 1_000_000] {
                let c = ci(low, high, 3.0);
                assert!(rule.needed(4, n, 0.99, &c, 88.3) > n, "{n} {low} {high}");
            }
        }
    }

    #[test]
    fn a_look_without_room_for_the_rules_stop_goes_to_the_limit_when_the_precision_fits() {
        let rule = Rule::default();
        // A narrow look whose confirmation does not fit: the limit's look decides.
        let narrow = ci(90.0, 99.0, 1.0);
        let confirm = rule.step(4, 400_000, 0.99, Ok(&narrow), 10.0, false);
        assert_eq!(
            rule.plan(confirm, 400_000, 0.99, Ok(&narrow), 10.0, 450_000),
            Plan::AtLimit
        );
        // A wide look whose next step leaves no room for a confirmation: at 420,000 of
        // 509,569 samples, 2% too wide, it needs 480,665 (and 600,831 with a confirming
        // look, which the rule's own stop would ask): the limit's look decides.
        let wide = ci(90.0, 100.2, 1.0);
        let needed = rule.needed_at_limit(420_000, 0.99, Ok(&wide), 10.0);
        assert_eq!(needed, 480_665);
        let step = rule.step(3, 420_000, 0.99, Ok(&wide), 10.0, false);
        assert_eq!(rule.within(step, 420_000, 509_569), None);
        assert_eq!(
            rule.plan(step, 420_000, 0.99, Ok(&wide), 10.0, 509_569),
            Plan::AtLimit
        );
        // Earlier, the rule's own look still fits.
        let early = rule.step(3, 300_000, 0.99, Ok(&wide), 10.0, false);
        assert_eq!(
            rule.plan(early, 300_000, 0.99, Ok(&wide), 10.0, 509_569),
            Plan::Look(375_000)
        );
        // Twice too wide with the limit a quarter away: the answer is now.
        let twice = ci(80.0, 100.0, 1.0);
        assert_eq!(
            rule.plan(step, 420_000, 0.99, Ok(&twice), 10.0, 509_569),
            Plan::Now
        );
        // At the limit already: now.
        assert_eq!(
            rule.plan(confirm, 400_000, 0.99, Ok(&narrow), 10.0, 400_000),
            Plan::Now
        );
        assert_eq!(rule.needed_at_limit(1_000, 0.99, Ok(&narrow), 10.0), 1_000);
    }

    #[test]
    fn degenerate_targets_never_stop_and_never_overflow() {
        let rule = Rule::default();
        let wide = ci(0.0, 10.0, 1.0);
        for target in [0.0, -1.0, f64::NAN] {
            match rule.step(2, usize::MAX / 2, 0.99, Ok(&wide), target, true) {
                Step::More { samples, .. } => assert!(samples > usize::MAX / 2),
                Step::Stop => panic!("stopped at target {target}"),
            }
        }
    }
}
