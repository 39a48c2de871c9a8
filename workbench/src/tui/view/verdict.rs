//! The verdict screen: the run's verdict, each point with its percentiles and CIs (and,
//! where there is room, the target percentile timed from the scheduled departures), every
//! failed check with the suggestion it implies, and where the record and the plots are.
//! A wide terminal keeps the charts beside it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use super::super::app::{App, Finished};
use super::super::theme::Theme;
use super::aggregate::{ccdf_chart, load_chart, verdict_mark, with_runs};
use super::format::rate;
use crate::coordinator::{Verdict, WithoutStalls};
use crate::record::ShownPoint;
use vernier_stats::Percentile;

/// Draws the verdict screen: the charts beside it in a wide terminal, then the verdict,
/// the points' table, why, and where the files are.
pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let area = if area.width >= 120 {
        let [text, charts] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(area);
        let [c, l] = Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(charts);
        ccdf_chart(frame, app, theme, c);
        load_chart(frame, app, theme, l);
        text
    } else {
        area
    };
    let finished = app.history.finished.clone().unwrap_or_default();
    let files = files(app);
    let listed: Vec<(String, &ShownPoint)> =
        app.history.results.iter().flat_map(with_runs).collect();
    // A point's tail without stalls takes a row under it.
    let rows = (listed.iter().rev().take(8))
        .map(|(_, r)| 1 + u16::from(r.without_stalls.is_some()))
        .sum::<u16>()
        + 1;
    let [head, table, why, where_] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(rows),
        Constraint::Min(2),
        Constraint::Length(files.len() as u16),
    ])
    .areas(area);

    summary(frame, app, theme, &finished, head);
    points(frame, app, theme, &listed, table);
    let items = reasons(app, theme, &finished);
    let paragraph = Paragraph::new(wrapped_lines(&items, why))
        .block(Block::default().borders(Borders::TOP).title(" why "));
    frame.render_widget(paragraph, why);
    frame.render_widget(Paragraph::new(files), where_);
}

/// The verdict's line: the word, how many points converged, the SLO's rate.
fn summary(frame: &mut Frame, app: &App, theme: Theme, finished: &Finished, head: Rect) {
    let verdict = finished.verdict;
    let (word, style) = match verdict {
        Some(Verdict::Converged) => ("CONVERGED", theme.good()),
        Some(Verdict::Accepted) => ("ACCEPTED", theme.good()),
        Some(Verdict::Wide) => ("WIDE ~", theme.wide()),
        Some(Verdict::NotAvailable) => ("N/A ✗", theme.bad()),
        None => ("NO VERDICT ✗", theme.bad()),
    };
    let converged = app
        .history
        .results
        .iter()
        .filter(|r| r.answer() == Verdict::Converged)
        .count();
    let mut summary = vec![
        Span::styled(format!("verdict: {word}"), style),
        Span::raw(format!(
            " · {} point(s), {converged} converged",
            app.history.results.len()
        )),
    ];
    if let Some(slo) = finished.slo_rate {
        summary.push(Span::styled(
            format!(" · highest load meeting the SLO: {slo:.0} req/s"),
            theme.accent(),
        ));
    }
    frame.render_widget(
        Paragraph::new(Line::from(summary)).block(Block::default().borders(Borders::TOP)),
        head,
    );
}

/// The verdict table's target percentile and the optional columns that fit its width.
#[derive(Clone, Copy)]
struct Columns {
    /// The percentile the table shows: the last point's, or the live one's before any.
    target: Percentile,
    /// The median.
    wide: bool,
    /// The target percentile timed from the schedule.
    from_schedule: bool,
}

/// The table of the last points (and runs) listed, with the columns that fit `table`.
fn points(
    frame: &mut Frame,
    app: &App,
    theme: Theme,
    listed: &[(String, &ShownPoint)],
    table: Rect,
) {
    let target = app
        .history
        .results
        .last()
        .map_or(app.live.ci_percentile, |r| r.target_percentile);
    let wide = table.width >= 76;
    // The target percentile from the schedule (11 characters and a gap) once the rest fits.
    let from_schedule = table.width >= 12 + if wide { 76 } else { 52 };
    let columns = Columns {
        target,
        wide,
        from_schedule,
    };
    let body: Vec<Row> = listed
        .iter()
        .rev()
        .take(8)
        .rev()
        .flat_map(|(label, r)| point_rows(label, r, theme, columns))
        .collect();
    let (widths, names) = header(columns);
    frame.render_widget(
        Table::new(body, widths).header(Row::new(names).style(theme.title())),
        table,
    );
}

