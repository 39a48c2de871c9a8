//! `vernier bench-agent`: what one agent worker can do on this host, measured against the
//! in-process synthetic server asking for 0 µs of service, agent and server on different
//! cores. It prints what it measured; the targets (≥ 150,000 requests/s open loop with
//! the inter-arrival test passing and p99 send lag ≤ 10 µs; p50 within 1 µs of the
//! loopback floor at 1,000 requests/s with kernel timestamps) are judged by the reader.
//! `--protocols` and `--pacing` measure other things (see their modules).

mod pacing;
mod protocols;

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hdrhistogram::Histogram;
use serde::Serialize;
use vernier_agent::calibrate::{self, CalibrateOptions};
use vernier_agent::sys::{TimestampMode, Transport};
use vernier_agent::{AgentKind, LoadSpec, Workload};
use vernier_fixtures::{ServeConfig, ServeProtocol, Server};
use vernier_protocols::Protocol;

use crate::coordinator::policy::bench_rate_held;
use crate::error::Error;
use crate::load::{Batches, Load, LoadWindow, run_load};

/// Options of `vernier bench-agent`.
#[derive(Debug, Args)]
pub struct BenchAgentArgs {
    /// Offered loads to try for capacity, requests/s.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "50000,100000,150000,200000"
    )]
    pub rates: Vec<f64>,
    /// How long to hold each load (after a 300 ms warm-up).
    #[arg(long, default_value = "2s", value_parser = super::args::duration_arg)]
    pub duration: Duration,
    /// Connections of the worker [default: 16; with --pacing, passed to the runs only when
    /// given].
    #[arg(long)]
    pub connections: Option<usize>,
    /// Outstanding requests per connection.
    #[arg(long, default_value_t = 8)]
    pub depth: usize,
    /// The agent worker's core [default: 0; with --pacing 1].
    #[arg(long)]
    pub agent_cpu: Option<usize>,
    /// The server's core [default: 1; with --pacing 0, where the memcached it starts runs].
    #[arg(long)]
    pub server_cpu: Option<usize>,
    /// Let the server spin instead of sleeping in epoll (on a host whose cores are not
    /// truly its own, two spinning threads can starve each other: see `vernier calibrate`'s
    /// host jitter).
    #[arg(long)]
    pub server_busy_poll: bool,
    /// The rate of the precision runs.
    #[arg(long, default_value_t = 1000.0)]
    pub precision_rate: f64,
    /// How long each precision run lasts.
    #[arg(long, default_value = "5s", value_parser = super::args::duration_arg)]
    pub precision_duration: Duration,
    /// How the worker waits between departures and replies: sleep, spin or adaptive.
    #[arg(long, default_value = "sleep")]
    pub poll: vernier_agent::PollMode,
    /// Do not give read batches back to the worker, which then allocates fresh buffers
    /// and histograms for every report (about 1.7 MB, 50 times a second), as it did
    /// before they came back: to measure what reuse saves.
    #[arg(long)]
    pub no_recycle: bool,
    /// Also measure against this memcached (start it pinned to the server's core): the
    /// highest open-loop rate one worker holds at 4 and 32 connections, beside the rate
    /// memaslap reaches closed-loop with the same connections.
    #[arg(long)]
    pub memcached: Option<std::net::SocketAddr>,
    /// Let the host's idle vCPUs poll this long before they halt (a KVM guest's
    /// `guest_halt_poll_ns`, root; put back at the end), as a scenario's `halt_poll`
    /// does: waking a halted vCPU is most of what a loopback send costs on such a host.
    #[arg(long, value_parser = super::args::duration_arg)]
    pub halt_poll: Option<Duration>,
    /// Only compare what a declared protocol costs the worker against the built-in one it
    /// imitates (`echo:64`), at the first of `--rates` (at most 50,000/s), `--duration` a
    /// round, five rounds each: worker CPU seconds per million requests.
    #[arg(long)]
    pub protocols: bool,
    /// Instead, measure the whole client process from outside, as a user runs it: for each
    /// of `--repeat`, `--pacing-rates`, `--modes` and `--binary` (innermost, so that two
    /// builds run side by side), `BIN run memcached://ADDR --load RATE --cpus AGENT_CPU
    /// --set poll=MODE ...`; over its steady state, its CPU per request, syscalls and
    /// context switches per request (perf), wake-ups per second and per thread (/proc),
    /// and from its samples the share of requests sent within 5, 10 and 50 µs of schedule.
    /// Against `--memcached`, or a memcached it starts on `--server-cpu`. The usual set-up
    /// is the defaults: client on core 1, memcached on core 0.
    #[arg(long, conflicts_with = "protocols")]
    pub pacing: bool,
    /// --pacing: a vernier executable to run (repeatable) [default: this one].
    #[arg(long = "binary", value_name = "PATH")]
    pub binaries: Vec<std::path::PathBuf>,
    /// --pacing: the poll modes, each passed as `--set poll=MODE` (a mode a binary refuses
    /// is a row with its error).
    #[arg(long, value_delimiter = ',', default_value = "sleep,spin,adaptive")]
    pub modes: Vec<String>,
    /// --pacing: the offered loads, requests/s.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,50000")]
    pub pacing_rates: Vec<f64>,
    /// --pacing: each run's `--duration` (it may end sooner, converged: `--width` holds it).
    #[arg(long, default_value = "20s", value_parser = super::args::duration_arg)]
    pub run_duration: Duration,
    /// --pacing: how long after a run says its agents are ready (its start-of-run calibration
    /// done, the load applied) its measured window begins.
    #[arg(long, default_value = "3s", value_parser = super::args::duration_arg)]
    pub warmup_skip: Duration,
    /// --pacing: how many times to run it all (the medians over repeats are printed).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// --pacing: passed to each run as `--width` (a narrow one keeps runs from converging
    /// early, as 1us does).
    #[arg(long)]
    pub width: Option<String>,
}

