//! The point's tail without the host's stalls: each measuring agent's requests marked by
//! the stalls its cores met (on its samples' clock), the untouched ones weighted against
//! the selection and put one agent after another, each reported percentile with its
//! dependence-valid CI ([`vernier_stats::WeightedSamples`]).

use std::time::Duration;

use vernier_agent::STALL_THRESHOLD_NS;
use vernier_stats::{
    Kept, Percentile, Sent, Stall, Stretches, Untouched, WeightedSamples, mean_ci,
    untouched_requests,
};

use super::super::check_next::{CheckNext, Found};
use super::super::checks::Interval;
use super::super::decision::Decision;
use super::super::event::{Check, CheckKind, CheckRole};
use super::super::policy::{
    MAX_TOUCHED_SHARE, TOUCHED_EVERY, TOUCHED_EVERY_SHARE, call_touched, too_touched,
    touched_seen_long_enough,
};
use super::super::reason::{
    Confidence, Nothing, TooFewSamples, Touched, UntouchedCi, UntouchedFew, Why,
};
use super::super::result::{
    CalledBy, PercentileResult, Probed, TouchedCall, TouchedSide, Verdict, WithoutStalls,
};
use super::estimate::Estimate;
use super::state::Point;
use crate::samples::stall_of;
use crate::scenario::Tail;

/// The tail without stalls as one look of the confidence step reads it (when `ci.tail`
/// asks for it): each measuring agent's estimate, as `(agent, samples, interval)`, the
/// combined estimate and the untouched samples ascending.
pub(super) struct WithoutStallsLook {
    pub(super) agents: Vec<(usize, usize, Option<Interval>)>,
    pub(super) estimate: Estimate,
    pub(super) sorted: Vec<f64>,
}

/// A kept sample as the marks read it: when it left, how late, its latency and its busy
/// stretch.
fn kept_of(s: &vernier_agent::Sample) -> Kept {
    Kept {
        sent: Sent {
            departure_ns: s.departure_ns,
            late_ns: u64::from(s.queueing_ns),
            latency_ns: s.latency_ns,
        },
        busy_ns: u64::from(s.busy_ns),
    }
}

/// Batches of the touched share's interval, and the fewest requests each holds.
const TOUCHED_BATCHES: usize = 20;

/// The share touched as read at one moment: its figures (as a call under by its interval,
/// until called) and the requests it was read on.
struct TouchedSeen {
    call: TouchedCall,
    requests: usize,
}

impl Point {
    /// The measuring agents' stalls, each on its own samples' clock, as intervals in ns.
    fn agent_stalls(&self, agent: usize) -> Vec<Stall> {
        self.agents[agent]
            .stalls
            .intervals
            .iter()
            .map(stall_of)
            .collect()
    }

    /// Agent `i`'s requests of the round marked by its stalls and by its late sends
    /// ([`untouched_sent`]): spans from each request's scheduled departure to its reply,
    /// the latency kept as the point reports it (from the actual departure).
    /// Thinned, each kept request is marked by the busy stretch it carries (joined across
    /// the agent's workers when it has several) and by the stalls, its agent's late sends
    /// among them ([`vernier_stats::untouched_kept`]).
    fn agent_part(&mut self, i: usize) -> Option<Untouched> {
        let stalls = self.agent_stalls(i);
        let thinned = self.rounds.sampling < 1.0;
        let tally = self.stage.tallies_mut().get_mut(i)?;
        let stretches = Stretches::of(thinned, tally.workers.len());
        tally.samples.sort_by_key(|s| s.departure_ns);
        let mut kept: Vec<Kept> = tally.samples.iter().map(kept_of).collect();
        untouched_requests(&mut kept, stalls, STALL_THRESHOLD_NS, stretches).ok()
    }

    /// Why the tail without stalls cannot be judged at all: no probe recorded stalls;
    /// `None` when it can.
    fn unjudgeable(&self, stalls: usize) -> Option<Why> {
        (self.host().is_empty() && stalls == 0).then_some(Why::NoProbe(Nothing {}))
    }

    /// The stall intervals the measuring agents' cores met.
    fn stall_count(&self) -> usize {
        self.measuring()
            .map(|i| self.agents[i].stalls.intervals.len())
            .sum()
    }

