//! The coordinator's decisions with their figures, newest at the bottom. A check's line
//! leads with its decision (what the methodology does next), then what was found; a
//! failed gate stands out, a reported check that failed is said without being drawn as a
//! failure. This module writes the log's sentences; the app keeps them as data.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::super::app::{App, CheckLine, Entry, LogLine};
use super::super::theme::Theme;
use crate::coordinator::CheckOutcome;
use crate::coordinator::CheckRole;

pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let height = area.height.saturating_sub(1) as usize;
    let lines: Vec<Line> = app
        .history
        .log
        .iter()
        .rev()
        .take(height)
        .rev()
        .map(|l| line(l, theme))
        .collect();
    let title = match &app.record {
        Some(dir) => format!(" decisions · record {} ", dir.display()),
        None => " decisions ".to_string(),
    };
    let block = Block::default().borders(Borders::TOP).title(title);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// One log line, stamped with the coordinator's clock.
fn line(l: &LogLine, theme: Theme) -> Line<'static> {
    let at = l.at;
    match &l.entry {
        Entry::Note(text) => Line::raw(format!("{at:7.2}s {text}")),
        Entry::Command(command) => Line::styled(format!("{at:7.2}s » {command}"), theme.accent()),
        Entry::Check(c) => {
            let text = format!("{at:7.2}s {}", check(c));
            match c.outcome() {
                CheckOutcome::Failed => Line::styled(text, theme.bad()),
                CheckOutcome::Passed | CheckOutcome::Reported => Line::raw(text),
            }
        }
    }
}

/// A check's line: its mark, its name (saying whether it is only reported), its agent,
/// then the decision and what was found.
fn check(c: &CheckLine) -> String {
    let mark = match c.outcome() {
        CheckOutcome::Passed => "✓",
        CheckOutcome::Failed => "✗",
        CheckOutcome::Reported => "·",
    };
    let role = match c.role {
        CheckRole::Gate => "",
        CheckRole::Report => " (reported)",
    };
    let who = c.agent.map_or(String::new(), |a| format!(" agent {a}"));
    format!(
        "{mark} {}{role}{who}: {} — {}",
        c.check.name(),
        c.decision,
        c.detail
    )
}