/// A point's (or run's) row, and under it the row of its tail without stalls when it has
/// one.
fn point_rows(label: &str, r: &ShownPoint, theme: Theme, columns: Columns) -> Vec<Row<'static>> {
    let pct = |p: f64| r.percentile_text(p);
    let mut cells = vec![
        Cell::from(label.to_owned()),
        Cell::from(rate(r.achieved_rate)),
        Cell::from(Span::styled(
            verdict_mark(r.verdict),
            theme.verdict(r.verdict),
        )),
        Cell::from(r.samples.to_string()),
    ];
    if columns.wide {
        cells.push(Cell::from(pct(50.0)));
    }
    cells.push(Cell::from(pct(columns.target.percent())));
    if columns.from_schedule {
        cells.push(Cell::from(
            r.from_schedule(columns.target.percent())
                .map_or("-".to_string(), |q| format!("{:.1}", q.value)),
        ));
    }
    let mut rows = vec![Row::new(cells)];
    if let Some(tail) = &r.without_stalls {
        rows.push(without_stalls_row(tail, theme, columns));
    }
    rows
}

/// The row of a point's tail without stalls, under every request's: named across the
/// load's and the rate's columns (the latter empty for it), its touched share where the
/// schedule's column is.
fn without_stalls_row(tail: &WithoutStalls, theme: Theme, columns: Columns) -> Row<'static> {
    let pct = |p: f64| {
        tail.percentile(p)
            .map_or("-".to_string(), |q| q.to_string())
    };
    let mut cells = vec![
        Cell::from("  w/o"),
        Cell::from("stalls"),
        Cell::from(Span::styled(
            verdict_mark(tail.verdict),
            theme.verdict(tail.verdict),
        )),
        Cell::from(tail.samples.to_string()),
    ];
    if columns.wide {
        cells.push(Cell::from(pct(50.0)));
    }
    cells.push(Cell::from(pct(columns.target.percent())));
    if columns.from_schedule {
        cells.push(Cell::from(format!(
            "{:.1}% hit",
            tail.touched_share * 100.0
        )));
    }
    Row::new(cells).style(theme.accent())
}

/// The verdict table's column widths and names, for the columns that fit.
fn header(columns: Columns) -> (Vec<Constraint>, Vec<String>) {
    let target = columns.target;
    let mut widths = vec![
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(8),
        Constraint::Length(7),
    ];
    let mut names = vec![
        "load/s".to_string(),
        "got/s".into(),
        "verdict".into(),
        "samples".into(),
    ];
    if columns.wide {
        widths.push(Constraint::Length(22));
        names.push("p50 µs [CI]".into());
    }
    widths.push(Constraint::Min(20));
    names.push(format!("{} µs [CI]", target));
    if columns.from_schedule {
        // Latency from the scheduled departure: what an open-loop user waited.
        widths.push(Constraint::Length(11));
        names.push(format!("{} sched", target));
    }
    (widths, names)
}

/// Each failed check and its suggestion (and what was accepted, disagreed or waived),
/// with the style it is shown in.
fn reasons(app: &App, theme: Theme, finished: &Finished) -> Vec<(String, Style)> {
    let mut items: Vec<(String, Style)> = Vec::new();
    if let Some(problem) = &finished.problem {
        items.push((format!("✗ {problem}"), theme.bad()));
    }
    for r in &app.history.results {
        items.extend(notes(app, r).into_iter().map(|note| (note, theme.accent())));
        items.extend(failures(theme, r));
    }
    if items.is_empty()
        && app
            .history
            .results
            .iter()
            .all(|r| r.verdict == Verdict::Converged && r.waived.is_empty())
    {
        items.push(("every check passed at every point".into(), theme.good()));
    }
    items
}

/// What is said of a point beside its failed checks, in this order: accepted by the
/// user, drifting, its runs disagreeing, checks the scenario waived, and its tail without
/// stalls.
fn notes(app: &App, r: &ShownPoint) -> Vec<String> {
    let mut notes = Vec::new();
    if r.verdict == Verdict::Accepted {
        notes.push(accepted_note(app, r));
    }
    if let Some(words) = (r.drift.as_ref())
        .filter(|d| d.drifting)
        .and_then(crate::coordinator::text::drift)
    {
        notes.push(format!("~ {} req/s: {words}", rate(r.target_rate)));
    }
    if let Some(earlier) = &r.earned {
        let words = crate::coordinator::text::earned(earlier);
        notes.push(format!("~ {} req/s: {words}", rate(r.target_rate)));
    }
    if let Some(rep) = &r.replication
        && let Some(h) = rep.disagreement()
        && r.verdict != Verdict::NotAvailable
    {
        notes.push(format!(
            "! {} req/s: the {} runs disagree beyond their own CIs ({}); the CI across runs includes that spread",
            rate(r.target_rate),
            rep.runs.len(),
            h.summary()
        ));
    }
    for reason in &r.waived {
        notes.push(format!(
            "! {} req/s {} not enforced by the scenario: {}",
            rate(r.target_rate),
            reason.kind(),
            reason.detail()
        ));
    }
    if let Some(tail) = &r.without_stalls {
        notes.push(without_stalls_note(r, tail));
    }
    notes
}

