//! The agent driving real servers: the in-process engine against `vernier serve`'s
//! synthetic server (TCP and UDP, kernel and user timestamps) and against memcached,
//! redis-server and nginx for every protocol; the closed-loop case; and the agent as a
//! process behind its gRPC control plane (token, one coordinator, counters), and where its
//! token may come from (a file, the environment, argv with a warning) without ever showing.
//!
//! Every load here is bounded (≤ 1.5 s at ≤ 20,000 requests/s) and goes to 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::AgentProcess;
use support::load_spec as spec;

use std::net::SocketAddr;
use std::time::Duration;

use vernier_agent::sys::{TimestampMode, Transport};
use vernier_agent::{
    AgentKind, Batch, Counters, Engine, LoadSpec, PollMode, RequestKind, Workload,
};
use vernier_fixtures::{ExternalServer, RunningServer, ServeConfig, ServeProtocol, Server};
use vernier_protocols::{InterArrival, KvWorkload, Protocol};

fn synthetic_server(transport: vernier_fixtures::Transport) -> RunningServer {
    let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap(), ServeProtocol::Synthetic);
    config.transport = transport;
    Server::start(config).unwrap()
}

fn synthetic(service: &str) -> Workload {
    Workload::Synthetic {
        service: service.parse().unwrap(),
        probe: 0.0,
    }
}

fn kv() -> Workload {
    let kv: KvWorkload = serde_json::from_str(
        r#"{"keys": 200, "key_size": "fixed:16", "value_size": "fixed:64", "read_ratio": 0.8, "key_dist": "uniform"}"#,
    )
    .unwrap();
    Workload::KeyValue(kv)
}

/// What a bounded run produced.
struct Run {
    batches: Vec<Batch>,
    total: Counters,
    /// How long the load ran, from asking for it to pausing it, by this thread's clock: a
    /// sleep the host stretches stretches the load with it.
    loaded: Duration,
}

impl Run {
    /// The requests a Poisson load at `rate` sends while this run loaded, and the bounds 4
    /// standard deviations either way (the workers send what fell due while they were
    /// stalled, so the count follows the time loaded, not the time the test meant).
    fn expected(&self, rate: f64) -> std::ops::Range<u64> {
        let mean = rate * self.loaded.as_secs_f64();
        let spread = 4.0 * mean.sqrt();
        (mean - spread) as u64..(mean + spread) as u64
    }
}

impl Run {
    fn latencies_us(&self) -> Vec<f64> {
        self.batches
            .iter()
            .flat_map(|b| &b.samples)
            .map(|s| s.latency_ns as f64 / 1e3)
            .collect()
    }
    /// Each worker's departures per second, from its kept samples' departure times: the
    /// requests over the time from the first to the last (every request is kept here).
    fn departure_rates(&self) -> Vec<f64> {
        let mut by_worker: std::collections::BTreeMap<u32, (u64, u64, u64)> =
            std::collections::BTreeMap::new();
        for b in &self.batches {
            for s in &b.samples {
                let (n, first, last) = by_worker.entry(b.worker).or_insert((0, u64::MAX, 0));
                *n += 1;
                *first = (*first).min(s.departure_ns);
                *last = (*last).max(s.departure_ns);
            }
        }
        by_worker
            .values()
            .map(|&(n, first, last)| {
                (n - 1) as f64 / (last.saturating_sub(first).max(1) as f64 / 1e9)
            })
            .collect()
    }
    fn interarrivals_us(&self) -> Vec<f64> {
        self.batches
            .iter()
            .flat_map(|b| &b.interarrivals)
            .map(|&g| g as f64 / 1e3)
            .collect()
    }
}

/// Loads at `rate` for `duration`, lets in-flight requests finish, stops.
fn run(spec: LoadSpec, rate: f64, duration: Duration) -> Run {
    let _one = support::machine();
    let workers = spec.workers;
    let engine = Engine::start(spec).unwrap();
    engine.set_sampling(1.0, 1);
    let started = std::time::Instant::now();
    engine.set_load(rate, &InterArrival::Exp);
    std::thread::sleep(duration);
    engine.pause();
    let loaded = started.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let batches = engine.stop().unwrap();
    // Each batch carries what its worker counted in its interval: they add up to the
    // worker's cumulative counters, exactly (nothing counted twice or lost between them).
    let mut per_worker = vec![Counters::default(); workers];
    for b in &batches {
        per_worker[b.worker as usize].accumulate(&b.counts);
    }
    assert_eq!(per_worker, engine.counters());
    // Each worker's batches: the one it ended when the sampling came (generation 0, at
    // once, so at most one more before it), then only the sampling asked (generation 1).
    for w in 0..workers as u32 {
        let generations: Vec<u64> = batches
            .iter()
            .filter(|b| b.worker == w)
            .map(|b| b.generation)
            .collect();
        let before = generations.iter().take_while(|&&g| g == 0).count();
        assert!(
            before <= 2 && generations[before..].iter().all(|&g| g == 1),
            "worker {w}: {generations:?}"
        );
    }
    Run {
        total: Counters::sum(&per_worker),
        batches,
        loaded,
    }
}

