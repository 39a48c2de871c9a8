//! One row per agent: target against achieved rate, the inter-arrival test, the
//! decorrelation lag and the sampling rate, samples, the CI width of the target percentile
//! against the target, send lag p99, errors and backlog; in the title, the host's stalls
//! when a probe reported them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Row, Table};

use super::super::app::{AgentRow, App};
use super::super::theme::Theme;
use super::format::{opt, rate};
use crate::coordinator::CheckOutcome;
use crate::coordinator::policy::shown_short;

pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let live = app.live.agents.iter().filter(|a| !is_lost(a)).count();
    let want = app.live.rate / live.max(1) as f64;
    let rows: Vec<Row> = (app.live.agents.iter().enumerate())
        .map(|(i, a)| agent_row(app, theme, (i, a), want))
        .collect();
    let widths = [
        Constraint::Length(2),
        Constraint::Length(13),
        Constraint::Length(16),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(6),
        Constraint::Length(5),
        Constraint::Length(7),
    ];
    let head = Row::new([
        "#",
        "rate got/want",
        "inter-arrival",
        "lag·smp",
        "samples",
        "CI µs",
        "lag99",
        "err",
        "backlog",
    ])
    .style(theme.title());
    let title = Line::from(format!(
        " agents ({} req/s in all{}) ",
        rate(
            app.live
                .agents
                .iter()
                .filter_map(|a| a.progress.as_ref())
                .filter(|p| !p.lost)
                .map(|p| p.achieved_rate)
                .sum()
        ),
        host_stall(app)
    ));
    let table = Table::new(rows, widths)
        .header(head)
        .block(Block::default().borders(Borders::TOP).title(title));
    frame.render_widget(table, area);
}

/// Whether the agent of `row` was lost (its load moved to the others).
fn is_lost(row: &AgentRow) -> bool {
    row.progress.as_ref().is_some_and(|p| p.lost)
}

/// Agent `i`'s row, `want` the rate each live agent is asked for.
fn agent_row<'a>(app: &App, theme: Theme, (i, a): (usize, &AgentRow), want: f64) -> Row<'a> {
    let p = a.progress.as_ref();
    if is_lost(a) {
        return Row::new(vec![
            Cell::from(format!("{i}")),
            Cell::from(Span::styled("lost ✗", theme.bad())),
            Cell::from("its load moved"),
        ]);
    }
    let got = p.map_or(0.0, |p| p.achieved_rate);
    let rate_ok = !shown_short(got, want) || app.live.paused;
    let rate_cell = Cell::from(Span::styled(
        format!(
            "{}/{}{}",
            rate(got),
            rate(want),
            if rate_ok { "" } else { " ✗" }
        ),
        if rate_ok { theme.good() } else { theme.bad() },
    ));
    let lag = format!(
        "{}·{:.1}%",
        p.and_then(|p| p.independence_lag)
            .map_or("-".into(), |l| l.to_string()),
        app.live.sampling_rate * 100.0
    );
    let ci = match p.and_then(|p| p.ci_width_us) {
        Some(w) => {
            let pass = app.live.ci_target_us.is_some_and(|t| w <= t);
            Cell::from(Span::styled(
                format!("{w:.1}{}", if pass { "✓" } else { "✗" }),
                theme.pass(pass),
            ))
        }
        None => Cell::from("-"),
    };
    let errors = p.map_or(0, |p| p.errors);
    let backlog = p.map_or(0, |p| p.backlog);
    Row::new(vec![
        Cell::from(format!("{i}")),
        rate_cell,
        interarrival_cell(a, theme),
        Cell::from(lag),
        Cell::from(p.map_or("-".into(), |p| p.samples.to_string())),
        ci,
        Cell::from(opt(p.and_then(|p| p.send_lag_p99_us), 0)),
        flagged(errors, theme),
        flagged(backlog, theme),
    ])
}

/// The agent's inter-arrival test: a reported test that failed is said, not drawn as a
/// failure.
fn interarrival_cell<'a>(a: &AgentRow, theme: Theme) -> Cell<'a> {
    match a.interarrival {
        Some(m) => {
            let (mark, style) = match m.outcome {
                CheckOutcome::Passed => ("✓", theme.good()),
                CheckOutcome::Failed => ("✗", theme.bad()),
                CheckOutcome::Reported => ("·", theme.dim()),
            };
            Cell::from(Span::styled(
                format!("{mark} A²{} p{}", opt(m.statistic, 2), opt(m.pvalue, 3)),
                style,
            ))
        }
        None => Cell::from("-"),
    }
}

/// ` · host stall p99 1.2 ms`: the worst probe's p99 lateness while the round measures
/// (how long the host held a core), or nothing before a report.
fn host_stall(app: &App) -> String {
    app.live
        .host
        .iter()
        .filter(|h| h.wakeups > 0)
        .map(|h| h.late_p99_us)
        .max_by(f64::total_cmp)
        .map_or(String::new(), |p99| {
            format!(" · host stall p99 {}", vernier_agent::fmt_late(p99))
        })
}

/// A count that should be zero: marked when it is not.
fn flagged(n: u64, theme: Theme) -> Cell<'static> {
    if n == 0 {
        Cell::from("0")
    } else {
        Cell::from(Span::styled(format!("{n} ✗"), theme.bad()))
    }
}
