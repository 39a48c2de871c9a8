//! What the dashboard shows, and what the user's keys ask for. [`App::update`] takes every
//! [`AppEvent`] (a session update, a key, the end of the run, a report) and never touches a
//! terminal or exits: keys become [`AppAction`]s that the caller carries out. Live runs and
//! replays drive the same `update`.

use std::collections::VecDeque;
use std::path::PathBuf;

use vernier_stats::Percentile;

use crate::coordinator::{
    AgentProgress, CheckKind, EventKind, Phase, PointResult, UserCommand, Verdict,
};
use crate::scenario::{LoadPlan, Method, Scenario};
use crate::session::Update;

/// Lines the event log keeps.
const LOG_LINES: usize = 500;
/// Throughput readings kept for the sparkline (two a second: two minutes).
const RATE_HISTORY: usize = 240;
/// Seconds `←`/`→` move a replay.
pub const SEEK_STEP_S: f64 = 5.0;

/// A key, as the app understands it (the terminal layer translates its own events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// The left arrow.
    Left,
    /// The right arrow.
    Right,
    /// Ctrl-C: quit without asking (the record is still saved).
    Interrupt,
}

/// What the app is fed.
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// The session (or the replayed record) said something.
    Session(Update),
    /// The user pressed a key.
    Key(Key),
    /// The session is over and its record saved.
    Finished(Finished),
    /// The report of the run was made (or could not be: why).
    Report(Result<ReportView, String>),
    /// Where a replay stands.
    Replay(ReplayStatus),
}

/// The end of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finished {
    /// The run's verdict (`None`: it failed before one).
    pub verdict: Option<Verdict>,
    /// For an SLO search, the highest load that met it.
    pub slo_rate: Option<f64>,
    /// What went wrong, if the session failed or the record is incomplete.
    pub problem: Option<String>,
}

/// A report as the UI shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportView {
    /// The report's table, as `vernier report` prints it.
    pub table: String,
    /// The plots written.
    pub plots: Vec<PathBuf>,
    /// What could not be drawn.
    pub notes: Vec<String>,
}

/// Where a replay stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayStatus {
    /// The record's time shown, seconds.
    pub at: f64,
    /// The record's last event, seconds.
    pub end: f64,
    /// Record seconds per wall second.
    pub speed: f64,
    /// Playing or paused.
    pub playing: bool,
}

/// What replay's keys ask of the player.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplayControl {
    /// Play or pause.
    Toggle,
    /// Move by this many seconds of the record.
    Seek(f64),
    /// Multiply the speed by this.
    Speed(f64),
}

/// What a key asks the caller to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AppAction {
    /// Send this command to the session.
    Command(UserCommand),
    /// Make the run's report and hand it back as [`AppEvent::Report`].
    OpenReport,
    /// Steer the replay.
    Replay(ReplayControl),
    /// Leave the UI (the session has saved the record).
    Exit,
}

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

    /// The name shown, long or short, under `method`: `method: vernier` reports the
    /// departures' fit and the samples' dependence rather than gating on them, and judges
    /// the departures by their effect on the answer, so its steps say what it does.
    pub fn name(self, method: Method, short: bool) -> &'static str {
        match (self, method, short) {
            (Step::Interarrival, Method::Vernier, false) => "departures",
            (Step::Interarrival, Method::Vernier, true) => "depart",
            (Step::Independence, Method::Vernier, false) => "dependence",
            (Step::Independence, Method::Vernier, true) => "dep",
            (step, _, short) => step.lancet_name(short),
        }
    }

    fn lancet_name(self, short: bool) -> &'static str {
        match (self, short) {
            (Step::Connect, _) => "connect",
            (Step::Load, _) => "load",
            (Step::Warmup, _) => "warm-up",
            (Step::Interarrival, false) => "inter-arrival",
            (Step::Interarrival, true) => "arrivals",
            (Step::Measure, _) => "measure",
            (Step::Independence, false) => "independence",
            (Step::Independence, true) => "indep",
            (Step::Stationarity, false) => "stationarity",
            (Step::Stationarity, true) => "station",
            (Step::Confidence, false) => "confidence",
            (Step::Confidence, true) => "conf",
            (Step::Verdict, _) => "verdict",
        }
    }

    fn index(self) -> usize {
        Step::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// One agent's row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentRow {
    /// The latest live figures.
    pub progress: Option<AgentProgress>,
    /// The last inter-arrival test: (A² or CV, p-value, pass).
    pub interarrival: Option<(Option<f64>, Option<f64>, bool)>,
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
    /// The methodology: it names the steps and says which checks gate.
    pub method: Method,
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
        }
    }
}

