//! The agents' agreement, shared by both methods: every pair of agents' intervals of the
//! target percentile must overlap. An agent without an interval of its own yet leaves the
//! agreement unknown, not failed: the point collects more, saying which agent lacks one
//! and what would do (too few samples), not that intervals it never had disagree.

use std::time::Duration;

use vernier_stats::{Percentile, min_samples_for_ci};

use super::super::check_next::{AgreementFinding, CheckNext, Found};
use super::super::checks::Interval;
use super::super::decision::Decision;
use super::super::event::{Check, CheckKind, CheckRole};
use super::super::policy::RETRY_FACTOR;
use super::super::reason::{
    AgentInterval, AgentsDisagree, Reason, TooFewForCi, TooFewSamples, Why,
};
use super::state::Point;

impl Point {
    /// Agreement of the measuring agents' `intervals` (`(agent, samples, interval)`) of
    /// `p`, from `n` samples in all: true when they overlap; otherwise the check says why
    /// and the point collects more.
    pub(super) fn agents_agree(
        &mut self,
        at: Duration,
        p: Percentile,
        n: usize,
        intervals: &[(usize, usize, Option<Interval>)],
        out: &mut Decision,
    ) -> bool {
        if intervals.len() <= 1 {
            return true;
        }
        let with_ci: Vec<AgentInterval> = intervals
            .iter()
            .filter_map(|&(agent, _, c)| {
                c.map(|c| AgentInterval {
                    agent,
                    value: c.value.into(),
                    low: c.low.into(),
                    high: c.high.into(),
                })
            })
            .collect();
        let max_low = with_ci.iter().map(|c| c.low.get()).fold(f64::MIN, f64::max);
        let min_high = with_ci
            .iter()
            .map(|c| c.high.get())
            .fold(f64::MAX, f64::min);
        let without = intervals.iter().find(|(_, _, c)| c.is_none());
        let agree = without.is_none() && max_low <= min_high;
        let more = self.rounds.wanted * RETRY_FACTOR;
        let without =
            without.map(|&(agent, samples, _)| (agent, self.own_too_few(agent, samples, p)));
        let found = Found::Agreement(AgreementFinding {
            p,
            intervals: with_ci.clone(),
            without: without.clone(),
        });
        let reason = match &without {
            Some((_, too_few)) => {
                Reason::new(Why::TooFewSamples(TooFewSamples::Ci(too_few.clone())))
            }
            None => Reason::new(Why::AgentsDisagree(AgentsDisagree {
                p,
                gap_us: (max_low - min_high).into(),
                intervals: with_ci,
            })),
        };
        let check = Check {
            check: CheckKind::Agreement,
            agent: None,
            pass: agree,
            role: CheckRole::Gate,
            statistic: without.is_none().then_some(max_low - min_high),
            pvalue: None,
            n,
            found,
            next: Some(if agree {
                CheckNext::AgentsAgree
            } else {
                CheckNext::CollectMore { per_agent: more }
            }),
            data: None,
        };
        self.check(at, check, out);
        if !agree {
            self.extend(at, more, vec![reason], out);
        }
        agree
    }

    /// Why agent `agent`'s `samples` gave no interval of `p` of their own: its
    /// dependence-valid estimate's need when it had one (`method: vernier`), else the
    /// order-statistic interval's least count.
    fn own_too_few(&self, agent: usize, samples: usize, p: Percentile) -> TooFewForCi {
        let confidence = self.config.ci.confidence;
        match &self.agents[agent].found.ci_need {
            Some(need) => {
                let mut figures = self.too_few_figures(p, samples, need);
                figures.need = Some(format!("agent {agent}'s own: {}", need.reason));
                figures
            }
            None => TooFewForCi {
                p,
                confidence: confidence.into(),
                samples,
                min_samples: min_samples_for_ci(p.fraction(), confidence).unwrap_or(0),
                need: None,
                correlated_over: None,
                dependence_s: None,
            },
        }
    }
}
