//! The departure schedule: when requests come due, drawn from the load's inter-arrival
//! process and, on top of it, the path probe's own Poisson arrivals.
//!
//! The schedule never looks at replies (the load is open loop): a request is due at its
//! drawn time whether or not the worker can send it then, and a request that cannot go
//! out waits in the worker's backlog with its scheduled time, so that its send lag says
//! how late it left.

use std::collections::VecDeque;

use rand::RngExt;
use rand::rngs::SmallRng;
use vernier_protocols::{InterArrival, Sampler};

use crate::config::Workload;

/// Due requests held at most; beyond, the client is hopelessly overloaded and the oldest
/// are dropped (and counted as failed) rather than growing without bound.
const MAX_BACKLOG: usize = 1 << 20;

/// One arrival process: its gaps and when its next request is due.
struct Process {
    gaps: Sampler,
    next_due: u64,
}

impl Process {
    /// A process of `gaps` whose first request is one gap after `now`.
    fn start(gaps: Sampler, now: u64, rng: &mut SmallRng) -> Process {
        let next_due = now + gaps.sample(rng) as u64;
        Process { gaps, next_due }
    }

    /// The request due next, and the one after it drawn.
    #[inline]
    fn advance(&mut self, rng: &mut SmallRng) -> u64 {
        let due = self.next_due;
        self.next_due += (self.gaps.sample(rng) as u64).max(1);
        due
    }
}

/// The arrival processes while loading: the load's, and the path probe's own Poisson
/// arrivals on top of it (see [`Workload::Synthetic`]'s `probe`).
pub(super) struct Arrivals {
    load: Process,
    probe: Option<Process>,
    /// A duet: each request goes to one of two servers by a fair coin, drawn as it comes
    /// due.
    duet: bool,
}

/// Which arrival process a request came from: a path probe is numbered, counted and
/// encoded apart from the load's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrival {
    /// One of the load's requests.
    Load,
    /// A path probe, which asks for no service time.
    Probe,
}

/// A request come due: when, whether it is a path probe, and in a duet which server it
/// goes to.
#[derive(Debug, Clone, Copy)]
pub(super) struct Due {
    /// When it was scheduled to leave, ns since the epoch.
    pub(super) at: u64,
    /// The load's, or a path probe.
    pub(super) arrival: Arrival,
    /// To the duet's second server (false without a duet).
    pub(super) second: bool,
}

impl Arrivals {
    /// The processes of a load of `rate_per_s` requests a second with gaps drawn from
    /// `interarrival`, the first requests one gap after `now`; with a synthetic workload
    /// that asks for path probes, their process too (the load's first gap drawn first).
    /// In a `duet`, each request's server is drawn as it comes due (without one, no draw:
    /// the schedule's stream of random numbers is what it was).
    pub(super) fn start(
        rate_per_s: f64,
        interarrival: InterArrival,
        workload: &Workload,
        duet: bool,
        now: u64,
        rng: &mut SmallRng,
    ) -> Arrivals {
        let gaps = interarrival.for_rate(rate_per_s).sampler();
        let load = Process::start(gaps, now, rng);
        // The probe's requests arrive at random (Poisson), whatever the load's
        // process, so that they see the server as it is on average (PASTA).
        let probe = match *workload {
            Workload::Synthetic { probe, .. } if probe > 0.0 => {
                let gaps = InterArrival::Exp.for_rate(rate_per_s * probe).sampler();
                Some(Process::start(gaps, now, rng))
            }
            _ => None,
        };
        Arrivals { load, probe, duet }
    }

    /// When the next request, of the load or the probe, is due.
    #[inline]
    pub(super) fn next(&self) -> u64 {
        self.probe
            .as_ref()
            .map_or(self.load.next_due, |p| self.load.next_due.min(p.next_due))
    }

    /// Moves the requests that have come due by `now` into their server's `backlogs` (the
    /// target's, a duet's second server's), `most` at most, dropping the oldest there
    /// beyond [`MAX_BACKLOG`]. Returns how many it dropped.
    pub(super) fn generate(
        &mut self,
        now: u64,
        most: usize,
        rng: &mut SmallRng,
        backlogs: &mut [VecDeque<Due>; 2],
    ) -> u64 {
        let mut dropped = 0;
        let mut drawn = 0;
        while drawn < most && self.next() <= now {
            drawn += 1;
            let (at, arrival) = match &mut self.probe {
                Some(probe) if probe.next_due < self.load.next_due => {
                    (probe.advance(rng), Arrival::Probe)
                }
                _ => (self.load.advance(rng), Arrival::Load),
            };
            let second = self.duet && rng.random::<bool>();
            let backlog = &mut backlogs[usize::from(second)];
            if backlog.len() >= MAX_BACKLOG {
                backlog.pop_front();
                dropped += 1;
            }
            backlog.push_back(Due {
                at,
                arrival,
                second,
            });
        }
        dropped
    }
}