impl BenchAgentArgs {
    /// `--agent-cpu`, or its default: 1 for `--pacing` (beside memcached on 0), else 0.
    fn agent_cpu(&self) -> usize {
        self.agent_cpu.unwrap_or(usize::from(self.pacing))
    }

    /// `--server-cpu`, or its default: 0 for `--pacing`, else 1.
    fn server_cpu(&self) -> usize {
        self.server_cpu.unwrap_or(usize::from(!self.pacing))
    }

    /// `--connections`, or its default outside `--pacing`.
    fn connections(&self) -> usize {
        self.connections.unwrap_or(16)
    }

    /// The options of `--pacing`.
    fn pacing(&self) -> Result<pacing::Options, Error> {
        let binaries = if self.binaries.is_empty() {
            vec![std::env::current_exe().map_err(|e| failed(&e))?]
        } else {
            self.binaries.clone()
        };
        if self.repeat == 0 || self.modes.is_empty() || self.pacing_rates.is_empty() {
            return Err(Error::Usage(
                "bench-agent --pacing: --repeat, --modes and --pacing-rates need at least one"
                    .into(),
            ));
        }
        Ok(pacing::Options {
            binaries,
            modes: self.modes.clone(),
            rates: self.pacing_rates.clone(),
            duration: self.run_duration,
            warmup_skip: self.warmup_skip,
            repeat: self.repeat,
            memcached: self.memcached,
            agent_cpu: self.agent_cpu(),
            server_cpu: self.server_cpu(),
            connections: self.connections,
            width: self.width.clone(),
        })
    }
}

/// One open-loop rate tried against memcached.
#[derive(Debug, Serialize)]
struct OpenLoopTry {
    offered: f64,
    achieved: f64,
    send_lag_p50_us: f64,
    send_lag_p99_us: f64,
    backlog_max: u64,
    /// p99 latency of all the requests kept, and of those that left on schedule (within
    /// the methodology's 10 µs), µs.
    p99_all_us: f64,
    p99_on_schedule_us: f64,
    /// The share of requests that left on schedule.
    on_schedule_share: f64,
    /// Held: at least 98% of the offered rate answered, and the departure check of
    /// `method: vernier` passing for a p99 asked within 10%: at least 20% of the requests
    /// on schedule, whose p99 is within half that width (±5%) of all requests' p99, so
    /// the late ones do not move the answer.
    holds: bool,
}

/// The open-loop capacity at one connection count, beside memaslap's closed loop.
#[derive(Debug, Serialize)]
struct MemcachedCapacity {
    connections: usize,
    /// Requests outstanding per connection open-loop (memaslap keeps one).
    depth: usize,
    memaslap_closed_loop_rate: Option<f64>,
    memaslap_error: Option<String>,
    tries: Vec<OpenLoopTry>,
    highest_held: Option<f64>,
}

