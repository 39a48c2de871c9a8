//! The measurement rounds: a round starts with fresh samples, and once each measuring
//! agent has the samples wanted they are judged (independence, stationarity, then the
//! confidence step of the scenario's method); a judgement that wants more samples extends
//! the round, or ends the point N/A when the tries or the time are used up.

use std::time::Duration;

use super::super::check_next::CheckNext;
use super::super::checks;
use super::super::decision::Decision;
use super::super::event::CheckKind;
use super::super::policy::RETRY_FACTOR;
use super::super::reason::{MoreTime, Reason, Stationarity, Why};
use super::estimate::Snapshot;
use super::state::{Point, RoundFigures, RoundLooks, Stage};
use crate::scenario::Method;

impl Point {
    /// Starts a measurement round: fresh samples at the current sampling rate, no looks
    /// yet, and the failures the scenario waived, `waived`, for its result to report.
    pub(super) fn begin_round(
        &mut self,
        at: Duration,
        why: &str,
        waived: Vec<Reason>,
        out: &mut Decision,
    ) {
        self.rounds.round += 1;
        self.rounds.tries += 1;
        self.host.stale = true;
        self.ask_sampling(self.rounds.sampling, out);
        let windows = self.stage.take_windows();
        self.phase(
            at,
            Stage::Measure {
                windows,
                independent: false,
                looks: RoundLooks::default(),
                round: RoundFigures::new(at, self.agents.len()),
                waived,
            },
            format!(
                "{why}: round {}, {} samples per agent at {:.3}% sampling ({})",
                self.rounds.round,
                self.rounds.wanted,
                self.rounds.sampling * 100.0,
                self.sampling_why()
            ),
            out,
        );
    }

    pub(super) fn measure_tick(&mut self, at: Duration, out: &mut Decision) {
        if self.config.method == Method::Vernier && self.touched_between_looks(at, out) {
            return;
        }
        if self
            .measuring()
            .any(|i| self.samples(i).len() < self.rounds.wanted)
        {
            return;
        }
        match self.config.method {
            Method::Lancet => {
                let independent = matches!(
                    self.stage,
                    Stage::Measure {
                        independent: true,
                        ..
                    }
                );
                if !independent && !self.check_independence(at, out) {
                    return;
                }
                let snapshot = self.snapshot();
                if !self.check_stationarity(at, &snapshot, out) {
                    return;
                }
                self.check_confidence(at, out);
            }
            Method::Vernier => {
                // Copied and sorted once for the whole evaluation.
                let snapshot = self.snapshot();
                self.report_independence(at, &snapshot, out);
                if !self.check_stationarity(at, &snapshot, out) {
                    return;
                }
                self.check_confidence_dependent(at, &snapshot, out);
            }
        }
    }

    /// True when every agent's samples are stationary; otherwise asks for more.
    pub(super) fn check_stationarity(
        &mut self,
        at: Duration,
        snapshot: &Snapshot,
        out: &mut Decision,
    ) -> bool {
        let mut failed = Vec::new();
        let mut all = Vec::new();
        for a in &snapshot.agents {
            let i = a.agent;
            let (check, adf) = checks::stationarity(
                CheckKind::Stationarity,
                Some(i),
                &a.in_order,
                self.config.alpha,
                None,
            );
            if !check.pass {
                failed.push(Stationarity {
                    agent: i,
                    pvalue: check.pvalue,
                    adf,
                });
            }
            all.push(check);
        }
        let more = self.rounds.wanted * RETRY_FACTOR;
        for mut check in all {
            check.next = Some(if check.pass {
                CheckNext::Stationary
            } else {
                CheckNext::CollectMore { per_agent: more }
            });
            self.check(at, check, out);
        }
        if failed.is_empty() {
            return true;
        }
        let reasons: Vec<Reason> = failed
            .into_iter()
            .map(|f| Reason::new(Why::Stationarity(f)))
            .collect();
        self.extend(at, more, reasons, out);
        false
    }

    /// Seconds until every agent has `wanted` samples at the current rate and sampling.
    pub(super) fn seconds_to_collect(&self, wanted: usize) -> f64 {
        let fewest = self.fewest_samples();
        let per_agent = self.kept_per_agent();
        wanted.saturating_sub(fewest) as f64 / per_agent.max(1e-9)
    }

    /// The kept samples of the measuring agent that has fewest.
    pub(super) fn fewest_samples(&self) -> usize {
        self.measuring()
            .map(|i| self.samples(i).len())
            .min()
            .unwrap_or(0)
    }

    /// The sequential rule's next look (`method: vernier`'s confidence step): `wanted`
    /// samples per agent in the same round. Looks do not count against the tries (the rule's
    /// steps bound them), and are planned within the time left (`Point::plan`); should the
    /// rate fall short so that the next look cannot be had in the time left after all, the
    /// point ends N/A with `reasons` here (a width inflated by a few stalls early on can narrow far
    /// faster than 1/√n: memcached at 10,000 req/s here was 39.3 µs wide at 61,000 samples
    /// and 7.5 µs at 218,000, where 1/√n said 20.8), and the reasons then say how much more
    /// time the whole precision would take at this rate. Ended so, the point answers with
    /// the CI at hand of the look whose estimate is `value_us` ([`Point::end_unsettled`]).
    pub(super) fn extend_look(
        &mut self,
        at: Duration,
        wanted: usize,
        value_us: f64,
        reason: Reason,
        out: &mut Decision,
    ) {
        if self.seconds_to_collect(wanted) > self.seconds_left(at) {
            self.end_unsettled(at, value_us, reason, out);
            return;
        }
        self.rounds.wanted = wanted;
    }

    /// The samples per agent the rule's last look predicted the precision asked needs.
    fn needed_per_agent(&self) -> Option<usize> {
        let count = self.measuring().count().max(1);
        (self.stage.round().needed).map(|total| self.kept_for(total).div_ceil(count))
    }

    /// The samples to keep for the last look to count `counted` (see `Looks::per_counted`).
    pub(super) fn kept_for(&self, counted: usize) -> usize {
        (counted as f64 * self.stage.round().per_counted.max(1.0)).ceil() as usize
    }

    /// Seconds more, at this rate and sampling, until every agent holds what the rule's last
    /// look predicted the precision asked needs (`None` before any look, or when already
    /// held).
    pub(crate) fn more_time(&self) -> Option<f64> {
        let need = self.needed_per_agent()?;
        (need > self.fewest_samples()).then(|| self.seconds_to_collect(need))
    }

    /// Adds to each reason that more samples would answer how long they would take.
    pub(super) fn say_more_time(&self, reasons: &mut [Reason]) {
        let Some(seconds) = self.more_time() else {
            return;
        };
        let Some(samples) = self.stage.round().needed else {
            return;
        };
        for r in (reasons.iter_mut()).filter(|r| r.kind().more_samples_help() && !r.drifts) {
            r.more_time = Some(MoreTime {
                samples,
                seconds: seconds.into(),
            });
        }
    }

    /// Asks for `wanted` samples per agent in the same round, or ends the point N/A with
    /// `reasons` when the tries or the time are used up.
    pub(super) fn extend(
        &mut self,
        at: Duration,
        wanted: usize,
        reasons: Vec<Reason>,
        out: &mut Decision,
    ) {
        let seconds = self.seconds_to_collect(wanted);
        let left = self.seconds_left(at);
        if self.rounds.tries >= self.config.limits.max_tries || seconds > left {
            self.finish_na(at, reasons, out);
            return;
        }
        self.rounds.tries += 1;
        self.rounds.wanted = wanted;
    }
}
