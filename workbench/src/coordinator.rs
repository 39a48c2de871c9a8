//! The methodology (Lancet §4.3, all of it) as a pure state machine: it is fed
//! observations (agents' batches, clock ticks, the user's commands) and answers with
//! actions for the agents and events for everyone watching. No I/O: the session does
//! that, and tests drive it with made-up batches.
//!
//! Per load point: warm-up (achieved rate within tolerance and the per-window latency
//! stationary by ADF) → inter-arrival check (Anderson-Darling per agent) → measure
//! (10,000 samples at 20% to start) → independence (Spearman lag search; sampling ÷ lag)
//! → stationarity (ADF; more samples) → confidence (per-agent CIs must overlap; the
//! combined CI no wider than asked; the next sample count predicted from the width) →
//! converged, or N/A with every failed check and its figures.

//!
//! This file holds the run (one point after another, an SLO search, replicated points'
//! runs); what it is fed and answers, the point's configuration, its events and results
//! live in the files below, re-exported here.

mod budget_parts;
pub mod check_next;
mod checks;
mod config;
mod decision;
mod event;
mod figure;
pub mod findings;
pub mod fitness;
mod input;
pub(crate) mod point;
pub(crate) mod policy;
pub mod reason;
mod reason_ci;
mod reason_kind;
pub mod replication;
mod result;
mod schedule;
pub mod text;

use std::collections::VecDeque;
use std::time::Duration;

pub use budget_parts::{Budget, HostPart, Part, ProbeWindow};
pub use config::PointConfig;
pub use decision::{Action, Decision, Taken};
pub use event::{
    AgentProgress, Check, CheckData, CheckKind, CheckOutcome, CheckRole, Event, EventKind, Phase,
    Progress,
};
pub use figure::Figure;
pub use input::{Input, UserCommand};
pub use reason::{Reason, ReasonKind, Why};
pub use result::{
    AcrossMethod, AcrossRuns, AgentResult, CalledBy, CiDependence, DriftSeen, EarlierLook,
    InterarrivalResult, PercentileResult, PointResult, Probed, Replication, SchedulePercentile,
    Spread, TouchedCall, TouchedSide, Verdict, WithoutStalls,
};

use crate::scenario::{LoadPlan, OnAgentLoss, Replications, SloSearch};
use point::Point;
use policy::SEARCH_GROWTH;
use reason::{AgentLost, Moment, Quit};

/// The search for the highest load meeting an SLO: doubling from `from` until a load
/// fails, then bisection until the bracket is narrower than `precision`.
#[derive(Debug, Clone)]
struct Search {
    slo: SloSearch,
    /// The highest load that met the objective.
    pass: Option<f64>,
    /// The lowest load that did not.
    fail: Option<f64>,
}

impl Search {
    /// Records a probe and says which load to try next.
    fn next(&mut self, rate: f64, result: &PointResult) -> Option<f64> {
        let bound_us = self.slo.below.as_secs_f64() * 1e6;
        // A wide point is answered too: its CI decides when it lies wholly under the bound.
        let met = result.answer().answered()
            && result
                .asked_target()
                .and_then(|t| t.ci_high)
                .is_some_and(|h| h < bound_us);
        if met {
            self.pass = Some(self.pass.map_or(rate, |p| p.max(rate)));
        } else {
            self.fail = Some(self.fail.map_or(rate, |f| f.min(rate)));
        }
        match (self.pass, self.fail) {
            (None, _) => None,
            (Some(p), None) if p >= self.slo.to => None,
            (Some(p), None) => Some((p * SEARCH_GROWTH).min(self.slo.to)),
            (Some(p), Some(f)) if f <= p => None,
            (Some(p), Some(f)) if (f - p) / p <= self.slo.precision => None,
            (Some(p), Some(f)) => Some((p + f) / 2.0),
        }
    }
}

/// The whole run: one load point after another (a fixed load, a sweep, or an SLO search).
#[derive(Debug)]
pub struct Coordinator {
    base: PointConfig,
    queue: VecDeque<f64>,
    search: Option<Search>,
    point: Option<Point>,
    results: Vec<PointResult>,
    /// The runs of the current replicated point so far.
    runs: Vec<PointResult>,
    /// Between two runs of a replicated point: when the next may start.
    between: Option<Duration>,
    /// The user accepted during a run of a replicated point: the point ends with it.
    accepting: bool,
    /// The user quit or an agent was lost: no further points.
    stopped: bool,
    done: bool,
}

