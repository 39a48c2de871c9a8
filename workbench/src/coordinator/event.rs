//! What the methodology says as it works: every phase change, every test with its
//! statistic and decision, progress figures, and each load point's result. Events are the
//! one interface of the TUI, the headless printer, the recorder and replay.
//!
//! A point's result, which its last event carries, is in `result.rs`.

use serde::{Deserialize, Serialize};
use vernier_agent::StallReport;
use vernier_protocols::InterArrival;

use super::check_next::{CheckNext, Found};
use super::result::PointResult;
use crate::scenario::Method;

/// One thing the coordinator did or found: with its check typed (`C`, a [`Check`]) and its
/// point's result's reasons typed (`P`, a [`PointResult`]) as the coordinator says it, or
/// as displays show it and records hold it (`record::ShownEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event<C = Check, P = PointResult> {
    /// Seconds since the session started.
    pub at: f64,
    /// The load point (0-based, in the order measured).
    pub point: usize,
    /// The point's target rate, req/s over all agents.
    pub rate: f64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind<C, P>,
}

/// The kinds of [`Event`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind<C = Check, P = PointResult> {
    /// The methodology entered a phase.
    Phase {
        /// The phase.
        phase: Phase,
        /// Why, in words.
        detail: String,
    },
    /// One warm-up window closed.
    Window {
        /// Requests sent per second in the window, all agents.
        sent_rate: f64,
        /// Replies per second in the window, all agents.
        achieved_rate: f64,
        /// Mean latency in the window, µs (`None` if no reply completed).
        latency_mean_us: Option<f64>,
    },
    /// A test ran.
    Check(C),
    /// Live figures, twice a second.
    Progress(Progress),
    /// The user (or Ctrl-C) asked for something.
    Command {
        /// What, in words.
        command: String,
    },
    /// A load point ended.
    Verdict(Box<P>),
    /// One run of a replicated load point ended (its own verdict; the point goes on).
    Run(Box<P>),
}

/// The methodology's phases (Lancet §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Load applied; waiting for the rate and the latency to settle.
    Warmup,
    /// Testing each agent's inter-departure gaps against the target distribution.
    Interarrival,
    /// Collecting samples.
    Measure,
    /// Load paused by the user.
    Paused,
    /// The point has its verdict.
    Done,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 5] = [
        Phase::Warmup,
        Phase::Interarrival,
        Phase::Measure,
        Phase::Paused,
        Phase::Done,
    ];

    /// A short name for displays.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Warmup => "warm-up",
            Phase::Interarrival => "inter-arrival",
            Phase::Measure => "measure",
            Phase::Paused => "paused",
            Phase::Done => "done",
        }
    }
}

/// Declares [`CheckKind`] and its [`CheckKind::ALL`] from one list, so that a check added
/// to the enum is in every list made from `ALL` (the names `vernier replay --until`
/// accepts) without another edit.
macro_rules! check_kinds {
    ($($(#[$doc:meta])* $name:ident,)+) => {
        /// The tests the methodology runs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum CheckKind {
            $($(#[$doc])* $name,)+
        }

        impl CheckKind {
            /// Every check, in the methodology's order.
            pub const ALL: &'static [CheckKind] = &[$(CheckKind::$name,)+];
        }
    };
}

check_kinds! {
    /// Achieved rate within tolerance of the target (warm-up).
    Rate,
    /// ADF on the per-window latency series (warm-up).
    WarmupStationarity,
    /// Anderson-Darling (or dispersion, for fixed gaps) on inter-departure gaps.
    Interarrival,
    /// Spearman correlation of the samples in send order.
    Independence,
    /// ADF on the samples in send order.
    Stationarity,
    /// Every agent's CI of the target percentile overlaps the others'.
    Agreement,
    /// The combined CI of the target percentile is narrow enough.
    Confidence,
    /// The client's late departures do not move the target percentile (`method: vernier`).
    Departures,
}

impl CheckKind {
    /// Its one name, as records, displays and `vernier replay --until` spell it: serde's.
    pub fn name(self) -> &'static str {
        serde_variant::to_variant_name(&self).unwrap_or("unknown")
    }
}

/// One test's outcome, with the figures behind it: what it found and what comes next, as
/// data that [`super::text::check`] writes in words wherever a check is shown or recorded
/// ([`super::text::check::ShownCheck`], which also makes its `Serialize`).
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Which test.
    pub check: CheckKind,
    /// The agent tested, or `None` for all together.
    pub agent: Option<usize>,
    /// Whether the test's statistic passed, whatever its role (see [`Check::outcome`]
    /// for what that does to the point).
    pub pass: bool,
    /// Whether its failure stops the methodology or is only reported (a reported check that
    /// fails is never drawn as a failure).
    pub role: CheckRole,
    /// The test statistic (A², ρ, the ADF t, the CI width in µs, the achieved rate...).
    pub statistic: Option<f64>,
    /// Its p-value, where the test has one.
    pub pvalue: Option<f64>,
    /// The sample size the test saw.
    pub n: usize,
    /// What was found (JSON: `detail`, in words).
    pub found: Found,
    /// What the methodology does next, when the check decides it (JSON: `decision`, in
    /// words; empty for none).
    pub next: Option<CheckNext>,
    /// Data for plots: the gap histogram, the correlogram.
    pub data: Option<CheckData>,
}

impl Check {
    /// What its result does to the point: a check that gates nothing never fails.
    pub fn outcome(&self) -> CheckOutcome {
        Check::outcome_of(self.pass, self.role)
    }

    /// The outcome of a check that passed or not (`pass`) in `role`.
    pub fn outcome_of(pass: bool, role: CheckRole) -> CheckOutcome {
        match (pass, role) {
            (true, _) => CheckOutcome::Passed,
            (false, CheckRole::Gate) => CheckOutcome::Failed,
            (false, CheckRole::Report) => CheckOutcome::Reported,
        }
    }
}

#[cfg(test)]
impl Check {
    /// An agent's independence check as `method: vernier` reports it (correlated up to
    /// lag 4, which the CI allows for): the check the displays' tests show.
    pub(crate) fn example() -> Check {
        Check {
            check: CheckKind::Independence,
            agent: Some(0),
            pass: false,
            role: CheckRole::Report,
            statistic: Some(0.21),
            pvalue: Some(0.0),
            n: 5003,
            found: Found::Spearman(super::findings::SpearmanFinding::Tested {
                rho: 0.21.into(),
                pvalue: 0.0.into(),
                lag: Some(4),
                last_lag: 4,
            }),
            next: Some(CheckNext::CorrelationAllowed { lag: Some(4) }),
            data: None,
        }
    }
}

/// What a [`Check`]'s result does to the point (JSON: `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// It passed.
    Passed,
    /// A gate failed: the point is held back (more samples, another try, or N/A).
    Failed,
    /// A check that gates nothing did not pass: said, and the methodology goes on (never
    /// drawn or written as a failure).
    Reported,
}

