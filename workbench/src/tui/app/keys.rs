//! What a key does to the [`App`]: typing a load, the overlays, steering the session
//! (pause, load, accept, continue), quitting, and a replay's player keys. A key never
//! exits or touches the session itself: it returns the [`AppAction`] the caller carries
//! out.

use super::event::{AppAction, Key, ReplayControl};
use super::state::App;
use crate::coordinator::UserCommand;

/// Seconds `←`/`→` move a replay.
pub const SEEK_STEP_S: f64 = 5.0;

impl App {
    /// A key pressed.
    pub(super) fn key(&mut self, key: Key) -> Option<AppAction> {
        self.ui.notice = None;
        if self.ui.typing.is_some() {
            return self.typed(key);
        }
        if key == Key::Interrupt {
            return self.quit();
        }
        if self.ui.confirm_quit {
            self.ui.confirm_quit = false;
            return match key {
                Key::Char('q' | 'y') => self.quit(),
                _ => None,
            };
        }
        if self.ui.show_report {
            if matches!(key, Key::Esc | Key::Char('r' | 'q')) {
                self.ui.show_report = false;
            }
            return None;
        }
        if let Some(action) = self.overlay_key(key) {
            return action;
        }
        if self.replay.is_some() {
            return self.replay_key(key);
        }
        self.steer(key)
    }

    /// A key while a load is being typed after `l`.
    fn typed(&mut self, key: Key) -> Option<AppAction> {
        let text = self.ui.typing.as_mut()?;
        match key {
            Key::Char(c) if c.is_ascii_digit() || c == '.' || c == 'k' => text.push(c),
            Key::Backspace => {
                text.pop();
            }
            Key::Esc => self.ui.typing = None,
            Key::Interrupt => {
                self.ui.typing = None;
                return self.quit();
            }
            Key::Enter => {
                let text = self.ui.typing.take().unwrap_or_default();
                return match parse_load(&text) {
                    Some(rate) => Some(AppAction::Command(UserCommand::SetLoad(rate))),
                    None => {
                        self.ui.notice = Some(format!("not a load: {text:?} (write 20000 or 20k)"));
                        None
                    }
                };
            }
            _ => {}
        }
        None
    }

    /// The keys of the overlays and the chart, live or replayed: `Some(action)` if `key`
    /// was one of them (the action itself may be none), `None` if not.
    fn overlay_key(&mut self, key: Key) -> Option<Option<AppAction>> {
        match key {
            Key::Char('?') => {
                self.ui.help = !self.ui.help;
                Some(None)
            }
            Key::Esc => {
                self.ui.help = false;
                self.ui.show_budget = false;
                Some(None)
            }
            Key::Char('b') => {
                self.ui.show_budget = !self.ui.show_budget;
                self.ui.help = false;
                Some(None)
            }
            Key::Char('g') => {
                self.ui.load_chart = !self.ui.load_chart;
                Some(None)
            }
            Key::Char('r') => {
                if self.history.finished.is_none() {
                    self.ui.notice = Some("the report is ready when the run has finished".into());
                    return Some(None);
                }
                self.ui.show_report = true;
                self.ui.help = false;
                Some(
                    self.history
                        .report
                        .is_none()
                        .then_some(AppAction::OpenReport),
                )
            }
            _ => None,
        }
    }

    /// The keys that steer a live session (or quit it).
    fn steer(&mut self, key: Key) -> Option<AppAction> {
        match key {
            Key::Char('q') if self.history.finished.is_some() => Some(AppAction::Exit),
            Key::Char('q') => {
                self.ui.confirm_quit = true;
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
                self.ui.typing = Some(String::new());
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
        if self.ui.quitting {
            return None;
        }
        self.ui.quitting = true;
        Some(AppAction::Command(UserCommand::Quit))
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
