//! What the methodology says as it works: every phase change, every test with its
//! statistic and decision, progress figures, and each load point's result. Events are the
//! one interface of the TUI, the headless printer, the recorder and replay.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One thing the coordinator did or found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the session started.
    pub at: f64,
    /// The load point (0-based, in the order measured).
    pub point: usize,
    /// The point's target rate, req/s over all agents.
    pub rate: f64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// The kinds of [`Event`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
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
    Check(Check),
    /// Live figures, twice a second.
    Progress(Progress),
    /// The user (or Ctrl-C) asked for something.
    Command {
        /// What, in words.
        command: String,
    },
    /// A load point ended.
    Verdict(Box<PointResult>),
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

/// The tests the methodology runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
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
}

impl CheckKind {
    /// A short name for displays.
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::Rate => "rate",
            CheckKind::WarmupStationarity => "warm-up ADF",
            CheckKind::Interarrival => "inter-arrival",
            CheckKind::Independence => "independence",
            CheckKind::Stationarity => "stationarity",
            CheckKind::Agreement => "agreement",
            CheckKind::Confidence => "confidence",
        }
    }
}

/// One test's outcome, with the figures behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Which test.
    pub check: CheckKind,
    /// The agent tested, or `None` for all together.
    pub agent: Option<usize>,
    /// Whether it passed.
    pub pass: bool,
    /// The test statistic (A², ρ, the ADF t, the CI width in µs, the achieved rate...).
    pub statistic: Option<f64>,
    /// Its p-value, where the test has one.
    pub pvalue: Option<f64>,
    /// The sample size the test saw.
    pub n: usize,
    /// What was found, in words.
    pub detail: String,
    /// What the methodology does next.
    pub decision: String,
    /// Data for plots: the gap histogram, the correlogram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<CheckData>,
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
        /// The target distribution (`exp`, `fixed`, or a spec).
        shape: String,
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
    /// The target width, µs.
    pub ci_target_us: f64,
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

/// A load point's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every check passed and the CI is as narrow as asked.
    Converged,
    /// No honest number: see the reasons.
    #[serde(rename = "n/a")]
    NotAvailable,
    /// The user accepted the current result before convergence.
    Accepted,
}

impl Verdict {
    /// As printed.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Converged => "converged",
            Verdict::NotAvailable => "n/a",
            Verdict::Accepted => "accepted",
        }
    }
}

/// Why a point is N/A (or what was doubtful about an accepted one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// A stable name: `load_not_reached`, `closed_loop`, `interarrival`, `independence`,
    /// `stationarity`, `warmup_stationarity`, `agents_disagree`, `too_few_samples`,
    /// `heavy_tail`, `confidence`, `quit`, `agent_lost`, `target_failed`, `accepted_empty`.
    pub check: String,
    /// What was found, with its figures, in words.
    pub detail: String,
    /// The figures.
    pub figures: BTreeMap<String, f64>,
}

impl Reason {
    /// What a user can change so that the next run has an answer.
    pub fn suggestion(&self) -> &'static str {
        match self.check.as_str() {
            "load_not_reached" => {
                "the agents cannot send this rate: add workers or agents, or ask for less load"
            }
            "closed_loop" => {
                "too few request slots for this load and latency: raise connections (or depth) to the figure above"
            }
            "interarrival" => {
                "departures do not follow the arrival process: pin the workers (cpus), add workers, or lower the load"
            }
            "independence" => {
                "latencies stay correlated: sample less (sampling.rate), allow more time (limits), or find the server's periodic stalls"
            }
            "stationarity" => {
                "latency drifts while measuring: warm up longer (warmup.max) or look for a trend on the server (GC, compaction)"
            }
            "warmup_stationarity" => {
                "latency never settled: warm up longer (warmup.max), or the server cannot sustain this rate"
            }
            "agents_disagree" => {
                "agents see different latencies: compare their paths to the target (NUMA, NIC queues, routes)"
            }
            "too_few_samples" | "confidence" | "heavy_tail" => {
                "ask for less (a wider ci.width or a lower percentile) or allow more (limits.max_duration, max_tries; c continues live)"
            }
            "quit" => "stopped by the user: run again for a verdict",
            "agent_lost" => {
                "an agent stopped answering: check its host and network, then run again"
            }
            "accepted_empty" => "accept once measurement has started",
            _ => "see the detail above",
        }
    }
}

