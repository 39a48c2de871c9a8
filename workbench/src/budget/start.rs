//! The budget's measurements at a run's start, before any load: the path's floor (a
//! loopback ping-pong) and the client's share (the agent against a server that answers at
//! once). Each says on the session's watch what it is about to do, each ends within a
//! limit of its own (a host that stalls still starts its run, and the part says what was
//! cut), and neither spins where spinning cannot progress: two busy-polling ends on one
//! core take turns at the scheduler's time slices, a slice (milliseconds) per message, so
//! where the ends would share a core the ping-pong blocks in `read` and the calibration's
//! server sleeps in epoll, and the parts say so.
//!
//! The cores are chosen once, here, for both ([`Cores`]), from the scenario's (`cpus:`,
//! `target_cpus:`) and this process's affinity: a thread may pin itself outside the mask
//! its process was started with (`taskset`), and these measurements keep to that mask.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

use vernier_agent::calibrate::{self, PingPong, Wait};
use vernier_agent::sys::{Transport, available_cpus};
use vernier_agent::{AgentKind, LoadSpec, Workload};
use vernier_fixtures::{ServeConfig, ServeProtocol, Server};
use vernier_protocols::{Dist, Protocol, WorkloadKind};

use super::grid::grid;
use crate::coordinator::Part;
use crate::load::{Batches, Load};
use crate::scenario::Scenario;

/// Round trips of the floor's ping-pong: at ~6 µs each on loopback, a tenth of a second,
/// and a p50 good to a few tens of ns.
pub(super) const FLOOR_ROUND_TRIPS: u64 = 10_000;
/// How long the floor's ping-pong may take, its 1,000 warm-up round trips included: its
/// 11,000 round trips take a tenth of a second busy-polling and a few tenths blocking (a
/// context switch each way, up to ~30 µs on a KVM guest), so a host that needs ten times
/// that stalls too often for a floor; the round trips measured by then stand, and the
/// part says how many. (The message in flight may add one
/// [`PING_PONG_STALL`](calibrate::PING_PONG_STALL).)
pub(super) const FLOOR_LIMIT: Duration = Duration::from_secs(3);
/// The client calibration's rate: low enough that requests never queue at a server that
/// answers at once, high enough for 1,000 requests in [`CLIENT_DURATION`].
pub(super) const CLIENT_RATE: f64 = 2_000.0;
/// How long the client calibration measures (after its engine's 300 ms warm-up).
pub(super) const CLIENT_DURATION: Duration = Duration::from_millis(500);
/// How long the client calibration may take: its engine's warm-up and [`CLIENT_DURATION`],
/// with an engine's and a server's start and stop, about a second on a quiet host; five
/// times that is a host too stalled for the figure to mean anything, and the part is
/// unknown, saying so (its thread ends by itself, its steps being bounded too).
pub(super) const CLIENT_LIMIT: Duration = Duration::from_secs(5);

/// The cores the start-of-run measurements run on, chosen once for both.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cores {
    /// The CPUs this process may use (its affinity), ascending.
    allowed: Vec<usize>,
    /// The workers' core: the scenario's first `cpus:`, when it names one this process
    /// may use.
    worker: Option<usize>,
    /// The target's core: the scenario's first `target_cpus:`, when it names one this
    /// process may use.
    target: Option<usize>,
    /// The target's core the scenario names and this process may not use.
    target_outside: Option<usize>,
}

impl Cores {
    /// The cores of `scenario` against this process's affinity.
    pub(super) fn of(scenario: &Scenario) -> Cores {
        Cores::within(scenario, available_cpus())
    }

    /// The cores of `scenario` against `allowed`.
    pub(super) fn within(scenario: &Scenario, allowed: Vec<usize>) -> Cores {
        let usable = |cpu: &&usize| allowed.contains(cpu);
        let worker = scenario.cpus.first().filter(usable).copied();
        let target = scenario.target_cpus.first().filter(usable).copied();
        let target_outside = scenario
            .target_cpus
            .first()
            .filter(|c| !allowed.contains(c))
            .copied();
        Cores {
            allowed,
            worker,
            target,
            target_outside,
        }
    }

    /// The floor's ping-pong: its client on the workers' core (else the first this
    /// process may use), its server on the target's (else another this process may use,
    /// else the client's own: then it blocks). `None` when the affinity cannot be read.
    pub(super) fn ping_pong(&self) -> Option<(usize, usize)> {
        let client = self.worker.or_else(|| self.allowed.first().copied())?;
        let server = self
            .target
            .filter(|&t| t != client)
            .or_else(|| self.allowed.iter().copied().find(|&c| c != client))
            .unwrap_or(client);
        Some((client, server))
    }

