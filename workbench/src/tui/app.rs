//! What the dashboard shows, updated from the session's [`Update`]s, and what the user's
//! keys ask for. `App::update` never touches a terminal or exits: keys become
//! [`AppAction`]s that the caller carries out.

use std::collections::VecDeque;
use std::path::PathBuf;

use crate::coordinator::{
    AgentProgress, CheckKind, EventKind, Phase, PointResult, UserCommand, Verdict,
};
use crate::session::Update;

/// Lines the event log keeps.
const LOG_LINES: usize = 500;

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
}

/// What a key asks the caller to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AppAction {
    /// Send this command to the session.
    Command(UserCommand),
    /// Leave the UI (after the session has saved the record).
    Exit,
}

/// One agent's row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentRow {
    /// The latest live figures.
    pub progress: Option<AgentProgress>,
    /// The last inter-arrival test: (A² or CV, p-value, pass).
    pub interarrival: Option<(Option<f64>, Option<f64>, bool)>,
}

/// The dashboard's state.
#[derive(Debug, Clone, Default)]
pub struct App {
    /// The scenario's name.
    pub name: String,
    /// The run directory, once known.
    pub record: Option<PathBuf>,
    /// The timestamp source.
    pub timestamps: String,
    /// The current phase.
    pub phase: Option<Phase>,
    /// The current load point and its rate.
    pub point: usize,
    /// The current target rate, req/s.
    pub rate: f64,
    /// Seconds since the session started, as of the latest event.
    pub now: f64,
    /// When the current point started.
    pub point_started: f64,
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
    /// The target width, µs.
    pub ci_target_us: f64,
    /// Seconds until the round has its samples.
    pub eta_s: Option<f64>,
    /// Finished points.
    pub results: Vec<PointResult>,
    /// The coordinator's decisions, newest last.
    pub log: VecDeque<String>,
    /// The load is paused.
    pub paused: bool,
    /// Every point is done.
    pub finished: bool,
    /// `q` was pressed once: the next `q` (or `y`) quits.
    pub confirm_quit: bool,
    /// The help overlay is open.
    pub help: bool,
    /// A load being typed after `l`.
    pub typing: Option<String>,
    /// How much `+`/`-` change the load, as a share of it.
    pub step: f64,
}

impl App {
    /// An app for the scenario `name`.
    pub fn new(name: &str) -> App {
        App {
            name: name.to_string(),
            step: 0.1,
            ..App::default()
        }
    }

    fn log(&mut self, at: f64, line: String) {
        if self.log.len() == LOG_LINES {
            self.log.pop_front();
        }
        self.log.push_back(format!("{at:7.2}s {line}"));
    }

