//! What a check found (a test's finding, or figures that are no test's: the rate reached,
//! the interval of the target percentile, the share the host's stalls touched), and what
//! the methodology does next: data a [`super::Check`] carries, which [`super::text`]
//! writes as the `detail` and `decision` its displays and records show.

use vernier_stats::Percentile;

use super::findings::{AdfFinding, DepartureFinding, InterarrivalFinding, SpearmanFinding};
use super::reason::{AgentInterval, TooFewForCi};
use super::result::TouchedCall;

/// What a check found, with the figures its words quote.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The ADF test of a series (warm-up's windows, or an agent's samples).
    Adf(AdfFinding),
    /// An agent's inter-departure gaps against the arrival process.
    Gaps(InterarrivalFinding),
    /// Spearman's correlation of an agent's samples in send order.
    Spearman(SpearmanFinding),
    /// The rate reached at the end of warm-up.
    Rate(RateFinding),
    /// The combined interval of the target percentile at a look.
    Interval(IntervalFinding),
    /// Too few samples for the percentile's CI.
    TooFew(TooFewForCi),
    /// The agents' intervals of the target percentile.
    Agreement(AgreementFinding),
    /// The departures' effect on the target percentile.
    Departures(Box<DepartureFinding>),
    /// The share of the requests the host's stalls touched, with its interval at
    /// `confidence`.
    Touched {
        /// The share and how it was called.
        call: TouchedCall,
        /// The interval's level.
        confidence: f64,
    },
}

/// What the methodology does after a check, with the figures it quotes.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckNext {
    /// The rate asked is reached (warm-up).
    RateReached,
    /// Warm-up is over: the inter-arrival test is next.
    WarmupOver,
    /// The samples are stationary.
    Stationary,
    /// A failed agreement or stationarity test: collect this many per agent.
    CollectMore {
        /// Samples per agent.
        per_agent: usize,
    },
    /// The departures fit the arrival process.
    Fits,
    /// The inter-arrival test is only reported (`method: vernier`): the departures' effect
    /// is judged at the verdict.
    InterarrivalReported,
    /// The inter-arrival test is waived by the scenario (`interarrival_check: report`).
    InterarrivalNotEnforced,
    /// Test fresh gaps.
    TestFreshGaps,
    /// The inter-arrival tries are used up.
    InterarrivalGiveUp,
    /// The samples are independent.
    Independent,
    /// Thin the samples to one in `lag` (`method: lancet`).
    KeepOneIn {
        /// The lag from which the samples are independent.
        lag: usize,
    },
    /// Correlated at every lag tried (`method: lancet`).
    CorrelatedEverywhere,
    /// Correlated, which the dependence-valid CI allows for (`method: vernier`): up to
    /// `lag`, or at every lag tried (`None`).
    CorrelationAllowed {
        /// The lag from which the samples are independent.
        lag: Option<usize>,
    },
    /// The agents' intervals overlap.
    AgentsAgree,
    /// The client's lateness does not move the answer.
    LatenessHarmless,
    /// The client's lateness moves the answer: N/A, with its cause.
    LatenessMoves(Box<DepartureFinding>),
    /// The CI is narrow enough for the stopping rule's stop.
    NarrowEnough,
    /// The CI of the limit's look is as narrow as asked: converged (a look the clock chose
    /// needs no confirmation).
    NarrowAtLimit,
    /// The CI is as narrow as asked, and its variance inflation has grown as fast as the
    /// samples since the last look: the latency drifts, more samples would neither narrow
    /// nor confirm it, and it is the answer (converged).
    NarrowDrifting,
    /// No look of the rule's fits before the limit, but the precision asked can still come
    /// by then: one last look, at the limit, on `per_agent` samples per agent; its CI is
    /// the answer.
    LastLook {
        /// Samples per agent.
        per_agent: usize,
    },
    /// The CI lies wholly on one side of the SLO (`method: vernier`).
    DecidedBySlo,
    /// The CI is as narrow as asked (`method: lancet`).
    Converged,
    /// The CI lies on `side` of the SLO of `slo_us` (`method: lancet`).
    DecidedAgainstSlo {
        /// Below or above.
        side: SloSide,
        /// The SLO, µs.
        slo_us: f64,
    },
    /// Collect this many per agent (no CI yet).
    Collect {
        /// Samples per agent.
        per_agent: usize,
    },
    /// Collect this many per agent, as the 1/√n law predicts (`method: lancet`).
    CollectPredicted {
        /// Samples per agent.
        per_agent: usize,
    },
    /// Collect this many per agent at the next look (`method: vernier`): `in_all` would
    /// do by the 1/√n law.
    CollectForLook {
        /// Samples per agent.
        per_agent: usize,
        /// Samples in all that would do.
        in_all: usize,
        /// The next look.
        look: u32,
    },
    /// Narrow: the next look, on `per_agent`, confirms it before the stop.
    Confirming {
        /// Samples per agent.
        per_agent: usize,
    },
    /// Narrow, on too few effective tail samples for a stop at this look.
    NarrowOnFewTail {
        /// The effective tail samples.
        effective_tail: f64,
        /// The look.
        look: u32,
        /// The effective tail samples a stop at this look needs.
        tail_needed: f64,
        /// Samples per agent at the next look.
        per_agent: usize,
    },
    /// The point ends now on the CI at hand (wide, or N/A without one): no look left can
    /// narrow it enough within its limit.
    Ending(Ending),
    /// The share touched by the host's stalls was called (the tail without stalls).
    Touched(TouchedCall),
}