impl Coordinator {
    /// A coordinator for `plan`; nothing happens until [`Coordinator::start`].
    pub fn new(base: PointConfig, plan: &LoadPlan) -> Coordinator {
        let (queue, search) = match plan {
            LoadPlan::Fixed(r) => (VecDeque::from([*r]), None),
            LoadPlan::Sweep(rates) => (rates.iter().copied().collect(), None),
            LoadPlan::Slo(s) => (
                VecDeque::from([s.from]),
                Some(Search {
                    slo: s.clone(),
                    pass: None,
                    fail: None,
                }),
            ),
        };
        Coordinator {
            base,
            queue,
            search,
            point: None,
            results: Vec::new(),
            runs: Vec::new(),
            between: None,
            accepting: false,
            stopped: false,
            done: false,
        }
    }

    /// Starts the first load point (the agents are connected).
    pub fn start(&mut self, at: Duration) -> Decision {
        let mut out = Decision::default();
        self.next_point(at, &mut out);
        out
    }

    /// Feeds one input.
    pub fn step(&mut self, at: Duration, input: Input) -> Decision {
        let mut out = Decision::default();
        if self.done {
            return out;
        }
        let Some(point) = self.point.as_mut() else {
            if self.between.is_some() {
                self.between_runs(at, input, &mut out);
            }
            return out;
        };
        match input {
            Input::Batch { agent, batch } => {
                let round = point.batch(at, agent, &batch, &mut out);
                out.taken = Some(Taken {
                    point: self.results.len(),
                    round,
                    agent,
                    batch,
                });
            }
            Input::Tick => point.tick(at, &mut out),
            Input::Host(reports) => point.add_host(&reports),
            Input::Command(command) => {
                let event = Self::command_event(point, at, self.results.len(), command);
                out.events.push(event);
                self.obey(at, command, &mut out);
            }
            Input::AgentLost { agent, detail } => self.agent_lost(at, agent, detail, &mut out),
        }
        if let Some(result) = self.point.as_ref().and_then(|p| p.result()).cloned() {
            if result.run.is_some() {
                self.run_ended(at, result, &mut out);
            } else {
                self.point_ended(at, result, &mut out);
            }
        }
        out
    }

    /// Does what the user's `command` asks of the current point, if there is one (`step`
    /// calls it only while a point runs).
    fn obey(&mut self, at: Duration, command: UserCommand, out: &mut Decision) {
        let Some(point) = self.point.as_mut() else {
            return;
        };
        match command {
            UserCommand::Pause => point.pause(at, out),
            UserCommand::Resume => point.resume(at, out),
            UserCommand::SetLoad(rate) if rate > 0.0 && rate.is_finite() => {
                point.set_load(at, rate, out)
            }
            UserCommand::SetLoad(_) => {}
            UserCommand::Accept => {
                // In a replicated point, accepting ends the point with this run.
                self.accepting = self.base.replications.is_some();
                point.accept(at, out)
            }
            UserCommand::Continue => {}
            UserCommand::Quit => {
                point.abort(
                    at,
                    Reason::new(Why::Quit(Quit {
                        moment: Moment::InRun,
                    })),
                    out,
                );
                self.queue.clear();
                self.stopped = true;
            }
        }
    }

    /// An agent is lost during the current point (`step` calls it only while a point
    /// runs): nothing again for an agent already lost; the point goes on without it where
    /// the scenario says so and it can; otherwise the point is aborted and no further
    /// points run.
    fn agent_lost(&mut self, at: Duration, agent: usize, detail: String, out: &mut Decision) {
        let Some(point) = self.point.as_mut() else {
            return;
        };
        if point.is_lost(agent) {
            // Its heartbeat and its stream each report it: once is enough.
            return;
        }
        if self.base.on_agent_loss == OnAgentLoss::Continue && point.can_lose(agent) {
            point.lose_agent(at, agent, &detail, out);
            return;
        }
        point.abort(
            at,
            Reason::new(Why::AgentLost(AgentLost {
                agent,
                moment: Moment::InRun,
                cause: detail,
            })),
            out,
        );
        self.queue.clear();
        self.stopped = true;
    }

