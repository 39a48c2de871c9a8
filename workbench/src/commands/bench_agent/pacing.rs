//! `vernier bench-agent --pacing`: what the whole client process costs, and how precisely
//! it sends, measured from outside as a user runs it. Each row is one `vernier run` child
//! against memcached at one rate in one poll mode; its CPU time, its threads' wake-ups
//! and context switches (/proc), its syscalls (`perf stat`) are read over its steady
//! state, and its samples say how close to schedule its requests left. Binaries are the
//! innermost loop, so an old and a new build run side by side, adjacent in time.

mod observe;
mod outcome;
mod perf;
mod row;
mod table;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use vernier_fixtures::{ExternalServer, find_binary};

use crate::error::Error;
use observe::{Exit, Observation, Plan, Syscalls, observe};
use perf::PerfMissing;
use row::{Median, PerRequest, Row, medians, per_request};
use table::{header, line, median_line};

/// How long after the planned window the child may run on before it is killed: the
/// methodology's last round and the record's writing.
const GRACE: Duration = Duration::from_secs(60);
/// The window ends this long before the run's `--duration`, so that it holds only steady
/// state, not the run's end.
const BEFORE_END: Duration = Duration::from_secs(1);
/// The shortest window worth measuring: two snapshots of /proc at least.
const MIN_WINDOW: Duration = Duration::from_millis(500);

/// What the benchmark runs, from `vernier bench-agent`'s options.
#[derive(Debug, Clone)]
pub(super) struct Options {
    /// The vernier executables, each run at every rate and mode.
    pub binaries: Vec<PathBuf>,
    /// Poll modes, passed through as `--set poll=MODE` (a mode a binary refuses is a row
    /// with an error).
    pub modes: Vec<String>,
    pub rates: Vec<f64>,
    /// Each run's `--duration`.
    pub duration: Duration,
    /// How long after the run says its agents are ready the window starts.
    pub warmup_skip: Duration,
    pub repeat: usize,
    /// A memcached to use; else one is started on `server_cpu`.
    pub memcached: Option<SocketAddr>,
    pub agent_cpu: usize,
    pub server_cpu: usize,
    /// Passed to each run when given.
    pub connections: Option<usize>,
    pub width: Option<String>,
}

/// The benchmark's answer, printed as JSON.
#[derive(Debug, Serialize)]
pub(super) struct PacingBench {
    memcached: String,
    /// The core of the memcached this command started; `None` for `--memcached`'s.
    memcached_started_on_cpu: Option<usize>,
    agent_cpu: usize,
    run_duration_s: f64,
    warmup_skip_s: f64,
    /// The clock ticks per second of /proc's CPU times.
    clock_ticks_per_s: f64,
    rows: Vec<Row>,
    medians: Vec<Median>,
}

/// The error of a step of `--pacing`, naming it.
fn failed(what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Failed(format!("bench-agent --pacing: {what}: {e}"))
}

/// Runs every row and prints each on stderr as it completes, then the medians.
pub(super) fn run(options: &Options) -> Result<PacingBench, Error> {
    if options.duration < options.warmup_skip + BEFORE_END + MIN_WINDOW {
        return Err(Error::Usage(format!(
            "bench-agent --pacing: --run-duration {:?} leaves less than {MIN_WINDOW:?} to measure after --warmup-skip {:?} and before the last {BEFORE_END:?}",
            options.duration, options.warmup_skip
        )));
    }
    let scratch = Scratch::create()?;
    let (memcached, _server) = match options.memcached {
        Some(addr) => (addr, None),
        None => {
            let server = start_memcached(options.server_cpu)?;
            (server.addr(), Some(server))
        }
    };
    let perf = perf::available();
    if let Err(missing) = &perf {
        eprintln!("pacing: no syscall counts: {missing}");
    }
    let ticks_per_s = crate::procfs::clock_ticks_per_s();
    let mut rows = Vec::new();
    eprintln!("{}", header());
    for repeat in 1..=options.repeat {
        for &rate in &options.rates {
            for mode in &options.modes {
                for binary in &options.binaries {
                    let n = rows.len() + 1;
                    let plan = Plan {
                        stderr: scratch.0.join(format!("run-{n}.stderr")),
                        start: options.warmup_skip,
                        end: options.duration - BEFORE_END,
                        limit: options.duration + GRACE,
                        ticks_per_s,
                        perf: perf.clone(),
                        perf_output: scratch.0.join(format!("perf-{n}.csv")),
                    };
                    let case = Case {
                        repeat,
                        binary,
                        mode,
                        rate,
                        memcached,
                    };
                    let row = measure(options, &case, &plan, &scratch.0.join(format!("run-{n}")));
                    eprintln!("{}", line(&row));
                    rows.push(row);
                }
            }
        }
    }
    let medians = medians(&rows);
    for m in &medians {
        eprintln!("{}", median_line(m));
    }
    Ok(PacingBench {
        memcached: memcached.to_string(),
        memcached_started_on_cpu: options.memcached.is_none().then_some(options.server_cpu),
        agent_cpu: options.agent_cpu,
        run_duration_s: options.duration.as_secs_f64(),
        warmup_skip_s: options.warmup_skip.as_secs_f64(),
        clock_ticks_per_s: ticks_per_s,
        rows,
        medians,
    })
}