/// Which side of the SLO a CI lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SloSide {
    /// Wholly below.
    Below,
    /// Wholly above.
    Above,
}

/// Why a point ends now on the CI at hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `needed` samples in all would do, far beyond the `limit` the time left allows.
    FarBeyond {
        /// Samples in all that would do.
        needed: usize,
        /// The samples the time left allows.
        limit: usize,
    },
    /// `needed` in all is beyond the `limit` at this look and the one before.
    Beyond {
        /// Samples in all that would do.
        needed: usize,
        /// The samples the time left allows.
        limit: usize,
    },
    /// No look is left that could narrow it enough before the limit.
    NoRoom,
    /// This was the limit's look: its CI is the answer.
    Limit,
    /// This look, after which none comes, has no valid CI: the answer is the CI look
    /// `look` earned on `samples` samples, the last that had one.
    Earlier {
        /// That look's number (from 1).
        look: u32,
        /// The samples its CI rests on.
        samples: usize,
    },
    /// Every request's latency drifts at this look and the one before: the CI no longer
    /// shrinks as 1/√n, and no time would narrow it as that predicts.
    Drifts,
}

/// The rate reached at the end of warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateFinding {
    /// Replies per second.
    pub achieved: f64,
    /// Requests sent per second.
    pub sent: f64,
    /// The rate asked.
    pub target: f64,
    /// The relative error the scenario allows.
    pub tolerance: f64,
}

/// The combined interval of the target percentile at a look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalFinding {
    /// The percentile.
    pub p: Percentile,
    /// Its estimate, µs.
    pub value: f64,
    /// The CI's level.
    pub confidence: f64,
    /// The CI's lower bound, µs.
    pub low: f64,
    /// The CI's upper bound, µs.
    pub high: f64,
    /// The CI's width, µs.
    pub width: f64,
    /// The width asked, µs.
    pub target_us: f64,
    /// The samples.
    pub n: usize,
    /// The batches the dependence-valid CI used, when it used any (`method: vernier`).
    pub batches: Option<Batches>,
}

/// The batches of a dependence-valid CI.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batches {
    /// Samples per batch.
    pub size: usize,
    /// The variance's inflation for dependence.
    pub variance_inflation: f64,
}

/// What the agreement check found: the agents' intervals, and an agent without one of its
/// own yet (with why).
#[derive(Debug, Clone, PartialEq)]
pub struct AgreementFinding {
    /// The percentile.
    pub p: Percentile,
    /// The intervals of the agents that have one.
    pub intervals: Vec<AgentInterval>,
    /// The agent without an interval, and why.
    pub without: Option<(usize, TooFewForCi)>,
}