/// The shares of memaslap's rate tried open-loop (or of 100,000 req/s without it).
const CAPACITY_SHARES: [f64; 8] = [0.5, 0.7, 0.8, 0.9, 0.95, 1.0, 1.1, 1.2];
/// The connection counts the capacity is measured at: the 4 and 32.
const CAPACITY_CONNECTIONS: [usize; 2] = [4, 32];

#[derive(Debug, Serialize)]
struct CapacityPoint {
    offered: f64,
    achieved: f64,
    interarrival_ad_statistic: f64,
    interarrival_ad_critical_5pct: f64,
    interarrival_pass_5pct: bool,
    interarrivals_tested: usize,
    send_lag_p50_us: f64,
    send_lag_p99_us: f64,
    latency_p50_us: f64,
    latency_p99_us: f64,
    backlog_max: u64,
    failed: u64,
    /// The worker thread's CPU time per request sent, ns (a worker that spins between
    /// departures, as it does when they are closer than 60 µs, uses its whole core).
    cpu_per_request_ns: f64,
    /// Time the worker spent sending, per request: drawing, encoding, the socket call.
    send_cost_ns: f64,
    /// Sending socket calls per request: below 1 when requests due together shared one.
    send_calls_per_request: f64,
    /// Reading socket calls per request answered: its reply and its TX stamp.
    read_calls_per_request: f64,
}

#[derive(Debug, Serialize)]
struct PrecisionPoint {
    timestamps: String,
    rate: f64,
    requests: u64,
    latency_p50_us: f64,
    latency_p99_us: f64,
    above_floor_p50_us: f64,
}

/// What `vernier bench-agent` measured of the agent, printed as JSON.
#[derive(Debug, Serialize)]
struct AgentBench {
    capacity: Vec<CapacityPoint>,
    loopback_floor_p50_us: f64,
    precision: Vec<PrecisionPoint>,
    sample_bytes: usize,
    /// Whether read batches went back to the worker for reuse.
    recycled: bool,
    /// Against memcached, when `--memcached` names one.
    memcached: Vec<MemcachedCapacity>,
}

/// The departure check of `method: vernier` on `samples` (departure, latency, send lag in
/// ns) for a p99 asked within 10%: the p99 of all, of those on schedule, and their share,
/// and whether the late ones leave the p99 where it is (see [`OpenLoopTry::holds`]), by the
/// coordinator's own comparison.
fn departure_check(samples: &mut [(u64, u64, u32)]) -> (f64, f64, f64, bool) {
    use crate::coordinator::point::departures::{OnScheduleEstimate, on_schedule};
    use crate::coordinator::policy::{OnSchedule, departures_hold, lateness_allowed_us};
    const ASKED_WIDTH: f64 = 0.10;
    samples.sort_unstable_by_key(|&(departure, _, _)| departure);
    let mut all: Vec<f64> = samples.iter().map(|&(_, l, _)| l as f64 / 1e3).collect();
    all.sort_by(f64::total_cmp);
    let all = vernier_stats::percentile(&all, 0.99).unwrap_or(f64::NAN);
    let allowed = lateness_allowed_us(ASKED_WIDTH * all);
    let on_time = OnSchedule::within_us(allowed);
    let on: Vec<f64> = samples
        .iter()
        .filter(|&&(_, _, lag)| on_time.holds(u64::from(lag)))
        .map(|&(_, l, _)| l as f64 / 1e3)
        .collect();
    let share = on.len() as f64 / samples.len().max(1) as f64;
    let Ok(p99) = vernier_stats::Percentile::from_percent(99.0) else {
        return (all, f64::NAN, share, false);
    };
    let OnScheduleEstimate { value, agrees, .. } = on_schedule(&on, p99, 0.95, all, allowed);
    let passes = departures_hold(share, agrees);
    (all, value.unwrap_or(f64::NAN), share, passes)
}

fn us(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1e3
}

/// What becomes of a read batch: `--no-recycle` drops it, to measure what recycling saves.
fn batches(args: &BenchAgentArgs) -> Batches {
    if args.no_recycle {
        Batches::Dropped
    } else {
        Batches::Recycled
    }
}