#[track_caller]
fn assert_counters_add_up(c: &Counters) {
    assert_eq!(c.sent, c.received + c.failed + c.in_flight, "{c:?}");
    assert!(c.received > 0, "{c:?}");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Each polling mode measures, and costs what it says: `spin` holds its core (its CPU time
/// about the run's length), `sleep` leaves it free between requests, and `adaptive` spins
/// only while replies are due, so it costs less than `spin`. The bounds are loose: a
/// virtual core may be taken away while spinning, which its CPU time does not count.
#[test]
fn every_polling_mode_measures_and_spinning_holds_the_core() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let mut busy = Vec::new();
    for poll in PollMode::ALL {
        let duration = Duration::from_secs(1);
        let r = run(
            LoadSpec {
                poll,
                ..spec(
                    server.local_addr(),
                    Protocol::synthetic(),
                    synthetic("fixed:10us"),
                )
            },
            2_000.0,
            duration,
        );
        assert_counters_add_up(&r.total);
        assert!(
            (1_500..2_500).contains(&r.total.received),
            "{poll}: {:?}",
            r.total
        );
        let m = median(r.latencies_us());
        assert!((10.0..2_000.0).contains(&m), "{poll}: median {m} µs");
        // The run lasts the load plus 300 ms for the replies in flight.
        let share = r.total.cpu_ns as f64 / (duration.as_nanos() as f64 + 300e6);
        eprintln!(
            "poll {poll}: worker CPU {:.0}% of the run, median {m:.1} µs",
            share * 100.0
        );
        busy.push(share);
    }
    let [sleep, spin, adaptive] = busy[..] else {
        unreachable!()
    };
    // A spinning worker is runnable the whole run: it gets all of a core the scheduler can
    // give it (0.9 and more on a quiet host), and at least its fair share of a core another
    // busy thread holds (half, less what the hypervisor steals: 0.43 measured beside
    // `stress-ng --cpu 1`); a sleeping one only what its requests cost (0.13-0.17 on a
    // quiet host, more on a busy one: 0.31 beside `stress-ng` and the other tests, against
    // a spinning 0.48), so the spinning one costs more, though not always twice as much.
    assert!(
        spin > 0.35 && spin > sleep,
        "spin used {spin:.2} of a core, sleep {sleep:.2}"
    );
    assert!(sleep < 0.4, "sleep used {sleep:.2} of a core");
    assert!(adaptive < spin, "adaptive {adaptive:.2}, spin {spin:.2}");
}

/// A request costs one socket call to send and two to read (its reply, its TX stamp)
/// when the worker keeps up: no read that only finds the socket empty, no read of an
/// empty error queue. (It took eight reads per request before they were counted.) A
/// worker the host holds up sends the requests fallen due together in one call and reads
/// their replies together, so the calls per request fall; per send call they stay two.
#[test]
fn a_request_costs_one_send_and_two_reads() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let r = run(
        spec(
            server.local_addr(),
            Protocol::synthetic(),
            synthetic("fixed:10us"),
        ),
        2_000.0,
        Duration::from_secs(1),
    );
    assert_counters_add_up(&r.total);
    let t = &r.total;
    assert!(t.received > 1_000, "{t:?}");
    let sends = t.send_calls as f64 / t.sent as f64;
    let reads = t.read_calls as f64 / t.received as f64;
    let reads_per_send = t.read_calls as f64 / t.send_calls as f64;
    eprintln!(
        "per request: {sends:.2} send calls, {reads:.2} read calls; {reads_per_send:.2} reads per send"
    );
    assert!(sends <= 1.05, "{sends:.2} send calls per request");
    assert!(reads <= 2.5, "{reads:.2} read calls per request answered");
    assert!(
        (1.5..=2.5).contains(&reads_per_send),
        "{reads_per_send:.2} read calls per send call ({sends:.2} sends, {reads:.2} reads per request)"
    );
}

/// A sleeping worker wakes for its departures and its reports and no more often, and
/// reports those wake-ups as the stall probe of its core. At 200 req/s (a departure every
/// 5 ms) and a report every 20 ms that is about 250 a second; before, a housekeeping
/// wake-up every millisecond made it 1,000 more, whatever the load.
#[test]
fn a_sleeping_worker_wakes_no_more_often_than_its_work_asks() {
    let _one = support::machine();
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let engine = Engine::start(spec(
        server.local_addr(),
        Protocol::synthetic(),
        synthetic("fixed:10us"),
    ))
    .unwrap();
    engine.set_sampling(1.0, 1);
    engine.set_load(200.0, &InterArrival::Exp);
    std::thread::sleep(Duration::from_millis(500));
    let watch = &engine.core_watches()[0];
    let _ = watch.take();
    std::thread::sleep(Duration::from_secs(2));
    let report = watch.take();
    engine.pause();
    let batches = engine.stop().unwrap();
    let received: u64 = batches.iter().map(|b| b.counts.received).sum();
    let per_s = report.wakeups as f64 / report.seconds;
    eprintln!(
        "{per_s:.0} wake-ups a second, {:.0} µs apart, p50 {:.0} µs late; {received} requests answered",
        report.period_us, report.late_p50_us
    );
    assert!(received > 300, "{received} requests answered");
    assert!((120.0..320.0).contains(&per_s), "{report:?}");
    // Replies are read at the next wake-up, up to 5 ms later, yet each arrived at its RX
    // stamp: the wait from the scheduled departure is the send lag and the latency, not
    // the time until the worker happened to read it.
    let (mut latency, mut intended) = (vernier_agent::histogram(), vernier_agent::histogram());
    for b in &batches {
        latency.add(&b.latency).unwrap();
        intended.add(&b.intended).unwrap();
    }
    let us = |h: &hdrhistogram::Histogram<u64>| h.value_at_quantile(0.5) as f64 / 1e3;
    eprintln!(
        "p50 {:.1} µs, from schedule {:.1} µs",
        us(&latency),
        us(&intended)
    );
    assert!(
        us(&intended) < us(&latency) + 100.0,
        "p50 {} µs, from schedule {} µs",
        us(&latency),
        us(&intended)
    );
    assert_eq!(watch.cpu(), None);
    assert!((report.period_us - 1e6 / per_s).abs() < 1.0, "{report:?}");
}

/// A worker far behind its load (a million requests a second) sends the requests due
/// together on one TCP connection in one call, as many as the depth allows; on UDP every
/// request is its own datagram and its own call.
#[test]
fn requests_due_together_share_a_send_on_tcp_only() {
    for transport in [Transport::Tcp, Transport::Udp] {
        let server = synthetic_server(match transport {
            Transport::Tcp => vernier_fixtures::Transport::Tcp,
            Transport::Udp => vernier_fixtures::Transport::Udp,
        });
        let r = run(
            LoadSpec {
                transport,
                connections: 1,
                depth: 8,
                ..spec(
                    server.local_addr(),
                    Protocol::synthetic(),
                    synthetic("fixed:0us"),
                )
            },
            1_000_000.0,
            Duration::from_millis(500),
        );
        let t = &r.total;
        assert!(t.sent > 1_000, "{transport:?}: {t:?}");
        let per_send = t.sent as f64 / t.send_calls as f64;
        eprintln!("{transport:?}: {per_send:.2} requests per send call");
        // Requests of one send share its stamp: the gaps tested are between sends.
        let zeros = r
            .batches
            .iter()
            .flat_map(|b| &b.interarrivals)
            .filter(|&&g| g == 0)
            .count();
        assert_eq!(zeros, 0, "{transport:?}: zero inter-departure gaps");
        match transport {
            Transport::Tcp => assert!(per_send > 1.5, "TCP: {per_send:.2} requests per send"),
            Transport::Udp => assert!(per_send <= 1.0, "UDP: {per_send:.2} requests per send"),
        }
    }
}

