//! The coordinator's side of the control plane: a typed client that adds the bearer token
//! and the session id to every call.

use std::time::Duration;

use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status, Streaming};
use vernier_protocols::InterArrival;

use crate::control::SESSION_HEADER;
use crate::wire::pb::{self, agent_client};

/// How long a heartbeat may take before its agent counts as unreachable.
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_millis(1500);

/// Why a client could not reach an agent.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The address is not a valid endpoint.
    #[error("agent address {address:?}: {message}")]
    Address {
        /// The address given.
        address: String,
        /// Why it is invalid.
        message: String,
    },
    /// The TLS settings cannot be used (the CA certificate is not PEM, ...).
    #[error("TLS to the agent at {address}: {source}")]
    Tls {
        /// The address.
        address: String,
        /// Why.
        source: tonic::transport::Error,
    },
    /// The connection failed.
    #[error("cannot reach the agent at {address}: {}{}", chain(.source), tls_hint(.source))]
    Connect {
        /// The address.
        address: String,
        /// Why.
        source: tonic::transport::Error,
    },
}

/// The error and its causes, as one line: a TLS failure names the certificate problem only
/// in its source, an SSH failure what ssh said.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        // Trimmed: ssh's own messages, for one, end with a newline.
        let cause_text = cause.to_string();
        let cause_text = cause_text.trim();
        if !text.contains(cause_text) {
            text.push_str(": ");
            text.push_str(cause_text);
        }
        source = cause.source();
    }
    text
}

/// What a TLS client's failure against a plain-text agent means.
fn tls_hint(error: &tonic::transport::Error) -> &'static str {
    if chain(error).contains("InvalidContentType") {
        " (the agent does not answer in TLS: was it started with --tls-cert?)"
    } else {
        ""
    }
}

/// TLS for the control channel: the agent's certificate must chain to `ca_pem` and name
/// `domain` (by default, the host of the agent's address: an IP address or a DNS name).
#[derive(Debug, Clone)]
pub struct ClientTls {
    /// The CA certificate(s), PEM.
    pub ca_pem: Vec<u8>,
    /// The name the agent's certificate must carry, if not the address's host.
    pub domain: Option<String>,
}

/// A connection to one agent.
#[derive(Debug, Clone)]
pub struct AgentClient {
    inner: agent_client::AgentClient<Channel>,
    authorization: MetadataValue<tonic::metadata::Ascii>,
    session: Option<MetadataValue<tonic::metadata::Ascii>>,
    address: String,
    /// Whether the channel is TLS (the hint for a mismatch depends on it).
    tls: bool,
}

impl AgentClient {
    /// Connects to `address` (`host:port`) with the agent's `token`, in plain text.
    pub async fn connect(address: &str, token: &str) -> Result<AgentClient, ClientError> {
        AgentClient::connect_with(address, token, None).await
    }

