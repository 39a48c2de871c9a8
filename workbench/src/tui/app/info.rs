//! What the run is, for the header: its scenario's description and the steps of its
//! methodology, named as the method names them.

use crate::scenario::{LoadPlan, Method, Scenario, Tail};

/// The steps of the methodology, in the order the header shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Reaching the agents.
    Connect,
    /// Applying the load.
    Load,
    /// Waiting for rate and latency to settle.
    Warmup,
    /// Testing the inter-departure gaps.
    Interarrival,
    /// Collecting samples.
    Measure,
    /// Spearman's test.
    Independence,
    /// ADF on the samples.
    Stationarity,
    /// Agreement and CI width.
    Confidence,
    /// The point's verdict.
    Verdict,
}

impl Step {
    /// Every step, in order.
    pub const ALL: [Step; 9] = [
        Step::Connect,
        Step::Load,
        Step::Warmup,
        Step::Interarrival,
        Step::Measure,
        Step::Independence,
        Step::Stationarity,
        Step::Confidence,
        Step::Verdict,
    ];

    /// The name shown, at `label`'s length, under `method`: `method: vernier` reports the
    /// departures' fit and the samples' dependence rather than gating on them, and judges
    /// the departures by their effect on the answer, so its steps say what it does.
    pub fn name(self, method: Method, label: Label) -> &'static str {
        match (self, method, label) {
            (Step::Interarrival, Method::Vernier, Label::Long) => "departures",
            (Step::Interarrival, Method::Vernier, Label::Short) => "depart",
            (Step::Independence, Method::Vernier, Label::Long) => "dependence",
            (Step::Independence, Method::Vernier, Label::Short) => "dep",
            (step, _, label) => step.lancet_name(label),
        }
    }

    /// The name `method: lancet` gives it (and `vernier` too, but for two steps).
    fn lancet_name(self, label: Label) -> &'static str {
        match (self, label) {
            (Step::Connect, _) => "connect",
            (Step::Load, _) => "load",
            (Step::Warmup, _) => "warm-up",
            (Step::Interarrival, Label::Long) => "inter-arrival",
            (Step::Interarrival, Label::Short) => "arrivals",
            (Step::Measure, _) => "measure",
            (Step::Independence, Label::Long) => "independence",
            (Step::Independence, Label::Short) => "indep",
            (Step::Stationarity, Label::Long) => "stationarity",
            (Step::Stationarity, Label::Short) => "station",
            (Step::Confidence, Label::Long) => "confidence",
            (Step::Confidence, Label::Short) => "conf",
            (Step::Verdict, _) => "verdict",
        }
    }

    /// Its position in [`Step::ALL`] (and in [`App`](super::App)'s marks).
    pub(super) fn index(self) -> usize {
        Step::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// Steps compare by their place in the methodology (a check past measuring marks it done).
impl PartialOrd for Step {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.index().partial_cmp(&other.index())
    }
}

/// How long a step's name is: the header shortens them all when the long ones do not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// The full name (`inter-arrival`).
    Long,
    /// The abbreviation (`arrivals`).
    Short,
}

/// What the run is: its scenario's description, for the header.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    /// The scenario's name.
    pub name: String,
    /// The target(s).
    pub target: String,
    /// Points the plan has, if known in advance (not for an SLO search).
    pub points: Option<usize>,
    /// The methodology: it names the steps (each check says itself whether it gates).
    pub method: Method,
    /// The tail the CI target is for: the one the points panel shows.
    pub tail: Tail,
}

impl RunInfo {
    /// What the header says about `scenario`.
    pub fn of(scenario: &Scenario) -> RunInfo {
        RunInfo {
            name: scenario.name.clone(),
            target: scenario.targets.join(", "),
            // An SLO search decides its points as it goes.
            points: match &scenario.load {
                LoadPlan::Fixed(_) => Some(1),
                LoadPlan::Sweep(r) => Some(r.len()),
                LoadPlan::Slo(_) => None,
            },
            method: scenario.method,
            // Replications decide a point on every request's tail.
            tail: match scenario.replications {
                Some(_) => Tail::WithStalls,
                None => scenario.ci.tail,
            },
        }
    }
}