#[test]
fn synthetic_over_tcp_with_kernel_timestamps() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let r = run(
        spec(
            server.local_addr(),
            Protocol::synthetic(),
            synthetic("fixed:20us"),
        ),
        5_000.0,
        Duration::from_secs(1),
    );
    assert_counters_add_up(&r.total);
    assert_eq!(
        (r.total.failed, r.total.in_flight, r.total.parse_errors),
        (0, 0, 0),
        "{:?}",
        r.total
    );
    // ~5,000 requests in 1 s of Poisson arrivals.
    assert!((4_000..6_000).contains(&r.total.received), "{:?}", r.total);
    let lat = r.latencies_us();
    assert!(
        lat.len() as u64 + r.total.tx_timestamps_missing >= r.total.received * 9 / 10,
        "{} samples",
        lat.len()
    );
    let m = median(lat);
    assert!(
        (20.0..2_000.0).contains(&m),
        "median {m} µs for a 20 µs service time"
    );
    // The server saw the service times the agent drew (the median: a busy 2-core host
    // preempts the odd spin, which moves the mean but not the middle).
    let stats = server.stop().unwrap();
    assert_eq!(stats.target_mean, 20.0, "{stats:?}");
    assert!((stats.percentiles[0].value - 20.0).abs() < 1.0, "{stats:?}");
    // Open loop with Poisson arrivals: the kernel's departure times have the offered
    // rate's mean gap. Whether they also pass the exponential test depends on the host
    // letting the worker run when a request is due: on this project's 2-vCPU machine the
    // hypervisor takes the core away for milliseconds at a time (`vernier calibrate`'s host
    // jitter shows it), which the test reports but cannot assert away.
    // One gap per send call at most; a worker the host holds up sends the requests fallen
    // due together in one call (with the other tests beside it, this host once left fewer
    // than 3,000 gaps of ~5,000 requests).
    let gaps = r.interarrivals_us();
    assert!(
        (500..=r.total.send_calls as usize).contains(&gaps.len()),
        "{} gaps of {} send calls",
        gaps.len(),
        r.total.send_calls
    );
    let ad = vernier_stats::anderson_exponential(&gaps).unwrap();
    // The departures keep the offered rate (open loop: a stalled worker sends what fell
    // due once it runs). The gaps are between sends, and requests that fell due together
    // share one (see `requests_due_together_share_a_send_on_tcp_only`), so their mean is
    // the rate's or longer, never shorter.
    let [rate] = r.departure_rates()[..] else {
        panic!("one worker")
    };
    assert!((4_500.0..5_500.0).contains(&rate), "{rate:.0} departures/s");
    assert!(ad.scale > 180.0, "mean gap {} µs at 5,000/s", ad.scale);
    let mut lag = r.batches[0].send_lag.clone();
    r.batches
        .iter()
        .skip(1)
        .for_each(|b| lag.add(&b.send_lag).unwrap());
    eprintln!(
        "departures: Anderson-Darling {:.3} (5%: {}), send lag p99 {} ns",
        ad.statistic,
        ad.critical_values[2],
        lag.value_at_quantile(0.99)
    );
    if lag.value_at_quantile(0.99) < 50_000 {
        assert!(
            ad.passes(1.0),
            "the worker kept to its schedule, yet the departures are not Poisson: {ad:?}"
        );
    }
}

#[test]
fn a_path_probe_rides_with_the_load_apart_from_it() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let mut s = spec(
        server.local_addr(),
        Protocol::synthetic(),
        Workload::Synthetic {
            service: "fixed:20us".parse().unwrap(),
            probe: 0.25,
        },
    );
    s.workers = 2;
    let r = run(s, 4_000.0, Duration::from_secs(1));
    assert_counters_add_up(&r.total);
    let c = &r.total;
    assert_eq!((c.failed, c.in_flight), (0, 0), "{c:?}");
    // A quarter of the load's rate on top of it: ~4,000 of the load and ~1,000 probes a
    // second of Poisson arrivals (4 standard deviations either way).
    let load = c.sent - c.probes_sent;
    assert!(r.expected(4_000.0).contains(&load), "{:?}: {c:?}", r.loaded);
    assert!(
        r.expected(1_000.0).contains(&c.probes_sent),
        "{:?}: {c:?}",
        r.loaded
    );
    assert_eq!(c.probes_received, c.probes_sent, "{c:?}");
    // The probes are kept apart: every one in `probes`, none among the load's samples or
    // in its latency histogram, whose requests all waited the 20 µs they asked for.
    let probes: Vec<_> = r.batches.iter().flat_map(|b| &b.probes).collect();
    assert!(
        probes.len() as u64 + c.tx_timestamps_missing >= c.probes_received,
        "{} probes of {c:?}",
        probes.len()
    );
    assert!(probes.iter().all(|p| p.request == RequestKind::Probe as u8));
    assert!(probes.iter().all(|p| p.conn < 4));
    let connections: std::collections::BTreeSet<u16> = probes.iter().map(|p| p.conn).collect();
    assert_eq!(
        connections.len(),
        4,
        "over the load's connections: {connections:?}"
    );
    let samples: Vec<_> = r.batches.iter().flat_map(|b| &b.samples).collect();
    assert!(
        samples
            .iter()
            .all(|s| s.request != RequestKind::Probe as u8)
    );
    assert!(samples.iter().all(|s| s.latency_ns >= 20_000));
    assert!(
        r.batches
            .iter()
            .all(|b| b.latency.min() >= 20_000 || b.latency.is_empty())
    );
    // The same path, less the 20 µs of service. Judged at the fastest of each, where the
    // service is all that tells them apart: a busy host only adds to a round trip (a CI
    // host once put both medians near 165 µs, 2 µs apart), and the fastest of ~1,000
    // probes met as empty a path as the fastest load request, which still spun 20 µs.
    let probe_us: Vec<f64> = probes.iter().map(|p| p.latency_ns as f64 / 1e3).collect();
    let load_us = r.latencies_us();
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (probe_fastest, load_fastest) = (fastest(&probe_us), fastest(&load_us));
    eprintln!("fastest probe {probe_fastest:.1} µs, fastest load request {load_fastest:.1} µs");
    assert!(
        probe_fastest + 10.0 < load_fastest,
        "fastest probe {probe_fastest} µs, fastest load request {load_fastest} µs \
         (medians {} and {} µs)",
        median(probe_us),
        median(load_us)
    );
    // The load's gaps are the load's, the probes' departures not among them: no more gaps
    // than load requests, and their mean (each worker's 2,000 req/s) not the shorter one
    // the probes would make (400 µs); sends shared by requests due together make it longer.
    let gaps = r.interarrivals_us();
    assert!(
        gaps.len() as u64 <= load,
        "{} gaps of {load} requests",
        gaps.len()
    );
    let ad = vernier_stats::anderson_exponential(&gaps).unwrap();
    assert!(ad.scale > 450.0, "mean gap {} µs", ad.scale);
    for rate in r.departure_rates() {
        assert!((1_800.0..2_200.0).contains(&rate), "{rate:.0} departures/s");
    }
    // The server's replies say how long it served each of the load's requests: at least
    // the 20 µs asked, which the agent kept beside them.
    let mut served = vernier_agent::histogram();
    let mut asked = vernier_agent::histogram();
    for b in &r.batches {
        served.add(&b.served).unwrap();
        asked.add(&b.asked).unwrap();
    }
    assert_eq!(served.len(), asked.len());
    assert!(
        served.len() + c.tx_timestamps_missing >= load * 9 / 10,
        "{}",
        served.len()
    );
    assert!(asked.equivalent(asked.min(), 20_000) && asked.equivalent(asked.max(), 20_000));
    assert!(served.min() >= asked.lowest_equivalent(20_000));
    let stats = server.stop().unwrap();
    assert_eq!(stats.count, c.received, "{stats:?}");
}

