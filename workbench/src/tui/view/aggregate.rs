//! The aggregate: each point's percentiles with their CIs (and the current point's live
//! estimate; where there is room, the target percentile timed from the scheduled
//! departures), the throughput sparkline, the latency CCDF of the current round on a log
//! scale, and for sweeps the target percentile against the achieved load with the current
//! load marked. A narrow terminal shows one chart at a time (`g` switches).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, Paragraph, Row, Sparkline, Table,
};

use super::super::app::{App, NarrowChart};
use super::super::theme::Theme;
use super::format::rate;
use crate::coordinator::{PercentileResult, Verdict, WithoutStalls};
use crate::record::ShownPoint;
use crate::scenario::{Method, Tail};
use vernier_stats::Percentile;

/// Wide enough for the table and both charts side by side.
const WIDE: u16 = 120;

// The points table's column widths, characters.
/// The load (`20.0k`).
const LOAD_COLUMN: u16 = 6;
/// The verdict's mark and word (`~ accept`).
const VERDICT_COLUMN: u16 = 8;
/// The median with its CI.
const P50_COLUMN: u16 = 22;
/// The target percentile with its CI, at least (it takes the room left).
const TARGET_COLUMN: u16 = 20;
/// The target percentile from the schedule (`p99.9 sched`, `12345.6`).
const SCHEDULE_COLUMN: u16 = 11;

pub(super) fn render(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    if area.width >= WIDE {
        let [t, c, l] = Layout::horizontal([
            Constraint::Percentage(40),
            Constraint::Percentage(30),
            Constraint::Percentage(30),
        ])
        .areas(area);
        points(frame, app, theme, t);
        ccdf_chart(frame, app, theme, c);
        load_chart(frame, app, theme, l);
    } else {
        let [t, c] = Layout::horizontal([Constraint::Percentage(48), Constraint::Percentage(52)])
            .areas(area);
        points(frame, app, theme, t);
        match app.ui.chart {
            NarrowChart::Load => load_chart(frame, app, theme, c),
            NarrowChart::Ccdf => ccdf_chart(frame, app, theme, c),
        }
    }
}

/// The verdict as a mark and a word.
/// A point's row label (its load) and result, then each of its runs', if it was replicated.
pub(super) fn with_runs(r: &ShownPoint) -> Vec<(String, &ShownPoint)> {
    let mut rows = vec![(rate(r.target_rate), r)];
    if let Some(replication) = &r.replication {
        rows.extend(replication.runs.iter().map(|run| (run_label(run), run)));
    }
    rows
}

/// A run's row label: ` r3` under its point.
pub(super) fn run_label(run: &ShownPoint) -> String {
    format!(" r{}", run.run.unwrap_or(0))
}

pub(super) fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::NotAvailable => "✗ n/a",
        Verdict::Wide => "~ wide",
        Verdict::Converged => "✓ conv",
        Verdict::Accepted => "~ accept",
    }
}

/// Which of the points table's optional columns fit.
#[derive(Clone, Copy)]
struct Columns {
    /// The median, with a column to spare.
    wide: bool,
    /// The target percentile timed from the schedule.
    from_schedule: bool,
}

/// The optional columns that fit `width`. Columns join the load, the verdict and the
/// target percentile as they fit (with the table's one-character gaps): the median first,
/// then the target percentile from the schedule.
fn columns_for(width: u16) -> Columns {
    let base = LOAD_COLUMN + 1 + VERDICT_COLUMN + 1 + TARGET_COLUMN;
    // The median with a column to spare.
    let wide = width > base + 1 + P50_COLUMN;
    let from_schedule = width >= base + 1 + SCHEDULE_COLUMN + if wide { 1 + P50_COLUMN } else { 0 };
    Columns {
        wide,
        from_schedule,
    }
}

/// Draws the points table, its last rows as many as fit, and the throughput sparkline
/// under it.
fn points(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let columns = columns_for(area.width);
    let target = panel_title(app);
    let mut rows = result_rows(app, theme, columns);
    if app.history.finished.is_none() {
        rows.push(live_row(app, theme, columns));
    }
    let shown = area.height.saturating_sub(2) as usize;
    let skip = rows.len().saturating_sub(shown);
    let rows: Vec<Row> = rows.into_iter().skip(skip).collect();
    let table_height = (rows.len() as u16 + 2).min(area.height);
    let [t, s] =
        Layout::vertical([Constraint::Length(table_height), Constraint::Min(0)]).areas(area);
    frame.render_widget(points_table(rows, columns, &target, theme), t);
    throughput(frame, app, theme, s);
}