/// One row's place in the loops.
#[derive(Debug, Clone, Copy)]
struct Case<'a> {
    repeat: usize,
    binary: &'a Path,
    mode: &'a str,
    rate: f64,
    memcached: SocketAddr,
}

/// Runs one child and measures it; a failure is the row's error, never the benchmark's.
fn measure(options: &Options, case: &Case<'_>, plan: &Plan, record: &Path) -> Row {
    let mut row = Row {
        repeat: case.repeat,
        binary: case.binary.display().to_string(),
        mode: case.mode.to_string(),
        rate: case.rate,
        exit: Exit::NotStarted,
        error: None,
        answer: None,
        per_request: PerRequest::default(),
        usage: None,
        syscalls: Syscalls::Missing(PerfMissing::NoWindow),
        precision: None,
    };
    let (stdout, stderr) = (
        record.with_extension("stdout"),
        record.with_extension("stderr"),
    );
    let spawned = Instant::now();
    let child = match spawn(options, case, record, (&stdout, &stderr)) {
        Ok(child) => child,
        Err(e) => {
            row.error = Some(e);
            return row;
        }
    };
    let Observation {
        usage,
        syscalls,
        exit,
        error,
    } = observe(child, spawned, plan);
    let said = std::fs::read_to_string(&stderr).unwrap_or_default();
    let last_said = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let answer = std::fs::read_to_string(&stdout)
        .map_err(|e| format!("{}: {e}", stdout.display()))
        .and_then(|text| outcome::parse_answer(&text));
    let mut errors: Vec<String> = error.into_iter().collect();
    if !matches!(exit, Exit::Code(0 | 3)) {
        errors.push(format!("the run {exit}: {last_said}"));
    }
    match answer {
        Ok(answer) => row.answer = Some(answer),
        Err(e) if errors.is_empty() => errors.push(e),
        Err(_) => {}
    }
    if row.answer.is_some() {
        match outcome::read_samples(record) {
            Ok((lags, latencies)) => row.precision = outcome::send_precision(&lags, &latencies),
            Err(e) => errors.push(e.to_string()),
        }
    }
    // Read: the samples of a long sweep would fill the disk.
    let _ = std::fs::remove_dir_all(record);
    row.per_request = per_request(row.answer.as_ref(), usage.as_ref(), &syscalls);
    row.error = (!errors.is_empty()).then(|| errors.join("; "));
    Row {
        exit,
        usage,
        syscalls,
        ..row
    }
}

/// Starts `BIN run memcached://ADDR ...` with its output in `outputs` (stdout, stderr).
fn spawn(
    options: &Options,
    case: &Case<'_>,
    record: &Path,
    outputs: (&Path, &Path),
) -> Result<std::process::Child, String> {
    let file =
        |path: &Path| std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()));
    let mut command = Command::new(case.binary);
    command
        .arg("run")
        .arg(format!("memcached://{}", case.memcached))
        .args(["--load", &case.rate.to_string()])
        .args(["--cpus", &options.agent_cpu.to_string()])
        .args(["--duration", &format!("{}ms", options.duration.as_millis())])
        .args(["--headless", "--output", "json", "--record"])
        .arg(record)
        .args(["--set", &format!("poll={}", case.mode)]);
    if let Some(connections) = options.connections {
        command.args(["--connections", &connections.to_string()]);
    }
    if let Some(width) = &options.width {
        command.args(["--width", width]);
    }
    command
        .stdin(Stdio::null())
        .stdout(file(outputs.0)?)
        .stderr(file(outputs.1)?)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", case.binary.display()))
}

/// memcached with one thread on a free loopback port, pinned to `cpu` where taskset is
/// installed (taskset execs it, so the PID killed at the end is memcached's).
fn start_memcached(cpu: usize) -> Result<ExternalServer, Error> {
    let memcached = find_binary("memcached").ok_or_else(|| {
        Error::Failed(
            "bench-agent --pacing: memcached is not on PATH: install it (apt-get install -y memcached) or give --memcached ADDR"
                .into(),
        )
    })?;
    let args = move |port: u16, pinned: bool| {
        let mut args: Vec<String> = Vec::new();
        if pinned {
            args.extend(["-c".into(), cpu.to_string()]);
            args.push(memcached.display().to_string());
        }
        let port = port.to_string();
        // -u: memcached refuses to run as root without a user, and ignores it otherwise.
        let rest = [
            "-t",
            "1",
            "-p",
            &port,
            "-U",
            "0",
            "-l",
            "127.0.0.1",
            "-u",
            "nobody",
        ];
        args.extend(rest.map(String::from));
        args
    };
    let server = if find_binary("taskset").is_some() {
        ExternalServer::start("taskset", "util-linux", |port, _| Ok(args(port, true)))
    } else {
        eprintln!("pacing: taskset is not on PATH: memcached runs unpinned");
        ExternalServer::start("memcached", "memcached", |port, _| Ok(args(port, false)))
    }
    .map_err(|e| failed("starting memcached", &e))?;
    eprintln!("pacing: memcached -t 1 at {} on core {cpu}", server.addr());
    Ok(server)
}

/// The scratch directory of the runs' records and outputs, removed at the end.
#[derive(Debug)]
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> Result<Scratch, Error> {
        let dir = std::env::temp_dir().join(format!("vernier-pacing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