#[test]
fn synthetic_over_udp_and_with_user_timestamps() {
    let server = synthetic_server(vernier_fixtures::Transport::Udp);
    let mut s = spec(
        server.local_addr(),
        Protocol::synthetic(),
        synthetic("fixed:10us"),
    );
    s.transport = Transport::Udp;
    s.depth = 1;
    let r = run(s.clone(), 2_000.0, Duration::from_millis(700));
    assert_counters_add_up(&r.total);
    assert!(r.total.received > 1_000, "{:?}", r.total);
    assert!(median(r.latencies_us()) >= 10.0);

    s.timestamps = TimestampMode::User;
    let r = run(s, 2_000.0, Duration::from_millis(700));
    assert_counters_add_up(&r.total);
    assert_eq!(r.total.tx_timestamps_missing, 0);
    assert!(median(r.latencies_us()) >= 10.0);
}

fn kv_against(server: &ExternalServer, protocol: &str) -> Run {
    let r = run(
        spec(server.addr(), protocol.parse().unwrap(), kv()),
        3_000.0,
        Duration::from_millis(600),
    );
    assert_counters_add_up(&r.total);
    assert_eq!(
        (r.total.failed, r.total.parse_errors, r.total.error_replies),
        (0, 0, 0),
        "{protocol}: {:?}",
        r.total
    );
    assert!(r.total.received > 1_000, "{protocol}: {:?}", r.total);
    r
}

#[test]
fn memcached_text_and_binary() {
    let server = ExternalServer::memcached().unwrap();
    for protocol in ["memcached", "memcached-binary", "memcached-binary:getk"] {
        let r = kv_against(&server, protocol);
        // 20% writes to 200 keys: most reads find their key.
        let hits = r
            .batches
            .iter()
            .flat_map(|b| &b.samples)
            .filter(|s| s.outcome == vernier_agent::Outcome::Hit as u8)
            .count();
        assert!(hits > 100, "{protocol}: {hits} hits");
    }
}

#[test]
fn redis() {
    let server = ExternalServer::redis().unwrap();
    kv_against(&server, "redis");
}

#[test]
fn nginx() {
    let server = ExternalServer::nginx(
        |www| {
            for i in 0..200 {
                std::fs::write(www.join(format!("{i:016}")), b"hello")?;
            }
            Ok(())
        },
        "",
    )
    .unwrap();
    // HTTP GETs only: a read ratio of 1.
    let kv: KvWorkload = serde_json::from_str(
        r#"{"keys": 200, "key_size": "fixed:16", "value_size": "fixed:5", "read_ratio": 1.0, "key_dist": "uniform"}"#,
    )
    .unwrap();
    let r = run(
        spec(server.addr(), Protocol::http(), Workload::KeyValue(kv)),
        3_000.0,
        Duration::from_millis(600),
    );
    assert_counters_add_up(&r.total);
    assert_eq!(
        (r.total.failed, r.total.error_replies),
        (0, 0),
        "{:?}",
        r.total
    );
    // Every key exists: every sample is a 200 (a 404 would be a miss).
    let samples: Vec<_> = r.batches.iter().flat_map(|b| &b.samples).collect();
    assert!(samples.len() > 1_000, "{} samples", samples.len());
    assert!(
        samples
            .iter()
            .all(|s| s.outcome == vernier_agent::Outcome::Ok as u8),
        "{:?}",
        samples.iter().find(|s| s.outcome != 2)
    );
}

#[test]
fn one_connection_at_depth_one_turns_closed_loop() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let mut s = spec(
        server.local_addr(),
        Protocol::synthetic(),
        synthetic("fixed:200us"),
    );
    s.connections = 1;
    s.depth = 1;
    // 10,000/s asked of a connection that can carry at most ~5,000/s one at a time.
    let r = run(s, 10_000.0, Duration::from_millis(800));
    assert_counters_add_up(&r.total);
    assert!(r.total.backlog_max > 100, "{:?}", r.total);
    // The departures are paced by the replies, not by the arrival process.
    let gaps = r.interarrivals_us();
    let ad = vernier_stats::anderson_exponential(&gaps).unwrap();
    assert!(!ad.passes(5.0), "{ad:?}");
    assert!(r.total.received < 5_000, "{:?}", r.total);
}

#[test]
fn a_dead_target_is_reported_not_fatal() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let addr = server.local_addr();
    let _one = support::machine();
    let engine = Engine::start(spec(addr, Protocol::synthetic(), synthetic("fixed:10us"))).unwrap();
    engine.set_load(2_000.0, &InterArrival::Exp);
    std::thread::sleep(Duration::from_millis(200));
    server.stop().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let batches = engine.stop().unwrap();
    let mut c = Counters::default();
    for b in &batches {
        c.accumulate(&b.counts);
    }
    assert_eq!(c.sent, c.received + c.failed + c.in_flight, "{c:?}");
    assert!(c.connect_failures > 0, "{c:?}");
    // Nothing listens any more: starting an engine against it fails clearly.
    let err =
        Engine::start(spec(addr, Protocol::synthetic(), synthetic("fixed:10us"))).unwrap_err();
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

