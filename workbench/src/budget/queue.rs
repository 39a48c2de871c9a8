//! The ideal server's queue: the M/G/1 model at a point's load (its sojourn times and the
//! waits of a request needing no service), the same ideal server fed the point's requests
//! as they were sent, and the server's own account of the time it served them.

use vernier_fixtures::{Fcfs, ModelConfig, simulate};
use vernier_protocols::Dist;

use super::grid::{grid, median_of_sum, on_grid};
use super::policy::{
    MODEL_REQUESTS, SERVICE_DRAWS, WAIT_INSTANTS, enough_departures, served_below_asked,
};
use crate::coordinator::Part;

/// The ideal model's answer at a point's load.
pub(super) struct Model {
    pub(super) service: Dist,
    pub(super) load: f64,
    pub(super) p50: f64,
    /// Its waits before service, µs, at the [`GRID`](super::grid::GRID)'s quantiles (what
    /// a request needing no service would wait, arriving at random).
    pub(super) waits: Vec<f64>,
    /// (µs, share above), ascending in µs.
    pub(super) ccdf: Vec<(f64, f64)>,
}

impl Model {
    /// The M/G/1 model of `service` at `rate` requests/s, simulated from `seed`.
    pub(super) fn at(service: Dist, seed: u64, rate: f64) -> Result<Model, String> {
        let mean_s = service.mean_ns() / 1e9;
        let load = rate * mean_s;
        let result = simulate(&ModelConfig {
            requests: MODEL_REQUESTS,
            warmup: MODEL_REQUESTS / 10,
            seed,
            ccdf: true,
            waits: true,
            ..ModelConfig::new(service, load)
        })
        .map_err(|e| format!("no ideal model at {rate:.0} req/s of service {service}: {e}"))?;
        let p50 = result
            .percentiles
            .iter()
            .find(|q| (q.p - 0.5).abs() < 1e-9)
            .map(|q| q.value)
            .ok_or_else(|| "the ideal model reported no p50".to_string())?;
        let waits = on_grid(&result.waits_us);
        Ok(Model {
            service,
            load,
            p50,
            waits,
            ccdf: result.ccdf.iter().map(|c| (c.latency_us, c.ccdf)).collect(),
        })
    }

    /// The service time's quantiles at the grid, µs: drawn from `seed`, so any
    /// distribution does.
    pub(super) fn service_grid(&self, seed: u64) -> Vec<f64> {
        use rand::SeedableRng;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(vernier_protocols::worker_seed(seed, 1));
        let sampler = self.service.sampler();
        let mut draws: Vec<f64> = (0..SERVICE_DRAWS)
            .map(|_| sampler.sample(&mut rng).max(0.0) / 1e3)
            .collect();
        draws.sort_unstable_by(f64::total_cmp);
        on_grid(&draws)
    }

    /// The largest sojourn time the CCDF shows, µs.
    pub(super) fn max(&self) -> f64 {
        self.ccdf.last().map_or(self.p50, |c| c.0)
    }

    /// The `q` quantile, linear between the CCDF's levels; `None` beyond them.
    pub(super) fn quantile(&self, q: f64) -> Option<f64> {
        let above = 1.0 - q;
        self.ccdf.windows(2).find_map(|w| {
            let ((x0, c0), (x1, c1)) = (w[0], w[1]);
            (c0 >= above && above >= c1).then(|| {
                if c0 > c1 {
                    x0 + (x1 - x0) * (c0 - above) / (c0 - c1)
                } else {
                    x0
                }
            })
        })
    }
}

/// The ideal server's queue the server's part is read from: its sojourn times and the
/// waits of a request needing no service arriving at random, at the grid's quantiles.
pub(super) struct Queue {
    pub(super) sojourns: Vec<f64>,
    pub(super) waits: Vec<f64>,
    pub(super) how: String,
}

impl Queue {
    /// The M/G/1 model's: Poisson arrivals at the point's rate.
    pub(super) fn poisson(m: &Model) -> Queue {
        Queue {
            sojourns: grid().map(|q| m.quantile(q).unwrap_or(m.max())).collect(),
            waits: m.waits.clone(),
            how: format!(
                "Poisson arrivals (the M/G/1 model, {MODEL_REQUESTS} simulated requests; its p50 {:.2} µs)",
                m.p50
            ),
        }
    }

    /// This queue, saying why it is the Poisson one.
    pub(super) fn because(mut self, why: &str) -> Queue {
        self.how = format!("{} — not the arrivals as sent: {why}", self.how);
        self
    }

