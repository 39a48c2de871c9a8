//! `vernier compare` on a terminal: both CCDFs, the blocks over time and the CI of B − A
//! narrowing, live. The comparison runs on a thread of its own; after every block its
//! watcher sends the comparison so far to this thread, which draws it, and then looks at
//! what the user asked: paused, it holds the comparison between two blocks (nothing is
//! measured while it is held); stopped, the comparison ends with the verdict on what was
//! measured. The screen's state and keys are a pure
//! [`CompareView`] (`state`), its drawing a pure function of it (`view`, `charts`); the
//! terminal is set up and restored as the session's dashboard does (a guard, and
//! ratatui's panic hook).

mod charts;
mod state;
mod view;

use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

use super::terminal::{Guard, POLL, REDRAW, next_key};
use super::theme::Palette;
use crate::compare::{CompareOptions, Comparison, Steer, compare};
use crate::error::Error;
use crate::scenario::Scenario;

use state::{CompareAction, CompareEvent, CompareView, Setup};
use view::draw;

/// What the user asked of the comparison, which looks after every block.
#[derive(Debug, Default)]
struct Steering {
    asked: Mutex<Asked>,
    changed: Condvar,
}

/// The user's requests, as the comparison's thread reads them.
#[derive(Debug, Default, Clone, Copy)]
struct Asked {
    paused: bool,
    stop: bool,
}

impl Steering {
    fn ask(&self, change: impl FnOnce(&mut Asked)) {
        change(&mut self.asked.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.notify_all();
    }

    /// Holds the comparison between blocks.
    fn hold(&self) {
        self.ask(|a| a.paused = true);
    }

    /// Lets a held comparison go on.
    fn release(&self) {
        self.ask(|a| a.paused = false);
    }

    /// Stops the comparison at its next look (a pause no longer holds it).
    fn stop(&self) {
        self.ask(|a| a.stop = true);
    }

    /// Between blocks: waits while paused, then says whether to go on.
    fn next(&self) -> Steer {
        let asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
        let asked = self
            .changed
            .wait_while(asked, |a| a.paused && !a.stop)
            .unwrap_or_else(PoisonError::into_inner);
        if asked.stop { Steer::Stop } else { Steer::Go }
    }
}

/// Stops the comparison when dropped: whichever way the screen is left (a key, an error,
/// a panic), the comparison's thread is not left held, and the scope can join it.
struct StopOnDrop<'s>(&'s Steering);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// What the comparison's thread tells the screen.
#[allow(clippy::large_enum_variant)] // One per block, to one reader.
enum Message {
    Block(Box<Comparison>, String),
    Done(Result<Comparison, Error>),
}

/// Compares `a` and `b` (as [`compare`] does) with the live screen; returns the
/// comparison once the user leaves it. A user who leaves before the verdict stops the
/// comparison: it ends after the block under way, with the verdict on what was measured.
pub fn watch(a: &Scenario, b: &Scenario, options: &CompareOptions) -> Result<Comparison, Error> {
    let steering = Steering::default();
    let (tx, rx) = mpsc::channel();
    let mut view = CompareView::new(Setup::of(a, b, options), Palette::from_env());
    std::thread::scope(|scope| {
        let steering = &steering;
        let worker = std::thread::Builder::new()
            .name("vernier-compare".into())
            .spawn_scoped(scope, move || {
                let result = compare(a, b, options, |c, line| {
                    let _ = tx.send(Message::Block(Box::new(c.clone()), line.to_string()));
                    steering.next()
                });
                let _ = tx.send(Message::Done(result));
            })
            .map_err(|source| Error::Io {
                path: "comparison thread".into(),
                source,
            })?;
        let shown = {
            let _stop = StopOnDrop(steering);
            show(&mut view, &rx, steering)
        };
        let outcome = match shown {
            Ok(Some(comparison)) => Ok(comparison),
            Ok(None) => {
                // Left before the verdict: it comes after the block under way.
                eprintln!("vernier: stopping after the block under way...");
                rx.iter()
                    .find_map(|m| match m {
                        Message::Done(result) => Some(result),
                        Message::Block(..) => None,
                    })
                    .unwrap_or_else(|| Err(ended_without_verdict()))
            }
            Err(e) => Err(e),
        };
        worker
            .join()
            .map_err(|_| Error::Failed("the comparison's thread panicked".into()))?;
        outcome
    })
}

/// The comparison's thread ended without sending its result: it panicked.
fn ended_without_verdict() -> Error {
    Error::Failed("the comparison ended without a verdict".into())
}

/// The screen, until the user leaves it: the comparison if its verdict came first, none
/// if the user left before it.
fn show(
    view: &mut CompareView,
    rx: &Receiver<Message>,
    steering: &Steering,
) -> Result<Option<Comparison>, Error> {
    let mut guard = Guard::enter()?;
    let started = Instant::now();
    let mut outcome = None;
    let mut drawn = Instant::now() - REDRAW;
    let mut dirty = true;
    loop {
        loop {
            match rx.try_recv() {
                Ok(Message::Block(c, line)) => {
                    view.update(CompareEvent::Block(c, line));
                }
                Ok(Message::Done(Ok(c))) => {
                    view.update(CompareEvent::Finished(Box::new(c.clone())));
                    outcome = Some(c);
                }
                Ok(Message::Done(Err(e))) => return Err(e),
                Err(TryRecvError::Empty) => break,
                // The thread ended without a word: it panicked.
                Err(TryRecvError::Disconnected) if outcome.is_none() => {
                    return Err(ended_without_verdict());
                }
                Err(TryRecvError::Disconnected) => break,
            }
            dirty = true;
        }
        view.update(CompareEvent::Tick(started.elapsed().as_secs_f64()));
        if dirty || drawn.elapsed() >= REDRAW {
            guard.draw_with(|f| draw(f, view))?;
            drawn = Instant::now();
            dirty = false;
        }
        let Some(key) = next_key(POLL)? else {
            continue;
        };
        dirty = true;
        match view.update(CompareEvent::Key(key)) {
            Some(CompareAction::Hold) => steering.hold(),
            Some(CompareAction::Release) => steering.release(),
            Some(CompareAction::Stop) => steering.stop(),
            Some(CompareAction::Exit) => return Ok(outcome),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests;
