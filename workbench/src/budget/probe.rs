//! The path probe (`budget: {probe: SHARE}`): requests that ask the target for no service
//! time, sent from the workers' core over connections of their own while each point
//! measures, so that the budget's path (the floor and the client's share) is measured
//! when and where the point's requests travel rather than only at the run's start.
//!
//! It sends SHARE of each point's rate over SHARE of the load's connections (at least
//! one), so that each of its connections is used as often as each of the load's: on this
//! host a connection used every 8 ms costs its requests about 0.4–0.9 µs more at the
//! median than one used every millisecond (its socket's state gone cold between uses), and
//! a probe over one busy connection would measure a faster path than the load's.
//!
//! On a host whose speed drifts (a KVM guest's vCPUs, a core waking from idle more or less
//! often as the load changes), the start-of-run calibration is stale by a few tenths of a
//! µs within a minute, more than a p50's CI; the probe's requests meet the same drift as
//! the load's. They also meet the load's queue at the server (a Poisson arrival waits as
//! long as the work in the system, PASTA), which the budget takes out with the ideal
//! model's waits before it moves the path.
//!
//! The probe adds its rate to the server's arrivals (each costing the server its own
//! handling, a µs or two) and a thread to the workers' core, so it is off unless asked.

use std::net::ToSocketAddrs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_agent::{AgentKind, Engine, LoadSpec, Workload};
use vernier_protocols::{Dist, InterArrival, Protocol};
use vernier_stats::{percentile, percentile_ci, percentile_ci_dependent};

use super::on_grid;
use crate::coordinator::Action;
use crate::scenario::Scenario;

/// What the probe measured over one point: the p50 of its requests, with a CI, and its
/// latencies at the budget's grid of quantiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeWindow {
    /// Its rate, req/s.
    pub rate: f64,
    /// Its connections.
    #[serde(default)]
    pub connections: usize,
    /// Requests answered while the point measured.
    pub requests: usize,
    /// Their p50, µs.
    pub p50_us: f64,
    /// Its 95% CI, µs, when one could be built.
    pub ci_us: Option<(f64, f64)>,
    /// How the CI was built (or why there is none).
    pub ci_how: String,
    /// The latencies at the budget's [`GRID`](super::GRID) of quantiles, µs, ascending.
    #[serde(skip)]
    pub grid: Vec<f64>,
}

impl ProbeWindow {
    /// The window of `samples` (send order: departure ns, latency ns) at `rate` over
    /// `connections`; `None` for fewer than three.
    pub fn from_samples(
        rate: f64,
        connections: usize,
        samples: &[(u64, u64)],
    ) -> Option<ProbeWindow> {
        if samples.len() < 3 {
            return None;
        }
        let mut ordered = samples.to_vec();
        ordered.sort_by_key(|s| s.0);
        let series: Vec<f64> = ordered.iter().map(|s| s.1 as f64 / 1e3).collect();
        let mut sorted = series.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        let p50_us = percentile(&sorted, 0.5)?;
        let (ci_us, ci_how) = match percentile_ci_dependent(&series, &sorted, 0.5, 0.95) {
            Ok(Ok(ci)) => (
                Some((ci.low, ci.high)),
                format!(
                    "{} (batches of {}, variance ×{:.1})",
                    ci.method, ci.batch_size, ci.variance_inflation
                ),
            ),
            Ok(Err(more)) => match percentile_ci(&sorted, 0.5, 0.95) {
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

/// What the probe does for a coordinator's decision.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// Load at the agents' rate (its share of it), keeping no more until a round starts.
    Load(f64),
    /// Stop sending.
    Pause,
    /// A measuring round starts: keep its requests, afresh (a point's result is its last
    /// round's).
    Round,
}

/// The probe's steps for one decision's `actions`: it loads while the agents do, and a
/// sampling asked alone starts a measuring round (one asked with a load is the warm-up's).
fn steps(actions: &[Action]) -> Vec<Step> {
    let loads = actions.iter().any(|a| matches!(a, Action::Load { .. }));
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Load { rate } => Some(Step::Load(*rate)),
            Action::Pause | Action::Finished => Some(Step::Pause),
            Action::Sampling { rate, .. } if *rate > 0.0 && !loads => Some(Step::Round),
            Action::Sampling { .. } | Action::Renew { .. } => None,
        })
        .collect()
}

/// What the reading thread keeps: the samples of generations from `from` on.
#[derive(Debug, Default)]
struct Kept {
    from: Option<u64>,
    samples: Vec<(u64, u64)>,
}

/// A running probe: its engine, and the thread that reads its batches.
pub struct Probe {
    engine: Arc<Engine>,
    share: f64,
    connections: usize,
    /// The rate it sends at now, and the one it sent at when the point's measuring began
    /// (the point's verdict comes after the next point's load is set).
    rate: f64,
    measured_rate: f64,
    kept: Arc<Mutex<Kept>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    generation: u64,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("share", &self.share)
            .field("connections", &self.connections)
            .finish_non_exhaustive()
    }
}

