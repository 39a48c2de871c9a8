//! Why a point has no honest number (or what was doubtful about an accepted one): each
//! kind of reason with the figures behind it, as data. Decisions build these and never
//! write sentences; [`super::text`] renders every one of them, and a record carries both
//! the figures and the sentence they make (`check`, `figures`, `detail`).

use serde::{Deserialize, Serialize};
use vernier_agent::StallReport;
use vernier_protocols::InterArrival;
use vernier_stats::Percentile;

use super::figure::Figure;
use super::findings::{AdfFinding, DepartureFinding, InterarrivalFinding, SpearmanFinding};
pub use super::reason_ci::{Awaited, Confidence, Narrow, OutOfTime, UntouchedCi, Wide};
pub use super::reason_kind::ReasonKind;

/// Why a point is N/A (or what was doubtful about an accepted one): its kind and figures
/// ([`Why`]), and for a replicated point's run, which run. Serialized as the record has
/// always carried it: `check`, `figures`, `detail` (the sentence, rendered by
/// [`super::text`], which also holds its `Serialize`), and `run`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "Recorded")]
pub struct Reason {
    /// What it is about, with its figures.
    pub why: Why,
    /// The run of a replicated point it happened in.
    pub run: Option<u32>,
    /// For a kind more samples can answer: what they would take.
    pub more_time: Option<MoreTime>,
    /// Whether the latency drifts (the variance inflation kept growing with the batch
    /// size): a need the reason gives, predicted at 1/√n, is one no time would meet, and
    /// it has no `more_time`.
    pub drifts: bool,
}

/// What the samples the precision asked needs would take at the point's rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MoreTime {
    /// The samples, in all.
    #[serde(rename = "samples_needed_in_all")]
    pub samples: usize,
    /// Seconds more.
    #[serde(rename = "more_time_s")]
    pub seconds: Figure,
}

impl Reason {
    /// A reason of no particular run.
    pub fn new(why: Why) -> Reason {
        Reason {
            why,
            run: None,
            more_time: None,
            drifts: false,
        }
    }

    /// Its kind.
    pub fn kind(&self) -> ReasonKind {
        self.why.kind()
    }
}

impl From<Why> for Reason {
    fn from(why: Why) -> Reason {
        Reason::new(why)
    }
}

/// A [`Reason`] as records hold it (written by [`super::text`], which renders `detail`).
#[derive(Serialize, Deserialize)]
pub(crate) struct Recorded {
    #[serde(flatten)]
    pub(crate) why: Why,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<u32>,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub(crate) more_time: Option<MoreTime>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) drifts: bool,
    /// Rendered on the way out; read back only to be rendered again.
    #[serde(default)]
    pub(crate) detail: String,
}

impl From<Recorded> for Reason {
    fn from(r: Recorded) -> Reason {
        Reason {
            why: r.why,
            run: r.run,
            more_time: r.more_time,
            drifts: r.drifts,
        }
    }
}

/// Each kind of reason with its figures (JSON: `check` and `figures`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "check", content = "figures", rename_all = "snake_case")]
pub enum Why {
    /// The agents could not send the rate asked.
    LoadNotReached(NotReached),
    /// Too few request slots: the load turned closed-loop.
    ClosedLoop(ClosedLoop),
    /// The departures do not follow the arrival process.
    Interarrival(Interarrival),
    /// The client's late departures move the answer.
    Departures(Departures),
    /// The samples stay correlated (`method: lancet`).
    Independence(Independence),
    /// An agent's latencies drift while measuring.
    Stationarity(Stationarity),
    /// The latency never settled during warm-up.
    WarmupStationarity(WarmupStationarity),
    /// The agents' intervals do not overlap.
    AgentsDisagree(AgentsDisagree),
    /// Too few samples for the interval.
    TooFewSamples(TooFewSamples),
    /// The service's own tail is too heavy for the samples the limit allows.
    HeavyTail(HeavyTail),
    /// The host's stalls keep the interval wide.
    HostStalls(HostStalls),
    /// The interval did not reach the width asked.
    Confidence(Confidence),
    /// The user quit.
    Quit(Quit),
    /// An agent was lost.
    AgentLost(AgentLost),
    /// The target stopped answering.
    TargetFailed(TargetFailed),
    /// Accepted before anything was measured.
    AcceptedEmpty(Nothing),
    /// Replicated runs disagree beyond their own CIs.
    Hysteresis(Hysteresis),
    /// The runs are too few for the across-run CI asked.
    Replications(Replications),
    /// Stalls touched more of the requests than the tail without them is judged at.
    Touched(Touched),
    /// No probe recorded stall intervals, so no request can be said untouched.
    NoProbe(Nothing),
    /// The samples were thinned, so which requests a stall touched cannot be told.
    Thinned(Thinned),
}

