//! The panels drawn from a recorded run (fixtures/runs/demo-sweep: a real `vernier demo`
//! sweep on this project's 2-core VM, three points that ended N/A) at 80x24 and 160x48.

use std::path::{Path, PathBuf};

use ratatui::style::Color;

use super::super::app::{App, AppEvent, Finished, Key, ReportView};
use super::super::terminal::screen;
use super::super::theme::Palette;
use crate::record::{RunRecord, read_record};
use crate::scenario::Scenario;
use crate::session::Update;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs/demo-sweep")
}

fn fixture() -> RunRecord {
    read_record(&fixture_dir()).expect("the fixture record")
}

/// A live app fed the record's events up to `until` seconds.
fn live_at(until: f64, palette: Palette) -> App {
    let record = fixture();
    let scenario = Scenario::from_yaml(&record.scenario, None, &[]).unwrap();
    let mut app = App::new(super::super::app::RunInfo::of(&scenario), palette);
    app.update(AppEvent::Session(Update::Started {
        record: PathBuf::from("runs/2026-11-22T01-04-41-demo"),
        timestamps: record.timestamps.parse().ok(),
        confined: Vec::new(),
        keep: Default::default(),
        metrics: None,
    }));
    for e in record.events.iter().filter(|e| e.at <= until) {
        app.update(AppEvent::Recorded(e.clone()));
    }
    app
}

/// The app at the end of the record, finished, its report written.
fn finished(palette: Palette) -> App {
    let record = fixture();
    let mut app = live_at(f64::INFINITY, palette);
    app.update(AppEvent::Finished(Finished {
        verdict: record.verdict,
        slo_rate: None,
        problem: None,
    }));
    let dir = "runs/2026-11-22T01-04-41-demo/report";
    app.update(AppEvent::Report(Ok(ReportView {
        table: "(the report's table)".into(),
        plots: ["ccdf.svg", "load.svg", "interarrival-agent0.svg"]
            .iter()
            .map(|f| PathBuf::from(dir).join(f))
            .collect(),
        notes: vec![],
    })));
    app
}

#[test]
fn mid_run_at_80x24_shows_steps_agents_points_ccdf_and_decisions() {
    // 12 s in: point 1 is measuring its first round.
    let text = screen(&live_at(12.0, Palette::Plain), 80, 24);
    assert!(text.contains("point 1/3: 2000 req/s"), "{text}");
    assert!(text.contains("measure"), "{text}");
    assert!(text.contains("✓ A²"), "{text}");
    assert!(text.contains("latency CCDF"), "{text}");
    // Its scenario asks for the tail without stalls, whose live estimate is every
    // request's: the panel names the tail and says so.
    assert!(text.contains("points: p99 without stalls (e)"), "{text}");
    assert!(text.contains("(live, all)"), "{text}");
    // The fixture's inter-arrival test is only reported (its scenario's method is
    // vernier's): its failure is marked as said, not as failed.
    assert!(text.contains("· interarrival (reported) agent 0"), "{text}");
    assert!(text.contains("a accept"), "{text}");
    insta::assert_snapshot!("mid_run_80x24", text);
}

#[test]
fn a_sweep_at_160x48_has_the_load_chart_with_the_current_load() {
    // Point 2 warming up, point 1 finished N/A.
    let text = screen(&live_at(22.0, Palette::Plain), 160, 48);
    assert!(text.contains("point 2/3: 3000 req/s"), "{text}");
    assert!(text.contains("p99 vs load"), "{text}");
    assert!(text.contains("now"), "{text}");
    assert!(text.contains("✗ n/a"), "{text}");
    assert!(text.contains("departures › measure"), "{text}");
    insta::assert_snapshot!("sweep_160x48", text);
}