/// A duet: one stream whose every request goes to one of two servers by a fair coin,
/// each side asked its own workload, both sides' connections open throughout. Every
/// worker holds connections to both; a sample's connection says its side (the target's
/// `0..connections`, the second server's from `connections` on), each server answered
/// exactly the requests counted as its side's, the split is a fair coin's (4 standard
/// deviations), and each side's requests asked its own service time. A second server
/// that refuses connections is named in the engine's error.
#[test]
fn a_duet_sends_each_request_to_one_of_two_servers_by_a_coin() {
    let a = synthetic_server(vernier_fixtures::Transport::Tcp);
    let b = synthetic_server(vernier_fixtures::Transport::Tcp);
    let mut s = spec(
        a.local_addr(),
        Protocol::synthetic(),
        synthetic("fixed:20us"),
    );
    s.workers = 2;
    s.duet = Some(vernier_agent::Duet {
        server: b.local_addr(),
        workload: synthetic("fixed:60us"),
    });
    assert!(
        s.to_duet(4) && !s.to_duet(3),
        "connections {}",
        s.connections
    );
    let r = run(s.clone(), 4_000.0, Duration::from_secs(1));
    assert_counters_add_up(&r.total);
    let c = &r.total;
    assert_eq!((c.failed, c.in_flight), (0, 0), "{c:?}");
    let samples: Vec<_> = r.batches.iter().flat_map(|b| &b.samples).collect();
    let (to_b, to_a): (Vec<&vernier_agent::Sample>, Vec<_>) =
        samples.iter().partition(|x| s.to_duet(x.conn));
    let n = (to_a.len() + to_b.len()) as f64;
    let spread = 4.0 * (n * 0.25).sqrt();
    assert!(
        (to_a.len() as f64 - n / 2.0).abs() < spread,
        "{} to A, {} to B",
        to_a.len(),
        to_b.len()
    );
    // Each side's requests asked its own service: all of B's at least 60 µs, A's median
    // well under it.
    assert!(to_b.iter().all(|x| x.latency_ns >= 60_000));
    let a_us = median(to_a.iter().map(|x| x.latency_ns as f64 / 1e3).collect());
    assert!(a_us < 60.0, "A's median {a_us} µs");
    // Both workers sent to both sides, on the connections the spec gives each side.
    for worker in 0..2u32 {
        let conns: std::collections::BTreeSet<u16> = (r.batches.iter())
            .filter(|b| b.worker == worker)
            .flat_map(|b| b.samples.iter().map(|x| x.conn))
            .collect();
        assert!(
            conns.iter().any(|&k| s.to_duet(k)),
            "worker {worker}: {conns:?}"
        );
        assert!(
            conns.iter().any(|&k| !s.to_duet(k)),
            "worker {worker}: {conns:?}"
        );
        assert!(conns.iter().all(|&k| k < 8), "worker {worker}: {conns:?}");
    }
    // The second server gone: the engine cannot start, and names the server it could not
    // reach (the first is still up).
    let served_b = b.stop().unwrap();
    let err = Engine::start(s.clone()).unwrap_err();
    assert!(
        err.to_string().contains(&s.server(true).to_string()),
        "{err}"
    );
    let served_a = a.stop().unwrap();
    assert_eq!(served_a.count + served_b.count, c.received);
    let missing = c.tx_timestamps_missing;
    let (na, nb) = (to_a.len() as u64, to_b.len() as u64);
    assert!(
        (na..=na + missing).contains(&served_a.count),
        "{served_a:?}"
    );
    assert!(
        (nb..=nb + missing).contains(&served_b.count),
        "{served_b:?}"
    );
}

fn configure_request(target: SocketAddr) -> vernier_agent::wire::pb::ConfigureRequest {
    let spec = LoadSpec {
        depth: 2,
        seed: 3,
        ..spec(target, Protocol::synthetic(), synthetic("exp:10us"))
    };
    vernier_agent::wire::configure_request(&spec, &target.to_string(), Duration::ZERO)
}

#[test]
fn a_load_spec_survives_the_wire_for_every_protocol_and_workload() {
    use vernier_agent::wire::{configure_request, load_spec};
    let target: SocketAddr = "127.0.0.1:11211".parse().unwrap();
    let lease = Duration::from_secs(7);
    for (protocol, workload) in [
        (Protocol::synthetic(), synthetic("lognormal:20us:2")),
        ("echo:64".parse().unwrap(), Workload::Echo),
        (Protocol::memcached(), kv()),
        ("memcached-binary:getk".parse().unwrap(), kv()),
        (Protocol::redis(), kv()),
        (Protocol::http(), kv()),
        (
            serde_json::from_str(
                r#"{"framing": {"length": {"bytes": 4}}, "requests": [{"text": "{len:u32be}{seq:u64be}\u0000{key}", "ratio": 3}, {"hex": "{len:u32be} {seq:u64be} 01", "name": "fail"}], "reply": {"match": {"id": {"offset": 4, "bytes": 8}}, "ok": {"offset": 12, "hex": "00"}}}"#,
            )
            .unwrap(),
            kv(),
        ),
    ] {
        for (kind, timestamps, transport, poll) in [
            (
                AgentKind::Symmetric,
                TimestampMode::Kernel,
                Transport::Tcp,
                PollMode::Sleep,
            ),
            (
                AgentKind::Throughput,
                TimestampMode::User,
                Transport::Udp,
                PollMode::Spin,
            ),
            (
                AgentKind::Latency,
                TimestampMode::Hardware {
                    interface: "eth1".into(),
                },
                Transport::Tcp,
                PollMode::Adaptive,
            ),
        ] {
            let sent = LoadSpec {
                kind,
                timestamps,
                transport,
                poll,
                cpus: vec![1, 3],
                workers: 2,
                ..spec(target, protocol.clone(), workload.clone())
            };
            let request = configure_request(&sent, "localhost:11211", lease);
            let (back, back_lease) = load_spec(&request, target).unwrap();
            assert_eq!(back, sent);
            assert_eq!(back_lease, Some(lease));
        }
    }
    // A zipf key choice too.
    let mut kv: KvWorkload = match kv() {
        Workload::KeyValue(kv) => kv,
        _ => unreachable!(),
    };
    kv.key_dist = vernier_protocols::KeyDist::Zipf { theta: 0.99 };
    let sent = spec(target, Protocol::redis(), Workload::KeyValue(kv));
    let request = configure_request(&sent, "x", lease);
    assert_eq!(load_spec(&request, target).unwrap().0, sent);
    // The path probe too; a share of the rate that is none is refused, naming it.
    let probed = |probe: f64| {
        spec(
            target,
            Protocol::synthetic(),
            Workload::Synthetic {
                service: "fixed:20us".parse().unwrap(),
                probe,
            },
        )
    };
    let sent = probed(0.25);
    let back = load_spec(&configure_request(&sent, "x", lease), target)
        .unwrap()
        .0;
    assert_eq!(back, sent);
    assert_eq!(back.validate(), Ok(()));
    for bad in [-0.1, 1.5, f64::NAN] {
        let back = load_spec(&configure_request(&probed(bad), "x", lease), target)
            .unwrap()
            .0;
        let e = back.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("probe = ") && e.ends_with(": a share of the rate from 0 (none) to 1"),
            "{e}"
        );
    }
}

