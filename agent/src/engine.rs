//! The engine: W pinned worker threads generating open-loop load and measuring it.
//!
//! Each worker owns its connections, arrival process, RNG, buffers and histograms; the
//! threads share nothing on the hot path. The control side talks to them through one
//! command channel each and receives [`Batch`]es (interval deltas) on a shared channel.

mod arrivals;
mod command;
mod conn;
mod epoch;
mod error;
mod inflight;
mod nic_clock;
mod pacer;
mod report;
mod requests;
mod roots;
mod stretch;

pub use roots::system_roots;
mod tally;
mod watch;
mod worker;

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use vernier_protocols::{InterArrival, KeySpace};

use crate::config::{LoadSpec, Workload};
use crate::measure::{Batch, Counters};
use crate::probe::CoreWatch;

use command::Command;
use epoch::Epoch;
pub use error::EngineError;

struct WorkerHandle {
    commands: Sender<Command>,
    /// Read batches going back to the worker for reuse.
    spares: SyncSender<Batch>,
    thread: Option<JoinHandle<()>>,
}

/// Batches waiting to be read, per worker: a bounded channel's slots are allocated once
/// (an unbounded one allocates a block every few dozen sends), and 4,096 batches are 80 s
/// of a worker's reports, far more than a reader that is alive falls behind.
const QUEUED_BATCHES: usize = 4096;
/// Read batches a worker holds for reuse: a reader returns each batch soon after the next
/// arrives, so a few cover the ones in transit.
const SPARE_BATCHES: usize = 8;

/// A running load generator. Shareable: every method takes `&self`.
#[derive(Debug)]
pub struct Engine {
    workers: Mutex<Vec<WorkerHandle>>,
    batches: Mutex<Receiver<Batch>>,
    counters: Arc<Mutex<Vec<Counters>>>,
    /// Each worker's wake-ups, the stall probe of its core.
    watches: Vec<CoreWatch>,
    workers_n: usize,
    started: Instant,
    origin_ns: u64,
}

impl std::fmt::Debug for WorkerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerHandle").finish_non_exhaustive()
    }
}

/// How long workers may take to open their connections.
const START_TIMEOUT: Duration = Duration::from_secs(10);

