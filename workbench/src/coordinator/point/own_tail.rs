//! The point's tail without the host's stalls: each measuring agent's requests marked by
//! the stalls its cores met (on its samples' clock), the untouched ones weighted against
//! the selection and put one agent after another, each reported percentile with its
//! dependence-valid CI ([`vernier_stats::WeightedSamples`]).

use vernier_stats::{Percentile, Reach, Spans, Stall, WeightedSamples, mark, untouched};

use super::super::result::{
    CiDependence, OwnShort, PercentileResult, Probed, Verdict, WithoutStalls,
};
use super::state::Point;

/// One agent's untouched latencies (µs, send order) with their weights, and its share
/// touched.
struct AgentPart {
    latency_us: Vec<f64>,
    weights: Vec<f64>,
    touched_share: f64,
    /// Its requests of the round, touched or not.
    requests: usize,
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

    /// Agent `i`'s requests of the round marked by its stalls: spans from each request's
    /// scheduled departure to its reply, the latency kept as the point reports it (from
    /// the actual departure).
    fn agent_part(&mut self, i: usize) -> Option<AgentPart> {
        let stalls = self.agent_stalls(i);
        let samples = &mut self.agents[i].round.samples;
        samples.sort_by_key(|s| s.departure_ns);
        let send: Vec<f64> = samples
            .iter()
            .map(|s| s.departure_ns.saturating_sub(u64::from(s.queueing_ns)) as f64)
            .collect();
        let span: Vec<f64> = samples
            .iter()
            .map(|s| (s.latency_ns + u64::from(s.queueing_ns)) as f64)
            .collect();
        let latency_us: Vec<f64> = samples.iter().map(|s| s.latency_ns as f64 / 1e3).collect();
        let spans = Spans {
            send: &send,
            latency: &span,
        };
        let marks = mark(spans, &stalls, Reach::Drain).ok()?;
        let (latency_us, weights) = untouched(spans, &marks, &latency_us);
        Some(AgentPart {
            latency_us,
            weights,
            touched_share: marks.touched_share(),
            requests: send.len(),
        })
    }

    /// The tail without the host's stalls at the point's end (`None` under `method:
    /// lancet`, whose samples were thinned until independent).
    pub(super) fn without_stalls(&mut self, percentiles: &[Percentile]) -> Option<WithoutStalls> {
        if self.config.method != crate::scenario::Method::Vernier {
            return None;
        }
        let measuring: Vec<usize> = self.measuring().collect();
        let stalls: usize = measuring
            .iter()
            .map(|&i| self.agents[i].stalls.intervals.len())
            .sum();
        let probed = if self.config.target_probed {
            Probed::ClientAndTarget
        } else {
            Probed::ClientOnly
        };
        let parts: Vec<AgentPart> = measuring
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
        let short = if self.host().is_empty() && stalls == 0 {
            Some(OwnShort::NoProbe)
        } else if self.rounds.sampling < 1.0 {
            Some(OwnShort::Thinned {
                sampling: self.rounds.sampling,
            })
        } else {
            match target {
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
                        (width > target_us).then_some(OwnShort::Wide {
                            width_us: width,
                            target_us,
                        })
                    }
                },
            }
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
