//! The duet (`--design duet`, the default): A and B measured at the same moments. One
//! in-process client opens its connections to both servers and keeps them open for the
//! whole comparison; one open-loop Poisson stream at twice the rate sends each request to
//! A or to B by a fair coin (so each side sees a Poisson stream at the rate asked), and
//! the stream is cut into windows of `--block`. A window's A requests and B requests come
//! from the same moments of the host, so a stall, a noisy neighbour or a slow minute
//! reaches both alike and cancels in their difference (duet benchmarking: Bulej et al.,
//! ICPE 2020). Each window is a pair for the CI of B − A by sectioning
//! ([`vernier_stats::difference_ci`]), with the same looks and stopping rule as blocks.
//!
//! On the tail without stalls the same marks reach both sides: a window stands while each
//! side keeps as many untouched requests as its percentile needs in a pair (the CI's own
//! floor, [`vernier_stats::MIN_TAIL_PER_BLOCK`] beyond it), however many the stalls
//! touched; the blocks design's 25% ceiling guards a block whose stalls its pair never
//! met, which a duet's window cannot have. A window in which either side falls short, or
//! in which the client fell behind, is set aside with its pair (up to a share of the
//! windows, as blocks are measured again).
//!
//! The two servers take time from each other where they share cores: the answer says
//! "side by side" ([`SideBySide`]), and A against A measures what that costs.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use vernier_agent::{Batch, Duet, Engine, EngineError, HostProbe, LoadSpec, StallLog};
use vernier_protocols::InterArrival;
use vernier_stats::{MIN_TAIL_PER_BLOCK, Stall, StoppingRule};

use super::block::{self, Measured, Place, Taken, TouchedBound};
use super::comparison::{
    Block, CompareOptions, CompareVerdict, Comparison, Design, Finding, Side, SideBySide, Steer,
};
use super::steps::{
    Looking, Samples, Shown, after_pair, block_line, finish, fixed_rate, nanoseconds, probes_for,
    unmeasured,
};
use super::verdict::{Ending, conclude};
use crate::coordinator::ReasonKind;
use crate::error::Error;
use crate::load::resolve;
use crate::report::ccdf_points;
use crate::samples::stall_of;
use crate::scenario::{Scenario, Tail};
use crate::session::with_found_cores;

/// The stream before the first window: connections, caches and the pacer settle.
const WARMUP: Duration = Duration::from_millis(300);
/// The sampling generation of the warm-up (nothing kept); window `k`'s is
/// `FIRST_WINDOW + k`, every request kept: a window opens with its workers'
/// acknowledgement, and what a paused watcher held back is never a window's.
const WARMING: u64 = 1;
const FIRST_WINDOW: u64 = 2;
/// How long the loop waits for a batch before it looks at the clock again.
const POLL: Duration = Duration::from_millis(50);
/// How long past a window's end a client that sent no batch is waited for: beyond, the
/// window ends with what came (a side that measured nothing then says so).
const PATIENCE: Duration = Duration::from_secs(2);

