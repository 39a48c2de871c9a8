//! The dashboard, drawn from `&App` alone: header, one row per agent, finished points, the
//! coordinator's decisions, and the keys. Failing figures carry a symbol (✗), not colour
//! alone, so it reads without colour.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table};

use super::app::App;
use crate::coordinator::Verdict;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Draws the dashboard into the whole frame.
pub fn render(frame: &mut Frame, app: &App) {
    let rows = app.agents.len().max(1) as u16;
    let results = (app.results.len() as u16).min(6);
    let [header, agents, points, log, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(rows + 2),
        Constraint::Length(results + 2),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(header_lines(app)), header);
    render_agents(frame, app, agents);
    render_points(frame, app, points);
    render_log(frame, app, log);
    frame.render_widget(Paragraph::new(footer_line(app)), footer);
}

fn header_lines(app: &App) -> Vec<Line<'static>> {
    let phase = app.phase.map_or("connect", |p| p.name());
    let eta = app
        .eta_s
        .map_or(String::new(), |s| format!(" · ETA {:.0}s", s.max(0.0)));
    vec![
        Line::styled(
            format!(
                "vernier · {} · point {} at {:.0} req/s · {phase}{} · {:.1}s{eta}",
                app.name,
                app.point,
                app.rate,
                if app.finished { " (finished)" } else { "" },
                app.now - app.point_started
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::raw(format!(
            "samples {} of {}/agent at {:.2}% · CI width {} of {:.1} µs · {} timestamps · {}",
            app.samples,
            app.samples_wanted,
            app.sampling_rate * 100.0,
            app.ci_width_us.map_or("-".into(), |w| format!(
                "{w:.1}{}",
                if w <= app.ci_target_us {
                    " ✓"
                } else {
                    " ✗"
                }
            )),
            app.ci_target_us,
            if app.timestamps.is_empty() {
                "?"
            } else {
                &app.timestamps
            },
            app.record
                .as_ref()
                .map_or("no record yet".into(), |r| r.display().to_string())
        )),
    ]
}

fn render_agents(frame: &mut Frame, app: &App, area: Rect) {
    let rows: Vec<Row> = app
        .agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let p = a.progress.as_ref();
            let ad = match a.interarrival {
                Some((stat, pv, pass)) => format!(
                    "{} {} p{}",
                    if pass { "✓" } else { "✗" },
                    opt(stat, 2),
                    opt(pv, 3)
                ),
                None => "-".into(),
            };
            Row::new(vec![
                format!("{i}"),
                format!(
                    "{:.0}/{:.0}",
                    p.map_or(0.0, |p| p.achieved_rate),
                    app.rate / app.agents.len().max(1) as f64
                ),
                ad,
                p.and_then(|p| p.independence_lag)
                    .map_or("-".into(), |l| l.to_string()),
                p.map_or("-".into(), |p| p.samples.to_string()),
                opt(p.and_then(|p| p.ci_width_us), 1),
                opt(p.and_then(|p| p.p99_us), 0),
                opt(p.and_then(|p| p.send_lag_p99_us), 0),
                p.map_or("-".into(), |p| p.backlog.to_string()),
            ])
        })
        .collect();
    let widths = [
        Constraint::Length(2),
        Constraint::Length(13),
        Constraint::Length(16),
        Constraint::Length(4),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
    ];
    let table = Table::new(rows, widths)
        .header(
            Row::new([
                "#",
                "rate got/want",
                "inter-arrival",
                "lag",
                "samples",
                "CI µs",
                "p99 µs",
                "lag99µs",
                "backlog",
            ])
            .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(Block::default().borders(Borders::TOP).title(" agents "));
    frame.render_widget(table, area);
}

