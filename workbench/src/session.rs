//! The session: the I/O around the coordinator. It starts or reaches the agents (an
//! in-process engine for `local`, gRPC for the others), turns their batch streams into
//! the coordinator's inputs, carries out its actions on every agent, records the run, and
//! hands every event to whoever watches (the headless printer, the TUI).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use vernier_agent::client::{AgentClient, ClientTls};
use vernier_agent::wire::pb;
use vernier_agent::{Batch, DEFAULT_PERIOD, Engine, HostProbe};
use vernier_protocols::InterArrival;

use crate::coordinator::{
    Action, Coordinator, Event, EventKind, Input, PointConfig, PointResult, Taken, UserCommand,
    Verdict,
};
use crate::error::Error;
use crate::record::{Machine, Recorder, RunRecord};
use crate::scenario::{AgentSpec, Scenario};

/// How often the coordinator is told that time passed.
const TICK: Duration = Duration::from_millis(25);
/// How often the host probes' reports go to the coordinator: a few hundred wake-ups each,
/// enough for a p99, and few enough inputs to cost nothing.
const HOST_EVERY: Duration = Duration::from_millis(500);
/// How often remote agents' leases are renewed (their lease is three times longer).
const HEARTBEAT: Duration = Duration::from_secs(1);
/// The lease asked of remote agents: a coordinator that vanishes stops their load soon.
const LEASE: Duration = Duration::from_secs(3);
/// How long a control call to a remote agent may take: a partitioned agent never answers,
/// and the session must neither hang on it nor on stopping it.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a target may take to accept the connection that checks it before a run: a
/// server on loopback or a lab network accepts within a millisecond, and the refusal of a
/// target that does not comes within the few seconds a user waits for an error.
const TARGET_CHECK: Duration = Duration::from_secs(1);

/// How a session is run.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// The run directory (`None`: runs/DATE-NAME under the current directory).
    pub record: Option<PathBuf>,
    /// The CA (PEM) for remote agents' TLS certificates, for agents whose scenario entry
    /// names none (`None`: those are reached in plain text).
    pub tls_ca: Option<PathBuf>,
    /// Serve live figures at `/metrics` on this address for the run (OpenMetrics text;
    /// see [`crate::metrics`]).
    pub metrics: Option<std::net::SocketAddr>,
}

/// What a finished session measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Each load point's result.
    pub points: Vec<PointResult>,
    /// For an SLO search, the highest load that met it.
    pub slo_rate: Option<f64>,
    /// The run's verdict.
    pub verdict: Verdict,
    /// The run directory.
    pub record: PathBuf,
    /// The timestamp source in use.
    pub timestamps: String,
    /// Writing the record failed (the measurement itself went on): why.
    pub record_error: Option<String>,
}

/// What a session tells its watcher.
#[derive(Debug, Clone)]
pub enum Update {
    /// The agents are connected; the record is at this path.
    Started {
        /// The run directory.
        record: PathBuf,
        /// The timestamp source in use.
        timestamps: String,
        /// The cores vernier's own threads (all but the pinned workers) were confined to:
        /// the local workers' cores, when the scenario pins them (empty: not confined).
        confined: Vec<usize>,
        /// Where the live figures are served (`--metrics`), the port chosen.
        metrics: Option<std::net::SocketAddr>,
    },
    /// The coordinator said something.
    Event(Event),
    /// What the session is about to do before the load or beside it (a start-of-run
    /// measurement, the host probes), in a line for people.
    Preparing(String),
}

#[allow(clippy::large_enum_variant)] // Moved once, from its agent to the session.
enum Message {
    Batch(usize, Batch),
    Lost(usize, String),
}

/// One agent as the session drives it.
#[allow(clippy::large_enum_variant)] // A handful, for the whole run.
enum Link {
    Local {
        engine: Arc<Engine>,
        closed: Arc<AtomicBool>,
    },
    Remote {
        client: AgentClient,
        closed: Arc<AtomicBool>,
        /// The agent this session started over SSH, shut down at the end.
        deployed: Option<crate::deploy::Deployed>,
        /// How it was reached: a replicated point's runs reach it again.
        address: String,
        token: String,
        tls: Option<ClientTls>,
    },
    /// An agent that could not be started again between runs (closed).
    Gone { closed: Arc<AtomicBool> },
}

impl Link {
    async fn apply(
        &mut self,
        action: Action,
        share: f64,
        interarrival: &InterArrival,
    ) -> Result<(), String> {
        match self {
            Link::Local { engine, .. } => {
                match action {
                    Action::Load { rate } => engine.set_load(rate * share, interarrival),
                    Action::Sampling { rate, generation } => engine.set_sampling(rate, generation),
                    Action::Pause => engine.pause(),
                    // The session renews links itself (see `renew`).
                    Action::Renew { .. } | Action::Finished => {}
                }
                Ok(())
            }
            Link::Gone { .. } => Ok(()),
            Link::Remote { client, .. } => {
                let address = client.address().to_string();
                let call = async {
                    match action {
                        Action::Load { rate } => {
                            client
                                .start_load(rate * share, &interarrival.to_string())
                                .await
                        }
                        Action::Sampling { rate, generation } => {
                            client.start_measure(rate, generation).await
                        }
                        Action::Pause => client.pause().await,
                        Action::Renew { .. } | Action::Finished => Ok(()),
                    }
                };
                match tokio::time::timeout(CALL_TIMEOUT, call).await {
                    Ok(result) => result.map_err(|s| format!("{address}: {}", s.message())),
                    Err(_) => Err(format!("{address}: no answer within {CALL_TIMEOUT:?}")),
                }
            }
        }
    }