    /// The calibration server's core (the target's, when this process may use it) and
    /// whether it busy-polls: only with a core apart from the worker's, which it has when
    /// this process may use two or more and the scenario does not put both on one.
    fn client_server(&self) -> (Option<usize>, bool) {
        let apart =
            self.allowed.len() >= 2 && (self.target.is_none() || self.target != self.worker);
        (self.target, apart)
    }

    /// `; the target's CPU 0 is not one this process may use (it may use 1)`, or nothing.
    fn outside_note(&self) -> String {
        self.target_outside.map_or(String::new(), |t| {
            format!(
                "; the target's CPU {t} (target_cpus) is not one this process may use (it may use {}), so nothing of vernier's runs there",
                list(&self.allowed)
            )
        })
    }
}

/// Why the ping-pong's ends share CPU `cpu`, for the parts and the progress line.
fn shared(cpu: usize) -> String {
    format!(
        "both ends on CPU {cpu}, the only one this process may use (busy-polling there, each end would keep the core from the other for a scheduler time slice per message)"
    )
}

/// `0,2,3`.
fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The floor: the ping-pong's p50 between the agent's core and the target's, when the
/// target is on loopback. Also the loopback p50 itself (or why there is none), which the
/// client's calibration is against whatever the target's path. Says what it does first.
pub(super) fn floor(
    scenario: &Scenario,
    cores: &Cores,
    say: &mut dyn FnMut(String),
) -> (Part, Result<f64, String>) {
    let Some((client_cpu, server_cpu)) = cores.ping_pong() else {
        let why =
            "the CPUs this process may use cannot be read, so the ping-pong has no core to run on"
                .to_string();
        say(format!("latency budget: no floor: {why}"));
        return (Part::unknown(why.clone()), Err(why));
    };
    let wait = Wait::between(client_cpu, server_cpu);
    let ends = match wait {
        Wait::BusyPoll => format!("CPU {client_cpu} to CPU {server_cpu}"),
        Wait::Blocking => shared(client_cpu),
    };
    say(format!(
        "latency budget: measuring the path's floor (at most {FLOOR_LIMIT:?}): {FLOOR_ROUND_TRIPS} round trips of a {} ping-pong over loopback, {ends}{}",
        wait.name(),
        cores.outside_note()
    ));
    let rtt = match calibrate::loopback(&PingPong {
        client_cpu,
        server_cpu,
        round_trips: FLOOR_ROUND_TRIPS,
        limit: FLOOR_LIMIT,
    }) {
        Ok(rtt) => rtt,
        Err(e) => {
            let why = format!("the loopback ping-pong failed: {e}");
            return (Part::unknown(why.clone()), Err(why));
        }
    };
    let cut = if rtt.stopped_at_limit {
        format!(
            "; it stopped at its limit of {FLOOR_LIMIT:?} with {} of its {FLOOR_ROUND_TRIPS} round trips (a host that stalls)",
            rtt.round_trips
        )
    } else {
        String::new()
    };
    let how = match rtt.wait {
        Wait::BusyPoll => format!(
            "p50 of {} round trips of a busy-polling TCP ping-pong over loopback ({}-byte messages, CPU {} to CPU {}) at the run's start{cut}{}",
            rtt.round_trips,
            rtt.message_bytes,
            rtt.client_cpu,
            rtt.server_cpu,
            cores.outside_note()
        ),
        Wait::Blocking => format!(
            "p50 of {} round trips of a TCP ping-pong over loopback blocking in read ({}-byte messages) at the run's start, {}: a context switch each way is in the figure, which a busy-polling floor on two cores would not hold{cut}{}",
            rtt.round_trips,
            rtt.message_bytes,
            shared(rtt.client_cpu),
            cores.outside_note()
        ),
    };
    let remote: Vec<&str> = scenario
        .targets
        .iter()
        .filter(|t| !on_loopback(t))
        .map(String::as_str)
        .collect();
    let part = if remote.is_empty() {
        Part::known(rtt.p50, how)
    } else {
        Part::unknown(format!(
            "{} is not on loopback: a busy-poll floor across the network needs an echo peer on the target's host, which vernier does not start",
            remote.join(", ")
        ))
    };
    (part, Ok(rtt.p50))
}

/// Whether `target` (`host:port`) resolves to loopback addresses only.
pub(super) fn on_loopback(target: &str) -> bool {
    target
        .to_socket_addrs()
        .map(|mut addrs| addrs.all(|a| a.ip().is_loopback()))
        .unwrap_or(false)
}

