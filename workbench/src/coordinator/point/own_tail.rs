//! The point's tail without the host's stalls: each measuring agent's requests marked by
//! the stalls its cores met (on its samples' clock), the untouched ones weighted against
//! the selection and put one agent after another, each reported percentile with its
//! dependence-valid CI ([`vernier_stats::WeightedSamples`]).

use vernier_agent::STALL_THRESHOLD_NS;
use vernier_stats::{Percentile, Sent, Stall, Untouched, WeightedSamples, untouched_sent};

use super::super::checks::Interval;
use super::super::policy::MAX_TOUCHED_SHARE;
use super::super::result::{
    CiDependence, OwnShort, PercentileResult, Probed, Verdict, WithoutStalls,
};
use super::estimate::Estimate;
use super::state::Point;
use crate::scenario::Tail;

/// The tail without stalls as one look of the confidence step reads it (when `ci.tail`
/// asks for it): each measuring agent's estimate, as `(agent, samples, interval)`, the
/// combined estimate and the untouched samples ascending.
pub(super) struct OwnLook {
    pub(super) agents: Vec<(usize, usize, Option<Interval>)>,
    pub(super) estimate: Estimate,
    pub(super) sorted: Vec<f64>,
}

impl Point {
    /// The measuring agents' stalls, each on its own samples' clock, as intervals in ns.
    fn agent_stalls(&self, agent: usize) -> Vec<Stall> {
        self.agents[agent]
            .stalls
            .intervals
            .iter()
            .map(|s| Stall {
                start: s.start_ns as f64,
                end: s.end_ns as f64,
            })
            .collect()
    }

    /// Agent `i`'s requests of the round marked by its stalls and by its late sends
    /// ([`untouched_sent`]): spans from each request's scheduled departure to its reply,
    /// the latency kept as the point reports it (from the actual departure).
    fn agent_part(&mut self, i: usize) -> Option<Untouched> {
        let stalls = self.agent_stalls(i);
        let samples = &mut self.agents[i].round.samples;
        samples.sort_by_key(|s| s.departure_ns);
        let mut sent: Vec<Sent> = samples
            .iter()
            .map(|s| Sent {
                departure_ns: s.departure_ns,
                late_ns: u64::from(s.queueing_ns),
                latency_ns: s.latency_ns,
            })
            .collect();
        untouched_sent(&mut sent, stalls, STALL_THRESHOLD_NS).ok()
    }

    /// Why the tail without stalls cannot be judged at all: no probe recorded stalls, or
    /// the samples were thinned; `None` when it can.
    fn own_unjudgeable(&self, stalls: usize) -> Option<OwnShort> {
        if self.host().is_empty() && stalls == 0 {
            Some(OwnShort::NoProbe)
        } else if self.rounds.sampling < 1.0 {
            Some(OwnShort::Thinned {
                sampling: self.rounds.sampling,
            })
        } else {
            None
        }
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
    pub(super) fn own_look(&mut self, p: Percentile, conf: f64) -> Option<OwnLook> {
        if self.config.ci.tail != Tail::WithoutStalls
            || self.own_unjudgeable(self.stall_count()).is_some()
        {
            return None;
        }
        let measuring: Vec<usize> = self.measuring().collect();
        let (mut agents, mut latency, mut weights) = (Vec::new(), Vec::new(), Vec::new());
        let (mut touched, mut requests) = (0.0, 0);
        let mut one = None;
        for i in measuring {
            let part = self.agent_part(i)?;
            touched += part.touched_share * part.requests as f64;
            requests += part.requests;
            latency.extend_from_slice(&part.latency_us);
            weights.extend_from_slice(&part.weights);
            let samples = WeightedSamples::new(part.latency_us, &part.weights).ok()?;
            let estimate = Estimate::of_weighted(&samples, p, conf);
            let interval = estimate.as_ref().and_then(Estimate::interval);
            self.agents[i].ci_width_us = interval.map(|c| c.width());
            agents.push((i, samples.len(), interval));
            one = estimate;
        }
        // Touched beyond what the method is checked at: every request's tail is what
        // there is to look at.
        if touched / requests.max(1) as f64 > MAX_TOUCHED_SHARE {
            return None;
        }
        let samples = WeightedSamples::new(latency, &weights).ok()?;
        // With one agent its estimate is the combined one.
        let estimate = match one.filter(|_| agents.len() == 1) {
            Some(e) => e,
            None => Estimate::of_weighted(&samples, p, conf)?,
        };
        Some(OwnLook {
            agents,
            estimate,
            sorted: samples.sorted().to_vec(),
        })
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
        let touched_share = parts
            .iter()
            .map(|p| p.touched_share * p.requests as f64)
            .sum::<f64>()
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
        let conf = self.config.ci.confidence;
        let results: Vec<(Percentile, PercentileResult, Option<usize>)> = percentiles
            .iter()
            .filter_map(|&p| {
                let value = samples.percentile(p.fraction())?;
                let ci = samples.percentile_ci_dependent(p.fraction(), conf).ok()?;
                let needed = ci.as_ref().err().map(|n| n.needed);
                let ci = ci.ok();
                Some((
                    p,
                    PercentileResult {
                        p: p.percent(),
                        value,
                        ci_low: ci.as_ref().map(|c| c.low),
                        ci_high: ci.as_ref().map(|c| c.high),
                        dependence: ci.as_ref().map(CiDependence::of),
                    },
                    needed,
                ))
            })
            .collect();
        let target = results
            .iter()
            .find(|(q, _, _)| q.same(self.config.ci.percentile));
        let ci_width_us = target.and_then(|(_, r, _)| Some(r.ci_high? - r.ci_low?));
        let asked = self.config.ci.tail == Tail::WithoutStalls;
        let touched = (touched_share > MAX_TOUCHED_SHARE).then_some(OwnShort::Touched {
            share: touched_share,
            most: MAX_TOUCHED_SHARE,
        });
        let short = match self.own_unjudgeable(stalls).or(touched) {
            Some(why) => Some(why),
            None => match target {
                None => Some(OwnShort::TooFew {
                    have: samples.len(),
                    needed: 0,
                }),
                Some((_, r, needed)) => match ci_width_us {
                    None => Some(OwnShort::TooFew {
                        have: samples.len(),
                        needed: needed.unwrap_or(0),
                    }),
                    Some(width) => {
                        let target_us = self.config.ci.width.target_us(r.value);
                        // Asked for, it converged only when the stopping rule stopped on
                        // it; reported beside the other, when it is as narrow as asked.
                        if width > target_us {
                            Some(OwnShort::Wide {
                                width_us: width,
                                target_us,
                            })
                        } else if asked && !self.looks.own_stopped {
                            Some(OwnShort::Unsettled {
                                width_us: width,
                                target_us,
                            })
                        } else {
                            None
                        }
                    }
                },
            },
        };
        Some(WithoutStalls {
            verdict: if short.is_none() {
                Verdict::Converged
            } else {
                Verdict::NotAvailable
            },
            short,
            percentiles: results.into_iter().map(|(_, r, _)| r).collect(),
            ci_width_us,
            touched_share,
            touched_by_agent: parts.iter().map(|p| p.touched_share).collect(),
            samples: samples.len(),
            stalls,
            probed,
        })
    }
}