    /// One look at the tail without stalls, for the confidence step when `ci.tail` asks
    /// for it: `None` when it is not asked, cannot be judged, or has no samples (the step
    /// then reads every request). Each agent's interval width is what its row shows.
    pub(super) fn without_stalls_look(
        &mut self,
        p: Percentile,
        conf: f64,
    ) -> Option<WithoutStallsLook> {
        if self.config.ci.tail != Tail::WithoutStalls
            || self.unjudgeable(self.stall_count()).is_some()
        {
            return None;
        }
        let measuring: Vec<usize> = self.measuring().collect();
        let (mut agents, mut latency, mut weights) = (Vec::new(), Vec::new(), Vec::new());
        let mut one = None;
        for i in measuring {
            let part = self.agent_part(i)?;
            latency.extend_from_slice(&part.latency_us);
            weights.extend_from_slice(&part.weights);
            let samples = WeightedSamples::new(part.latency_us, &part.weights).ok()?;
            let estimate = Estimate::of_weighted(&samples, p, conf);
            let interval = estimate.as_ref().and_then(Estimate::interval);
            self.agents[i].found.ci_width_us = interval.map(|c| c.width());
            self.agents[i].found.ci_need = estimate.as_ref().and_then(|e| e.ci.clone().err());
            agents.push((i, samples.len(), interval));
            one = estimate;
        }
        // However many the stalls touch, this is the tail asked for: until the share is
        // called over (which ends the point), a share that hovers at the bound does not
        // hand the looks to every request's tail and back.
        let samples = WeightedSamples::new(latency, &weights).ok()?;
        // With one agent its estimate is the combined one.
        let estimate = match one.filter(|_| agents.len() == 1) {
            Some(e) => e,
            None => Estimate::of_weighted(&samples, p, conf)?,
        };
        Some(WithoutStallsLook {
            agents,
            estimate,
            sorted: samples.sorted().to_vec(),
        })
    }

    /// The share of the measuring agents' requests of the round so far that a stall
    /// touched, with its interval at `confidence`: the marks in send order, one agent after
    /// another, cut into [`TOUCHED_BATCHES`] batches whose means are close to independent
    /// (a stall's marks span milliseconds, a batch a second or more), Student's t on them.
    /// `None` with fewer than [`TOUCHED_BATCHES`] requests a batch, or over less than
    /// [`TOUCHED_SEEN_FOR_S`](crate::coordinator::policy::TOUCHED_SEEN_FOR_S) of the load.
    fn touched_ci(&mut self, confidence: f64) -> Option<TouchedSeen> {
        let measuring: Vec<usize> = self.measuring().collect();
        let mut marks: Vec<bool> = Vec::new();
        for i in measuring {
            marks.extend(self.agent_part(i)?.touched);
        }
        let size = marks.len() / TOUCHED_BATCHES;
        let seen_s = marks.len() as f64 / (self.config.rate * self.rounds.sampling).max(1.0);
        if size < TOUCHED_BATCHES || !touched_seen_long_enough(seen_s) {
            return None;
        }
        let means: Vec<f64> = (marks.chunks_exact(size))
            .map(|b| b.iter().filter(|&&t| t).count() as f64 / size as f64)
            .collect();
        let ci = mean_ci(&means, confidence).ok()?;
        Some(TouchedSeen {
            call: TouchedCall {
                side: TouchedSide::Under,
                by: CalledBy::Interval,
                share: ci.mean,
                low: ci.low,
                high: ci.high,
                seen_s,
            },
            requests: marks.len(),
        })
    }

