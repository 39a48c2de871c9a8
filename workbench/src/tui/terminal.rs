//! The terminal side: crossterm in raw mode on the alternate screen, restored by a guard
//! on every return (errors included) and by ratatui's panic hook on a panic. The session
//! runs on its own thread with its own runtime; this thread only draws (at most ten times
//! a second, and only when something changed or a quarter second passed) and turns keys
//! into [`AppEvent`]s. Ctrl-C is a key in raw mode: it quits, and the record is saved.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::{DefaultTerminal, Frame};
use tokio::sync::mpsc;

use super::app::{App, AppAction, AppEvent, Finished, Key, ReplayControl, ReportView, RunInfo};
use super::replay::{Player, Until};
use super::theme::Palette;
use super::view;
use crate::error::Error;
use crate::report;
use crate::scenario::Scenario;
use crate::session::{self, SessionOptions, SessionResult, Update};

/// The longest wait for a key before the screen is looked at again.
pub(super) const POLL: Duration = Duration::from_millis(100);
/// A redraw at least this often, changed or not (the dashboard updates ≥ 4 times a second).
pub(super) const REDRAW: Duration = Duration::from_millis(250);

/// Whether a UI can be shown here: stdin and stdout are terminals.
pub fn available() -> bool {
    std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

/// The terminal in UI mode; dropping it restores the terminal (the live comparison's
/// screen uses it too).
pub(super) struct Guard {
    terminal: DefaultTerminal,
}

impl Guard {
    pub(super) fn enter() -> Result<Guard, Error> {
        let terminal = ratatui::try_init().map_err(|source| Error::Io {
            path: "<terminal>".into(),
            source,
        })?;
        Ok(Guard { terminal })
    }

    fn draw(&mut self, app: &App) -> Result<(), Error> {
        self.draw_with(|f| view::render(f, app))
    }

    /// Draws a frame with `render`.
    pub(super) fn draw_with(&mut self, render: impl FnOnce(&mut Frame)) -> Result<(), Error> {
        self.terminal
            .draw(render)
            .map(|_| ())
            .map_err(|source| Error::Io {
                path: "<terminal>".into(),
                source,
            })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// The next key, waiting at most `timeout`; `Ok(None)` for nothing or a resize (which the
/// next draw handles).
pub(super) fn next_key(timeout: Duration) -> Result<Option<Key>, Error> {
    let io = |source| Error::Io {
        path: "<terminal>".into(),
        source,
    };
    if !event::poll(timeout).map_err(io)? {
        return Ok(None);
    }
    let TermEvent::Key(k) = event::read().map_err(io)? else {
        return Ok(None);
    };
    if k.kind != KeyEventKind::Press {
        return Ok(None);
    }
    Ok(match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some(Key::Interrupt),
        KeyCode::Char(c) => Some(Key::Char(c)),
        KeyCode::Enter => Some(Key::Enter),
        KeyCode::Esc => Some(Key::Esc),
        KeyCode::Backspace => Some(Key::Backspace),
        KeyCode::Left => Some(Key::Left),
        KeyCode::Right => Some(Key::Right),
        _ => None,
    })
}

/// What the session thread tells the UI.
#[allow(clippy::large_enum_variant)] // One per event, to one reader.
enum Message {
    Update(Update),
    Done(Result<SessionResult, Error>),
    Report(Result<ReportView, String>),
}

/// Makes the report of `dir` for the UI.
fn make_report(dir: &std::path::Path) -> Result<ReportView, String> {
    report::run(dir, None, report::PlotFormat::Svg)
        .map(|r| ReportView {
            table: report::render_table(&r.summary),
            plots: r.plots,
            notes: r.notes,
        })
        .map_err(|e| e.to_string())
}

/// Runs `scenario` with the dashboard; returns the outcome once the user leaves (the
/// record is saved and its report written by then).
pub fn run_live(scenario: &Scenario, options: &SessionOptions) -> Result<SessionResult, Error> {
    let (commands, commands_rx) = mpsc::unbounded_channel();
    let (tx, rx) = std_mpsc::channel();
    let session = {
        let scenario = scenario.clone();
        let options = options.clone();
        std::thread::Builder::new()
            .name("vernier-session".into())
            .spawn(move || {
                let result = session::runtime("vernier-session").and_then(|rt| {
                    let watch_tx = tx.clone();
                    rt.block_on(session::run(&scenario, &options, commands_rx, |u| {
                        let _ = watch_tx.send(Message::Update(u));
                    }))
                });
                let dir = result.as_ref().ok().map(|o| o.record.clone());
                let _ = tx.send(Message::Done(result));
                if let Some(dir) = dir {
                    let _ = tx.send(Message::Report(make_report(&dir)));
                }
            })
            .map_err(|source| Error::Io {
                path: "session thread".into(),
                source,
            })?
    };
    let mut app = App::new(RunInfo::of(scenario), Palette::from_env());
    let mut outcome = None;
    let result = (|| -> Result<(), Error> {
        let mut guard = Guard::enter()?;
        let mut drawn = Instant::now() - REDRAW;
        let mut dirty = true;
        loop {
            while let Ok(message) = rx.try_recv() {
                dirty = true;
                let action = match message {
                    Message::Update(u) => app.update(AppEvent::Session(u)),
                    Message::Report(r) => app.update(AppEvent::Report(r)),
                    Message::Done(Err(e)) => return Err(e),
                    Message::Done(Ok(o)) => {
                        let finished = Finished {
                            verdict: Some(o.verdict),
                            slo_rate: o.slo_rate,
                            problem: o
                                .record_error
                                .as_ref()
                                .map(|e| format!("the record is incomplete: {e}")),
                        };
                        outcome = Some(o);
                        app.update(AppEvent::Finished(finished))
                    }
                };
                if action == Some(AppAction::Exit) {
                    return Ok(());
                }
            }
            if dirty || drawn.elapsed() >= REDRAW {
                guard.draw(&app)?;
                drawn = Instant::now();
                dirty = false;
            }
            if let Some(key) = next_key(POLL)? {
                dirty = true;
                match app.update(AppEvent::Key(key)) {
                    Some(AppAction::Command(c)) => {
                        let _ = commands.send(c);
                    }
                    Some(AppAction::Exit) => return Ok(()),
                    // The live report is made as soon as the session ends.
                    Some(AppAction::OpenReport | AppAction::Replay(_)) | None => {}
                }
            }
        }
    })();
    if outcome.is_none() {
        // The UI failed mid-run (the terminal went away): the session quits and saves.
        let _ = commands.send(crate::coordinator::UserCommand::Quit);
    }
    drop(commands);
    // Until the session thread ends (it holds the only senders), so that the record is
    // saved before this returns.
    for message in rx.iter() {
        if let Message::Done(Ok(o)) = message {
            outcome.get_or_insert(o);
        }
    }
    let _ = session.join();
    result?;
    outcome.ok_or_else(|| Error::Failed("the session ended without an outcome".into()))
}

/// Options of a replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The run directory.
    pub dir: PathBuf,
    /// Jump here first (and pause).
    pub until: Option<Until>,
    /// Record seconds per wall second.
    pub speed: f64,
}

/// Plays a record in the dashboard until the user leaves.
pub fn run_replay(options: &ReplayOptions) -> Result<(), Error> {
    let mut player = Player::open(&options.dir, Palette::from_env())?;
    let mut app = player.app();
    player.speed_by(options.speed);
    if let Some(until) = &options.until {
        let t = player.time_of(until).map_err(Error::Usage)?;
        player.seek(&mut app, t);
        player.toggle();
        app.update(AppEvent::Replay(player.status()));
    }
    let (tx, rx) = std_mpsc::channel();
    let mut guard = Guard::enter()?;
    let mut last = Instant::now();
    loop {
        while let Ok(r) = rx.try_recv() {
            app.update(AppEvent::Report(r));
        }
        let now = Instant::now();
        player.play(&mut app, now.duration_since(last).as_secs_f64());
        last = now;
        guard.draw(&app)?;
        let Some(key) = next_key(POLL)? else {
            continue;
        };
        match app.update(AppEvent::Key(key)) {
            Some(AppAction::Exit) => return Ok(()),
            Some(AppAction::Replay(control)) => {
                match control {
                    ReplayControl::Toggle => player.toggle(),
                    ReplayControl::Seek(s) => {
                        let to = player.at() + s;
                        player.seek(&mut app, to);
                    }
                    ReplayControl::Speed(f) => player.speed_by(f),
                }
                app.update(AppEvent::Replay(player.status()));
            }
            Some(AppAction::OpenReport) => {
                let tx = tx.clone();
                let dir = options.dir.clone();
                std::thread::spawn(move || {
                    let _ = tx.send(make_report(&dir));
                });
            }
            Some(AppAction::Command(_)) | None => {}
        }
    }
}

/// One frame of a record at `until` (default: its end), drawn at `width`×`height`: what
/// the dashboard showed then, without a terminal, as plain text, or with `svg` as a picture
/// of a colour terminal.
pub fn replay_screen(
    options: &ReplayOptions,
    width: u16,
    height: u16,
    svg: bool,
) -> Result<String, Error> {
    let mut player = Player::open(
        &options.dir,
        if svg { Palette::Color } else { Palette::Plain },
    )?;
    let mut app = player.app();
    let t = match &options.until {
        Some(until) => player.time_of(until).map_err(Error::Usage)?,
        None => player.end(),
    };
    player.seek(&mut app, t);
    Ok(if svg {
        super::svg::buffer_svg(
            &draw(&app, width, height),
            &format!("vernier replay of {}", options.dir.display()),
        )
    } else {
        screen(&app, width, height)
    })
}

/// The app drawn into a `width`×`height` buffer, as a terminal would show it.
// A test backend draws into memory: neither call can fail.
#[allow(clippy::expect_used)]
fn draw(app: &App, width: u16, height: u16) -> ratatui::buffer::Buffer {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut terminal = ratatui::Terminal::new(backend).expect("a test backend never fails");
    terminal
        .draw(|f| view::render(f, app))
        .expect("a test backend never fails");
    terminal.backend().buffer().clone()
}

/// The app drawn into a `width`×`height` buffer, as lines of text.
pub fn screen(app: &App, width: u16, height: u16) -> String {
    let buffer = draw(app, width, height);
    let mut text = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}
