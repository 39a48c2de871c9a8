//! What a key does to the [`App`]: typing a load, the overlays, steering the session
//! (pause, load, accept, continue), quitting, and a replay's player keys. A key never
//! exits or touches the session itself: it returns the [`AppAction`] the caller carries
//! out.

use super::event::{AppAction, Key, ReplayControl};
use super::state::{App, Mode};
use crate::coordinator::UserCommand;

/// Seconds `←`/`→` move a replay.
pub const SEEK_STEP_S: f64 = 5.0;

/// What the overlays' keys made of a key.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OverlayKey {
    /// Not one of theirs: steering (or the player) has it.
    NotOurs,
    /// Theirs, and done with: nothing for the caller.
    Consumed,
    /// Theirs, and the caller has this to do.
    Action(AppAction),
}

impl App {
    /// A key pressed.
    pub(super) fn key(&mut self, key: Key) -> Option<AppAction> {
        self.ui.notice = None;
        if let Mode::Typing(text) = &mut self.ui.mode {
            return Self::typed(text, key).and_then(|typed| self.typed_out(typed));
        }
        if key == Key::Interrupt {
            return self.quit();
        }
        match self.ui.mode {
            Mode::ConfirmQuit => {
                self.ui.mode = Mode::Dashboard;
                match key {
                    Key::Char('q' | 'y') => self.quit(),
                    _ => None,
                }
            }
            Mode::Report => {
                if matches!(key, Key::Esc | Key::Char('r' | 'q')) {
                    self.ui.mode = Mode::Dashboard;
                }
                None
            }
            // Waiting for the session to save the record: there is nothing left to steer.
            Mode::Quitting => None,
            _ => match self.overlay_key(key) {
                OverlayKey::Consumed => None,
                OverlayKey::Action(action) => Some(action),
                OverlayKey::NotOurs if self.replay.is_some() => self.replay_key(key),
                OverlayKey::NotOurs => self.steer(key),
            },
        }
    }

    /// A key while a load is being typed after `l`: edits `text`, or says how the typing
    /// ended.
    fn typed(text: &mut String, key: Key) -> Option<Typed> {
        match key {
            Key::Char(c) if c.is_ascii_digit() || c == '.' || c == 'k' => text.push(c),
            Key::Backspace => {
                text.pop();
            }
            Key::Esc => return Some(Typed::Cancelled),
            Key::Interrupt => return Some(Typed::Interrupted),
            Key::Enter => return Some(Typed::Entered(std::mem::take(text))),
            _ => {}
        }
        None
    }

    /// The end of typing a load: back to the dashboard, with the load asked, a notice, or
    /// a quit.
    fn typed_out(&mut self, typed: Typed) -> Option<AppAction> {
        self.ui.mode = Mode::Dashboard;
        match typed {
            Typed::Cancelled => None,
            Typed::Interrupted => self.quit(),
            Typed::Entered(text) => match parse_load(&text) {
                Some(rate) => Some(AppAction::Command(UserCommand::SetLoad(rate))),
                None => {
                    self.ui.notice = Some(format!("not a load: {text:?} (write 20000 or 20k)"));
                    None
                }
            },
        }
    }

    /// The keys of the overlays and the chart, live or replayed.
    fn overlay_key(&mut self, key: Key) -> OverlayKey {
        match key {
            Key::Char('?') => {
                self.ui.mode = match self.ui.mode {
                    Mode::Help => Mode::Dashboard,
                    _ => Mode::Help,
                };
                OverlayKey::Consumed
            }
            Key::Esc => {
                self.ui.mode = Mode::Dashboard;
                OverlayKey::Consumed
            }
            Key::Char('b') => {
                self.ui.mode = match self.ui.mode {
                    Mode::Budget => Mode::Dashboard,
                    _ => Mode::Budget,
                };
                OverlayKey::Consumed
            }
            Key::Char('g') => {
                self.ui.chart = self.ui.chart.other();
                OverlayKey::Consumed
            }
            Key::Char('e') => {
                self.ui.every_request = !self.ui.every_request;
                OverlayKey::Consumed
            }
            Key::Char('r') => {
                if self.history.finished.is_none() {
                    self.ui.notice = Some("the report is ready when the run has finished".into());
                    return OverlayKey::Consumed;
                }
                self.ui.mode = Mode::Report;
                match self.history.report {
                    None => OverlayKey::Action(AppAction::OpenReport),
                    Some(_) => OverlayKey::Consumed,
                }
            }
            _ => OverlayKey::NotOurs,
        }
    }

