//! What a load point ends with: its verdict and the reasons for it, every percentile with
//! its CI, each agent's share, the schedule's view and, for a replicated point, the CI
//! across its runs. The JSON object `vernier run --headless` prints, and what the TUI, the
//! record and the report read back.

use serde::{Deserialize, Serialize};
use vernier_agent::StallReport;
use vernier_agent::sys::TimestampMode;
use vernier_stats::Percentile;

use super::budget_parts::Budget;
use super::reason::{MoreTime, Reason, Why};
use crate::scenario::Tail;

mod across;
mod short_form;

pub use across::{AcrossMethod, AcrossRuns, Spread};

/// A load point's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every check passed and the CI is as narrow as asked (at a look the stopping rule
    /// stopped on, or at the limit: a look the clock chose needs no confirmation).
    Converged,
    /// The CI is valid but wider than asked: the limit came, or no look that could narrow
    /// it enough fits before it. The answer is that CI; the reasons say why it is wide and
    /// what more time would buy.
    Wide,
    /// No valid CI: see the reasons.
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
            Verdict::Wide => "wide",
            Verdict::NotAvailable => "n/a",
            Verdict::Accepted => "accepted",
        }
    }

    /// Whether it comes with a CI that is an answer: converged, wide or accepted.
    pub fn answered(self) -> bool {
        self != Verdict::NotAvailable
    }

    /// The verdict of several answers together (a sweep's points): n/a if any is, else
    /// wide if any is, else converged.
    pub fn of_all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut all = Verdict::Converged;
        let mut any = false;
        for v in verdicts {
            any = true;
            match v {
                Verdict::NotAvailable => return Verdict::NotAvailable,
                Verdict::Wide => all = Verdict::Wide,
                Verdict::Converged | Verdict::Accepted => {}
            }
        }
        if any { all } else { Verdict::NotAvailable }
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
    /// How the CI allows for autocorrelation (`method: vernier`); absent for the iid
    /// order-statistic CI (`method: lancet`, on samples thinned until independent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependence: Option<CiDependence>,
}

/// How a percentile's CI was made valid for autocorrelated samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CiDependence {
    /// The method (`batched-indicator` in JSON).
    pub method: vernier_stats::CiMethod,
    /// Samples per batch.
    pub batch_size: usize,
    /// Batches.
    pub batches: usize,
    /// How much the dependence inflated the variance (1: none seen).
    pub variance_inflation: f64,
}

impl CiDependence {
    /// From the statistic's answer.
    pub fn of(ci: &vernier_stats::DependentCi) -> CiDependence {
        CiDependence {
            method: ci.method,
            batch_size: ci.batch_size,
            batches: ci.batches,
            variance_inflation: ci.variance_inflation,
        }
    }
}

