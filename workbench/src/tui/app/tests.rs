//! `App::update` for every key and every kind of event, without a terminal.

use std::path::PathBuf;

use super::super::theme::Palette;
use super::keys::SEEK_STEP_S;
use super::state::InterarrivalMark;
use super::*;
use crate::coordinator::reason::{HeavyTail, Why, Wide};
use crate::coordinator::{
    AgentProgress, Check, CheckKind, CheckOutcome, CheckRole, Event, EventKind, Phase, PointResult,
    Progress, Reason, UserCommand, Verdict,
};
use crate::scenario::Method;
use crate::session::Update;
use vernier_stats::Percentile;

fn event(at: f64, point: usize, kind: EventKind) -> AppEvent {
    AppEvent::Session(Update::Event(Event {
        at,
        point,
        rate: 20_000.0,
        kind,
    }))
}

fn check(check: CheckKind, agent: Option<usize>, pass: bool) -> EventKind {
    EventKind::Check(Check {
        check,
        agent,
        pass,
        role: CheckRole::Gate,
        statistic: Some(0.5),
        pvalue: Some(0.2),
        n: 1000,
        found: Check::example().found,
        next: Check::example().next,
        data: None,
    })
}

/// A check the coordinator only reports (`method: vernier`'s inter-arrival and
/// independence tests, or one the scenario waives).
fn reported(kind: CheckKind, agent: Option<usize>, pass: bool) -> EventKind {
    match check(kind, agent, pass) {
        EventKind::Check(c) => EventKind::Check(Check {
            role: CheckRole::Report,
            ..c
        }),
        other => other,
    }
}

fn phase(phase: Phase) -> EventKind {
    EventKind::Phase {
        phase,
        detail: "why".into(),
    }
}

fn result(verdict: Verdict) -> PointResult {
    PointResult {
        answer: verdict,
        verdict,
        reasons: vec![Reason::new(Why::HeavyTail(HeavyTail::Wide(Wide {
            p: Percentile::P99,
            ci_width_us: 40.0.into(),
            target_us: 20.0.into(),
            samples: 20_000,
            samples_needed: 80_000,
            variance_inflation: None,
            batch_size: None,
            heaviness: Some(3.0),
            heaviness_inside: None,
            inside: None,
            stalls: None,
        })))],
        more_time_s: None,
        waived: Vec::new(),
        target_rate: 20_000.0,
        achieved_rate: 19_990.0,
        timestamps: vernier_agent::sys::TimestampMode::Kernel,
        samples: 10_000,
        sampling_rate: 0.2,
        duration_s: 6.0,
        percentiles: vec![],
        from_schedule: vec![],
        target_percentile: Percentile::P99_9,
        ci_width_us: None,
        tries: 1,
        min_samples: 0,
        round: 1,
        agents: vec![],
        host: Vec::new(),
        budget: None,
        record: None,
        run: None,
        replication: None,
        without_stalls: None,
        drift: None,
        earned: None,
        tail: crate::scenario::Tail::WithStalls,
    }
}

fn running() -> App {
    let mut app = App::new(RunInfo::default(), Palette::Plain);
    app.update(AppEvent::Session(Update::Started {
        record: PathBuf::from("runs/x"),
        timestamps: Some(vernier_agent::sys::TimestampMode::Kernel),
        confined: Vec::new(),
        keep: Default::default(),
        metrics: None,
    }));
    app.update(event(0.0, 0, phase(Phase::Warmup)));
    app
}