/// What a [`Check`]'s outcome does to the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckRole {
    /// A failure holds the point back (collect more, try again, or N/A).
    #[default]
    Gate,
    /// Only reported: `method: vernier`'s independence (the CI allows for dependence) and
    /// inter-arrival tests (the departures are judged by their effect), or a check the
    /// scenario waives (`interarrival_check: report`).
    Report,
}

impl CheckRole {
    /// The role of check `kind` under `method`, with the scenario's inter-arrival test
    /// `enforced` or only reported: under `method: vernier` the independence test is
    /// reported (the CI allows for dependence) and so is the inter-arrival test (the
    /// departures are judged by their effect); under `method: lancet` both are gates, the
    /// inter-arrival test unless the scenario waives it. Every other check is a gate.
    pub fn of(kind: CheckKind, method: Method, interarrival_enforced: bool) -> CheckRole {
        let vernier = method == Method::Vernier;
        let reported = match kind {
            CheckKind::Independence => vernier,
            CheckKind::Interarrival => vernier || !interarrival_enforced,
            CheckKind::Rate
            | CheckKind::WarmupStationarity
            | CheckKind::Stationarity
            | CheckKind::Agreement
            | CheckKind::Confidence
            | CheckKind::Departures => false,
        };
        if reported {
            CheckRole::Report
        } else {
            CheckRole::Gate
        }
    }
}

/// Plot data carried by a [`Check`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CheckData {
    /// The inter-departure gaps, binned from 0 in `bin_ns` steps.
    Histogram {
        /// The width of a bin, ns.
        bin_ns: f64,
        /// Gaps per bin (the last bin holds everything beyond).
        counts: Vec<u64>,
        /// The mean gap the target distribution has, ns.
        target_mean_ns: f64,
        /// The target process (`exp`, `fixed`, or a distribution's shape; its spec in
        /// JSON).
        shape: InterArrival,
    },
    /// Spearman's ρ at each lag tried.
    Correlogram {
        /// (lag, ρ, p-value) for each lag tried.
        lags: Vec<(usize, f64, f64)>,
    },
}

/// Live figures for displays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The current phase.
    pub phase: Phase,
    /// Per agent.
    pub agents: Vec<AgentProgress>,
    /// Samples in the current measurement, all agents.
    pub samples: usize,
    /// Samples the current measurement round waits for, per agent.
    pub samples_wanted: usize,
    /// The share of requests kept.
    pub sampling_rate: f64,
    /// The combined CI width of the target percentile at the last check, µs.
    pub ci_width_us: Option<f64>,
    /// The target width, µs; `None` while a width relative to the percentile has no
    /// estimate to be relative to.
    #[serde(default)]
    pub ci_target_us: Option<f64>,
    /// Measurement rounds so far.
    pub tries: u32,
    /// Seconds until the current round has its samples, if measuring.
    pub eta_s: Option<f64>,
    /// The point's time limit (pauses excluded), seconds: the scenario's, or more after
    /// the user's "continue".
    #[serde(default)]
    pub max_duration_s: f64,
    /// Seconds of the point so far (pauses excluded).
    #[serde(default)]
    pub elapsed_s: f64,
    /// The latency CCDF of the current round's samples, all agents: (latency µs, share
    /// of samples above it) at 50%, 20%, 10%, 5%... down to what the samples can show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ccdf: Vec<(f64, f64)>,
    /// The host's stalls seen by each probe while the current round measured, or while the
    /// point warms up (see [`PointResult::host`]); empty without probes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<StallReport>,
}

/// One agent's live figures over the last half second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentProgress {
    /// Requests sent per second.
    pub sent_rate: f64,
    /// Replies per second.
    pub achieved_rate: f64,
    /// Median latency, µs.
    pub p50_us: Option<f64>,
    /// Requests that failed in this point so far.
    #[serde(default)]
    pub errors: u64,
    /// 99th percentile latency, µs.
    pub p99_us: Option<f64>,
    /// 99th percentile of actual minus scheduled departure, µs.
    pub send_lag_p99_us: Option<f64>,
    /// Due requests waiting for a free connection slot now.
    pub backlog: u64,
    /// The last inter-arrival test's p-value.
    pub interarrival_pvalue: Option<f64>,
    /// The lag at which the samples looked independent.
    pub independence_lag: Option<usize>,
    /// This agent's CI width of the target percentile at the last check, µs.
    pub ci_width_us: Option<f64>,
    /// Samples kept in the current measurement.
    pub samples: usize,
    /// The agent was lost and the run goes on without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}