impl Engine {
    /// Validates the spec, starts the workers, and returns once every connection is open
    /// (or with the first error). The engine starts idle: call [`Engine::set_load`].
    pub fn start(spec: LoadSpec) -> Result<Engine, EngineError> {
        spec.validate()?;
        if let Some(why) = spec.protocol.unusable(&roots::CONTEXT) {
            return Err(EngineError::Unusable(why));
        }
        let key_space = |workload: &Workload| -> Result<_, EngineError> {
            Ok(match workload {
                Workload::KeyValue(kv) => Some(Arc::new(KeySpace::new(kv, spec.seed)?)),
                _ => None,
            })
        };
        let keys = key_space(&spec.workload)?;
        // A duet's second server asked the same draws from the same keys, or its own.
        let keys = match &spec.duet {
            Some(duet) if duet.workload != spec.workload => [keys, key_space(&duet.workload)?],
            _ => [keys.clone(), keys],
        };
        let spec = Arc::new(spec);
        let epoch = Epoch::now();
        let (batch_tx, batches) = mpsc::sync_channel(QUEUED_BATCHES * spec.workers);
        let counters = Arc::new(Mutex::new(vec![Counters::default(); spec.workers]));
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut workers = Vec::with_capacity(spec.workers);
        let mut watches = Vec::with_capacity(spec.workers);
        let mut first_conn = 0usize;
        for w in 0..spec.workers {
            // Connections split as evenly as possible, the first workers taking the remainder.
            let n =
                spec.connections / spec.workers + usize::from(w < spec.connections % spec.workers);
            let conns = first_conn..first_conn + n;
            first_conn += n;
            let (cmd_tx, cmd_rx) = mpsc::channel();
            let (spares_tx, spares_rx) = mpsc::sync_channel(SPARE_BATCHES);
            let watch = CoreWatch::new(spec.cpus.get(w).copied());
            watches.push(watch.clone());
            let setup = worker::Setup {
                watch,
                spares: spares_rx,
                index: w as u32,
                spec: Arc::clone(&spec),
                conns,
                keys: keys.clone(),
                epoch,
                commands: cmd_rx,
                batches: batch_tx.clone(),
                ready: ready_tx.clone(),
                counters: Arc::clone(&counters),
            };
            let thread = std::thread::Builder::new()
                .name(format!("vernier-worker-{w}"))
                .spawn(move || worker::run(setup))
                .map_err(|source| EngineError::Os {
                    worker: w as u32,
                    what: "spawn thread",
                    source,
                })?;
            workers.push(WorkerHandle {
                commands: cmd_tx,
                spares: spares_tx,
                thread: Some(thread),
            });
        }
        drop(ready_tx);
        let engine = Engine {
            workers: Mutex::new(workers),
            batches: Mutex::new(batches),
            counters,
            watches,
            workers_n: spec.workers,
            started: epoch.mono,
            origin_ns: epoch.mono_ns,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        for _ in 0..engine.workers_n {
            let left = deadline.saturating_duration_since(Instant::now());
            match ready_rx.recv_timeout(left) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EngineError::StartTimeout(0, START_TIMEOUT));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(engine.first_dead_worker()),
            }
        }
        Ok(engine)
    }

    fn first_dead_worker(&self) -> EngineError {
        let workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        let dead = workers
            .iter()
            .position(|w| w.thread.as_ref().is_some_and(|t| t.is_finished()));
        EngineError::WorkerDied(dead.unwrap_or(0) as u32)
    }

    fn broadcast(&self, command: Command) {
        let workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        for w in workers.iter() {
            // A worker that is gone has already reported why through its last batch.
            let _ = w.commands.send(command.clone());
        }
    }

    /// Generates `rate_per_s` requests a second in all (each worker its share) with gaps
    /// drawn from `interarrival`. A rate of 0 pauses.
    pub fn set_load(&self, rate_per_s: f64, interarrival: &InterArrival) {
        if !(rate_per_s > 0.0 && rate_per_s.is_finite()) {
            return self.pause();
        }
        self.broadcast(Command::Load {
            rate_per_s: rate_per_s / self.workers_n as f64,
            interarrival: *interarrival,
        });
    }

    /// Tells the workers the lateness that could move the answer asked: a sleeping worker
    /// wakes early enough, by this host's measured wake-up lateness, for most departures to
    /// leave within it, and spins no longer than that needs.
    pub fn set_tolerance(&self, tolerance: Duration) {
        self.broadcast(Command::Tolerance(tolerance));
    }

    /// Each worker's wake-ups, read as the stall probe of the core it runs on (a worker
    /// that sleeps between departures measures how late it wakes, as a probe thread would,
    /// so no probe needs to share its core).
    pub fn core_watches(&self) -> &[CoreWatch] {
        &self.watches
    }

    /// Stops generating; requests in flight are still measured.
    pub fn pause(&self) {
        self.broadcast(Command::Pause);
    }

    /// Keeps every round(1/`rate`)-th request sent from now on as a sample (`rate`
    /// clamped to [0, 1]; 0 keeps none), and marks the batches kept so with `generation`:
    /// a batch of that generation holds only requests sent after its worker applied it.
    pub fn set_sampling(&self, rate: f64, generation: u64) {
        self.broadcast(Command::Sampling {
            rate: rate.clamp(0.0, 1.0),
            generation,
        });
    }

    /// Gives a read batch back to its worker, emptied, for its next report: the worker's
    /// loop then allocates no buffer or histogram. Dropped when the worker holds enough.
    pub fn recycle(&self, mut batch: Batch) {
        batch.clear();
        let workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(w) = workers.get(batch.worker as usize) {
            let _ = w.spares.try_send(batch);
        }
    }

    /// The next batch from any worker, waiting at most `timeout`. One reader at a time.
    pub fn next_batch(&self, timeout: Duration) -> Option<Batch> {
        self.batches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv_timeout(timeout)
            .ok()
    }

    /// Every batch already waiting.
    pub fn drain_batches(&self) -> Vec<Batch> {
        self.batches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .try_iter()
            .collect()
    }

    /// Each worker's cumulative counters as of its last report (every ~20 ms): the sums of
    /// its batches' counts.
    pub fn counters(&self) -> Vec<Counters> {
        self.counters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers_n
    }

    /// `CLOCK_MONOTONIC` when the engine started, ns: the zero of its samples' clock (a
    /// [`Sample`](crate::Sample)'s `departure_ns`, a [`Batch`]'s stalls), so that a
    /// [`HostProbe`](crate::HostProbe)'s intervals, on `CLOCK_MONOTONIC`, reach it through
    /// [`StallLog::since`](crate::StallLog::since).
    pub fn clock_origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Time since the engine started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Stops every worker (idempotent) and returns the batches not yet taken, the last of
    /// each worker holding what it counted since the one before.
    pub fn stop(&self) -> Result<Vec<Batch>, EngineError> {
        let mut left = Vec::new();
        self.shutdown(&mut left)?;
        left.extend(self.drain_batches());
        Ok(left)
    }

    /// Stops the workers, keeping the batches they report meanwhile in `left`: a worker
    /// whose queue is full waits for room to send its last batch.
    fn shutdown(&self, left: &mut Vec<Batch>) -> Result<(), EngineError> {
        self.broadcast(Command::Stop);
        let mut result = Ok(());
        let mut workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        for (i, w) in workers.iter_mut().enumerate() {
            if let Some(t) = w.thread.take() {
                while !t.is_finished() {
                    left.extend(self.drain_batches());
                    std::thread::sleep(Duration::from_millis(1));
                }
                if t.join().is_err() {
                    result = Err(EngineError::WorkerDied(i as u32));
                }
            }
        }
        result
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.shutdown(&mut Vec::new());
    }
}
