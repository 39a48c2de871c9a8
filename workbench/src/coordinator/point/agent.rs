//! What the point keeps of each agent across its phases ([`AgentState`]), and the tallies
//! the phases fill from the agents' batches: the open warm-up window's ([`WindowTally`]),
//! the live figures' ([`Tally`]) and a measuring round's ([`RoundTally`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use hdrhistogram::Histogram;
use vernier_agent::{Sample, StallLog, histogram};
use vernier_stats::NeedMore;

use super::super::result::InterarrivalResult;

/// What the point keeps of one agent whatever the phase: its load, its live figures, its
/// stalls and what the checks and looks last found of it. What one phase alone fills
/// lives in that phase's `Stage` variant (state.rs): the open warm-up window's tally in
/// `WarmupState`, the inter-departure gaps in `Stage::Interarrival`, the round's samples
/// and histograms in `RoundFigures`.
#[derive(Debug)]
pub(super) struct AgentState {
    /// Through the whole point: its backlog, errors and answers.
    pub(super) load: AgentLoad,
    /// Since the last progress event.
    pub(super) recent: Tally,
    /// What its checks and looks last found at this load.
    pub(super) found: AgentFound,
    /// The stalls of the cores its requests met, through the whole point (its workers'
    /// spins, its host probes', and for an agent in this process the session's), on its
    /// samples' clock (a [`Sample`]'s `departure_ns`), in the order they arrived.
    pub(super) stalls: StallLog,
}

/// What the checks and looks last found of one agent at the point's load: the progress
/// shows them in every phase and a verdict reports them, whatever phase it comes in; a
/// change of load (a restart) drops them all.
#[derive(Debug, Default)]
pub(super) struct AgentFound {
    /// The inter-arrival test's result.
    pub(super) interarrival: Option<InterarrivalResult>,
    /// The lag from which its samples are independent.
    pub(super) lag: Option<usize>,
    /// Its own CI's width at the last look, µs.
    pub(super) ci_width_us: Option<f64>,
    /// Why it had no dependence-valid CI of its own at the last look, with what would do.
    pub(super) ci_need: Option<NeedMore>,
}

impl AgentState {
    pub(super) fn new() -> AgentState {
        AgentState {
            load: AgentLoad::default(),
            recent: Tally::new(),
            found: AgentFound::default(),
            stalls: StallLog::default(),
        }
    }

    /// Keeps the stalls a batch brought (at most [`vernier_agent::MAX_INTERVALS`] in the
    /// point; past it they are counted in `stalls.dropped`).
    pub(super) fn add_stalls(&mut self, stalls: &StallLog) {
        self.stalls.append(stalls);
    }
}

/// An agent's load through the whole point.
#[derive(Debug, Default)]
pub(super) struct AgentLoad {
    /// Each worker's backlog as last reported (a gauge: the agent's is their sum).
    pub(super) backlogs: BTreeMap<u32, u64>,
    /// Their sum now.
    pub(super) backlog_now: u64,
    /// The most at once.
    pub(super) backlog_max: u64,
    /// Requests that failed or were answered with an error.
    pub(super) errors: u64,
    /// Requests the server refused unprocessed (an HTTP/2 GOAWAY's or REFUSED_STREAM's)
    /// and the agent sent again.
    pub(super) retried: u64,
    /// Replies.
    pub(super) received: u64,
    /// Since when it has seen only failures, when it has.
    pub(super) failing: Option<Failing>,
}

/// An agent that sees only failures (no reply at all): since when, and how many.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Failing {
    /// The first failure with no reply since.
    pub(super) since: Duration,
    /// Requests failed since.
    pub(super) failed: u64,
    /// Connects failed since.
    pub(super) connect_failures: u64,
}

impl AgentLoad {
    /// A batch's replies and failures: a reply ends a run of failures.
    pub(super) fn answered(&mut self, at: Duration, received: u64, failed: u64, connects: u64) {
        self.errors += failed;
        self.received += received;
        if received > 0 {
            self.failing = None;
        } else if failed + connects > 0 {
            let f = self.failing.get_or_insert(Failing {
                since: at,
                failed: 0,
                connect_failures: 0,
            });
            f.failed += failed;
            f.connect_failures += connects;
        }
    }

