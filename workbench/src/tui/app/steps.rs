//! What an event does to the [`App`]: a session's update moves the methodology's steps,
//! the live figures and the log; the end of the run, a report or the replay's position is
//! kept; a key goes to `keys`.

use super::event::{AppAction, AppEvent};
use super::info::Step;
use super::state::{AgentRow, App, CheckLine, Entry, InterarrivalMark, LogLine, Mode};
use crate::coordinator::CheckOutcome;
use crate::coordinator::{CheckKind, EventKind, Phase, Progress};
use crate::record::{ShownCheck, ShownEvent, ShownPoint};
use crate::session::Update;

/// Lines the event log keeps.
const LOG_LINES: usize = 500;
/// Throughput readings kept for the sparkline (two a second: two minutes).
const RATE_HISTORY: usize = 240;

impl App {
    /// Takes one event; what the caller must do, if anything.
    pub fn update(&mut self, event: AppEvent) -> Option<AppAction> {
        match event {
            AppEvent::Session(update) => {
                self.session(&update);
                None
            }
            AppEvent::Recorded(e) => {
                self.event(&e);
                None
            }
            AppEvent::Key(key) => self.key(key),
            AppEvent::Finished(finished) => {
                self.history.finished = Some(finished);
                self.live.phase = Some(Phase::Done);
                self.live.eta_s = None;
                (self.ui.mode == Mode::Quitting).then_some(AppAction::Exit)
            }
            AppEvent::Report(report) => {
                self.history.report = Some(report);
                None
            }
            AppEvent::Replay(status) => {
                self.replay = Some(status);
                None
            }
        }
    }

    /// Adds a line to the log, stamped with the coordinator's clock `at`.
    fn log(&mut self, at: f64, entry: Entry) {
        if self.history.log.len() == LOG_LINES {
            self.history.log.pop_front();
        }
        self.history.log.push_back(LogLine { at, entry });
    }

    /// Marks `step` of the current point passed or failed.
    fn mark(&mut self, step: Step, pass: bool) {
        self.live.marks[step.index()] = Some(pass);
    }

    /// The methodology is now at `step`.
    fn enter(&mut self, step: Step) {
        self.live.step = Some(step);
    }

    /// A session's update.
    fn session(&mut self, update: &Update) {
        match update {
            Update::Started {
                record, timestamps, ..
            } => {
                self.record = Some(record.clone());
                self.timestamps = timestamps.clone();
                self.mark(Step::Connect, true);
                self.enter(Step::Load);
            }
            // Before the coordinator's clock starts.
            Update::Preparing(line) => self.log(0.0, Entry::Note(line.clone())),
            Update::Event(e) => self.event(&ShownEvent::from(e)),
        }
    }

    /// One of the coordinator's events.
    fn event(&mut self, e: &ShownEvent) {
        if e.point != self.live.point {
            self.new_point(e.point);
        }
        self.live.rate = e.rate;
        match &e.kind {
            EventKind::Phase { phase, detail } => self.phase(e.at, *phase, detail),
            EventKind::Check(c) => self.check(e.at, c),
            EventKind::Progress(p) => self.progress(p),
            EventKind::Command { command } => {
                self.log(e.at, Entry::Command(command.clone()));
            }
            EventKind::Verdict(r) => self.verdict(e.at, r),
            EventKind::Run(r) => self.run(e.at, r),
            EventKind::Window { .. } => {}
        }
    }

    /// The coordinator entered `phase`.
    fn phase(&mut self, at: f64, phase: Phase, detail: &str) {
        self.live.phase = Some(phase);
        self.live.paused = phase == Phase::Paused;
        match phase {
            Phase::Warmup => {
                self.live.marks[Step::Warmup.index()..].fill(None);
                self.mark(Step::Connect, true);
                self.mark(Step::Load, true);
                self.live.ccdf.clear();
                self.live.host.clear();
                self.enter(Step::Warmup);
            }
            Phase::Interarrival => {
                self.mark(Step::Warmup, true);
                self.enter(Step::Interarrival);
            }
            Phase::Measure => {
                self.mark(Step::Interarrival, true);
                self.enter(Step::Measure);
            }
            Phase::Paused | Phase::Done => {}
        }
        self.log(at, Entry::Note(format!("{}: {detail}", phase.name())));
    }

