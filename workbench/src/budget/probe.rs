//! The path probe (`budget: {probe: SHARE}`): requests that ask the target for no service
//! time, sent by the load's own workers among the load's requests and over its
//! connections while each point measures, so that the budget's path (the floor and the
//! client's share) and the server's queue are measured when and where the point's
//! requests travel rather than only at the run's start.
//!
//! Each worker adds SHARE of its rate as a Poisson process of its own (whatever the
//! load's), numbered apart from the load's requests and reported apart from them
//! ([`vernier_agent::Batch::probes`]): the load's samples, histograms, gaps and rate are
//! what they would be without it, and the probe's requests take turns on the same
//! connections, so they meet the same sockets, the same cores, the same drift of the
//! host's speed and the same queue at the server as the load's (a Poisson arrival waits
//! as long as the work in the system, PASTA).
//!
//! On this host an earlier probe, with connections and a thread of its own, measured a
//! path 0.2–0.5 µs from the load's: each connection keeps its path for a run (the load's
//! eight connection medians differ by up to 0.45 µs), and a connection used more or less
//! often than the load's has its socket's state more or less cold between uses.
//!
//! The probe adds its rate to the server's arrivals (each costing the server its own
//! handling, a µs or two) and to the workers' sends, so it is off unless asked.

use vernier_stats::{percentile, percentile_ci, percentile_ci_dependent};

use super::grid::on_grid;
use super::policy::{PROBE_CI_LEVEL, enough_probe_requests};
use crate::coordinator::ProbeWindow;

impl ProbeWindow {
    /// The window of `latencies` (ns, in the order they were sent: the CI's batches follow
    /// it) at `rate` over `connections`; `None` for fewer than [`MIN_PROBE_REQUESTS`](super::policy::MIN_PROBE_REQUESTS).
    pub fn from_latencies(rate: f64, connections: usize, latencies: &[u64]) -> Option<ProbeWindow> {
        if !enough_probe_requests(latencies.len()) {
            return None;
        }
        let series: Vec<f64> = latencies.iter().map(|&ns| ns as f64 / 1e3).collect();
        let mut sorted = series.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        let p50_us = percentile(&sorted, 0.5)?;
        let (ci_us, ci_how) = match percentile_ci_dependent(&series, &sorted, 0.5, PROBE_CI_LEVEL) {
            Ok(Ok(ci)) => (
                Some((ci.low, ci.high)),
                format!(
                    "{} (batches of {}, variance ×{:.1})",
                    ci.method, ci.batch_size, ci.variance_inflation
                ),
            ),
            Ok(Err(more)) => match percentile_ci(&sorted, 0.5, PROBE_CI_LEVEL) {
                Ok((low, high)) => (
                    Some((low, high)),
                    format!(
                        "order statistics as if independent: a dependence-valid CI needs more ({})",
                        more.reason
                    ),
                ),
                Err(e) => (None, format!("no CI: {e}")),
            },
            Err(e) => (None, format!("no CI: {e}")),
        };
        let grid = on_grid(&sorted);
        Some(ProbeWindow {
            rate,
            connections,
            requests: sorted.len(),
            p50_us,
            ci_us,
            ci_how,
            grid,
        })
    }
}
