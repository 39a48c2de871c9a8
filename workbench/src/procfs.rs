//! What a process and each of its threads used, read from /proc, so that every thread
//! counts (the coordinator's, the runtime's, the probes', not only the worker's that
//! measures itself), and compared between snapshots of a window: where each thread ran,
//! its CPU and its wake-ups. `vernier bench-agent --pacing` reads a run from outside; a run
//! reads itself, to say where its threads ran.
//!
//! The parsers and the delta are pure; only [`read_snapshot`] touches /proc.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

/// The clock ticks per second /proc counts CPU time in. Linux fixes it at 100 (USER_HZ)
/// for user space on every architecture; sysconf is asked all the same.
pub fn clock_ticks_per_s() -> f64 {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(ticks)) if ticks > 0 => ticks as f64,
        _ => 100.0,
    }
}

/// The fields of one `/proc/PID/stat` or `/proc/PID/task/TID/stat` line read here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The command name (`comm`): a thread's name, which may hold spaces and parentheses.
    pub comm: String,
    /// User plus system time (fields 14 and 15), clock ticks.
    pub ticks: u64,
    /// The CPU it last ran on (field 39).
    pub processor: u32,
}

/// The context switches of one thread, from `/proc/PID/task/TID/status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Switches {
    /// Switches away while it waited (a sleep, a read with nothing to read): each one a
    /// wake-up to come.
    pub voluntary: u64,
    /// Switches away while it could have run: preemptions.
    pub involuntary: u64,
}

/// Why a line of /proc did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// A stat line without `(comm)`.
    #[error("no command name in parentheses")]
    NoComm,
    /// A stat line that ends before the field.
    #[error("field {field} is missing")]
    Missing {
        /// The field's 1-based number, as proc(5) numbers them.
        field: usize,
    },
    /// A field that should be a number and is not.
    #[error("field {field} is not a number: {value:?}")]
    NotANumber {
        /// As above.
        field: usize,
        /// The text found.
        value: String,
    },
    /// A status file without one of its context-switch lines.
    #[error("no {0} line")]
    NoSwitches(&'static str),
}

/// Parses a stat line. The command name is everything between the first `(` and the last
/// `)`, since a thread may name itself `a) b`; the fields after it are numbered as in
/// proc(5), the state being field 3.
pub fn parse_stat(line: &str) -> Result<Stat, ParseError> {
    let open = line.find('(').ok_or(ParseError::NoComm)?;
    let close = line
        .rfind(')')
        .filter(|&close| close > open)
        .ok_or(ParseError::NoComm)?;
    let fields: Vec<&str> = line[close + 1..].split_whitespace().collect();
    let field = |number: usize| -> Result<u64, ParseError> {
        let value = fields
            .get(number - 3)
            .ok_or(ParseError::Missing { field: number })?;
        value.parse().map_err(|_| ParseError::NotANumber {
            field: number,
            value: (*value).to_string(),
        })
    };
    let processor = field(39)?;
    Ok(Stat {
        comm: line[open + 1..close].to_string(),
        ticks: field(14)? + field(15)?,
        processor: u32::try_from(processor).map_err(|_| ParseError::NotANumber {
            field: 39,
            value: processor.to_string(),
        })?,
    })
}

/// Parses the context-switch lines of a status file.
pub fn parse_switches(status: &str) -> Result<Switches, ParseError> {
    let count = |name: &'static str| -> Result<u64, ParseError> {
        let line = status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .ok_or(ParseError::NoSwitches(name))?;
        line.trim()
            .parse()
            .map_err(|_| ParseError::NoSwitches(name))
    };
    Ok(Switches {
        voluntary: count("voluntary_ctxt_switches")?,
        involuntary: count("nonvoluntary_ctxt_switches")?,
    })
}

/// One thread at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStat {
    /// Its stat line's fields.
    pub stat: Stat,
    /// Its context switches.
    pub switches: Switches,
}

/// A process at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The whole process's user plus system time, ticks: its threads', living and exited.
    pub process_ticks: u64,
    /// Its living threads, by TID.
    pub threads: BTreeMap<u32, ThreadStat>,
}

