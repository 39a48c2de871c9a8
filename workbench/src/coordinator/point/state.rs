//! The point's state, owned by its phases: the stage it is in (an enum whose variants hold
//! what only that phase uses: warm-up's windows and each agent's open window, the
//! inter-arrival gaps and tests run, the round's independence, looks, waived failures and
//! each agent's samples, the result), what spans the phases (each agent's load and
//! findings, in agent.rs; the point's clock, rounds, what the looks found that outlives a
//! round, the host's stalls), and the few helpers every phase uses (the live and measuring
//! agents, a round's samples, events out).

use std::time::Duration;

use vernier_agent::{Sample, StallReport};

use super::super::config::PointConfig;
use super::super::decision::{Action, Decision};
use super::super::event::{Check, Event, EventKind, Phase};
use super::super::reason::{MoreTime, Narrow, Reason};
use super::super::result::{PointResult, TouchedCall};
use super::agent::{AgentState, RoundTally, WindowTally};
use crate::scenario::Limits;

/// One closed warm-up window, all agents.
#[derive(Debug, Clone, Copy)]
pub(super) struct WarmupWindow {
    pub(super) dt: f64,
    pub(super) sent: u64,
    pub(super) received: u64,
    pub(super) latency_mean_us: Option<f64>,
}

/// The point's clock: when it started, its pauses (which do not count against the
/// limits), when the current phase began and when progress was last sent.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) started: Duration,
    pub(super) paused_for: Duration,
    pub(super) paused_at: Option<Duration>,
    pub(super) phase_started: Duration,
    pub(super) last_progress: Duration,
}

impl Clock {
    pub(super) fn new(at: Duration) -> Clock {
        Clock {
            started: at,
            paused_for: Duration::ZERO,
            paused_at: None,
            phase_started: at,
            last_progress: at,
        }
    }

    /// Ends a pause at `at`, if one is on.
    pub(super) fn unpause(&mut self, at: Duration) {
        if let Some(p) = self.paused_at.take() {
            self.paused_for += at.saturating_sub(p);
        }
    }

    /// Time since the start, pauses excluded.
    pub(super) fn active(&self, at: Duration) -> Duration {
        let paused = self.paused_for
            + self
                .paused_at
                .map_or(Duration::ZERO, |p| at.saturating_sub(p));
        at.saturating_sub(self.started).saturating_sub(paused)
    }
}

/// The warm-up's closed windows, when the open one began and each agent's tally of it.
#[derive(Debug)]
pub(super) struct WarmupState {
    pub(super) windows: Vec<WarmupWindow>,
    pub(super) window_started: Duration,
    /// The open window, per agent (its send lag: since warm-up began).
    pub(super) open: Vec<WindowTally>,
    /// The last round's figures, from before the restart that began this warm-up (fresh
    /// ones, from the point's start, at its first).
    pub(super) last: RoundFigures,
}

/// Where the methodology is, each phase with what only it holds: a phase reaches its own
/// data by matching its variant, and a change of phase builds the next variant from the
/// last, carrying forward only what the next one reads.
#[derive(Debug)]
pub(super) enum Stage {
    /// Warming up: its windows.
    Warmup(WarmupState),
    /// Testing the inter-arrival times.
    Interarrival {
        /// Warm-up's closed windows: the load a closed loop found later is quoted from.
        windows: Vec<WarmupWindow>,
        /// The inter-departure gaps collected for the test, per agent.
        gaps: Vec<Vec<u64>>,
        /// Inter-arrival tests run.
        tries: u32,
        /// The last round's figures, as in `Warmup`.
        last: RoundFigures,
    },
    /// Measuring a round.
    Measure {
        /// Warm-up's closed windows, as in `Interarrival`.
        windows: Vec<WarmupWindow>,
        /// Whether the round has passed the independence test.
        independent: bool,
        /// The sequential rule's looks at this round.
        looks: RoundLooks,
        /// This round's figures.
        round: RoundFigures,
        /// The inter-arrival test's failures the scenario asked only to report
        /// (`interarrival_check: report`): the round measured with them, and its result
        /// reports them.
        waived: Vec<Reason>,
    },
    /// Paused by the user: the load stopped, a resume starts warm-up again.
    Paused {
        /// The waived failures of the round paused, which an accept still reports.
        waived: Vec<Reason>,
        /// The figures of the round paused (or the last one's, as in `Warmup`).
        last: RoundFigures,
    },
    /// Ended, with its result.
    Done(Box<PointResult>),
}

