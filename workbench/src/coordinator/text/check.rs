//! A check's words: what it found and what the methodology does next
//! ([`super::super::check_next`]), as the displays show them and the records hold them.

use serde::Deserialize;
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::super::check_next::{
    AgreementFinding, CheckNext, Ending, Found, IntervalFinding, RateFinding, SloSide,
};
use super::super::event::{Check, CheckData, CheckKind, CheckOutcome, CheckRole};
use super::super::policy::{FAR_BEYOND_REACH, MAX_TOUCHED_SHARE};
use super::super::result::{CalledBy, TouchedCall, TouchedSide};
use super::{adf, agent_intervals, departures, interarrival, late_cause, spearman, too_few};

impl Check {
    /// What was found, in words (JSON: `detail`).
    pub fn detail(&self) -> String {
        found(&self.found)
    }

    /// What the methodology does next, in words; empty when the check decides nothing
    /// (JSON: `decision`).
    pub fn decision(&self) -> String {
        decision(self.next.as_ref())
    }
}

/// A check in words, as displays show it and records hold it: its figures, its outcome
/// beside `pass` and `role` (`outcome`, written, not read: it follows from them), what it
/// found (`detail`) and what the methodology does next (`decision`, empty for nothing). A
/// live [`Check`] becomes one where a display or a record takes it; a record of any format
/// reads back into one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ShownCheck {
    /// Which test.
    pub check: CheckKind,
    /// The agent tested, or `None` for all together.
    pub agent: Option<usize>,
    /// Whether the test's statistic passed.
    pub pass: bool,
    /// Whether its failure holds the point back or is only reported (a record written
    /// before checks had roles gets its scenario's when read).
    #[serde(default)]
    pub role: CheckRole,
    /// The test statistic.
    pub statistic: Option<f64>,
    /// Its p-value, where the test has one.
    pub pvalue: Option<f64>,
    /// The sample size the test saw.
    pub n: usize,
    /// What was found.
    pub detail: String,
    /// What the methodology does next; empty when the check decides nothing.
    pub decision: String,
    /// Data for plots.
    #[serde(default)]
    pub data: Option<CheckData>,
}

impl ShownCheck {
    /// What its result does to the point ([`Check::outcome_of`]).
    pub fn outcome(&self) -> CheckOutcome {
        Check::outcome_of(self.pass, self.role)
    }
}

impl From<&Check> for ShownCheck {
    fn from(c: &Check) -> ShownCheck {
        ShownCheck {
            check: c.check,
            agent: c.agent,
            pass: c.pass,
            role: c.role,
            statistic: c.statistic,
            pvalue: c.pvalue,
            n: c.n,
            detail: c.detail(),
            decision: c.decision(),
            data: c.data.clone(),
        }
    }
}

impl Serialize for ShownCheck {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Check", 11)?;
        s.serialize_field("check", &self.check)?;
        s.serialize_field("agent", &self.agent)?;
        s.serialize_field("pass", &self.pass)?;
        s.serialize_field("outcome", &self.outcome())?;
        s.serialize_field("role", &self.role)?;
        s.serialize_field("statistic", &self.statistic)?;
        s.serialize_field("pvalue", &self.pvalue)?;
        s.serialize_field("n", &self.n)?;
        s.serialize_field("detail", &self.detail)?;
        s.serialize_field("decision", &self.decision)?;
        if let Some(data) = &self.data {
            s.serialize_field("data", data)?;
        }
        s.end()
    }
}

/// A live check is written in words, as it is shown ([`ShownCheck`]).
impl Serialize for Check {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ShownCheck::from(self).serialize(serializer)
    }
}

/// What a check found, in words.
pub fn found(found: &Found) -> String {
    match found {
        Found::Adf(f) => adf(f),
        Found::Gaps(f) => interarrival(f),
        Found::Spearman(f) => spearman(f),
        Found::Rate(f) => rate(f),
        Found::Interval(f) => interval(f),
        Found::TooFew(f) => too_few(f),
        Found::Agreement(f) => agreement(f),
        Found::Departures(f) => departures(f),
        Found::Touched { call, confidence } => touched(call, *confidence),
    }
}