    /// The event a user's `command` makes at the point of index `index`, in words: with
    /// `Continue`, the point's limits are extended first, and the event says to what.
    fn command_event(point: &mut Point, at: Duration, index: usize, command: UserCommand) -> Event {
        let text = match command {
            UserCommand::Continue => {
                let (limits, predicted) = point.extend_limits(at);
                format!(
                    "continue past the limits: this point may now run {} and {} tries{}",
                    humantime::format_duration(limits.max_duration),
                    limits.max_tries,
                    predicted.map_or(String::new(), |s| format!(
                        " (about {} more at this rate: what the CI's last look predicts it needs)",
                        humantime::format_duration(Duration::from_secs(s.ceil() as u64))
                    ))
                )
            }
            c => c.to_string(),
        };
        Event {
            at: at.as_secs_f64(),
            point: index,
            rate: point.rate(),
            kind: EventKind::Command { command: text },
        }
    }

    /// A point has its result (a replicated point's, across its runs).
    fn point_ended(&mut self, at: Duration, result: PointResult, out: &mut Decision) {
        let rate = result.target_rate;
        self.results.push(result);
        if !self.stopped
            && let Some(search) = self.search.as_mut()
            && let Some(last) = self.results.last()
            && let Some(next) = search.next(rate, last)
        {
            self.queue.push_back(next);
        }
        self.next_point(at, out);
    }

    /// A run of a replicated point has its own verdict: another run, or the point's.
    fn run_ended(&mut self, at: Duration, run: PointResult, out: &mut Decision) {
        self.point = None;
        self.runs.push(run);
        // The load stops after every run: before the next run's fresh connections, or
        // the next point's load (its backlog dropped, as between points).
        out.actions.push(Action::Pause);
        let accepting = std::mem::take(&mut self.accepting);
        if accepting
            && self.runs.last().is_some_and(|r| {
                r.reasons
                    .iter()
                    .any(|x| x.kind() == ReasonKind::AcceptedEmpty)
            })
            && self.runs.len() > 1
        {
            // Accepted before this run measured anything: the point is the runs before it.
            self.runs.pop();
        }
        if accepting && let Some(mut result) = self.runs_so_far() {
            result.verdict = Verdict::Accepted;
            result.settle_answer();
            self.replicated_point_ended(at, result, out);
            return;
        }
        // Only a replicated point's runs end here.
        let Some(plan) = self.base.replications else {
            return;
        };
        match replication::next(&self.runs, &plan, self.base.ci.confidence) {
            replication::Next::Run => {
                out.actions.push(Action::Renew {
                    run: self.runs.len() as u32 + 1,
                });
                self.between = Some(at + plan.pause);
            }
            replication::Next::Done(result) => self.replicated_point_ended(at, *result, out),
        }
    }

    /// A replicated point's result: its verdict event, then on to the next point.
    fn replicated_point_ended(&mut self, at: Duration, result: PointResult, out: &mut Decision) {
        self.runs.clear();
        self.between = None;
        out.events.push(Event {
            at: at.as_secs_f64(),
            point: self.results.len(),
            rate: result.target_rate,
            kind: EventKind::Verdict(Box::new(result.clone())),
        });
        self.point_ended(at, result, out);
    }

    /// The replicated point's result from the runs so far, with no more runs to come: the
    /// across-run CI decides as at the last run allowed.
    fn runs_so_far(&self) -> Option<PointResult> {
        let plan = self.base.replications?;
        let last = self.runs.last()?;
        let k = self.runs.len() as u32;
        let plan = Replications {
            min: k.min(plan.min),
            max: k,
            ..plan
        };
        let confidence = self.base.ci.confidence;
        Some(match replication::next(&self.runs, &plan, confidence) {
            replication::Next::Done(r) => *r,
            replication::Next::Run => replication::summary(
                last,
                &self.runs,
                &plan,
                confidence,
                Verdict::NotAvailable,
                Vec::new(),
            ),
        })
    }