#[test]
fn under_vernier_a_reported_check_that_fails_is_no_failed_step_and_the_steps_say_so() {
    let mut app = running();
    assert_eq!(app.info.method, Method::Vernier);
    app.update(event(1.0, 0, phase(Phase::Interarrival)));
    app.update(event(
        1.5,
        0,
        reported(CheckKind::Interarrival, Some(0), false),
    ));
    assert_eq!(app.live.marks[Step::Interarrival as usize], None);
    assert_eq!(app.live.step, Some(Step::Interarrival));
    // In the log, it is a reported check that failed: said, not a failure.
    let line = app.history.log.iter().find_map(|l| match &l.entry {
        Entry::Check(c) if c.check == CheckKind::Interarrival => Some(c),
        _ => None,
    });
    assert_eq!(line.map(|c| c.role), Some(CheckRole::Report));
    assert_eq!(line.map(|c| c.outcome()), Some(CheckOutcome::Reported));
    assert_eq!(
        app.live.agents[0].interarrival.map(|m| m.outcome),
        Some(CheckOutcome::Reported)
    );
    assert_eq!(
        Step::Interarrival.name(Method::Vernier, Label::Long),
        "departures"
    );
    assert_eq!(
        Step::Independence.name(Method::Vernier, Label::Long),
        "dependence"
    );
    assert_eq!(
        Step::Interarrival.name(Method::Lancet, Label::Long),
        "inter-arrival"
    );
    // The departures' effect on the answer is a gate: its failure is a failed step.
    app.update(event(3.0, 0, check(CheckKind::Departures, None, false)));
    assert_eq!(app.live.marks[Step::Interarrival as usize], Some(false));
}