/// What the methodology does next after a check, in words; empty when the check decides
/// nothing by itself.
pub fn decision(next: Option<&CheckNext>) -> String {
    next.map(self::next).unwrap_or_default()
}

/// What the methodology does next, in words.
pub fn next(next: &CheckNext) -> String {
    match next {
        CheckNext::RateReached => "the rate is reached".into(),
        CheckNext::WarmupOver => "warm-up is over: test the inter-arrival times".into(),
        CheckNext::Stationary => "stationary".into(),
        CheckNext::CollectMore { per_agent } => format!("collect more: {per_agent} per agent"),
        CheckNext::Fits => "fits".into(),
        CheckNext::InterarrivalReported => {
            "reported: the departures' effect on the answer is judged at the verdict".into()
        }
        CheckNext::InterarrivalNotEnforced => {
            "not enforced (interarrival_check: report): measure anyway, and say so".into()
        }
        CheckNext::TestFreshGaps => "test fresh gaps".into(),
        CheckNext::InterarrivalGiveUp => "give up: the agent cannot generate this process".into(),
        CheckNext::Independent => "independent".into(),
        CheckNext::KeepOneIn { lag } => format!("keep one request in {lag}"),
        CheckNext::CorrelatedEverywhere => "correlated at every lag tried".into(),
        CheckNext::CorrelationAllowed { lag: Some(l) } => {
            format!("correlated up to lag {l}: the CI allows for it")
        }
        CheckNext::CorrelationAllowed { lag: None } => {
            "correlated at every lag tried: the CI allows for it".into()
        }
        CheckNext::AgentsAgree => "the agents agree".into(),
        CheckNext::LatenessHarmless => "the client's lateness does not move the answer".into(),
        CheckNext::LatenessMoves(finding) => format!("N/A: {}", late_cause(finding)),
        CheckNext::NarrowEnough => "narrow enough".into(),
        CheckNext::NarrowAtLimit => {
            "narrow enough at the limit's look (a look the clock chose needs no confirmation)"
                .into()
        }
        CheckNext::NarrowDrifting => {
            "narrow enough, and the variance inflation grew as fast as the samples since the last look: the latency drifts, more samples would neither narrow nor confirm it, so this CI is the answer"
                .into()
        }
        CheckNext::LastLook { per_agent } => format!(
            "no look of the stopping rule fits before the time limit: one last look, at the limit, on {per_agent} per agent; its CI is the answer"
        ),
        CheckNext::DecidedBySlo => "the CI lies wholly on one side of the SLO: decided".into(),
        CheckNext::Converged => "converged".into(),
        CheckNext::DecidedAgainstSlo { side, slo_us } => format!(
            "the CI lies {} the SLO of {slo_us:.0} µs: decided",
            match side {
                SloSide::Below => "below",
                SloSide::Above => "above",
            }
        ),
        CheckNext::Collect { per_agent } => format!("collect {per_agent} per agent"),
        CheckNext::CollectPredicted { per_agent } => {
            format!("collect {per_agent} per agent (the width narrows as 1/√n)")
        }
        CheckNext::CollectForLook {
            per_agent,
            in_all,
            look,
        } => format!(
            "collect {per_agent} per agent (the width narrows as 1/√n: about {in_all} in all would do; look {look} next)"
        ),
        CheckNext::Confirming { per_agent } => {
            format!("narrow: the next look, on {per_agent} per agent, confirms it before the stop")
        }
        CheckNext::NarrowOnFewTail {
            effective_tail,
            look,
            tail_needed,
            per_agent,
        } => format!(
            "narrow, but on {effective_tail:.0} effective tail samples where a stop at look {look} needs {tail_needed:.0}: collect {per_agent} per agent"
        ),
        CheckNext::Ending(ending) => self::ending(ending),
        CheckNext::Touched(call) => touched_next(call),
    }
}

