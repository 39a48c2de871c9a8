//! The comparison's screen, drawn from `&CompareView` alone: the header (A and B, the
//! load, the percentile, the width asked, the blocks, the time, paused or stopping), the
//! three charts, the last progress lines, the verdict once it is in, and the keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::super::theme::Theme;
use super::charts;
use super::state::CompareView;
use crate::compare::{CompareVerdict, Design};

/// The smallest area the charts are drawn in; a smaller one says so in words.
pub const MIN_SIZE: (u16, u16) = (50, 14);

/// Wide enough for the three charts side by side.
const WIDE: u16 = 120;

/// Draws the whole frame.
pub fn draw(frame: &mut Frame, view: &CompareView) {
    let area = frame.area();
    let theme = Theme::new(view.palette);
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        small(frame, view, theme, area);
        return;
    }
    let verdict = verdict_height(view, area.width);
    let log = if area.height >= 36 { 8 } else { 4 };
    let [head, body, log, verdict_area, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(6),
        Constraint::Length(log),
        Constraint::Length(verdict),
        Constraint::Length(1),
    ])
    .areas(area);
    header(frame, view, theme, head);
    if body.width >= WIDE {
        let [c, b, i] = Layout::horizontal([Constraint::Ratio(1, 3); 3]).areas(body);
        charts::ccdf(frame, view, theme, c);
        charts::blocks(frame, view, theme, b);
        charts::ci(frame, view, theme, i);
    } else {
        let [top, i] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(body);
        let [c, b] = Layout::horizontal([Constraint::Ratio(1, 2); 2]).areas(top);
        charts::ccdf(frame, view, theme, c);
        charts::blocks(frame, view, theme, b);
        charts::ci(frame, view, theme, i);
    }
    progress(frame, view, theme, log);
    if verdict > 0 {
        frame.render_widget(
            Paragraph::new(verdict_line(view, theme))
                .wrap(Wrap { trim: true })
                .block(Block::default().borders(Borders::TOP)),
            verdict_area,
        );
    }
    frame.render_widget(Paragraph::new(footer(view, theme)), foot);
}