    /// Reads the share touched when the tail without stalls is asked for, and calls it
    /// ([`call_touched`]): over, the point ends at this look (true); called under, the tail
    /// without stalls drives the looks from now on, said in a check. Over is its interval
    /// wholly above [`MAX_TOUCHED_SHARE`] (more time would not bring the share under while
    /// the host stalls this often), or, once the set time has passed with the interval
    /// still straddling the bound, its estimate beyond it (more time would only narrow the
    /// interval around a share this near the bound). Either way the answer is known now:
    /// every request's tail is judged on what the point holds (as when the rule stops on
    /// the tail without stalls), and the tail without stalls is N/A `touched`.
    pub(super) fn touched_beyond(&mut self, at: Duration, out: &mut Decision) -> bool {
        // Read once at a moment: a look that comes in the tick the share was read between
        // looks would only mark the same requests again.
        if self.config.ci.tail != Tail::WithoutStalls
            || self.looks.touched_at == at
            || self.unjudgeable(self.stall_count()).is_some()
        {
            return false;
        }
        self.looks.touched_at = at;
        let Some(seen) = self.touched_ci(self.config.ci.confidence) else {
            return false;
        };
        let c = seen.call;
        let Some((side, by)) = call_touched(c.share, c.low, c.high, c.seen_s) else {
            return false;
        };
        // A call by the estimate is made once; only the interval overrules it.
        if by == CalledBy::Estimate && self.stage.round().touched_call.is_some() {
            return false;
        }
        let call = TouchedCall { side, by, ..c };
        if side == TouchedSide::Under {
            if let Some(round) = self.stage.round_mut() {
                round.touched_call = Some(call);
            }
            let check = self.touched_check(call, seen.requests);
            self.check(at, check, out);
            return false;
        }
        let snapshot = self.snapshot();
        let count = snapshot.agents.len().max(1);
        let (whole_us, whole) = self.whole_at_stop(at, &snapshot, count);
        if whole_us.is_none() {
            return false;
        }
        if let Some(round) = self.stage.round_mut() {
            round.touched_call = Some(call);
        }
        let check = self.touched_check(call, seen.requests);
        self.check(at, check, out);
        match whole {
            None => self.finish(at, Verdict::Converged, Vec::new(), out),
            Some(reason) => {
                let mut reasons = vec![reason];
                self.say_more_time(&mut reasons);
                self.finish_na(at, reasons, out);
            }
        }
        true
    }

    /// The check that says how the share touched was called, on `requests` requests.
    fn touched_check(&self, call: TouchedCall, requests: usize) -> Check {
        Check {
            check: CheckKind::Confidence,
            agent: None,
            pass: call.side == TouchedSide::Under,
            role: CheckRole::Gate,
            statistic: Some(call.share),
            pvalue: None,
            n: requests,
            found: Found::Touched {
                call,
                confidence: self.config.ci.confidence,
            },
            next: Some(CheckNext::Touched(call)),
            data: None,
        }
    }

    /// Between looks, [`Point::touched_beyond`] once [`TOUCHED_EVERY`] has passed since the
    /// share was last read (at a look or between), or a [`TOUCHED_EVERY_SHARE`]th of the
    /// round's time so far when that is longer: true when it ended the point.
    pub(super) fn touched_between_looks(&mut self, at: Duration, out: &mut Decision) -> bool {
        let started = self.stage.round().started;
        let every = TOUCHED_EVERY.max(at.saturating_sub(started) / TOUCHED_EVERY_SHARE);
        at.saturating_sub(self.looks.touched_at) >= every && self.touched_beyond(at, out)
    }

    /// `touched` when the share `touched_share` of the requests at the end is beyond the
    /// most this tail is judged at: once called, by the call; else by its estimate.
    fn touched_at_end(&self, touched_share: f64) -> Option<Why> {
        let over = match self.stage.round().touched_call {
            Some(call) => call.side == TouchedSide::Over,
            None => too_touched(touched_share),
        };
        over.then_some(Why::Touched(Touched {
            share: touched_share.into(),
            most: MAX_TOUCHED_SHARE.into(),
        }))
    }

