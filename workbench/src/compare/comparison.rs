//! A comparison's values: how it is run, what each block measured, every look at the CI
//! and the verdict. They sit apart from `compare.rs`, which re-exports them, so that the
//! files that build a comparison and the report that draws one import them without a
//! circle through their parent.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_stats::DifferenceCi;

use crate::coordinator::{Figure, ReasonKind};
use crate::report::CcdfPoint;
use crate::scenario::Tail;

/// One side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Side {
    /// The baseline: the load, the percentile and the width asked are its scenario's.
    A,
    /// The one compared with it.
    B,
}

impl Side {
    /// Both, A first.
    pub const BOTH: [Side; 2] = [Side::A, Side::B];
}

/// As serde names it: `A` or `B`.
impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

/// How a comparison is run.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Each block's measuring time (after the load's own 300 ms warm-up).
    pub block: Duration,
    /// The most pairs of blocks before the verdict.
    pub max_pairs: usize,
    /// The seed of the pairs' orders.
    pub seed: u64,
    /// Both at once (a duet), interleaved pairs of blocks, or all of A then all of B.
    pub design: Design,
}

/// How A and B are laid out in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Both at once: one open-loop stream at twice the rate, each request to A or to B by
    /// a fair coin, so that every moment of the host reaches both alike; cut into windows
    /// of `--block`, each a pair.
    #[default]
    Duet,
    /// Pairs of blocks, A and B in a random order within each, each block its own client
    /// and connections: a drifting host reaches both alike, a stall only the block it
    /// meets. For sides that cannot run at once (one port, a restart between).
    #[serde(alias = "interleaved")]
    #[value(alias = "interleaved")]
    Blocks,
    /// Every block of A, then every block of B, as two runs one after the other would be:
    /// what interleaving guards against, kept to show it (`--design sequential`).
    Sequential,
}

/// What one block measured, and how it was judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// Which side it measured.
    pub side: Side,
    /// The pair it belongs to, from 0.
    pub pair: usize,
    /// Its place in time, from 0.
    pub order: usize,
    /// When it started measuring, seconds from the comparison's start.
    pub started_s: f64,
    /// Requests answered and kept (every one).
    pub samples: usize,
    /// The block's percentile, µs (NaN: it measured nothing).
    pub value_us: Figure,
    /// Requests sent while measuring.
    pub sent: u64,
    /// Requests the rate asks for over the block (its Poisson mean).
    pub asked: f64,
    /// The share of its requests that left within the on-schedule tolerance.
    pub on_schedule: f64,
    /// The block's percentile less that of its requests sent on schedule, µs: how far the
    /// client's lateness moved it (NaN: none was sent on schedule).
    pub late_shift_us: Figure,
    /// The p99 of how late its requests left against their schedule, µs.
    pub send_lag_p99_us: f64,
    /// The largest backlog of requests due but not sent.
    pub backlog_max: u64,
    /// Requests that failed or timed out.
    pub failed: u64,
    /// Replies that were the server's errors (counted among the samples).
    #[serde(default)]
    pub errors: u64,
    /// The block's percentile of the tail without stalls (the requests no host stall
    /// touched, weighted against the selection), µs (none: every request's tail is
    /// compared; NaN: none was left). Records before it had this name wrote `own_us`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "own_us")]
    pub without_stalls_us: Option<f64>,
    /// The share of its requests a stall touched (none: not marked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touched_share: Option<f64>,
    /// Why the block cannot stand for its side at the load asked (none: it can): the
    /// run's reason kind (`target_failed`: it measured nothing; `closed_loop`;
    /// `load_not_reached`; `departures`: the client fell behind; `host_stalls`: the stalls
    /// touched more of its requests than the tail without stalls is judged at), whose
    /// figures are the block's own.
    pub problem: Option<ReasonKind>,
}

impl Block {
    /// The block's percentile of the tail compared, µs.
    pub fn value_of(&self, tail: Tail) -> f64 {
        match (tail, self.without_stalls_us) {
            (Tail::WithoutStalls, Some(without)) => without,
            _ => self.value_us.get(),
        }
    }
}

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareVerdict {
    /// B's percentile is lower than A's: the CI of B − A lies below zero.
    Faster,
    /// B's percentile is higher: the CI lies above zero.
    Slower,
    /// The CI holds zero and lies within ± the width asked.
    NoDifference,
    /// The CI holds zero and is wider than asked: a valid CI, which shows no difference
    /// beyond its bounds; the reason says what more time would buy.
    Wide,
    /// No honest answer (see the reason).
    #[serde(rename = "n/a")]
    NotAvailable,
}

impl CompareVerdict {
    /// As tables write it.
    pub fn text(self) -> &'static str {
        match self {
            CompareVerdict::Faster => "faster",
            CompareVerdict::Slower => "slower",
            CompareVerdict::NoDifference => "no difference",
            CompareVerdict::Wide => "wide",
            CompareVerdict::NotAvailable => "n/a",
        }
    }
}