#[test]
fn a_configure_request_with_unknown_values_names_the_field() {
    use vernier_agent::wire::{configure_request, load_spec, pb};
    let target: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let good = configure_request(
        &spec(target, Protocol::synthetic(), synthetic("exp:10us")),
        "x",
        Duration::ZERO,
    );
    let error = |r: &pb::ConfigureRequest| load_spec(r, target).unwrap_err().to_string();
    let mut bad = good.clone();
    bad.transport = 9;
    assert_eq!(error(&bad), "transport: 9: unknown");
    let mut bad = good.clone();
    bad.kind = -1;
    assert_eq!(error(&bad), "kind: -1: unknown");
    let mut bad = good.clone();
    bad.timestamps = 3;
    assert_eq!(error(&bad), "timestamps: 3: unknown");
    let mut bad = good.clone();
    bad.protocol = None;
    assert_eq!(error(&bad), "missing field protocol");
    let mut bad = good.clone();
    bad.workload = None;
    assert_eq!(error(&bad), "missing field workload");
    let mut bad = good.clone();
    bad.protocol = Some(pb::ProtocolSpec {
        spec: "echo:0".into(),
        declared: String::new(),
    });
    assert!(
        error(&bad).starts_with("protocol.spec: invalid protocol \"echo:0\""),
        "{}",
        error(&bad)
    );
    bad.protocol = Some(pb::ProtocolSpec {
        spec: String::new(),
        declared: r#"{"framing": {"fixed": 0}, "requests": [{"text": "x"}]}"#.into(),
    });
    assert!(
        error(&bad).starts_with("protocol.declared: framing.fixed"),
        "{}",
        error(&bad)
    );
    bad.protocol = Some(pb::ProtocolSpec {
        spec: String::new(),
        declared: "{not json".into(),
    });
    assert!(
        error(&bad).starts_with("protocol.declared: "),
        "{}",
        error(&bad)
    );
    let mut bad = good.clone();
    bad.workload = Some(pb::configure_request::Workload::Service("exp:10".into()));
    assert!(error(&bad).starts_with("service: "), "{}", error(&bad));
    assert!(error(&bad).contains("exp:10"), "{}", error(&bad));
}

#[test]
fn the_agent_process_behind_its_control_plane() {
    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let agent = AgentProcess::start("s3cret-token");
    let _one = support::machine();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use tokio_stream::StreamExt;
        use vernier_agent::client::AgentClient;

        // A call without the right token is refused.
        let mut intruder = AgentClient::connect(&agent.addr, "wrong").await.unwrap();
        let status = intruder
            .configure(configure_request(server.local_addr()))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");

        let mut client = AgentClient::connect(&agent.addr, "s3cret-token")
            .await
            .unwrap();
        let reply = client
            .configure(configure_request(server.local_addr()))
            .await
            .unwrap();
        assert_eq!(reply.timestamps, "kernel");

        // A second coordinator, with the right token, is refused while this one holds it.
        let mut second = AgentClient::connect(&agent.addr, "s3cret-token")
            .await
            .unwrap();
        let status = second
            .configure(configure_request(server.local_addr()))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");

        client.start_measure(1.0, 1).await.unwrap();
        client
            .start_load(4_000.0, &vernier_protocols::InterArrival::Exp)
            .await
            .unwrap();
        let mut stream = client.stream().await.unwrap();
        let mut samples = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(800);
        while let Ok(Some(message)) = tokio::time::timeout_at(deadline, stream.next()).await {
            let batch = Batch::try_from(message.unwrap()).unwrap();
            samples += batch.samples.len();
        }
        client.pause().await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let final_counters = client.stop().await.unwrap();
        let total: Counters = final_counters.total.unwrap().into();
        assert_counters_add_up(&total);
        assert!(total.received > 2_000, "{total:?}");
        assert!(samples > 1_000, "{samples} samples streamed");

        // Without a session, calls are refused; a bad configuration is an error, not a crash.
        assert_eq!(
            client.counters().await.unwrap_err().code(),
            tonic::Code::FailedPrecondition
        );
        let mut bad = configure_request(server.local_addr());
        bad.workload =
            Some(vernier_agent::wire::pb::configure_request::Workload::Service("exp:10".into()));
        let status = client.configure(bad).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().contains("exp:10"), "{status:?}");
    });
}

/// `n` connections to `addr` that send nothing (the open-file limit raised for them).
fn idle_connections(addr: &str, n: usize) -> Vec<std::net::TcpStream> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < n as u64 + 200 {
        setrlimit(Resource::RLIMIT_NOFILE, hard.min(4096), hard).unwrap();
    }
    (0..n)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect()
}

