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
        let per_worker = self.per_worker_rate();
        let target_mean_ns = 1e9 / per_worker;
        // Under `method: vernier` the departures are judged by their effect on the answer
        // at the verdict (departures.rs); Anderson-Darling is computed and reported.
        let vernier = self.config.method == Method::Vernier;
        let enforced = self.config.interarrival_enforced && !vernier;
        let mut failed = Vec::new();
        for i in self.measuring().collect::<Vec<_>>() {
            let Stage::Interarrival { gaps, .. } = &self.stage else {
                return;
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
            check.next = Some(if check.pass {
                CheckNext::Fits
            } else if vernier {
                CheckNext::InterarrivalReported
            } else if !enforced {
                CheckNext::InterarrivalNotEnforced
            } else if interarrival_tries_left(tries) {
                CheckNext::TestFreshGaps
            } else {
                CheckNext::InterarrivalGiveUp
            });
            self.agents[i].found.interarrival = Some(result);
            self.check(at, check, out);
        }
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
