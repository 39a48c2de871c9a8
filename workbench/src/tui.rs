//! The workbench's terminal UI: the coordinator's face. [`App`] holds what the dashboard
//! shows and takes every session update and key through one `update`; [`render`] draws it
//! from `&App` alone; the terminal layer runs live sessions and replays of records, and
//! draws single frames without a terminal (`vernier replay --screen`). [`watch`] shows a
//! `vernier compare` live.

mod app;
mod compare;
mod replay;
mod svg;
mod terminal;
mod theme;
mod view;

pub use app::{
    App, AppAction, AppEvent, Finished, Key, Label, ReplayControl, ReplayStatus, ReportView,
    RunInfo, Step,
};
pub use compare::watch;
pub use replay::{Player, Until};
pub use svg::buffer_svg;
pub use terminal::{ReplayOptions, available, replay_screen, run_live, run_replay, screen};
pub use theme::{Palette, Theme};
pub use view::{MIN_SIZE, render};
