//! The agents' links: how the session starts or reaches each agent (an in-process engine
//! for `local`, gRPC for a remote one, deployed over SSH first for `ssh`), carries out the
//! coordinator's actions on it, forwards its batches and heartbeats, starts it again for a
//! replicated point's next run, and stops it.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use vernier_agent::client::{AgentClient, ClientTls};
use vernier_agent::sys::TimestampMode;
use vernier_agent::wire::pb;
use vernier_agent::{Batch, CoreWatch, Engine};
use vernier_protocols::InterArrival;

use super::interface::SessionOptions;
use super::policy::{CALL_TIMEOUT, FORWARD_WAIT, HEARTBEAT, LEASE};
use crate::coordinator::Action;
use crate::error::Error;
use crate::load::resolve;
use crate::scenario::{AgentSpec, Scenario};

/// What an agent's link forwards to the session.
#[allow(clippy::large_enum_variant)] // Moved once, from its agent to the session.
pub(super) enum Message {
    /// Agent `.0`'s next batch.
    Batch(usize, Batch),
    /// Agent `.0` was lost, and why.
    Lost(usize, String),
}

/// One agent as the session drives it.
#[allow(clippy::large_enum_variant)] // A handful, for the whole run.
pub(super) enum Link {
    /// An engine in this process.
    Local {
        /// The engine, shared with its forwarder thread.
        engine: Arc<Engine>,
        /// Set when the link is closed: its forwarder stops.
        closed: Arc<AtomicBool>,
    },
    /// An agent reached over gRPC.
    Remote {
        /// Its control client.
        client: AgentClient,
        /// Set when the link is closed: its forwarder and heartbeat stop.
        closed: Arc<AtomicBool>,
        /// The agent this session started over SSH, shut down at the end.
        deployed: Option<crate::deploy::Deployed>,
        /// How it was reached: a replicated point's runs reach it again.
        reach: Reach,
    },
    /// An agent that could not be started again between runs (closed).
    Gone { closed: Arc<AtomicBool> },
}

/// How a remote agent is reached: kept with its link, since a replicated point's next run
/// reaches it again.
pub(super) struct Reach {
    /// Its control address (an SSH-deployed agent's: the local end of the port forward).
    address: String,
    /// The bearer token every call carries.
    token: String,
    /// Its TLS (none over an SSH port forward, which already encrypts the channel).
    tls: Option<ClientTls>,
}

impl Link {
    /// For an agent in this process, its engine's clock's zero on `CLOCK_MONOTONIC` (see
    /// [`Engine::clock_origin_ns`]): the session's host probes' stalls reach its samples'
    /// clock through it. A remote agent's clock is its own host's: `None`.
    pub(super) fn clock_origin_ns(&self) -> Option<u64> {
        match self {
            Link::Local { engine, .. } => Some(engine.clock_origin_ns()),
            Link::Remote { .. } | Link::Gone { .. } => None,
        }
    }

    /// For an agent in this process, its workers' own wake-ups, the stall probes of their
    /// cores (none for a remote agent, whose host is its own).
    pub(super) fn core_watches(&self) -> &[CoreWatch] {
        match self {
            Link::Local { engine, .. } => engine.core_watches(),
            Link::Remote { .. } | Link::Gone { .. } => &[],
        }
    }