impl Stage {
    /// The phase the events name.
    pub(super) fn phase(&self) -> Phase {
        match self {
            Stage::Warmup(_) => Phase::Warmup,
            Stage::Interarrival { .. } => Phase::Interarrival,
            Stage::Measure { .. } => Phase::Measure,
            Stage::Paused { .. } => Phase::Paused,
            Stage::Done(_) => Phase::Done,
        }
    }

    /// Warm-up's closed windows, while they are kept (warm-up, and the phases after it
    /// until a pause or the end).
    pub(super) fn windows(&self) -> &[WarmupWindow] {
        match self {
            Stage::Warmup(w) => &w.windows,
            Stage::Interarrival { windows, .. } | Stage::Measure { windows, .. } => windows,
            Stage::Paused { .. } | Stage::Done(_) => &[],
        }
    }

    /// Takes warm-up's closed windows out, for the next phase to carry.
    pub(super) fn take_windows(&mut self) -> Vec<WarmupWindow> {
        match self {
            Stage::Warmup(w) => std::mem::take(&mut w.windows),
            Stage::Interarrival { windows, .. } | Stage::Measure { windows, .. } => {
                std::mem::take(windows)
            }
            Stage::Paused { .. } | Stage::Done(_) => Vec::new(),
        }
    }

    /// The measuring round's looks: `None` in the other phases, which do not look.
    pub(super) fn looks(&self) -> Option<&RoundLooks> {
        match self {
            Stage::Measure { looks, .. } => Some(looks),
            _ => None,
        }
    }

    /// [`Stage::looks`], to record a look.
    pub(super) fn looks_mut(&mut self) -> Option<&mut RoundLooks> {
        match self {
            Stage::Measure { looks, .. } => Some(looks),
            _ => None,
        }
    }

    /// The measuring round's figures, or the last round's in the phases after it (fresh
    /// ones, from the point's start, before any; none once the point is done, its result
    /// holding them).
    pub(super) fn round(&self) -> &RoundFigures {
        match self {
            Stage::Warmup(WarmupState { last, .. })
            | Stage::Interarrival { last, .. }
            | Stage::Paused { last, .. } => last,
            Stage::Measure { round, .. } => round,
            Stage::Done(_) => &DONE,
        }
    }

    /// The measuring round's figures, to count and look: `None` in the other phases,
    /// which only read the last round's.
    pub(super) fn round_mut(&mut self) -> Option<&mut RoundFigures> {
        match self {
            Stage::Measure { round, .. } => Some(round),
            _ => None,
        }
    }

    /// Each agent's tally of the measuring round (of the last one in the phases after
    /// it); none once the point is done.
    pub(super) fn tallies(&self) -> &[RoundTally] {
        &self.round().tallies
    }

    /// [`Stage::tallies`], to sort their samples (a measuring round alone adds to them).
    pub(super) fn tallies_mut(&mut self) -> &mut [RoundTally] {
        match self {
            Stage::Warmup(WarmupState { last, .. })
            | Stage::Interarrival { last, .. }
            | Stage::Paused { last, .. }
            | Stage::Measure { round: last, .. } => &mut last.tallies,
            Stage::Done(_) => &mut [],
        }
    }

    /// Takes the round's figures out, for the next phase to carry.
    pub(super) fn take_round(&mut self) -> RoundFigures {
        match self {
            Stage::Warmup(WarmupState { last, .. })
            | Stage::Interarrival { last, .. }
            | Stage::Paused { last, .. }
            | Stage::Measure { round: last, .. } => std::mem::take(last),
            Stage::Done(_) => RoundFigures::default(),
        }
    }

    /// The failures the scenario waived that the round measured (or paused) with: none
    /// before a round begins.
    pub(super) fn waived(&self) -> &[Reason] {
        match self {
            Stage::Measure { waived, .. } | Stage::Paused { waived, .. } => waived,
            Stage::Warmup(_) | Stage::Interarrival { .. } | Stage::Done(_) => &[],
        }
    }