impl Why {
    /// Whether it says a valid CI stayed wider than asked (the point then answers `wide`
    /// with it), rather than that no valid CI exists.
    pub fn leaves_a_ci(&self) -> bool {
        matches!(
            self,
            Why::Confidence(Confidence::Wide(_) | Confidence::UntouchedWide(_))
                | Why::HeavyTail(HeavyTail::Wide(_))
                | Why::HostStalls(HostStalls {
                    kept: HostKept::Wide(_),
                    ..
                })
        )
    }

    /// Its kind.
    pub fn kind(&self) -> ReasonKind {
        match self {
            Why::LoadNotReached(_) => ReasonKind::LoadNotReached,
            Why::ClosedLoop(_) => ReasonKind::ClosedLoop,
            Why::Interarrival(_) => ReasonKind::Interarrival,
            Why::Departures(_) => ReasonKind::Departures,
            Why::Independence(_) => ReasonKind::Independence,
            Why::Stationarity(_) => ReasonKind::Stationarity,
            Why::WarmupStationarity(_) => ReasonKind::WarmupStationarity,
            Why::AgentsDisagree(_) => ReasonKind::AgentsDisagree,
            Why::TooFewSamples(_) => ReasonKind::TooFewSamples,
            Why::HeavyTail(_) => ReasonKind::HeavyTail,
            Why::HostStalls(_) => ReasonKind::HostStalls,
            Why::Confidence(_) => ReasonKind::Confidence,
            Why::Quit(_) => ReasonKind::Quit,
            Why::AgentLost(_) => ReasonKind::AgentLost,
            Why::TargetFailed(_) => ReasonKind::TargetFailed,
            Why::AcceptedEmpty(_) => ReasonKind::AcceptedEmpty,
            Why::Hysteresis(_) => ReasonKind::Hysteresis,
            Why::Replications(_) => ReasonKind::Replications,
            Why::Touched(_) => ReasonKind::Touched,
            Why::NoProbe(_) => ReasonKind::NoProbe,
            Why::Thinned(_) => ReasonKind::Thinned,
        }
    }
}

/// No figures.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Nothing {}

/// When something happened to a replicated point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    /// While a run (or the only run) loaded.
    #[default]
    InRun,
    /// Between two runs of a replicated point.
    BetweenRuns,
}

/// `load_not_reached`: the rates warm-up saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotReached {
    /// Replies a second.
    pub achieved_rate: Figure,
    /// Requests sent a second.
    pub sent_rate: Figure,
    /// The rate asked, all agents.
    pub target_rate: Figure,
    /// Agents sharing it.
    pub agents: usize,
    /// How late requests left (median), µs, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_p50_us: Option<f64>,
}

/// `closed_loop`: too few slots for the load, for good (warm-up, a measurement, a
/// departure check that found the slots full), or for a moment (a pause of the target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClosedLoop {
    /// The slots cannot carry the load at the latency seen (Little's law).
    Held(HeldClosedLoop),
    /// A brief backlog while the client's host was quiet: the target paused.
    Moment(ClosedLoopMoment),
}

/// A closed loop that held: the load's figures and Little's law's cure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldClosedLoop {
    /// Connections per agent.
    pub connections: usize,
    /// Requests outstanding per connection.
    pub depth: usize,
    /// The rate asked, all agents.
    pub target_rate: Figure,
    /// Replies a second.
    pub achieved_rate: Figure,
    /// Requests sent a second.
    pub sent_rate: Figure,
    /// Requests waiting for a free slot at the end.
    pub backlog: u64,
    /// The most that waited at once.
    pub backlog_max: u64,
    /// Mean latency over the last windows, µs.
    pub latency_mean_us: Figure,
    /// Connections per agent Little's law says carry the load at that latency, with a
    /// margin: when no more than `connections`, the backlog is the target's.
    pub connections_needed: usize,
    /// The departure check that found the slots full, when it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<DepartureFinding>,
}

/// A closed loop for a moment: the target paused while the client's host was quiet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedLoopMoment {
    /// Connections per agent.
    pub connections: usize,
    /// Requests outstanding per connection.
    pub depth: usize,
    /// Connections per agent that would keep the load open through the pause.
    pub connections_needed: usize,
    /// The most due requests held back at once.
    pub backlog_max: u64,
    /// The longest send lag (the pause), µs.
    pub send_lag_max_us: Figure,
    /// The departure check that found it.
    pub lateness: DepartureFinding,
}

