//! The inter-arrival check: the kept gaps of each measuring agent against the process the
//! scenario asked for (Anderson-Darling). Lancet's procedure gates on it; `method:
//! vernier` and `interarrival_check: report` report it and measure anyway.

use std::time::Duration;

use super::super::check_next::CheckNext;
use super::super::checks;
use super::super::decision::Decision;
use super::super::event::CheckRole;
use super::super::policy::{INTERARRIVAL_TRIES, interarrival_tries_left};
use super::super::reason::{Interarrival, InterarrivalFailed, Reason, Why};
use super::state::{Point, Stage};
use crate::scenario::Method;

impl Point {
    pub(super) fn interarrival_tick(&mut self, at: Duration, out: &mut Decision) {
        let wanted = self.config.sampling.interarrival_samples;
        // Throughput agents keep no samples, so no gaps either: the measuring agents' gaps
        // are tested.
        let Stage::Interarrival { gaps, .. } = &self.stage else {
            return;
        };
        let short = |i: usize| gaps.get(i).map_or(0, Vec::len) < wanted;
        if self.measuring().any(short) {
            return;
        }
        // This test among those run at this load.
        let Stage::Interarrival { tries, .. } = &mut self.stage else {
            return;
        };
        *tries += 1;
        let tries = *tries;
        let failed = self.test_gaps(at, tries, out);
        self.after_interarrival(at, tries, failed, out);
    }

    /// Tests each measuring agent's last gaps against the process asked (the `tries`-th
    /// test at this load), announcing each check and keeping each agent's result: the
    /// agents whose gaps do not fit.
    fn test_gaps(
        &mut self,
        at: Duration,
        tries: u32,
        out: &mut Decision,
    ) -> Vec<InterarrivalFailed> {
        let wanted = self.config.sampling.interarrival_samples;
        let target_mean_ns = 1e9 / self.per_worker_rate();
        let mut failed = Vec::new();
        for i in self.measuring().collect::<Vec<_>>() {
            let Stage::Interarrival { gaps, .. } = &self.stage else {
                break;
            };
            let g = &gaps[i];
            let (mut check, result, finding) = checks::interarrival(
                i,
                &g[g.len() - wanted..],
                &self.config.interarrival,
                target_mean_ns,
                self.config.alpha,
                self.config.warmup.tolerance,
            );
            if !check.pass {
                failed.push(InterarrivalFailed {
                    agent: i,
                    statistic: result.statistic.into(),
                    pvalue: result.pvalue,
                    process: self.config.interarrival,
                    tries: None,
                    finding,
                });
            }
            check.role = CheckRole::of(
                check.check,
                self.config.method,
                self.config.interarrival_enforced,
            );
            check.next = Some(self.interarrival_next(check.pass, tries));
            self.agents[i].found.interarrival = Some(result);
            self.check(at, check, out);
        }
        failed
    }

    /// What follows an agent's inter-arrival check, `pass`ed or not at the `tries`-th
    /// test. Under `method: vernier` the departures are judged by their effect on the
    /// answer at the verdict (departures.rs); Anderson-Darling is computed and reported.
    fn interarrival_next(&self, pass: bool, tries: u32) -> CheckNext {
        let vernier = self.config.method == Method::Vernier;
        if pass {
            CheckNext::Fits
        } else if vernier {
            CheckNext::InterarrivalReported
        } else if !self.config.interarrival_enforced {
            CheckNext::InterarrivalNotEnforced
        } else if interarrival_tries_left(tries) {
            CheckNext::TestFreshGaps
        } else {
            CheckNext::InterarrivalGiveUp
        }
    }

    /// After the `tries`-th test with the agents that `failed` it: a round begins (the
    /// gaps fit, or their misfit is only reported), fresh gaps are tested again, or the
    /// point ends N/A.
    fn after_interarrival(
        &mut self,
        at: Duration,
        tries: u32,
        failed: Vec<InterarrivalFailed>,
        out: &mut Decision,
    ) {
        let vernier = self.config.method == Method::Vernier;
        let enforced = self.config.interarrival_enforced && !vernier;
        if failed.is_empty() {
            self.begin_round(at, "the inter-arrival times fit", Vec::new(), out);
        } else if vernier {
            self.begin_round(
                at,
                "Anderson-Darling rejects the departures (reported; their effect on the answer is judged at the verdict)",
                Vec::new(),
                out,
            );
        } else if !enforced {
            let waived = failed
                .into_iter()
                .map(|f| Reason::new(Why::Interarrival(Interarrival::Failed(f))))
                .collect();
            self.begin_round(
                at,
                "the inter-arrival test failed and is only reported (interarrival_check: report)",
                waived,
                out,
            );
        } else if interarrival_tries_left(tries) {
            if let Stage::Interarrival { gaps, .. } = &mut self.stage {
                gaps.iter_mut().for_each(Vec::clear);
            }
        } else {
            let reasons = failed
                .into_iter()
                .map(|f| {
                    let f = InterarrivalFailed {
                        tries: Some(INTERARRIVAL_TRIES),
                        ..f
                    };
                    Reason::new(Why::Interarrival(Interarrival::Failed(f)))
                })
                .collect();
            self.finish_na(at, reasons, out);
        }
    }
}
