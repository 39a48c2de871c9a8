//! The workbench's terminal UI, first part: the [`App`] state, fed the session's updates
//! and the user's keys, and the dashboard rendered from `&App` alone (no terminal here:
//! tests render into ratatui's `TestBackend`).

mod app;
mod view;

pub use app::{App, AppAction, Key};
pub use view::render;
