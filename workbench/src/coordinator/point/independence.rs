//! Whether a round's samples depend on each other: `method: lancet` gates on it,
//! thinning the sampling by the lag its Spearman search finds; `method: vernier` reports the
//! search and correlogram, and its CI allows for the dependence instead.

use std::time::Duration;

use super::super::check_next::CheckNext;
use super::super::checks;
use super::super::decision::Decision;
use super::super::event::CheckRole;
use super::super::policy::too_thin;
use super::super::reason::{Independence, IndependenceStuck, IndependenceThinned, Reason, Why};
use super::estimate::Snapshot;
use super::state::{Point, Stage};

impl Point {
    /// True when every agent's samples are independent; otherwise thins the sampling and
    /// starts a new round (or ends the point).
    pub(super) fn check_independence(&mut self, at: Duration, out: &mut Decision) -> bool {
        let mut worst = 1usize;
        let mut stuck = None;
        for i in self.measuring().collect::<Vec<_>>() {
            let x = self.latencies_in_send_order(i);
            let checks::Independent {
                mut check,
                lag,
                finding,
            } = checks::independence(i, &x, self.config.alpha);
            check.role = CheckRole::of(
                check.check,
                self.config.method,
                self.config.interarrival_enforced,
            );
            self.agents[i].found.lag = lag;
            match lag {
                Some(l) => worst = worst.max(l),
                None => stuck = Some((i, finding)),
            }
            check.next = Some(match lag {
                Some(1) => CheckNext::Independent,
                Some(lag) => CheckNext::KeepOneIn { lag },
                None => CheckNext::CorrelatedEverywhere,
            });
            self.check(at, check, out);
        }
        if let Some((agent, spearman)) = stuck {
            let why = Why::Independence(Independence::Stuck(IndependenceStuck {
                agent,
                sampling_rate: self.rounds.sampling.into(),
                spearman,
            }));
            self.finish_na(at, vec![Reason::new(why)], out);
            return false;
        }
        if worst == 1 {
            if let Stage::Measure { independent, .. } = &mut self.stage {
                *independent = true;
            }
            return true;
        }
        let thinned = self.rounds.sampling / worst as f64;
        let per_agent = self.per_agent_rate();
        let seconds = self.rounds.wanted as f64 / (per_agent * thinned);
        let left = self.seconds_left(at);
        let tries_used = self.rounds.tries >= self.config.limits.max_tries;
        if too_thin(thinned) || seconds > left || tries_used {
            let why = Why::Independence(Independence::Thinned(IndependenceThinned {
                lag: worst,
                sampling_rate: thinned.into(),
                seconds_needed: seconds.into(),
                samples_wanted: self.rounds.wanted,
                seconds_left: (!tries_used).then_some(left),
                max_tries: tries_used.then_some(self.config.limits.max_tries),
            }));
            self.finish_na(at, vec![Reason::new(why)], out);
            return false;
        }
        self.rounds.sampling = thinned;
        let waived = self.stage.take_waived();
        self.begin_round(
            at,
            &format!("samples correlated up to lag {worst}: sampling ÷ {worst}"),
            waived,
            out,
        );
        false
    }

    /// The lag search and correlogram of each agent's samples, reported (the TUI's lag
    /// column, the record's correlogram), never a gate.
    pub(super) fn report_independence(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        out: &mut Decision,
    ) {
        for a in &snapshot.agents {
            let i = a.agent;
            let checks::Independent { mut check, lag, .. } =
                checks::independence(i, &a.in_order, self.config.alpha);
            check.role = CheckRole::of(
                check.check,
                self.config.method,
                self.config.interarrival_enforced,
            );
            self.agents[i].found.lag = lag;
            check.next = Some(match lag {
                Some(1) => CheckNext::Independent,
                lag => CheckNext::CorrelationAllowed { lag },
            });
            self.check(at, check, out);
        }
    }
}