/// One percentile of the latency from each request's *scheduled* departure, beside the
/// same percentile from its actual departure, µs. A client that falls behind sends late
/// and measures from the late send, hiding the wait (coordinated omission); the gap
/// between the two is that wait. Both come from the HDR histograms of every request of
/// the measurement (three significant digits), so they compare like with like, and
/// `actual` may differ slightly from the sample estimate in
/// [`PointResult::percentiles`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulePercentile {
    /// In percent, like [`PercentileResult::p`].
    pub p: f64,
    /// Reply received minus scheduled departure, µs.
    pub value: f64,
    /// Reply received minus actual departure, µs: the same percentile over the same
    /// requests.
    pub actual: f64,
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
    /// Requests the server refused unprocessed (an HTTP/2 GOAWAY above them, or
    /// REFUSED_STREAM) and the agent sent again, from their schedule: not errors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
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
#[serde(bound(deserialize = "R: Deserialize<'de>"))]
pub struct PointResult<R = Reason> {
    /// The answer's verdict: that of the tail the CI target was for (the exit code's),
    /// `verdict` in the JSON. Set with [`PointResult::settle_answer`] whenever `verdict`,
    /// `without_stalls` or `replication` change.
    #[serde(rename = "verdict")]
    pub answer: Verdict,
    /// The verdict of every request's tail (`every_request` in the JSON; a record of
    /// format 1 wrote it as `verdict`).
    #[serde(rename = "every_request")]
    pub verdict: Verdict,
    /// Why every request's tail is not converged (empty when it is): why N/A, or why wide.
    pub reasons: Vec<R>,
    /// When N/A for want of samples: the seconds more, at this rate, that the samples the
    /// precision asked needs would take (as the methodology's last look predicted them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_time_s: Option<f64>,
    /// Checks that failed but that the scenario asked only to report
    /// (`interarrival_check: report`): the result stands with them, not certified by them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waived: Vec<R>,
    /// req/s over all agents.
    pub target_rate: f64,
    /// Replies per second over all agents during the point.
    pub achieved_rate: f64,
    /// The timestamp source in use (its text in JSON: `kernel`, `hw:eth0`).
    pub timestamps: TimestampMode,
    /// Samples the percentiles were computed from.
    pub samples: usize,
    /// The share of requests kept.
    pub sampling_rate: f64,
    /// Seconds from the point's start to its verdict.
    pub duration_s: f64,
    /// Each reported percentile with its CI, µs.
    pub percentiles: Vec<PercentileResult>,
    /// Latency from each request's scheduled departure (what an open-loop user would have
    /// waited: coordinated omission included), µs, at the reported percentiles, from the
    /// histogram of every request of the measurement (not only the kept samples).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_schedule: Vec<SchedulePercentile>,
    /// The target percentile.
    pub target_percentile: Percentile,
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
    /// The host's stalls while the result's round measured (while the point warmed up, when
    /// it never measured), one report per core watched: the local workers' own wake-ups,
    /// one report a core (or unpinned), then the probes of the target's cores (or, with
    /// remote agents only, the coordinator's thread): how late timer wake-ups came. Remote
    /// agents' hosts are not reported here. Empty in records that predate the probes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<StallReport>,
    /// Where the median's time went: the path's floor, the client, the host, the server
    /// (see [`crate::budget`]). Added by the session; absent in records that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The run directory, once recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// In a replicated point, which run this is (from 1); `None` for a point's own result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// A replicated point's runs and their across-run CIs (its `percentiles` are those).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<Box<Replication<R>>>,
    /// The tail without the host's stalls (`method: vernier`): the requests no stall of a
    /// probed core touched. Absent in records that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_stalls: Option<WithoutStalls>,
    /// How the target percentile moved over the round (`method: vernier`): whether it
    /// drifts (the CI stops shrinking as 1/√n) and its value over windows of the run.
    /// Absent in records that predate it, and when the round held too few samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftSeen>,
    /// When the look that ended the point had no valid CI (the limit's, or one that found
    /// no time left for the samples a CI needs), the last look that had one: the CI the
    /// run earned, which is the answer when it holds the ending look's estimate
    /// ([`EarlierLook::answers`]). Absent when the ending look had a CI, or none had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earned: Option<EarlierLook>,
    /// Which tail the CI target was for: what stopped the point and what its answer
    /// ([`PointResult::answer`], the exit code) follows. Records that predate it knew only
    /// the tail with stalls.
    #[serde(default = "tail_before_it_was_asked")]
    pub tail: Tail,
}

/// Records written before a point was asked for a tail measured every request.
fn tail_before_it_was_asked() -> Tail {
    Tail::WithStalls
}

/// A replicated point: every run's own result, and the CI across their estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "R: Deserialize<'de>"))]
pub struct Replication<R = Reason> {
    /// How the across-run CIs are made.
    pub method: AcrossMethod,
    /// Each run's result, in order.
    pub runs: Vec<PointResult<R>>,
    /// Per reported percentile: the runs' estimates and the CI across them.
    pub across: Vec<AcrossRuns>,
    /// The widest across-run CI of the target percentile the scenario accepts, µs.
    pub width_target_us: f64,
    /// How the runs' estimates of the target percentile lie against their own CIs (`None`
    /// while fewer than two runs have a CI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// Whether the runs disagree beyond their own CIs (see [`Spread::disagrees`]):
    /// hysteresis. A converged point may say so (its across-run CI includes the spread).
    #[serde(default)]
    pub hysteresis: bool,
}

impl<R> Replication<R> {
    /// The same runs with every reason in another form, by `f`.
    fn map_reasons<S>(self, f: &impl Fn(R) -> S) -> Replication<S> {
        Replication {
            method: self.method,
            runs: self.runs.into_iter().map(|r| r.map_reasons(f)).collect(),
            across: self.across,
            width_target_us: self.width_target_us,
            spread: self.spread,
            hysteresis: self.hysteresis,
        }
    }

    /// The runs' spread, when they disagree beyond their own CIs.
    pub fn disagreement(&self) -> Option<&Spread> {
        self.spread.as_ref().filter(|_| self.hysteresis)
    }
}

impl<R> PointResult<R> {
    /// The entry of percentile `p`, if it was reported.
    pub fn percentile(&self, p: f64) -> Option<&PercentileResult> {
        self.percentiles.iter().find(|q| (q.p - p).abs() < 1e-9)
    }

    /// The target percentile's entry.
    pub fn target(&self) -> Option<&PercentileResult> {
        self.percentile(self.target_percentile.percent())
    }

    /// Whether the answer is the tail without stalls': it was asked for, and neither the
    /// user's acceptance nor replications decided the point.
    pub fn answers_without_stalls(&self) -> bool {
        self.tail == Tail::WithoutStalls
            && self.verdict != Verdict::Accepted
            && self.replication.is_none()
    }