#[test]
fn the_control_plane_survives_abuse_and_keeps_to_its_allowed_targets() {
    use std::io::{Read, Write};
    use vernier_agent::client::AgentClient;

    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let mut agent = AgentProcess::start_with("tok", &["--allow-targets", "10.0.0.0/8,192.0.2.7"]);
    let _one = support::machine();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // A call the agent must answer (a refusal is an answer): it is alive and serving.
    let answers = |rt: &tokio::runtime::Runtime| {
        rt.block_on(async {
            let mut client = AgentClient::connect(&agent.addr, "tok").await.unwrap();
            client
                .configure(configure_request(server.local_addr()))
                .await
                .unwrap_err()
        })
    };
    // A target outside the allowed networks is refused, naming them.
    let status = answers(&rt);
    assert_eq!(status.code(), tonic::Code::PermissionDenied, "{status:?}");
    assert!(
        status
            .message()
            .contains("outside this agent's --allow-targets (10.0.0.0/8, 192.0.2.7/32)"),
        "{status:?}"
    );

    // Garbage bytes, and HTTP/1.1 where HTTP/2 is expected: the connection is dropped.
    for junk in [
        (0..4096u32)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect::<Vec<u8>>(),
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
    ] {
        let mut s = std::net::TcpStream::connect(&agent.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(&junk);
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    assert_eq!(answers(&rt).code(), tonic::Code::PermissionDenied);

    // A message over the size limit is refused before it is decoded.
    let status = rt.block_on(async {
        let mut client = AgentClient::connect(&agent.addr, "tok").await.unwrap();
        let mut huge = configure_request(server.local_addr());
        huge.target = "x".repeat(2 * vernier_agent::control::MAX_MESSAGE_BYTES);
        client.configure(huge).await.unwrap_err()
    });
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert_eq!(answers(&rt).code(), tonic::Code::PermissionDenied);

    // 1,000 idle connections: the agent still answers a coordinator.
    let idle = idle_connections(&agent.addr, 1_000);
    let started = std::time::Instant::now();
    assert_eq!(answers(&rt).code(), tonic::Code::PermissionDenied);
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(idle);
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the agent is alive"
    );

    // An allowed network: the same target configures.
    let agent = AgentProcess::start_with("tok", &["--allow-targets", "127.0.0.0/8"]);
    rt.block_on(async {
        let mut client = AgentClient::connect(&agent.addr, "tok").await.unwrap();
        client
            .configure(configure_request(server.local_addr()))
            .await
            .unwrap();
        client.stop().await.unwrap();
    });
    // A bad network is a usage error naming it.
    let out = support::vernier(&["agent", "--token", "t", "--allow-targets", "10.0.0/8"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"10.0.0/8\": expected a network"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_control_channel_over_tls() {
    use vernier_agent::client::{AgentClient, ClientTls};

    let server = synthetic_server(vernier_fixtures::Transport::Tcp);
    let tmp = tempfile::tempdir().unwrap();
    let (ca, cert, key) = support::tls_files(tmp.path());
    let agent = AgentProcess::start_with(
        "tls-token",
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let _one = support::machine();
    let trusted = ClientTls {
        ca_pem: std::fs::read(&ca).unwrap(),
        domain: None,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The right CA and token: a session.
    let session = || async {
        let mut client = AgentClient::connect_with(&agent.addr, "tls-token", Some(&trusted))
            .await
            .unwrap();
        client
            .configure(configure_request(server.local_addr()))
            .await
            .unwrap();
        client.stop().await.unwrap();
    };
    rt.block_on(session());
    rt.block_on(async {
        // The certificate also names agent.test, and a name it lacks is refused.
        let named = ClientTls {
            domain: Some("agent.test".into()),
            ..trusted.clone()
        };
        let mut client = AgentClient::connect_with(&agent.addr, "tls-token", Some(&named))
            .await
            .unwrap();
        client.counters().await.unwrap_err(); // No session: but the call got through.
        let wrong_name = ClientTls {
            domain: Some("other.test".into()),
            ..trusted.clone()
        };
        let e = AgentClient::connect_with(&agent.addr, "tls-token", Some(&wrong_name))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("not valid for name \"other.test\""), "{e}");

        // A CA that did not sign it: refused, saying why.
        let untrusted = ClientTls {
            ca_pem: std::fs::read(&cert).unwrap(),
            domain: None,
        };
        let e = AgentClient::connect_with(&agent.addr, "tls-token", Some(&untrusted))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("UnknownIssuer"), "{e}");

        // TLS does not replace the token.
        let mut intruder = AgentClient::connect_with(&agent.addr, "wrong", Some(&trusted))
            .await
            .unwrap();
        let status = intruder
            .configure(configure_request(server.local_addr()))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");

        // Plain text to a TLS agent gets nowhere.
        if let Ok(mut plain) = AgentClient::connect(&agent.addr, "tls-token").await {
            plain
                .configure(configure_request(server.local_addr()))
                .await
                .unwrap_err();
        }
    });

    // 1,000 connections that never start their handshake do not keep a coordinator out.
    let idle = idle_connections(&agent.addr, 1_000);
    let started = std::time::Instant::now();
    rt.block_on(session());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered after {:?}",
        started.elapsed()
    );
    drop(idle);

    // `vernier run --tls-ca` through the agent: a run, and the token nowhere in its output.
    let scenario = tmp.path().join("tls.yaml");
    std::fs::write(
        &scenario,
        format!(
            "name: tls\ntarget: {}\nprotocol: synthetic\nservice: fixed:10us\nconnections: 4\nload: 2000\n\
             ci: {{percentile: 50, width: 200us}}\nlimits: {{max_duration: 6s}}\n\
             agents: [{{address: '{}', token_env: TLS_AGENT_TOKEN}}]\n",
            server.local_addr(),
            agent.addr
        ),
    )
    .unwrap();
    let record = tmp.path().join("run");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vernier"))
        .arg("run")
        .arg(&scenario)
        .args(["--headless", "--tls-ca"])
        .arg(&ca)
        .arg("--record")
        .arg(&record)
        .env("TLS_AGENT_TOKEN", "tls-token")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 3 | 4)), "{stderr}");
    // The load went through the TLS agent, and its batches came back over TLS.
    let parsed = support::read_run(&record);
    assert_eq!(parsed["status"], "finished", "{parsed:#}");
    let achieved = parsed["points"][0]["achieved_rate"].as_f64().unwrap();
    assert!(achieved > 1_500.0, "asked 2000 req/s, got {achieved}");
    let samples = vernier_workbench::record::read_samples(&record).unwrap();
    assert!(samples.height() > 0, "no samples recorded");
    let run = std::fs::read_to_string(record.join("run.json")).unwrap();
    for text in [
        &run,
        &stderr.to_string(),
        &String::from_utf8_lossy(&out.stdout).to_string(),
    ] {
        assert!(!text.contains("tls-token"), "the token leaked");
    }
    // Without --tls-ca, the run stops at once and says what to give.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vernier"))
        .arg("run")
        .arg(&scenario)
        .arg("--headless")
        .arg("--record")
        .arg(tmp.path().join("plain"))
        .env("TLS_AGENT_TOKEN", "tls-token")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--tls-ca"), "{stderr}");
}

/// A `vernier agent` process whose whole stderr is kept; killed by PID on drop.
struct WatchedAgent {
    child: std::process::Child,
    addr: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl WatchedAgent {
    /// Starts `vernier agent ARGS` with `token_env` as VERNIER_TOKEN (or none) and waits for
    /// its `listening on` line.
    fn start(args: &[&str], token_env: Option<&str>) -> WatchedAgent {
        use std::io::BufRead;
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_vernier"));
        command
            .args(["agent", "--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("VERNIER_TOKEN")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(token) = token_env {
            command.env("VERNIER_TOKEN", token);
        }
        let mut child = command.spawn().expect("start vernier agent");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("the agent's stderr ended").unwrap();
            stderr.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some((_, rest)) = line.split_once("listening on ") {
                break rest.split(' ').next().unwrap().to_string();
            }
        };
        let kept = std::sync::Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        WatchedAgent {
            child,
            addr,
            stderr,
        }
    }

    /// Stops it and returns everything it printed.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader thread sees the pipe close; give it a moment to take the last lines.
        std::thread::sleep(Duration::from_millis(100));
        let mut out = String::new();
        if let Some(mut stdout) = self.child.stdout.take() {
            std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        }
        out + &self.stderr.lock().unwrap()
    }
}

impl Drop for WatchedAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_token_is_taken_from_a_file_the_environment_or_argv_and_never_shown() {
    use std::os::unix::fs::PermissionsExt;
    use vernier_agent::client::AgentClient;

