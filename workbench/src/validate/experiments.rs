//! What `vernier validate` runs, and under which limits: each experiment a typed
//! [`Scenario`], run headless and recorded like any other.
//!
//! An experiment is stated in the scenario file's own form from typed values ([`Spec`]),
//! and the scenario's phase 2 turns it into the [`Scenario`]: so the defaults and checks
//! stay in one place (`scenario/check.rs`), and the record keeps the YAML that
//! `vernier replay` reads back.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::{Serialize, Serializer};
use vernier_agent::sys::TimestampMode;
use vernier_protocols::{Dist, KvWorkload, Protocol};
use vernier_stats::Percentile;

use super::report::{Answered, Measured, Measurement};
use super::servers::Server;
use super::setup::{CONNECTIONS, Depth, MEAN_US, Timestamps};
use crate::error::Error;
use crate::scenario::{CiWidth, Scenario, ScenarioError};
use crate::session::{self, SessionOptions};

/// The loads of part 1, as shares of capacity.
pub(super) const LOADS: [f64; 5] = [0.1, 0.3, 0.5, 0.7, 0.8];

/// How long each accuracy point of part 1 may take (warm-up included). A fixed service has
/// no tail of its own, so its p99 is made of the requests the host delays, which come in
/// clusters: at 50% load on this kind of host a 20%-wide CI took about 230,000 samples,
/// two minutes at the 2,000 kept samples a second; 45 s left it N/A.
pub(super) const POINT_LIMIT_S: u64 = 90;
/// The same with `--quick`, whose figures are not evidence.
pub(super) const QUICK_POINT_LIMIT_S: u64 = 10;

/// How long vernier's runs against the real servers of part 2 may take, seconds.
const SERVER_LIMIT_S: u64 = 20;
/// The same with `--quick`.
const QUICK_SERVER_LIMIT_S: u64 = 8;

/// A service-time distribution of part 1.
#[derive(Debug, Clone)]
pub(super) struct Service {
    /// As tables name it.
    pub name: &'static str,
    /// The distribution.
    pub dist: Dist,
}

/// The service-time distributions of part 1, each of mean [`MEAN_US`]: fixed, exponential,
/// and bimodal (90% at s, 10% at 10·s).
pub(super) fn services() -> Result<Vec<Service>, Error> {
    let us = |us: f64| Duration::from_nanos((us * 1e3).round() as u64);
    let invalid = |e: vernier_protocols::SpecError| Error::Failed(format!("a service: {e}"));
    Ok(vec![
        Service {
            name: "fixed",
            dist: Dist::fixed(us(MEAN_US)),
        },
        Service {
            name: "exponential",
            dist: Dist::exp(us(MEAN_US)).map_err(invalid)?,
        },
        Service {
            name: "bimodal",
            dist: Dist::bimodal(us(13.158), us(131.58), 0.9).map_err(invalid)?,
        },
    ])
}

/// An experiment as a scenario file states it, from typed values; the fields left out take
/// the scenario's defaults.
#[derive(Debug, Serialize)]
struct Spec {
    name: String,
    target: SocketAddr,
    protocol: Protocol,
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<Dist>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workload: Option<KvWorkload>,
    connections: usize,
    cpus: [usize; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamps: Option<TimestampMode>,
    load: f64,
    ci: CiSpec,
    percentiles: Vec<Percentile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sampling: Option<SamplingSpec>,
    limits: LimitsSpec,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "optional_duration"
    )]
    timeout: Option<Duration>,
    /// Every run here reports a failed inter-arrival test instead of ending on it: on a host
    /// where one core's agent cannot draw exponential gaps at these rates (each request
    /// costs it a few µs to send), the numbers are still shown, marked "interarrival not
    /// enforced" with the test's figures, so that the reader sees both what vernier measured
    /// and why it would not certify it.
    interarrival_check: &'static str,
}

#[derive(Debug, Serialize)]
struct CiSpec {
    percentile: Percentile,
    #[serde(serialize_with = "ci_width")]
    width: CiWidth,
}

#[derive(Debug, Serialize)]
struct SamplingSpec {
    rate: f64,
    samples: usize,
}

#[derive(Debug, Serialize)]
struct LimitsSpec {
    max_tries: u32,
    #[serde(serialize_with = "duration")]
    max_duration: Duration,
}

impl Spec {
    /// The defaults every experiment here shares.
    fn new(name: String, target: SocketAddr, protocol: Protocol, cpu: usize, rate: f64) -> Spec {
        Spec {
            name,
            target,
            protocol,
            service: None,
            workload: None,
            connections: CONNECTIONS,
            cpus: [cpu],
            timestamps: None,
            load: rate,
            ci: CiSpec {
                percentile: Percentile::P99,
                width: CiWidth::Relative(0.2),
            },
            percentiles: vec![Percentile::P50, Percentile::P99],
            sampling: None,
            limits: LimitsSpec {
                max_tries: 10,
                max_duration: Duration::ZERO,
            },
            timeout: None,
            interarrival_check: "report",
        }
    }