/// The dashboard's state.
#[derive(Debug, Clone, Default)]
pub struct App {
    /// The run.
    pub info: RunInfo,
    /// Draw with colour (off under `NO_COLOR`).
    pub color: bool,
    /// The run directory, once known.
    pub record: Option<PathBuf>,
    /// The timestamp source.
    pub timestamps: String,
    /// The coordinator's current phase.
    pub phase: Option<Phase>,
    /// Where the methodology is.
    pub step: Option<Step>,
    /// Each step's outcome in the current point (passed, failed, not yet).
    pub marks: [Option<bool>; 9],
    /// The current load point.
    pub point: usize,
    /// The current target rate, req/s.
    pub rate: f64,
    /// Seconds of the current point, pauses excluded, and its limit.
    pub elapsed_s: f64,
    /// The point's time limit, seconds.
    pub max_duration_s: f64,
    /// Per agent.
    pub agents: Vec<AgentRow>,
    /// The latest combined figures.
    pub samples: usize,
    /// Samples per agent the round waits for.
    pub samples_wanted: usize,
    /// The sampling rate.
    pub sampling_rate: f64,
    /// The CI width at the last check, µs.
    pub ci_width_us: Option<f64>,
    /// The target width, µs (unknown while a relative target has no estimate yet).
    pub ci_target_us: Option<f64>,
    /// The percentile the CI is on.
    pub ci_percentile: Percentile,
    /// Seconds until the round has its samples.
    pub eta_s: Option<f64>,
    /// The live latency CCDF of the current round: (µs, share above).
    pub ccdf: Vec<(f64, f64)>,
    /// The host's stalls while the current round measures, per probe.
    pub host: Vec<vernier_agent::StallReport>,
    /// Achieved req/s over all agents, two readings a second.
    pub throughput: VecDeque<u64>,
    /// Finished points.
    pub results: Vec<PointResult>,
    /// The finished runs of the replicated point going on.
    pub runs: Vec<PointResult>,
    /// The coordinator's decisions, newest last.
    pub log: VecDeque<String>,
    /// The load is paused.
    pub paused: bool,
    /// The run is over.
    pub finished: Option<Finished>,
    /// The run's report, once made.
    pub report: Option<Result<ReportView, String>>,
    /// The report is shown over the dashboard.
    pub show_report: bool,
    /// `q` was pressed once: the next `q` (or `y`) quits.
    pub confirm_quit: bool,
    /// The user quit: leave as soon as the session has saved the record.
    pub quitting: bool,
    /// The help overlay is open.
    pub help: bool,
    /// The latency budgets' overlay is open.
    pub show_budget: bool,
    /// A load being typed after `l`.
    pub typing: Option<String>,
    /// A one-line message for the footer (a bad key, a refused command).
    pub notice: Option<String>,
    /// How much `+`/`-` change the load, as a share of it.
    pub step_share: f64,
    /// The chart shown in a narrow terminal: `false` the CCDF, `true` latency vs load.
    pub load_chart: bool,
    /// Set when replaying a record: steering is off, the player's keys are on.
    pub replay: Option<ReplayStatus>,
}

impl App {
    /// An app for a live run of `info`.
    pub fn new(info: RunInfo, color: bool) -> App {
        App {
            info,
            color,
            step_share: 0.1,
            ci_percentile: Percentile::P99,
            ..App::default()
        }
    }

    /// An app replaying a record (no steering).
    pub fn replaying(info: RunInfo, color: bool, record: PathBuf) -> App {
        App {
            record: Some(record),
            replay: Some(ReplayStatus {
                at: 0.0,
                end: 0.0,
                speed: 1.0,
                playing: true,
            }),
            ..App::new(info, color)
        }
    }

    /// Takes one event; what the caller must do, if anything.
    pub fn update(&mut self, event: AppEvent) -> Option<AppAction> {
        match event {
            AppEvent::Session(update) => {
                self.session(&update);
                None
            }
            AppEvent::Key(key) => self.key(key),
            AppEvent::Finished(finished) => {
                self.finished = Some(finished);
                self.phase = Some(Phase::Done);
                self.eta_s = None;
                self.quitting.then_some(AppAction::Exit)
            }
            AppEvent::Report(report) => {
                self.report = Some(report);
                None
            }
            AppEvent::Replay(status) => {
                self.replay = Some(status);
                None
            }
        }
    }

    fn log(&mut self, at: f64, line: String) {
        if self.log.len() == LOG_LINES {
            self.log.pop_front();
        }
        self.log.push_back(format!("{at:7.2}s {line}"));
    }

    fn mark(&mut self, step: Step, pass: bool) {
        self.marks[step.index()] = Some(pass);
    }