/// Reads `pid`'s snapshot; `None` once the process is gone. A thread that ends between
/// the listing and the reading of its files is left out: it is not there any more.
pub fn read_snapshot(pid: u32) -> Result<Option<Snapshot>, String> {
    let dir = Path::new("/proc").join(pid.to_string());
    let read = |path: &Path| std::fs::read_to_string(path);
    let Ok(process) = read(&dir.join("stat")) else {
        return Ok(None);
    };
    let bad = |path: &Path, e: ParseError| format!("{}: {e}", path.display());
    let process = parse_stat(process.trim_end()).map_err(|e| bad(&dir.join("stat"), e))?;
    let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
        return Ok(None);
    };
    let mut threads = BTreeMap::new();
    for task in tasks.filter_map(Result::ok) {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let (stat_path, status_path) = (task.path().join("stat"), task.path().join("status"));
        let (Ok(stat), Ok(status)) = (read(&stat_path), read(&status_path)) else {
            continue;
        };
        let stat = parse_stat(stat.trim_end()).map_err(|e| bad(&stat_path, e))?;
        let switches = parse_switches(&status).map_err(|e| bad(&status_path, e))?;
        threads.insert(tid, ThreadStat { stat, switches });
    }
    Ok(Some(Snapshot {
        process_ticks: process.ticks,
        threads,
    }))
}

/// The snapshots of one window: the first, the latest, and every CPU each thread was seen
/// on at any snapshot between (a thread's stat names only the CPU it last ran on).
#[derive(Debug, Clone)]
pub struct CpuWindow {
    first: Snapshot,
    last: Snapshot,
    /// From the first snapshot to the last.
    elapsed: Duration,
    seen_on: BTreeMap<u32, BTreeSet<u32>>,
}

impl CpuWindow {
    /// A window that starts with `first`.
    pub fn start(first: Snapshot) -> CpuWindow {
        let mut window = CpuWindow {
            last: first.clone(),
            first,
            elapsed: Duration::ZERO,
            seen_on: BTreeMap::new(),
        };
        window.note_cpus();
        window
    }

    /// Takes `snapshot`, made `since_start` after the first, as the latest.
    pub fn observe(&mut self, snapshot: Snapshot, since_start: Duration) {
        self.last = snapshot;
        self.elapsed = since_start;
        self.note_cpus();
    }

    fn note_cpus(&mut self) {
        for (tid, thread) in &self.last.threads {
            self.seen_on
                .entry(*tid)
                .or_default()
                .insert(thread.stat.processor);
        }
    }

    /// What the process used between the first snapshot and the last, with `ticks_per_s`
    /// clock ticks a second; `None` before a second snapshot.
    pub fn usage(&self, ticks_per_s: f64) -> Option<Usage> {
        let seconds = self.elapsed.as_secs_f64();
        (seconds > 0.0).then(|| usage(self, seconds, ticks_per_s))
    }
}

/// The threads that share a name, over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadUsage {
    /// Their name (`comm`).
    pub name: String,
    /// How many threads of that name were alive at the window's end.
    pub threads: usize,
    /// CPU time, ms per second of the window.
    pub cpu_ms_per_s: f64,
    /// Voluntary context switches per second: wake-ups, as a thread that sleeps switches
    /// away voluntarily and is woken to run again.
    pub voluntary_per_s: f64,
    /// Involuntary context switches per second: preemptions.
    pub involuntary_per_s: f64,
    /// The CPUs they were seen on at any snapshot.
    pub cpus: BTreeSet<u32>,
}

/// What a process used over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    /// The window, s.
    pub window_s: f64,
    /// The whole process's CPU time over it, s (exited threads included).
    pub process_cpu_s: f64,
    /// Voluntary context switches of the threads alive at the window's end, over it.
    pub voluntary: u64,
    /// Involuntary ones, likewise.
    pub involuntary: u64,
    /// By thread name, the busiest first.
    pub threads: Vec<ThreadUsage>,
}