    /// Connects to `address` (`host:port`) with the agent's `token`, over TLS when `tls`
    /// is given.
    pub async fn connect_with(
        address: &str,
        token: &str,
        tls: Option<&ClientTls>,
    ) -> Result<AgentClient, ClientError> {
        let bad = |message: String| ClientError::Address {
            address: address.to_string(),
            message,
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{address}"))
            .map_err(|e| bad(e.to_string()))?
            .connect_timeout(Duration::from_secs(3))
            .tcp_nodelay(true);
        if let Some(tls) = tls {
            let mut config =
                ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&tls.ca_pem));
            if let Some(domain) = &tls.domain {
                config = config.domain_name(domain.clone());
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|source| ClientError::Tls {
                    address: address.to_string(),
                    source,
                })?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|source| ClientError::Connect {
                address: address.to_string(),
                source,
            })?;
        let authorization = format!("Bearer {token}")
            .parse()
            .map_err(|_| bad("the token is not printable ASCII".into()))?;
        Ok(AgentClient {
            inner: agent_client::AgentClient::new(channel),
            authorization,
            session: None,
            address: address.to_string(),
            tls: tls.is_some(),
        })
    }

    /// The address this client talks to.
    pub fn address(&self) -> &str {
        &self.address
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", self.authorization.clone());
        if let Some(session) = &self.session {
            request
                .metadata_mut()
                .insert(SESSION_HEADER, session.clone());
        }
        request
    }

    /// Configures the load `spec` against `target` (as the user wrote it: the agent
    /// resolves it) with a session `lease`, and takes the session.
    pub async fn configure_load(
        &mut self,
        spec: &crate::LoadSpec,
        target: &str,
        lease: std::time::Duration,
    ) -> Result<pb::ConfigureReply, Status> {
        self.configure(crate::wire::configure_request(spec, target, lease))
            .await
    }

    /// Sends a Configure request as given (see [`AgentClient::configure_load`]) and takes
    /// the session.
    pub async fn configure(
        &mut self,
        config: pb::ConfigureRequest,
    ) -> Result<pb::ConfigureReply, Status> {
        let reply = self
            .inner
            .configure(self.request(config))
            .await
            .map_err(|s| self.plain_to_tls_hint(s))?
            .into_inner();
        self.session = Some(
            reply
                .session
                .parse()
                .map_err(|_| Status::internal("the agent sent an unusable session id"))?,
        );
        Ok(reply)
    }

    /// A TLS agent answers plain HTTP/2 with a TLS alert, which surfaces as a protocol
    /// error, a transport error or a cancelled call, never as the agent's own refusal
    /// (unauthenticated, held, invalid argument...): the first call says what to give.
    /// The other mismatch, TLS to a plain agent, fails at connect ([`ClientError::Connect`]).
    fn plain_to_tls_hint(&self, status: Status) -> Status {
        let transport = matches!(
            status.code(),
            tonic::Code::Unknown
                | tonic::Code::Unavailable
                | tonic::Code::Cancelled
                | tonic::Code::Internal
        );
        if self.tls || !transport {
            return status;
        }
        Status::new(
            status.code(),
            format!(
                "{}: does the agent serve TLS (--tls-cert)? Then give vernier run --tls-ca, or tls_ca: in the agent's entry",
                status.message()
            ),
        )
    }

    /// Starts (or changes) the load.
    pub async fn start_load(
        &mut self,
        rate: f64,
        interarrival: &InterArrival,
    ) -> Result<(), Status> {
        let r = pb::StartLoadRequest {
            rate,
            interarrival: String::new(),
            arrival: Some(crate::wire::arrival(interarrival)),
        };
        self.inner.start_load(self.request(r)).await.map(|_| ())
    }

    /// Tells the agent's workers the send lag that could move the answer asked.
    pub async fn pace(&mut self, tolerance: Duration) -> Result<(), Status> {
        let r = pb::PaceRequest {
            tolerance_ns: u64::try_from(tolerance.as_nanos()).unwrap_or(u64::MAX),
        };
        self.inner.pace(self.request(r)).await.map(|_| ())
    }

    /// Keeps every round(1/`sampling_rate`)-th request sent from now on, its batches
    /// marked with `generation`.
    pub async fn start_measure(
        &mut self,
        sampling_rate: f64,
        generation: u64,
    ) -> Result<(), Status> {
        let r = pb::StartMeasureRequest {
            sampling_rate,
            generation,
        };
        self.inner.start_measure(self.request(r)).await.map(|_| ())
    }

    /// Stops generating load.
    pub async fn pause(&mut self) -> Result<(), Status> {
        self.inner
            .pause(self.request(pb::Empty {}))
            .await
            .map(|_| ())
    }

    /// Counters summed over workers, and per worker.
    pub async fn counters(&mut self) -> Result<pb::CountersReply, Status> {
        Ok(self
            .inner
            .counters(self.request(pb::Empty {}))
            .await?
            .into_inner())
    }

    /// The stream of batches.
    pub async fn stream(&mut self) -> Result<Streaming<pb::BatchMessage>, Status> {
        Ok(self
            .inner
            .stream(self.request(pb::Empty {}))
            .await?
            .into_inner())
    }

    /// Renews the lease. An agent that does not answer within [`HEARTBEAT_TIMEOUT`] is
    /// reported: a partitioned agent never resets the connection, so without a deadline
    /// the call would wait forever.
    pub async fn heartbeat(&mut self) -> Result<(), Status> {
        let mut request = self.request(pb::Empty {});
        request.set_timeout(HEARTBEAT_TIMEOUT);
        match tokio::time::timeout(HEARTBEAT_TIMEOUT, self.inner.heartbeat(request)).await {
            Ok(reply) => reply.map(|_| ()),
            Err(_) => Err(Status::deadline_exceeded(format!(
                "no answer within {HEARTBEAT_TIMEOUT:?}"
            ))),
        }
    }

    /// Ends the session; the final counters.
    pub async fn stop(&mut self) -> Result<pb::CountersReply, Status> {
        let reply = self
            .inner
            .stop(self.request(pb::Empty {}))
            .await?
            .into_inner();
        self.session = None;
        Ok(reply)
    }

    /// Stops and asks the agent process to exit.
    pub async fn shutdown(&mut self) -> Result<(), Status> {
        self.inner
            .shutdown(self.request(pb::Empty {}))
            .await
            .map(|_| ())
    }
}
