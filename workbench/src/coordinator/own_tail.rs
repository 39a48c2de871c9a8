//! The tail without the host's stalls, as a point's result carries it (`without_stalls`):
//! the requests no stall of a probed core touched (nor the backlog it left), weighted
//! against the selection ([`vernier_stats::without_stalls`]'s method), each reported
//! percentile with its dependence-valid CI, the share touched, and whether the target
//! percentile's CI is as narrow as asked.

use serde::{Deserialize, Serialize};

use super::result::{PercentileResult, Verdict};

/// The tail without the host's stalls (`without_stalls` in a point's JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WithoutStalls {
    /// Converged when the target percentile's CI is as narrow as asked; never accepted.
    pub verdict: Verdict,
    /// Why not converged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short: Option<OwnShort>,
    /// Each reported percentile of the untouched requests, with its CI, µs.
    pub percentiles: Vec<PercentileResult>,
    /// The target percentile's CI width, µs.
    pub ci_width_us: Option<f64>,
    /// The share of the measured requests a stall touched.
    pub touched_share: f64,
    /// Each measuring agent's share touched, in agent order.
    pub touched_by_agent: Vec<f64>,
    /// Requests left (untouched).
    pub samples: usize,
    /// Stall intervals the probes recorded during the point.
    pub stalls: usize,
    /// Whose stalls were known: the client's cores only, or the target's too.
    pub probed: Probed,
}

/// Whose cores the probes watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Probed {
    /// The client's and the (local) target's cores: "without stalls" is without the host's.
    ClientAndTarget,
    /// The client's only (a remote target's host is not probed): "without stalls" means
    /// without the client's.
    ClientOnly,
}

/// Why the tail without stalls did not converge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OwnShort {
    /// Its CI is wider than asked.
    Wide {
        /// The CI's width, µs.
        width_us: f64,
        /// The width asked, µs.
        target_us: f64,
    },
    /// Too few untouched samples (for the dependence they show) for a CI.
    TooFew {
        /// Untouched samples.
        have: usize,
        /// About how many would do.
        needed: usize,
    },
    /// No probe recorded stall intervals, so no request can be said untouched.
    NoProbe,
    /// The samples were thinned (1 in k kept): whether a request was still in flight at a
    /// stall's end cannot be told from them.
    Thinned {
        /// The share kept.
        sampling: f64,
    },
}

impl WithoutStalls {
    /// Percentile `p` (in percent), if reported.
    pub fn percentile(&self, p: f64) -> Option<&PercentileResult> {
        self.percentiles.iter().find(|q| (q.p - p).abs() < 1e-9)
    }
}