/// Compares `a` and `b` as a duet (see the module's documentation): `observe` is shown
/// the comparison after every window, as blocks show it after every block.
pub(super) fn compare(
    a: &Scenario,
    b: &Scenario,
    options: &CompareOptions,
    mut observe: impl FnMut(&Comparison, &str) -> Steer,
) -> Result<Comparison, Error> {
    let rate = fixed_rate(a)?;
    let started = Instant::now();
    let (spec, mut comparison, addr_a) = prepare(a, b, rate)?;
    let probes = probes_for(a, b);
    let engine = match Engine::start(spec.clone()) {
        Ok(engine) => engine,
        Err(EngineError::Connect { target, source, .. }) => {
            let side = if target == addr_a { Side::A } else { Side::B };
            let error = source.to_string();
            conclude(
                &mut comparison,
                CompareVerdict::NotAvailable,
                Finding::Refused { side, error },
            );
            comparison.seconds = started.elapsed().as_secs_f64();
            observe(&comparison, &comparison.reason.clone());
            return Ok(comparison);
        }
        Err(e) => return Err(Error::Failed(format!("the duet's client: {e}"))),
    };
    warm_up(&engine, 2.0 * rate, &probes);
    let p = a.ci.percentile.fraction();
    let judged = Judged {
        rate,
        p,
        least: (MIN_TAIL_PER_BLOCK / p.min(1.0 - p)).ceil() as usize,
        tolerance: a.warmup.tolerance,
        started,
        length: options.block,
        probes: (comparison.tail == Tail::WithoutStalls).then_some(&probes[..]),
    };
    let mut sides: (Samples, Samples) = (Vec::new(), Vec::new());
    let mut rule = StoppingRule::default();
    let mut ending = Ending::ByRule;
    let mut carried = Carried::default();
    let allowed = block::remeasures_allowed(options.max_pairs);
    while sides.0.len() < options.max_pairs {
        let [(m_a, block_a), (m_b, block_b)] =
            measure_window(&mut carried, &engine, &spec, &judged);
        let indices = [comparison.blocks.len(), comparison.blocks.len() + 1];
        comparison.blocks.extend([block_a, block_b]);
        let mut line = window_line(&comparison, indices);
        comparison.seconds = started.elapsed().as_secs_f64();
        match fate(&mut comparison, indices, allowed) {
            Fate::Ends(finding) => {
                conclude(&mut comparison, CompareVerdict::NotAvailable, finding);
                line += "; the window cannot stand for its side";
                observe(&comparison, &line);
                break;
            }
            Fate::SetAside => {
                line += "; set aside";
                if observe(&comparison, &line) == Steer::Stop {
                    ending = Ending::ByWatcher;
                    break;
                }
                continue;
            }
            Fate::Stands => {}
        }
        sides.0.push(m_a);
        sides.1.push(m_b);
        comparison.ccdf_a = ccdf_points(&nanoseconds(&sides.0));
        comparison.ccdf_b = ccdf_points(&nanoseconds(&sides.1));
        let shown = Shown {
            line,
            started,
            complete: true,
        };
        let looking = Looking {
            a,
            options,
            rule: &mut rule,
        };
        let both = (&sides.0, &sides.1);
        if let Some(end) = after_pair(&mut comparison, both, looking, shown, &mut observe) {
            ending = end;
            break;
        }
    }
    engine.pause();
    let _ = engine.stop();
    comparison.seconds = started.elapsed().as_secs_f64();
    finish(&mut comparison, (&sides.0, &sides.1), a, options, ending);
    Ok(comparison)
}

/// The duet's client (A's load spec with B's server and workload beside), the comparison
/// before its first window (saying what side by side means here), and A's address; a
/// usage error when the sides' clients differ in more than that.
fn prepare(
    a: &Scenario,
    b: &Scenario,
    rate: f64,
) -> Result<(LoadSpec, Comparison, SocketAddr), Error> {
    let addr_a = resolve(first_target(a, Side::A)?)?;
    let addr_b = resolve(first_target(b, Side::B)?)?;
    let mut spec = a.load_spec(0, addr_a);
    let b_spec = b.load_spec(0, addr_a);
    if let Some(field) = differs(&spec, &b_spec) {
        return Err(Error::Usage(format!(
            "A and B differ in {field}: a duet sends both sides' requests from one client, so only their servers and workloads may differ (--design blocks measures each side with its own client)"
        )));
    }
    spec.duet = Some(Duet {
        server: addr_b,
        workload: b_spec.workload,
    });
    let mut comparison = unmeasured(a, b, rate, Design::Duet);
    comparison.tail = a.ci.tail;
    let mut server_cpus = with_found_cores(a).0.target_cpus;
    server_cpus.extend(with_found_cores(b).0.target_cpus);
    server_cpus.sort_unstable();
    server_cpus.dedup();
    comparison.side_by_side = Some(SideBySide {
        stream_rate: 2.0 * rate,
        client_cpus: spec.cpus.clone(),
        server_cpus,
        same_server: addr_a == addr_b,
        set_aside: 0,
    });
    Ok((spec, comparison, addr_a))
}

/// The stream at `stream_rate` for [`WARMUP`], nothing kept; the stalls the `probes` saw
/// meanwhile dropped.
fn warm_up(engine: &Engine, stream_rate: f64, probes: &[HostProbe]) {
    engine.set_load(stream_rate, &InterArrival::Exp);
    engine.set_sampling(0.0, WARMING);
    let warming = Instant::now();
    while warming.elapsed() < WARMUP {
        if let Some(batch) = engine.next_batch(POLL) {
            engine.recycle(batch);
        }
    }
    for probe in probes {
        probe.take_all();
    }
}

/// What every window is measured and judged by.
struct Judged<'p> {
    rate: f64,
    p: f64,
    /// The untouched requests a side needs in a window for the percentile.
    least: usize,
    /// The warm-up tolerance a load is judged at.
    tolerance: f64,
    started: Instant,
    /// A window's length.
    length: Duration,
    /// The host probes whose stalls mark the requests (none: every request's tail).
    probes: Option<&'p [HostProbe]>,
}