    const TOKEN: &str = "tok-9f2c61d4e7-distinctive";
    const WRONG: &str = "wrong-5a0b3e88c1-distinctive";
    let leaks = |what: &str, text: &str| {
        for secret in [TOKEN, WRONG] {
            assert!(!text.contains(secret), "{what} shows {secret}:\n{text}");
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let token_file = |name: &str, mode: u32| {
        let path = tmp.path().join(name);
        std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    };
    let tight = token_file("tight", 0o600);
    let loose = token_file("loose", 0o640);
    let server = support::ServeProcess::start(&[]);
    let rt = tokio::runtime::Runtime::new().unwrap();

    let tight_arg = tight.to_str().unwrap();
    let ways: [(&str, Vec<&str>, Option<&str>); 3] = [
        ("--token", vec!["--token", TOKEN], None),
        ("--token-file", vec!["--token-file", tight_arg], None),
        ("VERNIER_TOKEN", vec![], Some(TOKEN)),
    ];
    for (way, args, env) in ways {
        let agent = WatchedAgent::start(&args, env);
        rt.block_on(async {
            // A wrong token is refused, and the refusal quotes neither token.
            let mut intruder = AgentClient::connect(&agent.addr, WRONG).await.unwrap();
            let status = intruder
                .configure(configure_request(server.addr))
                .await
                .unwrap_err();
            assert_eq!(
                status.code(),
                tonic::Code::Unauthenticated,
                "{way}: {status:?}"
            );
            leaks(&format!("{way}: the refusal"), &format!("{status:?}"));
            // The right one is taken.
            let mut client = AgentClient::connect(&agent.addr, TOKEN).await.unwrap();
            client
                .configure(configure_request(server.addr))
                .await
                .unwrap();
            client.stop().await.unwrap();
        });

        // A coordinator with the wrong token: an error naming the agent, no token.
        let scenario = tmp.path().join("wrong.yaml");
        std::fs::write(
            &scenario,
            format!(
                "name: wrong-token\ntarget: {}\nprotocol: synthetic\nservice: fixed:10us\n\
                 connections: 1\nload: 1000\nci: {{percentile: 50, width: 200us}}\n\
                 limits: {{max_duration: 5s}}\n\
                 agents: [{{address: '{}', token_env: WRONG_AGENT_TOKEN}}]\n",
                server.addr, agent.addr
            ),
        )
        .unwrap();
        let record = tmp
            .path()
            .join(format!("run-{}", way.trim_start_matches('-')));
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_vernier"))
            .arg("run")
            .arg(&scenario)
            .arg("--headless")
            .arg("--record")
            .arg(&record)
            .env("WRONG_AGENT_TOKEN", WRONG)
            .output()
            .unwrap();
        let run_stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{way}: {run_stderr}");
        assert!(run_stderr.contains(&agent.addr), "{way}: {run_stderr}");
        leaks(&format!("{way}: vernier run's stderr"), &run_stderr);
        leaks(
            &format!("{way}: vernier run's stdout"),
            &String::from_utf8_lossy(&run.stdout),
        );
        if let Ok(json) = std::fs::read_to_string(record.join("run.json")) {
            leaks(&format!("{way}: the record"), &json);
        }

        let printed = agent.stop();
        leaks(&format!("{way}: the agent's output"), &printed);
        let warned = printed.contains(
            "vernier agent: warning: --token is visible to every user of this host (ps, /proc/",
        );
        assert_eq!(warned, way == "--token", "{way}: {printed}");
    }

    // Errors in the configuration around the token: each named, no token in any.
    let missing = tmp.path().join("missing.pem");
    let missing = missing.to_str().unwrap();
    let bad = tmp.path().join("missing-token");
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &[
                "--token",
                TOKEN,
                "--tls-cert",
                missing,
                "--tls-key",
                missing,
            ],
            1,
            missing,
        ),
        (
            &["--token-file", tight_arg, "--allow-targets", "10.0.0/8"],
            2,
            "\"10.0.0/8\": expected a network",
        ),
        (
            &["--token", TOKEN, "--token-file", tight_arg],
            2,
            "cannot be used with",
        ),
        (
            &["--token-file", bad.to_str().unwrap()],
            2,
            &format!("--token-file {}: cannot open it: ", bad.display()),
        ),
        (
            &[
                "--token-file",
                loose.to_str().unwrap(),
                "--tls-cert",
                missing,
                "--tls-key",
                missing,
            ],
            1,
            &format!(
                "vernier agent: warning: --token-file {}: readable by others than its owner (mode 0640)",
                loose.display()
            ),
        ),
    ];
    for (args, code, says) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args(["agent", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("VERNIER_TOKEN", WRONG)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        leaks(&format!("{args:?}"), &stderr);
        leaks(&format!("{args:?}"), &String::from_utf8_lossy(&out.stdout));
    }
}

/// A protocol whose connections cannot start on this host (as a gRPC server checked against
/// the system's CA certificates, on a host with none), to see the engine refuse it.
#[derive(Debug)]
struct CannotStart;

static CANNOT_START: vernier_protocols::Entry = vernier_protocols::Entry {
    name: "cannot-start",
    scheme: "cannot-start",
    forms: &["cannot-start"],
    url_spec: "cannot-start",
    example_port: 1,
    workload: vernier_protocols::WorkloadKind::KeyValue,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "a protocol that cannot start on this host",
    build: |_| Ok(Protocol::new(CannotStart)),
};

impl vernier_protocols::Speak for CannotStart {
    fn entry(&self) -> &'static vernier_protocols::Entry {
        &CANNOT_START
    }

    fn encode(
        &self,
        _: &vernier_protocols::Request<'_>,
        _: u32,
        _: &mut Vec<u8>,
    ) -> Result<(), vernier_protocols::EncodeError> {
        unreachable!("no connection starts")
    }

    fn parse(
        &self,
        _: &[u8],
    ) -> Result<Option<(vernier_protocols::Reply, usize)>, vernier_protocols::ParseError> {
        unreachable!("no connection starts")
    }

    fn unusable(&self, _: &vernier_protocols::SessionContext) -> Option<String> {
        Some("tls: no CA certificate on this system; give one with ca:".into())
    }
}

/// A protocol that cannot start on this host fails the load's start, once, saying why,
/// rather than every call it would have sent.
#[test]
fn a_protocol_that_cannot_start_on_this_host_fails_the_start_saying_why() {
    let target: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let error = Engine::start(spec(target, Protocol::new(CannotStart), kv()))
        .err()
        .expect("the engine started a protocol that cannot start");
    assert_eq!(
        error.to_string(),
        "the protocol cannot start on this host: tls: no CA certificate on this system; give one with ca:"
    );
}
