//! What a check found, as data: the figures a check's line and the reasons that quote it
//! are both rendered from ([`super::text`]). The tests compute these; none writes words.

use serde::{Deserialize, Serialize};
use vernier_agent::StallReport;
use vernier_protocols::InterArrival;
use vernier_stats::Percentile;

use super::figure::Figure;

/// The ADF test of a series in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum AdfFinding {
    /// The test ran.
    Tested {
        /// ADF's t statistic.
        t: Figure,
        /// Its 5% critical value.
        critical_5: Figure,
        /// Its p-value.
        pvalue: Figure,
        /// Lags the regression used.
        lags: usize,
        /// Whether a unit root was rejected.
        stationary: bool,
    },
    /// The series does not vary (the regression is singular, not the series).
    Flat,
    /// The test could not run.
    Failed {
        /// Why, as the statistics said it.
        error: String,
    },
}

/// Spearman's correlation of latencies in send order, searched up the lag ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum SpearmanFinding {
    /// The search ran.
    Tested {
        /// ρ at lag 1.
        rho: Figure,
        /// Its p-value.
        pvalue: Figure,
        /// The lag from which the samples are independent (none on the ladder).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lag: Option<usize>,
        /// The last lag tried.
        last_lag: usize,
    },
    /// Too few samples to test.
    TooFew,
    /// The test could not run.
    Failed {
        /// Why, as the statistics said it.
        error: String,
    },
}

/// How an agent's inter-departure gaps were tested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "test", rename_all = "snake_case")]
pub enum GapTest {
    /// Anderson-Darling against an exponential (estimated scale).
    AndersonDarling {
        /// A².
        statistic: Figure,
        /// Its 5% critical value.
        critical_5: Figure,
        /// Its p-value (interpolated within the table, clamped beyond it).
        pvalue: Figure,
        /// Whether the gaps fit.
        fits: bool,
    },
    /// Anderson-Darling could not run.
    AndersonDarlingFailed {
        /// Why.
        error: String,
    },
    /// The coefficient of variation of fixed gaps.
    Dispersion {
        /// The coefficient of variation.
        cv: Figure,
        /// The most allowed.
        max_cv: Figure,
    },
    /// No tabulated test for the shape: the mean alone.
    MeanOnly {
        /// The shape asked (its spec in JSON).
        shape: InterArrival,
    },
}

/// Why exponential gaps do not fit, when their shape says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "misfit", rename_all = "snake_case")]
pub enum GapMisfit {
    /// Hardly any gap shorter than a floor: the per-request send cost.
    Floor {
        /// The floor (0.5th percentile of the gaps), µs.
        floor_us: Figure,
        /// The share of an exponential's gaps below it.
        exponential_share: Figure,
    },
    /// Too many short gaps: departures in bursts.
    Bursts {
        /// The share of gaps under `short_us`.
        share: Figure,
        /// The short gap, µs.
        short_us: Figure,
        /// An exponential's share under it.
        exponential_share: Figure,
    },
}

/// What an agent's inter-arrival test found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterarrivalFinding {
    /// The test and its figures.
    pub test: GapTest,
    /// The gaps' mean, µs.
    pub mean_gap_us: Figure,
    /// The mean the process asks for, µs.
    pub target_gap_us: Figure,
    /// How far off the mean is (a share), when beyond what chance allows and the test
    /// has a fit of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_off: Option<f64>,
    /// Why exponential gaps do not fit, when their shape says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misfit: Option<GapMisfit>,
}

/// Why requests left late, as the departure check diagnoses it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum LateCause {
    /// Every connection waited for a reply at once while the client's host was quiet.
    TargetPaused {
        /// Due requests held back at once.
        backlog: u64,
        /// The longest lag (the pause), µs.
        lag_max_us: Figure,
        /// Connections per agent that keep the load open through it.
        through_pause: usize,
        /// Requests outstanding per connection.
        depth: usize,
        /// Connections per agent given.
        connections: usize,
    },
    /// The client's host wakes it late: most requests late with free slots.
    WokenLate {
        /// The probe that saw it.
        host: StallReport,
    },
    /// Most requests on time, some waiting for the core: stalls the probe saw.
    HostStalls {
        /// The probe that saw them.
        host: StallReport,
    },
    /// Requests waited for a free slot: too few connections for this load.
    Backlog {
        /// Due requests held back at once.
        backlog: u64,
        /// Connections per agent.
        connections: usize,
        /// Requests outstanding per connection.
        depth: usize,
    },
    /// Half the requests leave late: one worker cannot keep pace.
    SendCost {
        /// Requests a second per worker.
        per_worker_rate: Figure,
    },
    /// Some requests wait for the core, with no probe to name.
    UnseenStalls,
}

/// What the departure check found: the target percentile of the requests sent on
/// schedule against that of all, the send lags, and why requests left late.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepartureFinding {
    /// The percentile.
    pub p: Percentile,
    /// The share of requests sent on schedule.
    pub on_schedule_share: Figure,
    /// How late a request may leave and be on schedule, µs.
    pub on_schedule_within_us: Figure,
    /// The percentile of the requests sent on schedule, µs (none: too few to tell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_schedule_us: Option<f64>,
    /// Its interval, µs, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_schedule_ci: Option<(f64, f64)>,
    /// The percentile of all requests, µs.
    pub all_us: Figure,
    /// The difference allowed, µs (± this).
    pub allowed_us: Figure,
    /// The share of the CI width asked that `allowed_us` is.
    pub share_of_width: Figure,
    /// The send lag's median, µs.
    pub send_lag_p50_us: Figure,
    /// Its 99th percentile, µs.
    pub send_lag_p99_us: Figure,
    /// Its maximum, µs.
    pub send_lag_max_us: Figure,
    /// The most due requests that waited for a free slot at once.
    pub backlog_max: u64,
    /// Why requests left late.
    pub cause: LateCause,
}