    /// Carries out `action` on the agent, its `share` of the load's rate with the
    /// scenario's `interarrival`; a remote agent's failure or silence is an error naming it.
    pub(super) async fn apply(
        &mut self,
        action: Action,
        share: f64,
        interarrival: &InterArrival,
    ) -> Result<(), String> {
        match self {
            Link::Local { engine, .. } => {
                match action {
                    Action::Load { rate } => engine.set_load(rate * share, interarrival),
                    Action::Pace { tolerance } => engine.set_tolerance(tolerance),
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
                            client.start_load(rate * share, interarrival).await
                        }
                        Action::Sampling { rate, generation } => {
                            client.start_measure(rate, generation).await
                        }
                        Action::Pace { tolerance } => client.pace(tolerance).await,
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

    /// The flag that closes the link.
    fn closed(&self) -> &AtomicBool {
        match self {
            Link::Local { closed, .. } | Link::Remote { closed, .. } | Link::Gone { closed } => {
                closed
            }
        }
    }

    /// Stops forwarding the agent's batches and heartbeats (it was lost).
    pub(super) fn close(&self) {
        self.closed().store(true, Ordering::Relaxed);
    }

    /// Whether the agent was lost (or the link stopped).
    pub(super) fn is_closed(&self) -> bool {
        self.closed().load(Ordering::Relaxed)
    }

    /// Stops the agent (a deployed one is shut down too), closing the link.
    pub(super) async fn stop(self) {
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

/// Starts every agent; returns the links and the timestamp source they report. If one
/// cannot be started, those already started are stopped.
pub(super) async fn connect(
    scenario: &Scenario,
    options: &SessionOptions,
    tx: &mpsc::UnboundedSender<Message>,
) -> Result<(Vec<Link>, TimestampMode), Error> {
    let mut links = Vec::new();
    let mut timestamps = scenario.timestamps.clone();
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
) -> Result<(Link, Option<TimestampMode>), Error> {
    let target_text = &scenario.targets[i % scenario.targets.len()];
    let (reach, deployed) = match &scenario.agents[i] {
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
            let reach = Reach {
                address: address.clone(),
                token,
                tls,
            };
            (reach, None)
        }
        // The SSH port forward already encrypts and authenticates the channel.
        AgentSpec::Ssh { host, .. } => {
            let d = crate::deploy::deploy(host).await?;
            let reach = Reach {
                address: d.address.clone(),
                token: d.token.clone(),
                tls: None,
            };
            (reach, Some(d))
        }
    };
    remote_link(scenario, i, reach, deployed, tx)
        .await
        .map(|(link, timestamps)| (link, Some(timestamps)))
}

/// Configures the remote agent reached by `reach` for `scenario` and forwards its batches:
/// its link and the timestamp source it reports. On failure, a `deployed` agent is stopped.
async fn remote_link(
    scenario: &Scenario,
    i: usize,
    reach: Reach,
    deployed: Option<crate::deploy::Deployed>,
    tx: &mpsc::UnboundedSender<Message>,
) -> Result<(Link, TimestampMode), Error> {
    let closed = Arc::new(AtomicBool::new(false));
    match start_remote(scenario, i, &reach, tx, &closed).await {
        Ok((client, timestamps)) => Ok((
            Link::Remote {
                client,
                closed,
                deployed,
                reach,
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
    reach: &Reach,
    tx: &mpsc::UnboundedSender<Message>,
    closed: &Arc<AtomicBool>,
) -> Result<(AgentClient, TimestampMode), Error> {
    let Reach {
        address,
        token,
        tls,
    } = reach;
    let target_text = &scenario.targets[i % scenario.targets.len()];
    let failed = |message: &str| Error::Failed(format!("agent {i} ({address}): {message}"));
    let mut client = AgentClient::connect_with(address, token, tls.as_ref())
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
    let timestamps = vernier_agent::wire::reply_timestamps(&reply)
        .map_err(|e| failed(&format!("its reply: {e}")))?;
    Ok((client, timestamps))
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
pub(super) fn run_seed(seed: u64, run: u32) -> u64 {
    seed.wrapping_add(u64::from(run.saturating_sub(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Agent `i` again for a new run of a replicated point: its connections closed and opened
/// afresh, its workers seeded from `scenario` (a local engine is started anew; a remote
/// agent's session is stopped and configured again, the process kept).
pub(super) async fn renew(
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
            reach,
        } => {
            closed.store(true, Ordering::Relaxed);
            let _ = tokio::time::timeout(CALL_TIMEOUT, client.stop()).await;
            remote_link(scenario, i, reach, deployed, tx)
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
                if let Some(batch) = engine.next_batch(FORWARD_WAIT)
                    && tx.send(Message::Batch(agent, batch)).is_err()
                {
                    break;
                }
            }
        })
        .map(|_| ())
        .unwrap_or_else(|e| eprintln!("vernier: cannot start agent {agent}'s forwarder: {e}"));
}

/// Moves a remote agent's batches to the session, and renews its lease every
/// [`HEARTBEAT`]; a failed heartbeat, a malformed batch or a stream that ends while the
/// link is open loses the agent.
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
