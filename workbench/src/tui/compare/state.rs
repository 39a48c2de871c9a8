//! What the comparison's screen shows, and what a key asks for. [`CompareView::update`]
//! takes every [`CompareEvent`] (a block measured, the verdict, the clock, a key) and never
//! touches a terminal or the comparison: keys become [`CompareAction`]s that the caller
//! carries out.

use std::collections::VecDeque;

use super::super::app::Key;
use super::super::theme::Palette;
use crate::compare::{CompareOptions, Comparison, Design, Side};
use crate::scenario::{LoadPlan, Scenario};

/// Progress lines kept for the log (the screen shows the last few).
const LOG_LINES: usize = 200;

/// What is compared, as the header says it before the first block is measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// A's target.
    pub a: String,
    /// B's target.
    pub b: String,
    /// The load, req/s.
    pub rate: f64,
    /// The percentile compared (`p99`).
    pub percentile: String,
    /// The width asked, as the scenario gives it (`20 µs`, `5% of the value`).
    pub width: String,
    /// The most pairs of blocks.
    pub max_pairs: usize,
    /// Each block's measuring time, seconds.
    pub block_s: f64,
    /// How A and B are laid out in time.
    pub design: Design,
}

impl Setup {
    /// The setup of comparing `a` with `b` (at A's load, percentile and width, as
    /// [`compare`](crate::compare::compare) does).
    pub fn of(a: &Scenario, b: &Scenario, options: &CompareOptions) -> Setup {
        Setup {
            a: a.targets.join(","),
            b: b.targets.join(","),
            rate: match a.load {
                LoadPlan::Fixed(rate) => rate,
                _ => f64::NAN,
            },
            percentile: a.ci.percentile.to_string(),
            width: a.ci.width.to_string(),
            max_pairs: options.max_pairs,
            block_s: options.block.as_secs_f64(),
            design: options.design,
        }
    }
}

/// What the screen is fed.
#[derive(Debug, Clone)]
pub enum CompareEvent {
    /// A block was measured: the comparison so far, and its progress line.
    Block(Box<Comparison>, String),
    /// The comparison is over: its verdict and reason.
    Finished(Box<Comparison>),
    /// Seconds since the comparison started, by the wall clock.
    Tick(f64),
    /// The user pressed a key.
    Key(Key),
}

/// What a key asks the caller to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareAction {
    /// Hold the comparison between blocks.
    Hold,
    /// Let a held comparison go on.
    Release,
    /// Stop after the block under way, with the verdict on what was measured.
    Stop,
    /// Leave the screen (a comparison still going stops after its block under way).
    Exit,
}

/// The comparison's screen: what it was asked, what it has measured so far, and the
/// user's requests.
#[derive(Debug, Clone)]
pub struct CompareView {
    /// What is compared.
    pub setup: Setup,
    /// The comparison as of its last block (none before the first), final once finished.
    pub comparison: Option<Comparison>,
    /// The last progress lines, oldest first.
    pub log: VecDeque<String>,
    /// Seconds since the start (the comparison's own time once finished).
    pub elapsed_s: f64,
    /// Paused: the number of blocks measured when the pause was asked (the block under
    /// way finishes first).
    pub paused: Option<usize>,
    /// Stop asked: the block under way finishes, then the verdict comes.
    pub stopping: bool,
    /// The verdict is in.
    pub finished: bool,
    /// A word about the last key, until the next.
    pub notice: Option<String>,
    /// Whether to draw in colour.
    pub palette: Palette,
}

impl CompareView {
    /// The screen before the first block.
    pub fn new(setup: Setup, palette: Palette) -> CompareView {
        CompareView {
            setup,
            comparison: None,
            log: VecDeque::new(),
            elapsed_s: 0.0,
            paused: None,
            stopping: false,
            finished: false,
            notice: None,
            palette,
        }
    }

    /// Blocks measured so far.
    pub fn blocks(&self) -> usize {
        self.comparison.as_ref().map_or(0, |c| c.blocks.len())
    }

    /// Pairs measured so far: as many as the side with fewer blocks that stand for it has
    /// (a block measured again, or one that ended the comparison, does not).
    pub fn pairs(&self) -> usize {
        self.comparison.as_ref().map_or(0, |c| {
            let standing = |side| {
                c.blocks
                    .iter()
                    .filter(|b| b.side == side && b.problem.is_none())
                    .count()
            };
            standing(Side::A).min(standing(Side::B))
        })
    }

    /// Whether the comparison is held now: paused, and the block under way when the pause
    /// was asked has ended.
    pub fn held(&self) -> bool {
        self.paused.is_some_and(|at| self.blocks() > at)
    }

    /// Takes one event; a key may ask for an action.
    pub fn update(&mut self, event: CompareEvent) -> Option<CompareAction> {
        match event {
            CompareEvent::Block(comparison, line) => {
                self.comparison = Some(*comparison);
                self.log.push_back(line);
                if self.log.len() > LOG_LINES {
                    self.log.pop_front();
                }
                None
            }
            CompareEvent::Finished(comparison) => {
                self.elapsed_s = comparison.seconds;
                self.comparison = Some(*comparison);
                self.finished = true;
                self.paused = None;
                self.stopping = false;
                None
            }
            CompareEvent::Tick(s) => {
                if !self.finished {
                    self.elapsed_s = s;
                }
                None
            }
            CompareEvent::Key(key) => self.key(key),
        }
    }

    /// A key: before the verdict, pause, resume or stop; after it, any key leaves.
    fn key(&mut self, key: Key) -> Option<CompareAction> {
        self.notice = None;
        if self.finished || key == Key::Interrupt {
            return Some(CompareAction::Exit);
        }
        match key {
            Key::Char('q') | Key::Esc if self.stopping => {
                self.notice = Some("already stopping: the block under way finishes first".into());
                None
            }
            Key::Char('q') | Key::Esc => {
                self.stopping = true;
                self.paused = None;
                Some(CompareAction::Stop)
            }
            Key::Char('p' | ' ') if self.stopping => {
                self.notice = Some("stopping: the verdict comes after the block under way".into());
                None
            }
            Key::Char('p' | ' ') => {
                self.paused = match self.paused {
                    Some(_) => None,
                    None => Some(self.blocks()),
                };
                Some(match self.paused {
                    Some(_) => CompareAction::Hold,
                    None => CompareAction::Release,
                })
            }
            Key::Enter | Key::Char('a') => {
                self.notice = Some("no verdict yet: q stops with the verdict so far".into());
                None
            }
            _ => None,
        }
    }
}