/// The client's share: the agent's p50 against a server asked for no service time, with
/// the scenario's timestamps and way of waiting, less the loopback floor `floor_us`. The
/// server is the target itself when it speaks the synthetic protocol on loopback (its own
/// handling is then in the figure, as it is in every request of the run), otherwise
/// vernier's synthetic server, in process, on the target's core when named, busy-polling
/// when it has a core apart from the worker's. Says what it does first; gives up after
/// [`CLIENT_LIMIT`].
pub(super) fn client(
    scenario: &Scenario,
    cores: &Cores,
    floor_us: f64,
    say: &mut dyn FnMut(String),
) -> (Part, Vec<f64>) {
    let target = scenario
        .targets
        .first()
        .filter(|t| scenario.protocol.workload() == WorkloadKind::Service && on_loopback(t))
        .and_then(|t| t.to_socket_addrs().ok()?.next());
    let (server_cpu, busy_poll) = cores.client_server();
    let against = match (target, busy_poll) {
        (Some(_), _) => "the target itself asked for no service time".to_string(),
        (None, true) => {
            "vernier's synthetic server answering at once (in process, busy-polling)".to_string()
        }
        (None, false) => format!(
            "vernier's synthetic server answering at once (in process, sleeping in epoll: {})",
            if cores.allowed.len() < 2 {
                "this process may use one CPU, and a busy-polling server there would keep it from the worker".to_string()
            } else {
                format!(
                    "the scenario puts it on the worker's CPU {}, where a busy-polling server would keep the core from the worker",
                    server_cpu.map_or(String::new(), |c| c.to_string())
                )
            }
        ),
    };
    say(format!(
        "latency budget: calibrating the client's share (at most {CLIENT_LIMIT:?}): {} requests at {CLIENT_RATE:.0} req/s over one connection against {against}",
        (CLIENT_RATE * CLIENT_DURATION.as_secs_f64()).round()
    ));
    let (tx, rx) = mpsc::sync_channel(1);
    let calibration = Calibration {
        scenario: scenario.clone(),
        target,
        server_cpu,
        busy_poll,
    };
    let spawned = std::thread::Builder::new()
        .name("vernier-calibrate".into())
        .spawn(move || {
            let _ = tx.send(calibration.run());
        });
    if let Err(e) = spawned {
        return (
            Part::unknown(format!("the client's calibration failed (its thread): {e}")),
            Vec::new(),
        );
    }
    let latency = match rx.recv_timeout(CLIENT_LIMIT) {
        Ok(Ok(latency)) => latency,
        Ok(Err(why)) => {
            return (
                Part::unknown(format!("the client's calibration failed ({why})")),
                Vec::new(),
            );
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            return (
                Part::unknown(format!(
                    "the client's calibration did not end within its limit of {CLIENT_LIMIT:?} (a host that stalls), and was left to end by itself"
                )),
                Vec::new(),
            );
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            return (
                Part::unknown("the client's calibration thread panicked"),
                Vec::new(),
            );
        }
    };
    let path = grid()
        .map(|q| latency.value_at_quantile(q) as f64 / 1e3)
        .collect();
    let p50 = latency.value_at_quantile(0.5) as f64 / 1e3;
    let part = Part::known(
        p50 - floor_us,
        format!(
            "calibrated at the run's start, not per request: the agent's p50 ({p50:.1} µs, {} requests at {CLIENT_RATE:.0} req/s, one connection, the run's timestamps and polling) against {against}, less the loopback floor ({floor_us:.1} µs); the samples carry one stamp per request, so kernel and user stamps cannot be compared request by request",
            latency.len()
        ),
    );
    (part, path)
}

/// The client calibration's load, run in a thread of its own so that the session can
/// stop waiting for it.
struct Calibration {
    scenario: Scenario,
    /// The target, when it is the calibration's server.
    target: Option<SocketAddr>,
    server_cpu: Option<usize>,
    busy_poll: bool,
}