/// A row for each point's result and each of its runs. A replicated point's runs are rows
/// under it; the runs of the point still going come before its live row.
fn result_rows(app: &App, theme: Theme, columns: Columns) -> Vec<Row<'static>> {
    app.history
        .results
        .iter()
        .flat_map(with_runs)
        .chain(app.history.runs.iter().map(|r| (run_label(r), r)))
        .map(|(label, r)| {
            let (verdict, own) = shown_tail(r, app.ui.every_request);
            let pct = |p: f64| match own {
                Some(own) => own.percentile(p).map_or("-".to_string(), |q| q.to_string()),
                None => r.percentile_text(p),
            };
            let mut cells = vec![
                Cell::from(label),
                Cell::from(Span::styled(verdict_mark(verdict), theme.verdict(verdict))),
            ];
            if columns.wide {
                cells.push(Cell::from(pct(50.0)));
            }
            cells.push(Cell::from(pct(r.target_percentile.percent())));
            if columns.from_schedule {
                cells.push(Cell::from(
                    r.from_schedule(r.target_percentile.percent())
                        .map_or("-".to_string(), |q| format!("{:.1}", q.value)),
                ));
            }
            Row::new(cells)
        })
        .collect()
}

/// The tail a point's row shows: the one it answered for (its verdict, and the tail
/// without stalls when that was it), or every request's when `every_request` is asked.
fn shown_tail(r: &ShownPoint, every_request: bool) -> (Verdict, Option<&WithoutStalls>) {
    match &r.without_stalls {
        Some(own) if r.answers_without_stalls() && !every_request => (r.answer, Some(own)),
        _ => (r.verdict, None),
    }
}

/// Whether the panel shows the tail without stalls: some point answered for it, or the
/// scenario asks for it and no point has finished; and not switched to every request's.
fn shows_without_stalls(app: &App) -> bool {
    let results = &app.history.results;
    let asked = if results.is_empty() {
        app.info.tail == Tail::WithoutStalls && app.info.method == Method::Vernier
    } else {
        (results.iter()).any(|r| r.answers_without_stalls() && r.without_stalls.is_some())
    };
    asked && !app.ui.every_request
}

/// The panel's title: the target percentile and the tail it shows, with the key that
/// switches tails when the answer is the tail without stalls.
fn panel_title(app: &App) -> String {
    let p = app.live.ci_percentile;
    if shows_without_stalls(app) {
        format!("{p} without stalls (e)")
    } else if app.ui.every_request {
        format!("{p} every request (e)")
    } else {
        format!("{p} with its CI")
    }
}

/// The row of the point still going: its load, and the live estimates of the median and
/// the target percentile.
fn live_row(app: &App, theme: Theme, columns: Columns) -> Row<'static> {
    let live = app
        .live
        .ccdf
        .iter()
        .find(|(_, share)| (share - app.live.ci_percentile.tail()).abs() < 1e-12)
        .map_or("-".to_string(), |(us, _)| {
            // The live estimate is of every request's kept samples.
            if shows_without_stalls(app) {
                format!("≈{us:.1} (live, all)")
            } else {
                format!("≈{us:.1} (live)")
            }
        });
    let median = app
        .live
        .ccdf
        .iter()
        .find(|(_, share)| (share - 0.5).abs() < 1e-12)
        .map_or("-".to_string(), |(us, _)| format!("≈{us:.1}"));
    let mut cells = vec![
        Cell::from(rate(app.live.rate)),
        Cell::from(Span::styled("… now", theme.accent())),
    ];
    if columns.wide {
        cells.push(Cell::from(median));
    }
    cells.push(Cell::from(live));
    Row::new(cells)
}

/// The points table: `rows` under the header of the columns that fit, titled with the
/// `target` percentile.
fn points_table<'a>(rows: Vec<Row<'a>>, columns: Columns, target: &str, theme: Theme) -> Table<'a> {
    let mut widths = vec![
        Constraint::Length(LOAD_COLUMN),
        Constraint::Length(VERDICT_COLUMN),
    ];
    let mut head = vec!["load/s".to_string(), "verdict".to_string()];
    let p = target.split(' ').next().unwrap_or(target);
    if columns.wide {
        widths.push(Constraint::Length(P50_COLUMN));
        head.push("p50 µs [CI]".into());
    }
    widths.push(Constraint::Min(TARGET_COLUMN));
    head.push(format!("{p} µs [CI]"));
    if columns.from_schedule {
        // Latency from the scheduled departure: what an open-loop user waited (every
        // request's).
        widths.push(Constraint::Length(SCHEDULE_COLUMN));
        head.push(format!("{p} sched"));
    }
    Table::new(rows, widths)
        .header(Row::new(head).style(theme.title()))
        .block(
            Block::default()
                .borders(Borders::TOP)
                .title(format!(" points: {target} ")),
        )
}

/// The throughput sparkline in the top of `area` (at most four rows), when it has room
/// and there is throughput to show.
fn throughput(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let s = Rect {
        height: area.height.min(4),
        ..area
    };
    if s.height >= 3 && !app.live.throughput.is_empty() {
        let data: Vec<u64> = app.live.throughput.iter().copied().collect();
        let last = data.last().copied().unwrap_or(0);
        let spark = Sparkline::default()
            .data(&data)
            .style(theme.series())
            .block(
                Block::default()
                    .borders(Borders::TOP)
                    .title(format!(" throughput {} req/s ", rate(last as f64))),
            );
        frame.render_widget(spark, s);
    }
}