    /// Takes the waived failures out, for the next phase to carry.
    pub(super) fn take_waived(&mut self) -> Vec<Reason> {
        match self {
            Stage::Measure { waived, .. } | Stage::Paused { waived, .. } => std::mem::take(waived),
            Stage::Warmup(_) | Stage::Interarrival { .. } | Stage::Done(_) => Vec::new(),
        }
    }
}

/// The measurement: its sampling, rounds and tries. It spans the point rather than a
/// round: the generations and the rounds are numbered over it, the tries are the point's,
/// and a verdict or a progress event, in whatever phase it comes, reports the sampling, the
/// samples wanted and the tries.
#[derive(Debug)]
pub(super) struct Rounds {
    /// The share of requests kept.
    pub(super) sampling: f64,
    /// The sampling generation last asked of the agents (see [`Point::ask_sampling`]):
    /// only their batches of it count in the phase that asked.
    pub(super) generation: u64,
    /// Rounds tried beyond the first.
    pub(super) tries: u32,
    /// Samples per agent the current round waits for.
    pub(super) wanted: usize,
    /// The measurement round (the `round` column of the record); 0 is warm-up.
    pub(super) round: u32,
}

/// A measuring round's figures that outlive it: [`Stage::Measure`] holds and writes them,
/// and the phases after it (warm-up again after a restart, a pause) carry them until the
/// next round begins afresh, since a verdict or the user's "continue" there still reads
/// the last round's.
#[derive(Debug, Default)]
pub(super) struct RoundFigures {
    /// When the round began measuring (the point's start, before any round).
    pub(super) started: Duration,
    /// Replies since.
    pub(super) received: u64,
    /// The samples (in all) the rule's last look predicted the target needs, beyond its
    /// next step: what the time left is judged against, and what "continue" asks for.
    pub(super) needed: Option<usize>,
    /// Samples kept per sample the last look counted: 1 for every request's tail; for the
    /// tail without stalls, all kept over those untouched (the rule counts the untouched,
    /// the looks come at kept counts). It goes with `needed`.
    pub(super) per_counted: f64,
    /// The share touched, once called (see `policy::call_touched`): called under, the tail
    /// without stalls drives the looks to the end whatever the share's estimate does next.
    /// A result reports it.
    pub(super) touched_call: Option<TouchedCall>,
    /// Each agent's samples and histograms of the round.
    pub(super) tallies: Vec<RoundTally>,
}

impl RoundFigures {
    /// A round's figures as it begins at `at`, for `agents` agents.
    pub(super) fn new(at: Duration, agents: usize) -> RoundFigures {
        RoundFigures {
            tallies: (0..agents).map(|_| RoundTally::new()).collect(),
            ..RoundFigures::empty(at)
        }
    }

    /// Figures without agents' tallies.
    const fn empty(at: Duration) -> RoundFigures {
        RoundFigures {
            started: at,
            received: 0,
            needed: None,
            per_counted: 0.0,
            touched_call: None,
            tallies: Vec::new(),
        }
    }
}

/// What [`Stage::round`] gives once the point is done: nothing reads it then.
static DONE: RoundFigures = RoundFigures::empty(Duration::ZERO);

