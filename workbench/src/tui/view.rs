//! The dashboard, drawn from `&App` alone, one module per panel: the header (run, steps of
//! the methodology, figures), the agents, the aggregate (points with their CIs, the live
//! CCDF, latency against load), the coordinator's decisions, the verdict screen, the
//! overlays (help, report) and the footer. Failing figures carry a ✗ as well as a colour,
//! so everything reads without colour.

mod agents;
mod aggregate;
mod footer;
mod format;
mod header;
mod log;
mod overlay;
mod verdict;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::widgets::Paragraph;

use super::app::{App, Mode};
use super::theme::Theme;

/// The smallest terminal the dashboard is laid out for.
pub const MIN_SIZE: (u16, u16) = (60, 16);

/// Draws the whole frame.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let theme = Theme::new(app.palette);
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let text = format!(
            "vernier needs at least {}x{} (this is {}x{}); the run goes on. q quits.",
            MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Min(8),
        Constraint::Length(1),
    ])
    .areas(area);
    header::render(frame, app, theme, head);
    if app.history.finished.is_some() {
        verdict::render(frame, app, theme, body);
    } else {
        let agents = app.live.agents.len().clamp(1, 8) as u16 + 2;
        let rest = body.height.saturating_sub(agents);
        let aggregate = (rest / 2 + 1).clamp(7, 18).min(rest.saturating_sub(3));
        let [a, g, l] = Layout::vertical([
            Constraint::Length(agents),
            Constraint::Length(aggregate),
            Constraint::Min(3),
        ])
        .areas(body);
        agents::render(frame, app, theme, a);
        aggregate::render(frame, app, theme, g);
        log::render(frame, app, theme, l);
    }
    footer::render(frame, app, theme, foot);
    match app.ui.mode {
        Mode::Report => overlay::report(frame, app, theme, body),
        Mode::Budget => overlay::budget(frame, app, theme, body),
        Mode::Help => overlay::help(frame, app, theme, body),
        // The prompts are the footer's.
        Mode::Dashboard | Mode::Typing(_) | Mode::ConfirmQuit | Mode::Quitting => {}
    }
}

#[cfg(test)]
mod tests;
