//! The figures of a CI that did not answer (the `confidence` kind, and the width a
//! `heavy_tail` or `host_stalls` reason quotes): wider than asked, narrow but not yet
//! stopped by the rule, or cut short by the time limit; for the tail without stalls, its
//! width against the one asked. Re-exported by [`super::reason`].

use serde::{Deserialize, Serialize};
use vernier_agent::StallReport;
use vernier_stats::Percentile;

use super::figure::Figure;

/// How the tail looked when the CI stayed wide: its heaviness against an exponential's at
/// the percentile and inside the tail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wide {
    /// The percentile.
    pub p: Percentile,
    /// The CI's width, µs.
    pub ci_width_us: Figure,
    /// The width asked, µs.
    pub target_us: Figure,
    /// Samples in all.
    pub samples: usize,
    /// Samples the width asks for (it narrows as 1/√n).
    pub samples_needed: usize,
    /// How much the dependence inflated the variance (`method: vernier`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_inflation: Option<f64>,
    /// Samples per batch (`method: vernier`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<usize>,
    /// The order-statistic width against an exponential tail's at `p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heaviness: Option<f64>,
    /// The order-statistic width against an exponential tail's at the percentile inside
    /// the tail (`inside`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heaviness_inside: Option<f64>,
    /// The percentile inside the tail the shape was judged at too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside: Option<Percentile>,
    /// Stalls the host probe saw, too few to be named the cause (a part of it still).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<StallReport>,
}

/// `confidence`: the CI did not reach the width asked, or reached it too late to be
/// confirmed. (Untagged, read back as the first variant whose fields are all there:
/// `Narrow` holds every field `Wide` requires, so it comes first. The tail without
/// stalls' two are never read here: they share a shape, which an older record's reason
/// might have too; `without_stalls.short` writes and reads them in a form of its own.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Confidence {
    /// As narrow as asked at the last look, but the stop it needed did not fit in the time.
    Narrow(Narrow),
    /// Still wider than asked at the last look.
    Wide(Wide),
    /// The time limit ran out while measuring.
    OutOfTime(OutOfTime),
    /// The tail without stalls' CI is wider than asked at the point's end.
    #[serde(skip_deserializing)]
    UntouchedWide(UntouchedCi),
    /// The tail without stalls' CI was as narrow as asked at the last look, but the
    /// stopping rule's confirming look did not come before the point ended.
    #[serde(skip_deserializing)]
    Unsettled(UntouchedCi),
}

/// The tail without stalls' CI at the point's end against the width asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntouchedCi {
    /// The CI's width, µs.
    pub ci_width_us: Figure,
    /// The width asked, µs.
    pub target_us: Figure,
}

/// The CI was as narrow as asked at the last look, but the stopping rule's stop needed
/// more samples than the time left could give: its confirming look, or more effective tail
/// samples (stats/src/sequential.rs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Narrow {
    /// The percentile.
    pub p: Percentile,
    /// The CI's width, µs (at most `target_us`).
    pub ci_width_us: Figure,
    /// The width asked, µs.
    pub target_us: Figure,
    /// Samples in all at the last look.
    pub samples: usize,
    /// Samples in all the stop needs (more than `samples`).
    pub samples_needed: usize,
    /// The look's number (from 1).
    pub look: u32,
    /// The effective tail samples the CI rests on.
    pub effective_tail: Figure,
    /// The effective tail samples a stop at this look needs.
    pub tail_needed: Figure,
    /// What the stop waited for.
    pub waits: Awaited,
}

/// What a narrow look's stop waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaited {
    /// The next look, which confirms a narrow, steady one.
    Confirmation,
    /// More effective tail samples than the look rested on.
    Tail,
}

/// The point's time limit ran out: while it measured (`confidence`, `host_stalls`, with
/// the percentile), or in a phase before (`interarrival`, without). Records wrote these two
/// in the same shape, the percentile left out where there was none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutOfTime {
    /// The percentile measured, when the time ran out while measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<Percentile>,
    /// The limit, seconds.
    pub max_duration_s: Figure,
    /// The last CI's width, µs, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_width_us: Option<f64>,
}