    /// Between two runs: the next starts once the pause is over; a quit, an accept or a
    /// lost agent ends the point with the runs so far.
    fn between_runs(&mut self, at: Duration, input: Input, out: &mut Decision) {
        let Some(rate) = self.runs.last().map(|r| r.target_rate) else {
            self.between = None;
            return;
        };
        let point = self.results.len();
        let command = |out: &mut Decision, text: String| {
            out.events.push(Event {
                at: at.as_secs_f64(),
                point,
                rate,
                kind: EventKind::Command { command: text },
            });
        };
        let (verdict, reason, stop) = match input {
            Input::Command(UserCommand::Quit) => {
                command(out, UserCommand::Quit.to_string());
                let reason = Reason::new(Why::Quit(Quit {
                    moment: Moment::BetweenRuns,
                }));
                (Verdict::NotAvailable, Some(reason), true)
            }
            Input::Command(UserCommand::Accept) => {
                command(out, UserCommand::Accept.to_string());
                (Verdict::Accepted, None, false)
            }
            Input::Command(c) => {
                command(out, format!("{c}: ignored between runs"));
                return;
            }
            Input::AgentLost { agent, detail } => {
                let reason = Reason::new(Why::AgentLost(AgentLost {
                    agent,
                    moment: Moment::BetweenRuns,
                    cause: detail.clone(),
                }));
                (Verdict::NotAvailable, Some(reason), true)
            }
            Input::Tick | Input::Batch { .. } | Input::Host(_)
                if self.between.is_some_and(|t| at >= t) =>
            {
                self.between = None;
                let run = self.runs.len() as u32 + 1;
                let rounds = self.runs.iter().map(|r| r.round).max().unwrap_or(0);
                let config = PointConfig {
                    rate,
                    lost: self.lost_now(),
                    ..self.base.clone()
                };
                self.point = Some(Point::start(config, point, Some((run, rounds)), at, out));
                return;
            }
            // Batches of the last run still in flight are not counted.
            Input::Tick | Input::Batch { .. } | Input::Host(_) => return,
        };
        let Some(mut result) = self.runs_so_far() else {
            return;
        };
        result.verdict = verdict;
        result.settle_answer();
        if let Some(reason) = reason {
            result.reasons.insert(0, reason);
        }
        if stop {
            self.queue.clear();
            self.stopped = true;
        }
        self.replicated_point_ended(at, result, out);
    }

    /// Which agents were lost, and why: the point's own record of it while one runs (a
    /// point loses agents), carried into the next; none before the first.
    fn lost_now(&self) -> Vec<Option<String>> {
        self.point
            .as_ref()
            .map_or_else(|| self.base.lost.clone(), |p| p.lost().to_vec())
    }

    fn next_point(&mut self, at: Duration, out: &mut Decision) {
        match self.queue.pop_front() {
            Some(rate) => {
                if self.point.is_some() {
                    // Between points: drop the last point's backlog before the next load.
                    out.actions.push(Action::Pause);
                }
                let config = PointConfig {
                    rate,
                    lost: self.lost_now(),
                    ..self.base.clone()
                };
                let run = self.base.replications.map(|_| (1, 0));
                self.point = Some(Point::start(config, self.results.len(), run, at, out));
            }
            None => {
                self.point = None;
                self.done = true;
                out.actions.push(Action::Finished);
            }
        }
    }

    /// Whether the run is over.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The current load point's index and measurement round (0 outside measurement):
    /// the record's `point` and `round` columns.
    pub fn position(&self) -> (usize, u32) {
        (
            self.results.len(),
            self.point.as_ref().map_or(0, |p| p.round()),
        )
    }

    /// The finished points' results, in order.
    pub fn results(&self) -> &[PointResult] {
        &self.results
    }

    /// In an SLO search, the highest load that met the objective.
    pub fn slo_rate(&self) -> Option<f64> {
        self.search.as_ref().and_then(|s| s.pass)
    }

    /// The run's verdict: a single point's; a sweep's n/a if any point is, else wide if any
    /// point is, else converged; an SLO search's converged when a rate was found.
    pub fn verdict(&self) -> Option<Verdict> {
        if !self.done {
            return None;
        }
        if self.search.is_some() {
            return Some(if self.slo_rate().is_some() {
                Verdict::Converged
            } else {
                Verdict::NotAvailable
            });
        }
        // Each point's answer: the verdict of the tail its CI target was for.
        let verdicts: Vec<Verdict> = self.results.iter().map(PointResult::answer).collect();
        Some(match verdicts.as_slice() {
            [one] => *one,
            many => Verdict::of_all(many.iter().copied()),
        })
    }
}

#[cfg(test)]
mod tests;
