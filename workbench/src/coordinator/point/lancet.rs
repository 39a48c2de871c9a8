//! `method: lancet`'s confidence step: order-statistic CIs per agent and combined on
//! samples thinned until independent, the agents' agreement, the width against the target,
//! and the next sample count from 1/√n (the paper's procedure, kept as it was).

use std::time::Duration;

use vernier_stats::{Percentile, min_samples_for_ci};

use super::super::check_next::{CheckNext, Found, IntervalFinding, SloSide};
use super::super::checks::{self, Interval};
use super::super::decision::Decision;
use super::super::event::{Check, CheckKind, CheckRole};
use super::super::policy::{PREDICTION_MARGIN, is_heavy, least_step};
use super::super::reason::{Confidence, HeavyTail, Reason, TooFewForCi, TooFewSamples, Why, Wide};
use super::super::result::Verdict;
use super::state::Point;

impl Point {
    /// `method: lancet`'s confidence step: order-statistic CIs per agent and combined
    /// (the samples were thinned until independent), agreement, the width against the target.
    pub(super) fn check_confidence(&mut self, at: Duration, out: &mut Decision) {
        let p = self.config.ci.percentile;
        let conf = self.config.ci.confidence;
        let min_n = min_samples_for_ci(p.fraction(), conf).unwrap_or(usize::MAX);
        let intervals = self.order_intervals(p, conf);
        let measuring_count = intervals.len().max(1);
        let all = self.merged_sorted();
        let n = all.len();
        let combined = checks::interval(&all, p, conf).and_then(|(v, ci)| {
            ci.map(|(lo, hi)| Interval {
                value: v,
                low: lo,
                high: hi,
            })
        });
        let Some(combined) = combined else {
            self.too_few_for_order_ci(at, min_n, n, measuring_count, out);
            return;
        };
        let target_us = self.config.ci.width.target_us(combined.value);
        self.looks.ci_width_us = Some(combined.width());
        if !self.agents_agree(at, p, n, &intervals, out) {
            return;
        }
        let narrow = combined.width() <= target_us;
        let slo = self.config.slo.map(|s| s.as_secs_f64() * 1e6);
        let decided = slo.is_some_and(|s| combined.high < s || combined.low > s);
        let mut check = Check {
            check: CheckKind::Confidence,
            agent: None,
            pass: narrow || decided,
            role: CheckRole::Gate,
            statistic: Some(combined.width()),
            pvalue: None,
            n,
            found: Found::Interval(IntervalFinding {
                p,
                value: combined.value,
                confidence: conf,
                low: combined.low,
                high: combined.high,
                width: combined.width(),
                target_us,
                n,
                batches: None,
            }),
            next: None,
            data: None,
        };
        if narrow || decided {
            check.next = Some(if narrow {
                CheckNext::Converged
            } else {
                let slo_us = slo.unwrap_or(0.0);
                CheckNext::DecidedAgainstSlo {
                    side: if combined.high < slo_us {
                        SloSide::Below
                    } else {
                        SloSide::Above
                    },
                    slo_us,
                }
            });
            self.check(at, check, out);
            self.finish(at, Verdict::Converged, Vec::new(), out);
            return;
        }
        self.order_ci_wide(at, n, measuring_count, &combined, check, out);
    }

    /// Each measuring agent's order-statistic interval (whose width the agent's row shows),
    /// as `(agent, samples, interval)`.
    fn order_intervals(
        &mut self,
        p: Percentile,
        conf: f64,
    ) -> Vec<(usize, usize, Option<Interval>)> {
        let mut intervals = Vec::new();
        let measuring: Vec<usize> = self.measuring().collect();
        for i in measuring {
            let mut x = self.latencies_in_send_order(i);
            x.sort_by(f64::total_cmp);
            let iv = checks::interval(&x, p, conf);
            let ci = iv.and_then(|(v, ci)| {
                ci.map(|(lo, hi)| Interval {
                    value: v,
                    low: lo,
                    high: hi,
                })
            });
            self.agents[i].found.ci_width_us = ci.map(|c| c.width());
            intervals.push((i, x.len(), ci));
        }
        intervals
    }

    /// Too few samples (`n`) for any CI of the percentile, which needs `min_n`: collect
    /// that many, with a margin, shared by the agents.
    fn too_few_for_order_ci(
        &mut self,
        at: Duration,
        min_n: usize,
        n: usize,
        measuring_count: usize,
        out: &mut Decision,
    ) {
        let p = self.config.ci.percentile;
        let conf = self.config.ci.confidence;
        let wanted = (min_n as f64 * PREDICTION_MARGIN).ceil() as usize / measuring_count + 1;
        let too_few = TooFewForCi {
            p,
            confidence: conf.into(),
            samples: n,
            min_samples: min_n,
            need: None,
            correlated_over: None,
            dependence_s: None,
        };
        let check = Check {
            check: CheckKind::Confidence,
            agent: None,
            pass: false,
            role: CheckRole::Gate,
            statistic: None,
            pvalue: None,
            n,
            found: Found::TooFew(too_few.clone()),
            next: Some(CheckNext::Collect { per_agent: wanted }),
            data: None,
        };
        self.check(at, check, out);
        let reason = Reason::new(Why::TooFewSamples(TooFewSamples::Ci(too_few)));
        self.extend(at, wanted.max(self.rounds.wanted + 1), vec![reason], out);
    }

    /// The combined interval (of `n` samples) is wider than the target: the width shrinks as
    /// 1/√n, so the samples it needs are predicted (with a margin) rather than stepped to
    /// blindly, and the reason names a heavy tail when the order statistics show one.
    fn order_ci_wide(
        &mut self,
        at: Duration,
        n: usize,
        measuring_count: usize,
        combined: &Interval,
        mut check: Check,
        out: &mut Decision,
    ) {
        let p = self.config.ci.percentile;
        let conf = self.config.ci.confidence;
        let target_us = self.config.ci.width.target_us(combined.value);
        // The width shrinks as 1/√n: predict the samples needed rather than step blindly.
        let per_agent_n = n / measuring_count;
        let predicted = (per_agent_n as f64
            * (combined.width() / target_us).powi(2)
            * PREDICTION_MARGIN)
            .ceil() as usize;
        let wanted = predicted.max(least_step(self.rounds.wanted));
        check.next = Some(CheckNext::CollectPredicted { per_agent: wanted });
        self.check(at, check, out);
        let heaviness =
            vernier_stats::tail_heaviness(combined.value, combined.width(), p.fraction(), n, conf)
                .unwrap_or(f64::NAN);
        let total_needed = wanted * measuring_count;
        let wide = Wide {
            p,
            ci_width_us: combined.width().into(),
            target_us: target_us.into(),
            samples: n,
            samples_needed: total_needed,
            variance_inflation: None,
            batch_size: None,
            heaviness: is_heavy(heaviness).then_some(heaviness),
            heaviness_inside: None,
            inside: None,
            stalls: None,
        };
        let why = if wide.heaviness.is_some() {
            Why::HeavyTail(HeavyTail::Wide(wide))
        } else {
            Why::Confidence(Confidence::Wide(wide))
        };
        let reason = Reason::new(why);
        self.extend(at, wanted, vec![reason], out);
    }
}
