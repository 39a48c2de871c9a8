//! The methodology driven by made-up agents: batches of samples drawn from known
//! distributions, counters that say what a real agent would, and time that passes only
//! when the test says so.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use vernier_agent::{Batch, Counters, Sample, histogram};
use vernier_protocols::InterArrival;
use vernier_stats::Percentile;

use super::check_next::{CheckNext, Found};
use super::findings::{DepartureFinding, LateCause};
use super::reason::{
    ClosedLoop, ClosedLoopMoment, Confidence, HeavyTail, HeldClosedLoop, HostKept, HostStalls,
    Interarrival, NotReached, TargetFailed,
};
use super::*;
use crate::coordinator::ReasonKind;

mod records;
mod timely;

/// The figures of a reason of the kind the pattern names, or a panic naming what it was.
macro_rules! figures {
    ($reason:expr, $($pattern:pat => $figures:expr),+ $(,)?) => {
        match &$reason.why {
            $($pattern => $figures,)+
            other => panic!("{other:#?}"),
        }
    };
}
use crate::scenario::{
    CiTarget, CiWidth, Limits, LoadPlan, Method, OnAgentLoss, Sampling, SloSearch, Tail, Warmup,
};

/// Draws a latency (µs) from the rate, the RNG and the previous latency.
type LatencyFn = Box<dyn FnMut(f64, &mut SmallRng, f64) -> f64>;

const BATCH: Duration = Duration::from_millis(20);

fn config() -> PointConfig {
    PointConfig {
        rate: 0.0,
        agents: 1,
        measures: vec![true],
        lost: vec![None],
        on_agent_loss: OnAgentLoss::Stop,
        interarrival_enforced: true,
        // Today's tests are Lancet's procedure; `method: vernier` has its own below.
        method: Method::Lancet,
        workers: 1,
        connections: 16,
        depth: 1,
        interarrival: InterArrival::Exp,
        ci: CiTarget {
            percentile: Percentile::P99,
            width: CiWidth::Absolute(Duration::from_micros(50)),
            confidence: 0.95,
            // The whole tail, as these tests were written for; the tail without stalls
            // has tests of its own.
            tail: Tail::WithStalls,
        },
        percentiles: vec![Percentile::P50, Percentile::P99],
        limits: Limits {
            max_tries: 10,
            max_duration: Duration::from_secs(120),
        },
        sampling: Sampling {
            rate: 0.2,
            samples: 10_000,
            interarrival_samples: 1000,
        },
        warmup: Warmup {
            window: Duration::from_millis(50),
            windows: 40,
            tolerance: 0.05,
            max: Duration::from_secs(10),
        },
        alpha: 0.05,
        slo: None,
        timestamps: vernier_agent::sys::TimestampMode::Kernel,
        replications: None,
        target_probed: true,
    }
}

/// A made-up agent: it generates what it is told, at most `capacity` req/s, and each
/// request's latency comes from `latency(rate, rng, previous)` in µs.
struct FakeAgent {
    rng: SmallRng,
    rate: f64,
    sampling: f64,
    /// The sampling generation last applied: its batches carry it.
    generation: u64,
    capacity: f64,
    clock_ns: u64,
    previous: f64,
    /// Requests due but not sent (a closed loop when `slots_bound`).
    backlog: f64,
    slots_bound: bool,
    /// The target is gone: every request fails, none is answered.
    dead: bool,
    /// A throughput agent: it loads, and keeps no samples and no gaps.
    loads_only: bool,
    /// Departures evenly spaced (an agent that cannot draw exponential gaps).
    regular: bool,
    /// How long each request waits in the client before it leaves, µs: in its latency
    /// from the schedule, not in its latency (coordinated omission).
    queueing_us: f64,
    /// A share of requests that leave this many µs late, their reply as late (a client
    /// host that stalls): (share, µs).
    late: (f64, f64),
    /// Every this many batches, this many due requests wait for a free slot in that batch
    /// (a target that pauses now and then): (batches, requests); 0 batches for never.
    blips: (u64, u64),
    /// Every this many batches the host takes the core away for this many µs at the
    /// batch's start (the requests sent meanwhile wait it out), and a probe reports it:
    /// (batches, µs); 0 batches for never.
    host_stall: (u64, f64),
    /// Each stall of `host_stall` lasts its µs times a factor drawn uniformly from
    /// [1 − this, 1 + this] (0: every stall as long), so that the share touched varies
    /// from one stretch of the load to the next as a host's does.
    host_stall_spread: f64,
    /// The run of a replicated point (from 1; renewed by the coordinator).
    run: u32,
    /// Each run after the first adds this many µs to every latency (a bias that holds for
    /// a whole run, as a run's memory layout or connection placement does).
    run_shift_us: f64,
    /// The connections were renewed this many times.
    renewals: u32,
    /// Requests a batch sends again after the server refused them unprocessed (a server
    /// rotating its connections): counted as retried, beside those answered.
    retried: u64,
    /// Every action applied, in order.
    applied: Vec<Action>,
    seed: u64,
    latency: LatencyFn,
}

impl FakeAgent {
    fn new(seed: u64, latency: impl FnMut(f64, &mut SmallRng, f64) -> f64 + 'static) -> FakeAgent {
        FakeAgent {
            rng: SmallRng::seed_from_u64(seed),
            rate: 0.0,
            sampling: 1.0,
            generation: 0,
            capacity: f64::INFINITY,
            clock_ns: 0,
            previous: 0.0,
            backlog: 0.0,
            slots_bound: false,
            dead: false,
            loads_only: false,
            regular: false,
            queueing_us: 0.0,
            late: (0.0, 0.0),
            blips: (0, 0),
            host_stall: (0, 0.0),
            host_stall_spread: 0.0,
            run: 1,
            run_shift_us: 0.0,
            renewals: 0,
            retried: 0,
            applied: Vec::new(),
            seed,
            latency: Box::new(latency),
        }
    }

    fn apply(&mut self, action: &Action) {
        self.applied.push(*action);
        match action {
            Action::Load { rate } => self.rate = *rate,
            Action::Sampling { rate, generation } => {
                self.sampling = *rate;
                self.generation = *generation;
            }
            Action::Pause => self.rate = 0.0,
            // The simulated agent sends on schedule whatever it is told.
            Action::Pace { .. } => {}
            Action::Renew { run } => {
                // Fresh connections and a fresh seed: nothing of the last run carries over.
                assert_eq!(self.rate, 0.0, "renewed while loading");
                self.run = *run;
                self.renewals += 1;
                self.rng = SmallRng::seed_from_u64(self.seed + u64::from(*run) * 1_000);
                self.backlog = 0.0;
                self.previous = 0.0;
            }
            Action::Finished => {}
        }
    }

    /// One 20 ms batch.
    fn batch(&mut self) -> Batch {
        let dt = BATCH.as_secs_f64();
        let due = self.rate * dt + self.backlog;
        let sent = due.min(self.capacity * dt);
        self.backlog = if self.slots_bound { due - sent } else { 0.0 };
        let n = sent.round() as u64;
        if self.dead {
            self.clock_ns += BATCH.as_nanos() as u64;
            return Batch {
                worker: 0,
                generation: self.generation,
                elapsed: Duration::from_nanos(self.clock_ns),
                samples: Vec::new(),
                probes: Vec::new(),
                interarrivals: Vec::new(),
                latency: histogram(),
                intended: histogram(),
                send_lag: histogram(),
                served: histogram(),
                asked: histogram(),
                few: Default::default(),
                stalls: Default::default(),
                counts: Counters {
                    sent: n,
                    failed: n,
                    connect_failures: 2,
                    ..Counters::default()
                },
            };
        }
        let mut latency = histogram();
        let mut intended = histogram();
        let mut send_lag = histogram();
        let mut samples = Vec::new();
        let mut interarrivals = Vec::new();
        let gap_mean = 1e9 / self.rate.max(1.0);
        let (every, stall_us) = self.host_stall;
        let stalls_now =
            every > 0 && (self.clock_ns / BATCH.as_nanos() as u64).is_multiple_of(every);
        // Drawn only when asked, so that the other tests' draws stay as they were.
        let stall_us = if stalls_now && self.host_stall_spread > 0.0 {
            stall_us * (1.0 + self.host_stall_spread * (2.0 * self.rng.random::<f64>() - 1.0))
        } else {
            stall_us
        };
        let stall_end = stalls_now.then(|| self.clock_ns + (stall_us * 1e3) as u64);
        for i in 0..n {
            let departure_ns = self.clock_ns + i * (BATCH.as_nanos() as u64) / n.max(1);
            let held_us =
                stall_end.map_or(0.0, |end| end.saturating_sub(departure_ns) as f64 / 1e3);
            let l = (self.latency)(self.rate, &mut self.rng, self.previous).max(0.1) + held_us;
            self.previous = l;
            let late_us = if self.rng.random::<f64>() < self.late.0 {
                self.late.1
            } else {
                0.0
            };
            let l = l + late_us + self.run_shift_us * f64::from(self.run - 1);
            let _ = latency.record((l * 1e3) as u64);
            let lag = if self.capacity < self.rate && !self.slots_bound {
                300_000_000
            } else {
                500
            };
            let _ = send_lag.record(lag);
            let _ = intended.record(((l + self.queueing_us) * 1e3) as u64 + lag);
            if !self.loads_only && self.rng.random::<f64>() < self.sampling {
                samples.push(Sample {
                    departure_ns,
                    latency_ns: (l * 1e3) as u64,
                    queueing_ns: (late_us * 1e3) as u32,
                    ..Sample::default()
                });
                interarrivals.push(if self.regular {
                    gap_mean as u64
                } else {
                    (-gap_mean * (1.0 - self.rng.random::<f64>()).ln()) as u64
                });
            }
        }
        // The probe's interval: from its wake-up before the stall to its late one.
        let stalls = vernier_agent::StallLog {
            intervals: stall_end
                .map(|end| vernier_agent::StallInterval {
                    start_ns: self.clock_ns.saturating_sub(400_000),
                    end_ns: end + 30_000,
                    core: Some(0),
                    source: vernier_agent::StallSource::Probe,
                })
                .into_iter()
                .collect(),
            dropped: 0,
        };
        self.clock_ns += BATCH.as_nanos() as u64;
        let mut backlog = self.backlog as u64;
        let (every, held) = self.blips;
        if every > 0 && (self.clock_ns / BATCH.as_nanos() as u64).is_multiple_of(every) {
            backlog += held;
        }
        Batch {
            worker: 0,
            generation: self.generation,
            elapsed: Duration::from_nanos(self.clock_ns),
            samples,
            probes: Vec::new(),
            interarrivals,
            latency,
            intended,
            send_lag,
            served: histogram(),
            asked: histogram(),
            few: Default::default(),
            stalls,
            counts: Counters {
                sent: n + self.retried,
                received: n,
                retried: self.retried,
                backlog,
                backlog_max: backlog,
                ..Counters::default()
            },
        }
    }
}

/// Runs the coordinator against `agent` until it finishes (or `limit` passes); returns
/// every event.
fn drive(coordinator: &mut Coordinator, agent: &mut FakeAgent, limit: Duration) -> Vec<Event> {
    drive_with(coordinator, agent, limit, |_, _| None)
}

/// [`drive`] with a host probe: at step `n` (one batch each, from 1) the coordinator gets
/// the reports `host(coordinator, n)` returns instead of a batch, when it returns some.
fn drive_with(
    coordinator: &mut Coordinator,
    agent: &mut FakeAgent,
    limit: Duration,
    mut host: impl FnMut(&Coordinator, u64) -> Option<Vec<vernier_agent::StallReport>>,
) -> Vec<Event> {
    let mut events = Vec::new();
    let mut at = Duration::ZERO;
    let mut n = 0u64;
    let mut decision = coordinator.start(at);
    while !coordinator.is_done() && at < limit {
        for a in &decision.actions {
            agent.apply(a);
        }
        events.append(&mut decision.events);
        at += BATCH;
        n += 1;
        let input = match host(coordinator, n) {
            Some(reports) => Input::Host(reports),
            None => Input::Batch {
                agent: 0,
                batch: agent.batch(),
            },
        };
        decision = coordinator.step(at, input);
    }
    events.append(&mut decision.events);
    assert_reasons_follow_from_figures(coordinator);
    events
}

