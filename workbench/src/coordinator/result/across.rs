//! A replicated point's figures across its runs: how the across-run CIs are made, each
//! percentile's CI across the runs' estimates, and how far the runs lie apart against
//! their own CIs.

use serde::{Deserialize, Serialize};

/// How a replicated point's across-run CIs are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AcrossMethod {
    /// Student's t-interval over the runs' estimates.
    #[serde(rename = "t-interval over runs")]
    TIntervalOverRuns,
}

impl std::fmt::Display for AcrossMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AcrossMethod::TIntervalOverRuns => "t-interval over runs",
        })
    }
}

/// One percentile across a replicated point's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossRuns {
    /// In percent.
    pub p: f64,
    /// Each run's estimate, µs, in run order.
    pub estimates: Vec<f64>,
    /// Their mean.
    pub mean: f64,
    /// Their standard deviation.
    pub sd: f64,
    /// The t-interval of the mean (None for fewer than two runs).
    pub ci_low: Option<f64>,
    /// Its high end.
    pub ci_high: Option<f64>,
}

/// How far replicated runs' estimates of a percentile lie apart, against their own CIs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// In percent.
    pub p: f64,
    /// The lowest and the highest run estimate, µs.
    pub low: f64,
    /// The highest.
    pub high: f64,
    /// Cochran's Q over the runs with a CI (each weighted by its CI's precision); `None`
    /// while fewer than two runs have one.
    pub q: Option<f64>,
    /// I² = (Q − df)/Q, the share of the spread beyond what the runs' own CIs explain.
    pub i2: Option<f64>,
    /// The between-run standard deviation, µs (DerSimonian-Laird τ).
    pub tau_us: Option<f64>,
    /// Pairs of runs whose CIs do not overlap, as run numbers.
    pub disjoint: Vec<(u32, u32)>,
    /// Runs without a CI of their own (N/A for want of precision) whose estimate lies
    /// outside every other run's CI, as run numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<u32>,
    /// The lowest and highest bound of the runs' CIs, µs (what `outside` is outside of).
    pub ci_hull: (f64, f64),
}

impl Spread {
    /// `64.5 to 684.8 µs, I² = 0.97, τ = 51.3 µs, runs 4, 5 without a CI outside the
    /// others'`: the figures in a line.
    pub fn summary(&self) -> String {
        let mut text = format!("{:.1} to {:.1} µs", self.low, self.high);
        if let (Some(i2), Some(tau)) = (self.i2, self.tau_us) {
            text.push_str(&format!(", I² = {i2:.2}, τ = {tau:.1} µs"));
        }
        if !self.outside.is_empty() {
            text.push_str(&format!(
                ", run{} {} without a CI outside the others'",
                if self.outside.len() == 1 { "" } else { "s" },
                self.outside
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        text
    }

    /// Whether the runs disagree beyond their own CIs: most of the spread between the
    /// runs with a CI is beyond what those CIs explain (I² ≥ `i2`) and two of them lie
    /// apart, or a run without a CI lies outside every CI there is.
    pub fn disagrees(&self, i2: f64) -> bool {
        self.i2.is_some_and(|x| x >= i2) && !self.disjoint.is_empty() || !self.outside.is_empty()
    }
}