    /// The typed scenario, checked as a scenario file is.
    fn scenario(&self) -> Result<Scenario, ScenarioError> {
        let yaml = serde_yaml::to_string(self).map_err(|e| ScenarioError::Syntax {
            path: None,
            line: None,
            message: format!("experiment {}: cannot be written as YAML: {e}", self.name),
        })?;
        Scenario::from_yaml(&yaml, None, &[])
    }
}

/// A duration as a scenario writes it, in the largest unit that keeps it whole (`90s`,
/// `500ms`, `1us`).
fn duration_spec(duration: Duration) -> String {
    let ns = duration.as_nanos();
    [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
        .into_iter()
        .find(|&(unit, _)| ns > 0 && ns.is_multiple_of(unit))
        .map_or_else(
            || format!("{ns}ns"),
            |(unit, name)| format!("{}{name}", ns / unit),
        )
}

fn duration<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&duration_spec(*duration))
}

fn optional_duration<S: Serializer>(
    value: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(d) => duration(d, serializer),
        None => serializer.serialize_none(),
    }
}

fn ci_width<S: Serializer>(width: &CiWidth, serializer: S) -> Result<S::Ok, S::Error> {
    match *width {
        CiWidth::Absolute(d) => duration(&d, serializer),
        CiWidth::Relative(fraction) => {
            serializer.serialize_str(&format!("{}%", (fraction * 1e8).round() / 1e6))
        }
    }
}

/// A point of part 1: `service` at `load` (a share of capacity) against the synthetic
/// server, within `limit`.
pub(super) fn accuracy(
    target: SocketAddr,
    cpu: usize,
    service: &Service,
    load: f64,
    timestamps: Timestamps,
    limit: Duration,
) -> Result<Scenario, ScenarioError> {
    let name = format!(
        "{}-{:.0}pct-{}",
        service.name,
        load * 100.0,
        timestamps.name()
    );
    // The CI asked as a share of the measured p99 (as TailBench states its precision): a
    // share of the model's would be out of reach wherever the host's stalls lift the
    // measured tail far above the model.
    Spec {
        service: Some(service.dist),
        timestamps: Some(timestamps.mode()),
        sampling: Some(SamplingSpec {
            rate: 0.5,
            samples: 5000,
        }),
        limits: LimitsSpec {
            max_tries: 10,
            max_duration: limit,
        },
        ..Spec::new(
            name,
            target,
            Protocol::synthetic(),
            cpu,
            load / MEAN_US * 1e6,
        )
    }
    .scenario()
}

/// The precision point: no service time at 1,000 req/s, every request sampled, against the
/// calibrated floor.
pub(super) fn precision(
    target: SocketAddr,
    cpu: usize,
    timestamps: Timestamps,
    limit: Duration,
) -> Result<Scenario, ScenarioError> {
    Spec {
        service: Some(Dist::fixed(Duration::ZERO)),
        connections: 4,
        timestamps: Some(timestamps.mode()),
        ci: CiSpec {
            percentile: Percentile::P50,
            width: CiWidth::Absolute(Duration::from_micros(1)),
        },
        sampling: Some(SamplingSpec {
            rate: 1.0,
            samples: 2000,
        }),
        limits: LimitsSpec {
            max_tries: 10,
            max_duration: limit,
        },
        ..Spec::new(
            format!("precision-1000rps-{}", timestamps.name()),
            target,
            Protocol::synthetic(),
            cpu,
            1000.0,
        )
    }
    .scenario()
}

/// vernier at `rate` against a real server of part 2.
pub(super) fn against(
    server: Server,
    addr: SocketAddr,
    cpu: usize,
    rate: f64,
    depth: Depth,
) -> Result<Scenario, ScenarioError> {
    let limit_s = match depth {
        Depth::Full => SERVER_LIMIT_S,
        Depth::Quick => QUICK_SERVER_LIMIT_S,
    };
    Spec {
        workload: Some(server.workload()),
        percentiles: vec![Percentile::P50, Percentile::P99, Percentile::P99_9],
        limits: LimitsSpec {
            max_tries: 6,
            max_duration: Duration::from_secs(limit_s),
        },
        timeout: Some(Duration::from_millis(500)),
        ..Spec::new(
            format!("{}-{rate:.0}", server.name()),
            addr,
            server.protocol(),
            cpu,
            rate,
        )
    }
    .scenario()
}

/// Runs `scenario` headless and quietly, recorded under `runs` by its name.
pub(super) fn measure(scenario: &Scenario, runs: &Path) -> Measurement {
    let record = runs.join(&scenario.name);
    let outcome = run_quietly(
        scenario,
        &SessionOptions {
            record: Some(record.clone()),
            ..SessionOptions::default()
        },
    );
    Measurement {
        record,
        outcome: match outcome {
            Ok(outcome) => outcome.points.first().map_or(Answered::NoResult, |r| {
                Answered::Measured(Box::new(Measured::of(r)))
            }),
            Err(e) => Answered::Failed {
                error: e.to_string(),
            },
        },
    }
}