/// Every reason of every result follows from its figures
/// ([`super::reason::tests::contradictions`]): run after each driven point.
fn assert_reasons_follow_from_figures(coordinator: &Coordinator) {
    for result in coordinator.results() {
        for reason in &result.reasons {
            let found = super::reason::tests::contradictions(reason);
            assert!(found.is_empty(), "{found:?}: {reason:#?}");
        }
    }
}

/// The first user command's event text.
fn command_event(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Command { command } => Some(command.clone()),
            _ => None,
        })
        .expect("the command is an event")
}

fn checks(events: &[Event], kind: CheckKind) -> Vec<&Check> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Check(c) if c.check == kind => Some(c),
            _ => None,
        })
        .collect()
}

fn exp_latency(mean_us: f64) -> impl FnMut(f64, &mut SmallRng, f64) -> f64 {
    move |_, rng, _| -mean_us * (1.0 - rng.random::<f64>()).ln()
}

#[test]
fn independent_exponential_latencies_converge_with_every_check_reported() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    let events = drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
    assert_eq!(c.verdict(), Some(Verdict::Converged));
    for kind in [
        CheckKind::Rate,
        CheckKind::WarmupStationarity,
        CheckKind::Interarrival,
        CheckKind::Independence,
        CheckKind::Stationarity,
        CheckKind::Confidence,
    ] {
        assert!(!checks(&events, kind).is_empty(), "no {kind:?} check");
    }
    // An exponential of mean 50 µs has p99 = 50·ln(100) = 230 µs.
    let p99 = result.target().unwrap();
    assert!((p99.value - 230.3).abs() < 20.0, "{p99:?}");
    assert!(result.ci_width_us.unwrap() <= 50.0);
    assert!(result.samples >= 10_000 && result.samples >= result.min_samples);
    // The width predicted the sample count: the rounds did not creep up in fixed steps.
    assert!(result.tries <= 3, "{} tries", result.tries);
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Progress(_)))
    );
}

/// The agents are told the send lag that could move the answer asked (the departure
/// check's tolerance): half an absolute width from the start; for a relative one, the send
/// path's 10 µs until the point's estimate is seen, then half the width at that estimate,
/// told again only when it moves by more than a quarter.
#[test]
fn the_agents_pace_by_the_answer_asked() {
    let told = |agent: &FakeAgent| -> Vec<Duration> {
        (agent.applied.iter())
            .filter_map(|a| match a {
                Action::Pace { tolerance } => Some(*tolerance),
                _ => None,
            })
            .collect()
    };
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(60));
    assert_eq!(told(&agent), [Duration::from_micros(25)]);
    let mut relative = config();
    relative.ci.width = CiWidth::Relative(0.2);
    let mut c = Coordinator::new(relative, &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let paced = told(&agent);
    assert_eq!(paced[0], Duration::from_micros(10), "{paced:?}");
    // An exponential of mean 50 µs: p99 230 µs, 20% of it 46 µs wide, ±23 µs.
    let last = paced.last().unwrap().as_secs_f64() * 1e6;
    assert!((18.0..30.0).contains(&last), "{paced:?}");
    assert!(paced.len() <= 4, "told too often: {paced:?}");
}

#[test]
fn the_result_has_the_tail_without_the_host_s_stalls_beside_the_whole_one() {
    // 2,000 req/s: every request kept (the drain needs to see each one in flight).
    let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    // 3 ms taken away every 200 ms: 1.5% of the requests wait it out.
    agent.host_stall = (10, 3_000.0);
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    let own = result
        .without_stalls
        .as_ref()
        .expect("the tail without stalls");
    // The whole tail is the stalls': p99 among the held requests.
    let p99 = result.target().unwrap();
    assert!(p99.value > 1_000.0, "{p99:?}");
    // Without them, the exponential's own p99, 50·ln(100) = 230 µs, within its CI.
    let own99 = own.percentile(99.0).unwrap();
    let (lo, hi) = (own99.ci_low.unwrap(), own99.ci_high.unwrap());
    assert!(lo <= 230.3 * 1.03 && hi >= 230.3 * 0.97, "{own99:?}");
    assert!((own99.value - 230.3).abs() < 25.0, "{own99:?}");
    // The held requests (3 ms of 200), the few before the stall whose reply came after
    // the probe's wake-up before it, and those sent while the queue drained.
    assert!((0.015..0.02).contains(&own.touched_share), "{own:?}");
    assert_eq!(own.touched_by_agent.len(), 1);
    assert!(own.stalls > 0);
    assert_eq!(own.probed, crate::coordinator::Probed::ClientAndTarget);
    assert_eq!(own.verdict, Verdict::Converged, "{own:?}");
    // Without the stalls: the same requests, the same tail.
    let mut quiet = Coordinator::new(vernier(), &LoadPlan::Fixed(20_000.0));
    drive(
        &mut quiet,
        &mut FakeAgent::new(1, exp_latency(50.0)),
        Duration::from_secs(60),
    );
    let own = quiet.results()[0].without_stalls.clone().unwrap();
    assert_eq!(own.touched_share, 0.0);
}

/// A stalled fake agent's point asked for `tail`: 2,000 req/s of an exponential (mean
/// 50 µs), 3 ms taken away every 200 ms.
fn stalled_point(tail: Tail) -> Coordinator {
    let asked = PointConfig {
        ci: CiTarget {
            tail,
            ..vernier().ci
        },
        ..vernier()
    };
    let mut c = Coordinator::new(asked, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    agent.host_stall = (10, 3_000.0);
    drive(&mut c, &mut agent, Duration::from_secs(60));
    c
}

#[test]
fn a_point_asked_for_the_tail_without_stalls_stops_on_it_and_answers_with_it() {
    let own = stalled_point(Tail::WithoutStalls);
    let result = &own.results()[0];
    assert_eq!(result.tail, Tail::WithoutStalls);
    let w = result
        .without_stalls
        .as_ref()
        .expect("the tail without stalls");
    // Stopped by the rule on the untouched requests: converged, the exponential's p99.
    assert_eq!(w.verdict, Verdict::Converged, "{w:?}");
    assert!(w.ci_width_us.unwrap() <= 50.0, "{w:?}");
    let own99 = result.asked_target().unwrap();
    assert!((own99.value - 230.3).abs() < 25.0, "{own99:?}");
    assert_eq!(result.answer(), Verdict::Converged);
    assert_eq!(own.verdict(), Some(Verdict::Converged));
    // Every request's tail is judged on what the point held when it stopped, never
    // called converged by the other's stop: wide or N/A with a cause its figures bear out,
    // or as narrow as asked.
    match result.verdict {
        Verdict::Converged => assert!(result.ci_width_us.unwrap() <= 50.0, "{result:#?}"),
        _ => assert!(!result.reasons.is_empty()),
    }
    assert!(result.target().unwrap().value > 1_000.0);
    // Asked for every request's tail, the same point answers with that one: wide, the
    // stalls' p99 far beyond what the limit can narrow.
    let whole = stalled_point(Tail::WithStalls);
    let r = &whole.results()[0];
    assert_eq!(r.verdict, Verdict::Wide, "{r:#?}");
    assert!(r.ci_width_us.unwrap() > 50.0, "{r:#?}");
    assert_eq!(r.answer(), r.verdict);
    assert_eq!(whole.verdict(), Some(Verdict::Wide));
    eprintln!(
        "without stalls asked: {:.1} s ({}, every request {}), every request asked: {:.1} s ({:?})",
        result.duration_s,
        w.verdict.name(),
        result.verdict.name(),
        r.duration_s,
        r.reasons.iter().map(|x| x.kind()).collect::<Vec<_>>()
    );
}

#[test]
fn stalls_that_surely_touch_beyond_the_bound_end_the_point_at_once() {
    // The host takes 8 ms of every 20 (a probe sees each): near half of the requests
    // touched, at every look. The tail without stalls cannot be judged however long the
    // point runs: N/A `touched` at the first look whose share's interval lies above 25%,
    // every request's tail judged on what the point holds then.
    // Asked within 5 µs, every request's tail does not settle before the share is read.
    let asked = PointConfig {
        ci: CiTarget {
            tail: Tail::WithoutStalls,
            width: crate::scenario::CiWidth::Absolute(Duration::from_micros(5)),
            ..vernier().ci
        },
        ..vernier()
    };
    let result = ended_touched(asked);
    // At the first look after 10 s of requests, not at the limit.
    assert!(result.duration_s < 30.0, "{}", result.duration_s);
    match result.verdict {
        Verdict::NotAvailable => assert!(!result.reasons.is_empty()),
        _ => assert!(result.ci_width_us.unwrap() <= 50.0, "{result:#?}"),
    }
}

#[test]
fn the_share_touched_is_read_between_looks_that_are_far_apart() {
    // As above, but the first look wants 150,000 samples per agent (75 s at 2,000 req/s):
    // the share is read every policy::TOUCHED_EVERY between looks, and the point ends N/A
    // `touched` once 10 s of requests put it surely above 25%, long before that look.
    let mut asked = vernier();
    asked.ci.tail = Tail::WithoutStalls;
    asked.sampling.samples = 150_000;
    asked.limits.max_duration = Duration::from_secs(200);
    let result = ended_touched(asked);
    // Warm-up, the inter-arrival gaps, 10 s of requests and at most one period more.
    assert!(result.duration_s < 25.0, "{}", result.duration_s);
}

/// A point `asked` at 2,000 req/s over 4 agents on a host that takes 8 ms of every 20
/// (a probe sees each), asserted to have ended N/A `touched` by the early decision.
fn ended_touched(asked: PointConfig) -> PointResult {
    let mut c = Coordinator::new(asked, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(4, exp_latency(50.0));
    agent.host_stall = (1, 8_000.0);
    let events = drive(&mut c, &mut agent, Duration::from_secs(300));
    let result = c.results()[0].clone();
    let w = result.without_stalls.as_ref().unwrap();
    assert!(w.touched_share > 0.25, "{w:?}");
    assert!(matches!(w.short, Some(Why::Touched(_))), "{w:?}");
    assert_eq!(result.answer(), Verdict::NotAvailable);
    let confidence = checks(&events, CheckKind::Confidence);
    let ended = (confidence.iter())
        .find(|c| {
            c.decision()
                .starts_with("N/A now for the tail without stalls")
        })
        .unwrap_or_else(|| panic!("no decision ended it: {confidence:#?}"));
    assert!(ended.detail().contains("% CI ["), "{}", ended.detail());
    assert!(
        matches!(ended.next, Some(CheckNext::Touched(call)) if call.side == TouchedSide::Over),
        "{ended:?}"
    );
    assert!(matches!(ended.found, Found::Touched { .. }), "{ended:?}");
    result
}

#[test]
fn a_request_sent_later_than_the_probes_threshold_counts_as_touched() {
    // Every request leaves `late_us` after its schedule; the probe sees 3 ms every 200 ms.
    let touched = |late_us: f64| {
        let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(2_000.0));
        let mut agent = FakeAgent::new(1, exp_latency(50.0));
        agent.host_stall = (10, 3_000.0);
        agent.late = (1.0, late_us);
        drive(&mut c, &mut agent, Duration::from_secs(60));
        c.results()[0].without_stalls.clone().unwrap()
    };
    // Late by less than the 100 µs a probe calls a stall: only the probe's stalls touch.
    let on_time = touched(50.0);
    assert!(
        (0.015..0.03).contains(&on_time.touched_share),
        "{on_time:?}"
    );
    // Late by more: the client's core was not its own, and every request shows it. With
    // so many touched the untouched stand for nothing: that tail is N/A, saying so.
    let late = touched(150.0);
    assert!(late.touched_share > 0.99, "{late:?}");
    assert_eq!(late.verdict, Verdict::NotAvailable);
    assert!(
        matches!(late.short, Some(Why::Touched(ref t)) if t.most == 0.25),
        "{late:?}"
    );
}

#[test]
fn the_result_has_the_latency_from_the_schedule_beside_the_actual_one() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    agent.queueing_us = 100.0;
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
    assert_eq!(
        result.from_schedule.len(),
        result.percentiles.len(),
        "{:?}",
        result.from_schedule
    );
    for (s, q) in result.from_schedule.iter().zip(&result.percentiles) {
        assert_eq!(s.p, q.p);
        // Every request waited 100 µs plus the 0.5 µs send lag before it left.
        assert!((s.value - s.actual - 100.5).abs() < 1.0, "{s:?}");
        // Every request's histogram and the kept samples tell the same latency.
        assert!(
            (s.actual - q.value).abs() < 0.05 * q.value,
            "{s:?} vs {q:?}"
        );
    }
}