#[test]
fn the_verdict_screen_names_every_failed_check_its_suggestion_and_the_files() {
    let app = finished(Palette::Plain);
    let text = screen(&app, 80, 24);
    assert!(text.contains("verdict: N/A ✗"), "{text}");
    assert!(
        text.contains(crate::coordinator::ReasonKind::HeavyTail.name()),
        "{text}"
    );
    assert!(text.contains("→ ask for less"), "{text}");
    assert!(
        text.contains("record: runs/2026-11-22T01-04-41-demo"),
        "{text}"
    );
    assert!(
        text.contains("plots: runs/2026-11-22T01-04-41-demo/report/"),
        "{text}"
    );
    assert!(text.contains("r report"), "{text}");
    insta::assert_snapshot!("verdict_80x24", text);
    let text = screen(&app, 160, 48);
    assert!(text.contains("→ departures do not follow"), "{text}");
    insta::assert_snapshot!("verdict_160x48", text);
}

#[test]
fn overlays_prompts_and_a_small_terminal() {
    let mut app = live_at(12.0, Palette::Plain);
    app.update(AppEvent::Key(Key::Char('?')));
    let text = screen(&app, 80, 24);
    assert!(text.contains("continue past the limits"), "{text}");
    app.update(AppEvent::Key(Key::Esc));
    app.update(AppEvent::Key(Key::Char('l')));
    app.update(AppEvent::Key(Key::Char('2')));
    app.update(AppEvent::Key(Key::Char('k')));
    let text = screen(&app, 80, 24);
    assert!(text.contains("new load (req/s, or 20k): 2k_"), "{text}");
    app.update(AppEvent::Key(Key::Esc));
    app.update(AppEvent::Key(Key::Char('q')));
    assert!(screen(&app, 80, 24).contains("quit? the record is saved either way"));
    app.update(AppEvent::Key(Key::Char('n')));
    // `g` switches the narrow chart to latency vs load.
    app.update(AppEvent::Key(Key::Char('g')));
    assert!(screen(&app, 80, 24).contains("no point finished yet"));
    let text = screen(&app, 40, 10);
    assert!(text.contains("vernier needs at least 60x16"), "{text}");
}

#[test]
fn without_colour_nothing_is_coloured_and_failures_still_read() {
    let draw = |palette: Palette| {
        let app = finished(palette);
        let backend = ratatui::backend::TestBackend::new(80, 24);
        let mut terminal = ratatui::Terminal::new(backend).unwrap();
        terminal.draw(|f| super::render(f, &app)).unwrap();
        terminal.backend().buffer().clone()
    };
    let plain = draw(Palette::Plain);
    assert!(
        plain
            .content()
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
        "NO_COLOR drew a colour"
    );
    let coloured = draw(Palette::Color);
    assert!(coloured.content().iter().any(|c| c.fg == Color::Red));
    // The same text either way: failures carry ✗ without colour.
    let text =
        |b: &ratatui::buffer::Buffer| b.content().iter().map(|c| c.symbol()).collect::<String>();
    assert_eq!(text(&plain), text(&coloured));
}

#[test]
fn an_accepted_point_is_not_called_certified() {
    let mut app = finished(Palette::Plain);
    app.history.results.truncate(1);
    app.history.results[0].verdict = crate::coordinator::Verdict::Accepted;
    app.history.results[0].reasons.clear();
    app.history.finished.as_mut().unwrap().verdict = Some(crate::coordinator::Verdict::Accepted);
    let text = screen(&app, 80, 24);
    assert!(text.contains("verdict: ACCEPTED"), "{text}");
    assert!(text.contains("~ 2000 req/s accepted by the user"), "{text}");
    assert!(!text.contains("every check passed"), "{text}");
}

/// A tail without stalls converged at p99 431.5 [402.0, 466.0] µs, 12.4% touched.
fn untouched_p99() -> crate::coordinator::WithoutStalls {
    use crate::coordinator::{PercentileResult, Probed, Verdict, WithoutStalls};
    WithoutStalls {
        verdict: Verdict::Converged,
        short: None,
        percentiles: vec![PercentileResult {
            p: 99.0,
            value: 431.5,
            ci_low: Some(402.0),
            ci_high: Some(466.0),
            dependence: None,
        }],
        ci_width_us: Some(64.0),
        touched_share: 0.124,
        touched_by_agent: vec![0.124],
        samples: 36_512,
        stalls: 41,
        probed: Probed::ClientAndTarget,
        touched_call: None,
        more_time: None,
    }
}