fn render_points(frame: &mut Frame, app: &App, area: Rect) {
    let rows: Vec<Row> = app
        .results
        .iter()
        .rev()
        .take(6)
        .rev()
        .map(|r| {
            let target = r
                .target()
                .map_or("-".into(), |t| match (t.ci_low, t.ci_high) {
                    (Some(lo), Some(hi)) => format!("{:.1} [{lo:.1}, {hi:.1}]", t.value),
                    _ => format!("{:.1} [no CI]", t.value),
                });
            let mark = match r.verdict {
                Verdict::NotAvailable => "✗ n/a",
                Verdict::Converged => "✓ converged",
                Verdict::Accepted => "~ accepted",
            };
            Row::new(vec![
                format!("{:.0}", r.target_rate),
                format!("{:.0}", r.achieved_rate),
                mark.to_string(),
                target,
                r.reasons.first().map_or(String::new(), |x| x.check.clone()),
            ])
        })
        .collect();
    let widths = [
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(12),
        Constraint::Length(28),
        Constraint::Min(10),
    ];
    let title = format!(
        " points (p{}) ",
        app.results.last().map_or(99.0, |r| r.target_percentile)
    );
    let table = Table::new(rows, widths)
        .header(
            Row::new(["load/s", "got/s", "verdict", "target µs [CI]", "why"])
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(Block::default().borders(Borders::TOP).title(title));
    frame.render_widget(table, area);
}

fn render_log(frame: &mut Frame, app: &App, area: Rect) {
    let height = area.height.saturating_sub(1) as usize;
    let lines: Vec<Line> = app
        .log
        .iter()
        .rev()
        .take(height)
        .rev()
        .map(|l| Line::raw(l.clone()))
        .collect();
    let block = Block::default().borders(Borders::TOP).title(" decisions ");
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn footer_line(app: &App) -> Line<'static> {
    if let Some(text) = &app.typing {
        return Line::raw(format!(
            "new load (req/s, or 20k): {text}_   Enter to apply, Esc to cancel"
        ));
    }
    if app.confirm_quit {
        return Line::raw(
            "quit? the record is saved either way: q/y to quit, any other key to stay",
        );
    }
    if app.finished {
        return Line::raw("finished · q quit · ? help");
    }
    Line::raw(format!(
        "p {} · +/- load ±{:.0}% · l type a load · a accept · q quit · ? help",
        if app.paused { "resume" } else { "pause" },
        app.step * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::coordinator::{
        AgentProgress, Check, CheckKind, Event, EventKind, PercentileResult, Phase, PointResult,
        Progress, Reason,
    };
    use crate::session::Update;

    fn ev(at: f64, kind: EventKind) -> Update {
        Update::Event(Event {
            at,
            point: 0,
            rate: 20_000.0,
            kind,
        })
    }

    /// A run mid-measurement: what a recorded session says, event by event.
    fn mid_run() -> App {
        let mut app = App::new("synthetic-exp");
        let updates = [
            Update::Started {
                record: PathBuf::from("runs/2026-11-21T23-00-00-synthetic-exp"),
                timestamps: "kernel".into(),
            },
            ev(
                0.0,
                EventKind::Phase {
                    phase: Phase::Warmup,
                    detail: "load applied".into(),
                },
            ),
            ev(
                2.0,
                EventKind::Check(Check {
                    check: CheckKind::Interarrival,
                    agent: Some(0),
                    pass: true,
                    statistic: Some(0.74),
                    pvalue: Some(0.15),
                    n: 1000,
                    detail: "Anderson-Darling A² = 0.740".into(),
                    decision: "fits".into(),
                    data: None,
                }),
            ),
            ev(
                2.0,
                EventKind::Phase {
                    phase: Phase::Measure,
                    detail: "round 1".into(),
                },
            ),
            ev(
                4.5,
                EventKind::Progress(Progress {
                    phase: Phase::Measure,
                    agents: vec![AgentProgress {
                        sent_rate: 19_950.0,
                        achieved_rate: 19_940.0,
                        p50_us: Some(41.0),
                        p99_us: Some(233.0),
                        send_lag_p99_us: Some(12.0),
                        backlog: 0,
                        interarrival_pvalue: Some(0.15),
                        independence_lag: Some(1),
                        ci_width_us: Some(14.2),
                        samples: 9_000,
                    }],
                    samples: 9_000,
                    samples_wanted: 10_000,
                    sampling_rate: 0.2,
                    ci_width_us: Some(14.2),
                    ci_target_us: 10.0,
                    tries: 1,
                    eta_s: Some(0.3),
                    max_duration_s: 30.0,
                    elapsed_s: 4.5,
                    ccdf: vec![],
                }),
            ),
        ];
        for u in &updates {
            app.session(u);
        }
        app
    }

    fn draw(app: &App, w: u16, h: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| render(f, app)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let mut text = String::new();
        for y in 0..h {
            for x in 0..w {
                text.push_str(buffer[(x, y)].symbol());
            }
            text.push('\n');
        }
        text
    }

    #[test]
    fn the_dashboard_mid_run_at_80x24() {
        let text = draw(&mid_run(), 80, 24);
        assert!(text.contains("measure"), "{text}");
        assert!(text.contains("19940/20000"), "{text}");
        assert!(text.contains("14.2 ✗"), "{text}");
        insta::assert_snapshot!("dashboard_mid_run_80x24", text);
    }

    #[test]
    fn a_finished_sweep_at_160x48() {
        let mut app = mid_run();
        for (i, (verdict, reasons)) in [
            (Verdict::Converged, vec![]),
            (
                Verdict::NotAvailable,
                vec![Reason {
                    check: "heavy_tail".into(),
                    detail: "the p99 CI is still 85.0 µs wide".into(),
                    figures: Default::default(),
                }],
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let r = PointResult {
                verdict,
                reasons,
                target_rate: 20_000.0 * (i + 1) as f64,
                achieved_rate: 19_990.0 * (i + 1) as f64,
                timestamps: "kernel".into(),
                samples: 10_000,
                sampling_rate: 0.2,
                duration_s: 6.0,
                percentiles: vec![PercentileResult {
                    p: 99.0,
                    value: 231.5,
                    ci_low: Some(224.0),
                    ci_high: Some(238.1),
                }],
                target_percentile: 99.0,
                ci_width_us: Some(14.1),
                tries: 1,
                min_samples: 563,
                round: 1,
                agents: vec![],
                record: None,
            };
            app.session(&ev(10.0 * (i + 1) as f64, EventKind::Verdict(Box::new(r))));
        }
        app.finish();
        let text = draw(&app, 160, 48);
        assert!(
            text.contains("✓ converged") && text.contains("✗ n/a"),
            "{text}"
        );
        assert!(text.contains("heavy_tail"), "{text}");
        assert!(text.contains("finished · q quit"), "{text}");
        insta::assert_snapshot!("finished_sweep_160x48", text);
    }
}