/// `interarrival`: an agent's departures do not follow the process asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Interarrival {
    /// The test failed on one agent.
    Failed(InterarrivalFailed),
    /// The point's time ran out while the departures were tested.
    OutOfTime(OutOfTime),
}

/// An agent's failed inter-arrival test and what was made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterarrivalFailed {
    /// The agent.
    pub agent: usize,
    /// A² or the coefficient of variation.
    pub statistic: Figure,
    /// Its p-value, where the test has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvalue: Option<f64>,
    /// The process asked (its spec in JSON: `exp`, `fixed`, ...).
    pub process: InterArrival,
    /// Tests run before giving up; none when the test is only reported
    /// (`interarrival_check: report`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tries: Option<u32>,
    /// What the test found.
    pub finding: InterarrivalFinding,
}

/// `departures`: the client's late departures move the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Departures {
    /// The check's finding (its figures: the two percentiles, the lags).
    #[serde(flatten)]
    pub lateness: DepartureFinding,
}

/// `independence` (`method: lancet`): the samples stay correlated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Independence {
    /// Correlated at every lag tried on one agent.
    Stuck(IndependenceStuck),
    /// Independent only when thinned beyond what the limits allow.
    Thinned(IndependenceThinned),
}

/// An agent's samples correlated at every lag tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndependenceStuck {
    /// The agent.
    pub agent: usize,
    /// The sampling rate the samples were taken at.
    pub sampling_rate: Figure,
    /// What Spearman's test found.
    pub spearman: SpearmanFinding,
}

/// Samples independent only one in `lag`, which the limits cannot wait for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndependenceThinned {
    /// The lag at which they are independent.
    pub lag: usize,
    /// The sampling rate that would take.
    pub sampling_rate: Figure,
    /// The seconds the samples wanted would take at it.
    pub seconds_needed: Figure,
    /// Samples per agent wanted.
    pub samples_wanted: usize,
    /// The seconds left, or none when the tries ran out first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_left: Option<f64>,
    /// The tries allowed, when they ran out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tries: Option<u32>,
}

/// `stationarity`: an agent's latencies drift while measuring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stationarity {
    /// The agent.
    pub agent: usize,
    /// ADF's p-value, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvalue: Option<f64>,
    /// What ADF found.
    pub adf: AdfFinding,
}

/// `warmup_stationarity`: the per-window latency never settled within the warm-up limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmupStationarity {
    /// ADF's p-value, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adf_pvalue: Option<f64>,
    /// The warm-up limit, seconds.
    pub warmup_max_s: Figure,
    /// What ADF found.
    pub adf: AdfFinding,
}

/// One agent's interval of the target percentile, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AgentInterval {
    /// The agent.
    pub agent: usize,
    /// Its estimate.
    pub value: Figure,
    /// Its interval.
    pub low: Figure,
    /// Its interval.
    pub high: Figure,
}

/// `agents_disagree`: the agents' intervals do not overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentsDisagree {
    /// The percentile.
    pub p: Percentile,
    /// The highest low end less the lowest high end, µs.
    pub gap_us: Figure,
    /// Each agent's interval.
    pub intervals: Vec<AgentInterval>,
}

/// `too_few_samples`: too few samples for a CI of the percentile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TooFewSamples {
    /// Too few for the CI, with the samples that would do.
    Ci(TooFewForCi),
    /// A replicated point's run ended with no estimate at all.
    NoEstimate(NoEstimate),
    /// Too few requests no stall touched for the tail without stalls' CI.
    Untouched(UntouchedFew),
}

/// Too few untouched samples (for the dependence they show) for the tail without stalls'
/// CI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntouchedFew {
    /// Untouched samples.
    pub untouched: usize,
    /// About how many would do (none known: 0).
    pub needed: usize,
}

/// Too few samples for the percentile's CI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TooFewForCi {
    /// The percentile.
    pub p: Percentile,
    /// The confidence asked.
    pub confidence: Figure,
    /// Samples in all.
    pub samples: usize,
    /// Samples that would do.
    pub min_samples: usize,
    /// Why the dependence-valid CI could not be made (`method: vernier`), as the
    /// statistics said it; none for the order-statistic CI (`method: lancet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub need: Option<String>,
    /// The batch size the samples were still correlated at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlated_over: Option<usize>,
    /// The seconds of the load that batch size spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependence_s: Option<f64>,
}

/// A run of a replicated point with no estimate of the target percentile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoEstimate {
    /// The run.
    pub estimate_missing_in_run: u32,
}