#[test]
fn the_result_counts_each_agent_s_retried_requests_and_says_nothing_of_none() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    agent.retried = 3;
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let batches = agent.clock_ns / BATCH.as_nanos() as u64;
    let result = &c.results()[0];
    // Every batch's retried requests, warm-up included, none lost on the way.
    assert_eq!(
        result.agents[0].retried,
        3 * batches,
        "{:?}",
        result.agents[0]
    );
    assert_eq!(result.agents[0].errors, 0);
    let json = serde_json::to_value(result).unwrap();
    assert_eq!(
        json["agents"][0]["retried"],
        3 * batches,
        "{}",
        json["agents"]
    );

    // A run without any: the count is left out, and a record without it reads as none.
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    drive(
        &mut c,
        &mut FakeAgent::new(1, exp_latency(50.0)),
        Duration::from_secs(60),
    );
    let json = serde_json::to_value(&c.results()[0]).unwrap();
    assert!(
        json["agents"][0].get("retried").is_none(),
        "{}",
        json["agents"]
    );
    let read: PointResult = serde_json::from_value(json).unwrap();
    assert_eq!(read.agents[0].retried, 0);
}

#[test]
fn correlated_latencies_thin_the_sampling_by_the_lag() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    // AR(1) in the request sequence: each latency leans on the previous one.
    let mut agent = FakeAgent::new(2, |_, rng: &mut SmallRng, prev| {
        0.97 * prev + 3.0 * -(1.0 - rng.random::<f64>()).ln()
    });
    let events = drive(&mut c, &mut agent, Duration::from_secs(120));
    let independence = checks(&events, CheckKind::Independence);
    assert!(!independence[0].pass, "{}", independence[0].detail());
    assert!(
        independence[0]
            .decision()
            .starts_with("keep one request in")
    );
    assert!(
        matches!(independence[0].next, Some(CheckNext::KeepOneIn { lag }) if lag > 1),
        "{:?}",
        independence[0]
    );
    assert!(agent.sampling < 0.2 / 5.0, "sampling {}", agent.sampling);
    assert!(matches!(
        independence[0].data,
        Some(CheckData::Correlogram { .. })
    ));
}

/// An agent that applies each sampling change one batch late (the command and a batch
/// cross on the way): the batch of the old generation that arrives after the round began
/// is not counted in it, every batch is handed back with the round it was counted in, and
/// the result's samples are exactly those of the batches handed back with its round.
#[test]
fn batches_count_by_the_generation_they_acknowledge_and_come_back_with_their_round() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    // Correlated, so that the lag search asks for several rounds at thinner samplings.
    let mut agent = FakeAgent::new(2, |_, rng: &mut SmallRng, prev| {
        0.9 * prev + 5.0 * -(1.0 - rng.random::<f64>()).ln()
    });
    let mut at = Duration::ZERO;
    let mut pending = c.start(at).actions;
    let mut asked = 0u64;
    let (mut stale, mut counted) = (0usize, vec![(0u32, 0usize); 0]);
    while !c.is_done() && at < Duration::from_secs(120) {
        at += BATCH;
        let batch = agent.batch();
        // The actions of the last step reach the agent only now, after its batch left.
        for a in pending.drain(..) {
            if let Action::Sampling { generation, .. } = a {
                assert!(generation > asked, "generations only grow: {generation}");
                asked = generation;
            }
            agent.apply(&a);
        }
        let d = c.step(at, Input::Batch { agent: 0, batch });
        let taken = d.taken.expect("every batch comes back");
        assert_eq!((taken.point, taken.agent), (0, 0));
        if taken.batch.generation == asked {
            if taken.round > 0 {
                counted.push((taken.round, taken.batch.samples.len()));
            }
        } else {
            assert_eq!(taken.round, 0, "a stale batch is in no round");
            stale += 1;
        }
        pending = d.actions;
    }
    let result = &c.results()[0];
    assert!(result.tries >= 2, "{} tries: one round only", result.tries);
    assert!(
        stale >= 2,
        "{stale} stale batches: the agent was never late"
    );
    let recorded: usize = counted
        .iter()
        .filter(|(round, _)| *round == result.round)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(
        recorded, result.samples,
        "the record holds the result's samples"
    );
}

/// The reason a point at 8,000 req/s ends with, over `connections`, when only 5,000 req/s
/// leave and the rest wait for a slot (100 µs mean latency).
fn backlog_reason(connections: usize) -> Reason {
    let mut cfg = config();
    cfg.connections = connections;
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(8000.0));
    let mut agent = FakeAgent::new(3, exp_latency(100.0));
    agent.capacity = 5000.0;
    agent.slots_bound = true;
    drive(&mut c, &mut agent, Duration::from_secs(30));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    let reason = result.reasons[0].clone();
    assert_eq!(reason.kind(), ReasonKind::ClosedLoop, "{reason:?}");
    reason
}

#[test]
fn a_growing_backlog_is_a_closed_loop_with_the_connections_needed() {
    let reason = backlog_reason(1);
    let held: &HeldClosedLoop = figures!(reason, Why::ClosedLoop(ClosedLoop::Held(h)) => h);
    // More connections than given: the cure is the connections.
    assert!(held.connections_needed >= 2, "{held:?}");
    assert!(held.connections_needed > held.connections, "{held:?}");
}

#[test]
fn a_backlog_the_slots_could_carry_is_the_target_s_not_a_call_for_connections() {
    let reason = backlog_reason(64);
    let held: &HeldClosedLoop = figures!(reason, Why::ClosedLoop(ClosedLoop::Held(h)) => h);
    // Little's law's connections are fewer than given: the backlog is the target's.
    assert!(held.connections_needed <= held.connections, "{held:?}");
    assert!(held.achieved_rate < held.target_rate, "{held:?}");
}

/// A load that goes closed-loop only once measuring (warm-up saw the rate it asked) and
/// runs out of time is N/A closed_loop: the backlog is why the samples came short.
#[test]
fn a_measurement_that_turns_closed_loop_and_runs_out_of_time_says_closed_loop() {
    let mut cfg = vernier();
    cfg.connections = 1;
    cfg.ci.width = CiWidth::Absolute(Duration::from_nanos(10));
    cfg.limits.max_duration = Duration::from_secs(8);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(8000.0));
    let mut agent = FakeAgent::new(4, exp_latency(100.0));
    agent.slots_bound = true;
    let mut at = Duration::ZERO;
    let mut decision = c.start(at);
    while !c.is_done() && at < Duration::from_secs(20) {
        for a in &decision.actions {
            agent.apply(a);
            // The measurement's sampling (the point's second generation) slows the target.
            if let Action::Sampling { generation, .. } = a
                && generation & 0xffff_ffff >= 2
            {
                agent.capacity = 6000.0;
            }
        }
        at += BATCH;
        decision = c.step(
            at,
            Input::Batch {
                agent: 0,
                batch: agent.batch(),
            },
        );
    }
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    assert_eq!(
        result.reasons[0].kind(),
        ReasonKind::ClosedLoop,
        "{:?}",
        result.reasons
    );
}

#[test]
fn an_agent_that_falls_behind_is_load_not_reached() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(1_000_000.0));
    let mut agent = FakeAgent::new(4, exp_latency(20.0));
    agent.capacity = 150_000.0;
    drive(&mut c, &mut agent, Duration::from_secs(30));
    let reason = &c.results()[0].reasons[0];
    assert_eq!(reason.kind(), ReasonKind::LoadNotReached, "{reason:?}");
    let f: &NotReached = figures!(reason, Why::LoadNotReached(f) => f);
    assert!((f.achieved_rate - 150_000.0).abs() < 10_000.0, "{f:?}");
}

/// An agent whose latencies are lognormal (median 10 µs, σ = 2): a heavy tail of the
/// service's own.
fn lognormal_agent(seed: u64) -> FakeAgent {
    FakeAgent::new(seed, |_, rng: &mut SmallRng, _| {
        let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        10.0 * (2.0 * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()).exp()
    })
}

#[test]
fn a_lognormal_tail_is_na_heavy_tail_naming_the_width() {
    let mut cfg = config();
    cfg.ci.width = CiWidth::Absolute(Duration::from_micros(5));
    cfg.limits.max_duration = Duration::from_secs(20);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(20_000.0));
    let mut agent = lognormal_agent(5);
    drive(&mut c, &mut agent, Duration::from_secs(30));
    let result = &c.results()[0];
    let reason = &result.reasons[0];
    assert_eq!(reason.kind(), ReasonKind::HeavyTail, "{reason:?}");
    // The width named (the order statistics', a lower bound, when the samples were too
    // few for a dependence-valid CI) is wider than asked.
    let width = figures!(reason,
        Why::HeavyTail(HeavyTail::TooFew(f)) => f.ci_width_us,
        Why::HeavyTail(HeavyTail::Wide(w)) => w.ci_width_us);
    assert!(width > 5.0, "{reason:?}");
    // It gave up as soon as the prediction showed the limits could not be met.
    assert!(result.duration_s < 15.0, "{}", result.duration_s);
}

#[test]
fn an_slo_search_doubles_then_bisects_to_the_boundary() {
    let mut cfg = config();
    cfg.ci.width = CiWidth::Absolute(Duration::from_micros(100));
    cfg.slo = Some(Duration::from_micros(500));
    let plan = LoadPlan::Slo(SloSearch {
        percentile: Percentile::P99,
        below: Duration::from_micros(500),
        from: 5000.0,
        to: 100_000.0,
        precision: 0.05,
    });
    let mut c = Coordinator::new(cfg, &plan);
    // An M/M/1 with capacity 50,000 req/s: p99 = ln(100)/(μ − λ), below 500 µs up to
    // λ = 50,000 − 4.605/0.0005 = 40,790 req/s.
    let mut agent = FakeAgent::new(6, |rate, rng: &mut SmallRng, _| {
        let mean_us = 1e6 / (50_000.0 - rate).max(100.0);
        -mean_us * (1.0 - rng.random::<f64>()).ln()
    });
    drive(&mut c, &mut agent, Duration::from_secs(600));
    let found = c.slo_rate().unwrap();
    assert!(found < 40_790.0 && found > 40_790.0 * 0.9, "{found}");
    let rates: Vec<f64> = c.results().iter().map(|r| r.target_rate).collect();
    assert_eq!(
        &rates[..4],
        &[5000.0, 10_000.0, 20_000.0, 40_000.0],
        "{rates:?}"
    );
    assert_eq!(c.verdict(), Some(Verdict::Converged));
}

#[test]
fn a_sweep_is_na_if_any_point_is() {
    let mut cfg = config();
    cfg.limits.max_duration = Duration::from_secs(15);
    let mut c = Coordinator::new(cfg, &LoadPlan::Sweep(vec![10_000.0, 400_000.0]));
    let mut agent = FakeAgent::new(7, exp_latency(30.0));
    agent.capacity = 200_000.0;
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let verdicts: Vec<Verdict> = c.results().iter().map(|r| r.verdict).collect();
    assert_eq!(verdicts, vec![Verdict::Converged, Verdict::NotAvailable]);
    assert_eq!(c.verdict(), Some(Verdict::NotAvailable));
}