/// What a window passes to the next: the stalls it saw and each side's requests, which
/// mark the next window's with its own, and its number.
#[derive(Default)]
struct Carried {
    stalls: Vec<Stall>,
    requests: [Vec<(u64, u64, u32)>; 2],
    window: usize,
}

/// The next window of the stream: each side's samples and block, its problem judged
/// (with no ceiling on the share touched; short of untouched requests for the percentile
/// is `host_stalls`).
fn measure_window(
    carried: &mut Carried,
    engine: &Engine,
    spec: &LoadSpec,
    judged: &Judged<'_>,
) -> [(Measured, Block); 2] {
    let started_s = judged.started.elapsed().as_secs_f64();
    let window = carried.window;
    let taken = take_window(engine, spec, judged.length, FIRST_WINDOW + window as u64);
    // The stalls the window's requests are marked by: its own, its workers', and the
    // window before's (a stall the probe reported late still reaches its requests).
    let mut stalls: Vec<Stall> = taken.stalls.intervals.iter().map(stall_of).collect();
    for probe in judged.probes.unwrap_or_default() {
        let (_, seen) = probe.take_all();
        let seen = seen.since(engine.clock_origin_ns());
        stalls.extend(seen.intervals.iter().map(stall_of));
    }
    let marks: Vec<Stall> = carried.stalls.iter().chain(&stalls).copied().collect();
    carried.stalls = stalls;
    let held = held_back(&taken);
    let answered = taken
        .sides
        .iter()
        .map(|side| side.samples.len() as u64)
        .sum();
    let unanswered = taken.sent.saturating_sub(answered);
    let half = |n: u64| (n as f64 / 2.0).round() as u64;
    let block_of = |i: usize, side: Side| {
        let own = &taken.sides[i];
        let side_taken = Taken {
            samples: &own.samples,
            before: &carried.requests[i],
            errors: own.errors,
            stalls: judged.probes.map(|_| &marks[..]),
            // The stream's sends and losses fall to the sides as their coin does: half
            // each, beside what each answered.
            sent: own.samples.len() as u64 + half(unanswered),
            failed: half(taken.failed),
            backlog_max: if held[i] { taken.backlog_max } else { 0 },
            seconds: taken.seconds,
        };
        let place = Place {
            side,
            pair: window,
            order: 2 * window + i,
            started: judged.started,
            probes: None,
        };
        let (m, mut block) =
            block::of_requests(&side_taken, &place, started_s, judged.rate, judged.p);
        block.problem = block::judge(&block, judged.rate, judged.tolerance, TouchedBound::Free)
            .or_else(|| {
                let short = m
                    .without_stalls
                    .as_ref()
                    .is_some_and(|o| o.values.len() < judged.least);
                short.then_some(ReasonKind::HostStalls)
            });
        (m, block)
    };
    let both = [block_of(0, Side::A), block_of(1, Side::B)];
    carried.requests = taken.sides.map(|side| side.samples);
    carried.window += 1;
    both
}

/// What becomes of a window.
enum Fate {
    /// It ends the comparison, N/A for this finding.
    Ends(Finding),
    /// It is set aside with its pair.
    SetAside,
    /// Its pair stands.
    Stands,
}

/// The fate of the window whose blocks are at `indices` of `comparison`'s: a side that
/// failed or could not carry the load ends the comparison naming the side (a side that
/// measured nothing before one that only fell behind); the client behind, or too few
/// untouched requests, sets it aside, up to `allowed` windows (then N/A `host_stalls`).
fn fate(comparison: &mut Comparison, indices: [usize; 2], allowed: usize) -> Fate {
    let problems = indices.map(|i| comparison.blocks[i].problem);
    let failed = |k: &Option<ReasonKind>| *k == Some(ReasonKind::TargetFailed);
    let ends = |k: &Option<ReasonKind>| k.is_some_and(|k| !block::measured_again(k));
    if let Some(i) = (problems.iter().position(failed)).or_else(|| problems.iter().position(ends)) {
        return Fate::Ends(Finding::Block { block: indices[i] });
    }
    if problems.iter().all(Option::is_none) {
        return Fate::Stands;
    }
    let set_aside = comparison.side_by_side.as_mut().map_or(0, |s| {
        s.set_aside += 1;
        s.set_aside
    });
    if set_aside > allowed {
        let block = indices[usize::from(problems[0].is_none())];
        return Fate::Ends(Finding::HostStallsTooOften {
            block,
            remeasured: set_aside - 1,
        });
    }
    Fate::SetAside
}