    fn closed(&self) -> &AtomicBool {
        match self {
            Link::Local { closed, .. } | Link::Remote { closed, .. } | Link::Gone { closed } => {
                closed
            }
        }
    }

    /// Stops forwarding the agent's batches and heartbeats (it was lost).
    fn close(&self) {
        self.closed().store(true, Ordering::Relaxed);
    }

    /// Whether the agent was lost (or the link stopped).
    fn is_closed(&self) -> bool {
        self.closed().load(Ordering::Relaxed)
    }

    async fn stop(self) {
        match self {
            Link::Local { engine, closed } => {
                closed.store(true, Ordering::Relaxed);
                let _ = tokio::task::spawn_blocking(move || engine.stop()).await;
            }
            Link::Gone { .. } => {}
            Link::Remote {
                mut client,
                closed,
                deployed,
                ..
            } => {
                closed.store(true, Ordering::Relaxed);
                // An agent that does not answer stops by itself when its lease lapses.
                let _ = tokio::time::timeout(CALL_TIMEOUT, client.stop()).await;
                if let Some(d) = deployed {
                    d.stop().await;
                }
            }
        }
    }
}

/// Refuses a run whose target nothing listens at, before anything starts: otherwise the
/// session calibrates the latency budget first and the agents' workers fail one by one,
/// each with its own message. Checked with a TCP connection from this host, for the targets
/// of local agents over TCP: UDP has no connection to refuse, and remote agents reach
/// their targets over their own networks. A bad input (exit 2), naming the address.
pub fn check_targets(scenario: &Scenario) -> Result<(), Error> {
    if scenario.transport != vernier_agent::sys::Transport::Tcp {
        return Ok(());
    }
    let mut checked: Vec<&str> = Vec::new();
    for (i, agent) in scenario.agents.iter().enumerate() {
        let target = scenario.targets[i % scenario.targets.len()].as_str();
        if !matches!(agent, AgentSpec::Local { .. }) || checked.contains(&target) {
            continue;
        }
        checked.push(target);
        let addr = resolve(target).map_err(|e| Error::Usage(e.to_string()))?;
        if let Err(e) = std::net::TcpStream::connect_timeout(&addr, TARGET_CHECK) {
            let what = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    "nothing is listening there (connection refused)".to_owned()
                }
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => format!(
                    "nothing accepted a connection within {} s",
                    TARGET_CHECK.as_secs_f64()
                ),
                _ => format!("cannot connect: {e}"),
            };
            let resolved = match addr.to_string() == target {
                true => String::new(),
                false => format!(" ({addr})"),
            };
            return Err(Error::Usage(format!(
                "target {target}{resolved}: {what}; start the server, or check the address"
            )));
        }
    }
    Ok(())
}

fn resolve(target: &str) -> Result<SocketAddr, Error> {
    target
        .to_socket_addrs()
        .map_err(|e| Error::Failed(format!("target {target}: {e}")))?
        .next()
        .ok_or_else(|| Error::Failed(format!("target {target} resolves to no address")))
}

/// The runtime every command's async part runs on: two worker threads named `name`
/// (the sessions, the agent's control plane, deploys).
pub fn runtime(name: &str) -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            path: "tokio runtime".into(),
            source,
        })
}

/// What the budget takes of one point's last measuring round: its kept requests'
/// departure times, the path probe's requests and, with a probe, each connection's
/// latencies.
#[derive(Debug, Default)]
struct Sent {
    /// The path probe's share of the rate (`None`: no probe).
    probe: Option<f64>,
    point: Option<usize>,
    round: u32,
    agents: std::collections::BTreeSet<usize>,
    departures: Vec<u64>,
    latencies: std::collections::BTreeMap<(usize, u16), Vec<f64>>,
    /// The probe's answered requests: (agent, departure ns on its clock, latency ns).
    probes: Vec<(usize, u64, u64)>,
    /// The times the server says it served the load's requests, and what they asked, ns.
    served: Option<(hdrhistogram::Histogram<u64>, hdrhistogram::Histogram<u64>)>,
    /// The connections they went over.
    probe_connections: std::collections::BTreeSet<(usize, u16)>,
}

impl Sent {
    /// Nothing kept yet, with a path probe of `probe`'s share (`None`: none).
    fn new(probe: Option<f64>) -> Sent {
        Sent {
            probe,
            ..Sent::default()
        }
    }