#[test]
fn pause_resume_set_load_accept_and_quit() {
    let mut cfg = config();
    // Narrow enough to need several rounds, reachable enough not to give up.
    cfg.ci.width = CiWidth::Absolute(Duration::from_micros(8));
    cfg.limits.max_duration = Duration::from_secs(3600);
    cfg.limits.max_tries = 100;
    let mut c = Coordinator::new(cfg, &LoadPlan::Sweep(vec![20_000.0, 30_000.0]));
    let mut agent = FakeAgent::new(8, exp_latency(50.0));
    let mut at = Duration::ZERO;
    let step =
        |c: &mut Coordinator, agent: &mut FakeAgent, at: &mut Duration, input: Option<Input>| {
            *at += BATCH;
            let input = input.unwrap_or_else(|| Input::Batch {
                agent: 0,
                batch: agent.batch(),
            });
            let d = c.step(*at, input);
            for a in &d.actions {
                agent.apply(a);
            }
            d
        };
    for a in c.start(at).actions {
        agent.apply(&a);
    }
    for _ in 0..200 {
        step(&mut c, &mut agent, &mut at, None);
    }
    let d = step(
        &mut c,
        &mut agent,
        &mut at,
        Some(Input::Command(UserCommand::Pause)),
    );
    assert!(d.actions.contains(&Action::Pause));
    assert_eq!(agent.rate, 0.0);
    let d = step(
        &mut c,
        &mut agent,
        &mut at,
        Some(Input::Command(UserCommand::Resume)),
    );
    assert!(d.actions.contains(&Action::Load { rate: 20_000.0 }));
    let d = step(
        &mut c,
        &mut agent,
        &mut at,
        Some(Input::Command(UserCommand::SetLoad(25_000.0))),
    );
    assert!(d.actions.contains(&Action::Load { rate: 25_000.0 }));
    assert!(d.events.iter().any(|e| matches!(
        &e.kind,
        EventKind::Phase {
            phase: Phase::Warmup,
            ..
        }
    )));
    // Measure a while, then accept: the point ends accepted with what it has.
    for _ in 0..300 {
        step(&mut c, &mut agent, &mut at, None);
    }
    step(
        &mut c,
        &mut agent,
        &mut at,
        Some(Input::Command(UserCommand::Accept)),
    );
    assert_eq!(c.results().len(), 1);
    assert_eq!(c.results()[0].verdict, Verdict::Accepted);
    assert!(c.results()[0].samples > 0);
    assert_eq!(c.results()[0].target_rate, 25_000.0);
    // The sweep goes on to its next load; quitting ends the run, keeping both results.
    let d = step(
        &mut c,
        &mut agent,
        &mut at,
        Some(Input::Command(UserCommand::Quit)),
    );
    assert!(d.actions.contains(&Action::Finished));
    assert!(c.is_done());
    assert_eq!(c.results().len(), 2);
    assert_eq!(c.results()[1].reasons[0].kind(), ReasonKind::Quit);
}

#[test]
fn continue_extends_the_limits_and_progress_carries_the_ccdf() {
    let mut cfg = config();
    // Too narrow to reach, and only 2 s allowed.
    cfg.ci.width = CiWidth::Absolute(Duration::from_micros(1));
    cfg.limits.max_duration = Duration::from_secs(2);
    cfg.limits.max_tries = 100;
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(11, exp_latency(50.0));
    let mut at = Duration::ZERO;
    for a in c.start(at).actions {
        agent.apply(&a);
    }
    let mut events = Vec::new();
    let mut continued = false;
    while !c.is_done() && at < Duration::from_secs(10) {
        at += BATCH;
        let input = if !continued && at >= Duration::from_secs(1) {
            continued = true;
            Input::Command(UserCommand::Continue)
        } else {
            Input::Batch {
                agent: 0,
                batch: agent.batch(),
            }
        };
        let d = c.step(at, input);
        for a in &d.actions {
            agent.apply(a);
        }
        events.extend(d.events);
    }
    let command = command_event(&events);
    assert!(command.contains("4s and 200 tries"), "{command}");
    // The point outlived its original 2 s, and ended only at the extended limit.
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    assert!(result.duration_s > 3.9, "{}", result.duration_s);
    // Its reason quotes the extended limit.
    let limit = match &result.reasons[0].why {
        Why::Confidence(Confidence::OutOfTime(t)) => t.max_duration_s,
        Why::HostStalls(HostStalls {
            kept: HostKept::OutOfTime(t),
            ..
        }) => t.max_duration_s,
        other => panic!("{other:#?}"),
    };
    assert_eq!(limit, 4.0, "{:?}", result.reasons);
    let progress: Vec<&Progress> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Progress(p) => Some(p),
            _ => None,
        })
        .collect();
    assert!(progress.iter().any(|p| p.max_duration_s == 4.0));
    let last = progress.last().unwrap();
    assert!(last.ccdf.len() >= 6, "{:?}", last.ccdf);
    for pair in last.ccdf.windows(2) {
        assert!(pair[0].0 <= pair[1].0 && pair[0].1 > pair[1].1, "{pair:?}");
    }
    // An exponential tail with a 50 µs mean: p99 near 50·ln 100 ≈ 230 µs.
    let p99 = last.ccdf.iter().find(|(_, l)| *l == 0.01).unwrap().0;
    assert!((180.0..290.0).contains(&p99), "{p99}");
}

#[test]
fn a_target_that_stops_answering_is_na_target_failed_with_the_time() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(12, exp_latency(50.0));
    let mut at = Duration::ZERO;
    for a in c.start(at).actions {
        agent.apply(&a);
    }
    let mut events = Vec::new();
    while !c.is_done() && at < Duration::from_secs(20) {
        at += BATCH;
        // The target dies 3 s in.
        agent.dead = at >= Duration::from_secs(3);
        let d = c.step(
            at,
            Input::Batch {
                agent: 0,
                batch: agent.batch(),
            },
        );
        for a in &d.actions {
            agent.apply(a);
        }
        events.extend(d.events);
    }
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    let reason = &result.reasons[0];
    assert_eq!(reason.kind(), ReasonKind::TargetFailed, "{reason:?}");
    let f: &TargetFailed = figures!(reason, Why::TargetFailed(f) => f);
    assert_eq!(f.at_s, 3.0);
    assert!(f.failed > 10_000, "{f:?}");
    // Noticed after a second of failures, not at the time limit.
    assert!(result.duration_s < 4.2, "{}", result.duration_s);
}

/// `config()` for `measures.len()` agents, each measuring or not.
fn config_for(measures: &[bool], on_agent_loss: OnAgentLoss) -> PointConfig {
    PointConfig {
        agents: measures.len(),
        measures: measures.to_vec(),
        lost: vec![None; measures.len()],
        on_agent_loss,
        ..config()
    }
}

/// Runs the coordinator against several agents, each told its share of the load by the
/// live count, as the session does; agent `lose.0` stops answering at `lose.1`.
fn drive_many(
    coordinator: &mut Coordinator,
    agents: &mut [FakeAgent],
    lose: Option<(usize, Duration)>,
    limit: Duration,
) -> Vec<Event> {
    let mut events = Vec::new();
    let mut at = Duration::ZERO;
    let mut lost = vec![false; agents.len()];
    let mut decision = coordinator.start(at);
    while !coordinator.is_done() && at < limit {
        let live = lost.iter().filter(|l| !**l).count().max(1) as f64;
        for a in &decision.actions {
            for (i, agent) in agents.iter_mut().enumerate() {
                let a = match a {
                    Action::Load { rate } => Action::Load { rate: rate / live },
                    other => *other,
                };
                if !lost[i] {
                    agent.apply(&a);
                }
            }
        }
        events.append(&mut decision.events);
        at += BATCH;
        if let Some((agent, when)) = lose
            && at >= when
            && !lost[agent]
        {
            lost[agent] = true;
            // Its heartbeat and its stream both report it.
            for _ in 0..2 {
                let mut d = coordinator.step(
                    at,
                    Input::AgentLost {
                        agent,
                        detail: "heartbeat failed".into(),
                    },
                );
                events.append(&mut d.events);
                decision.actions.append(&mut d.actions);
            }
            continue;
        }
        for (i, agent) in agents.iter_mut().enumerate() {
            if lost[i] {
                continue;
            }
            let mut d = coordinator.step(
                at,
                Input::Batch {
                    agent: i,
                    batch: agent.batch(),
                },
            );
            events.append(&mut d.events);
            decision.actions.append(&mut d.actions);
        }
    }
    events.append(&mut decision.events);
    assert_reasons_follow_from_figures(coordinator);
    events
}

/// A coordinator for `plan` run against fake agents (measuring or not, with exponential
/// latencies of mean 50 µs), agent `lose.0` lost at `lose.1`; the coordinator and its
/// events.
fn run_agents(
    measures: &[bool],
    on_agent_loss: OnAgentLoss,
    plan: LoadPlan,
    lose: Option<(usize, u64)>,
) -> (Coordinator, Vec<Event>) {
    let mut c = Coordinator::new(config_for(measures, on_agent_loss), &plan);
    let mut agents: Vec<FakeAgent> = (0..measures.len() as u64)
        .map(|i| FakeAgent::new(i, exp_latency(50.0)))
        .collect();
    for (agent, measures) in agents.iter_mut().zip(measures) {
        agent.loads_only = !measures;
    }
    let lose = lose.map(|(agent, s)| (agent, Duration::from_secs(s)));
    let events = drive_many(&mut c, &mut agents, lose, Duration::from_secs(240));
    (c, events)
}

#[test]
fn an_agent_without_an_interval_of_its_own_is_too_few_samples_not_a_disagreement() {
    // Lancet's p99.9 interval needs 5,661 independent samples at 95%. Two agents of
    // 3,000-odd each have one combined but neither its own: whether they agree is unknown,
    // not failed. The check names the agent and what would do, the point collects more
    // (too few samples, which more samples cure), and the next round judges agreement.
    let mut cfg = config_for(&[true, true], OnAgentLoss::Stop);
    cfg.ci.percentile = Percentile::P99_9;
    cfg.percentiles = vec![Percentile::P50, Percentile::P99_9];
    cfg.ci.width = CiWidth::Absolute(Duration::from_millis(10));
    cfg.sampling.samples = 2_000;
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(4_000.0));
    let mut agents: Vec<FakeAgent> = (1..=2)
        .map(|s| FakeAgent::new(s, exp_latency(50.0)))
        .collect();
    let events = drive_many(&mut c, &mut agents, None, Duration::from_secs(120));
    let agreement = checks(&events, CheckKind::Agreement);
    let first = agreement.first().unwrap_or_else(|| panic!("{events:#?}"));
    assert!(!first.pass && first.statistic.is_none(), "{first:?}");
    let least = vernier_stats::min_samples_for_ci(0.999, 0.95).unwrap();
    let said = format!(
        "agent 0 has no p99.9 interval of its own yet (too few samples for the p99.9 CI at 95%: it needs at least {least}, there are "
    );
    assert!(first.detail().starts_with(&said), "{}", first.detail());
    assert!(first.decision().starts_with("collect more"), "{first:?}");
    assert!(
        matches!(&first.found, Found::Agreement(f) if f.without.as_ref().is_some_and(|w| w.0 == 0)),
        "{first:?}"
    );
    assert!(
        matches!(first.next, Some(CheckNext::CollectMore { .. })),
        "{first:?}"
    );
    // Each agent then has its own, and they are judged.
    assert!(
        agreement.iter().skip(1).any(|a| a.statistic.is_some()),
        "{agreement:#?}"
    );
    let result = &c.results()[0];
    assert!(
        (result.reasons.iter()).all(|r| r.kind() != ReasonKind::AgentsDisagree),
        "{:#?}",
        result.reasons
    );
}

