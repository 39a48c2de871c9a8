//! `vernier agent`: a load-generating, latency-measuring agent controlled over gRPC.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Args;
use tokio_stream::wrappers::TcpListenerStream;
use vernier_agent::control::AgentService;

use crate::error::Error;

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
    let runtime = crate::session::runtime("vernier-control")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen).await.map_err(|source| Error::Io {
            path: format!("listen on {}", args.listen).into(),
            source,
        })?;
        let local = listener.local_addr().map_err(io("listener address"))?;
        eprintln!("vernier agent: listening on {local}");
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
        tonic::transport::Server::builder()
            .add_service(server)
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), stop)
            .await
            .map_err(|e| Error::Failed(format!("agent control plane failed: {e}")))?;
        Ok(ExitCode::SUCCESS)
    })
}