/// A terminal too small for the charts: what it needs, and the last word of the
/// comparison (its verdict, or its last block).
fn small(frame: &mut Frame, view: &CompareView, theme: Theme, area: Rect) {
    let mut lines = vec![Line::raw(format!(
        "vernier compare needs {}x{} (this is {}x{}); {}",
        MIN_SIZE.0,
        MIN_SIZE.1,
        area.width,
        area.height,
        if view.finished {
            "any key leaves"
        } else {
            "it goes on: p pauses, q stops"
        }
    ))];
    if view.finished {
        lines.push(verdict_line(view, theme));
    } else if let Some(last) = view.log.back() {
        lines.push(Line::raw(last.clone()));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// A and B, then the load, the percentile, the CI's width asked, how far it has come,
/// and whether it is held or stopping.
fn header(frame: &mut Frame, view: &CompareView, theme: Theme, area: Rect) {
    let setup = &view.setup;
    let targets = Line::from(vec![
        Span::styled("A ", theme.series().add_modifier(Modifier::BOLD)),
        Span::raw(setup.a.clone()),
        Span::raw("  vs  "),
        Span::styled("B ", theme.other_series().add_modifier(Modifier::BOLD)),
        Span::raw(setup.b.clone()),
        Span::raw(match setup.design {
            Design::Duet => " · duet",
            Design::Blocks => " · blocks",
            Design::Sequential => " · A then B",
        }),
    ]);
    let width = match view.comparison.as_ref().map(|c| c.width_us) {
        Some(w) if w > 0.0 => format!("{w:.1} µs"),
        _ => setup.width.clone(),
    };
    let mut figures = vec![Span::raw(format!(
        "{:.0} req/s · {} · CI ≤ {width} · {} blocks, {}/{} pairs · {:.0} s",
        setup.rate,
        setup.percentile,
        view.blocks(),
        view.pairs(),
        setup.max_pairs,
        view.elapsed_s
    ))];
    // Short: the footer says what each means.
    let state = if view.finished {
        Some(("finished", theme.accent()))
    } else if view.stopping {
        Some(("stopping…", theme.accent()))
    } else if view.held() {
        Some(("⏸ PAUSED", theme.current()))
    } else if view.paused.is_some() {
        Some(("pausing…", theme.accent()))
    } else {
        None
    };
    if let Some((text, style)) = state {
        figures.push(Span::raw(" · "));
        figures.push(Span::styled(text, style));
    }
    frame.render_widget(Paragraph::new(vec![targets, Line::from(figures)]), area);
}

/// The last progress lines, newest at the bottom; a block that cannot stand, or is
/// measured again, stands out.
fn progress(frame: &mut Frame, view: &CompareView, theme: Theme, area: Rect) {
    let shown = area.height.saturating_sub(1) as usize;
    let lines: Vec<Line> = view
        .log
        .iter()
        .skip(view.log.len().saturating_sub(shown))
        .map(|l| {
            if l.contains("cannot stand") {
                Line::styled(l.clone(), theme.bad())
            } else if l.contains("measured again") || l.contains("set aside") {
                Line::styled(l.clone(), theme.accent())
            } else {
                Line::raw(l.clone())
            }
        })
        .collect();
    let block = Block::default().borders(Borders::TOP).title(" blocks ");
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The verdict's style: faster good, slower bad, no answer highlighted.
fn verdict_style(verdict: CompareVerdict, theme: Theme) -> Style {
    let style = match verdict {
        CompareVerdict::Faster => theme.good(),
        CompareVerdict::Slower => theme.bad(),
        CompareVerdict::NoDifference => theme.series(),
        CompareVerdict::Wide => theme.wide(),
        CompareVerdict::NotAvailable => theme.accent(),
    };
    style.add_modifier(Modifier::BOLD)
}

/// `verdict: faster: B's p99 is lower than A's by ...`, the word in the verdict's colour.
fn verdict_line(view: &CompareView, theme: Theme) -> Line<'static> {
    let Some(c) = view.comparison.as_ref().filter(|_| view.finished) else {
        return Line::raw("");
    };
    Line::from(vec![
        Span::styled(
            format!("verdict: {}", c.verdict.text()),
            verdict_style(c.verdict, theme),
        ),
        Span::raw(format!(": {}", c.reason)),
    ])
}

/// Rows for the verdict and its reason, wrapped at `width` (none before it is in).
fn verdict_height(view: &CompareView, width: u16) -> u16 {
    let Some(c) = view.comparison.as_ref().filter(|_| view.finished) else {
        return 0;
    };
    let chars = "verdict: : ".len() + c.verdict.text().len() + c.reason.chars().count();
    // Wrapping at words leaves part of each row empty: a row to spare, and the border.
    let rows = chars / usize::from(width.max(1)) + 2;
    (rows as u16 + 1).min(8)
}

/// The keys that work now, or what the last key did.
fn footer(view: &CompareView, theme: Theme) -> Line<'static> {
    if let Some(notice) = &view.notice {
        return Line::styled(notice.clone(), theme.accent());
    }
    if view.finished {
        return Line::raw("Enter/a accept the verdict and leave · any other key leaves too");
    }
    if view.stopping {
        return Line::styled(
            "stopping: the block under way finishes first, then the verdict on what was measured",
            theme.accent(),
        );
    }
    if view.held() {
        return Line::raw(
            "paused between blocks: p/space resume · q/Esc stop with the verdict so far",
        );
    }
    if view.paused.is_some() {
        return Line::styled(
            "pausing: the block under way finishes first · p/space resume · q/Esc stop",
            theme.accent(),
        );
    }
    Line::raw("p/space pause · q/Esc stop: the verdict so far, after the block under way")
}