/// What a comparison's verdict rests on: each kind with the figures its sentence quotes
/// (those of the CI and of the blocks are the comparison's own).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Not judged yet.
    #[default]
    Unjudged,
    /// The CI of B − A: below or above zero (faster, slower), or within ± the width (no
    /// difference).
    Difference,
    /// Fewer pairs than a look needs.
    TooFewPairs {
        /// The most pairs allowed (`--pairs`).
        max_pairs: usize,
    },
    /// Blocks too short for the percentile: the CI could not be computed.
    BlocksTooShort {
        /// Why, as the statistics said it.
        error: String,
        /// A block's length, seconds.
        block_s: f64,
    },
    /// A block could not stand for its side (its `problem` says why).
    Block {
        /// Its index in [`Comparison::blocks`].
        block: usize,
    },
    /// The client fell behind in a block again after as many blocks measured again for
    /// the same reason as allowed: the host stalls too often.
    HostStallsTooOften {
        /// The block's index in [`Comparison::blocks`].
        block: usize,
        /// Blocks measured again.
        remeasured: usize,
    },
    /// The client's lateness moved one side's blocks more than the other's, by more than
    /// half the width asked: B's late shift less A's over the pairs, with its interval.
    Departures {
        /// Pairs judged.
        pairs: usize,
        /// The mean, µs.
        mean_us: f64,
        /// Its interval, µs.
        low_us: f64,
        /// Its interval, µs.
        high_us: f64,
    },
    /// A side's server could not be reached: the duet could not start.
    Refused {
        /// The side.
        side: Side,
        /// Why, as the system said it.
        error: String,
    },
    /// The CI of B − A holds zero and is wider than asked after the pairs measured.
    Confidence {
        /// The pairs its width asks for (it narrows as 1/√pairs).
        pairs_needed: f64,
        /// The seconds those pairs would take beyond the time spent.
        more_s: f64,
        /// Seconds a pair took.
        per_pair_s: f64,
    },
}

impl Finding {
    /// The run's reason kind of an N/A finding (`None` when it is no reason for N/A), with
    /// `blocks` to read a block's own problem.
    pub fn kind(&self, blocks: &[Block]) -> Option<ReasonKind> {
        match self {
            Finding::Unjudged | Finding::Difference => None,
            Finding::TooFewPairs { .. } => Some(ReasonKind::TooFewPairs),
            Finding::BlocksTooShort { .. } => Some(ReasonKind::TooFewSamples),
            Finding::Block { block } => blocks.get(*block).and_then(|b| b.problem),
            Finding::Refused { .. } => Some(ReasonKind::TargetFailed),
            Finding::HostStallsTooOften { .. } => Some(ReasonKind::HostStalls),
            Finding::Departures { .. } => Some(ReasonKind::Departures),
            Finding::Confidence { .. } => Some(ReasonKind::Confidence),
        }
    }
}

/// One look at the CI of B − A, after a pair: how it narrowed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// Pairs it was computed on.
    pub pairs: usize,
    /// Seconds from the comparison's start.
    pub at_s: f64,
    /// B − A, µs.
    pub difference: f64,
    /// Its CI, µs.
    pub low: f64,
    /// Its CI, µs.
    pub high: f64,
}

/// A comparison, finished or on its way (what [`compare`](super::compare) shows after
/// each block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// A's target.
    pub a: String,
    /// B's target.
    pub b: String,
    /// The load, req/s.
    pub rate: f64,
    /// The percentile compared, in percent.
    pub percentile: f64,
    /// Which tail is compared: every request's (`with_stalls`), or the requests no host
    /// stall touched (`without_stalls`, the scenario's `ci.tail` when a host probe runs).
    #[serde(default = "tail_before_it_was_asked")]
    pub tail: Tail,
    /// The widest CI of B − A asked for, µs (from the scenario's width, of A's value when
    /// relative; NaN before the first look).
    pub width_us: Figure,
    /// The order of the blocks.
    pub design: Design,
    /// The verdict.
    pub verdict: CompareVerdict,
    /// What the verdict rests on, with the figures its sentence quotes.
    pub finding: Finding,
    /// The watcher stopped the comparison after this many blocks, before the rule did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_after: Option<usize>,
    /// Why, in a sentence: [`finding`](Self::finding) in words (see
    /// [`render_reason`](super::render_reason)), for people and scripts that read one line.
    pub reason: String,
    /// The difference and ratio with their CIs (none before enough pairs).
    pub ci: Option<DifferenceCi>,
    /// The same at the scenario's other reported percentiles, on the same pairs (the
    /// stop was decided on the compared one).
    pub percentiles: Vec<DifferenceCi>,
    /// Every look at the CI of B − A, in order.
    pub looks: Vec<Look>,
    /// Every block, in the order measured (a duet's windows: A's and B's block of each).
    pub blocks: Vec<Block>,
    /// A duet's two servers side by side: what the comparison means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_by_side: Option<SideBySide>,
    /// A's latencies over all its blocks, as a CCDF.
    pub ccdf_a: Vec<CcdfPoint>,
    /// B's, the same.
    pub ccdf_b: Vec<CcdfPoint>,
    /// The comparison's time, seconds.
    pub seconds: f64,
}

/// What a duet compared: A and B side by side, each at the rate asked, from one client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideBySide {
    /// The stream's rate, req/s: both sides' together.
    pub stream_rate: f64,
    /// The cores the client's workers were pinned to (empty: not pinned).
    pub client_cpus: Vec<usize>,
    /// The cores the servers were found on or named (empty: not known).
    pub server_cpus: Vec<usize>,
    /// A and B are one server (A against itself): it carried both sides' requests.
    pub same_server: bool,
    /// Windows set aside: the client fell behind in them, or the host's stalls left
    /// either side too few untouched requests for the percentile.
    pub set_aside: usize,
}

/// Comparisons recorded before a tail was asked for compared every request.
fn tail_before_it_was_asked() -> Tail {
    Tail::WithStalls
}

/// What whoever watches a comparison wants next (see [`compare`](super::compare)'s
/// `observe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steer {
    /// Go on measuring.
    Go,
    /// Stop now and give the verdict on the pairs measured.
    Stop,
}