/// One percentile with its confidence interval, µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileResult {
    /// In percent.
    pub p: f64,
    /// The estimate.
    pub value: f64,
    /// The CI's low end (`None` when the samples are too few for a CI).
    pub ci_low: Option<f64>,
    /// The CI's high end.
    pub ci_high: Option<f64>,
}

/// The inter-arrival test of one agent, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterarrivalResult {
    /// A² (exponential) or the coefficient of variation (fixed).
    pub statistic: f64,
    /// The p-value, where the test has one.
    pub pvalue: Option<f64>,
    /// Whether the gaps fit.
    pub pass: bool,
}

/// One agent's share of a point's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    /// Replies per second during the point.
    pub achieved_rate: f64,
    /// The inter-arrival test.
    pub interarrival: Option<InterarrivalResult>,
    /// 99th percentile of actual minus scheduled departure during measurement, µs.
    pub send_lag_p99_us: Option<f64>,
    /// The most due requests that waited for a free slot at once.
    pub backlog_max: u64,
    /// Requests that failed (timeouts, lost connections) or were answered with an error.
    pub errors: u64,
    /// Samples kept.
    pub samples: usize,
    /// The target percentile from this agent's samples alone, with its CI: agents that
    /// agree have overlapping intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile: Option<PercentileResult>,
    /// Why the agent was lost, if it was and the run went on without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// A load point's result: the JSON object `vernier run --headless` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// The verdict.
    pub verdict: Verdict,
    /// Why N/A (empty when converged).
    pub reasons: Vec<Reason>,
    /// Checks that failed but that the scenario asked only to report
    /// (`interarrival_check: report`): the result stands with them, not certified by them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waived: Vec<Reason>,
    /// req/s over all agents.
    pub target_rate: f64,
    /// Replies per second over all agents during the point.
    pub achieved_rate: f64,
    /// The timestamp source in use.
    pub timestamps: String,
    /// Samples the percentiles were computed from.
    pub samples: usize,
    /// The share of requests kept.
    pub sampling_rate: f64,
    /// Seconds from the point's start to its verdict.
    pub duration_s: f64,
    /// Each reported percentile with its CI, µs.
    pub percentiles: Vec<PercentileResult>,
    /// The target percentile.
    pub target_percentile: f64,
    /// The combined CI width of the target percentile, µs.
    pub ci_width_us: Option<f64>,
    /// Measurement rounds used.
    pub tries: u32,
    /// The fewest samples the CI formula needs for the target percentile.
    pub min_samples: usize,
    /// The measurement round whose samples the result uses (the `round` column of
    /// samples.parquet).
    pub round: u32,
    /// Per agent.
    pub agents: Vec<AgentResult>,
    /// The run directory, once recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
}

impl PointResult {
    /// The entry of percentile `p`, if it was reported.
    pub fn percentile(&self, p: f64) -> Option<&PercentileResult> {
        self.percentiles.iter().find(|q| (q.p - p).abs() < 1e-9)
    }

    /// The target percentile's entry.
    pub fn target(&self) -> Option<&PercentileResult> {
        self.percentile(self.target_percentile)
    }

    /// Percentile `p` as tables show it (`231.5 [224.0, 238.1]`), or `-`.
    pub fn percentile_text(&self, p: f64) -> String {
        self.percentile(p)
            .map_or("-".to_string(), |q| q.to_string())
    }
}

/// `231.5 [224.0, 238.1]`, or `231.5 [no CI]` when there is none.
impl std::fmt::Display for PercentileResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.ci_low, self.ci_high) {
            (Some(lo), Some(hi)) => write!(f, "{:.1} [{lo:.1}, {hi:.1}]", self.value),
            _ => write!(f, "{:.1} [no CI]", self.value),
        }
    }
}