    /// Takes one update from the session.
    pub fn session(&mut self, update: &Update) {
        match update {
            Update::Started { record, timestamps } => {
                self.record = Some(record.clone());
                self.timestamps = timestamps.clone();
            }
            Update::Event(e) => {
                self.now = self.now.max(e.at);
                if e.point != self.point || self.phase.is_none() {
                    self.point = e.point;
                    self.point_started = e.at;
                }
                self.rate = e.rate;
                match &e.kind {
                    EventKind::Phase { phase, detail } => {
                        self.phase = Some(*phase);
                        self.paused = *phase == Phase::Paused;
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
                        let who = c.agent.map_or(String::new(), |a| format!(" agent {a}"));
                        self.log(
                            e.at,
                            format!(
                                "{}{who} {:?}: {} — {}",
                                if c.pass { "✓" } else { "✗" },
                                c.check,
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
                    }
                    EventKind::Command { command } => self.log(e.at, format!("command: {command}")),
                    EventKind::Verdict(r) => {
                        self.log(
                            e.at,
                            format!(
                                "verdict {} at {:.0} req/s{}",
                                r.verdict.name(),
                                r.target_rate,
                                r.reasons
                                    .first()
                                    .map_or(String::new(), |x| format!(": {}", x.detail))
                            ),
                        );
                        self.results.push((**r).clone());
                    }
                    EventKind::Window { .. } => {}
                }
            }
        }
    }

    fn ensure_agents(&mut self, n: usize) {
        if self.agents.len() < n {
            self.agents.resize(n, AgentRow::default());
        }
    }

    /// The run is over.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Takes one key; the action for the caller, if any.
    pub fn key(&mut self, key: Key) -> Option<AppAction> {
        if let Some(text) = self.typing.as_mut() {
            match key {
                Key::Char(c) if c.is_ascii_digit() || c == '.' || c == 'k' => text.push(c),
                Key::Backspace => {
                    text.pop();
                }
                Key::Esc => self.typing = None,
                Key::Enter => {
                    let text = self.typing.take().unwrap_or_default();
                    let rate = match text.strip_suffix('k') {
                        Some(k) => k.parse::<f64>().map(|r| r * 1000.0),
                        None => text.parse::<f64>(),
                    };
                    return match rate {
                        Ok(r) if r > 0.0 && r.is_finite() => {
                            Some(AppAction::Command(UserCommand::SetLoad(r)))
                        }
                        _ => {
                            self.log(
                                self.now,
                                format!("not a load: {text:?} (as in 20000 or 20k)"),
                            );
                            None
                        }
                    };
                }
                _ => {}
            }
            return None;
        }
        if self.confirm_quit {
            self.confirm_quit = false;
            return matches!(key, Key::Char('q' | 'y')).then(|| {
                if self.finished {
                    AppAction::Exit
                } else {
                    AppAction::Command(UserCommand::Quit)
                }
            });
        }
        match key {
            Key::Char('q') if self.finished => Some(AppAction::Exit),
            Key::Char('q') => {
                self.confirm_quit = true;
                None
            }
            Key::Char('?') => {
                self.help = !self.help;
                None
            }
            Key::Esc => {
                self.help = false;
                None
            }
            _ if self.finished => None,
            Key::Char('p') => Some(AppAction::Command(if self.paused {
                UserCommand::Resume
            } else {
                UserCommand::Pause
            })),
            Key::Char('+') if self.rate > 0.0 => Some(AppAction::Command(UserCommand::SetLoad(
                self.rate * (1.0 + self.step),
            ))),
            Key::Char('-') if self.rate > 0.0 => Some(AppAction::Command(UserCommand::SetLoad(
                self.rate * (1.0 - self.step),
            ))),
            Key::Char('l') => {
                self.typing = Some(String::new());
                None
            }
            Key::Char('a') => Some(AppAction::Command(UserCommand::Accept)),
            _ => None,
        }
    }

    /// The latest finished point's verdict.
    pub fn last_verdict(&self) -> Option<Verdict> {
        self.results.last().map(|r| r.verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_commands_and_quit_asks_first() {
        let mut app = App::new("t");
        app.rate = 20_000.0;
        assert_eq!(
            app.key(Key::Char('p')),
            Some(AppAction::Command(UserCommand::Pause))
        );
        app.paused = true;
        assert_eq!(
            app.key(Key::Char('p')),
            Some(AppAction::Command(UserCommand::Resume))
        );
        assert_eq!(
            app.key(Key::Char('+')),
            Some(AppAction::Command(UserCommand::SetLoad(22_000.0)))
        );
        assert_eq!(
            app.key(Key::Char('-')),
            Some(AppAction::Command(UserCommand::SetLoad(18_000.0)))
        );
        assert_eq!(
            app.key(Key::Char('a')),
            Some(AppAction::Command(UserCommand::Accept))
        );
        // `l` then a typed load.
        assert_eq!(app.key(Key::Char('l')), None);
        for c in "25k".chars() {
            assert_eq!(app.key(Key::Char(c)), None);
        }
        assert_eq!(
            app.key(Key::Enter),
            Some(AppAction::Command(UserCommand::SetLoad(25_000.0)))
        );
        // A bad load is logged, not sent.
        app.key(Key::Char('l'));
        app.key(Key::Char('.'));
        assert_eq!(app.key(Key::Enter), None);
        assert!(app.log.back().unwrap().contains("not a load"));
        // Quit asks; anything but q/y cancels.
        assert_eq!(app.key(Key::Char('q')), None);
        assert!(app.confirm_quit);
        assert_eq!(app.key(Key::Char('n')), None);
        assert!(!app.confirm_quit);
        app.key(Key::Char('q'));
        assert_eq!(
            app.key(Key::Char('y')),
            Some(AppAction::Command(UserCommand::Quit))
        );
        // Once finished, q leaves at once and steering keys do nothing.
        app.finish();
        assert_eq!(app.key(Key::Char('a')), None);
        assert_eq!(app.key(Key::Char('q')), Some(AppAction::Exit));
        assert_eq!(app.key(Key::Char('?')), None);
        assert!(app.help);
    }
}