/// `heavy_tail`: the latencies' own tail is too heavy for the samples the limit allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeavyTail {
    /// Too few samples for a dependence-valid CI, and the tail heavy at and inside it.
    TooFew(HeavyTooFew),
    /// The CI stayed wider than asked on a heavy tail.
    Wide(Wide),
}

/// Too few samples for the dependence-valid CI on a heavy tail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeavyTooFew {
    /// Why there were too few.
    #[serde(flatten)]
    pub too_few: TooFewForCi,
    /// The order-statistic CI's width (a lower bound on the dependence-valid one), µs.
    pub ci_width_us: Figure,
    /// Heaviness at the percentile.
    pub heaviness: Figure,
    /// Heaviness inside the tail.
    pub heaviness_inside: Figure,
    /// The percentile inside the tail.
    pub inside: Percentile,
}

/// `host_stalls`: the host's stalls explain the tail that kept the CI wide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostStalls {
    /// The worst probed core's report while the point measured.
    pub host: StallReport,
    /// The percentile's value the stalls reach, µs.
    pub value_us: Figure,
    /// Its 99th percentile of lateness, µs (the host's figure the verdict quotes).
    pub host_late_p99_us: Figure,
    /// Its longest stall, µs.
    pub host_late_max_us: Figure,
    /// The share of the time it was stalled.
    pub host_stalled_share: Figure,
    /// What the CI was kept from: its own figures.
    #[serde(flatten)]
    pub kept: HostKept,
}

/// What the host's stalls kept from the CI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HostKept {
    /// Enough samples: samples beyond the percentile came in clusters.
    TooFew(TooFewForCi),
    /// The width asked (with the tail's shape set aside: the stalls made it).
    Wide(Wide),
    /// The time limit ran out while measuring.
    OutOfTime(OutOfTime),
}

/// `touched`: the share of the requests a stall touched, beyond the most the tail without
/// stalls is judged at (the untouched ones are too small a part to stand for the server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Touched {
    /// The share touched.
    pub share: Figure,
    /// The most it may be.
    pub most: Figure,
}

/// `thinned`: 1 in k samples kept, so whether a request was still in flight at a stall's
/// end could not be told from them: read back from records made before each kept sample
/// carried its busy stretch; no point says it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thinned {
    /// The share kept.
    pub sampling: Figure,
}

/// `quit`: the user quit.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Quit {
    /// In a run, or between runs.
    #[serde(default)]
    pub moment: Moment,
}

/// `agent_lost`: an agent stopped answering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentLost {
    /// The agent.
    pub agent: usize,
    /// In a run, or between runs.
    #[serde(default)]
    pub moment: Moment,
    /// What the session saw (the link's own error).
    pub cause: String,
}

/// `target_failed`: an agent saw only failures for too long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetFailed {
    /// The agent.
    pub agent: usize,
    /// Since when, seconds from the session's start.
    pub at_s: Figure,
    /// For how long, seconds.
    pub for_s: Figure,
    /// Requests failed since.
    pub failed: u64,
    /// Connects failed since.
    pub connect_failures: u64,
}

/// `hysteresis`: the runs disagree beyond their own CIs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hysteresis {
    /// The percentile.
    pub p: Percentile,
    /// Runs.
    pub runs: u32,
    /// Each run's estimate, µs (none: the run had none).
    pub per_run: Vec<Option<f64>>,
    /// The lowest run's estimate, µs.
    pub low_us: Figure,
    /// The highest, µs.
    pub high_us: Figure,
    /// `high_us − low_us`.
    pub spread_us: Figure,
    /// The across-run CI's width, µs.
    pub width_us: Figure,
    /// The width asked, µs.
    pub width_target_us: Figure,
    /// I², when two or more runs have a CI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i2: Option<f64>,
    /// τ, µs, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tau_us: Option<f64>,
    /// Whether the runs with a CI have disjoint ones (what I² is quoted for).
    #[serde(default)]
    pub disjoint: bool,
    /// Runs without a CI of their own outside every other run's CI, with their first
    /// reason's kind.
    pub outside: Vec<(u32, Option<ReasonKind>)>,
    /// The hull of the other runs' CIs, µs.
    pub ci_hull: (f64, f64),
}

/// `replications`: the runs agree, but are too few for the across-run CI asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replications {
    /// The percentile.
    pub p: Percentile,
    /// Runs.
    pub runs: u32,
    /// Runs that would do.
    pub runs_needed: Figure,
    /// Each run's estimate, µs.
    pub per_run: Vec<Option<f64>>,
    /// The across-run CI's width, µs.
    pub width_us: Figure,
    /// The width asked, µs.
    pub width_target_us: Figure,
    /// I², when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i2: Option<f64>,
}

#[cfg(test)]
pub(crate) mod tests;
