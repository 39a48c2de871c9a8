//! The gRPC control service: the workbench's handle on an agent.
//!
//! Security and safety rules, each enforced here rather than trusted to the caller:
//! every call must carry the agent's bearer token; one coordinator at a time (a session
//! id, returned by Configure, must accompany every later call); and a session whose
//! coordinator goes quiet for longer than its lease is stopped, so an agent never loads
//! a target forever unattended.

use std::net::ToSocketAddrs;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, Notify, mpsc};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::config::LoadSpec;
use crate::engine::Engine;
use crate::measure::Counters;
use crate::wire::pb::{self, agent_server};

/// The metadata key carrying the session id.
pub const SESSION_HEADER: &str = "vernier-session";
/// How long a session survives without a call unless Configure asks otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(3);
/// The largest message accepted from a coordinator.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

struct Session {
    id: String,
    engine: Arc<Engine>,
    last_seen: Instant,
    lease: Duration,
    /// Tells the batch forwarder of a stream to stop.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

/// What the agent's live figures show (`vernier agent --metrics`): the current or last
/// session's load, counters and latencies.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Whether a coordinator holds the agent now.
    pub held: bool,
    /// Sessions configured since the agent started.
    pub sessions: u64,
    /// The rate the coordinator asked of this agent, requests per second (0 when paused).
    pub asked_rate: f64,
    /// Each worker's counters in the current (or last) session.
    pub workers: Vec<Counters>,
    /// Latency of every request answered in the current (or last) session, ns.
    pub latency: Option<hdrhistogram::Histogram<u64>>,
}

#[derive(Default)]
struct FiguresState {
    figures: Figures,
    engine: Option<Arc<Engine>>,
}

/// The agent's control service (wrap it with [`AgentService::into_server`]).
#[derive(Clone)]
pub struct AgentService {
    session: Arc<Mutex<Option<Session>>>,
    figures: Arc<std::sync::Mutex<FiguresState>>,
    shutdown: Arc<Notify>,
    /// The networks targets must lie in (empty: any).
    allowed: Arc<[ipnet::IpNet]>,
}

impl std::fmt::Debug for AgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentService").finish_non_exhaustive()
    }
}

impl Default for AgentService {
    fn default() -> Self {
        Self::new()
    }
}

/// The service behind the token check, ready for a tonic `Server`.
pub type AuthenticatedServer = tonic::service::interceptor::InterceptedService<
    agent_server::AgentServer<AgentService>,
    TokenCheck,
>;

/// Refuses every call whose `authorization` is not `Bearer <token>`.
#[derive(Clone)]
pub struct TokenCheck {
    expected: Arc<[u8]>,
}

impl std::fmt::Debug for TokenCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.write_str("TokenCheck(..)")
    }
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let given = request
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        let given = given.strip_prefix(b"Bearer ").unwrap_or_default();
        // In time independent of where the first difference is (the length is no secret).
        let same = bool::from(subtle::ConstantTimeEq::ct_eq(given, &self.expected[..]));
        if same && !given.is_empty() {
            Ok(request)
        } else {
            Err(Status::unauthenticated("missing or wrong bearer token"))
        }
    }
}

impl AgentService {
    /// A service with no session.
    pub fn new() -> Self {
        AgentService {
            session: Arc::new(Mutex::new(None)),
            figures: Arc::default(),
            shutdown: Arc::new(Notify::new()),
            allowed: Arc::new([]),
        }
    }

    /// A service that loads only targets in `networks` (none: any target), so that whoever
    /// holds the token cannot point the agent's load anywhere else.
    pub fn allowing(networks: Vec<ipnet::IpNet>) -> Self {
        AgentService {
            allowed: networks.into(),
            ..Self::new()
        }
    }

    /// Refuses a target outside the allowed networks.
    fn check_target(&self, target: std::net::SocketAddr) -> Result<(), Status> {
        if self.allowed.is_empty() || self.allowed.iter().any(|n| n.contains(&target.ip())) {
            return Ok(());
        }
        let list: Vec<String> = self.allowed.iter().map(|n| n.to_string()).collect();
        Err(Status::permission_denied(format!(
            "target {target} is outside this agent's --allow-targets ({})",
            list.join(", ")
        )))
    }