/// The first field in which A's and B's clients differ, which a duet cannot carry (none:
/// a duet can compare them).
pub fn duet_differs(a: &Scenario, b: &Scenario) -> Result<Option<&'static str>, Error> {
    let addr = resolve(first_target(a, Side::A)?)?;
    Ok(differs(&a.load_spec(0, addr), &b.load_spec(0, addr)))
}

/// A side's first target, or a usage error naming the side.
fn first_target(scenario: &Scenario, side: Side) -> Result<&str, Error> {
    scenario
        .targets
        .first()
        .map(String::as_str)
        .ok_or_else(|| Error::Usage(format!("{side} names no target")))
}

/// The first field in which B's client would differ from A's (`a` and `b` built for the
/// same server): a duet has one client, so only the servers and what each is asked may
/// differ.
fn differs(a: &LoadSpec, b: &LoadSpec) -> Option<&'static str> {
    let fields: [(&'static str, bool); 10] = [
        ("transport", a.transport == b.transport),
        ("protocol", a.protocol == b.protocol),
        ("workers", a.workers == b.workers),
        ("cpus", a.cpus == b.cpus),
        ("connections", a.connections == b.connections),
        ("depth", a.depth == b.depth),
        ("agent kind", a.kind == b.kind),
        ("timestamps", a.timestamps == b.timestamps),
        ("poll", a.poll == b.poll),
        ("timeout", a.timeout == b.timeout),
    ];
    fields
        .into_iter()
        .find_map(|(field, same)| (!same).then_some(field))
}

/// What one side answered in a window.
#[derive(Default)]
struct SideTaken {
    /// Departure, latency and send lag, ns.
    samples: Vec<(u64, u64, u32)>,
    /// Replies that were the server's errors.
    errors: u64,
}

/// One window of the stream: each side's requests, and the stream's counts.
struct StreamWindow {
    sides: [SideTaken; 2],
    stalls: StallLog,
    sent: u64,
    failed: u64,
    backlog_max: u64,
    seconds: f64,
}

/// The batches of the next `length` of the stream, sampled as `generation`, split by
/// side: the window opens with the first batch of its generation and closes `length`
/// later (or [`PATIENCE`] past it with none read).
fn take_window(
    engine: &Engine,
    spec: &LoadSpec,
    length: Duration,
    generation: u64,
) -> StreamWindow {
    engine.set_sampling(1.0, generation);
    let asked = Instant::now();
    let mut opened: Option<Instant> = None;
    let mut window = StreamWindow {
        sides: Default::default(),
        stalls: StallLog::default(),
        sent: 0,
        failed: 0,
        backlog_max: 0,
        seconds: 0.0,
    };
    while opened.map_or(asked.elapsed() < length + PATIENCE, |t| {
        t.elapsed() < length
    }) {
        let Some(batch) = engine.next_batch(POLL) else {
            continue;
        };
        if batch.generation == generation {
            opened.get_or_insert_with(Instant::now);
            add(&mut window, &batch, spec);
        }
        engine.recycle(batch);
    }
    window.seconds = opened.map_or(length, |t| t.elapsed()).as_secs_f64();
    window
}

/// Adds `batch`'s requests to their sides, and its counts to the stream's.
fn add(window: &mut StreamWindow, batch: &Batch, spec: &LoadSpec) {
    for s in &batch.samples {
        let side = &mut window.sides[usize::from(spec.to_duet(s.conn))];
        side.samples
            .push((s.departure_ns, s.latency_ns, s.queueing_ns));
        side.errors += u64::from(s.outcome == vernier_agent::Outcome::Error as u8);
    }
    let c = &batch.counts;
    window.sent += c.sent;
    window.failed += c.failed + c.timeouts;
    window.backlog_max = window.backlog_max.max(c.backlog_max);
    window.stalls.append(&batch.stalls);
}

/// Which sides the stream's backlog was held back for: the side that answered clearly
/// fewer requests than the other (its connections all busy, or gone), or both when they
/// answered alike (the client itself behind).
fn held_back(window: &StreamWindow) -> [bool; 2] {
    let [a, b] = [0, 1].map(|i| window.sides[i].samples.len() as f64);
    const FEWER: f64 = 0.8;
    if a < FEWER * b {
        [true, false]
    } else if b < FEWER * a {
        [false, true]
    } else {
        [true, true]
    }
}

/// What a window measured, for the progress line: each side's block.
fn window_line(comparison: &Comparison, [a, b]: [usize; 2]) -> String {
    let block = |i: usize| block_line(&comparison.blocks[i], comparison);
    format!("{}; {}", block(a), block(b))
}
