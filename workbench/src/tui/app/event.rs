//! What the app is fed and what it asks for: keys as the app understands them, the
//! events [`App::update`](super::App::update) takes, and the actions it hands back to the
//! caller (which carries them out: the app never touches a terminal).

use std::path::PathBuf;

use crate::coordinator::{UserCommand, Verdict};
use crate::record::ShownEvent;
use crate::session::Update;

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
    /// The session said something.
    Session(Update),
    /// A replayed record's event, as the record holds it.
    Recorded(ShownEvent),
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