    fn with_figures<R>(&self, f: impl FnOnce(&mut FiguresState) -> R) -> R {
        f(&mut self
            .figures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// The live figures now.
    pub fn figures(&self) -> Figures {
        // Whether a session is held; while a call holds the lock, as last known.
        let held = self.session.try_lock().map(|g| g.is_some()).ok();
        self.with_figures(|s| {
            let mut figures = s.figures.clone();
            figures.held = held.unwrap_or(figures.held);
            if !figures.held {
                figures.asked_rate = 0.0;
            }
            if let Some(engine) = &s.engine {
                figures.workers = engine.counters();
            }
            figures
        })
    }

    /// Resolves when a coordinator has called Shutdown.
    pub fn shutdown_requested(&self) -> Arc<Notify> {
        Arc::clone(&self.shutdown)
    }

    /// Wraps the service with the bearer-token check and message size limits, and starts
    /// the lease watchdog.
    pub fn into_server(self, token: &str) -> AuthenticatedServer {
        let watchdog = self.clone();
        tokio::spawn(async move { watchdog.watch_leases().await });
        let server = agent_server::AgentServer::new(self)
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(64 << 20);
        tonic::service::interceptor::InterceptedService::new(
            server,
            TokenCheck {
                expected: token.as_bytes().into(),
            },
        )
    }

    async fn watch_leases(&self) {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tick.tick().await;
            let mut guard = self.session.lock().await;
            let lapsed = guard
                .as_ref()
                .is_some_and(|s| s.last_seen.elapsed() > s.lease);
            if lapsed && let Some(session) = guard.take() {
                drop(guard);
                eprintln!("vernier agent: session lease lapsed; stopping the load");
                end(session).await;
            }
        }
    }

    /// The engine of the caller's session, renewing its lease.
    async fn engine<T>(&self, request: &Request<T>) -> Result<Arc<Engine>, Status> {
        let mut guard = self.session.lock().await;
        let session = guard
            .as_mut()
            .ok_or_else(|| Status::failed_precondition("no session: call Configure first"))?;
        check_session(session, request)?;
        session.last_seen = Instant::now();
        Ok(Arc::clone(&session.engine))
    }
}

fn check_session<T>(session: &Session, request: &Request<T>) -> Result<(), Status> {
    let given = request
        .metadata()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok());
    if given == Some(session.id.as_str()) {
        Ok(())
    } else {
        Err(Status::failed_precondition(
            "the agent is held by another coordinator",
        ))
    }
}

/// Stops a session's engine off the async runtime (joining threads blocks).
async fn end(session: Session) -> Counters {
    session
        .closed
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let engine = session.engine;
    tokio::task::spawn_blocking(move || {
        let _ = engine.stop();
        Counters::sum(&engine.counters())
    })
    .await
    .unwrap_or_default()
}

fn invalid(field: &str, e: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("{field}: {e}"))
}

/// Turns a Configure request into a validated load description and its lease: the
/// target resolved here (the agent may see another network than the coordinator), every
/// other field converted by [`crate::wire::load_spec`].
pub fn load_spec(r: &pb::ConfigureRequest) -> Result<(LoadSpec, Duration), Status> {
    let target = r
        .target
        .to_socket_addrs()
        .map_err(|e| invalid("target", format!("{:?}: {e}", r.target)))?
        .next()
        .ok_or_else(|| invalid("target", format!("{:?} resolves to no address", r.target)))?;
    let (spec, lease) =
        crate::wire::load_spec(r, target).map_err(|e| Status::invalid_argument(e.to_string()))?;
    spec.validate()
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    Ok((spec, lease.unwrap_or(DEFAULT_LEASE)))
}

type BatchStream = Pin<Box<dyn Stream<Item = Result<pb::BatchMessage, Status>> + Send>>;

#[tonic::async_trait]
impl agent_server::Agent for AgentService {
    async fn configure(
        &self,
        request: Request<pb::ConfigureRequest>,
    ) -> Result<Response<pb::ConfigureReply>, Status> {
        let mut guard = self.session.lock().await;
        if let Some(held) = guard.as_ref() {
            if check_session(held, &request).is_err() {
                return Err(Status::failed_precondition(format!(
                    "the agent is held by another coordinator (for {:.1}s); it is released when that one stops or its lease of {:?} lapses",
                    held.last_seen.elapsed().as_secs_f64(),
                    held.lease
                )));
            }
            // The same coordinator reconfiguring: end the old load first.
            if let Some(old) = guard.take() {
                end(old).await;
            }
        }
        let (spec, lease) = load_spec(request.get_ref())?;
        self.check_target(spec.target)?;
        let timestamps = spec.timestamps.clone();
        let connections = spec.connections as u32;
        let engine = tokio::task::spawn_blocking(move || Engine::start(spec))
            .await
            .map_err(|e| Status::internal(format!("engine start panicked: {e}")))?
            .map_err(|e| Status::unavailable(e.to_string()))?;
        let id = format!("{:016x}", rand::random::<u64>());
        let engine = Arc::new(engine);
        self.with_figures(|s| {
            s.figures = Figures {
                held: true,
                sessions: s.figures.sessions + 1,
                ..Figures::default()
            };
            s.engine = Some(Arc::clone(&engine));
        });
        *guard = Some(Session {
            id: id.clone(),
            engine,
            last_seen: Instant::now(),
            lease,
            closed: Arc::default(),
        });
        Ok(Response::new(crate::wire::configure_reply(
            id,
            &timestamps,
            connections,
            lease,
        )))
    }