    /// The tail without the host's stalls at the point's end (`None` under `method:
    /// lancet`, whose samples were thinned until independent).
    pub(super) fn without_stalls(&mut self, percentiles: &[Percentile]) -> Option<WithoutStalls> {
        if self.config.method != crate::scenario::Method::Vernier {
            return None;
        }
        let measuring: Vec<usize> = self.measuring().collect();
        let stalls = self.stall_count();
        let probed = if self.config.target_probed {
            Probed::ClientAndTarget
        } else {
            Probed::ClientOnly
        };
        let parts: Vec<Untouched> = measuring
            .iter()
            .filter_map(|&i| self.agent_part(i))
            .collect();
        // Each agent's share counts by its requests.
        let all: usize = parts.iter().map(|p| p.requests).sum();
        // Folded from +0.0: an empty sum of floats is -0.0, which prints as "-0.0%".
        let touched_share = parts
            .iter()
            .map(|p| p.touched_share * p.requests as f64)
            .fold(0.0, |sum, t| sum + t)
            / all.max(1) as f64;
        let latency: Vec<f64> = parts
            .iter()
            .flat_map(|p| p.latency_us.iter().copied())
            .collect();
        let weights: Vec<f64> = parts
            .iter()
            .flat_map(|p| p.weights.iter().copied())
            .collect();
        let samples = WeightedSamples::new(latency, &weights).ok()?;
        let mut results = weighted_results(&samples, percentiles, self.config.ci.confidence);
        // Answered by an earlier look's CI of this tail: its target is that look's.
        if let Some(earned) = self.answering_earned().filter(|e| e.without_stalls)
            && let Some(r) =
                (results.iter_mut()).find(|(q, _, _)| q.same(self.config.ci.percentile))
        {
            *r = (r.0, earned.result(r.0), None);
        }
        let target = results
            .iter()
            .find(|(q, _, _)| q.same(self.config.ci.percentile));
        let ci_width_us = target.and_then(|(_, r, _)| Some(r.ci_high? - r.ci_low?));
        let asked = self.config.ci.tail == Tail::WithoutStalls;
        let short = self.short_of_answer(stalls, touched_share, target, samples.len());
        // More time would buy what the tail's last look predicted only when it was short
        // of samples, not of untouched requests or of a probe.
        let more_time = (self.stage.looks().and_then(|l| l.without_stalls_more))
            .filter(|_| short.as_ref().is_some_and(|w| w.kind().more_samples_help()));
        // Wide: a valid CI wider than asked, at an end on the CI at hand (not, say, a
        // closed loop, or the user's quit).
        let answered = !asked || self.stage.looks().is_some_and(|l| l.answered);
        Some(WithoutStalls {
            verdict: match &short {
                None => Verdict::Converged,
                Some(why) if answered && why.leaves_a_ci() => Verdict::Wide,
                Some(_) => Verdict::NotAvailable,
            },
            short,
            percentiles: results.into_iter().map(|(_, r, _)| r).collect(),
            ci_width_us,
            touched_share,
            touched_by_agent: parts.iter().map(|p| p.touched_share).collect(),
            samples: samples.len(),
            stalls,
            probed,
            touched_call: self.stage.round().touched_call,
            more_time,
        })
    }

    /// Why the tail without stalls is short of an answer at the point's end (`None`: it
    /// converged): it cannot be judged, too much was touched, too few requests are left
    /// untouched (`untouched` of them), or its CI, `target`'s, is wider than asked (or
    /// narrow but not settled when it was the tail asked).
    fn short_of_answer(
        &self,
        stalls: usize,
        touched_share: f64,
        target: Option<&Reported>,
        untouched: usize,
    ) -> Option<Why> {
        let asked = self.config.ci.tail == Tail::WithoutStalls;
        let ci_width_us = target.and_then(|(_, r, _)| Some(r.ci_high? - r.ci_low?));
        match (self.unjudgeable(stalls)).or(self.touched_at_end(touched_share)) {
            Some(why) => Some(why),
            None => match target {
                None => Some(too_few(untouched, 0)),
                Some((_, r, needed)) => match ci_width_us {
                    None => Some(too_few(untouched, needed.unwrap_or(0))),
                    Some(width) => {
                        let target_us = self.config.ci.width.target_us(r.value);
                        let ci = UntouchedCi {
                            ci_width_us: width.into(),
                            target_us: target_us.into(),
                        };
                        // Asked for, it is an answer only when the point ended on the CI at
                        // hand (the rule stopped, or the clock chose the look); reported
                        // beside the other, when it is as narrow as asked.
                        if width > target_us {
                            Some(Why::Confidence(Confidence::UntouchedWide(ci)))
                        } else if asked && !self.stage.looks().is_some_and(|l| l.answered) {
                            Some(Why::Confidence(Confidence::Unsettled(ci)))
                        } else {
                            None
                        }
                    }
                },
            },
        }
    }
}

/// Each of `percentiles` of the weighted `samples`, with its dependence-valid interval at
/// `conf` and, without one, the samples it would need.
fn weighted_results(
    samples: &WeightedSamples,
    percentiles: &[Percentile],
    conf: f64,
) -> Vec<Reported> {
    percentiles
        .iter()
        .filter_map(|&p| {
            let value = samples.percentile(p.fraction())?;
            let ci = samples.percentile_ci_dependent(p.fraction(), conf).ok()?;
            let needed = ci.as_ref().err().map(|n| n.needed);
            Some((p, PercentileResult::of(p, value, ci.as_ref().ok()), needed))
        })
        .collect()
}

/// A percentile of the tail without stalls as the point's end reports it, and the samples
/// its interval would need when it has none.
type Reported = (Percentile, PercentileResult, Option<usize>);

/// Too few untouched samples for a CI: `untouched`, of about `needed` (0: not known).
fn too_few(untouched: usize, needed: usize) -> Why {
    Why::TooFewSamples(TooFewSamples::Untouched(UntouchedFew { untouched, needed }))
}
