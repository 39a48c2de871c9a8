//! One worker's load held for a while and measured: an in-process engine started for a
//! load spec, a Poisson rate set, a warm-up, a measuring window opened by the worker's
//! acknowledgement, and the engine stopped. `vernier bench-agent` measures its agent this
//! way, and the latency budget calibrates the client's share this way (`budget::start`);
//! both sit above this module, which knows only the agent's engine.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use vernier_agent::{Batch, Counters, Engine, LoadSpec, StallLog};
use vernier_protocols::InterArrival;

use crate::error::Error;

/// The interval's batches, merged.
pub(crate) struct LoadWindow {
    /// The workers' counters over the window, summed.
    pub(crate) counters: Counters,
    /// Latencies of every request answered, ns.
    pub(crate) latency: Histogram<u64>,
    /// How late each request left against its schedule, ns.
    pub(crate) send_lag: Histogram<u64>,
    /// Gaps between the departures kept, µs.
    pub(crate) interarrivals: Vec<f64>,
    /// Departure, latency and send lag of the samples kept, ns.
    pub(crate) samples: Vec<(u64, u64, u32)>,
    /// The stalls the workers' own spins saw over the window, on the samples' clock.
    pub(crate) stalls: StallLog,
    /// The samples' clock's zero on `CLOCK_MONOTONIC`, ns: where a host probe's stalls
    /// meet them ([`StallLog::since`]).
    pub(crate) origin_ns: u64,
    /// How long the window lasted from the worker's acknowledgement (none: it never came).
    opened_for: Option<Duration>,
}

impl LoadWindow {
    /// What the window counted, for a load that measured nothing: whether the worker
    /// acknowledged the measurement, and what became of the requests it sent.
    pub(crate) fn account(&self) -> String {
        let c = &self.counters;
        match self.opened_for {
            None => "the worker never acknowledged the measurement".to_string(),
            Some(t) => format!(
                "over {:.0} ms from the worker's acknowledgement: {} sent, {} answered, {} failed ({} timed out), {} refused and sent again, {} connection attempts failed, {} answered without their TX timestamp",
                t.as_secs_f64() * 1e3,
                c.sent,
                c.received,
                c.failed,
                c.timeouts,
                c.retried,
                c.connect_failures,
                c.tx_timestamps_missing
            ),
        }
    }
}

/// The first address `target` (`host:port`) resolves to: where a load is sent, by the
/// session and by `vernier compare` alike.
pub(crate) fn resolve(target: &str) -> Result<SocketAddr, Error> {
    target
        .to_socket_addrs()
        .map_err(|e| Error::Failed(format!("target {target}: {e}")))?
        .next()
        .ok_or_else(|| Error::Failed(format!("target {target} resolves to no address")))
}

/// A load to hold and measure with [`run_load`]: each caller names what it keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Load {
    /// Requests per second, Poisson.
    pub(crate) rate: f64,
    /// How long it is measured, after the warm-up.
    pub(crate) duration: Duration,
    /// The share of the requests whose sample is kept (0: none, the histograms only; 1:
    /// every one).
    pub(crate) sampling: f64,
    /// What becomes of each batch once its figures are merged.
    pub(crate) batches: Batches,
}

impl Load {
    /// `rate` for `duration`, every request's sample kept and every batch recycled: a
    /// comparison's block, whose percentile and lateness come from the samples.
    pub(crate) fn every_sample(rate: f64, duration: Duration) -> Load {
        Load {
            rate,
            duration,
            sampling: 1.0,
            batches: Batches::Recycled,
        }
    }
}

/// What becomes of a batch once read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Batches {
    /// Back to its worker for reuse, as a run does: the hot path allocates no batch.
    Recycled,
    /// Dropped, the worker allocating the next anew: what `vernier bench-agent
    /// --no-recycle` measures recycling against.
    Dropped,
}

/// Starts an engine for `spec`, holds `load` (Poisson), measures it after a 300 ms warm-up
/// and stops it: every run of `vernier bench-agent`, the budget's client calibration
/// (`budget::start`) and a comparison's blocks go this way.
pub(crate) fn run_load(
    spec: LoadSpec,
    load: Load,
) -> Result<LoadWindow, vernier_agent::EngineError> {
    let engine = Engine::start(spec)?;
    engine.set_load(load.rate, &InterArrival::Exp);
    let w = measure(&engine, Duration::from_millis(300), &load);
    engine.pause();
    let _ = engine.stop();
    Ok(w)
}

/// Measures `load.duration` after `warmup`, keeping `load.sampling` of the requests: the
/// batches of the measuring generation (the worker's acknowledgement), merged; each read
/// batch goes back to the worker or is dropped, as `load.batches` says.
fn measure(engine: &Engine, warmup: Duration, load: &Load) -> LoadWindow {
    const WARMING: u64 = 1;
    const MEASURING: u64 = 2;
    let Load {
        duration,
        sampling,
        batches,
        ..
    } = *load;
    let give_back = |b: Batch| {
        if batches == Batches::Recycled {
            engine.recycle(b);
        }
    };
    engine.set_sampling(0.0, WARMING);
    let t0 = Instant::now();
    while t0.elapsed() < warmup {
        if let Some(b) = engine.next_batch(Duration::from_millis(50)) {
            give_back(b);
        }
    }
    engine.set_sampling(sampling, MEASURING);
    // The window opens with the worker's first batch of the measuring generation (its
    // acknowledgement), not when it was asked: a worker the host keeps off its core would
    // otherwise be measured over a window it spent waiting, and a one-CPU run under a
    // competing load once measured no reply at all. No acknowledgement within
    // `ACK_PATIENCE` past the window ends it empty.
    const ACK_PATIENCE: Duration = Duration::from_secs(2);
    let asked = Instant::now();
    let mut opened: Option<Instant> = None;
    let mut counters = Counters::default();
    let mut latency = vernier_agent::histogram();
    let mut send_lag = vernier_agent::histogram();
    let mut interarrivals = Vec::new();
    let mut samples = Vec::new();
    let mut stalls = StallLog::default();
    while opened.map_or(asked.elapsed() < duration + ACK_PATIENCE, |t| {
        t.elapsed() < duration
    }) {
        let Some(b) = engine.next_batch(Duration::from_millis(50)) else {
            continue;
        };
        if b.generation == MEASURING {
            opened.get_or_insert_with(Instant::now);
            counters.accumulate(&b.counts);
            let _ = latency.add(&b.latency);
            let _ = send_lag.add(&b.send_lag);
            interarrivals.extend(b.interarrivals.iter().map(|&g| g as f64 / 1e3));
            samples.extend(
                b.samples
                    .iter()
                    .map(|s| (s.departure_ns, s.latency_ns, s.queueing_ns)),
            );
            stalls.append(&b.stalls);
        }
        give_back(b);
    }
    LoadWindow {
        counters,
        latency,
        send_lag,
        interarrivals,
        samples,
        stalls,
        origin_ns: engine.clock_origin_ns(),
        opened_for: opened.map(|t| t.elapsed()),
    }
}