/// A point the user accepted: what was measured, its CI's width and the width asked.
fn accepted_note(app: &App, r: &ShownPoint) -> String {
    format!(
        "~ {} req/s accepted by the user: what was measured, not certified by the checks ({} CI {} µs wide, {} µs asked)",
        rate(r.target_rate),
        r.target_percentile,
        r.ci_width_us.map_or("-".into(), |w| format!("{w:.1}")),
        app.live
            .ci_target_us
            .map_or("-".into(), |t| format!("{t:.1}"))
    )
}

/// A point's tail without stalls: the share of requests a stall touched, each agent's,
/// and how it was called or why it has no answer.
fn without_stalls_note(r: &ShownPoint, tail: &WithoutStalls) -> String {
    let agents: Vec<String> = (tail.touched_by_agent.iter().enumerate())
        .map(|(i, t)| format!("agent {i} {:.1}%", t * 100.0))
        .collect();
    let call = crate::coordinator::text::without_stalls_call(tail)
        .map_or(String::new(), |call| format!("; {call}"));
    let why = crate::coordinator::text::without_stalls_short(tail)
        .map_or(String::new(), |why| format!("; n/a: {why}"));
    let why = format!("{call}{why}");
    format!(
        "· {} req/s without stalls: {:.1}% of requests touched by a stall ({}){why}",
        rate(r.target_rate),
        tail.touched_share * 100.0,
        agents.join(", ")
    )
}

/// Each failed check of a point, and under it the suggestion it implies.
fn failures(theme: Theme, r: &ShownPoint) -> Vec<(String, Style)> {
    let mut items = Vec::new();
    for reason in &r.reasons {
        items.push((
            format!(
                "✗ {} req/s {}: {}",
                rate(r.target_rate),
                reason.kind(),
                reason.detail()
            ),
            theme.bad(),
        ));
        items.push((
            format!(
                "  → {}",
                crate::coordinator::text::suggestion(reason.kind())
            ),
            theme.accent(),
        ));
    }
    items
}

/// The items wrapped to `why`'s width, to as many lines each as fit, so that every one
/// shows (the log and the report have the details whole).
fn wrapped_lines(items: &[(String, Style)], why: Rect) -> Vec<Line<'static>> {
    let width = why.width.max(1) as usize;
    let rows = why.height.saturating_sub(1) as usize;
    let wrapped: Vec<Vec<String>> = items.iter().map(|(t, _)| wrap(t, width)).collect();
    // A line each first, then the rows left to the first items that need more.
    let mut budget = rows.saturating_sub(wrapped.len());
    let shown: Vec<usize> = wrapped
        .iter()
        .map(|w| {
            let extra = (w.len() - 1).min(budget);
            budget -= extra;
            1 + extra
        })
        .collect();
    wrapped
        .iter()
        .zip(items)
        .zip(shown)
        .flat_map(|((w, (_, style)), most)| {
            let cut = w.len() > most;
            w.iter().take(most).enumerate().map(move |(i, l)| {
                let text = if cut && i + 1 == most {
                    format!("{}…", l.trim_end())
                } else {
                    l.clone()
                };
                Line::styled(text, *style)
            })
        })
        .collect()
}

/// Where the record and the plots are.
fn files(app: &App) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(dir) = &app.record {
        lines.push(Line::raw(format!(
            "record: {} (run.json, samples.parquet/)",
            dir.display()
        )));
    }
    match &app.history.report {
        Some(Ok(report)) => {
            let dir = report
                .plots
                .first()
                .and_then(|p| p.parent())
                .map_or(String::new(), |d| d.display().to_string());
            lines.push(Line::raw(format!(
                "plots: {dir}/ ({} SVG files; r lists them)",
                report.plots.len()
            )));
        }
        Some(Err(e)) => lines.push(Line::raw(format!("plots: not written: {e}"))),
        None if app.replay.is_some() => lines.push(Line::raw("plots: press r to make the report")),
        None => lines.push(Line::raw("plots: being written...")),
    }
    lines
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word is cut),
/// continuation lines indented by two.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let len = line.chars().count();
        let add = word.chars().count() + usize::from(len > 0);
        if len > 0 && len + add > width {
            lines.push(std::mem::take(&mut line));
            line.push_str("  ");
        } else if len > 0 {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let head: String = line.chars().take(width).collect();
            let rest: String = line.chars().skip(width).collect();
            lines.push(head);
            line = format!("  {rest}");
        }
    }
    if !line.trim().is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_breaks_at_spaces_and_cuts_long_words() {
        assert_eq!(wrap("aaa bbb ccc", 8), ["aaa bbb", "  ccc"]);
        assert_eq!(wrap("abcdefghijkl", 8), ["abcdefgh", "  ijkl"]);
        assert_eq!(wrap("", 8), [""]);
        for line in wrap(&"word ".repeat(50), 20) {
            assert!(line.chars().count() <= 20, "{line:?}");
        }
    }
}