#[test]
fn a_lost_agent_ends_the_point_unless_the_scenario_says_continue() {
    // stop (the default): N/A agent_lost, naming it.
    let three = [true, true, true];
    let (c, _) = run_agents(
        &three,
        OnAgentLoss::Stop,
        LoadPlan::Fixed(20_000.0),
        Some((2, 3)),
    );
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    assert_eq!(result.reasons[0].kind(), ReasonKind::AgentLost);
    let lost = figures!(result.reasons[0], Why::AgentLost(f) => f);
    assert_eq!(lost.agent, 2, "{lost:?}");

    // continue: the two others take over its load, warm-up starts again, and the point
    // converges without it; the result says which agent was lost and why.
    let sweep = LoadPlan::Sweep(vec![20_000.0, 30_000.0]);
    let (c, events) = run_agents(&three, OnAgentLoss::Continue, sweep, Some((2, 3)));
    assert_eq!(c.results().len(), 2, "both points ran");
    for result in c.results() {
        assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
        assert_eq!(result.agents[2].lost.as_deref(), Some("heartbeat failed"));
        assert!(result.agents[..2].iter().all(|a| a.lost.is_none()));
        // The two left each carried half the load.
        for a in &result.agents[..2] {
            let half = result.target_rate / 2.0;
            assert!(
                (a.achieved_rate - half).abs() < 0.2 * half,
                "{a:?} of {half}"
            );
        }
        // Their own intervals overlap (the agreement check passed).
        let (a, b) = (
            result.agents[0].percentile.as_ref().unwrap(),
            result.agents[1].percentile.as_ref().unwrap(),
        );
        assert!(a.ci_low.unwrap() <= b.ci_high.unwrap() && b.ci_low.unwrap() <= a.ci_high.unwrap());
    }
    let restarts: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Phase {
                phase: Phase::Warmup,
                detail,
            } if detail.contains("was lost") => Some(detail.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        restarts.len(),
        1,
        "one restart, not one per report: {restarts:?}"
    );
    assert!(
        restarts[0].contains("2 agent(s) take over its load"),
        "{restarts:?}"
    );
    assert!(!checks(&events, CheckKind::Agreement).is_empty());
}

#[test]
fn a_throughput_agent_loads_but_is_not_waited_for_and_cannot_be_the_last() {
    // Lancet's asymmetric set-up: agent 0 loads only, agent 1 measures.
    let asymmetric = [false, true];
    let (c, _) = run_agents(
        &asymmetric,
        OnAgentLoss::Continue,
        LoadPlan::Fixed(20_000.0),
        None,
    );
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);

    // With continue, losing the only measuring agent still ends the point.
    let (c, _) = run_agents(
        &asymmetric,
        OnAgentLoss::Continue,
        LoadPlan::Fixed(20_000.0),
        Some((1, 3)),
    );
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    assert_eq!(result.reasons[0].kind(), ReasonKind::AgentLost);
}

/// A point at 20,000 req/s whose agent sends at regular gaps, not the exponential ones
/// asked, with the inter-arrival test `enforced` or only reported.
fn regular_gaps(enforced: bool) -> (Coordinator, FakeAgent) {
    let c = Coordinator::new(
        PointConfig {
            interarrival_enforced: enforced,
            ..config()
        },
        &LoadPlan::Fixed(20_000.0),
    );
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    agent.regular = true;
    (c, agent)
}

#[test]
fn interarrival_check_report_measures_anyway_and_the_result_says_so() {
    for enforced in [true, false] {
        let (mut c, mut agent) = regular_gaps(enforced);
        let events = drive(&mut c, &mut agent, Duration::from_secs(60));
        let result = &c.results()[0];
        let failed = checks(&events, CheckKind::Interarrival);
        assert!(
            failed.iter().all(|c| !c.pass),
            "regular gaps are not exponential"
        );
        if enforced {
            assert_eq!(result.verdict, Verdict::NotAvailable);
            assert_eq!(result.reasons[0].kind(), ReasonKind::Interarrival);
            assert!(result.waived.is_empty());
        } else {
            // One test, reported; the measurement goes on to a verdict of its own.
            assert_eq!(failed.len(), 1);
            assert_eq!(failed[0].next, Some(CheckNext::InterarrivalNotEnforced));
            assert!(
                failed[0].decision().contains("not enforced"),
                "{}",
                failed[0].decision()
            );
            assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
            assert_eq!(result.waived.len(), 1);
            // Only reported: no tries were spent giving up on it.
            let waived = figures!(
                result.waived[0],
                Why::Interarrival(Interarrival::Failed(f)) => f
            );
            assert_eq!(waived.tries, None, "{waived:?}");
        }
    }
}

/// A point paused while it measures with a waived inter-arrival failure, then accepted,
/// still reports the waiver: the pause carries the failures of the round it paused.
#[test]
fn a_pause_keeps_the_waived_failures_of_the_round_it_paused() {
    let (mut c, mut agent) = regular_gaps(false);
    let mut at = Duration::ZERO;
    for a in c.start(at).actions {
        agent.apply(&a);
    }
    // Into the round, and a few batches of it.
    let mut batches_measured = 0;
    while batches_measured < 5 {
        let d = step_batch(&mut c, &mut agent, &mut at);
        if batches_measured > 0 || d.events.iter().any(|e| is_phase(e, Phase::Measure)) {
            batches_measured += 1;
        }
        assert!(at < Duration::from_secs(30), "no round began");
    }
    for command in [UserCommand::Pause, UserCommand::Accept] {
        at += BATCH;
        c.step(at, Input::Command(command));
    }
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Accepted, "{:#?}", result.reasons);
    assert_eq!(result.waived.len(), 1, "{:#?}", result.waived);
}

/// One batch of `agent`'s, `BATCH` after `at` (moved on), its actions applied.
fn step_batch(c: &mut Coordinator, agent: &mut FakeAgent, at: &mut Duration) -> Decision {
    *at += BATCH;
    let d = c.step(
        *at,
        Input::Batch {
            agent: 0,
            batch: agent.batch(),
        },
    );
    for a in &d.actions {
        agent.apply(a);
    }
    d
}

fn is_phase(event: &Event, phase: Phase) -> bool {
    matches!(&event.kind, EventKind::Phase { phase: p, .. } if *p == phase)
}

// ---- method: vernier ----

fn vernier() -> PointConfig {
    PointConfig {
        method: Method::Vernier,
        ..config()
    }
}

#[test]
fn vernier_widens_the_ci_for_correlation_instead_of_thinning() {
    let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(20_000.0));
    // The AR(1) series Lancet's procedure thins by its lag (above).
    let mut agent = FakeAgent::new(2, |_, rng: &mut SmallRng, prev| {
        0.97 * prev + 3.0 * -(1.0 - rng.random::<f64>()).ln()
    });
    let events = drive(&mut c, &mut agent, Duration::from_secs(120));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:?}", result.reasons);
    // policy::MAX_KEPT_PER_SECOND samples a second per agent at most (10,000: 1 in 2 at
    // 20,000 req/s), and never thinned further by the lag search.
    assert!(
        (agent.sampling - super::policy::MAX_KEPT_PER_SECOND / 20_000.0).abs() < 1e-12,
        "sampling {}",
        agent.sampling
    );
    let independence = checks(&events, CheckKind::Independence);
    assert!(!independence[0].pass, "{}", independence[0].detail());
    assert!(
        matches!(
            independence[0].next,
            Some(CheckNext::CorrelationAllowed { .. })
        ),
        "{:?}",
        independence[0]
    );
    assert!(
        independence[0].decision().contains("the CI allows for it"),
        "{}",
        independence[0].decision()
    );
    let p99 = result.target().unwrap();
    let dependence = p99.dependence.as_ref().unwrap();
    // Independent samples give 1; this series' kept samples (1 in 10 of an AR(1) at 0.97,
    // so 0.74 from one to the next) gave 4.5 with this seed.
    assert!(dependence.variance_inflation > 3.0, "{dependence:?}");
    assert!(dependence.batches >= vernier_stats::MIN_BATCHES);
    // The departures were judged by their effect, and passed.
    let departures = checks(&events, CheckKind::Departures);
    assert!(departures[0].pass, "{}", departures[0].detail());
}

#[test]
fn vernier_ends_na_departures_when_late_requests_move_the_answer() {
    let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(5000.0));
    let mut agent = FakeAgent::new(11, exp_latency(50.0));
    // 3% of requests leave 2 ms late and come back as late: p99 is theirs.
    agent.late = (0.03, 2000.0);
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    let reason = &result.reasons[0];
    assert_eq!(reason.kind(), ReasonKind::Departures, "{reason:?}");
    let f: &DepartureFinding = figures!(reason, Why::Departures(d) => &d.lateness);
    assert!(f.all_us > 1000.0, "{f:?}");
    assert!(f.on_schedule_us.is_some_and(|v| v < 400.0), "{f:?}");
    // Most requests on time, some late, no probe to name: the client's host stalls.
    assert_eq!(f.cause, LateCause::UnseenStalls, "{f:?}");
}

#[test]
fn a_brief_backlog_while_the_client_is_quiet_is_a_target_pause_with_the_connections_to_ride_it() {
    let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(5000.0));
    let mut agent = FakeAgent::new(11, exp_latency(50.0));
    // The target paused: every connection waited at once, 16 due requests were held back,
    // and they left (and came back) 2 ms late; the client's host probe saw nothing.
    agent.late = (0.03, 2000.0);
    agent.blips = (50, 16);
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let reason = &c.results()[0].reasons[0];
    assert_eq!(reason.kind(), ReasonKind::ClosedLoop, "{reason:?}");
    let f: &ClosedLoopMoment = figures!(reason, Why::ClosedLoop(ClosedLoop::Moment(m)) => m);
    assert!(
        matches!(f.lateness.cause, LateCause::TargetPaused { .. }),
        "{f:?}"
    );
    // 5,000 req/s through a 2 ms pause: ten requests due while it lasts, at depth 1.
    assert_eq!(f.connections_needed, 10, "{f:?}");
}

#[test]
fn vernier_accepts_late_requests_that_do_not_move_the_answer() {
    let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(5000.0));
    let mut agent = FakeAgent::new(12, exp_latency(50.0));
    // A few requests a little late: p99 does not notice.
    agent.late = (0.002, 30.0);
    let events = drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:?}", result.reasons);
    assert!(checks(&events, CheckKind::Departures)[0].pass);
}

#[test]
fn vernier_names_a_heavy_tail_only_when_the_tail_is_heavy() {
    for (heavy, seed) in [(true, 5), (false, 13)] {
        let mut cfg = vernier();
        cfg.ci.width = CiWidth::Absolute(Duration::from_micros(if heavy { 5 } else { 1 }));
        cfg.limits.max_duration = Duration::from_secs(20);
        let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(20_000.0));
        let mut agent = if heavy {
            lognormal_agent(seed)
        } else {
            // Exponential service at a light load: narrow tail, just a too-tight target.
            FakeAgent::new(seed, exp_latency(50.0))
        };
        drive(&mut c, &mut agent, Duration::from_secs(30));
        let reason = &c.results()[0].reasons[0];
        let want = if heavy {
            ReasonKind::HeavyTail
        } else {
            ReasonKind::Confidence
        };
        assert_eq!(reason.kind(), want, "{reason:?}");
    }
}

#[test]
fn vernier_ends_na_stationarity_when_the_latency_drifts() {
    let mut cfg = vernier();
    cfg.limits.max_duration = Duration::from_secs(30);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(5000.0));
    // A service time that grows during the run: a random walk with an upward drift.
    let mut agent = FakeAgent::new(14, |_, rng: &mut SmallRng, prev| {
        prev.max(50.0) + (rng.random::<f64>() - 0.45)
    });
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    // Caught in warm-up (the per-window series) or in measurement (the samples).
    assert!(
        matches!(
            result.reasons[0].kind(),
            ReasonKind::Stationarity | ReasonKind::WarmupStationarity
        ),
        "{:?}",
        result.reasons
    );
}