    /// The verdict of the tail the CI target was for (the exit code's, the JSON's
    /// `verdict`).
    pub fn answer(&self) -> Verdict {
        self.answer
    }

    /// Sets [`PointResult::answer`] from the verdicts it follows: the tail without stalls'
    /// when [`PointResult::answers_without_stalls`] (N/A when there is none), else every
    /// request's.
    pub fn settle_answer(&mut self) {
        self.answer = if self.answers_without_stalls() {
            self.without_stalls
                .as_ref()
                .map_or(Verdict::NotAvailable, |w| w.verdict)
        } else {
            self.verdict
        };
    }

    /// The target percentile's entry in the tail the answer is for.
    pub fn asked_target(&self) -> Option<&PercentileResult> {
        if !self.answers_without_stalls() {
            return self.target();
        }
        self.without_stalls
            .as_ref()?
            .percentile(self.target_percentile.percent())
    }

    /// The host's part of each percentile both tails report ("where has my p99 gone"):
    /// every request's value less the tail without stalls', as (percent, µs), in the order
    /// reported; empty when the point has no tail without stalls.
    pub fn host_parts(&self) -> Vec<(f64, f64)> {
        let Some(tail) = &self.without_stalls else {
            return Vec::new();
        };
        self.percentiles
            .iter()
            .filter_map(|q| Some((q.p, q.value - tail.percentile(q.p)?.value)))
            .filter(|(_, us)| us.is_finite())
            .collect()
    }

    /// Percentile `p` from the scheduled departures, if it was reported.
    pub fn from_schedule(&self, p: f64) -> Option<&SchedulePercentile> {
        self.from_schedule.iter().find(|q| (q.p - p).abs() < 1e-9)
    }

    /// Percentile `p` as tables show it (`231.5 [224.0, 238.1]`), or `-`.
    pub fn percentile_text(&self, p: f64) -> String {
        self.percentile(p)
            .map_or("-".to_string(), |q| q.to_string())
    }

    /// The same result with every reason (its runs' too) in another form, by `f`: a
    /// reason as displays show it and records hold it (`record::ShownReason`).
    pub fn map_reasons<S>(self, f: &impl Fn(R) -> S) -> PointResult<S> {
        let reasons = |rs: Vec<R>| rs.into_iter().map(f).collect();
        PointResult {
            answer: self.answer,
            verdict: self.verdict,
            reasons: reasons(self.reasons),
            more_time_s: self.more_time_s,
            waived: reasons(self.waived),
            target_rate: self.target_rate,
            achieved_rate: self.achieved_rate,
            timestamps: self.timestamps,
            samples: self.samples,
            sampling_rate: self.sampling_rate,
            duration_s: self.duration_s,
            percentiles: self.percentiles,
            from_schedule: self.from_schedule,
            target_percentile: self.target_percentile,
            ci_width_us: self.ci_width_us,
            tries: self.tries,
            min_samples: self.min_samples,
            round: self.round,
            agents: self.agents,
            host: self.host,
            budget: self.budget,
            record: self.record,
            run: self.run,
            replication: self.replication.map(|r| Box::new(r.map_reasons(f))),
            without_stalls: self.without_stalls,
            drift: self.drift,
            earned: self.earned,
            tail: self.tail,
        }
    }
}

// The tail without the host's stalls, as a point's result carries it (`without_stalls`):
// the requests no stall of a probed core touched (nor the backlog it left), weighted
// against the selection, each reported percentile with its dependence-valid CI.
/// The tail without the host's stalls (`without_stalls` in a point's JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WithoutStalls {
    /// Converged when the target percentile's CI is as narrow as asked, wide when it has
    /// a CI wider than asked; never accepted.
    pub verdict: Verdict,
    /// Why not converged: a reason's kind and figures, written in the shape this field has
    /// always had (`kind` and the figures beside it).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "short_form")]
    pub short: Option<Why>,
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
    /// How the share touched was called against the most this tail is judged at, when it
    /// was (its interval wholly above, or still straddling it at the set time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touched_call: Option<TouchedCall>,
    /// What more time would buy this tail when it did not settle in time: the samples its
    /// last look predicted the precision asked needs, and how long they would take at the
    /// point's rate; `None` when it settled, or when more time would not help (touched,
    /// thinned, no probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_time: Option<MoreTime>,
}

/// The share touched, called against the most the tail without stalls is judged at: which
/// side, by what, and the figures it was called on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TouchedCall {
    /// The side it was called on.
    pub side: TouchedSide,
    /// Whether its interval lay wholly on that side, or only its estimate did.
    pub by: CalledBy,
    /// The share touched when called.
    pub share: f64,
    /// Its interval's lower bound.
    pub low: f64,
    /// Its interval's upper bound.
    pub high: f64,
    /// Seconds of requests it was read over.
    pub seen_s: f64,
}