    /// Keeps `samples`, starting afresh at a new point or a later round (a point's result
    /// is its last round's); a batch of an earlier round is stale.
    fn add(&mut self, point: usize, round: u32, agent: usize, batch: &vernier_agent::Batch) {
        if self.point != Some(point) || round > self.round {
            *self = Sent {
                point: Some(point),
                round,
                ..Sent::new(self.probe)
            };
        } else if round < self.round {
            return;
        }
        let samples = &batch.samples;
        if !batch.served.is_empty() {
            match &mut self.served {
                Some((served, asked)) => {
                    let _ = served.add(&batch.served);
                    let _ = asked.add(&batch.asked);
                }
                None => self.served = Some((batch.served.clone(), batch.asked.clone())),
            }
        }
        self.agents.insert(agent);
        self.departures
            .extend(samples.iter().map(|s| s.departure_ns));
        if self.probe.is_none() {
            return;
        }
        let answered =
            |s: &&vernier_agent::Sample| s.outcome != vernier_agent::Outcome::Error as u8;
        for s in batch.probes.iter().filter(answered) {
            self.probes.push((agent, s.departure_ns, s.latency_ns));
            self.probe_connections.insert((agent, s.conn));
        }
        for s in samples
            .iter()
            .filter(|s| s.outcome != vernier_agent::Outcome::Error as u8)
        {
            self.latencies
                .entry((agent, s.conn))
                .or_default()
                .push(s.latency_ns as f64 / 1e3);
        }
    }

    /// What the budget takes: the departures, if they share one clock, the probe's window
    /// (at its share of the point's `rate`), and the median latency of each connection
    /// with enough samples to have one, with its standard error (from its order-statistic
    /// 95% CI). Taken at the point's verdict, leaving it empty for the next point.
    fn during(&mut self, rate: f64) -> crate::budget::During {
        let this = std::mem::replace(self, Sent::new(self.probe));
        // In the order each agent sent them (agents' clocks have origins of their own), one
        // agent after another, for the CI's batches.
        let mut probes = this.probes;
        probes.sort_unstable_by_key(|&(agent, departure, _)| (agent, departure));
        let series: Vec<u64> = probes.iter().map(|&(_, _, latency)| latency).collect();
        let probe = this.probe.and_then(|share| {
            crate::budget::ProbeWindow::from_latencies(
                rate * share,
                this.probe_connections.len(),
                &series,
            )
        });
        let sent = if this.agents.len() > 1 {
            Err(format!(
                "the requests came from {} agents, whose departure clocks do not share an origin",
                this.agents.len()
            ))
        } else {
            Ok(this.departures)
        };
        let connections = this
            .latencies
            .into_values()
            .filter(|l| l.len() >= MIN_CONNECTION_SAMPLES)
            .filter_map(|mut l| {
                l.sort_unstable_by(f64::total_cmp);
                let p50 = vernier_stats::percentile(&l, 0.5)?;
                let (lo, hi) = vernier_stats::percentile_ci(&l, 0.5, 0.95).ok()?;
                Some((p50, (hi - lo) / (2.0 * 1.959_964)))
            })
            .collect();
        crate::budget::During {
            served: this
                .served
                .as_ref()
                .map(|(served, asked)| {
                    (
                        crate::budget::histogram_grid(served),
                        crate::budget::histogram_grid(asked),
                    )
                })
                .unwrap_or_default(),
            probe,
            sent: Some(sent),
            connections,
        }
    }
}

/// Samples a connection needs for its median to count in the budget's spread of paths.
const MIN_CONNECTION_SAMPLES: usize = 50;

/// The default run directory: runs/DATE-NAME (with a counter if taken).
pub fn default_record_dir(name: &str) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let stamp: String = stamp
        .trim_end_matches('Z')
        .chars()
        .map(|c| if c == ':' { '-' } else { c })
        .collect();
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = Path::new("runs").join(format!("{stamp}-{safe}"));
    let mut dir = base.clone();
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = PathBuf::from(format!("{}-{n}", base.display()));
    }
    dir
}

/// Starts every agent; returns the links and the timestamp source they report. If one
/// cannot be started, those already started are stopped.
async fn connect(
    scenario: &Scenario,
    options: &SessionOptions,
    tx: &mpsc::UnboundedSender<Message>,
) -> Result<(Vec<Link>, String), Error> {
    let mut links = Vec::new();
    let mut timestamps = scenario.timestamps.to_string();
    for i in 0..scenario.agents.len() {
        match connect_one(scenario, options, i, tx).await {
            Ok((link, reported)) => {
                links.push(link);
                if let Some(t) = reported {
                    timestamps = t;
                }
            }
            Err(e) => {
                stop_all(links).await;
                return Err(e);
            }
        }
    }
    Ok((links, timestamps))
}

