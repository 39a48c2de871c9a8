//! The footer: the keys that work now, or the prompt of the moment (a load being typed,
//! quit asking), or a notice about the last key.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::app::{App, Mode};
use super::super::theme::Theme;

pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    frame.render_widget(Paragraph::new(line(app, theme)), area);
}

fn line(app: &App, theme: Theme) -> Line<'static> {
    match &app.ui.mode {
        Mode::Typing(text) => {
            return Line::styled(
                format!("new load (req/s, or 20k): {text}_   Enter applies, Esc cancels"),
                theme.accent(),
            );
        }
        Mode::ConfirmQuit => {
            return Line::styled(
                "quit? the record is saved either way: q/y quits, any other key stays",
                theme.accent(),
            );
        }
        Mode::Quitting => {
            return Line::styled("quitting: saving the record...", theme.accent());
        }
        Mode::Dashboard | Mode::Help | Mode::Budget | Mode::Report => {}
    }
    if let Some(notice) = &app.ui.notice {
        return Line::styled(notice.clone(), theme.accent());
    }
    if let Some(r) = app.replay {
        return Line::from(vec![
            Span::styled(
                format!(
                    "{} {:.1}s/{:.1}s ×{} ",
                    if r.playing { "▶" } else { "⏸" },
                    r.at,
                    r.end,
                    r.speed
                ),
                theme.accent(),
            ),
            Span::raw("space play/pause · ←/→ 5s · [/] speed · r report · ? help · q quit"),
        ]);
    }
    if app.history.finished.is_some() {
        return Line::raw("r report · g chart · ? help · q quit");
    }
    Line::raw(format!(
        "p {} · +/- {:.0}% · l load · a accept · c continue · g chart · ? · q quit",
        if app.live.paused { "resume" } else { "pause" },
        app.ui.step_share * 100.0
    ))
}