/// The error of a step of this command, naming it.
fn failed(e: &dyn std::fmt::Display) -> Error {
    Error::Failed(format!("bench-agent: {e}"))
}

/// Runs the capacity sweep and the precision runs, printing JSON.
pub fn run(args: BenchAgentArgs) -> Result<ExitCode, Error> {
    // Held for the whole run and put back when it ends, whichever way.
    let _halt_poll = halt_poll(args.halt_poll)?;
    if args.protocols {
        let cost = protocols::run(&protocols::Options {
            rate: args
                .rates
                .first()
                .copied()
                .unwrap_or(50_000.0)
                .min(50_000.0),
            round: args.duration,
            agent_cpu: args.agent_cpu(),
            server_cpu: args.server_cpu(),
            connections: args.connections(),
        })
        .map_err(|e| failed(&e))?;
        let json = serde_json::to_string_pretty(&cost).map_err(|e| failed(&e))?;
        println!("{json}");
        return Ok(ExitCode::SUCCESS);
    }
    if args.pacing {
        let report = pacing::run(&args.pacing()?)?;
        let json = serde_json::to_string_pretty(&report).map_err(|e| failed(&e))?;
        println!("{json}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut config = ServeConfig::new(
        "127.0.0.1:0".parse().map_err(|e| failed(&e))?,
        ServeProtocol::Synthetic,
    );
    config.cpus = Some(vec![args.server_cpu()]);
    config.busy_poll = args.server_busy_poll;
    let server = Server::start(config).map_err(|e| failed(&e))?;
    let target = server.local_addr();
    let capacity = capacity(&args, target)?;
    let floor_p50 = loopback_floor(&args)?;
    let precision = precision(&args, target, floor_p50)?;
    let _ = server.stop();
    let memcached = match args.memcached {
        Some(addr) => memcached_capacity(&args, addr).map_err(|e| failed(&e))?,
        None => Vec::new(),
    };
    let report = AgentBench {
        capacity,
        loopback_floor_p50_us: floor_p50,
        precision,
        sample_bytes: std::mem::size_of::<vernier_agent::Sample>(),
        recycled: !args.no_recycle,
        memcached,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| failed(&e))?;
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}

/// Lets idle vCPUs poll for `window` before they halt (`--halt-poll`), saying so; the
/// guard puts the previous value back when dropped.
fn halt_poll(window: Option<Duration>) -> Result<Option<vernier_agent::sys::HaltPoll>, Error> {
    let Some(window) = window else {
        return Ok(None);
    };
    let guard = vernier_agent::sys::HaltPoll::set(window).map_err(|e| failed(&e))?;
    eprintln!(
        "halt polling: {} ns for this run (was {} ns)",
        window.as_nanos(),
        guard.previous_ns()
    );
    Ok(Some(guard))
}

/// The load of every run against the in-process synthetic server at `target`: one worker
/// on the agent's core asking for no service time, with `timestamps` over `connections`.
fn synthetic_spec(
    args: &BenchAgentArgs,
    target: std::net::SocketAddr,
    timestamps: TimestampMode,
    connections: usize,
) -> LoadSpec {
    LoadSpec {
        poll: args.poll,
        target,
        transport: Transport::Tcp,
        protocol: Protocol::synthetic(),
        workload: Workload::Synthetic {
            service: vernier_protocols::Dist::fixed(Duration::ZERO),
            probe: 0.0,
        },
        workers: 1,
        cpus: vec![args.agent_cpu()],
        connections,
        depth: args.depth,
        kind: AgentKind::Symmetric,
        timestamps,
        seed: 1,
        timeout: Duration::from_secs(1),
        duet: None,
    }
}

/// The capacity sweep: each of `--rates` against the synthetic server at `target`, a line
/// each on stderr.
fn capacity(
    args: &BenchAgentArgs,
    target: std::net::SocketAddr,
) -> Result<Vec<CapacityPoint>, Error> {
    let mut capacity = Vec::new();
    for &rate in &args.rates {
        // About 10,000 inter-departure gaps: the test's power, not the run's length.
        let sampling = (10_000.0 / (rate * args.duration.as_secs_f64())).min(1.0);
        let load = Load {
            rate,
            duration: args.duration,
            sampling,
            batches: batches(args),
        };
        let w = run_load(
            synthetic_spec(args, target, TimestampMode::Kernel, args.connections()),
            load,
        )
        .map_err(|e| failed(&e))?;
        let point = capacity_point(args, rate, &w)?;
        eprintln!(
            "capacity: offered {:>8.0}/s achieved {:>8.0}/s  AD {:.3} (5%: {}) {}  send lag p99 {:.1} µs  latency p50 {:.1} p99 {:.1} µs  send {:.0} ns/request, worker CPU {:.0} ns/request, socket calls per request {:.2} send + {:.2} read",
            point.offered,
            point.achieved,
            point.interarrival_ad_statistic,
            point.interarrival_ad_critical_5pct,
            if point.interarrival_pass_5pct {
                "pass"
            } else {
                "FAIL"
            },
            point.send_lag_p99_us,
            point.latency_p50_us,
            point.latency_p99_us,
            point.send_cost_ns,
            point.cpu_per_request_ns,
            point.send_calls_per_request,
            point.read_calls_per_request,
        );
        capacity.push(point);
    }
    Ok(capacity)
}

/// What the window `w` of a load offered at `rate` measured, with the inter-arrival test.
fn capacity_point(
    args: &BenchAgentArgs,
    rate: f64,
    w: &LoadWindow,
) -> Result<CapacityPoint, Error> {
    let ad = vernier_stats::anderson_exponential(&w.interarrivals).map_err(|e| failed(&e))?;
    Ok(CapacityPoint {
        offered: rate,
        achieved: w.counters.received as f64 / args.duration.as_secs_f64(),
        interarrival_ad_statistic: ad.statistic,
        interarrival_ad_critical_5pct: ad.critical_values[2],
        interarrival_pass_5pct: ad.passes(5.0),
        interarrivals_tested: w.interarrivals.len(),
        send_lag_p50_us: us(&w.send_lag, 0.5),
        send_lag_p99_us: us(&w.send_lag, 0.99),
        latency_p50_us: us(&w.latency, 0.5),
        latency_p99_us: us(&w.latency, 0.99),
        backlog_max: w.counters.backlog_max,
        failed: w.counters.failed,
        cpu_per_request_ns: w.counters.cpu_ns as f64 / w.counters.sent.max(1) as f64,
        send_cost_ns: w.counters.send_ns as f64 / w.counters.sent.max(1) as f64,
        send_calls_per_request: w.counters.send_calls as f64 / w.counters.sent.max(1) as f64,
        read_calls_per_request: w.counters.read_calls as f64 / w.counters.received.max(1) as f64,
    })
}

/// The loopback floor between the agent's core and the server's: a busy-polling
/// ping-pong's p50, µs, said on stderr.
fn loopback_floor(args: &BenchAgentArgs) -> Result<f64, Error> {
    let floor = calibrate::run(&CalibrateOptions {
        cpus: vec![args.agent_cpu(), args.server_cpu()],
        round_trips: 50_000,
        jitter: Duration::from_millis(1),
        interfaces: Some(vec!["lo".into()]),
        ..CalibrateOptions::default()
    })
    .map_err(|e| failed(&e))?;
    let floor_p50 = floor.loopback_rtt_us.p50;
    eprintln!("loopback floor (busy-polling ping-pong): p50 {floor_p50:.2} µs");
    Ok(floor_p50)
}

/// The precision runs: one connection at `--precision-rate` with kernel, then user
/// timestamps, against the synthetic server at `target`, each set against the floor.
fn precision(
    args: &BenchAgentArgs,
    target: std::net::SocketAddr,
    floor_p50: f64,
) -> Result<Vec<PrecisionPoint>, Error> {
    let mut precision = Vec::new();
    for (name, mode) in [
        ("kernel", TimestampMode::Kernel),
        ("user", TimestampMode::User),
    ] {
        let load = Load {
            rate: args.precision_rate,
            duration: args.precision_duration,
            sampling: 0.0,
            batches: batches(args),
        };
        let w = run_load(synthetic_spec(args, target, mode, 1), load).map_err(|e| failed(&e))?;
        let p50 = us(&w.latency, 0.5);
        eprintln!(
            "precision: {name:>6} timestamps at {:.0}/s: p50 {p50:.2} µs ({:+.2} µs above the floor)",
            args.precision_rate,
            p50 - floor_p50
        );
        precision.push(PrecisionPoint {
            timestamps: name.into(),
            rate: args.precision_rate,
            requests: w.counters.received,
            latency_p50_us: p50,
            latency_p99_us: us(&w.latency, 0.99),
            above_floor_p50_us: p50 - floor_p50,
        });
    }
    Ok(precision)
}

/// The highest open-loop rate one worker holds against the memcached at `addr`, at each
/// of [`CAPACITY_CONNECTIONS`], beside memaslap's closed-loop rate with as many
/// connections (both pinned to the agent's core).
fn memcached_capacity(
    args: &BenchAgentArgs,
    addr: std::net::SocketAddr,
) -> Result<Vec<MemcachedCapacity>, vernier_agent::EngineError> {
    let workload: vernier_protocols::KvWorkload = vernier_protocols::KvWorkload {
        keys: 10_000,
        key_size: vernier_protocols::Dist::fixed(16),
        value_size: vernier_protocols::Dist::fixed(64),
        read_ratio: 0.9,
        key_dist: Default::default(),
        key: None,
    };
    let mut all = Vec::new();
    for connections in CAPACITY_CONNECTIONS {
        let seconds = args.duration.as_secs().max(1);
        let memaslap = crate::validate::memaslap_rate(addr, connections, seconds, args.agent_cpu());
        let reference = memaslap.as_ref().map_or(100_000.0, |&r| r);
        let mut tries = Vec::new();
        for share in CAPACITY_SHARES {
            let offered = (reference * share).round();
            let spec = LoadSpec {
                target: addr,
                transport: Transport::Tcp,
                protocol: Protocol::memcached(),
                workload: Workload::KeyValue(workload.clone()),
                workers: 1,
                cpus: vec![args.agent_cpu()],
                connections,
                depth: args.depth,
                kind: AgentKind::Symmetric,
                timestamps: TimestampMode::Kernel,
                poll: args.poll,
                seed: 1,
                timeout: Duration::from_secs(1),
                duet: None,
            };
            // About 200,000 samples: 2,000 beyond the p99.
            let sampling = (200_000.0 / (offered * args.duration.as_secs_f64())).min(1.0);
            let load = Load {
                rate: offered,
                duration: args.duration,
                sampling,
                batches: batches(args),
            };
            let mut w = run_load(spec, load)?;
            let achieved = w.counters.received as f64 / args.duration.as_secs_f64();
            let send_lag_p50_us = us(&w.send_lag, 0.5);
            let (p99_all_us, p99_on_schedule_us, on_schedule_share, departures_pass) =
                departure_check(&mut w.samples);
            let t = OpenLoopTry {
                offered,
                achieved,
                send_lag_p50_us,
                send_lag_p99_us: us(&w.send_lag, 0.99),
                backlog_max: w.counters.backlog_max,
                p99_all_us,
                p99_on_schedule_us,
                on_schedule_share,
                holds: bench_rate_held(achieved, offered) && departures_pass,
            };
            eprintln!(
                "memcached, {connections} connections, depth {}: offered {:>8.0}/s achieved {:>8.0}/s  send lag p50 {:.1} p99 {:.1} µs  backlog max {}  p99 {:.1} µs, on schedule ({:.0}%) {:.1}  {}",
                args.depth,
                t.offered,
                t.achieved,
                t.send_lag_p50_us,
                t.send_lag_p99_us,
                t.backlog_max,
                t.p99_all_us,
                t.on_schedule_share * 100.0,
                t.p99_on_schedule_us,
                if t.holds { "holds" } else { "does not hold" }
            );
            tries.push(t);
        }
        let highest_held = tries
            .iter()
            .filter(|t| t.holds)
            .map(|t| t.offered)
            .reduce(f64::max);
        eprintln!(
            "memcached, {connections} connections: open loop holds {} req/s; memaslap closed loop {}",
            highest_held.map_or("none of the rates tried".into(), |r| format!("{r:.0}")),
            match &memaslap {
                Ok(r) => format!("{r:.0} req/s"),
                Err(e) => format!("not measured: {e}"),
            }
        );
        all.push(MemcachedCapacity {
            connections,
            depth: args.depth,
            memaslap_closed_loop_rate: memaslap.as_ref().ok().copied(),
            memaslap_error: memaslap.err().map(|e| e.to_string()),
            tries,
            highest_held,
        });
    }
    Ok(all)
}