/// A probe's half-second report as the session would send it: `wakeups` 1 ms apart, one
/// of them a stall of `max_us`.
fn stall_report(cpu: Option<usize>, max_us: f64) -> vernier_agent::StallReport {
    let mut r = vernier_agent::StallReport::default();
    r.cpu = cpu;
    r.period_us = 1000.0;
    r.seconds = 0.5;
    r.wakeups = 490;
    r.late_p50_us = 50.0;
    r.late_p99_us = 400.0;
    r.late_max_us = max_us;
    r.stalls_over_1ms = 1;
    r.stalled_share = 0.002;
    r
}

#[test]
fn the_result_carries_the_host_stalls_seen_while_its_round_measured() {
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    // Host inputs the current round took in (those outside measurement are dropped).
    let (mut round, mut counted) = (0, 0u64);
    let events = drive_with(&mut c, &mut agent, Duration::from_secs(60), |c, n| {
        if !n.is_multiple_of(25) {
            return None;
        }
        let (_, now) = c.position();
        if now != round {
            (round, counted) = (now, 0);
        }
        counted += u64::from(now > 0);
        // The pinned core stalls for 3 ms once, late in the run.
        let max_us = if n == 25 * 8 { 3_000.0 } else { 1_500.0 };
        Some(vec![
            stall_report(Some(1), max_us),
            stall_report(None, 900.0),
        ])
    });
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
    assert!(counted >= 2, "{counted} host reports while measuring");
    let [pinned, coordinator] = result.host.as_slice() else {
        panic!("{:?}", result.host)
    };
    assert_eq!(pinned.cpu, Some(1));
    assert_eq!(coordinator.cpu, None);
    for (host, max_us) in [(pinned, None), (coordinator, Some(900.0))] {
        assert_eq!(host.wakeups, 490 * counted, "{host:?}");
        assert_eq!(host.stalls_over_1ms, counted);
        assert!((host.seconds - 0.5 * counted as f64).abs() < 1e-9);
        assert!((host.late_p50_us - 50.0).abs() < 1e-9);
        assert!((host.late_p99_us - 400.0).abs() < 1e-9);
        assert!((host.stalled_share - 0.002).abs() < 1e-12);
        if let Some(max_us) = max_us {
            assert_eq!(host.late_max_us, max_us);
        }
    }
    assert!(
        [1_500.0, 3_000.0].contains(&pinned.late_max_us),
        "{pinned:?}"
    );
    // The live figures carry them too, and a record of the result reads them back.
    assert!(events.iter().any(
        |e| matches!(&e.kind, EventKind::Progress(p) if p.host.len() == 2 && p.host[0].wakeups > 0)
    ));
    let json = serde_json::to_string(result).unwrap();
    assert!(json.contains("\"host\":[{\"cpu\":1,"), "{json}");
    let back: PointResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back.host, result.host);
}

#[test]
fn a_round_that_ends_before_the_probes_report_keeps_the_last_round_s_host_figures() {
    // Correlated latencies: the lag search starts a second round at a thinner sampling.
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(2, |_, rng: &mut SmallRng, prev| {
        0.97 * prev + 3.0 * -(1.0 - rng.random::<f64>()).ln()
    });
    // The probes report only while the first round measures, as when every later round
    // ends within the half second before their next report.
    let mut reported = 0;
    drive_with(&mut c, &mut agent, Duration::from_secs(120), |c, n| {
        let (_, round) = c.position();
        (round == 1 && n.is_multiple_of(25)).then(|| {
            reported += 1;
            vec![stall_report(Some(1), 1_500.0)]
        })
    });
    let result = &c.results()[0];
    assert!(result.round >= 2, "one round only: {result:?}");
    assert!(reported >= 1);
    let [pinned] = result.host.as_slice() else {
        panic!("{:?}", result.host)
    };
    assert_eq!(pinned.wakeups, 490 * reported);
    assert_eq!(pinned.late_max_us, 1_500.0);
}

#[test]
fn a_point_that_never_measures_keeps_the_host_figures_of_its_warm_up() {
    // An agent that falls behind never leaves warm-up: its N/A still cites what the host
    // did meanwhile (a 4 s run on a stalling host once ended with no host figures at all).
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(1_000_000.0));
    let mut agent = FakeAgent::new(4, exp_latency(20.0));
    agent.capacity = 150_000.0;
    let mut reported = 0;
    drive_with(&mut c, &mut agent, Duration::from_secs(30), |c, n| {
        assert_eq!(c.position().1, 0, "the point measured");
        n.is_multiple_of(25).then(|| {
            reported += 1;
            vec![stall_report(Some(1), 2_000.0)]
        })
    });
    let result = &c.results()[0];
    assert_eq!(
        result.reasons[0].kind(),
        ReasonKind::LoadNotReached,
        "{result:?}"
    );
    assert!(reported >= 2);
    let [pinned] = result.host.as_slice() else {
        panic!("{:?}", result.host)
    };
    // Every report since the (only) warm-up began.
    assert_eq!(pinned.wakeups, 490 * reported);
    assert_eq!(pinned.late_max_us, 2_000.0);
}

/// A point that runs out of time while measuring, with the probe reporting `report` every
/// half second, and too few samples for any CI at the limit's look: its one reason.
fn out_of_time_with_probe(report: vernier_agent::StallReport) -> Reason {
    let mut cfg = vernier();
    // More samples than 10 s can give: the clock, not an evaluation, ends the point, and
    // its look at the limit has 20,000 samples, some 20 beyond p99.9 where a CI needs 30.
    cfg.sampling.samples = 10_000_000;
    cfg.limits.max_duration = Duration::from_secs(10);
    cfg.ci.percentile = Percentile::P99_9;
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(3, exp_latency(50.0));
    let events = drive_with(&mut c, &mut agent, Duration::from_secs(30), |_, n| {
        n.is_multiple_of(25).then(|| vec![report.clone()])
    });
    assert!(
        events.iter().any(|e| matches!(
            &e.kind,
            EventKind::Phase {
                phase: Phase::Measure,
                ..
            }
        )),
        "the point never measured"
    );
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    let [reason] = result.reasons.as_slice() else {
        panic!("{:?}", result.reasons)
    };
    // The time limit's look found too few samples for a CI: its figures are that look's.
    let too_few = match &reason.why {
        Why::TooFewSamples(reason::TooFewSamples::Ci(t)) => t,
        Why::HostStalls(HostStalls {
            kept: HostKept::TooFew(t),
            ..
        }) => t,
        other => panic!("{other:#?}"),
    };
    assert!(too_few.samples < too_few.min_samples, "{too_few:?}");
    reason.clone()
}

#[test]
fn out_of_time_names_the_host_s_stalls_when_they_explain_the_tail() {
    // Stalls of 3 ms for 0.5% of the time: half of p99's 1% tail.
    let mut heavy = stall_report(Some(1), 3_000.0);
    heavy.stalls_over_1ms = 3;
    heavy.stalled_share = 0.005;
    let reason = out_of_time_with_probe(heavy);
    assert_eq!(reason.kind(), ReasonKind::HostStalls, "{reason:?}");
    let f: &HostStalls = figures!(reason, Why::HostStalls(f) => f);
    assert_eq!(f.host_late_max_us, 3_000.0, "{f:?}");
    assert!((f.host_stalled_share - 0.005).abs() < 1e-12, "{f:?}");
    assert_eq!(f.host_late_p99_us, 400.0, "{f:?}");
    assert_eq!(f.host.cpu, Some(1), "{f:?}");
}

#[test]
fn out_of_time_stays_the_tail_s_own_cause_when_the_host_is_quiet() {
    let mut quiet = stall_report(Some(1), 300.0);
    quiet.late_p99_us = 100.0;
    quiet.stalls_over_1ms = 0;
    quiet.stalled_share = 0.0;
    let reason = out_of_time_with_probe(quiet);
    assert_eq!(reason.kind(), ReasonKind::TooFewSamples, "{reason:?}");
}

fn replicated(min: u32, max: u32, width: CiWidth) -> PointConfig {
    PointConfig {
        ci: CiTarget {
            width: CiWidth::Relative(0.2),
            ..vernier().ci
        },
        replications: Some(Replications {
            min,
            max,
            width,
            pause: Duration::from_millis(500),
        }),
        ..vernier()
    }
}

#[test]
fn replicated_runs_agreeing_converge_on_the_ci_across_them() {
    let mut c = Coordinator::new(
        replicated(3, 6, CiWidth::Relative(0.08)),
        &LoadPlan::Fixed(20_000.0),
    );
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    let events = drive(&mut c, &mut agent, Duration::from_secs(600));
    assert!(c.is_done());
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
    let rep = result.replication.as_deref().expect("the runs");
    let k = rep.runs.len();
    assert!((3..=6).contains(&k), "{k} runs");
    // Each run its own result, fresh connections between runs, rounds numbered on.
    assert_eq!(agent.renewals as usize, k - 1);
    for (i, run) in rep.runs.iter().enumerate() {
        assert_eq!(run.run, Some(i as u32 + 1));
        assert_eq!(run.verdict, Verdict::Converged, "{:#?}", run.reasons);
    }
    let rounds: Vec<u32> = rep.runs.iter().map(|r| r.round).collect();
    assert!(rounds.windows(2).all(|w| w[0] < w[1]), "{rounds:?}");
    // The point's p99 is the runs' mean with the t-interval across them, within the width
    // asked, and around the exponential's p99 (50·ln 100 = 230 µs).
    let p99 = result.target().unwrap();
    let across = rep.across.iter().find(|a| a.p == 99.0).unwrap();
    assert_eq!(across.estimates.len(), k);
    let mean = across.estimates.iter().sum::<f64>() / k as f64;
    assert!((p99.value - mean).abs() < 1e-9);
    let (low, high) = (p99.ci_low.unwrap(), p99.ci_high.unwrap());
    assert!(
        high - low <= 0.08 * mean + 1e-9,
        "[{low}, {high}] around {mean}"
    );
    assert!((low..=high).contains(&230.3) || (p99.value - 230.3).abs() < 15.0);
    assert!(!rep.hysteresis, "{:?}", rep.spread);
    assert!(rep.method.to_string().contains("t-interval"));
    // One verdict event for the point, a run event for each run.
    let verdicts = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Verdict(_)))
        .count();
    let runs = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Run(_)))
        .count();
    assert_eq!((verdicts, runs), (1, k));
}

#[test]
fn runs_that_differ_by_a_bias_end_na_hysteresis_naming_the_spread() {
    let mut c = Coordinator::new(
        replicated(3, 4, CiWidth::Relative(0.05)),
        &LoadPlan::Fixed(20_000.0),
    );
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    // Each run 40 µs above the last: far beyond each run's own CI of p99.
    agent.run_shift_us = 40.0;
    drive(&mut c, &mut agent, Duration::from_secs(600));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    let rep = result.replication.as_deref().unwrap();
    assert_eq!(rep.runs.len(), 4, "the runs up to the most allowed");
    let reason = &result.reasons[0];
    assert_eq!(
        reason.kind(),
        ReasonKind::Hysteresis,
        "{:#?}",
        result.reasons
    );
    let h = rep.disagreement().unwrap();
    assert!(h.i2.unwrap() > 0.9, "{h:?}");
    assert!(h.high - h.low > 100.0, "{h:?}");
    assert!(!h.disjoint.is_empty());
    let f = figures!(reason, Why::Hysteresis(f) => f);
    assert!(f.spread_us > 100.0, "{f:?}");
    assert!(f.disjoint, "{f:?}");
    eprintln!("{}", reason.detail());
    // Every run's estimate is named.
    for (run, named) in rep.runs.iter().zip(&f.per_run) {
        assert_eq!(*named, Some(run.target().unwrap().value), "{f:?}");
    }
}

