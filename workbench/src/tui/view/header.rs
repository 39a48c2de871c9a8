//! The header: the run and where it stands, the methodology's steps (the current one
//! highlighted, each passed ✓ or failed ✗ in this point), and the measurement's figures.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use vernier_agent::sys::TimestampMode;

use super::super::app::{App, Label, Step};
use super::super::theme::Theme;
use super::format::opt;
use crate::coordinator::Phase;

pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let lines = vec![
        title(app, theme),
        steps(app, theme, area.width),
        figures(app, theme),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

fn title(app: &App, theme: Theme) -> Line<'static> {
    let info = &app.info;
    let mut point = match info.points {
        Some(n) => format!("point {}/{n}", (app.live.point + 1).min(n)),
        None => format!("point {}", app.live.point + 1),
    };
    // A replicated point's run going on, once one has ended.
    if !app.history.runs.is_empty() && app.history.finished.is_none() {
        point.push_str(&format!(" run {}", app.history.runs.len() + 1));
    }
    let mut spans = vec![Span::styled(info.name.clone(), theme.title())];
    if !info.target.is_empty() {
        spans.push(Span::raw(format!(" → {}", info.target)));
    }
    spans.push(Span::raw(format!(" · {point}: {:.0} req/s", app.live.rate)));
    if app.live.max_duration_s > 0.0 && app.history.finished.is_none() {
        spans.push(Span::raw(format!(
            " · {:.1}/{:.0}s",
            app.live.elapsed_s, app.live.max_duration_s
        )));
    }
    if let Some(eta) = app.live.eta_s {
        spans.push(Span::raw(format!(" · ETA {:.0}s", eta.max(0.0))));
    }
    if app.live.paused {
        spans.push(Span::styled(" · PAUSED", theme.accent()));
    }
    if app.history.finished.is_some() {
        spans.push(Span::styled(" · finished", theme.accent()));
    }
    Line::from(spans)
}

fn steps(app: &App, theme: Theme, width: u16) -> Line<'static> {
    let method = app.info.method;
    let long: usize = Step::ALL
        .iter()
        .map(|s| s.name(method, Label::Long).len() + 3)
        .sum();
    let label = if long > width as usize {
        Label::Short
    } else {
        Label::Long
    };
    let mut spans = Vec::new();
    for (i, step) in Step::ALL.iter().enumerate() {
        let mark = match app.live.marks[i] {
            Some(true) => "✓",
            Some(false) => "✗",
            None => "",
        };
        let current = app.live.step == Some(*step) && app.live.phase != Some(Phase::Done);
        // The current step is marked in the text too, for terminals without colour.
        let text = format!(
            "{}{}{mark}",
            if current { "▸" } else { "" },
            step.name(method, label)
        );
        let style = if current {
            theme.current()
        } else {
            match app.live.marks[i] {
                Some(pass) => theme.pass(pass),
                None => theme.dim(),
            }
        };
        if i > 0 {
            spans.push(Span::styled(
                match label {
                    Label::Short => " ",
                    Label::Long => " › ",
                },
                theme.dim(),
            ));
        }
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

fn figures(app: &App, theme: Theme) -> Line<'static> {
    let mut spans = vec![Span::raw(format!(
        "samples {} of {}/agent at {:.1}% · {} CI ",
        app.live.samples,
        app.live.samples_wanted,
        app.live.sampling_rate * 100.0,
        app.live.ci_percentile,
    ))];
    match app.live.ci_width_us {
        Some(w) => {
            let pass = app.live.ci_target_us.is_some_and(|t| w <= t);
            spans.push(Span::styled(
                format!("{w:.1} µs {}", if pass { "✓" } else { "✗" }),
                theme.pass(pass),
            ));
        }
        None => spans.push(Span::raw("-")),
    }
    spans.push(Span::raw(format!(
        " of {} µs · {} timestamps",
        opt(app.live.ci_target_us, 1),
        app.timestamps
            .as_ref()
            .map_or_else(|| "?".to_string(), TimestampMode::to_string)
    )));
    Line::from(spans)
}
