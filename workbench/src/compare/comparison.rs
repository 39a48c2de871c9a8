//! A comparison's values: how it is run, what each block measured, every look at the CI
//! and the verdict. They sit apart from `compare.rs`, which re-exports them, so that the
//! files that build a comparison and the report that draws one import them without a
//! circle through their parent.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use vernier_stats::DifferenceCi;

use crate::report::CcdfPoint;

/// How a comparison is run.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Each block's measuring time (after the load's own 300 ms warm-up).
    pub block: Duration,
    /// The most pairs of blocks before the verdict.
    pub max_pairs: usize,
    /// The seed of the pairs' orders.
    pub seed: u64,
    /// Interleaved pairs, or all of A then all of B.
    pub design: Design,
}

/// In what order the blocks are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Pairs of blocks, A and B in a random order within each: a drifting host reaches
    /// both alike.
    #[default]
    Interleaved,
    /// Every block of A, then every block of B, as two runs one after the other would be:
    /// what interleaving guards against, kept to show it (`--design sequential`).
    Sequential,
}

/// What one block measured, and how it was judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// `"A"` or `"B"`.
    pub side: String,
    /// The pair it belongs to, from 0.
    pub pair: usize,
    /// Its place in time, from 0.
    pub order: usize,
    /// When it started measuring, seconds from the comparison's start.
    pub started_s: f64,
    /// Requests answered and kept (every one).
    pub samples: usize,
    /// The block's percentile, µs (NaN: it measured nothing).
    #[serde(deserialize_with = "nan_from_null")]
    pub value_us: f64,
    /// Requests sent while measuring.
    pub sent: u64,
    /// Requests the rate asks for over the block (its Poisson mean).
    pub asked: f64,
    /// The share of its requests that left within the on-schedule tolerance.
    pub on_schedule: f64,
    /// The block's percentile less that of its requests sent on schedule, µs: how far the
    /// client's lateness moved it (NaN: none was sent on schedule).
    #[serde(deserialize_with = "nan_from_null")]
    pub late_shift_us: f64,
    /// The p99 of how late its requests left against their schedule, µs.
    pub send_lag_p99_us: f64,
    /// The largest backlog of requests due but not sent.
    pub backlog_max: u64,
    /// Requests that failed or timed out.
    pub failed: u64,
    /// Why the block cannot stand for its side at the load asked (none: it can).
    pub problem: Option<String>,
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
            CompareVerdict::NotAvailable => "n/a",
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
    /// The widest CI of B − A asked for, µs (from the scenario's width, of A's value when
    /// relative; NaN before the first look).
    #[serde(deserialize_with = "nan_from_null")]
    pub width_us: f64,
    /// The order of the blocks.
    pub design: Design,
    /// The verdict.
    pub verdict: CompareVerdict,
    /// Why, in a sentence.
    pub reason: String,
    /// The difference and ratio with their CIs (none before enough pairs).
    pub ci: Option<DifferenceCi>,
    /// The same at the scenario's other reported percentiles, on the same pairs (the
    /// stop was decided on the compared one).
    pub percentiles: Vec<DifferenceCi>,
    /// Every look at the CI of B − A, in order.
    pub looks: Vec<Look>,
    /// Every block, in the order measured.
    pub blocks: Vec<Block>,
    /// A's latencies over all its blocks, as a CCDF.
    pub ccdf_a: Vec<CcdfPoint>,
    /// B's, the same.
    pub ccdf_b: Vec<CcdfPoint>,
    /// The comparison's time, seconds.
    pub seconds: f64,
}

/// Reads back a value that may be NaN: JSON has no NaN and serde_json writes it as `null`,
/// so without this a recorded comparison with a block that measured nothing, or stopped
/// before its first look, could not be read again.
fn nan_from_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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
