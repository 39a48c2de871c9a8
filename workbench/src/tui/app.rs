//! What the dashboard shows, and what the user's keys ask for. [`App::update`] takes every
//! [`AppEvent`] (a session update, a key, the end of the run, a report) and never touches a
//! terminal or exits: keys become [`AppAction`]s that the caller carries out. Live runs and
//! replays drive the same `update`.
//!
//! The state is in `state` (grouped: live figures, history, overlays and input, replay),
//! what an event does to it in `steps`, what a key does in `keys`; what the app is fed and
//! asks for in `event`, and what the run is (its steps included) in `info`.

mod event;
mod info;
mod keys;
mod state;
mod steps;

pub use event::{AppAction, AppEvent, Finished, Key, ReplayControl, ReplayStatus, ReportView};
pub use info::{Label, RunInfo, Step};
pub use state::{AgentRow, App};
pub(crate) use state::{CheckLine, Entry, LogLine, Mode, NarrowChart};

#[cfg(test)]
mod tests;