/// Starts agent `i`: a local engine, a remote agent, or one deployed over SSH first. For
/// the remote ones, also the timestamp source the agent reports.
async fn connect_one(
    scenario: &Scenario,
    options: &SessionOptions,
    i: usize,
    tx: &mpsc::UnboundedSender<Message>,
) -> Result<(Link, Option<String>), Error> {
    let target_text = &scenario.targets[i % scenario.targets.len()];
    let (address, token, tls, deployed) = match &scenario.agents[i] {
        AgentSpec::Local { .. } => {
            let target = resolve(target_text)?;
            let spec = scenario.load_spec(i, target);
            let engine = tokio::task::spawn_blocking(move || Engine::start(spec))
                .await
                .map_err(|e| Error::Failed(format!("agent {i} (local): {e}")))?
                .map_err(|e| Error::Failed(format!("agent {i} (local): {e}")))?;
            let engine = Arc::new(engine);
            let closed = Arc::new(AtomicBool::new(false));
            forward_local(i, Arc::clone(&engine), Arc::clone(&closed), tx.clone());
            return Ok((Link::Local { engine, closed }, None));
        }
        AgentSpec::Remote {
            address,
            token_env,
            tls_ca,
            tls_name,
            ..
        } => {
            let token = std::env::var(token_env).map_err(|_| {
                Error::Usage(format!(
                    "agent {i} ({address}): the environment variable {token_env} holding its token is not set"
                ))
            })?;
            let tls = match tls_ca.as_ref().or(options.tls_ca.as_ref()) {
                Some(ca) => Some(ClientTls {
                    ca_pem: read_pem(ca, "CA certificate", "CERTIFICATE-----")?,
                    domain: tls_name.clone(),
                }),
                None => None,
            };
            (address.clone(), token, tls, None)
        }
        // The SSH port forward already encrypts and authenticates the channel.
        AgentSpec::Ssh { host, .. } => {
            let d = crate::deploy::deploy(host).await?;
            (d.address.clone(), d.token.clone(), None, Some(d))
        }
    };
    remote_link(scenario, i, address, token, tls, deployed, tx)
        .await
        .map(|(link, timestamps)| (link, Some(timestamps)))
}

/// Configures the remote agent at `address` for `scenario` and forwards its batches: its
/// link and the timestamp source it reports. On failure, a `deployed` agent is stopped.
async fn remote_link(
    scenario: &Scenario,
    i: usize,
    address: String,
    token: String,
    tls: Option<ClientTls>,
    deployed: Option<crate::deploy::Deployed>,
    tx: &mpsc::UnboundedSender<Message>,
) -> Result<(Link, String), Error> {
    let closed = Arc::new(AtomicBool::new(false));
    match start_remote(scenario, i, &address, &token, tls.as_ref(), tx, &closed).await {
        Ok((client, timestamps)) => Ok((
            Link::Remote {
                client,
                closed,
                deployed,
                address,
                token,
                tls,
            },
            timestamps,
        )),
        Err(e) => {
            if let Some(d) = deployed {
                d.stop().await;
            }
            Err(e)
        }
    }
}

/// Configures a remote agent and forwards its batches; its client and timestamp source.
async fn start_remote(
    scenario: &Scenario,
    i: usize,
    address: &str,
    token: &str,
    tls: Option<&ClientTls>,
    tx: &mpsc::UnboundedSender<Message>,
    closed: &Arc<AtomicBool>,
) -> Result<(AgentClient, String), Error> {
    let target_text = &scenario.targets[i % scenario.targets.len()];
    let failed = |message: &str| Error::Failed(format!("agent {i} ({address}): {message}"));
    let mut client = AgentClient::connect_with(address, token, tls)
        .await
        .map_err(|e| Error::Failed(format!("agent {i}: {e}")))?;
    // The agent resolves the target itself: it may see a different network.
    let spec = scenario.load_spec(
        i,
        resolve(target_text).unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0))),
    );
    let reply = client
        .configure_load(&spec, target_text, LEASE)
        .await
        .map_err(|s| failed(s.message()))?;
    let stream = client.stream().await.map_err(|s| failed(s.message()))?;
    forward_remote(i, stream, client.clone(), Arc::clone(closed), tx.clone());
    Ok((client, reply.timestamps))
}

/// A PEM file (`what`, as in "CA certificate"), named when it cannot be read or holds no
/// `-----BEGIN {label}` line.
pub(crate) fn read_pem(path: &Path, what: &str, label: &str) -> Result<Vec<u8>, Error> {
    let pem = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !String::from_utf8_lossy(&pem).contains(&format!("-----BEGIN {label}")) {
        return Err(Error::Usage(format!(
            "{}: not a PEM {what} (no -----BEGIN {label} line)",
            path.display()
        )));
    }
    Ok(pem)
}

/// Stops the agents started so far (a later one failed to start).
async fn stop_all(links: Vec<Link>) {
    for link in links {
        link.stop().await;
    }
}