/// Labels for a log10 share axis: 50%, 10%, 1%...
fn share_label(log10: f64) -> String {
    let share = 10f64.powf(log10) * 100.0;
    if share >= 1.0 {
        format!("{share:.0}%")
    } else {
        format!(
            "{}%",
            crate::report::fmt_percentile(share).trim_start_matches('p')
        )
    }
}

/// The latency CCDF of the current round (or the last point's), log scale.
pub(super) fn ccdf_chart(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let last = app
        .history
        .results
        .iter()
        .rev()
        .find(|r| r.percentiles.len() >= 2);
    let title = match last {
        Some(r) if app.live.ccdf.is_empty() => {
            format!(" latency CCDF at {} req/s (done) ", rate(r.target_rate))
        }
        _ => " latency CCDF now (share above, log) ".to_string(),
    };
    let block = Block::default()
        .borders(Borders::TOP | Borders::LEFT)
        .title(title);
    let ccdf: Vec<(f64, f64)> = if app.live.ccdf.is_empty() {
        // Between points: the last point's final distribution, from its percentiles.
        last.map(|r| {
            r.percentiles
                .iter()
                .filter_map(|p| Some((p.value, Percentile::from_percent(p.p).ok()?.tail())))
                .collect()
        })
        .unwrap_or_default()
    } else {
        app.live.ccdf.clone()
    };
    if ccdf.len() < 2 {
        frame.render_widget(
            Paragraph::new("no samples yet in this point").block(block),
            area,
        );
        return;
    }
    let data: Vec<(f64, f64)> = ccdf.iter().map(|(us, s)| (*us, s.log10())).collect();
    let x_max = data.iter().map(|d| d.0).fold(0.0, f64::max) * 1.05;
    let y_min = data.iter().map(|d| d.1).fold(0.0, f64::min).floor();
    let target_y = app.live.ci_percentile.tail().log10();
    let target_line = [(0.0, target_y), (x_max, target_y)];
    let mut datasets = vec![
        Dataset::default()
            .name(app.live.ci_percentile.to_string())
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.dim())
            .data(&target_line),
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.series())
            .data(&data),
    ];
    if area.height < 6 {
        datasets.remove(0);
    }
    let y_labels: Vec<Span> = (y_min as i32..=0)
        .step_by(((-y_min as usize) / 3).max(1))
        .map(|l| Span::raw(share_label(f64::from(l))))
        .collect();
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(
            Axis::default()
                .bounds([0.0, x_max])
                .labels(vec![Span::raw("0"), Span::raw(format!("{x_max:.0} µs"))]),
        )
        .y_axis(Axis::default().bounds([y_min, 0.0]).labels(y_labels));
    frame.render_widget(chart, area);
}

/// The target percentile against the achieved load, CIs as bars, the current load marked.
pub(super) fn load_chart(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let target = app.live.ci_percentile.to_string();
    let block = Block::default()
        .borders(Borders::TOP | Borders::LEFT)
        .title(format!(" {target} vs load "));
    let measured: Vec<(f64, &PercentileResult)> = app
        .history
        .results
        .iter()
        .filter_map(|r| r.target().map(|t| (r.achieved_rate, t)))
        .collect();
    if measured.is_empty() {
        frame.render_widget(
            Paragraph::new(vec![
                Line::raw("no point finished yet"),
                Line::raw(format!("now: {:.0} req/s", app.live.rate)),
            ])
            .block(block),
            area,
        );
        return;
    }
    let points: Vec<(f64, f64)> = measured.iter().map(|(r, t)| (*r, t.value)).collect();
    let bars: Vec<[(f64, f64); 2]> = measured
        .iter()
        .filter_map(|(r, t)| Some([(*r, t.ci_low?), (*r, t.ci_high?)]))
        .collect();
    let y_max = measured
        .iter()
        .map(|(_, t)| t.ci_high.unwrap_or(t.value).max(t.value))
        .fold(0.0, f64::max)
        * 1.1;
    let x_max = points
        .iter()
        .map(|p| p.0)
        .fold(app.live.rate, f64::max)
        .max(1.0)
        * 1.1;
    let now = [(app.live.rate, 0.0), (app.live.rate, y_max)];
    let mut datasets: Vec<Dataset> = bars
        .iter()
        .map(|b| {
            Dataset::default()
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme.dim())
                .data(b)
        })
        .collect();
    datasets.push(
        Dataset::default()
            .name(format!("{target} µs"))
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(theme.series())
            .data(&points),
    );
    if app.history.finished.is_none() {
        datasets.push(
            Dataset::default()
                .name("now")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme.accent())
                .data(&now),
        );
    }
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(Axis::default().bounds([0.0, x_max]).labels(vec![
            Span::raw("0"),
            Span::raw(format!("{} req/s", rate(x_max))),
        ]))
        .y_axis(
            Axis::default()
                .bounds([0.0, y_max])
                .labels(vec![Span::raw("0"), Span::raw(format!("{y_max:.0} µs"))]),
        );
    frame.render_widget(chart, area);
}
