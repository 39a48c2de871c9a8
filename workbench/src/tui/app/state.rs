//! The dashboard's state: [`App`], grouped by idea: the live figures of the point being
//! measured ([`Live`]), what the run has produced so far ([`History`]), the overlays and
//! the input being typed ([`Ui`]), and where a replay stands. Views read it; only
//! `App::update` (in `steps` and `keys`) changes it.

use std::collections::VecDeque;
use std::path::PathBuf;

use vernier_agent::sys::TimestampMode;
use vernier_stats::Percentile;

use super::super::theme::Palette;
use super::event::{Finished, ReplayStatus, ReportView};
use super::info::{RunInfo, Step};
use crate::coordinator::{AgentProgress, Check, CheckKind, CheckOutcome, CheckRole, Phase};
use crate::record::ShownPoint;

/// One agent's row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentRow {
    /// The latest live figures.
    pub progress: Option<AgentProgress>,
    /// The last inter-arrival test.
    pub(crate) interarrival: Option<InterarrivalMark>,
}

/// An agent's last inter-arrival test, as its row shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InterarrivalMark {
    /// A² (or the CV, for fixed gaps).
    pub(crate) statistic: Option<f64>,
    /// Its p-value.
    pub(crate) pvalue: Option<f64>,
    /// Passed, failed, or failed and only reported.
    pub(crate) outcome: CheckOutcome,
}

/// The dashboard's state.
#[derive(Debug, Clone, Default)]
pub struct App {
    /// The run.
    pub(crate) info: RunInfo,
    /// Draw with colour or not (`NO_COLOR`).
    pub(crate) palette: Palette,
    /// The run directory, once known.
    pub(crate) record: Option<PathBuf>,
    /// The timestamp source.
    pub(crate) timestamps: Option<TimestampMode>,
    /// The figures of the point being measured.
    pub(crate) live: Live,
    /// What the run has produced so far.
    pub(crate) history: History,
    /// The overlays shown and the input being typed.
    pub(crate) ui: Ui,
    /// Set when replaying a record: steering is off, the player's keys are on.
    pub(crate) replay: Option<ReplayStatus>,
}

/// The live figures: where the methodology is in the current point, and what the
/// agents and the coordinator last said about it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Live {
    /// The coordinator's current phase.
    pub(crate) phase: Option<Phase>,
    /// Where the methodology is.
    pub(crate) step: Option<Step>,
    /// Each step's outcome in the current point (passed, failed, not yet).
    pub(crate) marks: [Option<bool>; Step::ALL.len()],
    /// The current load point.
    pub(crate) point: usize,
    /// The current target rate, req/s.
    pub(crate) rate: f64,
    /// Seconds of the current point, pauses excluded, and its limit.
    pub(crate) elapsed_s: f64,
    /// The point's time limit, seconds.
    pub(crate) max_duration_s: f64,
    /// Per agent.
    pub(crate) agents: Vec<AgentRow>,
    /// The latest combined figures.
    pub(crate) samples: usize,
    /// Samples per agent the round waits for.
    pub(crate) samples_wanted: usize,
    /// The sampling rate.
    pub(crate) sampling_rate: f64,
    /// The CI width at the last check, µs.
    pub(crate) ci_width_us: Option<f64>,
    /// The target width, µs (unknown while a relative target has no estimate yet).
    pub(crate) ci_target_us: Option<f64>,
    /// The percentile the CI is on.
    pub(crate) ci_percentile: Percentile,
    /// Seconds until the round has its samples.
    pub(crate) eta_s: Option<f64>,
    /// The live latency CCDF of the current round: (µs, share above).
    pub(crate) ccdf: Vec<(f64, f64)>,
    /// The host's stalls while the current round measures, per probe.
    pub(crate) host: Vec<vernier_agent::StallReport>,
    /// Achieved req/s over all agents, two readings a second.
    pub(crate) throughput: VecDeque<u64>,
    /// The load is paused.
    pub(crate) paused: bool,
}