    /// A check's outcome: its step's mark, the agent's row, the log.
    fn check(&mut self, at: f64, c: &ShownCheck) {
        let line = CheckLine {
            check: c.check,
            agent: c.agent,
            pass: c.pass,
            role: c.role,
            decision: c.decision.clone(),
            detail: c.detail.clone(),
        };
        if let Some(agent) = c.agent {
            self.ensure_agents(agent + 1);
            if c.check == CheckKind::Interarrival {
                self.live.agents[agent].interarrival = Some(InterarrivalMark {
                    statistic: c.statistic,
                    pvalue: c.pvalue,
                    outcome: line.outcome(),
                });
            }
        }
        let step = match c.check {
            CheckKind::Rate | CheckKind::WarmupStationarity => Step::Warmup,
            CheckKind::Interarrival | CheckKind::Departures => Step::Interarrival,
            CheckKind::Independence => Step::Independence,
            CheckKind::Stationarity => Step::Stationarity,
            CheckKind::Agreement | CheckKind::Confidence => Step::Confidence,
        };
        if step > Step::Measure {
            self.mark(Step::Measure, true);
        }
        // A reported check's failing is in the log, not a failed step.
        match line.outcome() {
            CheckOutcome::Passed => self.mark(step, true),
            CheckOutcome::Failed => self.mark(step, false),
            CheckOutcome::Reported => {}
        }
        self.enter(step);
        self.log(at, Entry::Check(line));
    }

    /// The live figures of the point.
    fn progress(&mut self, p: &Progress) {
        self.ensure_agents(p.agents.len());
        for (row, a) in self.live.agents.iter_mut().zip(&p.agents) {
            row.progress = Some(a.clone());
        }
        self.live.samples = p.samples;
        self.live.samples_wanted = p.samples_wanted;
        self.live.sampling_rate = p.sampling_rate;
        self.live.ci_width_us = p.ci_width_us;
        self.live.ci_target_us = p.ci_target_us;
        self.live.eta_s = p.eta_s;
        self.live.elapsed_s = p.elapsed_s;
        self.live.max_duration_s = p.max_duration_s;
        if !p.ccdf.is_empty() {
            self.live.ccdf = p.ccdf.clone();
        }
        if !p.host.is_empty() {
            self.live.host = p.host.clone();
        }
        if self.live.throughput.len() == RATE_HISTORY {
            self.live.throughput.pop_front();
        }
        let total: f64 = p.agents.iter().map(|a| a.achieved_rate).sum();
        self.live
            .throughput
            .push_back(total.max(0.0).round() as u64);
    }

    /// A point's verdict.
    fn verdict(&mut self, at: f64, r: &ShownPoint) {
        self.mark(Step::Verdict, r.answer().answered());
        self.enter(Step::Verdict);
        self.live.ci_percentile = r.target_percentile;
        self.log(
            at,
            Entry::Note(format!(
                "verdict {} at {:.0} req/s{}",
                r.verdict.name(),
                r.target_rate,
                r.reasons
                    .first()
                    .map_or(String::new(), |x| format!(": {}", x.kind()))
            )),
        );
        self.history.results.push(r.clone());
        self.history.runs.clear();
    }

    /// One run of a replicated point.
    fn run(&mut self, at: f64, r: &ShownPoint) {
        self.log(
            at,
            Entry::Note(format!(
                "run {} {} at {:.0} req/s: {} µs{}",
                r.run.unwrap_or(0),
                r.verdict.name(),
                r.target_rate,
                r.percentile_text(r.target_percentile.percent()),
                r.reasons
                    .first()
                    .map_or(String::new(), |x| format!(" ({})", x.kind()))
            )),
        );
        self.history.runs.push(r.clone());
    }

    /// A new load point: its marks, its live figures and its runs start afresh.
    fn new_point(&mut self, point: usize) {
        self.live.point = point;
        self.history.runs.clear();
        self.live.marks = [None; Step::ALL.len()];
        self.live.ccdf.clear();
        self.live.host.clear();
        self.live.ci_width_us = None;
        self.live.eta_s = None;
        for a in &mut self.live.agents {
            a.interarrival = None;
        }
    }

    /// Rows for at least `n` agents.
    fn ensure_agents(&mut self, n: usize) {
        if self.live.agents.len() < n {
            self.live.agents.resize(n, AgentRow::default());
        }
    }
}