/// The sequential rule's looks at the measuring round's interval (`method: vernier`),
/// held by [`Stage::Measure`]: a round starts with none, and only a measuring round reads
/// them.
#[derive(Debug, Default)]
pub(super) struct RoundLooks {
    /// Looks so far.
    pub(super) count: u32,
    /// Whether the last look was narrow and steady: the next one confirms it.
    pub(super) confirming: bool,
    /// The last look's figures when it was as narrow as asked but did not stop: what an
    /// N/A then says, rather than that the CI stayed wide.
    pub(super) narrow: Option<Narrow>,
    /// Whether the point ends on the CI at hand of the tail asked: at a look the stopping
    /// rule stopped on, or one the clock chose (the limit's, or the last when no look left
    /// could narrow it enough). Only then is the tail without stalls, when asked by
    /// `ci.tail`, converged (as narrow as asked) or wide (a valid CI wider than asked).
    pub(super) answered: bool,
    /// The samples and the variance inflation of the last look that had a CI.
    pub(super) last_ci: Option<(usize, f64)>,
    /// The last look whose CI was valid (and the agents agreed): the answer when a later
    /// look ends the point without one ([`Earned`]).
    pub(super) earned: Option<Earned>,
    /// When the point ended on a look without a CI after `earned`: that look's figures.
    pub(super) ended_without_ci: Option<EndedWithoutCi>,
    /// Whether the last look found every request's latency drifting
    /// ([`crate::coordinator::DriftSeen`]): a second look in a row that does ends the
    /// point.
    pub(super) drifted: bool,
    /// Whether the next look is the limit's ([`vernier_stats::Plan::AtLimit`]): its CI is
    /// the answer as it comes, converged when as narrow as asked, else wide.
    pub(super) at_limit: bool,
    /// The last look's need when it planned the stop beyond the samples the time left
    /// allows: the next look, on the rule's least step, ends the point if it does too.
    pub(super) past_limit: Option<PastLimit>,
    /// What more time would buy the tail without stalls, read when the point ended before
    /// the rule stopped on it (before every request's tail is judged, whose need then
    /// replaces `needed`).
    pub(super) without_stalls_more: Option<MoreTime>,
}

/// What the sequential rule's looks found that outlives the round they looked at and
/// carries into the next one: the progress events show the width in every phase, and the
/// next round's first looks start from the rest.
#[derive(Debug, Default)]
pub(super) struct Looks {
    /// The combined CI's width at the last look (Lancet's too), µs: the progress events
    /// show it in every phase, and a change of load clears it.
    pub(super) ci_width_us: Option<f64>,
    /// Whether the last look judged the tail without stalls (its figures, in the round's
    /// `needed` and `narrow`, are that tail's): a round that ends before its first look
    /// reads the last round's.
    pub(super) without_stalls: bool,
    /// When the share touched was last read (at a look or between looks): the next
    /// reading is timed from it, in this round or the next.
    pub(super) touched_at: Duration,
}

/// A look's valid CI of the tail asked, kept until a later look has one: the CI the run
/// earned. A look the clock chose (the limit's) or one that finds no time left for the
/// samples a CI needs may have none, when the batches its dependence asks for outgrow
/// the samples (a latency that drifts over the run): the point then answers with this.
#[derive(Debug, Clone)]
pub(super) struct Earned {
    /// The look's number (from 1).
    pub(super) look: u32,
    /// When it looked, into the measuring round.
    pub(super) at: Duration,
    /// The samples its CI rests on (those the look counted).
    pub(super) n: usize,
    /// Whether it was the tail without stalls' look.
    pub(super) without_stalls: bool,
    /// The estimate, µs.
    pub(super) value: f64,
    /// Its CI.
    pub(super) ci: vernier_stats::DependentCi,
    /// The width asked at that estimate, µs.
    pub(super) target_us: f64,
}

/// A look without a CI that ended the point after an earlier one earned a CI.
#[derive(Debug, Clone, Copy)]
pub(super) struct EndedWithoutCi {
    /// Its samples (those it counted).
    pub(super) samples: usize,
    /// Its estimate, µs.
    pub(super) value: f64,
    /// Whether the earned CI holds that estimate, and so is the answer.
    pub(super) answered: bool,
}

/// A look that planned the stop beyond the samples the time left allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PastLimit {
    /// The samples (in all, those the look counted) it predicted the precision needs.
    pub(super) needed: usize,
    /// Whether it judged the tail without stalls (needs of two tails do not compare).
    pub(super) without_stalls: bool,
}

/// The host's stalls while the current phase loads (warm-up, or a measuring round), per
/// probe (merged deltas); the previous phase's until the current one's first report
/// comes (`stale`).
#[derive(Debug, Default)]
pub(super) struct HostSeen {
    pub(super) reports: Vec<StallReport>,
    pub(super) stale: bool,
}

