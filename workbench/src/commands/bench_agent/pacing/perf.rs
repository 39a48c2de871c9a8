//! The whole process's system calls and context switches over a window, counted by
//! `perf stat` attached to it from outside: /proc has no syscall counter, and the
//! `raw_syscalls:sys_enter` tracepoint counts every call of every thread. Where perf or
//! the tracepoint is missing the row says why and goes on without them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

/// The tracepoint's directory: it exists when tracefs is mounted and the kernel has it.
const TRACEPOINT: &str = "/sys/kernel/tracing/events/raw_syscalls";
/// Where tracefs is mounted on current kernels.
const TRACEFS: &str = "/sys/kernel/tracing";
/// How long perf may take to print its counts once asked to stop.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Why there are no perf counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum PerfMissing {
    /// `perf` is not on PATH (Debian: `apt-get install linux-perf`).
    NoPerf,
    /// No `raw_syscalls` tracepoint under /sys/kernel/tracing (tracefs not mounted, or not
    /// root).
    NoTracepoint,
    /// The run ended before the window began: nothing to count.
    NoWindow,
    /// perf ran and failed, or printed nothing usable.
    Failed {
        /// What it said, or what went wrong.
        message: String,
    },
}

impl std::fmt::Display for PerfMissing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PerfMissing::NoPerf => write!(f, "perf is not on PATH"),
            PerfMissing::NoTracepoint => write!(f, "no tracepoint at {TRACEPOINT}"),
            PerfMissing::NoWindow => write!(f, "the run ended before the window"),
            PerfMissing::Failed { message } => write!(f, "perf stat failed: {message}"),
        }
    }
}

/// The `perf` that counts syscalls here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Perf {
    path: PathBuf,
}

/// Whether perf can count syscalls here. Mounts tracefs first when its mount point is
/// empty (which works as root, and fails harmlessly otherwise); call it once.
pub(super) fn available() -> Result<Perf, PerfMissing> {
    let path = vernier_fixtures::find_binary("perf").ok_or(PerfMissing::NoPerf)?;
    let empty = std::fs::read_dir(TRACEFS).is_ok_and(|mut d| d.next().is_none());
    if empty {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    if Path::new(TRACEPOINT).is_dir() {
        Ok(Perf { path })
    } else {
        Err(PerfMissing::NoTracepoint)
    }
}

/// The counts of one `perf stat` output; `None` for an event perf did not count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct CsvCounts {
    pub syscalls: Option<u64>,
    pub context_switches: Option<u64>,
}

/// Parses `perf stat -x,` output: `value,unit,event,...` lines, where the value may be
/// `<not counted>` or `<not supported>`; comments (`#`) and blank lines are skipped.
pub(super) fn parse_csv(text: &str) -> CsvCounts {
    let mut counts = CsvCounts::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(value), Some(event)) = (fields.first(), fields.get(2)) else {
            continue;
        };
        let value = value.trim().parse::<u64>().ok();
        match event.trim() {
            e if e.starts_with("raw_syscalls:sys_enter") => counts.syscalls = value,
            e if e.starts_with("context-switches") => counts.context_switches = value,
            _ => {}
        }
    }
    counts
}

/// What perf counted, over how long.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct PerfCounts {
    /// System calls entered by the process's threads.
    pub syscalls: Option<u64>,
    /// Its context switches, both kinds.
    pub context_switches: Option<u64>,
    /// The window the counts cover, s: the planned one, or up to the process's exit.
    pub window_s: f64,
}

/// A `perf stat` counting one process for a planned window.
#[derive(Debug)]
pub(super) struct PerfStat {
    child: Child,
    output: PathBuf,
    started: Instant,
    planned: Duration,
}

impl PerfStat {
    /// Attaches `perf` to `pid` for `window`, writing its counts to `output` (and what it
    /// says to `output` with `.err` added).
    pub fn start(
        perf: &Perf,
        pid: u32,
        window: Duration,
        output: &Path,
    ) -> Result<PerfStat, PerfMissing> {
        let failed = |message: String| PerfMissing::Failed { message };
        let errors = std::fs::File::create(output.with_extension("err"))
            .map_err(|e| failed(format!("{}: {e}", output.display())))?;
        let child = Command::new(&perf.path)
            .args([
                "stat",
                "-x,",
                "-e",
                "raw_syscalls:sys_enter,context-switches",
            ])
            .arg("-o")
            .arg(output)
            .args(["-p", &pid.to_string(), "--", "sleep"])
            .arg(format!("{:.3}", window.as_secs_f64()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(errors)
            .spawn()
            .map_err(|e| failed(format!("could not start perf: {e}")))?;
        Ok(PerfStat {
            child,
            output: output.to_path_buf(),
            started: Instant::now(),
            planned: window,
        })
    }

    /// Waits for perf and reads its counts. When the process it counts ended at
    /// `target_ended` perf is asked to stop (SIGINT, on which it prints what it counted),
    /// and the window is cut there.
    pub fn finish(mut self, target_ended: Option<Instant>) -> Result<PerfCounts, PerfMissing> {
        let failed = |message: String| PerfMissing::Failed { message };
        let mut window = self.planned;
        if let Some(ended) = target_ended {
            window = window.min(ended.saturating_duration_since(self.started));
            if matches!(self.child.try_wait(), Ok(None)) {
                let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
            }
        }
        let deadline = Instant::now() + self.planned + STOP_GRACE;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(None) | Err(_) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(failed("did not stop; killed".into()));
                }
            }
        };
        let text = std::fs::read_to_string(&self.output).unwrap_or_default();
        let counts = parse_csv(&text);
        if counts == CsvCounts::default() {
            let said = std::fs::read_to_string(self.output.with_extension("err"))
                .unwrap_or_default()
                .trim()
                .to_string();
            return Err(failed(format!("{status}: {said}")));
        }
        Ok(PerfCounts {
            syscalls: counts.syscalls,
            context_switches: counts.context_switches,
            window_s: window.as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_counts_are_read_from_perf_csv() {
        let text = "# started on Mon Nov 24 07:15:02 2026\n\n\
                    184532,,raw_syscalls:sys_enter,16001938431,100.00,,\n\
                    40211,,context-switches,16001941254,100.00,2.513,K/sec\n";
        assert_eq!(
            parse_csv(text),
            CsvCounts {
                syscalls: Some(184_532),
                context_switches: Some(40_211)
            }
        );
    }

    #[test]
    fn events_not_counted_or_not_supported_have_no_count() {
        let text = "<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n\
                    <not counted>,,context-switches,0,0.00,,\n";
        assert_eq!(parse_csv(text), CsvCounts::default());
        let text =
            "<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n12,,context-switches,1,100.00,,\n";
        assert_eq!(
            parse_csv(text),
            CsvCounts {
                syscalls: None,
                context_switches: Some(12)
            }
        );
    }

    #[test]
    fn lines_that_are_not_counts_are_skipped() {
        let text = "Error:\nNo permission to enable raw_syscalls:sys_enter event.\n,,\n7,,cycles,1,100.00,,\n";
        assert_eq!(parse_csv(text), CsvCounts::default());
    }
}