/// Which side of the bound a share touched was called on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TouchedSide {
    /// At most the bound: the tail without stalls is judged.
    Under,
    /// Beyond it: the tail without stalls is N/A `touched`.
    Over,
}

/// What called a share touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CalledBy {
    /// Its interval lay wholly on one side.
    Interval,
    /// Its interval still straddled the bound at the set time: its estimate decided.
    Estimate,
}

/// The target percentile over the round: whether its variance inflation kept growing with
/// the batch size ([`vernier_stats::drift`]), and its lowest and highest value over windows
/// of the run (every request's, of the first measuring agent, in send order).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriftSeen {
    /// The percentile.
    pub p: Percentile,
    /// Whether it drifts: the variance inflation grew at least
    /// [`vernier_stats::DRIFT_GROWTH`] times over the last eightfold batches.
    pub drifting: bool,
    /// That growth (1: levelled off; `None` when too few samples for the plot).
    pub growth: Option<f64>,
    /// Each window's length, seconds of the round.
    pub window_s: f64,
    /// The lowest window's percentile, µs.
    pub low_us: f64,
    /// When that window began, seconds into the round.
    pub low_at_s: f64,
    /// The highest window's percentile, µs.
    pub high_us: f64,
    /// When that window began, seconds into the round.
    pub high_at_s: f64,
}

/// The last look with a valid CI of the tail asked, when the look that ended the point had
/// none ([`PointResult::earned`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EarlierLook {
    /// The look's number (from 1).
    pub look: u32,
    /// When it looked, seconds into the measuring round.
    pub at_s: f64,
    /// The samples its CI rests on (of the tail asked: the untouched ones, for the tail
    /// without stalls).
    pub samples: usize,
    /// Its estimate, µs.
    pub value_us: f64,
    /// Its CI's lower bound, µs.
    pub low_us: f64,
    /// Its CI's upper bound, µs.
    pub high_us: f64,
    /// The ending look's samples, on which no valid CI existed.
    pub ending_samples: usize,
    /// The ending look's estimate, µs.
    pub ending_value_us: f64,
    /// Whether this CI is the answer: it holds the ending look's estimate. When it does
    /// not, the latency moved out of it over the run, it is not the run's CI, and the
    /// point is N/A (the coverage harness: such answers held the run's percentile in none
    /// of the drifting runs, docs/RESULTS.md).
    pub answers: bool,
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

impl WithoutStalls {
    /// Percentile `p` (in percent), if reported.
    pub fn percentile(&self, p: f64) -> Option<&PercentileResult> {
        self.percentiles.iter().find(|q| (q.p - p).abs() < 1e-9)
    }
}

#[cfg(test)]
impl PointResult {
    /// A point as unit tests need one: `verdict` at `rate` with `percentiles`, every other
    /// field plain (tests override what they look at).
    pub(crate) fn example(
        rate: f64,
        verdict: Verdict,
        percentiles: Vec<PercentileResult>,
    ) -> PointResult {
        PointResult {
            answer: verdict,
            verdict,
            reasons: Vec::new(),
            more_time_s: None,
            waived: Vec::new(),
            target_rate: rate,
            achieved_rate: rate,
            timestamps: TimestampMode::User,
            samples: 20_000,
            sampling_rate: 1.0,
            duration_s: 10.0,
            percentiles,
            from_schedule: Vec::new(),
            target_percentile: Percentile::P99,
            ci_width_us: Some(2.0),
            tries: 1,
            min_samples: 300,
            round: 1,
            agents: Vec::new(),
            host: Vec::new(),
            budget: None,
            record: None,
            run: None,
            replication: None,
            without_stalls: None,
            drift: None,
            earned: None,
            tail: Tail::WithStalls,
        }
    }
}

impl PercentileResult {
    /// Percentile `p` at `value` with its dependence-valid CI `ci`, when it has one.
    pub(crate) fn of(
        p: vernier_stats::Percentile,
        value: f64,
        ci: Option<&vernier_stats::DependentCi>,
    ) -> PercentileResult {
        PercentileResult {
            p: p.percent(),
            value,
            ci_low: ci.map(|c| c.low),
            ci_high: ci.map(|c| c.high),
            dependence: ci.map(CiDependence::of),
        }
    }
}

#[cfg(test)]
impl PercentileResult {
    /// Percentile `p` at `value` with the CI `ci`, for unit tests.
    pub(crate) fn example(p: f64, value: f64, ci: Option<(f64, f64)>) -> PercentileResult {
        PercentileResult {
            p,
            value,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            dependence: None,
        }
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

/// Whether a count is zero: such a count is left out of the JSON.
fn is_zero(n: &u64) -> bool {
    *n == 0
}
