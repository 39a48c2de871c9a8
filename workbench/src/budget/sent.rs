//! What the budget takes of a point's batches as they arrive: the departures of its kept
//! requests (the ideal server's queue is fed them as they were sent), the path probe's
//! answered requests, each connection's latencies and the service the server says it gave.
//! A sans-I/O accumulator the session feeds every batch the coordinator counted in a
//! round; at the point's verdict it becomes the point's [`During`].

use std::collections::{BTreeMap, BTreeSet};

use vernier_agent::{Batch, Outcome, Sample};

use super::grid::histogram_grid;
use super::parts::During;
use super::policy::{CONNECTION_CI_LEVEL, Z_95, enough_connection_samples};
use crate::coordinator::ProbeWindow;

/// What the budget takes of one point's last measuring round: its kept requests'
/// departure times, the path probe's requests and, with a probe, each connection's
/// latencies.
#[derive(Debug, Default)]
pub(crate) struct Sent {
    /// The path probe's share of the rate (`None`: no probe).
    probe: Option<f64>,
    /// The point whose batches these are (`None`: none yet).
    point: Option<usize>,
    /// Its measuring round: a point's result is its last round's.
    round: u32,
    /// The agents the batches came from (their departure clocks do not share an origin).
    agents: BTreeSet<usize>,
    /// The kept requests' departures, ns on their agent's clock.
    departures: Vec<u64>,
    /// Each connection's (agent, connection) latencies of answered requests, µs; kept only
    /// with a probe.
    latencies: BTreeMap<(usize, u16), Vec<f64>>,
    /// The probe's answered requests: (agent, departure ns on its clock, latency ns).
    probes: Vec<(usize, u64, u64)>,
    /// The times the server says it served the load's requests, and what they asked, ns.
    served: Option<(hdrhistogram::Histogram<u64>, hdrhistogram::Histogram<u64>)>,
    /// The connections they went over.
    probe_connections: BTreeSet<(usize, u16)>,
}

impl Sent {
    /// Nothing kept yet, with a path probe of `probe`'s share (`None`: none).
    pub(crate) fn new(probe: Option<f64>) -> Sent {
        Sent {
            probe,
            ..Sent::default()
        }
    }

    /// The path probe's share of the rate it was made with (`None`: no probe).
    pub(crate) fn probe(&self) -> Option<f64> {
        self.probe
    }

    /// Keeps `samples`, starting afresh at a new point or a later round (a point's result
    /// is its last round's); a batch of an earlier round is stale.
    pub(crate) fn add(&mut self, point: usize, round: u32, agent: usize, batch: &Batch) {
        if self.point != Some(point) || round > self.round {
            *self = Sent {
                point: Some(point),
                round,
                ..Sent::new(self.probe)
            };
        } else if round < self.round {
            return;
        }
        let samples = &batch.samples;
        if !batch.served.is_empty() {
            match &mut self.served {
                Some((served, asked)) => {
                    let _ = served.add(&batch.served);
                    let _ = asked.add(&batch.asked);
                }
                None => self.served = Some((batch.served.clone(), batch.asked.clone())),
            }
        }
        self.agents.insert(agent);
        self.departures
            .extend(samples.iter().map(|s| s.departure_ns));
        if self.probe.is_none() {
            return;
        }
        let answered = |s: &&Sample| s.outcome != Outcome::Error as u8;
        for s in batch.probes.iter().filter(answered) {
            self.probes.push((agent, s.departure_ns, s.latency_ns));
            self.probe_connections.insert((agent, s.conn));
        }
        for s in samples.iter().filter(|s| s.outcome != Outcome::Error as u8) {
            self.latencies
                .entry((agent, s.conn))
                .or_default()
                .push(s.latency_ns as f64 / 1e3);
        }
    }

    /// What the budget takes: the departures, if they share one clock, the probe's window
    /// (at its share of the point's `rate`), and the median latency of each connection
    /// with enough samples to have one, with its standard error (from its order-statistic
    /// 95% CI). Taken at the point's verdict, leaving it empty for the next point.
    pub(crate) fn during(&mut self, rate: f64) -> During {
        let this = std::mem::replace(self, Sent::new(self.probe));
        // In the order each agent sent them (agents' clocks have origins of their own), one
        // agent after another, for the CI's batches.
        let mut probes = this.probes;
        probes.sort_unstable_by_key(|&(agent, departure, _)| (agent, departure));
        let series: Vec<u64> = probes.iter().map(|&(_, _, latency)| latency).collect();
        let probe = this.probe.and_then(|share| {
            ProbeWindow::from_latencies(rate * share, this.probe_connections.len(), &series)
        });
        let sent = if this.agents.len() > 1 {
            Err(format!(
                "the requests came from {} agents, whose departure clocks do not share an origin",
                this.agents.len()
            ))
        } else {
            Ok(this.departures)
        };
        let connections = this
            .latencies
            .into_values()
            .filter(|l| enough_connection_samples(l.len()))
            .filter_map(|mut l| {
                l.sort_unstable_by(f64::total_cmp);
                let p50 = vernier_stats::percentile(&l, 0.5)?;
                let (lo, hi) = vernier_stats::percentile_ci(&l, 0.5, CONNECTION_CI_LEVEL).ok()?;
                Some((p50, (hi - lo) / (2.0 * Z_95)))
            })
            .collect();
        During {
            served: this
                .served
                .as_ref()
                .map(|(served, asked)| (histogram_grid(served), histogram_grid(asked)))
                .unwrap_or_default(),
            probe,
            sent: Some(sent),
            connections,
        }
    }
}