#[test]
fn runs_too_noisy_for_the_width_end_na_replications_not_hysteresis() {
    // Runs that agree within their CIs, but a width no four runs reach.
    let mut c = Coordinator::new(
        replicated(2, 4, CiWidth::Relative(0.001)),
        &LoadPlan::Fixed(20_000.0),
    );
    let mut agent = FakeAgent::new(3, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(600));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    assert_eq!(
        result.reasons[0].kind(),
        ReasonKind::Replications,
        "{:#?}",
        result.reasons
    );
    let f = figures!(result.reasons[0], Why::Replications(f) => f);
    assert!(f.runs_needed > 4.0, "{f:?}");
    // Every run had its own CI: the spread is judged, and not found beyond them.
    let rep = result.replication.as_deref().unwrap();
    let spread = rep.spread.as_ref().expect("the runs' spread");
    assert!(!spread.disagrees(replication::HYSTERESIS_I2), "{spread:?}");
    // Their own CIs explain the spread: I² is known (every run had a CI).
    assert!(f.i2.is_some(), "{f:?}");
}

#[test]
fn a_run_that_fails_for_a_cause_ends_the_replicated_point() {
    let mut c = Coordinator::new(
        replicated(3, 6, CiWidth::Relative(0.05)),
        &LoadPlan::Fixed(20_000.0),
    );
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    agent.capacity = 10_000.0;
    drive(&mut c, &mut agent, Duration::from_secs(600));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::NotAvailable);
    assert_eq!(
        result.reasons[0].kind(),
        ReasonKind::LoadNotReached,
        "{:#?}",
        result.reasons
    );
    assert_eq!(result.reasons[0].run, Some(1), "{:#?}", result.reasons);
    assert_eq!(result.replication.as_deref().unwrap().runs.len(), 1);
    assert_eq!(agent.renewals, 0);
}

#[test]
fn replicated_points_of_a_sweep_stop_the_load_between_runs_and_points() {
    let mut c = Coordinator::new(
        replicated(2, 2, CiWidth::Relative(0.9)),
        &LoadPlan::Sweep(vec![20_000.0, 10_000.0]),
    );
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(600));
    assert_eq!(c.results().len(), 2);
    for r in c.results() {
        assert_eq!(r.replication.as_deref().unwrap().runs.len(), 2);
    }
    // Four runs: each load after the first comes after a pause (and, within a point, new
    // connections).
    let loads: Vec<usize> = agent
        .applied
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a, Action::Load { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(loads.len(), 4, "{:?}", agent.applied);
    for w in loads.windows(2) {
        assert!(
            agent.applied[w[0]..w[1]].contains(&Action::Pause),
            "{:?}",
            agent.applied
        );
    }
    assert_eq!(agent.renewals, 2, "one renewal per point's second run");
}

#[test]
fn accepting_during_a_run_ends_the_replicated_point_with_it() {
    let mut c = Coordinator::new(
        replicated(3, 6, CiWidth::Relative(0.001)),
        &LoadPlan::Fixed(20_000.0),
    );
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    let mut at = Duration::ZERO;
    let mut decision = c.start(at);
    let mut accepted = false;
    let mut measured = 0;
    while !c.is_done() && at < Duration::from_secs(600) {
        for a in &decision.actions {
            agent.apply(a);
        }
        at += BATCH;
        if agent.run == 2 && c.position().1 > 0 {
            measured += 1;
        }
        // Once run 2 has measured for a fifth of a second (its first look comes after half
        // a second), the user accepts.
        let input = if !accepted && measured > 10 {
            accepted = true;
            Input::Command(UserCommand::Accept)
        } else {
            Input::Batch {
                agent: 0,
                batch: agent.batch(),
            }
        };
        decision = c.step(at, input);
    }
    assert!(
        accepted && c.is_done(),
        "accepted {accepted}, done {}, at {at:?}: {:#?}",
        c.is_done(),
        c.results()
            .first()
            .map(|r| (&r.verdict, &r.reasons, r.duration_s))
    );
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Accepted, "{:#?}", result.reasons);
    let rep = result.replication.as_deref().unwrap();
    assert_eq!(rep.runs.len(), 2);
    assert_eq!(rep.runs[1].verdict, Verdict::Accepted);
    assert!(result.target().unwrap().ci_low.is_some());
}

/// A stalling host whose worker wakes late: most requests leave 60 µs late with free
/// slots, and a 13 ms stall fills every slot for an instant now and then (the demo's
/// 2,000 req/s point over 32 connections on this host, 1.6% of its time stalled).
fn late_waking_host(agent_seed: u64) -> (FakeAgent, vernier_agent::StallReport) {
    let mut agent = FakeAgent::new(agent_seed, exp_latency(50.0));
    agent.late = (0.7, 60.0);
    agent.blips = (50, 16);
    let mut stalls = stall_report(None, 13_000.0);
    stalls.late_p50_us = 59.0;
    stalls.late_p99_us = 496.0;
    stalls.stalls_over_1ms = 8;
    stalls.stalled_share = 0.016;
    (agent, stalls)
}

#[test]
fn a_late_waking_host_that_runs_out_of_time_is_the_host_s_stalls_not_a_closed_loop() {
    let mut cfg = vernier();
    cfg.sampling.samples = 10_000_000;
    cfg.limits.max_duration = Duration::from_secs(10);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2000.0));
    let (mut agent, stalls) = late_waking_host(5);
    drive_with(&mut c, &mut agent, Duration::from_secs(30), |_, n| {
        n.is_multiple_of(25).then(|| vec![stalls.clone()])
    });
    let result = &c.results()[0];
    let [reason] = result.reasons.as_slice() else {
        panic!("{:?}", result.reasons)
    };
    // Before: "closed loop: 32 connection(s) × depth 1 per agent cannot carry 2000 req/s
    // ... (0 requests waiting for a free slot); by Little's law 4 connection(s) would".
    // The host's stalls: as the tail's cause, or as the cause of the late departures that
    // moved it (the limit's look was as narrow as asked).
    assert!(names_the_host(reason), "{reason:?}");
}

/// Whether `reason` puts what it found on the host's stalls: `host_stalls`, or late
/// departures whose cause is the host's.
fn names_the_host(reason: &Reason) -> bool {
    match &reason.why {
        Why::HostStalls(_) => true,
        Why::Departures(d) => matches!(
            d.lateness.cause,
            LateCause::WokenLate { .. } | LateCause::HostStalls { .. }
        ),
        _ => false,
    }
}

#[test]
fn a_backlog_the_host_s_stalls_made_with_connections_enough_is_the_host_s() {
    // The host takes the core for 13 ms now and then (1.6% of the time): every reply
    // waits, the requests due meanwhile wait for a slot in most reports, and most leave
    // late. 16 connections carry 2,000 req/s at 50 µs many times over: the backlog is the
    // stalls', and the reason says host_stalls, not "16 connections cannot carry it".
    let mut cfg = vernier();
    cfg.sampling.samples = 10_000_000;
    cfg.limits.max_duration = Duration::from_secs(10);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2000.0));
    let (mut agent, stalls) = late_waking_host(5);
    agent.late = (0.7, 150.0);
    agent.blips = (1, 16);
    drive_with(&mut c, &mut agent, Duration::from_secs(30), |_, n| {
        n.is_multiple_of(25).then(|| vec![stalls.clone()])
    });
    let result = &c.results()[0];
    let kinds: Vec<ReasonKind> = result.reasons.iter().map(|r| r.kind()).collect();
    assert!(
        result.reasons.iter().any(names_the_host) && !kinds.contains(&ReasonKind::ClosedLoop),
        "{:#?}",
        result.reasons
    );
}

#[test]
fn late_departures_with_free_slots_on_a_late_waking_host_are_the_host_s() {
    let mut c = Coordinator::new(vernier(), &LoadPlan::Fixed(5000.0));
    let (mut agent, stalls) = late_waking_host(11);
    let events = drive_with(&mut c, &mut agent, Duration::from_secs(60), |_, n| {
        n.is_multiple_of(25).then(|| vec![stalls.clone()])
    });
    let departures = checks(&events, CheckKind::Departures);
    let failed: Vec<_> = departures.iter().filter(|d| !d.pass).collect();
    assert!(
        !failed.is_empty(),
        "70% of requests 60 µs late moved nothing"
    );
    for d in failed {
        assert!(
            matches!(&d.next, Some(CheckNext::LatenessMoves(f)) if matches!(f.cause, LateCause::WokenLate { .. })),
            "{d:?}"
        );
        assert!(
            d.decision().contains("the client's host wakes it late"),
            "{}",
            d.decision()
        );
    }
    let reason = &c.results()[0].reasons[0];
    let f: &DepartureFinding = figures!(reason, Why::Departures(d) => &d.lateness);
    // Half the requests late with free slots, as the probe's own wake-ups: woken late.
    assert!(matches!(f.cause, LateCause::WokenLate { .. }), "{f:?}");
}

#[test]
fn a_tail_heavy_inside_while_the_host_stalls_that_much_is_the_host_s_not_the_service_s() {
    // The same heavy (lognormal) tail that is named heavy_tail on a quiet host, with the
    // host 4% stalled (stalls up to 17 ms): its stalls reach inside the tail (p90), so the
    // shape there cannot be told from theirs, and they are named.
    let mut cfg = vernier();
    cfg.ci.width = CiWidth::Absolute(Duration::from_micros(5));
    cfg.limits.max_duration = Duration::from_secs(20);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(20_000.0));
    let mut agent = lognormal_agent(5);
    let mut stalls = stall_report(None, 17_000.0);
    stalls.late_p99_us = 978.0;
    stalls.stalls_over_1ms = 124;
    stalls.stalled_share = 0.041;
    drive_with(&mut c, &mut agent, Duration::from_secs(30), |_, n| {
        n.is_multiple_of(25).then(|| vec![stalls.clone()])
    });
    let reason = &c.results()[0].reasons[0];
    assert_eq!(reason.kind(), ReasonKind::HostStalls, "{reason:?}");
    // The stalls are the cause, not the tail's shape: no heaviness is quoted.
    let f = figures!(reason, Why::HostStalls(f) => f);
    if let HostKept::Wide(w) = &f.kept {
        assert_eq!(w.heaviness, None, "{f:?}");
    }
}

/// The sequential rule as the point runs it: each look on at least a quarter and at most
/// twice the samples of the one before (the batches' granularity aside), sized from the
/// width, and the point stops on the first narrow interval that rests on enough effective
/// tail samples; the looks do not use up the tries.
#[test]
fn vernier_looks_again_in_steps_sized_from_the_width_and_stops_on_the_first_narrow_one() {
    let mut cfg = vernier();
    // p99 of an exponential with a 50 µs mean (230 µs) to within 5%: about 11.5 µs wide,
    // some 170,000 samples, where the first look has 10,000.
    cfg.ci.width = CiWidth::Relative(0.05);
    cfg.limits.max_tries = 3;
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(21, exp_latency(50.0));
    let events = drive(&mut c, &mut agent, Duration::from_secs(400));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:?}", result.reasons);
    let looks = checks(&events, CheckKind::Confidence);
    assert!(looks.len() >= 3, "{} looks", looks.len());
    for pair in looks.windows(2) {
        let growth = pair[1].n as f64 / pair[0].n as f64;
        // A look waits for the batch (40 samples at 2,000 req/s) that completes its count.
        assert!(
            (1.24..=2.01).contains(&growth),
            "{} then {}: {growth}",
            pair[0].n,
            pair[1].n
        );
    }
    assert!(looks.iter().rev().skip(1).all(|c| !c.pass));
    let last = looks.last().unwrap();
    assert!(last.pass && last.decision() == "narrow enough", "{last:?}");
    assert_eq!(last.next, Some(CheckNext::NarrowEnough), "{last:?}");
    assert!(last.statistic.unwrap() <= 0.05 * result.target().unwrap().value);
    assert_eq!(result.tries, 1, "the looks are not tries");
}

