//! The measurement rounds: a round starts with fresh samples, and once each measuring
//! agent has the samples wanted they are judged (independence, stationarity, then the
//! confidence step of the scenario's method); a judgement that wants more samples extends
//! the round, or ends the point N/A when the tries or the time are used up.

use std::time::Duration;

use super::super::checks;
use super::super::decision::Decision;
use super::super::event::{CheckKind, Phase};
use super::super::policy::{MIN_SAMPLING, RETRY_FACTOR};
use super::super::reason::{
    Independence, IndependenceStuck, IndependenceThinned, MoreTime, Reason, Stationarity, Why,
};
use super::estimate::Snapshot;
use super::state::Point;
use crate::scenario::Method;

impl Point {
    /// Starts a measurement round: fresh samples at the current sampling rate.
    pub(super) fn begin_round(&mut self, at: Duration, why: &str, out: &mut Decision) {
        self.round += 1;
        self.tries += 1;
        self.independent = false;
        self.looks = 0;
        self.confirming = false;
        self.needed = None;
        self.host_stale = true;
        for a in &mut self.agents {
            a.samples.clear();
            a.reports = 0;
            a.backlogged_reports = 0;
            a.round_latency.reset();
            a.send_lag.reset();
            a.intended.reset();
            a.latency.reset();
        }
        self.measure_started = at;
        self.measure_received = 0;
        self.ask_sampling(self.sampling, out);
        self.phase(
            at,
            Phase::Measure,
            format!(
                "{why}: round {}, {} samples per agent at {:.3}% sampling ({})",
                self.round,
                self.wanted,
                self.sampling * 100.0,
                self.sampling_why()
            ),
            out,
        );
    }

    pub(super) fn measure_tick(&mut self, at: Duration, out: &mut Decision) {
        if self
            .measuring()
            .any(|i| self.agents[i].samples.len() < self.wanted)
        {
            return;
        }
        match self.config.method {
            Method::Lancet => {
                if !self.independent && !self.check_independence(at, out) {
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

    /// True when every agent's samples are independent; otherwise thins the sampling and
    /// starts a new round (or ends the point).
    pub(super) fn check_independence(&mut self, at: Duration, out: &mut Decision) -> bool {
        let mut worst = 1usize;
        let mut stuck = None;
        for i in self.measuring().collect::<Vec<_>>() {
            let x = self.agents[i].latencies_in_send_order();
            let checks::Independent {
                mut check,
                lag,
                finding,
            } = checks::independence(i, &x, self.config.alpha);
            self.agents[i].lag = lag;
            match lag {
                Some(l) => worst = worst.max(l),
                None => stuck = Some((i, finding)),
            }
            check.decision = match lag {
                Some(1) => "independent".into(),
                Some(l) => format!("keep one request in {l}"),
                None => "correlated at every lag tried".into(),
            };
            self.check(at, check, out);
        }
        if let Some((agent, spearman)) = stuck {
            let why = Why::Independence(Independence::Stuck(IndependenceStuck {
                agent,
                sampling_rate: self.sampling,
                spearman,
            }));
            self.finish_na(at, vec![Reason::new(why)], out);
            return false;
        }
        if worst == 1 {
            self.independent = true;
            return true;
        }
        let thinned = self.sampling / worst as f64;
        let per_agent = self.config.rate / self.live_count() as f64;
        let seconds = self.wanted as f64 / (per_agent * thinned);
        let left = self.seconds_left(at);
        let tries_used = self.tries >= self.config.limits.max_tries;
        if thinned < MIN_SAMPLING || seconds > left || tries_used {
            let why = Why::Independence(Independence::Thinned(IndependenceThinned {
                lag: worst,
                sampling_rate: thinned,
                seconds_needed: seconds,
                samples_wanted: self.wanted,
                seconds_left: (!tries_used).then_some(left),
                max_tries: tries_used.then_some(self.config.limits.max_tries),
            }));
            self.finish_na(at, vec![Reason::new(why)], out);
            return false;
        }
        self.sampling = thinned;
        self.begin_round(
            at,
            &format!("samples correlated up to lag {worst}: sampling ÷ {worst}"),
            out,
        );
        false
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
        let more = self.wanted * RETRY_FACTOR;
        for mut check in all {
            check.decision = if check.pass {
                "stationary".into()
            } else {
                format!("collect more: {more} per agent")
            };
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
        let per_agent = self.config.rate / self.live_count() as f64 * self.sampling;
        wanted.saturating_sub(fewest) as f64 / per_agent.max(1e-9)
    }

    /// The kept samples of the measuring agent that has fewest.
    pub(super) fn fewest_samples(&self) -> usize {
        self.measuring()
            .map(|i| self.agents[i].samples.len())
            .min()
            .unwrap_or(0)
    }

    /// The sequential rule's next look (`method: vernier`'s confidence step): `wanted`
    /// samples per agent in the same round. Looks do not count against the tries (the rule's
    /// steps bound them). The point ends N/A with `reasons` only when the next look cannot
    /// be had in the time left (a width inflated by a few stalls early on can narrow far
    /// faster than 1/√n: memcached at 10,000 req/s here was 39.3 µs wide at 61,000 samples
    /// and 7.5 µs at 218,000, where 1/√n said 20.8), and the reasons then say how much more
    /// time the whole precision would take at this rate.
    pub(super) fn extend_look(
        &mut self,
        at: Duration,
        wanted: usize,
        mut reasons: Vec<Reason>,
        out: &mut Decision,
    ) {
        if self.seconds_to_collect(wanted) > self.seconds_left(at) {
            self.say_more_time(&mut reasons);
            self.finish_na(at, reasons, out);
            return;
        }
        self.wanted = wanted;
    }

    /// The samples per agent the rule's last look predicted the precision asked needs.
    fn needed_per_agent(&self) -> Option<usize> {
        let count = self.measuring().count().max(1);
        self.needed.map(|total| total.div_ceil(count))
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
        let Some(samples) = self.needed else {
            return;
        };
        for r in reasons.iter_mut().filter(|r| r.kind().more_samples_help()) {
            r.more_time = Some(MoreTime { samples, seconds });
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
        if self.tries >= self.config.limits.max_tries || seconds > left {
            self.finish_na(at, reasons, out);
            return;
        }
        self.tries += 1;
        self.wanted = wanted;
    }
}