/// The methodology for one load point: the phases' states, composed. What one phase
/// fills lives in its [`Stage`] variant; each field here spans the phases, for the reason
/// its comment gives.
#[derive(Debug)]
pub(crate) struct Point {
    /// What the point was asked (its rate and limits change with the user's commands).
    pub(super) config: PointConfig,
    /// The scenario's limits: what the user's "continue" adds again.
    pub(super) base_limits: Limits,
    /// Its place in the run: every event names it.
    pub(super) index: usize,
    /// Which run of a replicated point this is (from 1).
    pub(super) run: Option<u32>,
    /// Where the methodology is, with what only that phase holds.
    pub(super) stage: Stage,
    /// The point's time: its limits count it across phases and pauses.
    pub(super) clock: Clock,
    /// Each agent's load, live figures, stalls and latest findings: the progress shows
    /// them, and a verdict reports them, in every phase.
    pub(super) agents: Vec<AgentState>,
    /// The sampling, rounds and tries, numbered over the point.
    pub(super) rounds: Rounds,
    /// What the looks found that the next round starts from.
    pub(super) looks: Looks,
    /// The host's stalls of the phase loading (the previous one's until it reports).
    pub(super) host: HostSeen,
    /// The send lag allowed that the agents were last told (see [`Action::Pace`]), ns.
    pub(super) paced_ns: Option<u32>,
}

impl Point {
    /// The host's stalls seen by each probe while the current round measured (while the
    /// point warmed up, when it never measured): what a verdict can cite when the tail, or
    /// the warm-up, may be the host's. A phase that ends before the probes' first report
    /// (they come every half second) has the previous phase's, so that a verdict never
    /// goes without the host's figures for lack of a report's timing.
    pub(super) fn host(&self) -> &[StallReport] {
        &self.host.reports
    }

    /// Agent `agent`'s samples of the measuring round (the last one's after it).
    pub(super) fn samples(&self, agent: usize) -> &[Sample] {
        self.stage
            .tallies()
            .get(agent)
            .map_or(&[], |t| t.samples.as_slice())
    }

    /// Agent `agent`'s kept latencies of the round, µs, in send order.
    pub(super) fn latencies_in_send_order(&mut self, agent: usize) -> Vec<f64> {
        self.stage
            .tallies_mut()
            .get_mut(agent)
            .map_or_else(Vec::new, RoundTally::latencies_in_send_order)
    }

    /// Asks the agents to keep `rate` of the requests they send from now on, under a new
    /// generation: their batches of it are the first to count in the phase that asks.
    pub(super) fn ask_sampling(&mut self, rate: f64, out: &mut Decision) {
        self.rounds.generation += 1;
        out.actions.push(Action::Sampling {
            rate,
            generation: self.rounds.generation,
        });
    }

    /// The agents still with us (not lost), which share the load.
    pub(super) fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.agents.len()).filter(|&i| !self.is_lost(i))
    }

    /// The live agents that measure (not throughput-only): the samples' checks are theirs.
    pub(super) fn measuring(&self) -> impl Iterator<Item = usize> + '_ {
        self.live()
            .filter(|&i| self.config.measures.get(i).copied().unwrap_or(true))
    }

    /// How many agents share the load.
    pub(super) fn live_count(&self) -> usize {
        self.live().count().max(1)
    }

    /// Whether agent `agent` was lost earlier.
    pub(crate) fn is_lost(&self, agent: usize) -> bool {
        self.config.lost.get(agent).is_some_and(Option::is_some)
    }

    pub(super) fn event(&self, at: Duration, kind: EventKind, out: &mut Decision) {
        out.events.push(Event {
            at: at.as_secs_f64(),
            point: self.index,
            rate: self.config.rate,
            kind,
        });
    }

    /// Enters `stage` at `at`, announcing its phase with `detail`.
    pub(super) fn phase(&mut self, at: Duration, stage: Stage, detail: String, out: &mut Decision) {
        let phase = stage.phase();
        self.stage = stage;
        self.clock.phase_started = at;
        self.event(at, EventKind::Phase { phase, detail }, out);
    }

    pub(super) fn check(&self, at: Duration, check: Check, out: &mut Decision) {
        self.event(at, EventKind::Check(check), out);
    }

    /// Time spent on the point, pauses excluded.
    pub(super) fn active(&self, at: Duration) -> Duration {
        self.clock.active(at)
    }

    /// Seconds of the point's time limit still left at `at`.
    pub(super) fn seconds_left(&self, at: Duration) -> f64 {
        self.config
            .limits
            .max_duration
            .saturating_sub(self.active(at))
            .as_secs_f64()
    }
}