/// What the run has produced so far: its results, its log, its end and its report.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    /// Finished points.
    pub(crate) results: Vec<ShownPoint>,
    /// The finished runs of the replicated point going on.
    pub(crate) runs: Vec<ShownPoint>,
    /// The coordinator's decisions, newest last.
    pub(crate) log: VecDeque<LogLine>,
    /// The run is over.
    pub(crate) finished: Option<Finished>,
    /// The run's report, once made.
    pub(crate) report: Option<Result<ReportView, String>>,
}

/// One line of the decision log: when, and what. What it says is kept as data; the log's
/// view writes the sentence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogLine {
    /// The coordinator's clock, seconds (0 before it starts).
    pub(crate) at: f64,
    /// What happened.
    pub(crate) entry: Entry,
}

/// What a log line is about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// Something the session or the methodology said in words (a phase, a verdict, a run).
    Note(String),
    /// A command the user (or Ctrl-C) gave, as the coordinator echoed it.
    Command(String),
    /// A check's outcome.
    Check(CheckLine),
}

/// A check's outcome as the log shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckLine {
    /// Which check.
    pub(crate) check: CheckKind,
    /// The agent tested, or `None` for all together.
    pub(crate) agent: Option<usize>,
    /// Whether it passed.
    pub(crate) pass: bool,
    /// Whether a failure holds the point back or is only reported.
    pub(crate) role: CheckRole,
    /// What the methodology does next; empty when the check decides nothing.
    pub(crate) decision: String,
    /// What was found.
    pub(crate) detail: String,
}

impl CheckLine {
    /// Its outcome at a glance (the coordinator's rule, as the records write it).
    pub(crate) fn outcome(&self) -> CheckOutcome {
        Check::outcome_of(self.pass, self.role)
    }
}

/// What the user's keys have opened, typed or asked: the mode the screen is in, and the
/// settings that hold in every mode.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ui {
    /// What is over the dashboard, and so what the next key means.
    pub(crate) mode: Mode,
    /// The chart shown in a narrow terminal.
    pub(crate) chart: NarrowChart,
    /// A one-line message for the footer (a bad key, a refused command).
    pub(crate) notice: Option<String>,
    /// How much `+`/`-` change the load, as a share of it.
    pub(crate) step_share: f64,
    /// Whether the points panel shows every request's tail rather than the one answered
    /// for (`e` switches).
    pub(crate) every_request: bool,
}

/// The screen's mode: one at a time, so an overlay, a prompt and a quit in progress cannot
/// be half on together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The dashboard alone: keys steer the session (or play the replay).
    #[default]
    Dashboard,
    /// The help overlay is open.
    Help,
    /// The latency budgets' overlay is open.
    Budget,
    /// The run's report is shown over the dashboard: only `Esc`, `r` and `q` (which close
    /// it) mean anything.
    Report,
    /// A load being typed after `l`.
    Typing(String),
    /// `q` was pressed once: the next `q` (or `y`) quits, any other key stays.
    ConfirmQuit,
    /// The user quit: leave as soon as the session has saved the record.
    Quitting,
}

/// The chart a narrow terminal shows (a wide one shows both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum NarrowChart {
    /// The live latency CCDF.
    #[default]
    Ccdf,
    /// Latency against load, point by point.
    Load,
}

impl NarrowChart {
    /// The other chart (`g`).
    pub(crate) fn other(self) -> NarrowChart {
        match self {
            NarrowChart::Ccdf => NarrowChart::Load,
            NarrowChart::Load => NarrowChart::Ccdf,
        }
    }
}

/// How much `+`/`-` change the load at first, as a share of it.
const STEP_SHARE: f64 = 0.1;

impl App {
    /// An app for a live run of `info`.
    pub fn new(info: RunInfo, palette: Palette) -> App {
        App {
            info,
            palette,
            live: Live {
                ci_percentile: Percentile::P99,
                ..Live::default()
            },
            ui: Ui {
                step_share: STEP_SHARE,
                every_request: false,
                ..Ui::default()
            },
            ..App::default()
        }
    }

    /// An app replaying a record (no steering).
    pub fn replaying(info: RunInfo, palette: Palette, record: PathBuf) -> App {
        App {
            record: Some(record),
            replay: Some(ReplayStatus {
                at: 0.0,
                end: 0.0,
                speed: 1.0,
                playing: true,
            }),
            ..App::new(info, palette)
        }
    }
}
