//! What opens over the dashboard: the help, and the run's report.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use super::super::app::App;
use super::super::theme::Theme;

/// The keys, live and in replay.
const LIVE: [(&str, &str); 11] = [
    ("p", "pause / resume the load (resuming warms up again)"),
    ("+ / -", "raise / lower the load by a step (warms up again)"),
    ("l", "type a new load: 20000 or 20k, Enter"),
    ("a", "accept the current point with what it has measured"),
    (
        "c",
        "continue past the limits: another allowance of time and tries",
    ),
    ("g", "switch the chart (CCDF / latency vs load) when narrow"),
    ("r", "the report of the finished run (plots, table)"),
    ("?", "this help; Esc closes"),
    ("q", "quit (asks; the record is saved either way)"),
    ("Ctrl-C", "quit at once (the record is saved)"),
    (
        "",
        "every command is echoed in the log and recorded in run.json",
    ),
];
const REPLAY: [(&str, &str); 6] = [
    ("space", "play / pause"),
    ("← / →", "back / forward 5 s of the record"),
    ("[ / ]", "half / double the speed"),
    ("g", "switch the chart when narrow"),
    ("r", "the run's report"),
    ("q", "leave"),
];

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [h] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    h
}

pub(super) fn help(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let keys: &[(&str, &str)] = if app.replay.is_some() { &REPLAY } else { &LIVE };
    let lines: Vec<Line> = keys
        .iter()
        .map(|(k, what)| Line::raw(format!("{k:>7}  {what}")))
        .collect();
    let box_ = centered(area, 76, lines.len() as u16 + 2);
    frame.render_widget(Clear, box_);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys ").title_style(theme.title())),
        box_,
    );
}

pub(super) fn report(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let mut lines: Vec<Line> = Vec::new();
    match &app.report {
        None => lines.push(Line::raw("making the report...")),
        Some(Err(e)) => lines.push(Line::styled(format!("✗ no report: {e}"), theme.bad())),
        Some(Ok(r)) => {
            lines.extend(r.table.lines().map(|l| Line::raw(l.to_string())));
            lines.push(Line::raw(""));
            lines.extend(
                r.plots
                    .iter()
                    .map(|p| Line::raw(format!("wrote {}", p.display()))),
            );
            lines.extend(r.notes.iter().map(|n| Line::raw(format!("note: {n}"))));
        }
    }
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" report · Esc or r closes ")
                .title_style(theme.title()),
        ),
        area,
    );
}
