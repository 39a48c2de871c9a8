//! `vernier agent`: a load-generating, latency-measuring agent controlled over gRPC.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::{Identity, ServerTlsConfig};
use vernier_agent::control::AgentService;

use crate::error::Error;
use crate::session::read_pem;

/// Options of `vernier agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Where to listen for a coordinator (loopback unless told otherwise).
    #[arg(long, default_value = "127.0.0.1:5001")]
    pub listen: SocketAddr,
    /// The bearer token every call must carry.
    #[arg(long, env = "VERNIER_TOKEN", hide_env_values = true)]
    pub token: String,
    /// Load only targets in these networks (comma-separated, `10.0.0.0/8` or one address);
    /// a coordinator asking for another target is refused. Default: any target.
    #[arg(long, value_delimiter = ',', value_name = "CIDR", value_parser = network)]
    pub allow_targets: Vec<ipnet::IpNet>,
    /// Serve the control channel over TLS with this certificate (PEM; the chain, leaf
    /// first). Coordinators then need `--tls-ca` (or `tls_ca:` in the scenario).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// The server's TLS settings from `--tls-cert` and `--tls-key`, each file named when it
/// cannot be read.
fn server_tls(args: &AgentArgs) -> Result<Option<ServerTlsConfig>, Error> {
    let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) else {
        return Ok(None);
    };
    let identity = Identity::from_pem(
        read_pem(cert, "certificate", "CERTIFICATE-----")?,
        // PKCS#8, SEC1 (EC) or PKCS#1 (RSA): "PRIVATE KEY-----" ends each.
        read_pem(key, "private key", "")?,
    );
    Ok(Some(ServerTlsConfig::new().identity(identity)))
}

/// A network, or one address as the network of just it.
fn network(text: &str) -> Result<ipnet::IpNet, String> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text:?}: expected a network (10.0.0.0/8) or an address (10.0.0.7)"))
}

/// Serves the control plane until Ctrl-C, SIGTERM or a coordinator's Shutdown.
pub fn run(args: AgentArgs) -> Result<ExitCode, Error> {
    if args.token.trim().is_empty() {
        return Err(Error::Usage(
            "--token (or VERNIER_TOKEN) must not be empty".into(),
        ));
    }
    let io = |what: &'static str| {
        move |source| Error::Io {
            path: what.into(),
            source,
        }
    };
    let tls = server_tls(&args)?;
    let runtime = crate::session::runtime("vernier-control")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen).await.map_err(|source| Error::Io {
            path: format!("listen on {}", args.listen).into(),
            source,
        })?;
        let local = listener.local_addr().map_err(io("listener address"))?;
        let mut builder = tonic::transport::Server::builder();
        let serves_tls = tls.is_some();
        if let Some(tls) = tls {
            builder = builder.tls_config(tls).map_err(|e| {
                Error::Usage(format!(
                    "--tls-cert {} with --tls-key {}: {}",
                    args.tls_cert.as_deref().unwrap_or(std::path::Path::new("")).display(),
                    args.tls_key.as_deref().unwrap_or(std::path::Path::new("")).display(),
                    vernier_agent::client::chain(&e)
                ))
            })?;
        }
        eprintln!(
            "vernier agent: listening on {local}{}",
            if serves_tls { " (TLS)" } else { "" }
        );
        let service = AgentService::allowing(args.allow_targets.clone());
        let shutdown = service.shutdown_requested();
        let server = service.into_server(&args.token);
        let stop = async move {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
                _ = shutdown.notified() => {}
            }
            eprintln!("vernier agent: shutting down");
        };
        builder
            .add_service(server)
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), stop)
            .await
            .map_err(|e| Error::Failed(format!("agent control plane failed: {e}")))?;
        Ok(ExitCode::SUCCESS)
    })
}