/// The delta from `w.first` to `w.last`. A thread born in the window counts from zero; one
/// that ended in it is missing from the per-thread figures (the process's CPU time still
/// holds it). Counters that went backwards (a TID reused) count as zero.
fn usage(w: &CpuWindow, seconds: f64, ticks_per_s: f64) -> Usage {
    let mut by_name: BTreeMap<&str, ThreadUsage> = BTreeMap::new();
    let (mut voluntary, mut involuntary) = (0, 0);
    for (tid, now) in &w.last.threads {
        let before = w.first.threads.get(tid);
        let ticks = now
            .stat
            .ticks
            .saturating_sub(before.map_or(0, |b| b.stat.ticks));
        let switches = before.map_or_else(Switches::default, |b| b.switches);
        let vol = now.switches.voluntary.saturating_sub(switches.voluntary);
        let invol = now
            .switches
            .involuntary
            .saturating_sub(switches.involuntary);
        voluntary += vol;
        involuntary += invol;
        let entry = by_name
            .entry(&now.stat.comm)
            .or_insert_with(|| ThreadUsage {
                name: now.stat.comm.clone(),
                threads: 0,
                cpu_ms_per_s: 0.0,
                voluntary_per_s: 0.0,
                involuntary_per_s: 0.0,
                cpus: BTreeSet::new(),
            });
        entry.threads += 1;
        entry.cpu_ms_per_s += ticks as f64 / ticks_per_s * 1e3 / seconds;
        entry.voluntary_per_s += vol as f64 / seconds;
        entry.involuntary_per_s += invol as f64 / seconds;
        if let Some(cpus) = w.seen_on.get(tid) {
            entry.cpus.extend(cpus);
        }
    }
    let mut threads: Vec<ThreadUsage> = by_name.into_values().collect();
    threads.sort_by(|a, b| b.cpu_ms_per_s.total_cmp(&a.cpu_ms_per_s));
    Usage {
        window_s: seconds,
        process_cpu_s: w.last.process_ticks.saturating_sub(w.first.process_ticks) as f64
            / ticks_per_s,
        voluntary,
        involuntary,
        threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line as the kernel writes it: `pid (comm) state` then fields 4 to 52, with
    /// utime, stime and the processor set.
    fn stat_line(pid: u32, comm: &str, utime: u64, stime: u64, processor: u32) -> String {
        let mut fields: Vec<String> = (4..=52).map(|n| (n * 10).to_string()).collect();
        fields[14 - 4] = utime.to_string();
        fields[15 - 4] = stime.to_string();
        fields[39 - 4] = processor.to_string();
        format!("{pid} ({comm}) S {}", fields.join(" "))
    }

    fn thread(comm: &str, ticks: u64, processor: u32, voluntary: u64) -> ThreadStat {
        ThreadStat {
            stat: Stat {
                comm: comm.into(),
                ticks,
                processor,
            },
            switches: Switches {
                voluntary,
                involuntary: voluntary / 10,
            },
        }
    }

    #[test]
    fn a_stat_line_gives_its_comm_cpu_time_and_processor() {
        let line = stat_line(1234, "tokio-runtime-w", 150, 25, 1);
        let stat = parse_stat(&line).unwrap();
        assert_eq!(
            stat,
            Stat {
                comm: "tokio-runtime-w".into(),
                ticks: 175,
                processor: 1
            }
        );
    }

    #[test]
    fn a_comm_with_spaces_and_parentheses_ends_at_the_last_parenthesis() {
        let stat = parse_stat(&stat_line(1, "a) b", 7, 3, 0)).unwrap();
        assert_eq!(
            (stat.comm.as_str(), stat.ticks, stat.processor),
            ("a) b", 10, 0)
        );
        let stat = parse_stat(&stat_line(9, "x (y) z", 1, 1, 3)).unwrap();
        assert_eq!((stat.comm.as_str(), stat.processor), ("x (y) z", 3));
    }

    #[test]
    fn a_short_or_garbled_stat_line_is_an_error_not_a_panic() {
        assert_eq!(parse_stat("1234 tokio S 1 2"), Err(ParseError::NoComm));
        assert_eq!(parse_stat(") (1 S"), Err(ParseError::NoComm));
        assert_eq!(
            parse_stat("1 (a) S 1 2 3"),
            Err(ParseError::Missing { field: 39 })
        );
        let line = stat_line(1, "a", 777_777, 1, 0).replacen("777777", "x", 1);
        assert_eq!(
            parse_stat(&line),
            Err(ParseError::NotANumber {
                field: 14,
                value: "x".into()
            })
        );
        assert_eq!(parse_stat(""), Err(ParseError::NoComm));
    }

    #[test]
    fn a_status_file_gives_both_kinds_of_context_switch() {
        let status = "Name:\tvernier\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t1520\nnonvoluntary_ctxt_switches:\t33\n";
        assert_eq!(
            parse_switches(status),
            Ok(Switches {
                voluntary: 1520,
                involuntary: 33
            })
        );
        assert_eq!(
            parse_switches("voluntary_ctxt_switches:\t1\n"),
            Err(ParseError::NoSwitches("nonvoluntary_ctxt_switches"))
        );
    }

    #[test]
    fn the_delta_sums_threads_of_a_name_and_counts_new_threads_from_zero() {
        let first = Snapshot {
            process_ticks: 1000,
            threads: BTreeMap::from([
                (10, thread("vernier", 500, 0, 100)),
                (11, thread("worker 0", 300, 1, 2000)),
                (12, thread("tokio-runtime-w", 50, 0, 400)),
                (13, thread("tokio-runtime-w", 50, 0, 600)),
            ]),
        };
        let mut window = CpuWindow::start(first.clone());
        assert_eq!(window.usage(100.0), None, "one snapshot is no window");
        let mut middle = first.clone();
        middle.threads.insert(11, thread("worker 0", 350, 0, 3000));
        window.observe(middle, Duration::from_secs(1));
        let mut last = first.clone();
        last.process_ticks = 1300;
        last.threads.insert(11, thread("worker 0", 400, 1, 4000));
        last.threads
            .insert(12, thread("tokio-runtime-w", 60, 1, 500));
        last.threads
            .insert(13, thread("tokio-runtime-w", 70, 0, 700));
        // Born in the window; thread 10 ended in it.
        last.threads.remove(&10);
        last.threads.insert(14, thread("probe", 20, 0, 200));
        window.observe(last, Duration::from_secs(2));
        let usage = window.usage(100.0).unwrap();
        assert_eq!(usage.window_s, 2.0);
        assert!((usage.process_cpu_s - 3.0).abs() < 1e-9);
        assert_eq!(usage.voluntary, 2000 + 100 + 100 + 200);
        assert_eq!(usage.involuntary, 200 + 10 + 10 + 20);
        let names: Vec<&str> = usage.threads.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["worker 0", "tokio-runtime-w", "probe"]);
        let worker = &usage.threads[0];
        assert_eq!(worker.threads, 1);
        assert!((worker.cpu_ms_per_s - 500.0).abs() < 1e-9);
        assert!((worker.voluntary_per_s - 1000.0).abs() < 1e-9);
        assert_eq!(worker.cpus, BTreeSet::from([0, 1]));
        let runtime = &usage.threads[1];
        assert_eq!(runtime.threads, 2);
        assert!((runtime.cpu_ms_per_s - 150.0).abs() < 1e-9);
        assert!((runtime.voluntary_per_s - 100.0).abs() < 1e-9);
        assert_eq!(runtime.cpus, BTreeSet::from([0, 1]));
        assert!((usage.threads[2].cpu_ms_per_s - 100.0).abs() < 1e-9);
    }

    #[test]
    fn counters_that_go_backwards_count_as_zero() {
        let first = Snapshot {
            process_ticks: 50,
            threads: BTreeMap::from([(7, thread("a", 90, 0, 90))]),
        };
        let mut window = CpuWindow::start(first);
        window.observe(
            Snapshot {
                process_ticks: 40,
                threads: BTreeMap::from([(7, thread("b", 10, 0, 10))]),
            },
            Duration::from_millis(500),
        );
        let usage = window.usage(100.0).unwrap();
        assert_eq!((usage.process_cpu_s, usage.voluntary), (0.0, 0));
        assert_eq!(usage.threads[0].cpu_ms_per_s, 0.0);
    }

    #[test]
    fn this_process_can_be_read() {
        let snapshot = read_snapshot(std::process::id()).unwrap().unwrap();
        assert!(!snapshot.threads.is_empty());
        assert_eq!(read_snapshot(u32::MAX).unwrap(), None);
    }
}