impl Calibration {
    /// The latencies of the calibration's requests (ns), or what failed.
    fn run(self) -> Result<hdrhistogram::Histogram<u64>, String> {
        let scenario = &self.scenario;
        let (addr, transport, server) = match self.target {
            Some(addr) => (addr, scenario.transport, None),
            None => {
                let mut config = ServeConfig::new(
                    SocketAddr::from(([127, 0, 0, 1], 0)),
                    ServeProtocol::Synthetic,
                );
                config.busy_poll = self.busy_poll;
                config.cpus = self.server_cpu.map(|c| vec![c]);
                let server = Server::start(config).map_err(|e| format!("its server: {e}"))?;
                (server.local_addr(), Transport::Tcp, Some(server))
            }
        };
        let spec = LoadSpec {
            poll: scenario.poll,
            target: addr,
            transport,
            protocol: Protocol::synthetic(),
            workload: Workload::Synthetic {
                service: Dist::fixed(Duration::ZERO),
                probe: 0.0,
            },
            workers: 1,
            cpus: scenario.cpus.iter().take(1).copied().collect(),
            connections: 1,
            depth: 1,
            kind: AgentKind::Symmetric,
            timestamps: scenario.timestamps.clone(),
            seed: scenario.seed,
            timeout: Duration::from_secs(1),
            duet: None,
        };
        let load = Load {
            rate: CLIENT_RATE,
            duration: CLIENT_DURATION,
            sampling: 0.0,
            batches: Batches::Recycled,
        };
        let window = crate::load::run_load(spec, load);
        if let Some(server) = server {
            let _ = server.stop();
        }
        let window = window.map_err(|e| format!("its load: {e}"))?;
        if window.latency.is_empty() {
            return Err(format!("it measured no reply: {}", window.account()));
        }
        Ok(window.latency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(yaml: &str) -> Scenario {
        Scenario::from_yaml(yaml, None, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    const BASE: &str = "name: s\ntarget: 127.0.0.1:11211\nprotocol: synthetic\nservice: exp:20us\nload: 1000\nci: {percentile: 99, width: 10us}\n";

    #[test]
    fn the_ping_pong_takes_the_workers_and_the_targets_cores_when_it_may() {
        let s = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [0]\n"));
        let cores = Cores::within(&s, vec![0, 1, 2]);
        assert_eq!(cores.ping_pong(), Some((1, 0)));
        assert_eq!(cores.client_server(), (Some(0), true));
        assert_eq!(cores.outside_note(), "");
    }

    #[test]
    fn on_one_cpu_both_ends_share_it_and_nothing_spins() {
        // taskset -c 1 around a scenario whose target is on core 0.
        let s = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [0]\n"));
        let cores = Cores::within(&s, vec![1]);
        assert_eq!(cores.ping_pong(), Some((1, 1)));
        assert_eq!(Wait::between(1, 1), Wait::Blocking);
        assert_eq!(cores.client_server(), (None, false));
        assert!(
            cores.outside_note().contains(
                "the target's CPU 0 (target_cpus) is not one this process may use (it may use 1)"
            ),
            "{}",
            cores.outside_note()
        );
        // No cores named, one CPU allowed.
        let s = scenario(BASE);
        let cores = Cores::within(&s, vec![0]);
        assert_eq!(cores.ping_pong(), Some((0, 0)));
        assert_eq!(cores.client_server(), (None, false));
    }

    #[test]
    fn a_target_on_the_workers_core_keeps_the_ping_pong_apart_but_the_server_asleep() {
        let s = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [1]\n"));
        let cores = Cores::within(&s, vec![0, 1]);
        assert_eq!(cores.ping_pong(), Some((1, 0)));
        assert_eq!(cores.client_server(), (Some(1), false));
        // Unnamed: the first two this process may use; the server left to the scheduler.
        let s = scenario(BASE);
        let cores = Cores::within(&s, vec![2, 3]);
        assert_eq!(cores.ping_pong(), Some((2, 3)));
        assert_eq!(cores.client_server(), (None, true));
        assert_eq!(Cores::within(&s, Vec::new()).ping_pong(), None);
    }

    /// The floor on one CPU ends, blocking, and its part and its line say so.
    #[test]
    fn the_floor_on_one_cpu_blocks_and_says_so() {
        let s = scenario(BASE);
        let cpu = available_cpus()[0];
        let cores = Cores::within(&s, vec![cpu]);
        let mut said = Vec::new();
        let started = std::time::Instant::now();
        let (part, loopback) = floor(&s, &cores, &mut |line| said.push(line));
        assert!(started.elapsed() < FLOOR_LIMIT + calibrate::PING_PONG_STALL);
        assert!(loopback.is_ok(), "{loopback:?}");
        assert!(part.us.is_some(), "{part:?}");
        assert!(part.how.contains("blocking in read"), "{}", part.how);
        assert!(
            part.how.contains(&format!("both ends on CPU {cpu}")),
            "{}",
            part.how
        );
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with(&format!(
                "latency budget: measuring the path's floor (at most 3s): {FLOOR_ROUND_TRIPS} round trips of a blocking ping-pong over loopback, both ends on CPU {cpu}"
            )),
            "{said:?}"
        );
    }
}