#[test]
fn a_point_with_its_tail_without_stalls_shows_both_and_the_share_touched() {
    let mut app = finished(Palette::Plain);
    app.history.results.truncate(1);
    app.history.results[0].without_stalls = Some(untouched_p99());
    let text = screen(&app, 160, 48);
    // The help page opens with the host's verdict: 12.4% touched is fit for the tail
    // without stalls only.
    app.update(AppEvent::Key(Key::Char('?')));
    let help = screen(&app, 160, 48);
    assert!(
        help.contains("this host: stalls touched 12.4% of the last point's requests:")
            && help.contains("fit for the tail without stalls only"),
        "{help}"
    );
    app.update(AppEvent::Key(Key::Esc));
    // Under every request's row, the tail without stalls: its verdict, samples, p99 and CI.
    let without = (text.lines())
        .find(|l| l.contains("  w/o  stalls "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        without.contains("36512") && without.contains("431.5"),
        "{without}"
    );
    assert!(without.contains("12.4% hit"), "{without}");
    assert!(
        text.contains(
            "2000 req/s without stalls: 12.4% of requests touched by a stall (agent 0 12.4%)"
        ),
        "{text}"
    );
}

/// A point that answered for the tail without stalls is shown in the points panel by that
/// tail (its verdict and p99), the panel saying so; `e` shows every request's instead.
#[test]
fn the_points_panel_shows_the_tail_answered_for_and_e_switches_to_every_request_s() {
    use crate::coordinator::Verdict;
    use crate::scenario::Tail;
    // 22 s in: the first point is done, the second measuring.
    let mut app = live_at(22.0, Palette::Plain);
    let point = &mut app.history.results[0];
    point.tail = Tail::WithoutStalls;
    point.without_stalls = Some(untouched_p99());
    point.settle_answer();
    assert_ne!(
        point.verdict,
        Verdict::Converged,
        "the fixture's every-request tail"
    );
    let panel = |app: &App| {
        let text = screen(app, 100, 30);
        let start = text.find(" points: ").unwrap_or_else(|| panic!("{text}"));
        // The panel's title and its first row.
        text[start..]
            .lines()
            .take(3)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let shown = panel(&app);
    assert!(
        shown[0].contains("points: p99 without stalls (e)"),
        "{shown:?}"
    );
    assert!(
        shown[2].contains("✓ conv") && shown[2].contains("431.5"),
        "{shown:?}"
    );
    app.update(AppEvent::Key(Key::Char('e')));
    let every = panel(&app);
    assert!(
        every[0].contains("points: p99 every request (e)"),
        "{every:?}"
    );
    assert!(
        !every[2].contains("431.5") && !every[2].contains("✓ conv"),
        "{every:?}"
    );
}

#[test]
fn a_lost_agent_is_marked_and_the_others_want_its_share() {
    let mut app = live_at(12.0, Palette::Plain);
    let mut lost = app.live.agents[0].clone();
    if let Some(p) = lost.progress.as_mut() {
        p.lost = true;
    }
    let alive = app.live.agents[0].clone();
    app.live.agents = vec![alive.clone(), alive, lost];
    let text = screen(&app, 80, 24);
    assert!(text.contains("2  lost ✗"), "{text}");
    // Two live agents share 2000 req/s: each wants 1000, and only theirs is counted.
    assert!(text.contains("1958/1000"), "{text}");
    assert!(text.contains("(3916 req/s in all)"), "{text}");
}

#[test]
fn the_target_percentile_from_the_schedule_shows_where_there_is_room() {
    let mut app = live_at(22.0, Palette::Plain);
    let p = app.history.results[0].target_percentile.percent();
    app.history.results[0].from_schedule = vec![crate::coordinator::SchedulePercentile {
        p,
        value: 812.3,
        actual: 240.1,
    }];
    // 100 columns: the points table has room for it, not for the median too.
    let text = screen(&app, 100, 30);
    assert!(text.contains("p99 sched"), "{text}");
    assert!(text.contains("812.3"), "{text}");
    assert!(!text.contains("p50 µs [CI]"), "{text}");
    insta::assert_snapshot!("from_schedule_100x30", text);
    // 200 columns: room for both.
    let text = screen(&app, 200, 50);
    assert!(
        text.contains("p50 µs [CI]") && text.contains("p99 sched") && text.contains("812.3"),
        "{text}"
    );
    // 80x24 and 160x48 keep their columns.
    for (width, height) in [(80, 24), (160, 48)] {
        let text = screen(&app, width, height);
        assert!(!text.contains("p99 sched"), "{text}");
    }
    // The verdict screen has room for it at 160 columns, not at 80.
    let mut app = finished(Palette::Plain);
    app.history.results[0].from_schedule = vec![crate::coordinator::SchedulePercentile {
        p,
        value: 812.3,
        actual: 240.1,
    }];
    let text = screen(&app, 160, 48);
    assert!(
        text.contains("p99 sched") && text.contains("812.3"),
        "{text}"
    );
    assert!(!screen(&app, 80, 24).contains("p99 sched"));
}

#[test]
fn the_agents_panel_names_the_host_stall_once_a_probe_reported() {
    let record = fixture();
    let mut app = live_at(12.0, Palette::Plain);
    assert!(!screen(&app, 80, 24).contains("host stall"));
    // The record's last progress before 12 s, as it would be with two probes.
    let mut event = record
        .events
        .iter()
        .rev()
        .find(|e| e.at <= 12.0 && matches!(e.kind, crate::coordinator::EventKind::Progress(_)))
        .cloned()
        .unwrap();
    if let crate::coordinator::EventKind::Progress(p) = &mut event.kind {
        for (cpu, p99_us) in [(Some(1), 1_234.0), (None, 80.0)] {
            let mut r = vernier_agent::StallReport::default();
            r.cpu = cpu;
            r.wakeups = 500;
            r.late_p99_us = p99_us;
            p.host.push(r);
        }
    }
    app.update(AppEvent::Recorded(event));
    assert_eq!(app.live.host.len(), 2);
    let text = screen(&app, 80, 24);
    assert!(
        text.contains(" agents (1958 req/s in all · host stall p99 1.2 ms) ─"),
        "{text}"
    );
    // The next point starts without it.
    let next = record
        .events
        .iter()
        .find(|e| e.point == 1)
        .cloned()
        .unwrap();
    app.update(AppEvent::Recorded(next));
    assert!(app.live.host.is_empty());
}

#[test]
fn a_replicated_point_shows_its_runs_as_rows() {
    use crate::coordinator::{
        Event, EventKind, PercentileResult, PointResult, Replication, Verdict,
    };
    let mut app = live_at(12.0, Palette::Plain);
    let (point, rate) = (app.live.point, app.live.rate);
    let run = |k: u32, value: f64| PointResult {
        run: Some(k),
        ..PointResult::example(
            rate,
            Verdict::Converged,
            vec![PercentileResult::example(
                99.0,
                value,
                Some((value - 4.0, value + 4.0)),
            )],
        )
    };
    let event = |at: f64, kind: EventKind| {
        AppEvent::Session(Update::Event(Event {
            at,
            point,
            rate,
            kind,
        }))
    };
    // Two runs done, the third measuring: their rows come before the live one.
    app.update(event(12.5, EventKind::Run(Box::new(run(1, 312.0)))));
    app.update(event(13.0, EventKind::Run(Box::new(run(2, 348.0)))));
    assert_eq!(app.history.runs.len(), 2);
    let text = screen(&app, 100, 30);
    let r1 = text.find(" r1").expect("run 1's row");
    let r2 = text.find(" r2").expect("run 2's row");
    let now = text.find("… now").expect("the live row");
    assert!(r1 < r2 && r2 < now, "{text}");
    assert!(text.contains("point 1/3 run 3: 2000 req/s"), "{text}");
    assert!(text.contains("312.0 [308.0, 316.0]"), "{text}");
    assert!(
        text.contains("run 2 converged at 2000 req/s: 348.0 [344.0, 352.0] µs"),
        "{text}"
    );
    insta::assert_snapshot!("replicated_runs_100x30", text);
    // The point's verdict: its row (the CI across runs), its runs under it.
    let mut across = PointResult::example(
        rate,
        Verdict::NotAvailable,
        vec![PercentileResult::example(99.0, 330.0, Some((101.3, 558.7)))],
    );
    across.replication = Some(Box::new(Replication {
        method: crate::coordinator::AcrossMethod::TIntervalOverRuns,
        runs: vec![run(1, 312.0), run(2, 348.0)],
        across: Vec::new(),
        width_target_us: 33.0,
        spread: None,
        hysteresis: false,
    }));
    app.update(event(14.0, EventKind::Verdict(Box::new(across))));
    assert!(app.history.runs.is_empty());
    let text = screen(&app, 100, 30);
    let point_row = text.find("330.0 [101.3, 558.7]").expect("the point's row");
    assert!(point_row < text.find(" r1").unwrap(), "{text}");
}

#[test]
fn the_budget_overlay_shows_each_point_its_parts_and_what_is_unknown() {
    use crate::budget::{Baseline, Part};
    let mut app = finished(Palette::Plain);
    app.update(AppEvent::Key(Key::Char('b')));
    // The fixture predates budgets: each point says so rather than showing zeros.
    let text = screen(&app, 80, 24);
    assert!(text.contains("latency budget of the p50"), "{text}");
    assert_eq!(
        text.matches("no budget (the record predates").count(),
        3,
        "{text}"
    );
    // The first point measured on loopback with the model known; the others from a remote
    // agent: no floor, no client, and so nothing to add up.
    let local = Baseline::given(
        Part::known(
            5.9,
            "p50 of 10000 round trips of a busy-polling TCP ping-pong",
        ),
        Part::known(-1.1, "calibrated at the run's start, not per request"),
        Ok("exp:50us".parse().unwrap()),
        0,
    );
    let remote = Baseline::given(
        Part::unknown("the agents run on other hosts"),
        Part::unknown("the agents run on other hosts"),
        Ok("exp:50us".parse().unwrap()),
        0,
    );
    // The record predates the probes too: the first point is given a quiet one.
    let mut quiet = vernier_agent::StallReport::default();
    quiet.cpu = Some(1);
    quiet.seconds = 10.0;
    quiet.wakeups = 10_000;
    app.history.results[0].host = vec![quiet];
    for (i, r) in app.history.results.iter_mut().enumerate() {
        let baseline = if i == 0 { &local } else { &remote };
        r.budget = Some(baseline.budget(r, crate::budget::During::default()));
    }
    let text = screen(&app, 80, 24);
    assert!(!text.contains("no budget"), "{text}");
    assert!(
        text.contains("floor       5.9 µs  p50 of 10000 round trips"),
        "{text}"
    );
    assert!(text.contains("client     -1.1 µs"), "{text}");
    assert!(text.contains("host        0.0 µs"), "{text}");
    assert!(
        text.contains("floor      unknown  the agents run on other hosts"),
        "{text}"
    );
    assert!(text.contains("no p50 reported: nothing to split"), "{text}");
    insta::assert_snapshot!("budget_80x24", text);
    // Esc closes it, and b opens it again.
    app.update(AppEvent::Key(Key::Esc));
    assert!(!screen(&app, 80, 24).contains("latency budget of the p50"));
    app.update(AppEvent::Key(Key::Char('b')));
    assert!(screen(&app, 80, 24).contains("latency budget of the p50"));
    app.update(AppEvent::Key(Key::Char('b')));
    assert!(!screen(&app, 80, 24).contains("latency budget of the p50"));
}

#[test]
fn a_budget_with_the_path_probe_shows_its_queue_and_the_points_that_fit() {
    use crate::budget::{Baseline, During, Part, ProbeWindow};
    let mut app = finished(Palette::Plain);
    app.update(AppEvent::Key(Key::Char('b')));
    let baseline = Baseline::given(
        Part::known(5.9, "ping-pong"),
        Part::known(-1.1, "calibrated"),
        Ok("exp:50us".parse().unwrap()),
        0,
    )
    .with_path(vec![4.8; crate::budget::GRID]);
    let mut quiet = vernier_agent::StallReport::default();
    quiet.cpu = Some(1);
    quiet.seconds = 10.0;
    quiet.wakeups = 10_000;
    for r in app.history.results.iter_mut() {
        r.host = vec![quiet.clone()];
        let window = ProbeWindow {
            rate: r.target_rate / 4.0,
            connections: 2,
            requests: 5_000,
            p50_us: 4.9,
            ci_us: Some((4.8, 5.0)),
            ci_how: "given".into(),
            grid: vec![4.9; crate::budget::GRID],
        };
        let during = During {
            probe: Some(window),
            ..During::default()
        };
        r.budget = Some(baseline.budget(r, during));
    }
    // Eight lines a point: on 24 rows two of the three fit, and the screen says so.
    let text = screen(&app, 80, 24);
    assert_eq!(text.matches("  queue ").count(), 2, "{text}");
    assert!(text.contains("the first 1 point(s) do not fit"), "{text}");
    assert!(text.contains("client     -1.1 µs  calibrated"), "{text}");
    assert!(
        text.contains("moved       0.1 µs  the path as the point met it"),
        "{text}"
    );
    // A taller terminal shows all three.
    let text = screen(&app, 80, 40);
    assert_eq!(text.matches("  queue ").count(), 3, "{text}");
    assert!(!text.contains("do not fit"), "{text}");
}

/// A run under `method: vernier` at its first look, with the checks `vernier demo` logs
/// there: the lag search (reported) found correlation, and the CI is narrow enough but on
/// too few effective tail samples.
fn first_look(palette: Palette) -> App {
    use crate::coordinator::check_next::{CheckNext, Found, IntervalFinding};
    use crate::coordinator::{Check, CheckKind, CheckRole, Event, EventKind, Phase};
    use vernier_stats::Percentile;
    let mut app = App::new(super::super::app::RunInfo::default(), palette);
    app.update(AppEvent::Session(Update::Started {
        record: PathBuf::from("runs/2026-11-26T19-00-00-demo"),
        timestamps: Some(vernier_agent::sys::TimestampMode::Kernel),
        confined: Vec::new(),
        keep: Default::default(),
        metrics: None,
    }));
    let event = |at: f64, kind: EventKind| {
        AppEvent::Session(Update::Event(Event {
            at,
            point: 0,
            rate: 2000.0,
            kind,
        }))
    };
    app.update(event(
        3.0,
        EventKind::Phase {
            phase: Phase::Measure,
            detail: "collect 5000 samples per agent".into(),
        },
    ));
    app.update(event(15.5, EventKind::Check(Check::example())));
    app.update(event(
        15.5,
        EventKind::Check(Check {
            check: CheckKind::Confidence,
            agent: None,
            pass: false,
            role: CheckRole::Gate,
            statistic: Some(67.9),
            pvalue: None,
            n: 5003,
            found: Found::Interval(IntervalFinding {
                p: Percentile::P99,
                value: 412.3,
                confidence: 0.95,
                low: 380.1,
                high: 448.0,
                width: 67.9,
                target_us: 88.2,
                n: 5003,
                batches: None,
            }),
            next: Some(CheckNext::NarrowOnFewTail {
                effective_tail: 55.0,
                look: 1,
                tail_needed: 100.0,
                per_agent: 9100,
            }),
            data: None,
        }),
    ));
    app
}

#[test]
fn a_reported_check_is_no_failure_and_a_check_leads_with_its_decision() {
    let text = screen(&first_look(Palette::Plain), 100, 30);
    insta::assert_snapshot!("first_look_100x30", text);
    // Drawn in colour, the failed gate is red and the reported check is not.
    let backend = ratatui::backend::TestBackend::new(100, 30);
    let mut terminal = ratatui::Terminal::new(backend).unwrap();
    let app = first_look(Palette::Color);
    terminal.draw(|f| super::render(f, &app)).unwrap();
    let buffer = terminal.backend().buffer();
    // A log line is its clock (`  15.50s `), then its mark.
    let row_of = |mark: &str| {
        (0..buffer.area.height).find(|&y| {
            let stamp: String = (0..9).map(|x| buffer[(x, y)].symbol()).collect();
            stamp == "  15.50s " && buffer[(9, y)].symbol() == mark
        })
    };
    let red = |y: u16| (0..buffer.area.width).any(|x| buffer[(x, y)].fg == Color::Red);
    let reported = row_of("·").expect("the reported check's line");
    let failed = row_of("✗").expect("the failed gate's line");
    assert!(!red(reported), "a reported check drawn as a failure");
    assert!(red(failed), "a failed gate not drawn as one");
}