#[test]
fn events_move_the_steps_and_fill_the_rows() {
    let mut app = App::new(
        RunInfo {
            method: Method::Lancet,
            ..RunInfo::default()
        },
        Palette::Plain,
    );
    assert_eq!(app.live.step, None);
    app.update(AppEvent::Session(Update::Started {
        record: PathBuf::from("runs/x"),
        timestamps: Some(vernier_agent::sys::TimestampMode::Kernel),
        confined: Vec::new(),
        keep: Default::default(),
        metrics: None,
    }));
    assert_eq!(app.live.step, Some(Step::Load));
    assert_eq!(app.record, Some(PathBuf::from("runs/x")));
    app.update(event(0.0, 0, phase(Phase::Warmup)));
    assert_eq!(app.live.step, Some(Step::Warmup));
    app.update(event(1.0, 0, check(CheckKind::Rate, None, true)));
    app.update(event(1.0, 0, phase(Phase::Interarrival)));
    assert_eq!(app.live.step, Some(Step::Interarrival));
    app.update(event(
        1.5,
        0,
        check(CheckKind::Interarrival, Some(1), false),
    ));
    assert_eq!(app.live.agents.len(), 2);
    assert_eq!(
        app.live.agents[1].interarrival,
        Some(InterarrivalMark {
            statistic: Some(0.5),
            pvalue: Some(0.2),
            outcome: CheckOutcome::Failed
        })
    );
    assert_eq!(app.live.marks[Step::Interarrival as usize], Some(false));
    app.update(event(2.0, 0, phase(Phase::Measure)));
    assert_eq!(app.live.step, Some(Step::Measure));
    assert_eq!(app.live.marks[Step::Interarrival as usize], Some(true));
    app.update(event(
        2.5,
        0,
        EventKind::Progress(Progress {
            phase: Phase::Measure,
            agents: vec![
                AgentProgress {
                    sent_rate: 10_000.0,
                    achieved_rate: 9_000.0,
                    p50_us: Some(40.0),
                    p99_us: Some(200.0),
                    send_lag_p99_us: Some(3.0),
                    backlog: 2,
                    errors: 1,
                    interarrival_pvalue: Some(0.2),
                    independence_lag: Some(2),
                    ci_width_us: Some(30.0),
                    samples: 400,
                    lost: false,
                };
                2
            ],
            samples: 800,
            samples_wanted: 10_000,
            sampling_rate: 0.1,
            ci_width_us: Some(30.0),
            ci_target_us: Some(10.0),
            tries: 1,
            eta_s: Some(9.0),
            max_duration_s: 30.0,
            elapsed_s: 2.5,
            ccdf: vec![(40.0, 0.5), (200.0, 0.01)],
            host: Vec::new(),
        }),
    ));
    assert_eq!(app.live.samples, 800);
    assert_eq!(app.live.ccdf.len(), 2);
    assert_eq!(app.live.throughput.back(), Some(&18_000));
    assert_eq!(app.live.agents[0].progress.as_ref().unwrap().errors, 1);
    assert_eq!((app.live.elapsed_s, app.live.max_duration_s), (2.5, 30.0));
    app.update(event(3.0, 0, check(CheckKind::Independence, Some(0), true)));
    assert_eq!(app.live.step, Some(Step::Independence));
    assert_eq!(app.live.marks[Step::Measure as usize], Some(true));
    app.update(event(3.0, 0, check(CheckKind::Stationarity, Some(0), true)));
    app.update(event(3.0, 0, check(CheckKind::Confidence, None, false)));
    assert_eq!(app.live.step, Some(Step::Confidence));
    assert_eq!(app.live.marks[Step::Confidence as usize], Some(false));
    app.update(event(3.0, 0, phase(Phase::Paused)));
    assert!(app.live.paused);
    app.update(event(
        3.1,
        0,
        EventKind::Command {
            command: "pause".into(),
        },
    ));
    assert_eq!(
        app.history.log.back().map(|l| &l.entry),
        Some(&Entry::Command("pause".into()))
    );
    app.update(event(
        4.0,
        0,
        EventKind::Verdict(Box::new(result(Verdict::NotAvailable))),
    ));
    assert_eq!(app.live.step, Some(Step::Verdict));
    assert_eq!(app.live.marks[Step::Verdict as usize], Some(false));
    assert_eq!(app.live.ci_percentile, Percentile::P99_9);
    assert_eq!(
        app.history.results.last().map(|r| r.verdict),
        Some(Verdict::NotAvailable)
    );
    assert!(matches!(
        app.history.log.back().map(|l| &l.entry),
        Some(Entry::Note(text)) if text.contains("verdict n/a at 20000 req/s: heavy_tail")
    ));
    // A new point clears the per-point state but keeps the results.
    app.update(event(4.0, 1, phase(Phase::Warmup)));
    assert_eq!(app.live.point, 1);
    assert!(app.live.ccdf.is_empty());
    assert_eq!(app.live.agents[1].interarrival, None);
    assert_eq!(app.live.marks[Step::Verdict as usize], None);
    assert_eq!(app.history.results.len(), 1);
    // Windows change nothing shown.
    let before = app.history.log.len();
    app.update(event(
        4.1,
        1,
        EventKind::Window {
            sent_rate: 1.0,
            achieved_rate: 1.0,
            latency_mean_us: None,
        },
    ));
    assert_eq!(app.history.log.len(), before);
    // The end; a report arrives.
    assert_eq!(app.update(AppEvent::Finished(Finished::default())), None);
    assert!(app.history.finished.is_some());
    app.update(AppEvent::Report(Err("no samples".into())));
    assert_eq!(app.history.report, Some(Err("no samples".into())));
}

