//! The coordinator's decisions with their figures, newest at the bottom; failed checks
//! stand out.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::super::app::App;
use super::super::theme::Theme;

pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let height = area.height.saturating_sub(1) as usize;
    let lines: Vec<Line> = app
        .history
        .log
        .iter()
        .rev()
        .take(height)
        .rev()
        .map(|l| {
            if l.contains(" ✗ ") {
                Line::styled(l.clone(), theme.bad())
            } else if l.contains(" » ") {
                Line::styled(l.clone(), theme.accent())
            } else {
                Line::raw(l.clone())
            }
        })
        .collect();
    let title = match &app.record {
        Some(dir) => format!(" decisions · record {} ", dir.display()),
        None => " decisions ".to_string(),
    };
    let block = Block::default().borders(Borders::TOP).title(title);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