impl Probe {
    /// Opens the probe's connections to `scenario`'s first target, from the workers' core,
    /// with the run's timestamps and polling: `share` of the load's connections, at least
    /// one. Idle until the load starts.
    pub fn start(scenario: &Scenario, share: f64) -> Result<Probe, String> {
        let load_connections = scenario.connections * scenario.agents.len().max(1);
        let connections = ((load_connections as f64 * share).round() as usize).max(1);
        let target = scenario
            .targets
            .first()
            .ok_or("the scenario has no target")?;
        let addr = target
            .to_socket_addrs()
            .map_err(|e| format!("{target}: {e}"))?
            .next()
            .ok_or_else(|| format!("{target} resolves to no address"))?;
        let engine = Engine::start(LoadSpec {
            poll: scenario.poll,
            target: addr,
            transport: scenario.transport,
            protocol: Protocol::Synthetic,
            workload: Workload::Synthetic {
                service: Dist::fixed(Duration::ZERO),
            },
            workers: 1,
            cpus: scenario.cpus.iter().take(1).copied().collect(),
            connections,
            depth: 1,
            kind: AgentKind::Symmetric,
            timestamps: scenario.timestamps.clone(),
            // Not the workers' streams: the probe's gaps are its own.
            seed: scenario.seed ^ 0x5052_4f42_4500_0000,
            timeout: scenario.timeout,
        })
        .map_err(|e| e.to_string())?;
        let engine = Arc::new(engine);
        let kept = Arc::new(Mutex::new(Kept::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (engine, kept, stop) = (engine.clone(), kept.clone(), stop.clone());
            std::thread::Builder::new()
                .name("budget-probe".into())
                .spawn(move || read(&engine, &kept, &stop))
                .map_err(|e| format!("its reading thread: {e}"))?
        };
        Ok(Probe {
            engine,
            share,
            connections,
            rate: 0.0,
            measured_rate: 0.0,
            kept,
            stop,
            reader: Some(reader),
            generation: 0,
        })
    }

    /// Follows one decision's `actions` (see [`steps`]).
    pub fn follow(&mut self, actions: &[Action]) {
        for step in steps(actions) {
            match step {
                Step::Load(rate) => {
                    self.rate = rate * self.share;
                    self.engine.set_load(self.rate, &InterArrival::Exp);
                    // What the last round kept stays for the point's verdict, which the
                    // session reads after the next point's load is set.
                    self.lock().from = None;
                }
                Step::Pause => self.engine.pause(),
                Step::Round => {
                    self.measured_rate = self.rate;
                    self.generation += 1;
                    self.engine.set_sampling(1.0, self.generation);
                    self.keep(Some(self.generation));
                }
            }
        }
    }

    /// Keeps the requests of generation `from` on (`None`: none), dropping those kept.
    fn keep(&self, from: Option<u64>) {
        let mut kept = self.lock();
        kept.from = from;
        kept.samples.clear();
    }

    /// What the probe measured over the point's last measuring round, and a fresh start
    /// for the next point.
    pub fn take(&mut self) -> Option<ProbeWindow> {
        self.generation += 1;
        self.engine.set_sampling(0.0, self.generation);
        let samples = {
            let mut kept = self.lock();
            kept.from = None;
            std::mem::take(&mut kept.samples)
        };
        ProbeWindow::from_samples(self.measured_rate, self.connections, &samples)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.engine.stop();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The reading thread: the answered requests of the generations kept, until `stop`.
fn read(engine: &Engine, kept: &Mutex<Kept>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let Some(batch) = engine.next_batch(Duration::from_millis(50)) else {
            continue;
        };
        {
            let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
            if kept.from.is_some_and(|from| batch.generation >= from) {
                kept.samples.extend(
                    batch
                        .samples
                        .iter()
                        .filter(|s| s.outcome != vernier_agent::Outcome::Error as u8)
                        .map(|s| (s.departure_ns, s.latency_ns)),
                );
            }
        }
        engine.recycle(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_loads_with_the_agents_and_keeps_only_measuring_rounds() {
        let sampling = |rate| Action::Sampling {
            rate,
            generation: 1,
        };
        // A point's warm-up: its sampling comes with the load.
        assert_eq!(
            steps(&[sampling(1.0), Action::Load { rate: 2000.0 }]),
            [Step::Load(2000.0)]
        );
        // Its measuring rounds: a sampling alone.
        assert_eq!(steps(&[sampling(0.25)]), [Step::Round]);
        // None kept: no round.
        assert_eq!(steps(&[sampling(0.0)]), []);
        // The end of a point and the next one's warm-up in one decision.
        assert_eq!(
            steps(&[Action::Pause, sampling(1.0), Action::Load { rate: 5000.0 }]),
            [Step::Pause, Step::Load(5000.0)]
        );
        assert_eq!(
            steps(&[Action::Renew { run: 2 }, Action::Finished]),
            [Step::Pause]
        );
    }
}
