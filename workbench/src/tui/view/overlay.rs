//! What opens over the dashboard: the help, the points' latency budgets, and the run's
//! report.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::super::app::App;
use super::super::theme::Theme;

/// The keys, live and in replay.
const LIVE: [(&str, &str); 13] = [
    ("p", "pause / resume the load (resuming warms up again)"),
    ("+ / -", "raise / lower the load by a step (warms up again)"),
    ("l", "type a new load: 20000 or 20k, Enter"),
    ("a", "accept the current point with what it has measured"),
    (
        "c",
        "continue past the limits: the time the CI's last look says it needs (or another allowance), more tries",
    ),
    ("g", "switch the chart (CCDF / latency vs load) when narrow"),
    (
        "e",
        "points: every request's tail / the tail answered for (without stalls)",
    ),
    ("r", "the report of the finished run (plots, table)"),
    (
        "b",
        "where each finished point's p50 went: floor, client, host, server",
    ),
    ("?", "this help; Esc closes"),
    ("q", "quit (asks; the record is saved either way)"),
    ("Ctrl-C", "quit at once (the record is saved)"),
    (
        "",
        "every command is echoed in the log and recorded in run.json",
    ),
];
const REPLAY: [(&str, &str); 8] = [
    ("space", "play / pause"),
    ("← / →", "back / forward 5 s of the record"),
    ("[ / ]", "half / double the speed"),
    ("g", "switch the chart when narrow"),
    ("e", "points: every request's tail / the tail answered for"),
    ("r", "the run's report"),
    ("b", "the points' latency budgets"),
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
    // The host's verdict first, when the last point's stalls touched more than calibrate
    // would call fit.
    let host = (app.history.results.last())
        .and_then(|r| r.without_stalls.as_ref())
        .and_then(|w| crate::coordinator::text::host_fit_short(w.touched_share));
    let mut lines: Vec<Line> = Vec::new();
    if let Some(host) = host {
        lines.extend(host.into_iter().map(|l| Line::styled(l, theme.wide())));
        lines.push(Line::raw(""));
    }
    lines.extend(
        keys.iter()
            .map(|(k, what)| Line::raw(format!("{k:>7}  {what}"))),
    );
    let box_ = centered(area, 76, lines.len() as u16 + 2);
    frame.render_widget(Clear, box_);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys ").title_style(theme.title())),
        box_,
    );
}

pub(super) fn report(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let mut lines: Vec<Line> = Vec::new();
    match &app.history.report {
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
    boxed(frame, theme, area, " report · Esc or r closes ", lines);
}

/// Clears `area` and draws `lines` in it, bordered, under `title`.
fn boxed(frame: &mut Frame, theme: Theme, area: Rect, title: &str, lines: Vec<Line>) {
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title).title_style(theme.title())),
        area,
    );
}

/// Lines a point's budget takes in [`budget`] at least: its summary and five rows (six
/// with the path probe's queue part).
const BUDGET_LINES: usize = 6;

/// The finished points' latency budgets, the latest that fit, oldest first.
pub(super) fn budget(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let mut lines: Vec<Line> = Vec::new();
    let per_point = app
        .history
        .results
        .iter()
        .filter_map(|r| r.budget.as_ref())
        .map(|b| 1 + b.rows().len())
        .max()
        .unwrap_or(BUDGET_LINES)
        .max(BUDGET_LINES);
    let inside = area.height.saturating_sub(2) as usize;
    let mut fit = (inside / per_point).max(1);
    if app.history.results.len() > fit {
        // One line goes to the note on the points left out.
        fit = (inside.saturating_sub(1) / per_point).max(1);
    }
    let shown = app.history.results.len().saturating_sub(fit);
    if app.history.results.is_empty() {
        lines.push(Line::raw(
            "no point has finished yet: each point's budget comes with its verdict",
        ));
    } else if shown > 0 {
        lines.push(Line::styled(
            format!("(the first {shown} point(s) do not fit; a taller terminal shows them)"),
            theme.dim(),
        ));
    }
    for r in app.history.results.iter().skip(shown) {
        let rate = super::format::rate(r.target_rate);
        let Some(b) = &r.budget else {
            lines.push(Line::raw(format!(
                "{rate} req/s: no budget (the record predates budgets)"
            )));
            continue;
        };
        let style = match b.adds_up() {
            Some(true) => theme.good(),
            Some(false) => theme.bad(),
            None => theme.dim(),
        };
        let mark = match b.adds_up() {
            Some(true) => "✓",
            Some(false) => "✗",
            None => "?",
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark} {rate} req/s "), style),
            Span::raw(b.summary()),
        ]));
        for (name, value, how) in b.rows() {
            let value_style = if value == "unknown" {
                theme.bad()
            } else {
                theme.accent()
            };
            lines.push(Line::from(vec![
                Span::raw(format!("  {name:<8}")),
                Span::styled(format!("{value:>10}"), value_style),
                Span::styled(format!("  {how}"), theme.dim()),
            ]));
        }
    }
    boxed(
        frame,
        theme,
        area,
        " latency budget of the p50 · Esc or b closes ",
        lines,
    );
}