    /// This queue, saying how far the Poisson one would differ at the median of `path`.
    pub(super) fn beside(mut self, poisson: &Queue, path: &[f64]) -> Queue {
        let path = if path.is_empty() { &[0.0][..] } else { path };
        let ours = median_of_sum(&self.sojourns, path);
        let theirs = median_of_sum(&poisson.sojourns, path);
        self.how = format!(
            "{}; Poisson arrivals at the same rate would give {:+.2} µs at the median (the sends' bunching, e.g. several requests due while the agent's core woke late, makes the difference)",
            self.how,
            theirs - ours
        );
        self
    }

    /// The ideal server fed the point's requests as they were sent (`departures`, ns, any
    /// order): FCFS with one worker, service times drawn from the model's distribution
    /// from `seed`. Its waits are those of requests needing no service at random instants,
    /// admitted among the others (they leave the queue as it was).
    pub(super) fn as_sent(m: &Model, departures: &[u64], seed: u64) -> Result<Queue, String> {
        use rand::{RngExt, SeedableRng};
        if !enough_departures(departures.len()) {
            return Err(format!(
                "{} departures are too few for a queue",
                departures.len()
            ));
        }
        let mut arrivals: Vec<f64> = departures.iter().map(|&d| d as f64).collect();
        arrivals.sort_unstable_by(f64::total_cmp);
        let (first, last) = (arrivals[0], arrivals[arrivals.len() - 1]);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(vernier_protocols::worker_seed(seed, 0));
        let mut instants: Vec<f64> = (0..WAIT_INSTANTS)
            .map(|_| rng.random_range(first..=last))
            .collect();
        instants.sort_unstable_by(f64::total_cmp);
        let sampler = m.service.sampler();
        let mut server = Fcfs::new(1);
        let mut sojourns = Vec::with_capacity(arrivals.len());
        let mut waits = Vec::with_capacity(instants.len());
        let mut next = instants.iter().peekable();
        for &a in &arrivals {
            while let Some(&t) = next.next_if(|&&t| t < a) {
                waits.push((server.admit(t, 0.0) - t) / 1e3);
            }
            let service = sampler.sample(&mut rng).max(0.0);
            sojourns.push((server.admit(a, service) + service - a) / 1e3);
        }
        for &t in next {
            waits.push((server.admit(t, 0.0) - t) / 1e3);
        }
        sojourns.sort_unstable_by(f64::total_cmp);
        waits.sort_unstable_by(f64::total_cmp);
        Ok(Queue {
            sojourns: on_grid(&sojourns),
            waits: on_grid(&waits),
            how: format!(
                "the arrivals as sent (the {} requests of the point at the times the agent stamped their departures, {:.1} s)",
                arrivals.len(),
                (last - first) / 1e9
            ),
        })
    }
}

/// The server's time beyond the service asked: how far the times it says it served
/// (`served`, µs at the grid), against those the same requests asked for (`asked`),
/// move the median of `base` (latencies, named: the probe's, or the calibration's path)
/// plus each. Unknown when the replies cannot be the time served: a median below what was
/// asked, or above the measured latency's.
pub(super) fn served_beyond(
    served: &[f64],
    asked: &[f64],
    (base, named): (&[f64], &str),
    measured_us: Option<f64>,
) -> Part {
    let (served_p50, asked_p50) = (served[served.len() / 2], asked[asked.len() / 2]);
    let below = served_below_asked(served_p50, asked_p50);
    let above = measured_us.is_some_and(|p50| served_p50 > p50);
    if below || above {
        return Part::unknown(format!(
            "the server's replies do not read as the time it served each request: their median {served_p50:.2} µs against {asked_p50:.2} µs asked{}",
            measured_us.map_or(String::new(), |p50| format!(
                " and a p50 latency of {p50:.2} µs"
            ))
        ));
    }
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let (us, against) = if base.is_empty() {
        (served_p50 - asked_p50, "alone".to_string())
    } else {
        (
            median_of_sum(base, served) - median_of_sum(base, asked),
            format!("added request by request to {named}"),
        )
    };
    Part::known(
        us,
        format!(
            "the times the server says it served the load's requests (in its replies: median {served_p50:.3} µs, mean {:.3} µs, p99 {:.2} µs) against the service they asked for (median {asked_p50:.3} µs, mean {:.3} µs), {against}: time the OS or the hypervisor took from the server's core mid-request, and its loop's overshoot",
            mean(served),
            served[served.len() * 99 / 100],
            mean(asked),
        ),
    )
}