/// Why the point ends N/A now.
fn ending(ending: &Ending) -> String {
    match ending {
        Ending::FarBeyond { needed, limit } => format!(
            "the answer now, from this look's CI: about {needed} samples in all would do, more than {FAR_BEYOND_REACH}× the {limit} the time left allows"
        ),
        Ending::Beyond { needed, limit } => format!(
            "the answer now, from this look's CI: about {needed} samples in all would do, beyond the {limit} the time left allows at this look and the one before"
        ),
        Ending::NoRoom => {
            "the answer now, from this look's CI: no look is left that could narrow it enough before the time limit"
                .into()
        }
        Ending::Limit => "the limit's look: its CI is the answer".into(),
        Ending::Earlier { look, samples } => format!(
            "no look comes after this one, which has no valid CI: the answer is look {look}'s CI, on {samples} samples, the last a look earned"
        ),
        Ending::Drifts => {
            "the answer now, from this look's CI: the latency drifts (its variance inflation keeps growing with the batch size, at this look and the one before), so more time would not narrow the CI as 1/√n predicts"
                .into()
        }
    }
}

/// What the call of the share touched does to the tail without stalls.
fn touched_next(call: &TouchedCall) -> String {
    let most = MAX_TOUCHED_SHARE * 100.0;
    match (call.side, call.by) {
        (TouchedSide::Over, CalledBy::Interval) => format!(
            "N/A now for the tail without stalls: surely more than the {most:.0}% it is judged at, and more time would not bring it under while the host stalls this often; every request's tail judged on what the point holds"
        ),
        (TouchedSide::Over, CalledBy::Estimate) => format!(
            "N/A now for the tail without stalls: after {:.0} s of requests its interval still straddles the {most:.0}% it is judged at, and its estimate is beyond (called so; more time would only narrow the interval around a share this near the bound); every request's tail judged on what the point holds",
            call.seen_s
        ),
        (TouchedSide::Under, _) => format!(
            "called under: after {:.0} s of requests its interval still straddles the {most:.0}% it is judged at, and its estimate is within; the tail without stalls drives the looks to the end",
            call.seen_s
        ),
    }
}

/// The share the host's stalls touched, with its interval at `confidence`.
fn touched(call: &TouchedCall, confidence: f64) -> String {
    format!(
        "the host's stalls touched {:.1}% of the requests, {:.0}% CI [{:.1}, {:.1}] (batch means)",
        call.share * 100.0,
        confidence * 100.0,
        call.low * 100.0,
        call.high * 100.0
    )
}

/// The rate reached at the end of warm-up.
fn rate(f: &RateFinding) -> String {
    format!(
        "achieved {:.0} req/s (sent {:.0}) against {:.0}, within {:.1}%",
        f.achieved,
        f.sent,
        f.target,
        f.tolerance * 100.0
    )
}

/// The combined interval of the target percentile at a look.
fn interval(f: &IntervalFinding) -> String {
    let IntervalFinding {
        p,
        value,
        confidence,
        low,
        high,
        width,
        target_us,
        n,
        batches,
    } = *f;
    let head = format!(
        "{p} = {value:.1} µs, {:.0}% CI [{low:.1}, {high:.1}], width {width:.1} µs (target {target_us:.1}) from {n} samples",
        confidence * 100.0
    );
    match batches {
        Some(b) => format!(
            "{head}; batches of {} (variance ×{:.1} for dependence)",
            b.size, b.variance_inflation
        ),
        None => head,
    }
}

/// The agents' intervals of the target percentile, and an agent without one of its own.
fn agreement(f: &AgreementFinding) -> String {
    let listing = agent_intervals(f.p, &f.intervals);
    match &f.without {
        None => listing,
        Some((agent, needs)) => {
            let own = format!(
                "agent {agent} has no {} interval of its own yet ({})",
                f.p,
                too_few(needs)
            );
            if f.intervals.is_empty() {
                own
            } else {
                format!("{own}; {listing}")
            }
        }
    }
}