#[test]
fn steering_keys_become_commands() {
    let mut app = running();
    let command = |app: &mut App, key| app.update(AppEvent::Key(key));
    assert_eq!(
        command(&mut app, Key::Char('p')),
        Some(AppAction::Command(UserCommand::Pause))
    );
    app.live.paused = true;
    assert_eq!(
        command(&mut app, Key::Char('p')),
        Some(AppAction::Command(UserCommand::Resume))
    );
    assert_eq!(
        command(&mut app, Key::Char('+')),
        Some(AppAction::Command(UserCommand::SetLoad(22_000.0)))
    );
    assert_eq!(
        command(&mut app, Key::Char('-')),
        Some(AppAction::Command(UserCommand::SetLoad(18_000.0)))
    );
    assert_eq!(
        command(&mut app, Key::Char('a')),
        Some(AppAction::Command(UserCommand::Accept))
    );
    assert_eq!(
        command(&mut app, Key::Char('c')),
        Some(AppAction::Command(UserCommand::Continue))
    );
    // `l`, a typed load with a correction, Enter.
    assert_eq!(command(&mut app, Key::Char('l')), None);
    for key in [
        Key::Char('2'),
        Key::Char('9'),
        Key::Backspace,
        Key::Char('5'),
        Key::Char('k'),
    ] {
        assert_eq!(command(&mut app, key), None);
    }
    assert_eq!(app.ui.mode, Mode::Typing("25k".into()));
    assert_eq!(
        command(&mut app, Key::Enter),
        Some(AppAction::Command(UserCommand::SetLoad(25_000.0)))
    );
    // A bad load is a notice, not a command; Esc cancels typing.
    command(&mut app, Key::Char('l'));
    command(&mut app, Key::Char('.'));
    assert_eq!(command(&mut app, Key::Enter), None);
    assert!(app.ui.notice.as_deref().unwrap().contains("not a load"));
    command(&mut app, Key::Char('l'));
    command(&mut app, Key::Esc);
    assert_eq!(app.ui.mode, Mode::Dashboard);
    // Unknown keys do nothing; `g` and `?` change the view only.
    assert_eq!(command(&mut app, Key::Char('z')), None);
    assert_eq!(command(&mut app, Key::Char('g')), None);
    assert_eq!(app.ui.chart, NarrowChart::Load);
    assert_eq!(command(&mut app, Key::Char('?')), None);
    assert_eq!(app.ui.mode, Mode::Help);
    assert_eq!(command(&mut app, Key::Esc), None);
    assert_eq!(app.ui.mode, Mode::Dashboard);
    // The report waits for the end.
    assert_eq!(command(&mut app, Key::Char('r')), None);
    assert!(
        app.ui
            .notice
            .as_deref()
            .unwrap()
            .contains("when the run has finished")
    );
}

#[test]
fn quit_asks_then_waits_for_the_record() {
    let mut app = running();
    assert_eq!(app.update(AppEvent::Key(Key::Char('q'))), None);
    assert_eq!(app.ui.mode, Mode::ConfirmQuit);
    assert_eq!(app.update(AppEvent::Key(Key::Char('n'))), None);
    assert_eq!(app.ui.mode, Mode::Dashboard);
    app.update(AppEvent::Key(Key::Char('q')));
    assert_eq!(
        app.update(AppEvent::Key(Key::Char('y'))),
        Some(AppAction::Command(UserCommand::Quit))
    );
    assert_eq!(app.ui.mode, Mode::Quitting);
    // Asking twice sends one quit.
    assert_eq!(app.update(AppEvent::Key(Key::Interrupt)), None);
    // The session saved the record: now the UI leaves.
    assert_eq!(
        app.update(AppEvent::Finished(Finished::default())),
        Some(AppAction::Exit)
    );
    // Ctrl-C quits without asking.
    let mut app = running();
    assert_eq!(
        app.update(AppEvent::Key(Key::Interrupt)),
        Some(AppAction::Command(UserCommand::Quit))
    );
}

#[test]
fn a_finished_run_has_the_report_and_q_leaves() {
    let mut app = running();
    app.update(AppEvent::Finished(Finished::default()));
    assert_eq!(app.update(AppEvent::Key(Key::Char('a'))), None);
    assert!(
        app.ui
            .notice
            .as_deref()
            .unwrap()
            .contains("the run is over")
    );
    assert_eq!(
        app.update(AppEvent::Key(Key::Char('r'))),
        Some(AppAction::OpenReport)
    );
    assert_eq!(app.ui.mode, Mode::Report);
    // While the report is open, q closes it rather than quitting.
    assert_eq!(app.update(AppEvent::Key(Key::Char('q'))), None);
    assert_eq!(app.ui.mode, Mode::Dashboard);
    app.update(AppEvent::Report(Ok(ReportView {
        table: "t".into(),
        plots: vec![],
        notes: vec![],
    })));
    // A report already made is shown, not made again.
    assert_eq!(app.update(AppEvent::Key(Key::Char('r'))), None);
    assert_eq!(app.ui.mode, Mode::Report);
    app.update(AppEvent::Key(Key::Esc));
    assert_eq!(
        app.update(AppEvent::Key(Key::Char('q'))),
        Some(AppAction::Exit)
    );
}