    fn enter(&mut self, step: Step) {
        self.step = Some(step);
    }

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
            Update::Preparing(line) => self.log(0.0, line.clone()),
            Update::Event(e) => {
                if e.point != self.point {
                    self.new_point(e.point);
                }
                self.rate = e.rate;
                match &e.kind {
                    EventKind::Phase { phase, detail } => {
                        self.phase = Some(*phase);
                        self.paused = *phase == Phase::Paused;
                        match phase {
                            Phase::Warmup => {
                                self.marks[Step::Warmup.index()..].fill(None);
                                self.mark(Step::Connect, true);
                                self.mark(Step::Load, true);
                                self.ccdf.clear();
                                self.host.clear();
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
                        self.log(e.at, format!("{}: {detail}", phase.name()));
                    }
                    EventKind::Check(c) => {
                        if let Some(agent) = c.agent {
                            self.ensure_agents(agent + 1);
                            if c.check == CheckKind::Interarrival {
                                self.agents[agent].interarrival =
                                    Some((c.statistic, c.pvalue, c.pass));
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
                        // Under `method: vernier` the fit of the departures and the lag
                        // search are reported, not gates: their failing is in the log, not a
                        // failed step (the departures' effect on the answer is).
                        let reported = self.info.method == Method::Vernier
                            && matches!(c.check, CheckKind::Interarrival | CheckKind::Independence);
                        if c.pass || !reported {
                            self.mark(step, c.pass);
                        }
                        self.enter(step);
                        let who = c.agent.map_or(String::new(), |a| format!(" agent {a}"));
                        self.log(
                            e.at,
                            format!(
                                "{} {}{who}: {} — {}",
                                if c.pass { "✓" } else { "✗" },
                                c.check.label(),
                                c.detail,
                                c.decision
                            ),
                        );
                    }
                    EventKind::Progress(p) => {
                        self.ensure_agents(p.agents.len());
                        for (row, a) in self.agents.iter_mut().zip(&p.agents) {
                            row.progress = Some(a.clone());
                        }
                        self.samples = p.samples;
                        self.samples_wanted = p.samples_wanted;
                        self.sampling_rate = p.sampling_rate;
                        self.ci_width_us = p.ci_width_us;
                        self.ci_target_us = p.ci_target_us;
                        self.eta_s = p.eta_s;
                        self.elapsed_s = p.elapsed_s;
                        self.max_duration_s = p.max_duration_s;
                        if !p.ccdf.is_empty() {
                            self.ccdf = p.ccdf.clone();
                        }
                        if !p.host.is_empty() {
                            self.host = p.host.clone();
                        }
                        if self.throughput.len() == RATE_HISTORY {
                            self.throughput.pop_front();
                        }
                        let total: f64 = p.agents.iter().map(|a| a.achieved_rate).sum();
                        self.throughput.push_back(total.max(0.0).round() as u64);
                    }
                    EventKind::Command { command } => {
                        self.log(e.at, format!("» {command}"));
                    }
                    EventKind::Verdict(r) => {
                        self.mark(Step::Verdict, r.verdict != Verdict::NotAvailable);
                        self.enter(Step::Verdict);
                        self.ci_percentile = r.target_percentile;
                        self.log(
                            e.at,
                            format!(
                                "verdict {} at {:.0} req/s{}",
                                r.verdict.name(),
                                r.target_rate,
                                r.reasons
                                    .first()
                                    .map_or(String::new(), |x| format!(": {}", x.check))
                            ),
                        );
                        self.results.push((**r).clone());
                        self.runs.clear();
                    }
                    EventKind::Run(r) => {
                        self.log(
                            e.at,
                            format!(
                                "run {} {} at {:.0} req/s: {} µs{}",
                                r.run.unwrap_or(0),
                                r.verdict.name(),
                                r.target_rate,
                                r.percentile_text(r.target_percentile.percent()),
                                r.reasons
                                    .first()
                                    .map_or(String::new(), |x| format!(" ({})", x.check))
                            ),
                        );
                        self.runs.push((**r).clone());
                    }
                    EventKind::Window { .. } => {}
                }
            }
        }
    }

    fn new_point(&mut self, point: usize) {
        self.point = point;
        self.runs.clear();
        self.marks = [None; 9];
        self.ccdf.clear();
        self.host.clear();
        self.ci_width_us = None;
        self.eta_s = None;
        for a in &mut self.agents {
            a.interarrival = None;
        }
    }

    fn ensure_agents(&mut self, n: usize) {
        if self.agents.len() < n {
            self.agents.resize(n, AgentRow::default());
        }
    }

    fn key(&mut self, key: Key) -> Option<AppAction> {
        self.notice = None;
        if let Some(text) = self.typing.as_mut() {
            match key {
                Key::Char(c) if c.is_ascii_digit() || c == '.' || c == 'k' => text.push(c),
                Key::Backspace => {
                    text.pop();
                }
                Key::Esc => self.typing = None,
                Key::Interrupt => {
                    self.typing = None;
                    return self.quit();
                }
                Key::Enter => {
                    let text = self.typing.take().unwrap_or_default();
                    return match parse_load(&text) {
                        Some(rate) => Some(AppAction::Command(UserCommand::SetLoad(rate))),
                        None => {
                            self.notice =
                                Some(format!("not a load: {text:?} (write 20000 or 20k)"));
                            None
                        }
                    };
                }
                _ => {}
            }
            return None;
        }
        if key == Key::Interrupt {
            return self.quit();
        }
        if self.confirm_quit {
            self.confirm_quit = false;
            return match key {
                Key::Char('q' | 'y') => self.quit(),
                _ => None,
            };
        }
        if self.show_report {
            if matches!(key, Key::Esc | Key::Char('r' | 'q')) {
                self.show_report = false;
            }
            return None;
        }
        match key {
            Key::Char('?') => {
                self.help = !self.help;
                return None;
            }
            Key::Esc => {
                self.help = false;
                self.show_budget = false;
                return None;
            }
            Key::Char('b') => {
                self.show_budget = !self.show_budget;
                self.help = false;
                return None;
            }
            Key::Char('g') => {
                self.load_chart = !self.load_chart;
                return None;
            }
            Key::Char('r') => {
                if self.finished.is_none() {
                    self.notice = Some("the report is ready when the run has finished".into());
                    return None;
                }
                self.show_report = true;
                self.help = false;
                return self.report.is_none().then_some(AppAction::OpenReport);
            }
            _ => {}
        }
        if self.replay.is_some() {
            return self.replay_key(key);
        }
        match key {
            Key::Char('q') if self.finished.is_some() => Some(AppAction::Exit),
            Key::Char('q') => {
                self.confirm_quit = true;
                None
            }
            _ if self.finished.is_some() => {
                if matches!(key, Key::Char('p' | '+' | '-' | 'l' | 'a' | 'c')) {
                    self.notice = Some("the run is over: r report, q quit".into());
                }
                None
            }
            Key::Char('p') => Some(AppAction::Command(if self.paused {
                UserCommand::Resume
            } else {
                UserCommand::Pause
            })),
            Key::Char('+' | '=') if self.rate > 0.0 => Some(AppAction::Command(
                UserCommand::SetLoad(self.rate * (1.0 + self.step_share)),
            )),
            Key::Char('-') if self.rate > 0.0 => Some(AppAction::Command(UserCommand::SetLoad(
                self.rate * (1.0 - self.step_share),
            ))),
            Key::Char('l') => {
                self.typing = Some(String::new());
                None
            }
            Key::Char('a') => Some(AppAction::Command(UserCommand::Accept)),
            Key::Char('c') => Some(AppAction::Command(UserCommand::Continue)),
            _ => None,
        }
    }

    fn replay_key(&mut self, key: Key) -> Option<AppAction> {
        match key {
            Key::Char('q') => Some(AppAction::Exit),
            Key::Char(' ') => Some(AppAction::Replay(ReplayControl::Toggle)),
            Key::Left => Some(AppAction::Replay(ReplayControl::Seek(-SEEK_STEP_S))),
            Key::Right => Some(AppAction::Replay(ReplayControl::Seek(SEEK_STEP_S))),
            Key::Char('[') => Some(AppAction::Replay(ReplayControl::Speed(0.5))),
            Key::Char(']') => Some(AppAction::Replay(ReplayControl::Speed(2.0))),
            Key::Char('p' | '+' | '-' | 'l' | 'a' | 'c') => {
                self.notice = Some("a replay cannot be steered: space, ←/→, [/] move it".into());
                None
            }
            _ => None,
        }
    }

    /// Quits: at once if the run is over (or replayed), else after the session saves.
    fn quit(&mut self) -> Option<AppAction> {
        if self.finished.is_some() || self.replay.is_some() {
            return Some(AppAction::Exit);
        }
        if self.quitting {
            return None;
        }
        self.quitting = true;
        Some(AppAction::Command(UserCommand::Quit))
    }
}

impl PartialOrd for Step {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.index().partial_cmp(&other.index())
    }
}

/// A load as typed: `20000`, `20k`, `2.5k`.
fn parse_load(text: &str) -> Option<f64> {
    let rate = match text.strip_suffix('k') {
        Some(k) => k.parse::<f64>().ok()? * 1000.0,
        None => text.parse::<f64>().ok()?,
    };
    (rate > 0.0 && rate.is_finite()).then_some(rate)
}

#[cfg(test)]
mod tests;