    /// The keys that steer a live session (or quit it).
    fn steer(&mut self, key: Key) -> Option<AppAction> {
        match key {
            Key::Char('q') if self.history.finished.is_some() => Some(AppAction::Exit),
            Key::Char('q') => {
                self.ui.mode = Mode::ConfirmQuit;
                None
            }
            _ if self.history.finished.is_some() => {
                if matches!(key, Key::Char('p' | '+' | '-' | 'l' | 'a' | 'c')) {
                    self.ui.notice = Some("the run is over: r report, q quit".into());
                }
                None
            }
            Key::Char('p') => Some(AppAction::Command(if self.live.paused {
                UserCommand::Resume
            } else {
                UserCommand::Pause
            })),
            Key::Char('+' | '=') if self.live.rate > 0.0 => Some(AppAction::Command(
                UserCommand::SetLoad(self.live.rate * (1.0 + self.ui.step_share)),
            )),
            Key::Char('-') if self.live.rate > 0.0 => Some(AppAction::Command(
                UserCommand::SetLoad(self.live.rate * (1.0 - self.ui.step_share)),
            )),
            Key::Char('l') => {
                self.ui.mode = Mode::Typing(String::new());
                None
            }
            Key::Char('a') => Some(AppAction::Command(UserCommand::Accept)),
            Key::Char('c') => Some(AppAction::Command(UserCommand::Continue)),
            _ => None,
        }
    }

    /// The player's keys in a replay (steering is refused).
    fn replay_key(&mut self, key: Key) -> Option<AppAction> {
        match key {
            Key::Char('q') => Some(AppAction::Exit),
            Key::Char(' ') => Some(AppAction::Replay(ReplayControl::Toggle)),
            Key::Left => Some(AppAction::Replay(ReplayControl::Seek(-SEEK_STEP_S))),
            Key::Right => Some(AppAction::Replay(ReplayControl::Seek(SEEK_STEP_S))),
            Key::Char('[') => Some(AppAction::Replay(ReplayControl::Speed(0.5))),
            Key::Char(']') => Some(AppAction::Replay(ReplayControl::Speed(2.0))),
            Key::Char('p' | '+' | '-' | 'l' | 'a' | 'c') => {
                self.ui.notice = Some("a replay cannot be steered: space, ←/→, [/] move it".into());
                None
            }
            _ => None,
        }
    }

    /// Quits: at once if the run is over (or replayed), else after the session saves.
    fn quit(&mut self) -> Option<AppAction> {
        if self.history.finished.is_some() || self.replay.is_some() {
            return Some(AppAction::Exit);
        }
        if self.ui.mode == Mode::Quitting {
            return None;
        }
        self.ui.mode = Mode::Quitting;
        Some(AppAction::Command(UserCommand::Quit))
    }
}

/// How typing a load ended.
enum Typed {
    /// `Esc`.
    Cancelled,
    /// Ctrl-C: quit.
    Interrupted,
    /// `Enter`, with the text typed.
    Entered(String),
}

/// A load as typed: `20000`, `20k`, `2.5k`.
fn parse_load(text: &str) -> Option<f64> {
    let rate = match text.strip_suffix('k') {
        Some(k) => k.parse::<f64>().ok()? * 1000.0,
        None => text.parse::<f64>().ok()?,
    };
    (rate > 0.0 && rate.is_finite()).then_some(rate)
}