#[test]
fn a_replay_has_the_player_keys_and_no_steering() {
    let mut app = App::replaying(RunInfo::default(), Palette::Plain, PathBuf::from("runs/x"));
    let key = |app: &mut App, k| app.update(AppEvent::Key(k));
    assert_eq!(
        key(&mut app, Key::Char(' ')),
        Some(AppAction::Replay(ReplayControl::Toggle))
    );
    assert_eq!(
        key(&mut app, Key::Left),
        Some(AppAction::Replay(ReplayControl::Seek(-SEEK_STEP_S)))
    );
    assert_eq!(
        key(&mut app, Key::Right),
        Some(AppAction::Replay(ReplayControl::Seek(SEEK_STEP_S)))
    );
    assert_eq!(
        key(&mut app, Key::Char('[')),
        Some(AppAction::Replay(ReplayControl::Speed(0.5)))
    );
    assert_eq!(
        key(&mut app, Key::Char(']')),
        Some(AppAction::Replay(ReplayControl::Speed(2.0)))
    );
    assert_eq!(key(&mut app, Key::Char('+')), None);
    assert!(
        app.ui
            .notice
            .as_deref()
            .unwrap()
            .contains("cannot be steered")
    );
    let status = ReplayStatus {
        at: 3.0,
        end: 9.0,
        speed: 2.0,
        playing: false,
    };
    app.update(AppEvent::Replay(status));
    assert_eq!(app.replay, Some(status));
    assert_eq!(key(&mut app, Key::Char('q')), Some(AppAction::Exit));
    assert_eq!(key(&mut app, Key::Interrupt), Some(AppAction::Exit));
}

#[test]
fn the_screen_is_in_one_mode_at_a_time() {
    let mut app = running();
    let key = |app: &mut App, k| app.update(AppEvent::Key(k));
    // `?` and `b` switch between the overlays; pressed again, each closes its own.
    key(&mut app, Key::Char('b'));
    assert_eq!(app.ui.mode, Mode::Budget);
    key(&mut app, Key::Char('?'));
    assert_eq!(app.ui.mode, Mode::Help);
    key(&mut app, Key::Char('b'));
    assert_eq!(app.ui.mode, Mode::Budget);
    key(&mut app, Key::Char('b'));
    assert_eq!(app.ui.mode, Mode::Dashboard);
    // `g` changes the chart, not the mode.
    key(&mut app, Key::Char('?'));
    key(&mut app, Key::Char('g'));
    assert_eq!(
        (app.ui.mode.clone(), app.ui.chart),
        (Mode::Help, NarrowChart::Load)
    );
    // A prompt takes the screen's keys from an overlay; leaving it is back to the
    // dashboard.
    key(&mut app, Key::Char('l'));
    assert_eq!(app.ui.mode, Mode::Typing(String::new()));
    key(&mut app, Key::Esc);
    assert_eq!(app.ui.mode, Mode::Dashboard);
    // Quitting waits for the record: steering keys do nothing meanwhile.
    key(&mut app, Key::Char('q'));
    assert_eq!(
        key(&mut app, Key::Char('y')),
        Some(AppAction::Command(UserCommand::Quit))
    );
    for k in [
        Key::Char('p'),
        Key::Char('?'),
        Key::Char('q'),
        Key::Char('a'),
    ] {
        assert_eq!(key(&mut app, k), None);
        assert_eq!(app.ui.mode, Mode::Quitting);
    }
    assert_eq!(
        app.update(AppEvent::Finished(Finished::default())),
        Some(AppAction::Exit)
    );
}