/// An N/A for want of samples says how long the samples the precision needs would take at
/// this rate, in its reason and as a figure, and "continue" while the point measures gives
/// the point that much time.
#[test]
fn an_na_for_want_of_samples_says_how_much_more_time_and_continue_gives_it() {
    let mut cfg = vernier();
    cfg.ci.width = CiWidth::Relative(0.03);
    cfg.limits.max_duration = Duration::from_secs(20);
    let mut c = Coordinator::new(cfg.clone(), &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(22, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    // A valid CI, wider than asked: the answer is wide, with what more time would buy.
    assert_eq!(result.verdict, Verdict::Wide);
    let more = result
        .more_time_s
        .expect("the time more samples would take");
    // p99 of an exponential with a 50 µs mean within 3%: about 130,000 samples (the 1/√n
    // prediction with its margin, or the effective tail a late stop needs), of which some
    // 36,000 are in by the 20 s limit: about 47 s more at 2,000 a second.
    assert!((20.0..200.0).contains(&more), "{more}");
    let needed = result.reasons[0].more_time.map(|m| m.samples as f64);
    if let Some(needed) = needed {
        let predicted = (needed - result.samples as f64) / 2_000.0;
        assert!(
            (more - predicted).abs() < 0.2 * predicted,
            "{more} against {predicted}"
        );
    }
    let reason = &result.reasons[0];
    assert!(reason.kind().more_samples_help(), "{reason:?}");
    assert_eq!(
        reason.more_time.map(|m| m.seconds.get()),
        Some(more),
        "{reason:?}"
    );

    // The same point, continued once its first wide look has predicted the need.
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(22, exp_latency(50.0));
    let mut at = Duration::ZERO;
    let mut decision = c.start(at);
    let mut events = Vec::new();
    let mut continued = None;
    while !c.is_done() && at < Duration::from_secs(600) {
        for a in &decision.actions {
            agent.apply(a);
        }
        let looked = decision.events.iter().any(|e| {
            matches!(&e.kind, EventKind::Check(k) if k.check == CheckKind::Confidence && !k.pass)
        });
        events.append(&mut decision.events);
        at += BATCH;
        decision = if looked && continued.is_none() {
            continued = Some(at);
            c.step(at, Input::Command(UserCommand::Continue))
        } else {
            c.step(
                at,
                Input::Batch {
                    agent: 0,
                    batch: agent.batch(),
                },
            )
        };
    }
    events.append(&mut decision.events);
    let command = command_event(&events);
    assert!(
        command.contains("more at this rate: what the CI's last look predicts it needs"),
        "{command}"
    );
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:?}", result.reasons);
    assert!(result.duration_s > 20.0, "{}", result.duration_s);
}

/// A comparison's block of `span_s` seconds that saw what a point's N/A quotes: its rates,
/// as counts over the block, and its backlog; every request on schedule.
fn block_seeing(rates: [f64; 3], backlog_max: u64, span_s: f64) -> crate::compare::Block {
    let [sent, answered, asked] = rates;
    crate::compare::Block {
        side: crate::compare::Side::A,
        pair: 0,
        order: 0,
        started_s: 0.0,
        samples: (answered * span_s) as usize,
        value_us: 100.0.into(),
        sent: (sent * span_s) as u64,
        asked: asked * span_s,
        on_schedule: 1.0,
        late_shift_us: 0.0.into(),
        send_lag_p99_us: 5.0,
        backlog_max,
        failed: 0,
        errors: 0,
        without_stalls_us: None,
        touched_share: None,
        problem: None,
    }
}

/// One rule for the load, the point's and a comparison's block's: the figures of each N/A
/// a point gave for its load (driven here by agents that cannot keep up), given to a
/// block of two seconds, make the block judged the same; and the load as asked passes
/// both.
#[test]
fn a_point_and_a_comparison_s_block_judge_the_same_load_alike() {
    let tolerance = config().warmup.tolerance;
    let judge = |block: &crate::compare::Block, rate: f64| {
        crate::compare::block::judge(
            block,
            rate,
            tolerance,
            crate::compare::block::TouchedBound::Held,
        )
    };
    // The load not reached: an agent that answers 150,000 of the 1,000,000 a second asked.
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(1_000_000.0));
    let mut agent = FakeAgent::new(4, exp_latency(20.0));
    agent.capacity = 150_000.0;
    drive(&mut c, &mut agent, Duration::from_secs(30));
    let reason = &c.results()[0].reasons[0];
    let f: &NotReached = figures!(reason, Why::LoadNotReached(f) => f);
    let block = block_seeing(
        [
            f.sent_rate.get(),
            f.achieved_rate.get(),
            f.target_rate.get(),
        ],
        0,
        2.0,
    );
    assert_eq!(
        judge(&block, f.target_rate.get()),
        Some(reason.kind()),
        "{f:?}"
    );
    // A closed loop: one connection, requests waiting for it.
    let reason = backlog_reason(1);
    let held: &HeldClosedLoop = figures!(reason, Why::ClosedLoop(ClosedLoop::Held(h)) => h);
    let rates = [
        held.sent_rate.get(),
        held.achieved_rate.get(),
        held.target_rate.get(),
    ];
    let block = block_seeing(rates, held.backlog_max, 2.0);
    assert_eq!(
        judge(&block, held.target_rate.get()),
        Some(reason.kind()),
        "{held:?}"
    );
    // The load as asked: a point converges on it, and a block of it stands.
    let mut c = Coordinator::new(config(), &LoadPlan::Fixed(20_000.0));
    let mut agent = FakeAgent::new(1, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
    let rate = result.achieved_rate;
    let block = block_seeing([rate, rate, result.target_rate], 0, 2.0);
    assert_eq!(judge(&block, result.target_rate), None, "{result:#?}");
}

/// A reason reads back from its record whatever its figures: one whose figure is no
/// number (agents without a CI of their own: NaN, written as null), and one written before
/// reasons had types, which reads back, and is written again, as it was.
#[test]
fn reasons_read_back_from_records_whatever_their_figures() {
    let nan = Reason::new(Why::AgentsDisagree(super::reason::AgentsDisagree {
        p: Percentile::P99,
        gap_us: f64::NAN.into(),
        intervals: Vec::new(),
    }));
    let json = serde_json::to_string(&nan).unwrap();
    let back: Reason = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let f = figures!(back, Why::AgentsDisagree(f) => f);
    assert!(f.gap_us.is_nan(), "{f:?}");
    let earlier =
        r#"{"check":"heavy_tail","detail":"heavy tail: wide","figures":{"ci_width_us":40.0}}"#;
    let back: crate::record::ShownReason = serde_json::from_str(earlier).unwrap();
    assert!(
        matches!(back, crate::record::ShownReason::Untyped(_)),
        "{back:?}"
    );
    // The methodology's own reasons are typed: an older record's words are the reader's.
    assert!(serde_json::from_str::<Reason>(earlier).is_err());
    assert_eq!(back.kind(), ReasonKind::HeavyTail);
    assert_eq!(back.detail(), "heavy tail: wide");
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::from_str::<serde_json::Value>(earlier).unwrap()
    );
}

/// The looks are planned within the time limit: a look whose confirmation would not fit is
/// taken earlier, so that no point ends N/A for want of the look that confirms a narrow one,
/// and a point whose precision cannot come in time ends at the look that shows it, with the
/// time more samples would take, rather than at its limit.
#[test]
fn a_narrow_look_s_confirmation_fits_and_a_hopeless_point_ends_at_once() {
    let mut outcomes = Vec::new();
    for (seed, width) in [
        (31, 0.035),
        (32, 0.04),
        (33, 0.045),
        (34, 0.05),
        (35, 0.055),
        (36, 0.06),
    ] {
        let mut cfg = vernier();
        cfg.ci.width = CiWidth::Relative(width);
        cfg.limits.max_duration = Duration::from_secs(30);
        let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
        let mut agent = FakeAgent::new(seed, exp_latency(50.0));
        let events = drive(&mut c, &mut agent, Duration::from_secs(60));
        let result = &c.results()[0];
        let looks: Vec<usize> = checks(&events, CheckKind::Confidence)
            .iter()
            .map(|k| k.n)
            .collect();
        eprintln!(
            "{width}: {:?} {:?} after {:.1} s, looks at {looks:?}",
            result.verdict,
            result.reasons.iter().map(Reason::kind).collect::<Vec<_>>(),
            result.duration_s
        );
        for reason in &result.reasons {
            assert!(
                !matches!(reason.why, Why::Confidence(Confidence::Narrow(_))),
                "{reason:#?}"
            );
        }
        // Each has a valid CI: converged, or wide at the limit; never N/A.
        assert!(
            result.target().is_some_and(|t| t.ci_low.is_some()),
            "{result:?}"
        );
        outcomes.push(result.verdict);
    }
    assert!(!outcomes.contains(&Verdict::NotAvailable), "{outcomes:?}");
    assert!(outcomes.contains(&Verdict::Converged), "{outcomes:?}");

    // p99 to within 0.5%: some 25 million samples, where 30 s at 2,000 req/s hold 60,000.
    // The CI is valid, only wide: the answer now, with what more time would buy.
    let mut cfg = vernier();
    cfg.ci.width = CiWidth::Relative(0.005);
    cfg.limits.max_duration = Duration::from_secs(30);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(36, exp_latency(50.0));
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Wide, "{:?}", result.reasons);
    assert_eq!(result.answer(), Verdict::Wide);
    assert!(result.duration_s < 20.0, "{}", result.duration_s);
    let target = result.target().expect("the target percentile");
    assert!(
        target.ci_low.is_some() && target.ci_high.is_some(),
        "{target:?}"
    );
    assert!(
        result.reasons.iter().all(|r| r.why.leaves_a_ci()),
        "{:?}",
        result.reasons
    );
    let more = result
        .more_time_s
        .expect("the time more samples would take");
    assert!(more > 10.0 * 30.0, "{more}");
}

/// A point whose CI is a little wider than asked when its time runs out answers with it:
/// wide, with its CI and what more time would buy; one whose CI is as narrow as asked at
/// the limit's look converges there, without the confirming look the rule's own stop
/// would want.
#[test]
fn at_the_limit_the_ci_at_hand_is_the_answer() {
    // p99 of an exponential within 2.5%: about 3 times the 54,000 samples 30 s hold.
    let mut cfg = vernier();
    cfg.ci.width = CiWidth::Relative(0.025);
    cfg.limits.max_duration = Duration::from_secs(30);
    let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(41, exp_latency(50.0));
    let events = drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    assert_eq!(result.verdict, Verdict::Wide, "{:?}", result.reasons);
    let wide = result.ci_width_us.expect("a CI");
    let target = result.target().expect("the target").value;
    assert!(wide > 0.025 * target, "{wide} {target}");
    let confidence = checks(&events, CheckKind::Confidence);
    let last = confidence.last().expect("a look");
    assert!(matches!(last.next, Some(CheckNext::Ending(_))), "{last:?}");
    assert!(result.more_time_s.is_some_and(|s| s > 0.0), "{result:?}");

    // Within 4.5% with 20 s: the rule's confirmation cannot fit, the limit's look can.
    let mut converged_at_limit = 0;
    for seed in 50..56 {
        let mut cfg = vernier();
        cfg.ci.width = CiWidth::Relative(0.045);
        cfg.limits.max_duration = Duration::from_secs(20);
        let mut c = Coordinator::new(cfg, &LoadPlan::Fixed(2_000.0));
        let mut agent = FakeAgent::new(seed, exp_latency(50.0));
        let events = drive(&mut c, &mut agent, Duration::from_secs(40));
        let result = &c.results()[0];
        assert_ne!(
            result.verdict,
            Verdict::NotAvailable,
            "{:?}",
            result.reasons
        );
        let confidence = checks(&events, CheckKind::Confidence);
        if confidence
            .iter()
            .any(|k| k.next == Some(CheckNext::NarrowAtLimit))
        {
            assert_eq!(result.verdict, Verdict::Converged, "{:?}", result.reasons);
            converged_at_limit += 1;
        }
    }
    assert!(converged_at_limit > 0);
}