    /// A worker's backlog as it reported it.
    pub(super) fn backlog(&mut self, worker: u32, backlog: u64) {
        self.backlogs.insert(worker, backlog);
        self.backlog_now = self.backlogs.values().sum();
        self.backlog_max = self.backlog_max.max(self.backlog_now);
    }
}

/// Requests sent and answered, with their latencies and send lags, since some moment.
#[derive(Debug)]
pub(super) struct Tally {
    pub(super) sent: u64,
    pub(super) received: u64,
    pub(super) latency: Histogram<u64>,
    pub(super) send_lag: Histogram<u64>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            sent: 0,
            received: 0,
            latency: histogram(),
            send_lag: histogram(),
        }
    }
}

/// The open warm-up window: requests sent and answered, the latency's sum, and the send
/// lag since warm-up began.
#[derive(Debug)]
pub(super) struct WindowTally {
    pub(super) sent: u64,
    pub(super) received: u64,
    pub(super) latency_ns: f64,
    pub(super) replies: u64,
    pub(super) send_lag: Histogram<u64>,
}

impl WindowTally {
    /// Closes the open window: its counts, handed over and started again from zero (the
    /// send lag goes on: it is warm-up's).
    pub(super) fn close(&mut self) -> (u64, u64, f64, u64) {
        let counts = (self.sent, self.received, self.latency_ns, self.replies);
        self.sent = 0;
        self.received = 0;
        self.latency_ns = 0.0;
        self.replies = 0;
        counts
    }

    pub(super) fn new() -> WindowTally {
        WindowTally {
            sent: 0,
            received: 0,
            latency_ns: 0.0,
            replies: 0,
            send_lag: histogram(),
        }
    }
}

/// The measuring round: the samples kept, and every request's histograms.
#[derive(Debug)]
pub(super) struct RoundTally {
    pub(super) samples: Vec<Sample>,
    /// The latencies of `samples`, for the live CCDF without sorting them at every
    /// progress event.
    pub(super) latency_kept: Histogram<u64>,
    pub(super) send_lag: Histogram<u64>,
    /// Reply received minus *scheduled* departure of every request completed in the
    /// round, ns: the wait coordinated omission hides.
    pub(super) intended: Histogram<u64>,
    /// Latency of every request completed in the round (not only the kept samples), ns:
    /// what `intended` is compared with.
    pub(super) latency: Histogram<u64>,
    /// The round's reports (a worker's batch), and those in which some request waited for
    /// a free slot.
    pub(super) reports: u64,
    pub(super) backlogged_reports: u64,
    /// The workers whose batches the round counted: kept samples of several carry each
    /// its own worker's busy stretch.
    pub(super) workers: BTreeSet<u32>,
}

impl RoundTally {
    /// A measuring batch: its samples, its histograms, and whether some request in it
    /// waited for a free slot.
    pub(super) fn add(&mut self, batch: &vernier_agent::Batch, backlogged: bool) {
        self.reports += 1;
        self.backlogged_reports += u64::from(backlogged);
        self.workers.insert(batch.worker);
        self.samples.extend_from_slice(&batch.samples);
        for s in &batch.samples {
            self.latency_kept.saturating_record(s.latency_ns.max(1));
        }
        batch.recorded_send_lag().add_to(&mut self.send_lag);
        batch.recorded_intended().add_to(&mut self.intended);
        batch.recorded_latency().add_to(&mut self.latency);
    }

    /// Latencies in µs, in send order.
    pub(super) fn latencies_in_send_order(&mut self) -> Vec<f64> {
        self.samples.sort_by_key(|s| s.departure_ns);
        self.samples
            .iter()
            .map(|s| s.latency_ns as f64 / 1e3)
            .collect()
    }

    /// The samples and the live CCDF's histogram dropped, the other histograms kept: what
    /// a warm-up after a restart keeps of the last round.
    pub(super) fn drop_samples(&mut self) {
        self.samples.clear();
        self.latency_kept.reset();
    }

    pub(super) fn new() -> RoundTally {
        RoundTally {
            samples: Vec::new(),
            latency_kept: histogram(),
            send_lag: histogram(),
            intended: histogram(),
            latency: histogram(),
            reports: 0,
            backlogged_reports: 0,
            workers: BTreeSet::new(),
        }
    }
}
