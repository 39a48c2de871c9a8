//! One `vernier run` child observed from outside over its steady state: /proc snapshots
//! every [`POLL`] from the end of its warm-up until it exits or the window's planned end,
//! `perf stat` attached for the same window, and the child's end, killed if it overstays.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::perf::{Perf, PerfCounts, PerfMissing, PerfStat};
use crate::procfs::{CpuWindow, Usage, read_snapshot};

/// How often the process is read: often enough to see the CPUs a thread moves between,
/// seldom enough that reading /proc costs the host nothing that matters.
const POLL: Duration = Duration::from_millis(250);
/// How often the child is checked for an exit outside the window.
const CHECK: Duration = Duration::from_millis(50);

/// The line of a run's stderr that says its load is about to start: what comes before it
/// (the start-of-run calibration, which busy-polls a ping-pong) is not the load's cost.
const READY: &str = "agents ready";

/// When to watch a child, measured from the moment it says its agents are ready ([`READY`],
/// in `stderr`): its start-of-run calibration is not part of the load's cost.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// The child's stderr, where it says it is ready.
    pub stderr: PathBuf,
    /// The window's start: the end of the run's warm-up.
    pub start: Duration,
    /// Its planned end, if the child does not exit before.
    pub end: Duration,
    /// When a child still running is killed (from its spawn).
    pub limit: Duration,
    /// The clock ticks per second of /proc's CPU times.
    pub ticks_per_s: f64,
    /// The perf that counts syscalls, or why there is none.
    pub perf: Result<Perf, PerfMissing>,
    /// Where it writes its counts.
    pub perf_output: PathBuf,
}

/// What perf said about the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Syscalls {
    Counted(PerfCounts),
    Missing(PerfMissing),
}

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It outlived [`Plan::limit`] and was killed.
    Killed,
    /// Waiting for it failed.
    Lost(String),
    /// It could not be started.
    NotStarted,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exited with code {code}"),
            Exit::Signal(signal) => write!(f, "was ended by signal {signal}"),
            Exit::Killed => write!(f, "outlived its time limit and was killed"),
            Exit::Lost(e) => write!(f, "could not be waited for: {e}"),
            Exit::NotStarted => write!(f, "did not start"),
        }
    }
}

/// What was seen of one child.
#[derive(Debug, Clone)]
pub(super) struct Observation {
    /// `None` when the child ended before a window of two snapshots.
    pub usage: Option<Usage>,
    pub syscalls: Syscalls,
    pub exit: Exit,
    /// A /proc file that could not be read as expected.
    pub error: Option<String>,
}

/// Watches `child`, spawned at `spawned`, per `plan`, and waits for its end.
pub(super) fn observe(mut child: Child, spawned: Instant, plan: &Plan) -> Observation {
    let pid = child.id();
    let mut ended: Option<Instant> = None;
    let mut note_exit = |child: &mut Child| {
        let exited = !matches!(child.try_wait(), Ok(None));
        if exited && ended.is_none() {
            ended = Some(Instant::now());
        }
        exited
    };
    // Ready when it says so; one that never does is measured from its spawn.
    let mut ready = None;
    while ready.is_none() && spawned.elapsed() < plan.limit && !note_exit(&mut child) {
        let said = std::fs::read_to_string(&plan.stderr).unwrap_or_default();
        if said.contains(READY) {
            ready = Some(Instant::now());
        } else {
            std::thread::sleep(CHECK);
        }
    }
    let ready = ready.unwrap_or(spawned);
    let (start_at, end_at) = (ready + plan.start, ready + plan.end);
    while Instant::now() < start_at && !note_exit(&mut child) {
        std::thread::sleep(CHECK.min(start_at.saturating_duration_since(Instant::now())));
    }
    let mut error = None;
    let first = if note_exit(&mut child) {
        None
    } else {
        read_snapshot(pid).unwrap_or_else(|e| {
            error = Some(e);
            None
        })
    };
    let (usage, syscalls) = match first {
        None => (None, Syscalls::Missing(PerfMissing::NoWindow)),
        Some(first) => {
            let window_start = Instant::now();
            let perf = plan.perf.clone().and_then(|perf| {
                let length = end_at.saturating_duration_since(Instant::now());
                PerfStat::start(&perf, pid, length, &plan.perf_output)
            });
            let mut window = CpuWindow::start(first);
            for tick in 1.. {
                let due = (window_start + POLL * tick).min(end_at);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                if note_exit(&mut child) {
                    break;
                }
                match read_snapshot(pid) {
                    // Kept only if the child still runs after the reading: a snapshot of a
                    // process already exiting has lost its threads.
                    Ok(Some(snapshot)) if !note_exit(&mut child) => {
                        window.observe(snapshot, window_start.elapsed());
                    }
                    Ok(_) => break,
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
                if due >= end_at {
                    break;
                }
            }
            let syscalls = match perf.and_then(|perf| perf.finish(ended)) {
                Ok(counts) => Syscalls::Counted(counts),
                Err(missing) => Syscalls::Missing(missing),
            };
            (window.usage(plan.ticks_per_s), syscalls)
        }
    };
    Observation {
        usage,
        syscalls,
        exit: wait(&mut child, spawned + plan.limit),
        error,
    }
}

/// Waits for `child` until `deadline`, then kills it (by its PID, as `Child::kill` does).
fn wait(child: &mut Child, deadline: Instant) -> Exit {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match (status.code(), status.signal()) {
                    (Some(code), _) => Exit::Code(code),
                    (None, Some(signal)) => Exit::Signal(signal),
                    (None, None) => Exit::Lost(status.to_string()),
                };
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(CHECK),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Exit::Killed;
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Exit::Lost(e.to_string());
            }
        }
    }
}