/// Runs `scenario` without a UI and without a word on stderr, as `vernier run --headless
/// --quiet` does: its progress printer says nothing of a fixed load's run when quiet (every
/// experiment here is one load, and serves no live figures), so no printer is needed.
fn run_quietly(
    scenario: &Scenario,
    options: &SessionOptions,
) -> Result<session::SessionResult, Error> {
    let runtime = session::runtime("vernier-session")?;
    // Headless runs take no commands but Ctrl-C; the sender lives as long as the run.
    let (_commands, rx) = tokio::sync::mpsc::unbounded_channel();
    runtime.block_on(session::run(scenario, options, rx, |_| {}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::LoadPlan;
    use vernier_agent::Workload;

    fn addr() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 4242))
    }

    fn built(scenario: Result<Scenario, ScenarioError>) -> Scenario {
        scenario.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_services_are_the_specs_of_results_md_each_of_mean_25us() {
        let services = services().unwrap_or_else(|e| panic!("{e}"));
        let specs: Vec<String> = services.iter().map(|s| s.dist.to_string()).collect();
        assert_eq!(
            specs,
            ["fixed:25us", "exp:25us", "bimodal:13.158us:131.58us:0.9"]
        );
        for s in &services {
            assert!((s.dist.mean() / 1e3 - MEAN_US).abs() < 0.01, "{}", s.dist);
        }
    }

    #[test]
    fn an_accuracy_point_is_the_scenario_part_1_states() {
        let services = services().unwrap_or_else(|e| panic!("{e}"));
        let s = built(accuracy(
            addr(),
            1,
            &services[1],
            0.5,
            Timestamps::User,
            Duration::from_secs(POINT_LIMIT_S),
        ));
        assert_eq!(s.name, "exponential-50pct-user");
        assert_eq!(s.targets, ["127.0.0.1:4242"]);
        assert_eq!(s.protocol, Protocol::synthetic());
        assert_eq!(
            s.workload,
            Workload::Synthetic {
                service: services[1].dist,
                probe: 0.0,
            }
        );
        assert_eq!(s.load, LoadPlan::Fixed(20_000.0));
        assert_eq!(s.ci.percentile, Percentile::P99);
        assert_eq!(s.ci.width, CiWidth::Relative(0.2));
        assert_eq!(s.percentiles, [Percentile::P50, Percentile::P99]);
        assert_eq!((s.sampling.rate, s.sampling.samples), (0.5, 5000));
        assert_eq!(s.limits.max_tries, 10);
        assert_eq!(s.limits.max_duration, Duration::from_secs(90));
        assert_eq!(s.timestamps, TimestampMode::User);
        assert_eq!((s.cpus.as_slice(), s.connections), ([1].as_slice(), 16));
        assert!(!s.interarrival_enforced);
        // The record keeps YAML that reads back as the same scenario (replay).
        assert_eq!(built(Scenario::from_yaml(&s.yaml, None, &[])), s);
    }

    #[test]
    fn a_precision_point_samples_everything_at_1000_req_s() {
        let s = built(precision(
            addr(),
            0,
            Timestamps::Kernel,
            Duration::from_secs(10),
        ));
        assert_eq!(s.name, "precision-1000rps-kernel");
        assert_eq!(s.load, LoadPlan::Fixed(1000.0));
        assert_eq!(s.ci.percentile, Percentile::P50);
        assert_eq!(s.ci.width, CiWidth::Absolute(Duration::from_micros(1)));
        assert_eq!((s.sampling.rate, s.sampling.samples), (1.0, 2000));
        assert_eq!(s.connections, 4);
        assert_eq!(s.timestamps, TimestampMode::Kernel);
        assert!(s.yaml.contains("width: 1us"), "{}", s.yaml);
    }

    #[test]
    fn vernier_against_a_server_speaks_its_protocol_with_its_workload() {
        for (server, protocol) in [
            (Server::Memcached, Protocol::memcached()),
            (Server::Redis, Protocol::redis()),
            (Server::Nginx, Protocol::http()),
        ] {
            let s = built(against(server, addr(), 1, 50_000.0, Depth::Quick));
            assert_eq!(s.name, format!("{}-50000", server.name()));
            assert_eq!(s.protocol, protocol);
            assert_eq!(s.workload, Workload::KeyValue(server.workload()));
            assert_eq!(
                s.percentiles,
                [Percentile::P50, Percentile::P99, Percentile::P99_9]
            );
            assert_eq!(s.timeout, Duration::from_millis(500));
            assert_eq!(s.limits.max_duration, Duration::from_secs(8));
            assert_eq!(s.limits.max_tries, 6);
        }
        let full = built(against(Server::Redis, addr(), 1, 10_000.0, Depth::Full));
        assert_eq!(full.limits.max_duration, Duration::from_secs(20));
    }

    #[test]
    fn durations_are_written_in_their_largest_whole_unit() {
        assert_eq!(duration_spec(Duration::from_secs(90)), "90s");
        assert_eq!(duration_spec(Duration::from_millis(500)), "500ms");
        assert_eq!(duration_spec(Duration::from_micros(1)), "1us");
        assert_eq!(duration_spec(Duration::from_nanos(1500)), "1500ns");
    }
}