/// The seed of run `run` of a replicated point: the scenario's for the first, another
/// for each later one (every worker derives its own from it).
fn run_seed(seed: u64, run: u32) -> u64 {
    seed.wrapping_add(u64::from(run.saturating_sub(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Agent `i` again for a new run of a replicated point: its connections closed and opened
/// afresh, its workers seeded from `scenario` (a local engine is started anew; a remote
/// agent's session is stopped and configured again, the process kept).
async fn renew(
    link: Link,
    scenario: &Scenario,
    options: &SessionOptions,
    i: usize,
    tx: &mpsc::UnboundedSender<Message>,
) -> Result<Link, Error> {
    match link {
        Link::Gone { .. } => Ok(link),
        Link::Local { .. } => {
            link.stop().await;
            connect_one(scenario, options, i, tx).await.map(|(l, _)| l)
        }
        Link::Remote {
            mut client,
            closed,
            deployed,
            address,
            token,
            tls,
        } => {
            closed.store(true, Ordering::Relaxed);
            let _ = tokio::time::timeout(CALL_TIMEOUT, client.stop()).await;
            remote_link(scenario, i, address, token, tls, deployed, tx)
                .await
                .map(|(link, _)| link)
        }
    }
}

/// Moves a local engine's batches to the session from a thread (the engine's channel
/// blocks).
fn forward_local(
    agent: usize,
    engine: Arc<Engine>,
    closed: Arc<AtomicBool>,
    tx: mpsc::UnboundedSender<Message>,
) {
    std::thread::Builder::new()
        .name(format!("vernier-agent-{agent}"))
        .spawn(move || {
            while !closed.load(Ordering::Relaxed) {
                if let Some(batch) = engine.next_batch(Duration::from_millis(50))
                    && tx.send(Message::Batch(agent, batch)).is_err()
                {
                    break;
                }
            }
        })
        .map(|_| ())
        .unwrap_or_else(|e| eprintln!("vernier: cannot start agent {agent}'s forwarder: {e}"));
}

fn forward_remote(
    agent: usize,
    mut stream: tonic::Streaming<pb::BatchMessage>,
    mut client: AgentClient,
    closed: Arc<AtomicBool>,
    tx: mpsc::UnboundedSender<Message>,
) {
    let beat_closed = Arc::clone(&closed);
    let beat_tx = tx.clone();
    let address = client.address().to_string();
    let stream_address = address.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(HEARTBEAT);
        while !beat_closed.load(Ordering::Relaxed) {
            tick.tick().await;
            if beat_closed.load(Ordering::Relaxed) {
                break;
            }
            if let Err(s) = client.heartbeat().await {
                let _ = beat_tx.send(Message::Lost(
                    agent,
                    format!("{address}: heartbeat failed: {}", s.message()),
                ));
                break;
            }
        }
    });
    tokio::spawn(async move {
        loop {
            match stream.message().await {
                Ok(Some(message)) => match Batch::try_from(message) {
                    Ok(batch) => {
                        if tx.send(Message::Batch(agent, batch)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Message::Lost(
                            agent,
                            format!("{stream_address}: sent a malformed batch: {e}"),
                        ));
                        break;
                    }
                },
                Ok(None) => {
                    if !closed.load(Ordering::Relaxed) {
                        let _ = tx.send(Message::Lost(
                            agent,
                            format!("{stream_address}: its stream ended"),
                        ));
                    }
                    break;
                }
                Err(s) => {
                    if !closed.load(Ordering::Relaxed) {
                        let _ = tx.send(Message::Lost(
                            agent,
                            format!("{stream_address}: stream failed: {}", s.message()),
                        ));
                    }
                    break;
                }
            }
        }
    });
}

/// When the scenario pins local workers (`cpus:`), vernier's other threads (the
/// coordinator's runtime, the recorder, the terminal) are confined to the same cores for
/// the run. Left to float, they land on the server's core too, when the server shares the
/// host, and delay it by a scheduler slice at a time: against memcached pinned to core 0
/// at 10,000 req/s, with the worker on core 1, p99 was 130-200 µs with vernier's threads
/// floating and 42-66 µs with them on core 1 (the worker, at nice -10, keeps its core).
/// `None` when nothing is pinned, or when the cores cannot be used (the workers' own
/// pinning then reports it).
fn confine(scenario: &Scenario) -> Option<vernier_agent::sys::Confinement> {
    let cpus = local_cpus(scenario);
    if cpus.is_empty() {
        return None;
    }
    vernier_agent::sys::confine_process(cpus).ok()
}

/// The cores the scenario pins its local workers to (empty when it pins none, or has no
/// local agent: `cpus:` pins only the workers of this process).
fn local_cpus(scenario: &Scenario) -> &[usize] {
    let local = scenario
        .agents
        .iter()
        .any(|a| matches!(a, AgentSpec::Local { .. }));
    if local { &scenario.cpus } else { &[] }
}

/// The session's host probes, in the order of their reports: the local agents' first core
/// when the scenario pins workers (the stalls a worker suffers), then the cores the
/// scenario names for a local target (`target_cpus:`: a target's core that stalls, or wakes
/// slowly from idle, makes a tail the worker's probe cannot see), then the coordinator's
/// own unpinned thread. Remote agents' hosts are not probed: that would need the agent to
/// run a probe and ship its reports, which it does not. A target's core outside `allowed`
/// (this process's affinity: a thread could pin itself there, but the process was told to
/// keep off it) is not probed, and a probe that cannot start is left out; the run goes on
/// without their figures, and the line returned beside the probes says what runs and what
/// does not. Each probe sleeps between wake-ups (no spinning), so it shares its core.
fn start_probes(scenario: &Scenario, allowed: &[usize]) -> (Vec<HostProbe>, String) {
    let workers = local_cpus(scenario).first().copied();
    // The target's cores (`target_cpus:`) after the workers', each once.
    let mut target: Vec<usize> = Vec::new();
    let mut outside: Vec<usize> = Vec::new();
    for &cpu in &scenario.target_cpus {
        if Some(cpu) == workers || target.contains(&cpu) || outside.contains(&cpu) {
            continue;
        }
        if allowed.is_empty() || allowed.contains(&cpu) {
            target.push(cpu);
        } else {
            outside.push(cpu);
        }
    }
    let mut probes = Vec::new();
    let mut running = Vec::new();
    let mut failed = Vec::new();
    for (cpu, whose) in workers
        .map(|c| (Some(c), "the workers'"))
        .into_iter()
        .chain(target.into_iter().map(|c| (Some(c), "the target's")))
        .chain([(None, "")])
    {
        let name = cpu.map_or("the coordinator's thread".to_string(), |c| {
            format!("CPU {c} ({whose})")
        });
        match HostProbe::start(cpu, DEFAULT_PERIOD) {
            Ok(probe) => {
                probes.push(probe);
                running.push(name);
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    let mut line = format!(
        "host probes: a sleeping thread's wake-ups every {:?} on {}",
        DEFAULT_PERIOD,
        if running.is_empty() {
            "nothing".to_string()
        } else {
            running.join(", ")
        }
    );
    if !outside.is_empty() {
        line.push_str(&format!(
            "; not on the target's CPU {} (target_cpus), which this process may not use (it may use {})",
            join(&outside),
            join(allowed)
        ));
    }
    if !failed.is_empty() {
        line.push_str(&format!("; could not start on {}", failed.join("; ")));
    }
    (probes, line)
}

/// `0,2,3`.
fn join(cpus: &[usize]) -> String {
    cpus.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Refuses a scenario that pins its local workers (`cpus:`) to a CPU outside `allowed`
/// (this process's affinity, as `taskset` or a cgroup's cpuset set it): the workers could
/// pin themselves there, but the process was told to keep off it, and running on other
/// cores instead would measure something else than the scenario says. One line naming
/// both sets; a usage error (exit 2), before anything starts. An affinity that cannot be
/// read (empty) refuses nothing: pinning then tells.
pub(crate) fn check_affinity(scenario: &Scenario, allowed: &[usize]) -> Result<(), Error> {
    let cpus = local_cpus(scenario);
    if allowed.is_empty() || cpus.iter().all(|c| allowed.contains(c)) {
        return Ok(());
    }
    let outside: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|c| !allowed.contains(c))
        .collect();
    Err(Error::Usage(format!(
        "{}cpus: [{}] names CPU {} outside the CPUs this process may run on ({}, its affinity: taskset or a cpuset); name cores among those, or run vernier where it may use these",
        scenario
            .source
            .as_ref()
            .map_or(String::new(), |p| format!("{}: ", p.display())),
        join(cpus),
        join(&outside),
        join(allowed)
    )))
}

/// Runs `scenario` to its verdict. `commands` carries the user's commands (closing it is
/// not a quit); Ctrl-C and SIGTERM quit. Every update goes to `watch`.
pub async fn run(
    scenario: &Scenario,
    options: &SessionOptions,
    mut commands: mpsc::UnboundedReceiver<UserCommand>,
    mut watch: impl FnMut(Update),
) -> Result<Outcome, Error> {
    // Before anything starts: a scenario that pins workers where this process may not go.
    // The process's affinity as it was given (taskset, a cpuset), read before vernier
    // confines its own threads to the workers' cores below.
    let allowed = vernier_agent::sys::available_cpus();
    check_affinity(scenario, &allowed)?;
    // Before anything is measured, and kept until the session ends (then put back); the
    // record's machine shows the value in force.
    let _halt_poll = scenario
        .halt_poll
        .map(vernier_agent::sys::HaltPoll::set)
        .transpose()
        .map_err(|e| Error::Usage(format!("halt_poll: {e}")))?;
    // Listening first: a bad address ends the run before any load.
    // Fed only when served: without `--metrics` the loop does none of its work.
    let live = options.metrics.map(|_| crate::metrics::LiveMetrics::new());
    let served = match (options.metrics, &live) {
        (Some(addr), Some(live)) => Some(live.serve(addr).await?),
        _ => None,
    };
    // (The server stops when `served` goes, with the session.)
    // The path's floor and the client's share, before the run's load and before vernier's
    // threads are confined (the ping-pong pins its own to the workers' and target's cores).
    // Each measurement says what it does as it starts.
    let baseline = {
        let scenario = scenario.clone();
        let (say, mut said) = mpsc::unbounded_channel();
        let measured = tokio::task::spawn_blocking(move || {
            crate::budget::Baseline::measure(&scenario, |line| {
                let _ = say.send(line);
            })
        });
        // Ends when the measurement does (it holds the sender).
        while let Some(line) = said.recv().await {
            watch(Update::Preparing(line));
        }
        measured
            .await
            .map_err(|e| Error::Failed(format!("the latency budget's calibration: {e}")))?
    };
    let confinement = confine(scenario);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (mut links, timestamps) = connect(scenario, options, &tx).await?;
    // Kept only for a replicated point's runs, which start the agents again: otherwise
    // the channel closes when the last agent's forwarder ends.
    let renew_tx = scenario.replications.is_some().then(|| tx.clone());
    drop(tx);
    let dir = options
        .record
        .clone()
        .unwrap_or_else(|| default_record_dir(&scenario.name));
    let record = RunRecord {
        format: crate::record::FORMAT.into(),
        name: scenario.name.clone(),
        started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        status: "running".into(),
        scenario_file: scenario.source.as_ref().map(|p| p.display().to_string()),
        scenario: scenario.yaml.clone(),
        machine: Machine::this(),
        timestamps: timestamps.clone(),
        events: Vec::new(),
        points: Vec::new(),
        slo_rate: None,
        verdict: None,
    };
    let mut recorder = match Recorder::create(&dir, record) {
        Ok(r) => r,
        Err(e) => {
            for link in links {
                link.stop().await;
            }
            return Err(e);
        }
    };
    watch(Update::Started {
        record: dir.clone(),
        timestamps: timestamps.clone(),
        confined: confinement
            .as_ref()
            .map(|c| c.cpus().to_vec())
            .unwrap_or_default(),
        metrics: served.as_ref().map(|(addr, _)| *addr),
    });
    let interarrival = scenario.interarrival;
    let mut coordinator = Coordinator::new(
        PointConfig::from_scenario(scenario, &timestamps),
        &scenario.load,
    );
    // Against the affinity given, not the confinement: the target's core lies outside the
    // confinement by design, and its probe is pinned there on purpose.
    let (probes, probing) = start_probes(scenario, &allowed);
    watch(Update::Preparing(probing));
    let mut host_tick = tokio::time::interval(HOST_EVERY);
    host_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let started = Instant::now();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut commands_open = true;
    let mut failure = None;
    let mut record_error = None;
    // Ctrl-C, and a polite kill (SIGTERM), quit: the record is saved either way.
    let ctrl_c = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    tokio::pin!(ctrl_c);
    let mut ctrl_c_armed = true;
    // Each point's budget, made once as its verdict passes and given to the outcome.
    let mut budgets = Vec::new();
    // The departures of the point's kept requests, for the budget's queue.
    let mut sent = Sent::new(scenario.budget_probe);
    let mut decision = coordinator.start(started.elapsed());
    loop {
        // Carry out the decision: actions first (the agents wait for nobody), then events.
        // A lost agent's link is closed: no more calls to it, and the others share the load.
        let share = 1.0 / links.iter().filter(|l| !l.is_closed()).count().max(1) as f64;
        for action in &decision.actions {
            if let Action::Renew { .. } = action {
                // The agents start again on new clocks: the last run's departures only.
                sent = Sent::new(sent.probe);
            }
            if let (Action::Renew { run }, Some(tx)) = (action, &renew_tx) {
                let run_scenario = Scenario {
                    seed: run_seed(scenario.seed, *run),
                    ..scenario.clone()
                };
                for (i, link) in std::mem::take(&mut links).into_iter().enumerate() {
                    // A lost agent stays lost.
                    if link.is_closed() {
                        links.push(link);
                        continue;
                    }
                    match renew(link, &run_scenario, options, i, tx).await {
                        Ok(link) => links.push(link),
                        Err(e) => {
                            failure.get_or_insert((i, format!("starting run {run}: {e}")));
                            links.push(Link::Gone {
                                closed: Arc::new(AtomicBool::new(true)),
                            });
                        }
                    }
                }
                continue;
            }
            for (i, link) in links.iter_mut().enumerate() {
                if link.is_closed() {
                    continue;
                }
                if let Err(e) = link.apply(*action, share, &interarrival).await {
                    failure.get_or_insert((i, e));
                }
            }
        }
        for mut event in decision.events.drain(..) {
            if let EventKind::Verdict(result) = &mut event.kind {
                let during = sent.during(result.achieved_rate);
                result.budget = Some(baseline.budget(result, during));
                budgets.push(result.budget.clone());
            }
            if let Some(live) = &live {
                live.event(&event);
            }
            if let Err(e) = recorder.event(&event) {
                record_error.get_or_insert(e.to_string());
            }
            watch(Update::Event(event));
        }
        if decision.actions.contains(&Action::Finished) || coordinator.is_done() {
            break;
        }
        let at = || started.elapsed();
        let input = if let Some((agent, detail)) = failure.take() {
            Input::AgentLost { agent, detail }
        } else {
            tokio::select! {
                message = rx.recv() => match message {
                    Some(Message::Batch(agent, batch)) => Input::Batch { agent, batch },
                    Some(Message::Lost(agent, detail)) => Input::AgentLost { agent, detail },
                    None => Input::AgentLost { agent: 0, detail: "every agent's stream ended".into() },
                },
                command = commands.recv(), if commands_open => match command {
                    Some(c) => Input::Command(c),
                    None => { commands_open = false; Input::Tick }
                },
                _ = &mut ctrl_c, if ctrl_c_armed => {
                    ctrl_c_armed = false;
                    Input::Command(UserCommand::Quit)
                }
                _ = host_tick.tick(), if !probes.is_empty() => {
                    Input::Host(probes.iter().map(HostProbe::take).collect())
                }
                _ = tick.tick() => Input::Tick,
            }
        };
        if let Input::AgentLost { agent, .. } = &input
            && let Some(link) = links.get(*agent)
        {
            link.close();
        }
        decision = coordinator.step(at(), input);
        // The record takes the batch's samples with the round the coordinator counted
        // them in; then the batch goes back to its agent's workers for reuse.
        if let Some(taken) = decision.taken.take() {
            let Taken {
                point,
                round,
                agent,
                batch,
            } = taken;
            recorder.samples(point, round, agent, batch.worker, &batch.samples);
            if round > 0 {
                sent.add(point, round, agent, &batch);
            }
            if let Some(live) = &live {
                live.latency(point, agent, &batch.latency);
            }
            if let Err(e) = recorder.latency(
                point,
                round,
                agent,
                batch.worker,
                batch.elapsed,
                &batch.latency,
            ) {
                record_error.get_or_insert(e.to_string());
            }
            if let Some(Link::Local { engine, .. }) = links.get(agent) {
                engine.recycle(batch);
            }
        }
        if let Err(e) = recorder.tick() {
            // The measurement goes on; the record's trouble is reported at the end.
            record_error.get_or_insert(e.to_string());
        }
    }
    for link in links {
        link.stop().await;
    }
    // Each stops within a period (1 ms).
    drop(probes);
    let verdict = coordinator.verdict().unwrap_or(Verdict::NotAvailable);
    let slo_rate = coordinator.slo_rate();
    let record = match recorder.finish(slo_rate, Some(verdict)) {
        Ok(dir) => dir,
        Err(e) => {
            record_error.get_or_insert(e.to_string());
            dir
        }
    };
    let mut points = coordinator.results().to_vec();
    for (p, budget) in points.iter_mut().zip(budgets) {
        p.budget = budget;
    }
    for p in &mut points {
        p.record = Some(record.display().to_string());
    }
    Ok(Outcome {
        points,
        slo_rate,
        verdict,
        record,
        timestamps,
        record_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(yaml: &str) -> Scenario {
        Scenario::from_yaml(yaml, Some(Path::new("s.yaml")), &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    const BASE: &str = "name: s\ntarget: 127.0.0.1:11211\nprotocol: synthetic\nservice: exp:20us\nload: 1000\nci: {percentile: 99, width: 10us}\n";

    #[test]
    fn workers_pinned_outside_the_affinity_are_refused_naming_both_sets() {
        let s = scenario(&format!("{BASE}workers: 2\ncpus: [0, 1]\n"));
        let err = check_affinity(&s, &[0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.yaml: cpus: [0,1] names CPU 1 outside the CPUs this process may run on (0, its affinity: taskset or a cpuset); name cores among those, or run vernier where it may use these"
        );
        // A usage error: exit code 2, as other scenario errors.
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        assert!(check_affinity(&s, &[0, 1, 2]).is_ok());
        // Nothing pinned, an affinity unknown, or only the target's core outside: run.
        assert!(check_affinity(&scenario(BASE), &[3]).is_ok());
        assert!(check_affinity(&s, &[]).is_ok());
        let s = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [0]\n"));
        assert!(check_affinity(&s, &[1]).is_ok());
    }

    #[test]
    fn a_targets_core_outside_the_affinity_is_not_probed_and_the_line_says_so() {
        let s = scenario(&format!("{BASE}target_cpus: [100000]\n"));
        let (probes, line) = start_probes(&s, &[0]);
        assert_eq!(probes.len(), 1, "{line}");
        assert_eq!(probes[0].cpu(), None);
        assert_eq!(
            line,
            "host probes: a sleeping thread's wake-ups every 1ms on the coordinator's thread; not on the target's CPU 100000 (target_cpus), which this process may not use (it may use 0)"
        );
    }

    fn url_scenario(url: &str, extra: &[&str]) -> Scenario {
        let load = crate::scenario::Flag {
            name: "--load",
            field: "load",
            given: Some(("1k".into(), "1k".into())),
        };
        let sets: Vec<crate::scenario::Override> =
            extra.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::from_url(url, &[load], &sets).unwrap()
    }

    #[test]
    fn a_target_nothing_listens_at_is_refused_at_once_naming_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("memcached://{addr}");
        assert!(check_targets(&url_scenario(&url, &[])).is_ok());
        drop(listener);
        let started = Instant::now();
        let e = check_targets(&url_scenario(&url, &[])).unwrap_err();
        assert!(started.elapsed() < TARGET_CHECK, "{:?}", started.elapsed());
        assert_eq!(e.exit_code(), std::process::ExitCode::from(2));
        assert_eq!(
            e.to_string(),
            format!(
                "target {addr}: nothing is listening there (connection refused); start the \
                 server, or check the address"
            )
        );
        // A name is resolved, and said beside the address it resolved to.
        let named = format!("memcached://localhost:{}", addr.port());
        let e = check_targets(&url_scenario(&named, &[]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("target localhost:{} (", addr.port())),
            "{e}"
        );
        // UDP has no connection to refuse; a remote agent sees its own network.
        assert!(check_targets(&url_scenario(&url, &["transport=udp"])).is_ok());
        let remote = "agents=[{address: '127.0.0.1:5001'}]";
        assert!(check_targets(&url_scenario(&url, &[remote])).is_ok());
    }
}