    async fn pace(&self, request: Request<pb::PaceRequest>) -> Result<Response<pb::Ack>, Status> {
        let engine = self.engine(&request).await?;
        engine.set_tolerance(Duration::from_nanos(request.get_ref().tolerance_ns));
        Ok(Response::new(pb::Ack {}))
    }

    async fn start_load(
        &self,
        request: Request<pb::StartLoadRequest>,
    ) -> Result<Response<pb::Ack>, Status> {
        let engine = self.engine(&request).await?;
        let r = request.get_ref();
        if !(r.rate.is_finite() && r.rate >= 0.0) {
            return Err(invalid("rate", r.rate));
        }
        let interarrival = crate::wire::interarrival_of(r).map_err(|e| invalid("arrival", e))?;
        engine.set_load(r.rate, &interarrival);
        self.with_figures(|s| s.figures.asked_rate = r.rate);
        Ok(Response::new(pb::Ack {}))
    }

    async fn start_measure(
        &self,
        request: Request<pb::StartMeasureRequest>,
    ) -> Result<Response<pb::Ack>, Status> {
        let engine = self.engine(&request).await?;
        let pb::StartMeasureRequest {
            sampling_rate: rate,
            generation,
        } = *request.get_ref();
        if !(0.0..=1.0).contains(&rate) {
            return Err(invalid(
                "sampling_rate",
                format!("{rate}: expected a share in [0, 1]"),
            ));
        }
        engine.set_sampling(rate, generation);
        Ok(Response::new(pb::Ack {}))
    }

    async fn pause(&self, request: Request<pb::Empty>) -> Result<Response<pb::Ack>, Status> {
        self.engine(&request).await?.pause();
        self.with_figures(|s| s.figures.asked_rate = 0.0);
        Ok(Response::new(pb::Ack {}))
    }

    async fn counters(
        &self,
        request: Request<pb::Empty>,
    ) -> Result<Response<pb::CountersReply>, Status> {
        let workers = self.engine(&request).await?.counters();
        Ok(Response::new(pb::CountersReply {
            total: Some(Counters::sum(&workers).into()),
            workers: workers.into_iter().map(Into::into).collect(),
        }))
    }

    type StreamStream = BatchStream;

    async fn stream(&self, request: Request<pb::Empty>) -> Result<Response<BatchStream>, Status> {
        let engine = self.engine(&request).await?;
        // The workers' own waits are the stall probes of their cores: their stalls ride in
        // the batches already.
        let closed = {
            let guard = self.session.lock().await;
            guard
                .as_ref()
                .map(|s| Arc::clone(&s.closed))
                .unwrap_or_default()
        };
        let (tx, rx) = mpsc::channel(64);
        let service = self.clone();
        // The engine's batches arrive on a blocking channel: forward them from a thread.
        tokio::task::spawn_blocking(move || {
            use std::sync::atomic::Ordering;
            // Each batch, once encoded, goes back to its worker for reuse.
            let forward = |batch: crate::Batch| {
                service.with_figures(|s| match &mut s.figures.latency {
                    // A value beyond the agents' own bounds cannot come; dropped if it did.
                    Some(h) => {
                        let _ = h.add(&batch.latency);
                    }
                    None => s.figures.latency = Some(batch.latency.clone()),
                });
                let message = pb::BatchMessage::from(&batch);
                engine.recycle(batch);
                tx.blocking_send(Ok(message)).is_ok()
            };
            while !closed.load(Ordering::Relaxed) {
                if let Some(batch) = engine.next_batch(Duration::from_millis(50))
                    && !forward(batch)
                {
                    break;
                }
            }
            // Batches reported while stopping still belong to the coordinator.
            for batch in engine.drain_batches() {
                if !forward(batch) {
                    break;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn heartbeat(&self, request: Request<pb::Empty>) -> Result<Response<pb::Ack>, Status> {
        self.engine(&request).await?;
        Ok(Response::new(pb::Ack {}))
    }

    async fn stop(
        &self,
        request: Request<pb::Empty>,
    ) -> Result<Response<pb::CountersReply>, Status> {
        let mut guard = self.session.lock().await;
        let session = guard
            .as_ref()
            .ok_or_else(|| Status::failed_precondition("no session"))?;
        check_session(session, &request)?;
        let session = guard
            .take()
            .ok_or_else(|| Status::failed_precondition("no session"))?;
        drop(guard);
        let workers_engine = Arc::clone(&session.engine);
        let total = end(session).await;
        let workers = workers_engine.counters();
        Ok(Response::new(pb::CountersReply {
            total: Some(total.into()),
            workers: workers.into_iter().map(Into::into).collect(),
        }))
    }

    async fn shutdown(&self, request: Request<pb::Empty>) -> Result<Response<pb::Ack>, Status> {
        let mut guard = self.session.lock().await;
        if let Some(session) = guard.as_ref() {
            check_session(session, &request)?;
        }
        if let Some(session) = guard.take() {
            drop(guard);
            end(session).await;
        }
        self.shutdown.notify_one();
        Ok(Response::new(pb::Ack {}))
    }
}
